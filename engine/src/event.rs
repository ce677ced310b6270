//! The append-only event log: the single source of truth of a run.
//!
//! Every view (the report, the timeline, the browser's panels) is a function of
//! this log. Each event is structured data that serializes to JSON, and its
//! `Display` is what a person would see on the wire: the Redis command or SQL
//! statement with its reply, e.g. `SET job:daily-report a:7f3a NX PX 30000 → OK`.

use crate::ids::{InstanceId, LeaseId, MessageId, Party, Period, ReportOf, RunId, SessionId, Token};
use crate::scenario::{DbWait, Fault, LockStrength};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The Redis key of the lock.
pub const LOCK_KEY: &str = "job:daily-report";
/// The Redis key of the fencing-token counter.
pub const TOKEN_KEY: &str = "job:daily-report:token";
/// The consensus-store key of the lease lock.
pub const LEASE_KEY: &str = "/locks/daily-report";

/// One thing that happened, at a simulated true time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub at_ms: u64,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// The value a client puts in a lock: its instance and a random nonce (`a:7f3a`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Owner {
    pub instance: InstanceId,
    pub nonce: u16,
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{:04x}", self.instance, self.nonce)
    }
}

impl Serialize for Owner {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl Owner {
    /// Reads the value as [`fmt::Display`] writes it (`a:7f3a`).
    pub fn parse(text: &str) -> Option<Owner> {
        let (instance, nonce) = text.split_once(':')?;
        let instance = match Party::parse(instance)? {
            Party::Instance(instance) => instance,
            Party::Redis(_) | Party::RedisReplica | Party::Db | Party::Storage | Party::Slack | Party::Consensus => {
                return None;
            }
        };
        let nonce = u16::from_str_radix(nonce, 16).ok().filter(|_| nonce.len() == 4)?;
        Some(Owner { instance, nonce })
    }
}

impl<'de> Deserialize<'de> for Owner {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::ids::deserialize_name(deserializer, |text| {
            Owner::parse(text).ok_or_else(|| format!("`{text}` is not a lock value (instance:nonce)"))
        })
    }
}

/// What a client writes as the lock key's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockValue {
    /// A value unique to the run (`b:0801`), so a holder can tell its own lock from another's.
    Owner(Owner),
    /// The seed's literal `locked`: every instance writes the same value, so
    /// nothing tells one holder from another.
    Locked,
}

impl fmt::Display for LockValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockValue::Owner(owner) => owner.fmt(f),
            LockValue::Locked => f.write_str("locked"),
        }
    }
}

impl Serialize for LockValue {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for LockValue {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::ids::deserialize_name(deserializer, |text| match text {
            "locked" => Ok(LockValue::Locked),
            _ => Owner::parse(text)
                .map(LockValue::Owner)
                .ok_or_else(|| format!("`{text}` is not a lock value (`locked` or instance:nonce)")),
        })
    }
}

/// The lock key as a Redis node holds it. A log writes it as
/// `[value, setter, expires_local_ms]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "(LockValue, InstanceId, i64)", into = "(LockValue, InstanceId, i64)")]
pub struct LockKey {
    pub value: LockValue,
    /// The instance whose command set it (the seed's literal `locked` does not say).
    pub setter: InstanceId,
    /// Absolute expiry on the clock of the node that set it.
    pub expires_local_ms: i64,
}

impl LockKey {
    /// The expiry of a key set with no TTL (`SETNX`): it never expires, as
    /// Redis's `TTL` says with -1.
    pub const NO_EXPIRY: i64 = i64::MAX;
}

impl From<(LockValue, InstanceId, i64)> for LockKey {
    fn from((value, setter, expires_local_ms): (LockValue, InstanceId, i64)) -> LockKey {
        LockKey { value, setter, expires_local_ms }
    }
}

impl From<LockKey> for (LockValue, InstanceId, i64) {
    fn from(key: LockKey) -> Self {
        (key.value, key.setter, key.expires_local_ms)
    }
}

/// The Redis commands the strategies use. The lock commands act on
/// [`LOCK_KEY`], `INCR` on [`TOKEN_KEY`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum RedisCommand {
    /// `SET key value NX EX seconds`.
    SetNxEx {
        value: LockValue,
        ttl_s: u64,
    },
    /// `SET key value NX PX milliseconds`.
    SetNxPx {
        value: LockValue,
        ttl_ms: u64,
    },
    /// One Lua script: `SET key value NX PX ttl`, and only if that succeeded,
    /// `INCR` the token counter. The token is taken in the same atomic step as
    /// the lock: with `SET` then `INCR` as two round trips, a delayed `INCR`
    /// could hand an expired holder a higher token than the new holder's.
    SetNxPxIncr {
        value: Owner,
        ttl_ms: u64,
    },
    /// `SETNX key value`: the lock with no expiry at all; 1 if it set the
    /// key, 0 if a key was there. A client that means the key to expire must
    /// send `EXPIRE` after it, in a second round trip.
    SetNx {
        value: LockValue,
    },
    /// `SET key value PX milliseconds`, with no `NX`: it sets the key
    /// whatever is there, another client's lock included, and answers OK.
    SetPx {
        value: LockValue,
        ttl_ms: u64,
    },
    Get,
    Del,
    Pexpire {
        ttl_ms: u64,
    },
    /// `EXPIRE key seconds`: moves the expiry of whatever key is there,
    /// another client's lock included; 1, or 0 when there is no key.
    Expire {
        ttl_s: u64,
    },
    Incr,
    /// The Lua unlock script: delete only if the value is still ours.
    CompareAndDelete {
        value: Owner,
    },
    /// The Lua extend script: `PEXPIRE` only if the value is still ours.
    CompareAndExtend {
        value: Owner,
        ttl_ms: u64,
    },
}

/// The lock script: `SET … NX PX` and, only if it set the key, `INCR` of the
/// token counter, in one call (`SetNxPxIncr`). `false` is a nil reply.
pub const LOCK_SCRIPT: &str = "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then \
                               return redis.call('INCR', KEYS[2]) end return false";
/// The unlock script: delete the key only if it still holds our value.
pub const UNLOCK_SCRIPT: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then \
                                 return redis.call('DEL', KEYS[1]) end return 0";
/// The extend script: `PEXPIRE` the key only if it still holds our value.
pub const EXTEND_SCRIPT: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then \
                                 return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0";

impl RedisCommand {
    /// The TTL a command that moves the key's expiry gives it (the extend
    /// script, `PEXPIRE`, `EXPIRE`), if it is one.
    pub fn extended_ttl_ms(self) -> Option<u64> {
        match self {
            RedisCommand::CompareAndExtend { ttl_ms, .. } | RedisCommand::Pexpire { ttl_ms } => Some(ttl_ms),
            RedisCommand::Expire { ttl_s } => Some(ttl_s.saturating_mul(1_000)),
            RedisCommand::SetNxEx { .. }
            | RedisCommand::SetNxPx { .. }
            | RedisCommand::SetNxPxIncr { .. }
            | RedisCommand::SetNx { .. }
            | RedisCommand::SetPx { .. }
            | RedisCommand::CompareAndDelete { .. }
            | RedisCommand::Del
            | RedisCommand::Get
            | RedisCommand::Incr => None,
        }
    }

    /// Whether the command changes data, and so is replicated.
    pub fn writes(self) -> bool {
        !matches!(self, RedisCommand::Get)
    }

    /// The command as a real client sends it: its arguments, the scripts
    /// written out (the event text abbreviates them).
    pub fn wire(self) -> Vec<String> {
        let words = |words: &[&str]| words.iter().map(|word| (*word).to_owned()).collect::<Vec<_>>();
        match self {
            RedisCommand::SetNxEx { value, ttl_s } => {
                words(&["SET", LOCK_KEY, &value.to_string(), "NX", "EX", &ttl_s.to_string()])
            }
            RedisCommand::SetNxPx { value, ttl_ms } => {
                words(&["SET", LOCK_KEY, &value.to_string(), "NX", "PX", &ttl_ms.to_string()])
            }
            RedisCommand::SetNxPxIncr { value, ttl_ms } => {
                words(&["EVAL", LOCK_SCRIPT, "2", LOCK_KEY, TOKEN_KEY, &value.to_string(), &ttl_ms.to_string()])
            }
            RedisCommand::SetNx { value } => words(&["SETNX", LOCK_KEY, &value.to_string()]),
            RedisCommand::SetPx { value, ttl_ms } => {
                words(&["SET", LOCK_KEY, &value.to_string(), "PX", &ttl_ms.to_string()])
            }
            RedisCommand::Get => words(&["GET", LOCK_KEY]),
            RedisCommand::Del => words(&["DEL", LOCK_KEY]),
            RedisCommand::Pexpire { ttl_ms } => words(&["PEXPIRE", LOCK_KEY, &ttl_ms.to_string()]),
            RedisCommand::Expire { ttl_s } => words(&["EXPIRE", LOCK_KEY, &ttl_s.to_string()]),
            RedisCommand::Incr => words(&["INCR", TOKEN_KEY]),
            RedisCommand::CompareAndDelete { value } => {
                words(&["EVAL", UNLOCK_SCRIPT, "1", LOCK_KEY, &value.to_string()])
            }
            RedisCommand::CompareAndExtend { value, ttl_ms } => {
                words(&["EVAL", EXTEND_SCRIPT, "1", LOCK_KEY, &value.to_string(), &ttl_ms.to_string()])
            }
        }
    }
}

impl fmt::Display for RedisCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RedisCommand::SetNxEx { value, ttl_s } => {
                write!(f, "SET {LOCK_KEY} {value} NX EX {ttl_s}")
            }
            RedisCommand::SetNxPx { value, ttl_ms } => {
                write!(f, "SET {LOCK_KEY} {value} NX PX {ttl_ms}")
            }
            RedisCommand::SetNxPxIncr { value, ttl_ms } => {
                write!(f, "EVAL \"if set NX PX then return INCR\" 2 {LOCK_KEY} {TOKEN_KEY} {value} {ttl_ms}")
            }
            RedisCommand::SetNx { value } => write!(f, "SETNX {LOCK_KEY} {value}"),
            RedisCommand::SetPx { value, ttl_ms } => write!(f, "SET {LOCK_KEY} {value} PX {ttl_ms}"),
            RedisCommand::Get => write!(f, "GET {LOCK_KEY}"),
            RedisCommand::Del => write!(f, "DEL {LOCK_KEY}"),
            RedisCommand::Pexpire { ttl_ms } => write!(f, "PEXPIRE {LOCK_KEY} {ttl_ms}"),
            RedisCommand::Expire { ttl_s } => write!(f, "EXPIRE {LOCK_KEY} {ttl_s}"),
            RedisCommand::Incr => write!(f, "INCR {TOKEN_KEY}"),
            RedisCommand::CompareAndDelete { value } => {
                write!(f, "EVAL \"if get==ARGV[1] then del\" 1 {LOCK_KEY} {value}")
            }
            RedisCommand::CompareAndExtend { value, ttl_ms } => {
                write!(f, "EVAL \"if get==ARGV[1] then pexpire\" 1 {LOCK_KEY} {value} {ttl_ms}")
            }
        }
    }
}

/// A Redis reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reply", content = "value", rename_all = "snake_case")]
pub enum RedisReply {
    Ok,
    Nil,
    Integer(i64),
    Value(LockValue),
    /// The node is down or not yet promoted: the connection is refused.
    ConnectionRefused,
    /// No reply within the client's timeout.
    Timeout,
}

impl fmt::Display for RedisReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RedisReply::Ok => f.write_str("OK"),
            RedisReply::Nil => f.write_str("(nil)"),
            RedisReply::Integer(value) => write!(f, "(integer) {value}"),
            RedisReply::Value(owner) => write!(f, "\"{owner}\""),
            RedisReply::ConnectionRefused => f.write_str("(error) connection refused"),
            RedisReply::Timeout => f.write_str("(timeout)"),
        }
    }
}

/// How the report row is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowWrite {
    /// `INSERT … ON CONFLICT (job, period) DO UPDATE`: the last writer wins.
    Upsert,
    /// The same, but only if the row's fencing token is not higher than ours.
    FencedUpsert,
    /// `INSERT … ON CONFLICT DO NOTHING RETURNING run`: the first writer wins;
    /// the others get no row back.
    InsertOrNothing,
}

/// The SQL statements the instances send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "statement", rename_all = "snake_case")]
pub enum Sql {
    /// Opening a connection (the startup packet).
    Connect,
    /// Whether `period`'s report is done: `SELECT 1 FROM reports WHERE job =
    /// 'daily-report' AND period = …`, or, for the day's report, whether the
    /// day's row already reflects this period or a later one.
    ReportExists {
        period: Period,
        /// The row's key: the period's own row, or the day's.
        report: ReportOf,
    },
    /// `BEGIN; SELECT … FROM jobs WHERE name = 'daily-report' FOR [NO KEY] UPDATE [NOWAIT|SKIP LOCKED]`.
    LockJobRow {
        strength: LockStrength,
        wait: DbWait,
    },
    /// The report row.
    WriteReport {
        period: Period,
        /// The row's key: the period's own row, or the day's.
        report: ReportOf,
        run: RunId,
        token: Option<Token>,
        how: RowWrite,
    },
    Commit,
    Rollback,
}

impl fmt::Display for Sql {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sql::Connect => f.write_str("connect"),
            Sql::ReportExists { period, report: ReportOf::Period(_) } => {
                write!(f, "SELECT 1 FROM reports WHERE job = 'daily-report' AND period = {}", period.0)
            }
            Sql::ReportExists { period, report: ReportOf::Day(day) } => {
                write!(f, "SELECT 1 FROM reports WHERE job = 'daily-report' AND day = {day} AND period >= {}", period.0)
            }
            Sql::LockJobRow { strength, wait } => {
                let suffix = match wait {
                    DbWait::Block => "",
                    DbWait::Nowait => " NOWAIT",
                    DbWait::SkipLocked => " SKIP LOCKED",
                };
                write!(f, "BEGIN; SELECT … FROM jobs WHERE name = 'daily-report' {}{suffix}", strength.sql())
            }
            Sql::WriteReport { period, report, run, token, how } => {
                let token_text = token.map_or_else(|| "NULL".to_owned(), |token| token.to_string());
                match report {
                    ReportOf::Period(_) => write!(
                        f,
                        "INSERT INTO reports (job, period, run, token) VALUES ('daily-report', {}, {}, {token_text}) ON CONFLICT (job, period) ",
                        period.0, run.0
                    )?,
                    ReportOf::Day(day) => write!(
                        f,
                        "INSERT INTO reports (job, day, period, run, token) VALUES ('daily-report', {day}, {}, {}, {token_text}) ON CONFLICT (job, day) ",
                        period.0, run.0
                    )?,
                }
                let set = match report {
                    ReportOf::Period(_) => "run = EXCLUDED.run",
                    ReportOf::Day(_) => "period = EXCLUDED.period, run = EXCLUDED.run",
                };
                match how {
                    RowWrite::Upsert => write!(f, "DO UPDATE SET {set}"),
                    RowWrite::FencedUpsert => {
                        write!(f, "DO UPDATE SET {set}, token = EXCLUDED.token WHERE reports.token <= EXCLUDED.token")
                    }
                    // RETURNING: zero rows back is how the writer learns another run wrote first.
                    RowWrite::InsertOrNothing => f.write_str("DO NOTHING RETURNING run"),
                }
            }
            Sql::Commit => f.write_str("COMMIT"),
            Sql::Rollback => f.write_str("ROLLBACK"),
        }
    }
}

/// What the database answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", content = "detail", rename_all = "snake_case")]
pub enum SqlOutcome {
    Connected(SessionId),
    Rows(u32),
    /// The fenced upsert found a higher token and changed nothing.
    StaleToken {
        highest: Token,
    },
    Error(SqlError),
}

/// PostgreSQL errors the lab produces, with their real wording.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SqlError {
    /// 53300.
    TooManyClients,
    /// 55P03 from `NOWAIT`.
    LockNotAvailable,
    /// 55P03 from `lock_timeout`.
    LockTimeout,
    /// 25P03: `idle_in_transaction_session_timeout` ended the session.
    IdleInTransactionTimeout,
    /// The session is gone (the server ended it, or the link is down).
    ConnectionClosed,
    /// No reply within the client's timeout.
    Timeout,
}

impl fmt::Display for SqlOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SqlOutcome::Connected(session) => write!(f, "connected (backend {})", session.0),
            SqlOutcome::Rows(rows) => write!(f, "{rows} row{}", if *rows == 1 { "" } else { "s" }),
            SqlOutcome::StaleToken { highest } => write!(f, "0 rows (the row has token {highest})"),
            SqlOutcome::Error(error) => write!(f, "{error}"),
        }
    }
}

impl SqlError {
    /// The SQLSTATE the server sends with the error; `None` for what the
    /// client library reports itself.
    pub fn sqlstate(self) -> Option<&'static str> {
        match self {
            SqlError::TooManyClients => Some("53300"),
            SqlError::LockNotAvailable | SqlError::LockTimeout => Some("55P03"),
            SqlError::IdleInTransactionTimeout => Some("25P03"),
            SqlError::ConnectionClosed | SqlError::Timeout => None,
        }
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SqlError::TooManyClients => "FATAL: sorry, too many clients already",
            SqlError::LockNotAvailable => "ERROR: could not obtain lock on row in relation \"jobs\"",
            SqlError::LockTimeout => "ERROR: canceling statement due to lock timeout",
            SqlError::IdleInTransactionTimeout => "FATAL: terminating connection due to idle-in-transaction timeout",
            SqlError::ConnectionClosed => "server closed the connection unexpectedly",
            SqlError::Timeout => "(client timeout)",
        })
    }
}

/// Who holds a database session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DbClient {
    Instance(InstanceId),
    /// Other services sharing the database.
    Background,
}

impl fmt::Display for DbClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbClient::Instance(id) => write!(f, "{id}"),
            DbClient::Background => f.write_str("other services"),
        }
    }
}

/// A change to the jobs row's lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowLockChange {
    Waiting,
    Granted,
    Released,
    /// Stopped waiting (timeout, cancel, disconnect).
    GaveUp,
}

/// A lock mode on the jobs row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowLockMode {
    /// `FOR UPDATE`.
    Update,
    /// `FOR NO KEY UPDATE`.
    NoKeyUpdate,
    /// `FOR KEY SHARE`, taken by a foreign-key check from `job_events`.
    KeyShare,
}

impl RowLockMode {
    /// The mode a job's `strength` takes.
    pub fn of(strength: LockStrength) -> RowLockMode {
        match strength {
            LockStrength::ForUpdate => RowLockMode::Update,
            LockStrength::ForNoKeyUpdate => RowLockMode::NoKeyUpdate,
        }
    }

    /// Whether one session holding `self` keeps another from taking `other`
    /// (PostgreSQL's "Conflicting Row-Level Locks", for the three modes the
    /// lab plays): a key share conflicts with `FOR UPDATE` only, and the two
    /// update modes conflict with each other and themselves.
    pub fn conflicts(self, other: RowLockMode) -> bool {
        match (self, other) {
            (RowLockMode::KeyShare, RowLockMode::KeyShare)
            | (RowLockMode::KeyShare, RowLockMode::NoKeyUpdate)
            | (RowLockMode::NoKeyUpdate, RowLockMode::KeyShare) => false,
            (RowLockMode::Update, _)
            | (_, RowLockMode::Update)
            | (RowLockMode::NoKeyUpdate, RowLockMode::NoKeyUpdate) => true,
        }
    }

    /// It is a job's lock (either update mode), not a foreign-key check's.
    pub fn is_job_lock(self) -> bool {
        match self {
            RowLockMode::Update | RowLockMode::NoKeyUpdate => true,
            RowLockMode::KeyShare => false,
        }
    }
}

/// A change to a database session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", content = "reason", rename_all = "snake_case")]
pub enum ConnectionChange {
    Opened,
    Refused,
    Closed,
    /// The server ended the session and rolled back its transaction.
    Terminated(TerminateReason),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TerminateReason {
    /// The client's socket closed (the kernel sent FIN or RST).
    ClientDisconnected,
    /// TCP keepalive found the client's host gone.
    KeepaliveTimeout,
    IdleInTransactionTimeout,
}

/// What one of the other services' queries does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundQuery {
    /// `INSERT INTO job_events …`: its foreign-key check takes `FOR KEY SHARE` on the jobs row.
    ForeignKeyInsert,
    /// A plain read: it takes no row lock.
    Read,
}

/// How a background query ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundOutcome {
    Ok,
    /// The other service's client gave up waiting.
    Timeout,
    /// No connection could be had.
    Refused,
    /// Still waiting when the run ended (logged at the end).
    StillWaiting,
}

impl BackgroundOutcome {
    /// The query failed: its service got an error, not an answer.
    pub fn failed(self) -> bool {
        match self {
            BackgroundOutcome::Ok | BackgroundOutcome::StillWaiting => false,
            BackgroundOutcome::Timeout | BackgroundOutcome::Refused => true,
        }
    }
}

/// What a storage PUT met.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", content = "highest", rename_all = "snake_case")]
pub enum PutOutcome {
    Accepted,
    /// Refused: the storage has seen a higher token for this report, or the
    /// write carries no token to a report that storage fences.
    Rejected(Token),
}

impl PutOutcome {
    /// The storage fence, the one rule the simulator and live mode both
    /// apply: a store that checks tokens remembers the highest it has seen
    /// for a report (`highest`) and refuses a lower one; an equal token
    /// passes (it could be the same holder). Once a report is fenced (a token
    /// was written to it), a write that carries no token is refused too: it
    /// cannot show it holds the lock, and a store that let it through would
    /// let any process that lost its token (a restarted one) past the fence.
    /// A store that does not check tokens takes every write, the last one
    /// winning. Returns the outcome and the highest token after the write.
    pub fn fence(checks_tokens: bool, token: Option<Token>, highest: Option<Token>) -> (PutOutcome, Option<Token>) {
        if !checks_tokens {
            return (PutOutcome::Accepted, highest);
        }
        match (token, highest) {
            (Some(token), Some(seen)) if token < seen => (PutOutcome::Rejected(seen), highest),
            (None, Some(seen)) => (PutOutcome::Rejected(seen), highest),
            (Some(token), _) => (PutOutcome::Accepted, Some(token)),
            (None, None) => (PutOutcome::Accepted, None),
        }
    }
}

/// Consensus-store operations (etcd's API, simplified).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ConsensusOp {
    /// Grant a lease, then `txn(create_revision(key) == 0) put key value lease`.
    Acquire {
        value: Owner,
        ttl_ms: u64,
    },
    KeepAlive {
        lease: LeaseId,
    },
    Revoke {
        lease: LeaseId,
    },
}

impl fmt::Display for ConsensusOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConsensusOp::Acquire { value, ttl_ms } => write!(
                f,
                "lease grant {}s; txn if create_revision({LEASE_KEY}) == 0 then put {LEASE_KEY} {value} --lease",
                ttl_ms / 1000
            ),
            ConsensusOp::KeepAlive { lease } => write!(f, "lease keep-alive {}", lease.0),
            ConsensusOp::Revoke { lease } => write!(f, "lease revoke {}", lease.0),
        }
    }
}

/// Consensus-store replies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum ConsensusReply {
    /// The put succeeded; its revision is the fencing token.
    Acquired {
        lease: LeaseId,
        revision: Token,
    },
    /// Somebody else's key exists.
    Taken {
        holder: Owner,
    },
    Alive {
        ttl_ms: u64,
    },
    LeaseNotFound,
    Revoked,
    /// No leader: the cluster is electing one.
    NoLeader,
    Timeout,
}

impl fmt::Display for ConsensusReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConsensusReply::Acquired { lease, revision } => {
                write!(f, "succeeded, lease {}, revision {revision}", lease.0)
            }
            ConsensusReply::Taken { holder } => write!(f, "failed: held by {holder}"),
            ConsensusReply::Alive { ttl_ms } => write!(f, "TTL {}", ttl_ms / 1000),
            ConsensusReply::LeaseNotFound => f.write_str("error: requested lease not found"),
            ConsensusReply::Revoked => f.write_str("revoked"),
            ConsensusReply::NoLeader => f.write_str("error: etcdserver: no leader"),
            ConsensusReply::Timeout => f.write_str("(timeout)"),
        }
    }
}

/// An instance's process state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ProcessState {
    Running,
    /// Stopped the world until `until_ms`.
    Paused {
        until_ms: u64,
    },
    /// OOM-killed: memory lost, sockets closed by the kernel.
    Dead,
    /// The host vanished: no FIN was sent.
    HostLost,
    /// Back as a fresh process.
    Restarted,
}

/// A step in a run's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "phase", content = "detail", rename_all = "snake_case")]
pub enum RunPhase {
    /// Began trying to take the lock.
    Trying,
    /// Lost the race; will try again.
    Busy,
    /// Holds the lock (as far as it knows).
    Acquired,
    /// Found the period's report already there.
    Skipped,
    /// Began the job's work.
    Started,
    /// Wrote the report row and finished.
    Finished,
    /// Stopped before finishing.
    Aborted(AbortReason),
    /// Stopped trying: the next tick came.
    GaveUp,
    /// The job runner handed this run the job that the given run's process
    /// died in (`world.redeliver_after_crash`); it runs under that run's
    /// grant, without taking the lock again.
    Redelivered(RunId),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AbortReason {
    /// A lease renewal was refused: the lock is somebody else's.
    RenewalFailed,
    /// The lease ran out by the holder's own clock before it could renew.
    LeaseExpired,
    /// A resource refused a write with a stale token.
    WriteRejected,
    /// A storage write got no answer in time.
    WriteFailed,
    /// The database session was gone when the job needed it.
    SessionLost,
    /// The process died.
    ProcessDied,
    /// The report row could not be written.
    RowWriteFailed,
    /// It looked before a write (`GET` and compare) and the lock was not
    /// its own, or it could not tell.
    NotHolder,
    /// Before a write, its own clock said too little of its lease was left.
    LeaseTooShort,
}

/// Why the lock service stopped counting a run as the holder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RevokeReason {
    Released,
    Expired,
    /// Somebody deleted it (a plain `DEL` by another run).
    DeletedByOther,
    /// Another run's plain `SET` (no `NX`) replaced it with its own value.
    Overwritten,
    /// The node lost its keys (restart without persistence, failover).
    Forgotten,
    /// Transaction ended (commit, rollback or session end).
    TransactionEnded,
}

/// Why a message never arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossReason {
    Partition,
    ReceiverDown,
}

/// What a message carries, in a word (the full text is on the receiving side's event).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    Redis,
    Sql,
    Put,
    Post,
    Consensus,
    Reply,
}

/// Everything the log records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// A fault from the scenario struck; `targets` are the parties it hit
    /// (empty when it found nothing to hit, e.g. no holder).
    Fault {
        fault: Fault,
        targets: Vec<Party>,
    },
    /// An instance's cron fired for a period.
    Cron {
        instance: InstanceId,
        period: Period,
    },
    Process {
        instance: InstanceId,
        state: ProcessState,
    },
    /// A party's clock changed: it now reads `local_ms` and drifts `drift_ppm`.
    Clock {
        party: Party,
        local_ms: i64,
        drift_ppm: i64,
    },
    Sent {
        message: MessageId,
        from: Party,
        to: Party,
        what: MessageKind,
        arrive_at_ms: Option<u64>,
    },
    Lost {
        message: MessageId,
        reason: LossReason,
    },
    Run {
        run: RunId,
        instance: InstanceId,
        period: Period,
        phase: RunPhase,
    },
    /// The lock service's truth: `run` now holds the lock (its epoch begins).
    Granted {
        run: RunId,
        instance: InstanceId,
        token: Option<Token>,
    },
    /// The lock service's truth: `run` no longer holds it.
    Revoked {
        run: RunId,
        instance: InstanceId,
        reason: RevokeReason,
    },
    /// What an instance believes.
    Belief {
        instance: InstanceId,
        run: RunId,
        holds: bool,
        token: Option<Token>,
    },
    Redis {
        node: Party,
        client: InstanceId,
        run: RunId,
        command: RedisCommand,
        reply: RedisReply,
    },
    KeyExpired {
        node: Party,
        value: LockValue,
    },
    /// A node lost every key (restart without persistence, or a promotion that
    /// dropped writes not yet replicated).
    KeysLost {
        node: Party,
        keys: u32,
    },
    /// What the replica (`redis-1-replica`, the world's only one) holds once
    /// a write from its primary has reached it, `replication_lag_ms` after
    /// the primary applied it; a write the dead primary had not yet sent
    /// never comes. A live run cannot see the replication stream: it logs
    /// this once, as read from the replica when it is promoted.
    Replicated {
        key: Option<LockKey>,
        counter: i64,
    },
    RedisDown {
        node: Party,
    },
    RedisUp {
        node: Party,
        promoted: bool,
    },
    Sql {
        session: SessionId,
        client: DbClient,
        run: Option<RunId>,
        statement: Sql,
        outcome: SqlOutcome,
        waited_ms: u64,
    },
    Connection {
        session: SessionId,
        client: DbClient,
        change: ConnectionChange,
    },
    RowLock {
        session: SessionId,
        client: DbClient,
        mode: RowLockMode,
        change: RowLockChange,
    },
    /// An instance's connection pool: busy connections, open ones, waiting requests.
    Pool {
        instance: InstanceId,
        busy: u8,
        open: u8,
        waiting: u16,
    },
    /// One of the other services' queries that had to wait (the ones that
    /// waited for nothing leave no event): how long it took in all, how long
    /// of that it waited for a connection of the services' own pool, and
    /// whether the jobs row lock held it up, by making it (a foreign-key
    /// check) wait for the row, or by holding the pool's connections in
    /// such waits while it queued for one.
    Background {
        query: u32,
        what: BackgroundQuery,
        latency_ms: u64,
        connection_wait_ms: u64,
        behind_lock: bool,
        outcome: BackgroundOutcome,
    },
    Put {
        instance: InstanceId,
        run: RunId,
        period: Period,
        /// The report the chunk belongs to: the period's own, or the day's.
        report: ReportOf,
        chunk: u8,
        own_object: bool,
        token: Option<Token>,
        outcome: PutOutcome,
    },
    Post {
        instance: InstanceId,
        run: RunId,
        period: Period,
    },
    Consensus {
        client: InstanceId,
        run: RunId,
        op: ConsensusOp,
        reply: ConsensusReply,
    },
    LeaseExpired {
        lease: LeaseId,
        value: Owner,
    },
    Leader {
        up: bool,
    },
    /// A new leader gave a lease its whole TTL again, so that no lease
    /// expires for the election's sake. etcd's lessor refreshes every lease
    /// when its member becomes the leader (`Promote`), adding a margin the
    /// simulator leaves out.
    LeaseRefreshed {
        lease: LeaseId,
    },
    /// A report row took effect (autocommit, or at COMMIT).
    RowApplied {
        period: Period,
        /// The row's key: the period's own row, or the day's.
        report: ReportOf,
        run: RunId,
        token: Option<Token>,
    },
    DbSlow {
        factor_percent: u32,
    },
}

impl Event {
    /// The parties an event concerns, for filtering.
    pub fn parties(&self) -> Vec<Party> {
        use EventKind as K;
        match &self.kind {
            K::Fault { targets, .. } => targets.clone(),
            K::Cron { instance, .. }
            | K::Process { instance, .. }
            | K::Run { instance, .. }
            | K::Granted { instance, .. }
            | K::Revoked { instance, .. }
            | K::Belief { instance, .. }
            | K::Pool { instance, .. } => vec![Party::Instance(*instance)],
            K::Clock { party, .. } => vec![*party],
            K::Sent { from, to, .. } => vec![*from, *to],
            K::Lost { .. } => Vec::new(),
            K::Redis { node, client, .. } => vec![*node, Party::Instance(*client)],
            K::KeyExpired { node, .. } | K::KeysLost { node, .. } | K::RedisDown { node } | K::RedisUp { node, .. } => {
                vec![*node]
            }
            K::Sql { client, .. } | K::Connection { client, .. } | K::RowLock { client, .. } => match client {
                DbClient::Instance(id) => vec![Party::Db, Party::Instance(*id)],
                DbClient::Background => vec![Party::Db],
            },
            K::Replicated { .. } => vec![Party::RedisReplica],
            K::Background { .. } | K::DbSlow { .. } => vec![Party::Db],
            K::Put { instance, .. } => vec![Party::Storage, Party::Instance(*instance)],
            K::Post { instance, .. } => vec![Party::Slack, Party::Instance(*instance)],
            K::Consensus { client, .. } => vec![Party::Consensus, Party::Instance(*client)],
            K::LeaseExpired { .. } | K::Leader { .. } | K::LeaseRefreshed { .. } => vec![Party::Consensus],
            K::RowApplied { .. } => vec![Party::Db],
        }
    }

    /// The event's kind as a short word, for filtering.
    pub fn kind_name(&self) -> &'static str {
        use EventKind as K;
        match &self.kind {
            K::Fault { .. } => "fault",
            K::Cron { .. } => "cron",
            K::Process { .. } => "process",
            K::Clock { .. } => "clock",
            K::Sent { .. } => "sent",
            K::Lost { .. } => "lost",
            K::Run { .. } => "run",
            K::Granted { .. } => "granted",
            K::Revoked { .. } => "revoked",
            K::Belief { .. } => "belief",
            K::Redis { .. } => "redis",
            K::KeyExpired { .. } => "key_expired",
            K::KeysLost { .. } => "keys_lost",
            K::Replicated { .. } => "replicated",
            K::RedisDown { .. } => "redis_down",
            K::RedisUp { .. } => "redis_up",
            K::Sql { .. } => "sql",
            K::Connection { .. } => "connection",
            K::RowLock { .. } => "row_lock",
            K::Pool { .. } => "pool",
            K::Background { .. } => "background",
            K::Put { .. } => "put",
            K::Post { .. } => "post",
            K::Consensus { .. } => "consensus",
            K::LeaseExpired { .. } => "lease_expired",
            K::Leader { .. } => "leader",
            K::LeaseRefreshed { .. } => "lease_refreshed",
            K::RowApplied { .. } => "row_applied",
            K::DbSlow { .. } => "db_slow",
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use EventKind as K;
        match &self.kind {
            K::Fault { fault, targets } if targets.is_empty() => {
                write!(f, "FAULT {fault}: nothing to strike (no holder), the fault does nothing")
            }
            K::Fault { fault, .. } => write!(f, "FAULT {fault}"),
            K::Cron { instance, period } => {
                write!(f, "{instance}: cron fires generate-daily-report (period {})", period.0)
            }
            K::Process { instance, state } => write!(f, "{instance}: ").and_then(|()| state.sentence(f)),
            K::Clock { party, local_ms, drift_ppm } => clock_sentence(f, *party, *local_ms, *drift_ppm),
            K::Sent { from, to, what, arrive_at_ms, .. } => sent_sentence(f, *from, *to, *what, *arrive_at_ms),
            K::Lost { message, reason } => write!(f, "message {} lost ({reason:?})", message.0),
            K::Run { run, instance, period, phase } => {
                write!(f, "{instance} ({run}, period {}): ", period.0).and_then(|()| phase.sentence(f))
            }
            K::Granted { run, instance, token } => {
                write!(f, "lock service grants the lock to {instance} ({run}){}", with_token(*token))
            }
            K::Revoked { instance, run, reason } => {
                write!(f, "lock service no longer counts {instance} ({run}) as holder: {reason:?}")
            }
            K::Belief { instance, holds: true, token, .. } => {
                write!(
                    f,
                    "{instance}: I hold the lock{}",
                    token.map(|token| format!(", token {token}")).unwrap_or_default()
                )
            }
            K::Belief { instance, holds: false, .. } => write!(f, "{instance}: I do not hold the lock"),
            K::Redis { node, client, command, reply, .. } => write!(f, "{client} → {node}: {command} → {reply}"),
            K::KeyExpired { node, value } => write!(f, "{node}: {LOCK_KEY} ({value}) expired by {node}'s clock"),
            K::KeysLost { node, keys } => write!(f, "{node}: {keys} key(s) lost"),
            K::Replicated { key, counter } => replicated_sentence(f, *key, *counter),
            K::RedisDown { node } => write!(f, "{node}: down"),
            K::RedisUp { node, promoted: true } => write!(f, "{node}: promoted to primary"),
            K::RedisUp { node, promoted: false } => write!(f, "{node}: up, empty"),
            K::Sql { .. } => sql_sentence(f, &self.kind),
            K::Connection { session, client, change } => connection_sentence(f, *session, *client, *change),
            K::RowLock { session, client, mode, change } => {
                write!(f, "db: jobs row {mode:?} lock {change:?} for {client} (backend {})", session.0)
            }
            K::Pool { instance, busy, open, waiting } => {
                write!(f, "{instance}: pool {busy}/{open} busy, {waiting} waiting")
            }
            K::Background { .. } => background_sentence(f, &self.kind),
            K::Put { .. } => put_sentence(f, &self.kind),
            K::Post { instance, period, .. } => {
                write!(f, "{instance} → slack: POST chat.postMessage \"Daily report for period {} is ready\"", period.0)
            }
            K::Consensus { client, op, reply, .. } => write!(f, "{client} → consensus: {op} → {reply}"),
            K::LeaseExpired { lease, value } => write!(f, "consensus: lease {} of {value} expired", lease.0),
            K::Leader { up: true } => f.write_str("consensus: new leader elected"),
            K::Leader { up: false } => f.write_str("consensus: leader lost; electing"),
            K::LeaseRefreshed { lease } => {
                write!(f, "consensus: the new leader gives lease {} its whole TTL again", lease.0)
            }
            K::RowApplied { period, report, run, token } => row_applied_sentence(f, *period, *report, *run, *token),
            K::DbSlow { factor_percent: 100 } => f.write_str("db: back to normal speed"),
            K::DbSlow { factor_percent } => {
                write!(f, "db: queries take {}× as long", crate::format::per_mille(i64::from(*factor_percent) * 10))
            }
        }
    }
}

/// ` with token N`, or nothing.
fn with_token(token: Option<Token>) -> String {
    token.map(|token| format!(" with token {token}")).unwrap_or_default()
}

/// A message put on the wire: when it lands, or that a partition dropped it.
fn sent_sentence(
    f: &mut fmt::Formatter<'_>,
    from: Party,
    to: Party,
    what: MessageKind,
    arrive_at_ms: Option<u64>,
) -> fmt::Result {
    match arrive_at_ms {
        Some(at) => write!(f, "{from} → {to}: {what:?} message, arrives t={}", crate::format::seconds(at)),
        None => write!(f, "{from} → {to}: {what:?} message dropped by the partition"),
    }
}

/// A statement and its answer, with how long it waited for a lock.
fn sql_sentence(f: &mut fmt::Formatter<'_>, sql: &EventKind) -> fmt::Result {
    let EventKind::Sql { session, client, statement, outcome, waited_ms, .. } = sql else {
        return Ok(());
    };
    write!(f, "{client} (backend {}): {statement} → {outcome}", session.0)?;
    if *waited_ms > 0 {
        write!(f, " (waited {})", crate::format::seconds(*waited_ms))?;
    }
    Ok(())
}

/// A party's clock after a step or a change of drift.
fn clock_sentence(f: &mut fmt::Formatter<'_>, party: Party, local_ms: i64, drift_ppm: i64) -> fmt::Result {
    write!(f, "{party}: clock now reads {}", crate::format::seconds(local_ms.unsigned_abs()))?;
    if local_ms < 0 {
        f.write_str(" before the origin")?;
    }
    if drift_ppm != 0 {
        write!(f, ", drifting {drift_ppm:+} ppm")?;
    }
    Ok(())
}

/// What replication brought the replica.
fn replicated_sentence(f: &mut fmt::Formatter<'_>, key: Option<LockKey>, counter: i64) -> fmt::Result {
    let node = Party::RedisReplica;
    match key {
        Some(key) => write!(f, "{node}: replication brings {LOCK_KEY} = {}", key.value)?,
        None => write!(f, "{node}: replication brings no {LOCK_KEY}")?,
    }
    write!(f, ", {TOKEN_KEY} = {counter}")
}

/// A database session opened, refused, closed or ended by the server.
fn connection_sentence(
    f: &mut fmt::Formatter<'_>,
    session: SessionId,
    client: DbClient,
    change: ConnectionChange,
) -> fmt::Result {
    let session = session.0;
    match change {
        ConnectionChange::Opened => write!(f, "db: backend {session} opened for {client}"),
        ConnectionChange::Refused => write!(f, "db: {client} refused: too many clients already"),
        ConnectionChange::Closed => write!(f, "db: backend {session} of {client} closed"),
        ConnectionChange::Terminated(reason) => {
            write!(f, "db: backend {session} of {client} terminated ({reason:?}); its transaction rolls back")
        }
    }
}

/// One of other services' queries that had to wait: what it was, how long, why.
fn background_sentence(f: &mut fmt::Formatter<'_>, background: &EventKind) -> fmt::Result {
    let EventKind::Background { what, latency_ms, connection_wait_ms, behind_lock, outcome, .. } = background else {
        return Ok(());
    };
    let statement = match what {
        BackgroundQuery::ForeignKeyInsert => {
            "INSERT INTO job_events … (its foreign-key check takes FOR KEY SHARE on jobs)"
        }
        BackgroundQuery::Read => "SELECT … (a plain read, no row lock)",
    };
    let seconds = crate::format::seconds;
    write!(f, "other service: {statement} → {outcome:?} after {}", seconds(*latency_ms))?;
    if *connection_wait_ms > 0 {
        write!(f, ", {} of it waiting for a connection", seconds(*connection_wait_ms))?;
    }
    if *behind_lock {
        f.write_str(", held up by the jobs row lock")?;
    }
    Ok(())
}

/// The report row a commit (or a write outside a transaction) applied.
fn row_applied_sentence(
    f: &mut fmt::Formatter<'_>,
    period: Period,
    report: ReportOf,
    run: RunId,
    token: Option<Token>,
) -> fmt::Result {
    match report {
        ReportOf::Period(_) => write!(f, "db: report row for period {} now names {run}", period.0)?,
        ReportOf::Day(_) => write!(f, "db: the day's report row now holds period {} by {run}", period.0)?,
    }
    if let Some(token) = token {
        write!(f, " (token {token})")?;
    }
    Ok(())
}

/// A chunk PUT: the object, the token it carried and storage's answer.
fn put_sentence(f: &mut fmt::Formatter<'_>, put: &EventKind) -> fmt::Result {
    let EventKind::Put { instance, run, period, report, chunk, own_object, token, outcome } = put else {
        return Ok(());
    };
    let object = if *own_object {
        format!("reports/{}/{}/chunk-{chunk}", period.0, run.0)
    } else {
        format!("{report}/chunk-{chunk}")
    };
    write!(f, "{instance} → storage: PUT {object}")?;
    if let Some(token) = token {
        write!(f, " token={token}")?;
    }
    match outcome {
        PutOutcome::Accepted => f.write_str(" → 200 OK ✓"),
        PutOutcome::Rejected(highest) => match token {
            Some(token) => write!(f, " → 409 rejected ✗ (stale token {token} < {highest})"),
            None => write!(f, " → 409 rejected ✗ (no token; the report is fenced at {highest})"),
        },
    }
}

impl ProcessState {
    /// What became of the process, for the event's line.
    fn sentence(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProcessState::Running => f.write_str("running"),
            ProcessState::Paused { until_ms } => {
                write!(f, "stop-the-world GC pause until t={}", crate::format::seconds(*until_ms))
            }
            ProcessState::Dead => f.write_str("OOM-killed; the kernel closes its sockets"),
            ProcessState::HostLost => f.write_str("host lost; no FIN is sent"),
            ProcessState::Restarted => f.write_str("restarted as a fresh process"),
        }
    }
}

impl RunPhase {
    /// What the run did, for the event's line.
    fn sentence(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunPhase::Trying => f.write_str("tries to take the lock"),
            RunPhase::Busy => f.write_str("lost the race; will retry"),
            RunPhase::Acquired => f.write_str("believes it holds the lock"),
            RunPhase::Skipped => f.write_str("finds the report already there and skips"),
            RunPhase::Started => f.write_str("starts the job"),
            RunPhase::Finished => f.write_str("finishes the job"),
            RunPhase::Aborted(reason) => write!(f, "stops the job ({})", abort_text(*reason)),
            RunPhase::GaveUp => f.write_str("gives up: the next tick has come"),
            RunPhase::Redelivered(from) => {
                write!(f, "is handed again the job {from} died in, and runs it without taking the lock")
            }
        }
    }
}

/// A reason a run stopped, for people.
pub fn abort_text(reason: AbortReason) -> &'static str {
    match reason {
        AbortReason::RenewalFailed => "its lease renewal was refused: the lock is somebody else's now",
        AbortReason::LeaseExpired => "its lease ran out by its own clock before it could renew",
        AbortReason::WriteRejected => "a fence refused its write",
        AbortReason::WriteFailed => "a storage write got no answer",
        AbortReason::SessionLost => "its database session was gone",
        AbortReason::ProcessDied => "the process died",
        AbortReason::RowWriteFailed => "the report row could not be written",
        AbortReason::NotHolder => "it looked before a write, and the lock was not its own",
        AbortReason::LeaseTooShort => "its own clock said too little of its lease was left for a write",
    }
}

impl fmt::Display for MessageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
