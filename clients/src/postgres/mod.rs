//! PostgreSQL through tokio-postgres: the protocol, SCRAM-SHA-256 (with
//! channel binding over TLS) and the server's errors are the library's; TLS
//! is rustls (tokio-postgres-rustls). A session speaks the engine's [`Sql`]
//! (`lab.rs` writes each statement as SQL) and answers in [`SqlOutcome`]s;
//! it also runs live mode's own statements as plain text ([`PostgresSession::batch`]).
//!
//! URLs: `postgres://[USER[:PASSWORD]@]HOST[:PORT][/DATABASE][?sslmode=MODE&sslrootcert=CA.pem]`
//! (or `postgresql://`), read as libpq reads them: the user defaults to
//! `postgres`, the database to the user's name, and `sslmode` is `disable`,
//! `prefer` (the default: TLS when the server offers it), `require` (TLS,
//! the certificate checked only when a CA file is named), `verify-ca` (the
//! chain) or `verify-full` (the chain and the host's name).
//!
//! [`Sql`]: locklab_engine::event::Sql
//! [`SqlOutcome`]: locklab_engine::event::SqlOutcome

mod error;
mod lab;

pub use error::PostgresError;
pub use lab::LAB_TABLES;

use crate::endpoint::{EndpointError, ServerUrl, TrustedRoots, UrlRules};
use crate::runtime::within;
use crate::tls::Verification;
use locklab_engine::event::{Sql, SqlOutcome};
use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::runtime::Runtime;
use tokio::sync::watch;
use tokio_postgres::config::SslMode;

/// Where a PostgreSQL server is, who logs in, and how TLS is used.
#[derive(Clone)]
pub struct PostgresEndpoint {
    url: ServerUrl,
    user: String,
    database: String,
    ssl_mode: SslMode,
    tls: rustls::ClientConfig,
    via: Option<SocketAddr>,
}

crate::endpoint::endpoint_basics!(PostgresEndpoint);

impl PostgresEndpoint {
    /// Reads a `postgres://` URL, and the CA file it names.
    pub fn parse(text: &str) -> Result<PostgresEndpoint, EndpointError> {
        let rules = UrlRules {
            schemes: &["postgres", "postgresql"],
            default_port: 5432,
            parameters: &["sslmode", "sslrootcert"],
        };
        let url = ServerUrl::parse(text, &rules)?;
        let user = url.user.clone().unwrap_or_else(|| "postgres".to_owned());
        let database = if url.path.is_empty() { user.clone() } else { url.path.clone() };
        if database.contains('/') {
            return Err(EndpointError::new(format!("`{}`: `{database}` is not a database name", url.shown)));
        }
        let roots = url.trusted_roots("sslrootcert")?;
        let named_roots = roots != TrustedRoots::System;
        // libpq checks the chain in `prefer` and `require` too when it is given a CA file.
        let loose = if named_roots { Verification::ChainOnly } else { Verification::Nothing };
        let (ssl_mode, verification) = match url.parameters.get("sslmode").map(String::as_str) {
            Some("disable") => (SslMode::Disable, Verification::Nothing),
            Some("prefer") | None => (SslMode::Prefer, loose),
            Some("require") => (SslMode::Require, loose),
            Some("verify-ca") => (SslMode::Require, Verification::ChainOnly),
            Some("verify-full") => (SslMode::Require, Verification::Full),
            Some(other) => {
                return Err(EndpointError::new(format!(
                    "`{}`: `sslmode={other}` is not one of disable, prefer, require, verify-ca, verify-full",
                    url.shown
                )));
            }
        };
        let tls = crate::tls::client_config(&roots, verification)
            .map_err(|error| EndpointError::new(format!("`{}`: {error}", url.shown)))?;
        Ok(PostgresEndpoint { url, user, database, ssl_mode, tls, via: None })
    }

    /// Who logs in.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The database the sessions use.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// tokio-postgres's configuration: the URL's host for TLS, and the
    /// address dialled (`via`, or the host resolved by the library).
    fn config(&self, settings: &SessionSettings) -> Result<tokio_postgres::Config, PostgresError> {
        let mut config = tokio_postgres::Config::new();
        config.host(self.url.host.to_string()).user(&self.user).dbname(&self.database).ssl_mode(self.ssl_mode);
        match self.via {
            Some(address) => config.hostaddr(address.ip()).port(address.port()),
            None => config.port(self.url.port),
        };
        if let Some(password) = &self.url.password {
            config.password(password);
        }
        if let Some(name) = &settings.application_name {
            config.application_name(name);
        }
        let options = settings.options()?;
        if !options.is_empty() {
            config.options(options);
        }
        Ok(config)
    }
}

/// What a session sets when it opens, sent with the login (no round trip
/// of its own): its name, its schema, and the server's timeouts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionSettings {
    /// `application_name`, which `pg_stat_activity` shows.
    pub application_name: Option<String>,
    /// The schema unqualified names resolve in (`search_path`), when not the server's default.
    pub search_path: Option<String>,
    /// `lock_timeout`: how long a statement waits for a lock before the server cancels it.
    pub lock_timeout: Option<Duration>,
    /// `idle_in_transaction_session_timeout`: how long a session may sit idle
    /// in a transaction before the server ends it.
    pub idle_in_transaction_session_timeout: Option<Duration>,
    /// `statement_timeout`: how long any statement may run.
    pub statement_timeout: Option<Duration>,
}

impl SessionSettings {
    /// The settings as the login's `options` (`-c name=value`, space-separated).
    fn options(&self) -> Result<String, PostgresError> {
        let mut options = Vec::new();
        if let Some(schema) = &self.search_path {
            if schema.is_empty() || !schema.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(PostgresError::Statement(format!(
                    "`{schema}` is not a plain schema name (letters, digits and _): it cannot be the search_path"
                )));
            }
            options.push(format!("-c search_path={schema}"));
        }
        // PostgreSQL reads a bare number as milliseconds; 0 would turn the timeout off.
        let milliseconds = |limit: Duration| limit.as_millis().max(1);
        let timeouts = [
            ("lock_timeout", self.lock_timeout),
            ("idle_in_transaction_session_timeout", self.idle_in_transaction_session_timeout),
            ("statement_timeout", self.statement_timeout),
        ];
        for (name, limit) in timeouts {
            if let Some(limit) = limit {
                options.push(format!("-c {name}={}", milliseconds(limit)));
            }
        }
        Ok(options.join(" "))
    }
}

/// Rows a plain-text statement returned, and the last command's count of rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueryRows {
    pub rows: Vec<Vec<Option<String>>>,
    /// The rows the last statement affected or returned (`INSERT 0 1` is 1).
    pub affected: u64,
}

impl QueryRows {
    /// The first column of the first row.
    pub fn first_value(&self) -> Option<&str> {
        self.rows.first()?.first()?.as_deref()
    }
}

/// One session with the server. Blocking; see the crate's documentation.
/// Dropping it ends the session at once (the protocol's Terminate).
pub struct PostgresSession {
    /// `None` only while the session is being dropped.
    client: Option<tokio_postgres::Client>,
    /// Why the session ended, once it has: set by the task that reads it.
    ended: watch::Receiver<Option<PostgresError>>,
    runtime: Runtime,
}

impl fmt::Debug for PostgresSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresSession").field("ended", &*self.ended.borrow()).finish()
    }
}

impl PostgresSession {
    /// Logs in to `endpoint` with `settings`, within `limit`. A refusal keeps
    /// the server's SQLSTATE (`28P01` a wrong password, `53300` too many
    /// clients); [`PostgresError::sql_error`] names the ones the engine models.
    pub fn connect(
        endpoint: &PostgresEndpoint,
        settings: &SessionSettings,
        limit: Duration,
    ) -> Result<PostgresSession, PostgresError> {
        let runtime = crate::runtime::build().map_err(|error| PostgresError::Setup(error.to_string()))?;
        let config = endpoint.config(settings)?;
        let tls = tokio_postgres_rustls::MakeRustlsConnect::new(endpoint.tls.clone());
        let opened = runtime.block_on(within(limit, async {
            let (client, connection) =
                config.connect(tls).await.map_err(|error| PostgresError::from_library(&error))?;
            let (ended_sender, ended) = watch::channel(None);
            // The connection's task reads the socket all the time, so a
            // session the server ends between statements is seen at once.
            tokio::spawn(async move {
                let why = match connection.await {
                    Ok(()) => PostgresError::Connection("the session was closed".to_owned()),
                    Err(error) => PostgresError::from_library(&error),
                };
                let _ = ended_sender.send(Some(why));
            });
            Ok::<_, PostgresError>((client, ended))
        }));
        let (client, ended) = opened.ok_or(PostgresError::Timeout(limit))??;
        Ok(PostgresSession { client: Some(client), ended, runtime })
    }

    /// Why the server ended the session, if it has (say
    /// `idle_in_transaction_session_timeout`, SQLSTATE `25P03`).
    pub fn ended(&self) -> Option<PostgresError> {
        self.ended.borrow().clone()
    }

    /// Waits up to `limit` for the server to end the session; why it did, or
    /// `None` if it is still open.
    pub fn wait_for_end(&mut self, limit: Duration) -> Option<PostgresError> {
        let mut ended = self.ended.clone();
        let _ = self.runtime.block_on(within(limit, ended.wait_for(Option::is_some)));
        self.ended()
    }

    /// Plays one of the engine's statements within `limit`. What the engine
    /// models comes back as a [`SqlOutcome`], its errors included (`55P03`
    /// as `LockNotAvailable` or `LockTimeout`, `25P03`, a closed session, a
    /// timeout); an error it has no word for keeps its SQLSTATE as a
    /// [`PostgresError`].
    pub fn execute(&mut self, sql: Sql, limit: Duration) -> Result<SqlOutcome, PostgresError> {
        match self.run(sql, limit) {
            Ok(outcome) => Ok(outcome),
            Err(error) => error.sql_error(sql).map(SqlOutcome::Error).ok_or(error),
        }
    }

    /// Runs plain SQL text (one or more statements, the simple protocol),
    /// for live mode's own statements: schemas, tables, the server's settings.
    pub fn batch(&mut self, sql: &str, limit: Duration) -> Result<QueryRows, PostgresError> {
        let client = self.client()?;
        let answer = self.runtime.block_on(within(limit, client.simple_query(sql)));
        let messages = self.answered(answer, limit)?;
        let mut rows = QueryRows::default();
        for message in messages {
            match message {
                tokio_postgres::SimpleQueryMessage::Row(row) => {
                    rows.rows.push((0..row.len()).map(|column| row.get(column).map(str::to_owned)).collect());
                }
                tokio_postgres::SimpleQueryMessage::CommandComplete(count) => rows.affected = count,
                _ => {}
            }
        }
        Ok(rows)
    }

    /// The server's version (`SHOW server_version`).
    pub fn server_version(&mut self, limit: Duration) -> Result<String, PostgresError> {
        let rows = self.batch("SHOW server_version", limit)?;
        Ok(rows.first_value().unwrap_or("unknown").to_owned())
    }

    /// The session's client, or why there is none: the server ended the
    /// session (its next statement gets why).
    fn client(&self) -> Result<&tokio_postgres::Client, PostgresError> {
        if let Some(why) = self.ended() {
            return Err(why);
        }
        self.client.as_ref().ok_or_else(|| PostgresError::Connection("the session is closed".to_owned()))
    }

    /// A statement's answer, or its error: a timeout when it came too late,
    /// and when the session ended on the way, why it ended.
    fn answered<T>(
        &self,
        answer: Option<Result<T, tokio_postgres::Error>>,
        limit: Duration,
    ) -> Result<T, PostgresError> {
        match answer {
            None => Err(PostgresError::Timeout(limit)),
            Some(Ok(value)) => Ok(value),
            Some(Err(error)) if error.is_closed() => {
                Err(self.ended().unwrap_or_else(|| PostgresError::from_library(&error)))
            }
            Some(Err(error)) => Err(PostgresError::from_library(&error)),
        }
    }
}

impl Drop for PostgresSession {
    fn drop(&mut self) {
        // Dropping the client sends Terminate; give the connection's task a
        // moment to write it before the runtime stops, so the server ends the
        // session now rather than when it notices the socket closed.
        drop(self.client.take());
        let mut ended = self.ended.clone();
        let _ = self.runtime.block_on(within(Duration::from_secs(1), ended.wait_for(Option::is_some)));
    }
}
