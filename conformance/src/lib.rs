//! Real servers and minimal clients for them, shared by the conformance
//! suite (this crate's binary) and live mode (`locklab-live`): throwaway
//! `redis-server`, PostgreSQL and etcd processes on loopback ports that stop when
//! their guard drops ([`server`]), a RESP2 client ([`resp`]), a
//! PostgreSQL protocol-3.0 client ([`pg`]) and an etcd JSON-gateway client ([`etcd`]).

pub mod etcd;
pub mod pg;
pub mod resp;
pub mod server;
