//! What went wrong with PostgreSQL, kept as the server said it: an error
//! response keeps its SQLSTATE, severity and message, and only the errors the
//! engine models are given the engine's name ([`PostgresError::sql_error`]).

use locklab_engine::event::{Sql, SqlError};
use locklab_engine::scenario::DbWait;
use std::fmt;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PostgresError {
    /// The server's error response: its SQLSTATE (`28P01`, `55P03`…), its
    /// severity (`ERROR`, `FATAL`) and its message.
    Server { sqlstate: String, severity: String, message: String },
    /// No session: nothing answered, or the connection broke or was closed.
    Connection(String),
    /// The TLS handshake failed (an unknown authority, a certificate for another name…).
    Tls(String),
    /// No answer within the caller's limit.
    Timeout(Duration),
    /// A statement this session cannot play as asked (a value too large
    /// for its column, a setting that is not one).
    Statement(String),
    /// The client library would not go on (the server asks for a password
    /// the URL does not give, its SCRAM signature does not check out…).
    Client(String),
    /// The client could not be set up (its runtime).
    Setup(String),
}

impl fmt::Display for PostgresError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PostgresError::Server { sqlstate, severity, message } => write!(f, "{severity} {sqlstate}: {message}"),
            PostgresError::Connection(why) => write!(f, "no session with PostgreSQL: {why}"),
            PostgresError::Tls(why) => write!(f, "TLS with PostgreSQL failed: {why}"),
            PostgresError::Timeout(limit) => write!(f, "PostgreSQL did not answer within {limit:?}"),
            PostgresError::Statement(why) => f.write_str(why),
            PostgresError::Client(why) => write!(f, "the PostgreSQL client stopped: {why}"),
            PostgresError::Setup(why) => write!(f, "cannot set up the PostgreSQL client: {why}"),
        }
    }
}

impl std::error::Error for PostgresError {}

impl PostgresError {
    /// What tokio-postgres reported, by kind: the server's error response,
    /// a failed TLS handshake, the connection (closed, or an I/O error among
    /// the causes), or the library's own refusal.
    pub(crate) fn from_library(error: &tokio_postgres::Error) -> PostgresError {
        if let Some(database) = error.as_db_error() {
            return PostgresError::Server {
                sqlstate: database.code().code().to_owned(),
                severity: database.severity().to_owned(),
                message: database.message().to_owned(),
            };
        }
        if let Some(cause) = crate::tls::tls_cause(error) {
            return PostgresError::Tls(cause);
        }
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
        let mut input_output = false;
        while let Some(inner) = cause {
            input_output |= inner.is::<std::io::Error>();
            cause = inner.source();
        }
        if error.is_closed() || input_output {
            PostgresError::Connection(crate::tls::full_message(error))
        } else {
            PostgresError::Client(crate::tls::full_message(error))
        }
    }

    /// The SQLSTATE, when the server sent the error.
    pub fn sqlstate(&self) -> Option<&str> {
        match self {
            PostgresError::Server { sqlstate, .. } => Some(sqlstate),
            PostgresError::Connection(_)
            | PostgresError::Tls(_)
            | PostgresError::Timeout(_)
            | PostgresError::Statement(_)
            | PostgresError::Client(_)
            | PostgresError::Setup(_) => None,
        }
    }

    /// The engine's name for this error, met `during` a statement (or
    /// `Sql::Connect`), when the engine models it: `53300`, `55P03` (from
    /// `NOWAIT` it is `LockNotAvailable`, from any other wait `LockTimeout`:
    /// the SQLSTATE is the same, the statement tells them apart), `25P03`, a
    /// session the server shut down or that broke, a timeout. `None` for the
    /// others, which keep their SQLSTATE.
    pub fn sql_error(&self, during: Sql) -> Option<SqlError> {
        match self {
            PostgresError::Server { sqlstate, .. } => match sqlstate.as_str() {
                "53300" => Some(SqlError::TooManyClients),
                "55P03" if matches!(during, Sql::LockJobRow { wait: DbWait::Nowait, .. }) => {
                    Some(SqlError::LockNotAvailable)
                }
                "55P03" => Some(SqlError::LockTimeout),
                "25P03" => Some(SqlError::IdleInTransactionTimeout),
                // Shut down by an administrator or a crash, or the connection failed (class 08).
                "57P01" | "57P02" | "57P03" => Some(SqlError::ConnectionClosed),
                state if state.starts_with("08") => Some(SqlError::ConnectionClosed),
                _ => None,
            },
            PostgresError::Connection(_) => Some(SqlError::ConnectionClosed),
            PostgresError::Timeout(_) => Some(SqlError::Timeout),
            PostgresError::Tls(_)
            | PostgresError::Statement(_)
            | PostgresError::Client(_)
            | PostgresError::Setup(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locklab_engine::scenario::LockStrength;

    #[test]
    fn a_sqlstate_the_engine_models_gets_its_name_and_the_others_keep_theirs() {
        let server = |sqlstate: &str| PostgresError::Server {
            sqlstate: sqlstate.to_owned(),
            severity: "ERROR".to_owned(),
            message: String::new(),
        };
        let nowait = Sql::LockJobRow { strength: LockStrength::ForUpdate, wait: DbWait::Nowait };
        let block = Sql::LockJobRow { strength: LockStrength::ForUpdate, wait: DbWait::Block };
        assert_eq!(server("55P03").sql_error(nowait), Some(SqlError::LockNotAvailable));
        assert_eq!(server("55P03").sql_error(block), Some(SqlError::LockTimeout));
        assert_eq!(server("53300").sql_error(Sql::Connect), Some(SqlError::TooManyClients));
        assert_eq!(server("25P03").sql_error(Sql::Commit), Some(SqlError::IdleInTransactionTimeout));
        assert_eq!(server("57P01").sql_error(Sql::Commit), Some(SqlError::ConnectionClosed));
        assert_eq!(server("08006").sql_error(Sql::Commit), Some(SqlError::ConnectionClosed));
        assert_eq!(server("28P01").sql_error(Sql::Connect), None);
        assert_eq!(server("42501").sql_error(Sql::Commit), None);
        assert_eq!(server("42501").sqlstate(), Some("42501"));
        assert_eq!(PostgresError::Timeout(Duration::from_millis(5)).sql_error(Sql::Commit), Some(SqlError::Timeout));
        assert_eq!(PostgresError::Tls("bad".to_owned()).sql_error(Sql::Connect), None);
    }
}
