//! Real servers and minimal clients for them, shared by the conformance
//! suite (this crate's binary) and live mode (`locklab-live`): throwaway
//! `redis-server` and PostgreSQL processes on loopback ports that stop when
//! their guard drops ([`server`]), a RESP2 client ([`resp`]) and a
//! PostgreSQL protocol-3.0 client ([`pg`]).

pub mod pg;
pub mod resp;
pub mod server;
