//! The conformance suite's shared parts: the throwaway servers and the
//! minimal clients it checks the engine's models with live in
//! `locklab-servers` (live mode starts the same servers), and are named
//! here as the suite has always named them.

pub use locklab_servers::{etcd, pg, resp, server};
