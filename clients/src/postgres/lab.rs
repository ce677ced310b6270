//! The lab's statements as SQL, written here from the engine's [`Sql`]
//! values (never from their display text), with the values as bind
//! parameters, each statement one round trip as the engine models it:
//! tokio-postgres's typed queries send parse, bind and execute at once, and
//! the lock statement, which has no values, goes as one simple query with
//! its `BEGIN`.
//!
//! Each answer is read as the engine's model gives it (`engine/src/sim/db.rs`):
//! a row count, or, when the fenced upsert changed nothing, the token the
//! row holds.

use super::{PostgresError, PostgresSession};
use crate::runtime::within;
use locklab_engine::event::{RowWrite, Sql, SqlOutcome};
use locklab_engine::ids::{ReportOf, Token};
use locklab_engine::scenario::{DbWait, LockStrength};
use std::time::Duration;
use tokio_postgres::types::{ToSql, Type};

/// The tables the lab's statements act on. The report row is unique per
/// period and per day (a per-period row leaves its day empty); `job_events`
/// references the jobs row, so other services' inserts take `FOR KEY SHARE`
/// on it and wait behind a job's `FOR UPDATE`.
pub const LAB_TABLES: &str = "CREATE TABLE jobs (name text PRIMARY KEY);\
    INSERT INTO jobs VALUES ('daily-report');\
    CREATE TABLE reports (job text NOT NULL, day integer, period integer NOT NULL, run integer NOT NULL, token bigint, UNIQUE (job, day), UNIQUE (job, period));\
    CREATE TABLE job_events (id bigserial PRIMARY KEY, job text NOT NULL REFERENCES jobs (name))";

/// A value bound to a statement, with its column's type.
enum Value {
    Integer(i32),
    BigInteger(Option<i64>),
}

impl Value {
    fn typed(&self) -> (&(dyn ToSql + Sync), Type) {
        match self {
            Value::Integer(value) => (value, Type::INT4),
            Value::BigInteger(value) => (value, Type::INT8),
        }
    }
}

/// `number` as an `integer` column holds it, or why it cannot be.
fn integer(number: u32, what: &str) -> Result<Value, PostgresError> {
    i32::try_from(number)
        .map(Value::Integer)
        .map_err(|_| PostgresError::Statement(format!("{what} {number} does not fit an integer column")))
}

/// A token as the `bigint` column holds it (NULL when the write carries none).
fn token(token: Option<Token>) -> Result<Value, PostgresError> {
    let value = token
        .map(|Token(token)| {
            i64::try_from(token)
                .map_err(|_| PostgresError::Statement(format!("token {token} does not fit a bigint column")))
        })
        .transpose()?;
    Ok(Value::BigInteger(value))
}

/// `SELECT … FOR UPDATE` with its wait policy, in the transaction it opens.
fn lock_job_row(strength: LockStrength, wait: DbWait) -> String {
    let wait = match wait {
        DbWait::Block => "",
        DbWait::Nowait => " NOWAIT",
        DbWait::SkipLocked => " SKIP LOCKED",
    };
    format!("BEGIN; SELECT name FROM jobs WHERE name = 'daily-report' {}{wait}", strength.sql())
}

/// Whether the report is there: the period's row, or the day's row once it
/// reflects this period or a later one.
fn report_exists(report: ReportOf) -> &'static str {
    match report {
        ReportOf::Period(_) => "SELECT 1 FROM reports WHERE job = 'daily-report' AND period = $1",
        ReportOf::Day(_) => "SELECT 1 FROM reports WHERE job = 'daily-report' AND day = $1 AND period >= $2",
    }
}

/// The report row's write; `RETURNING` counts the rows written in the same
/// round trip. The fence is the engine's rule (`row_outcome`): a row with a
/// token takes only a write whose token is not lower (so none without one);
/// a row without a token takes any write.
fn write_report(report: ReportOf, how: RowWrite) -> String {
    let (columns, values, key, set) = match report {
        ReportOf::Period(_) => ("job, period, run, token", "$1, $2, $3", "(job, period)", "run = EXCLUDED.run"),
        ReportOf::Day(_) => (
            "job, day, period, run, token",
            "$1, $2, $3, $4",
            "(job, day)",
            "period = EXCLUDED.period, run = EXCLUDED.run",
        ),
    };
    let on_conflict = match how {
        RowWrite::Upsert => format!("ON CONFLICT {key} DO UPDATE SET {set}"),
        RowWrite::FencedUpsert => format!(
            "ON CONFLICT {key} DO UPDATE SET {set}, token = EXCLUDED.token WHERE reports.token IS NULL OR reports.token <= EXCLUDED.token"
        ),
        RowWrite::InsertOrNothing => "ON CONFLICT DO NOTHING".to_owned(),
    };
    format!("INSERT INTO reports ({columns}) VALUES ('daily-report', {values}) {on_conflict} RETURNING run")
}

/// The token the report's row holds, which refused a fenced write.
fn row_token(report: ReportOf) -> &'static str {
    match report {
        ReportOf::Period(_) => "SELECT token FROM reports WHERE job = 'daily-report' AND period = $1",
        ReportOf::Day(_) => "SELECT token FROM reports WHERE job = 'daily-report' AND day = $1",
    }
}

/// The value that keys the report's row.
fn report_key(report: ReportOf) -> Result<Value, PostgresError> {
    match report {
        ReportOf::Period(period) => integer(period.0, "period"),
        ReportOf::Day(day) => integer(day, "day"),
    }
}

impl PostgresSession {
    /// Runs `sql` and reads its answer; errors as the server sent them.
    pub(super) fn run(&mut self, sql: Sql, limit: Duration) -> Result<SqlOutcome, PostgresError> {
        match sql {
            Sql::Connect => Err(PostgresError::Statement(
                "`connect` opens a session, which PostgresSession::connect does; a session cannot play it".to_owned(),
            )),
            Sql::ReportExists { period, report } => {
                let mut values = vec![report_key(report)?];
                if let ReportOf::Day(_) = report {
                    values.push(integer(period.0, "period")?);
                }
                let rows = self.typed(report_exists(report), &values, limit)?;
                Ok(SqlOutcome::Rows(count(rows.len())))
            }
            Sql::LockJobRow { strength, wait } => {
                let rows = self.batch(&lock_job_row(strength, wait), limit)?;
                Ok(SqlOutcome::Rows(count(rows.rows.len())))
            }
            Sql::WriteReport { period, report, run, token: written, how } => {
                let mut values = Vec::new();
                if let ReportOf::Day(day) = report {
                    values.push(integer(day, "day")?);
                }
                values.extend([integer(period.0, "period")?, integer(run.0, "run")?, token(written)?]);
                let rows = self.typed(&write_report(report, how), &values, limit)?;
                match (how, rows.len()) {
                    (RowWrite::FencedUpsert, 0) => {
                        let held = self.typed(row_token(report), &[report_key(report)?], limit)?;
                        let highest = held.first().and_then(|row| row.get::<_, Option<i64>>(0));
                        Ok(SqlOutcome::StaleToken {
                            highest: Token(highest.and_then(|t| u64::try_from(t).ok()).unwrap_or(0)),
                        })
                    }
                    (RowWrite::Upsert | RowWrite::FencedUpsert | RowWrite::InsertOrNothing, written) => {
                        Ok(SqlOutcome::Rows(count(written)))
                    }
                }
            }
            Sql::Commit => self.batch("COMMIT", limit).map(|_| SqlOutcome::Rows(0)),
            Sql::Rollback => self.batch("ROLLBACK", limit).map(|_| SqlOutcome::Rows(0)),
        }
    }

    /// One statement with bound values, in one round trip.
    fn typed(&self, sql: &str, values: &[Value], limit: Duration) -> Result<Vec<tokio_postgres::Row>, PostgresError> {
        let client = self.client()?;
        let typed: Vec<(&(dyn ToSql + Sync), Type)> = values.iter().map(Value::typed).collect();
        let answer = self.runtime.block_on(within(limit, client.query_typed(sql, &typed)));
        self.answered(answer, limit)
    }
}

/// A number of rows as the engine counts them.
fn count(rows: usize) -> u32 {
    u32::try_from(rows).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_sql_with_their_values_bound() {
        assert_eq!(
            lock_job_row(LockStrength::ForNoKeyUpdate, DbWait::SkipLocked),
            "BEGIN; SELECT name FROM jobs WHERE name = 'daily-report' FOR NO KEY UPDATE SKIP LOCKED"
        );
        assert_eq!(
            lock_job_row(LockStrength::ForUpdate, DbWait::Block),
            "BEGIN; SELECT name FROM jobs WHERE name = 'daily-report' FOR UPDATE"
        );
        let fenced = write_report(ReportOf::Day(3), RowWrite::FencedUpsert);
        assert!(fenced.starts_with("INSERT INTO reports (job, day, period, run, token) VALUES ('daily-report', $1, $2, $3, $4) ON CONFLICT (job, day) DO UPDATE SET period = EXCLUDED.period, run = EXCLUDED.run, token = EXCLUDED.token WHERE"), "{fenced}");
        assert!(fenced.ends_with("RETURNING run"));
        assert!(!fenced.contains('…'));
        assert!(
            matches!(integer(u32::MAX, "run"), Err(PostgresError::Statement(message)) if message.contains("run 4294967295"))
        );
    }
}
