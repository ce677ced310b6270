//! A lock as a recipe (`locklab-recipe/1`, docs/formats.md): the steps a
//! real client performs, each a real command whose semantics the engine's
//! servers model. Where the lock lives, how it is taken, where the token
//! comes from, what the job checks before each write, what the writes carry
//! and who checks it, how the lease is renewed, what happens when it is lost,
//! how it is given back, and how long a loser waits before it tries again.
//!
//! The built-in locks are recipes too (`StrategySettings::recipe`, on the
//! scenario's side). The interpreter that plays a recipe as a strategy
//! (`crate::strategy::recipe_lock`) runs a built-in's recipe exactly as the
//! built-in runs, event for event.
//!
//! This module is the document alone: its types, its defaults (the document
//! `{"format": "locklab-recipe/1"}` is the seed's lock, `SET
//! job:daily-report locked NX EX 300`), how it reads for people
//! ([`Recipe::steps`]), and its
//! validation ([`Recipe::validate`]): a step that does not fit where the lock
//! lives, or a combination that cannot work as written (a fenced write with
//! no token), is refused with the field's path. It names nothing else of the
//! engine, so the scenario, the interpreter and the pages can all read it.

mod describe;
mod read;
mod validate;

pub use describe::Step;
pub use validate::RecipeError;

use serde::{Deserialize, Serialize};

/// The format tag every recipe carries: a recipe keeps the meaning it had
/// when it was written, and a later version would say so here.
pub const RECIPE_FORMAT: &str = "locklab-recipe/1";

/// A lock, step by step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    pub format: String,
    /// A name for people ("SETNX then EXPIRE"); the pages say "yours" without one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Where the lock lives.
    #[serde(default)]
    pub lock: Place,
    /// How it is taken: the command and its TTL.
    #[serde(default)]
    pub take: Take,
    /// Where the fencing token comes from, if anywhere.
    #[serde(default)]
    pub token: TokenSource,
    /// What the job does before each write (a chunk, the Slack post, the report row).
    #[serde(default)]
    pub before_write: Check,
    /// What the writes carry, and which of them is checked against it.
    #[serde(default)]
    pub writes: Writes,
    /// How the lease is kept while the job runs.
    #[serde(default)]
    pub renew: Renewal,
    /// What the job does when it learns the lock is gone.
    #[serde(default)]
    pub on_lost: OnLost,
    /// How the lock is given back when the run ends.
    #[serde(default)]
    pub release: Release,
    /// How long a run that found the lock taken waits before it tries again.
    #[serde(default)]
    pub retry: Retry,
}

impl Default for Recipe {
    /// The seed's lock: `SET job:daily-report locked NX EX 300`, never
    /// renewed, never released, no token.
    fn default() -> Self {
        Recipe {
            format: RECIPE_FORMAT.to_owned(),
            name: String::new(),
            lock: Place::default(),
            take: Take::default(),
            token: TokenSource::default(),
            before_write: Check::default(),
            writes: Writes::default(),
            renew: Renewal::default(),
            on_lost: OnLost::default(),
            release: Release::default(),
            retry: Retry::default(),
        }
    }
}

/// Where the lock lives.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(tag = "on", rename_all = "snake_case")]
pub enum Place {
    /// One Redis node (with its replica, where the world has one): the key
    /// on the primary decides.
    #[default]
    Redis,
    /// `nodes` independent Redis nodes; the lock is the client's when a
    /// majority said yes within its validity time (the Redis page's Redlock).
    RedisMajority {
        #[serde(default = "default_nodes")]
        nodes: u8,
        /// The clock-drift allowance as a share of the TTL: validity = TTL −
        /// elapsed − (drift_factor × TTL + 2 ms).
        #[serde(default = "default_drift_factor")]
        drift_factor: f64,
        /// antirez's delayed restarts: a node that restarts without
        /// persistence stays out for one TTL more.
        #[serde(default = "yes")]
        delayed_restart: bool,
    },
    /// The jobs row, locked in a transaction held for the whole job.
    PostgresRow,
    /// A key in etcd, held by a lease.
    Etcd,
    /// Nowhere: no lock at all.
    Nowhere,
}

fn default_nodes() -> u8 {
    5
}

fn default_drift_factor() -> f64 {
    0.01
}

fn yes() -> bool {
    true
}

/// What a Redis lock's key holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Value {
    /// A value of the run's own (instance and a nonce), so a holder can
    /// tell its lock from another's.
    Own,
    /// The seed's literal `locked`: every instance writes the same.
    Locked,
}

crate::by_name::by_name!(Value { Own = "own", Locked = "locked" });

/// How the lock is taken.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "with", rename_all = "snake_case")]
pub enum Take {
    /// `SET key value NX PX ttl_ms`: one atomic command.
    SetNxPx { value: Value, ttl_ms: u64 },
    /// `SET key value NX EX ttl_s`: the same in whole seconds.
    SetNxEx { value: Value, ttl_s: u64 },
    /// `SETNX key value`, then `EXPIRE key ttl_s`: two round trips, and a
    /// key with no expiry at all between them.
    SetnxThenExpire { value: Value, ttl_s: u64 },
    /// `GET key`, and if it is absent `SET key value PX ttl_ms` (no `NX`):
    /// two round trips, and a race between them.
    GetThenSet { value: Value, ttl_ms: u64 },
    /// `BEGIN; SELECT … FROM jobs WHERE name = 'daily-report' FOR UPDATE`,
    /// the transaction held for the whole job on one pooled connection.
    SelectForUpdate {
        #[serde(default = "for_update")]
        lock_strength: LockStrength,
        #[serde(default = "block")]
        wait: DbWait,
        /// PostgreSQL `lock_timeout`; 0 is off.
        #[serde(default)]
        lock_timeout_ms: u64,
        /// PostgreSQL `idle_in_transaction_session_timeout`; 0 is off.
        #[serde(default)]
        idle_in_transaction_timeout_ms: u64,
    },
    /// An etcd lease of `ttl_ms`, and a transaction that creates the key
    /// with it only if the key is absent.
    LeaseAndCreate { ttl_ms: u64 },
    /// Nothing: every run goes straight to the job.
    Nothing,
}

impl Default for Take {
    fn default() -> Self {
        Take::SetNxEx { value: Value::Locked, ttl_s: 300 }
    }
}

fn for_update() -> LockStrength {
    LockStrength::ForUpdate
}

fn block() -> DbWait {
    DbWait::Block
}

/// The row lock a job takes on its row. Both keep other jobs out; they
/// differ in what else waits (PostgreSQL's conflict table, "Row-Level
/// Locks"): the foreign-key check of an insert referencing the row takes
/// `FOR KEY SHARE`, which conflicts with `FOR UPDATE` only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LockStrength {
    /// `SELECT … FOR UPDATE`, the post's: foreign-key checks on the row wait.
    ForUpdate,
    /// `SELECT … FOR NO KEY UPDATE`: the lock for a job that never changes
    /// the row's key; foreign-key checks pass.
    ForNoKeyUpdate,
}

crate::by_name::by_name!(LockStrength { ForUpdate = "for_update", ForNoKeyUpdate = "for_no_key_update" });

impl LockStrength {
    pub fn is_for_update(&self) -> bool {
        *self == LockStrength::ForUpdate
    }

    /// Its words in SQL.
    pub fn sql(self) -> &'static str {
        match self {
            LockStrength::ForUpdate => "FOR UPDATE",
            LockStrength::ForNoKeyUpdate => "FOR NO KEY UPDATE",
        }
    }
}

/// What `SELECT … FOR UPDATE` does when the row is locked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DbWait {
    Block,
    Nowait,
    SkipLocked,
}

crate::by_name::by_name!(DbWait { Block = "block", Nowait = "nowait", SkipLocked = "skip_locked" });

/// Where the fencing token comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenSource {
    /// No token: the writes carry nothing a resource could check.
    #[default]
    None,
    /// `INCR` of the token counter in the same script as `SET … NX PX`,
    /// only if the lock was taken: the token is tied to the grant.
    IncrInScript,
    /// `INCR` of the token counter as a command of its own, after the lock
    /// is taken: a delayed `INCR` can give an expired holder a higher token
    /// than the new holder's.
    Incr,
    /// The etcd key's creation revision, which never goes back.
    EtcdRevision,
    /// A random number: unique, perhaps, but not ordered, so a resource
    /// that keeps the highest it has seen refuses the wrong writes.
    Random,
}

crate::by_name::by_name!(TokenSource { None = "none", IncrInScript = "incr_in_script", Incr = "incr", EtcdRevision = "etcd_revision", Random = "random" });

/// What the job does before each write.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(tag = "check", rename_all = "snake_case")]
pub enum Check {
    /// Nothing: it writes.
    #[default]
    Nothing,
    /// It writes only if, by its own clock, at least `at_least_ms` of the
    /// lease it last secured is left.
    LeaseTimeLeft { at_least_ms: u64 },
    /// `GET` the key and compare it with its own value; a write goes out
    /// only once the answer says the lock is still its own.
    GetAndCompare,
}

/// What the writes carry and who checks it. Storage checks a token when
/// the world's storage does (`world.storage_checks_tokens`); the report row
/// is checked as `report_row` says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Writes {
    /// Every chunk PUT and the report row carry the run's token.
    pub carry_token: bool,
    pub report_row: ReportRow,
    pub objects: Objects,
}

impl Default for Writes {
    fn default() -> Self {
        Writes { carry_token: false, report_row: ReportRow::Upsert, objects: Objects::Shared }
    }
}

/// How the report row is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportRow {
    /// `INSERT … ON CONFLICT (job, period) DO UPDATE`: the last writer wins.
    Upsert,
    /// The same, but only if the row's token is not higher than the write's.
    FencedUpsert,
    /// `INSERT … ON CONFLICT DO NOTHING RETURNING run`: the first writer
    /// wins, under the unique key (job, period).
    InsertOrNothing,
}

crate::by_name::by_name!(ReportRow { Upsert = "upsert", FencedUpsert = "fenced_upsert", InsertOrNothing = "insert_or_nothing" });

/// Which storage objects a run writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Objects {
    /// The report's objects, which every run rewrites.
    Shared,
    /// Objects of the run's own, which the report row's unique key publishes.
    Own,
}

crate::by_name::by_name!(Objects { Shared = "shared", Own = "own" });

/// How the lease is kept while the job runs. A renewal that gets no
/// answer is tried again every second while the lease it last secured
/// still holds by the holder's clock; one that is refused loses the lock.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "with", rename_all = "snake_case")]
pub enum Renewal {
    /// Never: the TTL is meant to outlast the job.
    #[default]
    None,
    /// The extend script: `PEXPIRE` the key only while it holds the run's value.
    CompareAndPexpire { every_ms: u64 },
    /// A plain `EXPIRE`, which extends whatever key is there.
    Expire { every_ms: u64 },
    /// etcd's lease keep-alive.
    KeepAlive { every_ms: u64 },
}

impl Renewal {
    /// How often it renews, if it does.
    pub fn every_ms(&self) -> Option<u64> {
        match self {
            Renewal::None => None,
            Renewal::CompareAndPexpire { every_ms }
            | Renewal::Expire { every_ms }
            | Renewal::KeepAlive { every_ms } => Some(*every_ms),
        }
    }
}

/// What the job does when it learns the lock is gone: a renewal refused,
/// its lease run out by its own clock, a check before a write that failed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnLost {
    /// It stops the job.
    #[default]
    Stop,
    /// It carries on as if it still held the lock.
    CarryOn,
}

crate::by_name::by_name!(OnLost { Stop = "stop", CarryOn = "carry_on" });

/// How the lock is given back. When it is sent follows where the lock
/// lives, as the built-ins do: on one Redis node, only while the run still
/// holds the lock by its own account (not after it learned it lost it); on
/// a majority, to every node whatever the outcome, after a failed attempt
/// too (the Redis page's "unlock all the instances"); in etcd, unless etcd
/// answered that the lease is gone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Release {
    /// Not at all: the TTL (or the lease) ends it.
    #[default]
    None,
    /// A plain `DEL`, which deletes whatever lock is there.
    Del,
    /// The unlock script: delete the key only while it holds the run's value.
    CompareAndDelete,
    /// `COMMIT`: the report row is written in the lock's transaction, and
    /// the commit ends both.
    Commit,
    /// etcd's lease revoke.
    Revoke,
}

crate::by_name::by_name!(Release { None = "none", Del = "del", CompareAndDelete = "compare_and_delete", Commit = "commit", Revoke = "revoke" });

/// How long a run that found the lock taken waits before it tries again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Retry {
    /// `world.retry_ms`.
    #[default]
    Fixed,
    /// A random delay from half to one and a half times `world.retry_ms`:
    /// the Redis page's "retry after a random delay", so that clients racing
    /// for a majority fall out of step.
    Jittered,
}

crate::by_name::by_name!(Retry { Fixed = "fixed", Jittered = "jittered" });

impl Recipe {
    /// The lease's length, where the lock has one.
    pub fn ttl_ms(&self) -> Option<u64> {
        match self.take {
            Take::SetNxPx { ttl_ms, .. } | Take::GetThenSet { ttl_ms, .. } | Take::LeaseAndCreate { ttl_ms } => {
                Some(ttl_ms)
            }
            Take::SetNxEx { ttl_s, .. } | Take::SetnxThenExpire { ttl_s, .. } => Some(ttl_s.saturating_mul(1_000)),
            Take::SelectForUpdate { .. } | Take::Nothing => None,
        }
    }

    /// What a Redis lock's key holds, where the lock is a Redis key.
    pub fn value(&self) -> Option<Value> {
        match self.take {
            Take::SetNxPx { value, .. }
            | Take::SetNxEx { value, .. }
            | Take::SetnxThenExpire { value, .. }
            | Take::GetThenSet { value, .. } => Some(value),
            Take::SelectForUpdate { .. } | Take::LeaseAndCreate { .. } | Take::Nothing => None,
        }
    }

    /// How many Redis nodes the lock lives on: a majority's, else one.
    pub fn redis_nodes(&self) -> u8 {
        match self.lock {
            Place::RedisMajority { nodes, .. } => nodes,
            Place::Redis | Place::PostgresRow | Place::Etcd | Place::Nowhere => 1,
        }
    }

    /// Whether the recipe takes a lock at all.
    pub fn takes_lock(&self) -> bool {
        self.lock != Place::Nowhere
    }

    /// Where its lock lives, as a fault target names it: what "partition
    /// from the lock" cuts.
    pub fn lock_service(&self) -> &'static str {
        match self.lock {
            Place::Redis | Place::RedisMajority { .. } => "redis",
            Place::PostgresRow | Place::Nowhere => "db",
            Place::Etcd => "consensus",
        }
    }

    /// The recipe in a few words, for a page's title: its name, else its
    /// take and where it lives ("SETNX then EXPIRE on one Redis node").
    pub fn title(&self) -> String {
        if !self.name.is_empty() {
            return self.name.clone();
        }
        let take = match &self.take {
            Take::SetNxPx { ttl_ms, .. } => format!("SET NX PX {ttl_ms}"),
            Take::SetNxEx { ttl_s, .. } => format!("SET NX EX {ttl_s}"),
            Take::SetnxThenExpire { ttl_s, .. } => format!("SETNX then EXPIRE {ttl_s}"),
            Take::GetThenSet { ttl_ms, .. } => format!("GET then SET PX {ttl_ms}"),
            Take::SelectForUpdate { lock_strength, .. } => format!("SELECT … {}", lock_strength.sql()),
            Take::LeaseAndCreate { ttl_ms } => format!("a {ttl_ms} ms lease"),
            Take::Nothing => "no lock".to_owned(),
        };
        let place = match self.lock {
            Place::Redis => " on one Redis node".to_owned(),
            Place::RedisMajority { nodes, .. } => format!(" on a majority of {nodes} Redis nodes"),
            Place::PostgresRow => " on the jobs row".to_owned(),
            Place::Etcd => " in etcd".to_owned(),
            Place::Nowhere => String::new(),
        };
        let token = match self.token {
            TokenSource::None => "",
            TokenSource::IncrInScript => " + INCR token",
            TokenSource::Incr => " + INCR token apart",
            TokenSource::EtcdRevision => " + revision token",
            TokenSource::Random => " + random token",
        };
        format!("Yours: {take}{place}{token}")
    }
}

#[cfg(test)]
mod tests;
