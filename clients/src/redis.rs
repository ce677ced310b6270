//! Redis through redis-rs's multiplexed connection: the RESP protocol, the
//! commands and the replies are the library's. This module opens the stream
//! itself (TCP, then TLS with rustls when the URL is `rediss://`), so that the
//! bytes can go through live mode's proxy while TLS checks the certificate
//! against the URL's host, and it sends `AUTH` as a command, because
//! redis-rs reports a refused `AUTH` as its own "authentication failed"
//! without the server's `WRONGPASS`.
//!
//! URLs: `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]` and
//! `rediss://…[?cacert=CA.pem]` (the system's authorities when no CA file is
//! named; the certificate's chain and name are always checked).
//!
//! [`RedisClient::execute`] plays the engine's [`RedisCommand`]s (the lock
//! script, `SET NX PX`, `INCR`, compare-and-delete…, as
//! [`RedisCommand::wire`] writes them) and reads each reply as the
//! [`RedisReply`] the engine's model gives for it.

use crate::endpoint::{EndpointError, ServerUrl, UrlRules};
use crate::runtime::within;
use locklab_engine::event::{LOCK_KEY, LockValue, Owner, RedisCommand, RedisReply, TOKEN_KEY};
/// A reply as redis-rs reads it, which [`RedisClient::call`] answers.
pub use redis::Value;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, RedisConnectionInfo};
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::runtime::Runtime;

/// Where a Redis server is, how to log in to it and whether TLS protects the way.
#[derive(Clone)]
pub struct RedisEndpoint {
    url: ServerUrl,
    database: i64,
    /// The TLS settings when the URL is `rediss://`.
    tls: Option<Arc<rustls::ClientConfig>>,
    via: Option<SocketAddr>,
}

crate::endpoint::endpoint_basics!(RedisEndpoint);

impl RedisEndpoint {
    /// Reads a `redis://` or `rediss://` URL, and the CA file it names.
    pub fn parse(text: &str) -> Result<RedisEndpoint, EndpointError> {
        let rules = UrlRules { schemes: &["redis", "rediss"], default_port: 6379, parameters: &["cacert"] };
        let url = ServerUrl::parse(text, &rules)?;
        let database = match url.path.as_str() {
            "" => 0,
            path => path
                .parse::<i64>()
                .ok()
                .filter(|database| *database >= 0)
                .ok_or_else(|| EndpointError::new(format!("`{}`: `{path}` is not a database number", url.shown)))?,
        };
        let tls = match url.scheme.as_str() {
            "rediss" => {
                let roots = url.trusted_roots("cacert")?;
                let config = crate::tls::client_config(&roots, crate::tls::Verification::Full)
                    .map_err(|error| EndpointError::new(format!("`{}`: {error}", url.shown)))?;
                let config = Arc::new(config);
                crate::tls::server_name(&url.host)
                    .map_err(|error| EndpointError::new(format!("`{}`: {error}", url.shown)))?;
                Some(config)
            }
            _ if url.parameters.contains_key("cacert") => {
                return Err(EndpointError::new(format!(
                    "`{}` names a CA file but is not a rediss:// URL: TLS is asked for by the scheme",
                    url.shown
                )));
            }
            _ => None,
        };
        Ok(RedisEndpoint { url, database, tls, via: None })
    }

    /// The database number the client selects.
    pub fn database(&self) -> i64 {
        self.database
    }

    /// Whether the connection is TLS.
    pub fn uses_tls(&self) -> bool {
        self.tls.is_some()
    }
}

/// What went wrong that the engine's [`RedisReply`] has no word for, or,
/// from [`RedisClient::call`], anything that went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedisError {
    /// The server's error reply, as it sent it: its code (`ERR`, `NOAUTH`,
    /// `WRONGPASS`, `NOPERM`, `WRONGTYPE`, `NOSCRIPT`…) and its message.
    Reply { code: String, message: String },
    /// No connection: nothing answered, or the connection broke.
    Connection(String),
    /// The TLS handshake failed (an unknown authority, a certificate for another name…).
    Tls(String),
    /// No answer within the caller's limit.
    Timeout(Duration),
    /// A reply of a shape the command never gives (a lock key holding a value
    /// no instance writes, a script answering a string…).
    UnexpectedReply { command: String, reply: String },
    /// The client could not be set up (its runtime).
    Setup(String),
}

impl fmt::Display for RedisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RedisError::Reply { code, message } => write!(f, "Redis answered -{code} {message}"),
            RedisError::Connection(why) => write!(f, "no connection to Redis: {why}"),
            RedisError::Tls(why) => write!(f, "TLS with Redis failed: {why}"),
            RedisError::Timeout(limit) => write!(f, "Redis did not answer within {limit:?}"),
            RedisError::UnexpectedReply { command, reply } => write!(f, "Redis answered `{command}` with {reply}"),
            RedisError::Setup(why) => write!(f, "cannot set up the Redis client: {why}"),
        }
    }
}

impl std::error::Error for RedisError {}

impl RedisError {
    /// What redis-rs reported, by kind: the server's error reply keeps its
    /// code; anything about the stream is the connection's.
    fn from_library(error: &redis::RedisError) -> RedisError {
        match error.code() {
            Some(code) => RedisError::Reply { code: code.to_owned(), message: error.detail().unwrap_or("").to_owned() },
            None => RedisError::Connection(error.to_string()),
        }
    }
}

/// One connection to a Redis server, opened when first needed and again
/// after it broke. Blocking; see the crate's documentation.
pub struct RedisClient {
    endpoint: RedisEndpoint,
    runtime: Runtime,
    open: Option<OpenConnection>,
    /// What the lock's keys are named with first (live mode's run on a
    /// server of the user's has keys of its own); empty for the engine's names.
    key_prefix: String,
}

impl fmt::Debug for RedisClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisClient").field("endpoint", &self.endpoint).field("open", &self.is_open()).finish()
    }
}

/// A live connection, and whether its driver has seen it close.
struct OpenConnection {
    connection: MultiplexedConnection,
    closed: Arc<AtomicBool>,
}

impl RedisClient {
    /// A client of `endpoint`; it connects on [`RedisClient::connect`] or its first command.
    pub fn new(endpoint: RedisEndpoint) -> Result<RedisClient, RedisError> {
        let runtime = crate::runtime::build().map_err(|error| RedisError::Setup(error.to_string()))?;
        Ok(RedisClient { endpoint, runtime, open: None, key_prefix: String::new() })
    }

    /// The same client with the lock's keys (`LOCK_KEY`, `TOKEN_KEY`) named
    /// with `prefix` first in every command [`RedisClient::execute`] sends.
    pub fn with_key_prefix(mut self, prefix: impl Into<String>) -> RedisClient {
        self.key_prefix = prefix.into();
        self
    }

    /// Whether a connection is open, as far as the client has seen: one the
    /// server has closed since is not.
    pub fn is_open(&self) -> bool {
        self.open.as_ref().is_some_and(|open| !open.closed.load(Ordering::SeqCst))
    }

    /// Opens a connection unless one is open, within `limit`: the stream,
    /// TLS, `AUTH` and `SELECT`. A connection the server has closed since
    /// it was last used is replaced, as a client's pool checks a connection
    /// before it hands it out.
    pub fn connect(&mut self, limit: Duration) -> Result<(), RedisError> {
        if self.is_open() {
            return Ok(());
        }
        self.open = None;
        let opened = self.runtime.block_on(within(limit, open(&self.endpoint)));
        self.open = Some(opened.ok_or(RedisError::Timeout(limit))??);
        Ok(())
    }

    /// Sends one command (its words), connecting first if need be, all
    /// within `limit`. After a timeout or a broken connection the connection
    /// is dropped, so that a late reply can never answer a later command.
    pub fn call(&mut self, words: &[&str], limit: Duration) -> Result<Value, RedisError> {
        let deadline = Instant::now() + limit;
        self.connect(limit)?;
        let Some(open) = self.open.as_mut() else { return Err(RedisError::Connection("not connected".to_owned())) };
        let mut command = redis::Cmd::new();
        for word in words {
            command.arg(*word);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let answer = match self.runtime.block_on(within(left, open.connection.send_packed_command(&command))) {
            None => Err(RedisError::Timeout(limit)),
            Some(Ok(Value::ServerError(error))) => Err(RedisError::Reply {
                code: error.code().to_owned(),
                message: error.details().unwrap_or("").to_owned(),
            }),
            Some(Ok(value)) => Ok(value),
            Some(Err(error)) => Err(RedisError::from_library(&error)),
        };
        if matches!(answer, Err(RedisError::Timeout(_) | RedisError::Connection(_))) {
            self.open = None;
        }
        answer
    }

    /// Plays one of the engine's commands and reads the reply as the
    /// engine's model answers it. What the engine models as a reply, a node
    /// that cannot be reached (`ConnectionRefused`) or no answer in time
    /// (`Timeout`), comes back as that reply; an error reply from the server
    /// or a reply the command never gives is an error that keeps its kind.
    pub fn execute(&mut self, command: RedisCommand, limit: Duration) -> Result<RedisReply, RedisError> {
        let mut words = command.wire();
        if !self.key_prefix.is_empty() {
            for word in &mut words {
                if word == LOCK_KEY || word == TOKEN_KEY {
                    *word = format!("{}{word}", self.key_prefix);
                }
            }
        }
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        match self.call(&words, limit) {
            Ok(value) => engine_reply(command, &value),
            Err(RedisError::Connection(_)) => Ok(RedisReply::ConnectionRefused),
            Err(RedisError::Timeout(_)) => Ok(RedisReply::Timeout),
            Err(error) => Err(error),
        }
    }

    /// The server's version, from `INFO server`.
    pub fn server_version(&mut self, limit: Duration) -> Result<String, RedisError> {
        let info = text(&self.call(&["INFO", "server"], limit)?).unwrap_or_default();
        Ok(info.lines().find_map(|line| line.trim_end().strip_prefix("redis_version:")).unwrap_or("unknown").to_owned())
    }
}

/// A connection to `endpoint`, logged in and on its database, with its
/// driver running on the client's runtime.
async fn open(endpoint: &RedisEndpoint) -> Result<OpenConnection, RedisError> {
    let url = &endpoint.url;
    let address = crate::endpoint::dial_address(&url.host, url.port, endpoint.via)
        .await
        .map_err(|error| RedisError::Connection(format!("{}: {error}", url.shown)))?;
    let stream = tokio::net::TcpStream::connect(address)
        .await
        .map_err(|error| RedisError::Connection(format!("{} at {address}: {error}", url.shown)))?;
    // Requests are small and each waits for its answer: never hold one back.
    stream.set_nodelay(true).map_err(|error| RedisError::Connection(error.to_string()))?;
    let mut open = match &endpoint.tls {
        None => attach(stream).await?,
        Some(config) => {
            let name = crate::tls::server_name(&url.host).map_err(RedisError::Tls)?;
            let connector = tokio_rustls::TlsConnector::from(Arc::clone(config));
            let stream = connector.connect(name, stream).await.map_err(|error| RedisError::Tls(error.to_string()))?;
            attach(stream).await?
        }
    };
    if let Some(password) = &url.password {
        let mut auth = redis::cmd("AUTH");
        if let Some(user) = &url.user {
            auth.arg(user);
        }
        auth.arg(password);
        handshake(&mut open, &auth).await?;
    }
    if endpoint.database != 0 {
        handshake(&mut open, redis::cmd("SELECT").arg(endpoint.database)).await?;
    }
    Ok(open)
}

/// redis-rs's connection over `stream`, told nothing to send on its own
/// (no `AUTH`, no `CLIENT SETINFO`): this module sends what it needs.
async fn attach<S>(stream: S) -> Result<OpenConnection, RedisError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let info = RedisConnectionInfo::default().set_skip_set_lib_name();
    // Timeouts are the caller's, per call.
    let config = AsyncConnectionConfig::new().set_response_timeout(None).set_connection_timeout(None);
    let (connection, driver) = MultiplexedConnection::new_with_config(&info, stream, config)
        .await
        .map_err(|error| RedisError::from_library(&error))?;
    let closed = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&closed);
    // The driver ends when the server closes the connection (or the client drops it).
    tokio::spawn(async move {
        driver.await;
        seen.store(true, Ordering::SeqCst);
    });
    Ok(OpenConnection { connection, closed })
}

/// A command of the connection's set-up; an error reply (`WRONGPASS`) keeps its code.
async fn handshake(open: &mut OpenConnection, command: &redis::Cmd) -> Result<(), RedisError> {
    match open.connection.send_packed_command(command).await {
        Ok(Value::ServerError(error)) => {
            Err(RedisError::Reply { code: error.code().to_owned(), message: error.details().unwrap_or("").to_owned() })
        }
        Ok(_) => Ok(()),
        Err(error) => Err(RedisError::from_library(&error)),
    }
}

/// A simple or bulk string reply as text.
fn text(value: &Value) -> Option<String> {
    match value {
        Value::BulkString(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
        Value::SimpleString(text) => Some(text.clone()),
        Value::Okay => Some("OK".to_owned()),
        _ => None,
    }
}

/// The reply `command` got, as the engine's model gives it: `SET … NX` is
/// `OK` or nil, the lock script the new token or nil (its `false`), `GET`
/// the lock's value or nil, the counters and scripts an integer.
fn engine_reply(command: RedisCommand, value: &Value) -> Result<RedisReply, RedisError> {
    let unexpected = || RedisError::UnexpectedReply { command: command.to_string(), reply: format!("{value:?}") };
    match command {
        RedisCommand::SetNxEx { .. } | RedisCommand::SetNxPx { .. } | RedisCommand::SetPx { .. } => match value {
            Value::Okay => Ok(RedisReply::Ok),
            Value::Nil => Ok(RedisReply::Nil),
            _ => Err(unexpected()),
        },
        RedisCommand::SetNxPxIncr { .. } => match value {
            Value::Int(token) => Ok(RedisReply::Integer(*token)),
            Value::Nil => Ok(RedisReply::Nil),
            _ => Err(unexpected()),
        },
        RedisCommand::Get => match value {
            Value::Nil => Ok(RedisReply::Nil),
            Value::BulkString(bytes) => match std::str::from_utf8(bytes) {
                Ok("locked") => Ok(RedisReply::Value(LockValue::Locked)),
                Ok(text) => {
                    Owner::parse(text).map(|owner| RedisReply::Value(LockValue::Owner(owner))).ok_or_else(unexpected)
                }
                Err(_) => Err(unexpected()),
            },
            _ => Err(unexpected()),
        },
        RedisCommand::Del
        | RedisCommand::SetNx { .. }
        | RedisCommand::Pexpire { .. }
        | RedisCommand::Expire { .. }
        | RedisCommand::Incr
        | RedisCommand::CompareAndDelete { .. }
        | RedisCommand::CompareAndExtend { .. } => match value {
            Value::Int(number) => Ok(RedisReply::Integer(*number)),
            _ => Err(unexpected()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locklab_engine::ids::InstanceId;

    #[test]
    fn replies_read_as_the_engine_models_them() {
        let owner = Owner { instance: InstanceId(1), nonce: 0x7f3a };
        let set = RedisCommand::SetNxPx { value: LockValue::Owner(owner), ttl_ms: 5 };
        assert_eq!(engine_reply(set, &Value::Okay), Ok(RedisReply::Ok));
        assert_eq!(engine_reply(set, &Value::Nil), Ok(RedisReply::Nil));
        let lock = RedisCommand::SetNxPxIncr { value: owner, ttl_ms: 5 };
        assert_eq!(engine_reply(lock, &Value::Int(7)), Ok(RedisReply::Integer(7)));
        assert_eq!(engine_reply(lock, &Value::Nil), Ok(RedisReply::Nil));
        let get = |bytes: &[u8]| engine_reply(RedisCommand::Get, &Value::BulkString(bytes.to_vec()));
        assert_eq!(get(b"locked"), Ok(RedisReply::Value(LockValue::Locked)));
        assert_eq!(get(owner.to_string().as_bytes()), Ok(RedisReply::Value(LockValue::Owner(owner))));
        assert!(matches!(get(b"somebody else's"), Err(RedisError::UnexpectedReply { .. })));
        assert!(matches!(engine_reply(RedisCommand::Incr, &Value::Okay), Err(RedisError::UnexpectedReply { .. })));
    }

    #[test]
    fn urls_are_read_and_refused_by_name() {
        let endpoint = RedisEndpoint::parse("redis://app:secret@127.0.0.1:7000/2").expect("a valid URL");
        assert_eq!((endpoint.url.port, endpoint.database, endpoint.uses_tls()), (7000, 2, false));
        assert_eq!(endpoint.to_string(), "redis://app:***@127.0.0.1:7000/2");
        assert!(!format!("{endpoint:?}").contains("secret"));
        let refused = |text: &str| RedisEndpoint::parse(text).expect_err("refused").to_string();
        assert_eq!(refused("redis://127.0.0.1/zero"), "`redis://127.0.0.1/zero`: `zero` is not a database number");
        assert!(refused("postgres://127.0.0.1").contains("is not a redis:// or rediss:// URL"));
    }
}
