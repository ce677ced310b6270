//! Throwaway servers on loopback ports ([`server`]: `redis-server`,
//! PostgreSQL and etcd processes owned by guards that stop them on `Drop`,
//! and `leader_among` for an etcd cluster), with the minimal wire clients
//! the guards use to see a server answer and the conformance suite uses to
//! see the bytes: RESP2 ([`resp`]), PostgreSQL's protocol 3.0 ([`pg`]) and
//! etcd's JSON gateway ([`etcd`]).
//!
//! Why a crate of its own: the conformance suite (`locklab-conformance`),
//! live mode (`locklab-live`) and the tests of both start these servers.
//! They were the suite's, so live mode depended on the whole suite for
//! them; in `locklab-clients` they would make the suite build tokio, tonic
//! and etcd's protos for servers it reaches with its own few hundred lines.
//! Here they depend on nothing but the engine's vocabulary, and live mode
//! uses only the guards: it talks to servers through `locklab-clients`.

pub mod etcd;
pub mod pg;
pub mod resp;
pub mod server;
