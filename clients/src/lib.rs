//! Redis, PostgreSQL and etcd v3 through maintained client libraries
//! (redis-rs, tokio-postgres with rustls, etcd-client), with passwords and
//! TLS, speaking the engine's vocabulary: a [`RedisCommand`] becomes the real
//! command and its reply a [`RedisReply`], a [`Sql`] statement is SQL written
//! here and its answer a [`SqlOutcome`], a [`ConsensusOp`] becomes etcd's lease
//! and transaction calls and its answer a [`ConsensusReply`].
//!
//! Every client is blocking: it owns a small tokio runtime (one worker
//! thread, which keeps the connection read while the caller waits for
//! nothing), so live mode calls it from its own threads. It must not be called
//! from inside an async runtime.
//!
//! Errors keep their kind. What the engine models (a timeout, a refused
//! connection, a lock not available, an idle session ended) comes back in
//! the engine's terms; what it does not (a Redis error reply such as
//! `WRONGPASS` or `NOPERM`, a PostgreSQL SQLSTATE such as `28P01`, an etcd
//! status such as `PermissionDenied`) comes back as the client's error with
//! the server's own code and message, never folded into something else.
//!
//! [`RedisCommand`]: locklab_engine::event::RedisCommand
//! [`RedisReply`]: locklab_engine::event::RedisReply
//! [`Sql`]: locklab_engine::event::Sql
//! [`SqlOutcome`]: locklab_engine::event::SqlOutcome
//! [`ConsensusOp`]: locklab_engine::event::ConsensusOp
//! [`ConsensusReply`]: locklab_engine::event::ConsensusReply

pub mod endpoint;
pub mod etcd;
pub mod postgres;
pub mod redis;
mod runtime;
mod tls;

pub use endpoint::EndpointError;
pub use etcd::{EtcdClient, EtcdEndpoint, EtcdError};
pub use postgres::{PostgresEndpoint, PostgresError, PostgresSession, SessionSettings};
pub use redis::{RedisClient, RedisEndpoint, RedisError};
