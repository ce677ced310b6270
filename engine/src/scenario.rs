//! The scenario document, `locklab/2` (and `locklab/1`, which keeps loading
//! with the meaning it had; see `docs/formats.md`): what the CLI reads, what a
//! share link encodes, what a quiz card is made of.
//!
//! Every field but `format` has a default and unknown fields are refused with
//! their path, so a typo never silently becomes a default. A few optional
//! fields extend the format: `description` (prose for people), `expect` (the
//! outcome per strategy that the built-in table test checks), `quiz`, and
//! `world.redeliver_after_crash` (an at-least-once job runner).

use crate::format::seconds;
use crate::ids::{MAX_INSTANCES, MAX_REDIS_NODES, Party, Period, RedisNodeId, ReportOf};
use crate::table::Table;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The format tag new scenarios carry.
pub const FORMAT: &str = "locklab/2";

/// The largest scenario document read (a file in the CLI or the lab): a
/// thousand faults fit many times over, and a larger file is refused before
/// it is read.
pub const MAX_DOCUMENT_BYTES: u64 = 4 * 1024 * 1024;

/// The first version of the format, still read with its own defaults: every
/// period writes its own report (`world.output: "per_period"`).
pub const FORMAT_V1: &str = "locklab/1";
/// Longest simulated run accepted: 24 hours.
pub const MAX_DURATION_MS: u64 = 24 * 60 * 60 * 1000;
/// Most faults one scenario may hold.
pub const MAX_FAULTS: usize = 1000;

/// A whole scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub format: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub seed: u64,
    /// Simulated time to run; absent means three cron periods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(default = "default_clock_origin")]
    pub clock_origin: String,
    #[serde(default)]
    pub world: World,
    /// Which strategies to run; absent means all six with defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategies: Option<Strategies>,
    #[serde(default, deserialize_with = "deserialize_faults")]
    pub faults: Vec<Fault>,
    /// The outcome each strategy is expected to reach (an extension), in
    /// strategy order: the engine's small map, which every page carries
    /// anyway, where a `BTreeMap` brought a B-tree of its own.
    #[serde(default, skip_serializing_if = "Table::is_empty")]
    pub expect: Table<StrategyId, Expectation>,
    /// What `description` says about the run under each strategy named, in
    /// the claims of `crate::claim`: `{"naive": ["grant#1@b", …]}` (an
    /// extension). Only the built-ins' texts test reads them, from the
    /// document itself, holding the text to its claims and the claims to the
    /// runs; the engine accepts and drops them, so no page carries them.
    #[serde(default, skip_serializing)]
    pub claims: serde::de::IgnoredAny,
    /// The quiz card built on this scenario (an extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiz: Option<crate::quiz::Quiz>,
}

fn default_clock_origin() -> String {
    "02:00:00".to_owned()
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            format: FORMAT.to_owned(),
            name: String::new(),
            description: None,
            seed: 0,
            duration_ms: None,
            clock_origin: default_clock_origin(),
            world: World::default(),
            strategies: None,
            faults: Vec::new(),
            expect: Table::new(),
            claims: serde::de::IgnoredAny,
            quiz: None,
        }
    }
}

/// The world the job runs in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct World {
    pub instances: u8,
    pub cron_period_ms: u64,
    pub cron_jitter_ms: u64,
    pub job_ms: u64,
    pub report_chunks: u8,
    pub retry_ms: u64,
    #[serde(deserialize_with = "deserialize_latency")]
    pub network_latency_ms: [u64; 2],
    pub db_pool_size: u8,
    pub db_max_connections: u16,
    /// Other services' queries on the jobs database, per second.
    pub background_queries_per_s: u32,
    /// Of those, the percentage that insert a row referencing the jobs row
    /// (`job_events`): the foreign-key check takes `FOR KEY SHARE` on it,
    /// which waits behind `FOR UPDATE` and not behind `FOR NO KEY UPDATE`
    /// (PostgreSQL's row-level lock conflicts). The rest are plain reads,
    /// which take no row lock and wait for nothing but a connection. The mix
    /// is a modelling choice, the scenario's to set: the default is one in five.
    /// (Left out of a document at its default, as the two below are: a share
    /// link made before they existed encodes the same.)
    #[serde(skip_serializing_if = "is_default_foreign_key_percent")]
    pub background_foreign_key_percent: u8,
    /// The other services' own connection pool (HikariCP's default `maximumPoolSize`).
    #[serde(skip_serializing_if = "is_default_background_pool_size")]
    pub background_pool_size: u8,
    /// How long another service waits for its query (a connection, the row
    /// lock, the statement) before it gives up; 0 waits for ever, as
    /// PostgreSQL's defaults do (`lock_timeout = 0`, `statement_timeout = 0`).
    #[serde(skip_serializing_if = "is_zero")]
    pub background_timeout_ms: u64,
    pub tcp_keepalive_ms: u64,
    /// What every period's run writes; absent means the format version's
    /// default (see [`Scenario::output`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Output>,
    pub storage_checks_tokens: bool,
    pub redis_replica: bool,
    pub replication_lag_ms: u64,
    pub failover_ms: u64,
    /// An at-least-once job runner (an extension): the job a process died in
    /// is handed again to that instance when it restarts, and the worker runs
    /// it without taking the lock again, because the lock was taken when the
    /// job was first handed out. This is how "B's pod restarted and it's ALSO
    /// trying to run it" happens in real deployments: `SET NX` alone would
    /// give the restarted process `(nil)`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub redeliver_after_crash: bool,
}

/// What the job writes each period.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Output {
    /// Every period's run rewrites the one report of the day: the same chunk
    /// objects, the same row, the same Slack channel (`generate-daily-report`).
    Daily,
    /// Every period writes a report of its own.
    PerPeriod,
}

impl Default for World {
    fn default() -> Self {
        World {
            instances: 3,
            cron_period_ms: 300_000,
            cron_jitter_ms: 200,
            job_ms: 90_000,
            report_chunks: 4,
            retry_ms: 10_000,
            network_latency_ms: [1, 5],
            db_pool_size: 5,
            db_max_connections: 20,
            background_queries_per_s: 5,
            background_foreign_key_percent: 20,
            background_pool_size: 10,
            background_timeout_ms: 0,
            // Linux defaults: 7200 s idle + 9 probes × 75 s.
            tcp_keepalive_ms: 7_875_000,
            output: None,
            storage_checks_tokens: true,
            redis_replica: false,
            replication_lag_ms: 50,
            failover_ms: 5_000,
            redeliver_after_crash: false,
        }
    }
}

/// Declares the strategies once: the enum, and [`StrategyId::ALL`] in the
/// order they are declared, so a new strategy is run and reported without
/// a second list to forget.
macro_rules! strategy_ids {
    ($( $variant:ident ),* $(,)?) => {
        /// The strategies, in the fixed order they are run and reported.
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
        pub enum StrategyId {
            $( $variant ),*
        }

        impl StrategyId {
            /// Every strategy, in the order they are run and reported.
            pub const ALL: [StrategyId; [$( stringify!($variant) ),*].len()] = [$( StrategyId::$variant ),*];
        }
    };
}

strategy_ids! { Naive, Fencing, Redlock, DbLock, UniqueInsert, Consensus }

impl StrategyId {
    /// The id scenario files and the CLI use.
    pub fn name(self) -> &'static str {
        match self {
            StrategyId::Naive => "naive",
            StrategyId::Fencing => "fencing",
            StrategyId::Redlock => "redlock",
            StrategyId::DbLock => "db-lock",
            StrategyId::UniqueInsert => "unique-insert",
            StrategyId::Consensus => "consensus",
        }
    }

    pub fn parse(name: &str) -> Option<StrategyId> {
        StrategyId::ALL.into_iter().find(|id| id.name() == name)
    }

    /// The quiz letter of the seed's question, where the strategy is one of its options.
    pub fn quiz_letter(self) -> Option<char> {
        match self {
            StrategyId::Fencing => Some('A'),
            StrategyId::Redlock => Some('B'),
            StrategyId::DbLock => Some('C'),
            StrategyId::UniqueInsert => Some('D'),
            StrategyId::Naive | StrategyId::Consensus => None,
        }
    }

    /// The strategies in the order the lab's picker shows them: the quiz's
    /// options A–D, then the naive baseline and the consensus lease. Sized
    /// by [`StrategyId::ALL`], so a new strategy must be placed here.
    pub const PICKER_ORDER: [StrategyId; StrategyId::ALL.len()] = [
        StrategyId::Fencing,
        StrategyId::Redlock,
        StrategyId::DbLock,
        StrategyId::UniqueInsert,
        StrategyId::Naive,
        StrategyId::Consensus,
    ];

    /// The mark beside its name in the picker: its quiz letter, `0` for the
    /// seed's own lock, `∗` for one the post does not offer.
    pub fn badge(self) -> char {
        match self {
            StrategyId::Naive => '0',
            StrategyId::Consensus => '∗',
            StrategyId::Fencing | StrategyId::Redlock | StrategyId::DbLock | StrategyId::UniqueInsert => {
                self.quiz_letter().unwrap_or('∗')
            }
        }
    }

    /// Its name in a few words, for the picker.
    pub fn short_title(self) -> &'static str {
        match self {
            StrategyId::Fencing => "Fencing token",
            StrategyId::Redlock => "Redlock",
            StrategyId::DbLock => "SELECT FOR UPDATE",
            StrategyId::UniqueInsert => "Unique key, no lock",
            StrategyId::Naive => "Naive baseline",
            StrategyId::Consensus => "Consensus lease",
        }
    }

    /// `title` labelled as the lab shows a strategy: "A · …" for a quiz
    /// option, "Baseline · …" for the seed's lock, else the title alone.
    pub fn labelled(self, title: &str) -> String {
        match (self, self.quiz_letter()) {
            (_, Some(letter)) => format!("{letter} · {title}"),
            (StrategyId::Naive, None) => format!("Baseline · {title}"),
            (
                StrategyId::Fencing
                | StrategyId::Redlock
                | StrategyId::DbLock
                | StrategyId::UniqueInsert
                | StrategyId::Consensus,
                None,
            ) => title.to_owned(),
        }
    }

    /// Where its lock lives, as a fault target names it: what "partition
    /// from the lock" cuts.
    pub fn lock_service(self) -> &'static str {
        match self {
            StrategyId::Naive | StrategyId::Fencing | StrategyId::Redlock => "redis",
            StrategyId::DbLock | StrategyId::UniqueInsert => "db",
            StrategyId::Consensus => "consensus",
        }
    }

    /// A short name for people.
    pub fn title(self) -> &'static str {
        match self {
            StrategyId::Naive => "SET NX EX 300 (the seed's lock)",
            StrategyId::Fencing => "SET NX + short TTL + fencing token",
            StrategyId::Redlock => "Redlock over 5 Redis nodes",
            StrategyId::DbLock => "SELECT … FOR UPDATE on the jobs row",
            StrategyId::UniqueInsert => "No lock, unique key on the result row",
            StrategyId::Consensus => "Consensus lease (etcd/ZooKeeper-style)",
        }
    }
}

impl fmt::Display for StrategyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for StrategyId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for StrategyId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::ids::deserialize_name(deserializer, |name| {
            StrategyId::parse(name).ok_or_else(|| {
                format!("unknown strategy `{name}`, expected one of naive, fencing, redlock, db-lock, unique-insert, consensus")
            })
        })
    }
}

/// Which strategies run, each with its settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Strategies {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub naive: Option<NaiveSettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fencing: Option<LeaseSettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redlock: Option<RedlockSettings>,
    #[serde(default, rename = "db-lock", skip_serializing_if = "Option::is_none")]
    pub db_lock: Option<DbLockSettings>,
    #[serde(default, rename = "unique-insert", skip_serializing_if = "Option::is_none")]
    pub unique_insert: Option<UniqueInsertSettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consensus: Option<LeaseSettings>,
}

/// The settings of one strategy, resolved.
#[derive(Clone, Debug, PartialEq)]
pub enum StrategySettings {
    Naive(NaiveSettings),
    Fencing(LeaseSettings),
    Redlock(RedlockSettings),
    DbLock(DbLockSettings),
    UniqueInsert,
    Consensus(LeaseSettings),
}

impl StrategySettings {
    /// How many Redis nodes the strategy's lock lives on: Redlock's, else one.
    pub fn redis_nodes(&self) -> u8 {
        match self {
            StrategySettings::Redlock(redlock) => redlock.nodes,
            StrategySettings::Naive(_)
            | StrategySettings::Fencing(_)
            | StrategySettings::DbLock(_)
            | StrategySettings::UniqueInsert
            | StrategySettings::Consensus(_) => 1,
        }
    }

    /// The parties that hold its lock in `world`: Redlock's nodes, the one
    /// Redis node (and its replica, where the world has one), the consensus
    /// store, or none where the lock is the database's or there is none.
    pub fn lock_parties(&self, world: &World) -> Vec<Party> {
        match self {
            StrategySettings::Redlock(redlock) => {
                (0..redlock.nodes).map(|node| Party::Redis(RedisNodeId(node))).collect()
            }
            StrategySettings::Naive(_) | StrategySettings::Fencing(_) => {
                let mut parties = vec![Party::Redis(RedisNodeId(0))];
                if world.redis_replica {
                    parties.push(Party::RedisReplica);
                }
                parties
            }
            StrategySettings::Consensus(_) => vec![Party::Consensus],
            StrategySettings::DbLock(_) | StrategySettings::UniqueInsert => Vec::new(),
        }
    }

    /// Its settings as a scenario writes them; `None` for a strategy that
    /// has none.
    pub fn to_json(&self) -> Option<String> {
        match self {
            StrategySettings::Naive(naive) => serde_json::to_string(naive).ok(),
            StrategySettings::Fencing(lease) | StrategySettings::Consensus(lease) => serde_json::to_string(lease).ok(),
            StrategySettings::Redlock(redlock) => serde_json::to_string(redlock).ok(),
            StrategySettings::DbLock(db_lock) => serde_json::to_string(db_lock).ok(),
            StrategySettings::UniqueInsert => None,
        }
    }

    pub fn id(&self) -> StrategyId {
        match self {
            StrategySettings::Naive(_) => StrategyId::Naive,
            StrategySettings::Fencing(_) => StrategyId::Fencing,
            StrategySettings::Redlock(_) => StrategyId::Redlock,
            StrategySettings::DbLock(_) => StrategyId::DbLock,
            StrategySettings::UniqueInsert => StrategyId::UniqueInsert,
            StrategySettings::Consensus(_) => StrategyId::Consensus,
        }
    }

    /// A short name for people that says how these settings differ from the
    /// seed's where the name would otherwise mislead: the naive lock's TTL
    /// and release (`SET NX EX 100`, not the seed's `EX 300`), Redlock's node
    /// count. Anything else reads as [`StrategyId::title`].
    pub fn title(&self) -> String {
        match self {
            StrategySettings::Naive(naive) if *naive != NaiveSettings::default() => {
                let ttl = if naive.ttl_ms.is_multiple_of(1_000) {
                    format!("EX {}", naive.ttl_ms / 1_000)
                } else {
                    format!("PX {}", naive.ttl_ms)
                };
                let release = match naive.release {
                    NaiveRelease::Never => "",
                    NaiveRelease::Del => ", released with a plain DEL",
                    NaiveRelease::CompareAndDelete => ", released by compare-and-delete",
                };
                format!("SET NX {ttl}{release}")
            }
            StrategySettings::Redlock(redlock) if redlock.nodes != RedlockSettings::default().nodes => {
                format!("Redlock over {} Redis nodes", redlock.nodes)
            }
            settings @ StrategySettings::Naive(_)
            | settings @ StrategySettings::Fencing(_)
            | settings @ StrategySettings::Redlock(_)
            | settings @ StrategySettings::DbLock(_)
            | settings @ StrategySettings::UniqueInsert
            | settings @ StrategySettings::Consensus(_) => settings.id().title().to_owned(),
        }
    }

    /// Default settings of a strategy.
    pub fn default_for(id: StrategyId) -> StrategySettings {
        match id {
            StrategyId::Naive => StrategySettings::Naive(NaiveSettings::default()),
            StrategyId::Fencing => StrategySettings::Fencing(LeaseSettings::default()),
            StrategyId::Redlock => StrategySettings::Redlock(RedlockSettings::default()),
            StrategyId::DbLock => StrategySettings::DbLock(DbLockSettings::default()),
            StrategyId::UniqueInsert => StrategySettings::UniqueInsert,
            StrategyId::Consensus => StrategySettings::Consensus(LeaseSettings::default()),
        }
    }
}

/// `naive`: the seed's `SET … NX EX 300`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NaiveSettings {
    pub ttl_ms: u64,
    pub release: NaiveRelease,
}

impl Default for NaiveSettings {
    fn default() -> Self {
        NaiveSettings { ttl_ms: 300_000, release: NaiveRelease::Never }
    }
}

/// How the naive lock is given back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NaiveRelease {
    /// Never: the TTL does it (the seed).
    Never,
    /// A plain `DEL`, which can delete somebody else's lock.
    Del,
    /// The Redis page's release: each run writes a value of its own and an
    /// unlock script deletes the key only while it still holds that value.
    CompareAndDelete,
}

/// A renewed lease: `fencing` and `consensus`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LeaseSettings {
    pub ttl_ms: u64,
    pub renew_every_ms: u64,
}

impl Default for LeaseSettings {
    fn default() -> Self {
        LeaseSettings { ttl_ms: 30_000, renew_every_ms: 10_000 }
    }
}

/// `redlock`: the Redis documentation's algorithm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedlockSettings {
    pub ttl_ms: u64,
    pub renew_every_ms: u64,
    pub nodes: u8,
    /// The clock-drift allowance, as a share of the TTL: validity = TTL −
    /// elapsed − (drift_factor × TTL + 2 ms). The Redis page asks only for
    /// "a few milliseconds"; this arithmetic is its reference
    /// implementations' (redlock-rb, redlock-py).
    pub drift_factor: f64,
    /// antirez's "delayed restarts" (an extension): a node that restarts
    /// without persistence stays unavailable for one TTL more, so that no
    /// lock it forgot can still be valid somewhere when it takes new ones.
    /// The Redis page makes this (or `fsync=always`) part of the algorithm,
    /// so it is the default; `false` is the forgetful restart a scenario
    /// names to show why.
    #[serde(skip_serializing_if = "is_true")]
    pub delayed_restart: bool,
}

impl Default for RedlockSettings {
    fn default() -> Self {
        RedlockSettings { ttl_ms: 30_000, renew_every_ms: 10_000, nodes: 5, drift_factor: 0.01, delayed_restart: true }
    }
}

/// `db-lock`: `SELECT … FOR UPDATE` held for the whole job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DbLockSettings {
    /// Which row lock the job takes on its row (left out at its default).
    #[serde(skip_serializing_if = "LockStrength::is_for_update")]
    pub lock_strength: LockStrength,
    pub wait: DbWait,
    /// PostgreSQL `lock_timeout`; 0 is off.
    pub lock_timeout_ms: u64,
    /// PostgreSQL `idle_in_transaction_session_timeout`; 0 is off.
    pub idle_in_transaction_timeout_ms: u64,
}

impl Default for DbLockSettings {
    fn default() -> Self {
        DbLockSettings {
            lock_strength: LockStrength::ForUpdate,
            wait: DbWait::Block,
            lock_timeout_ms: 0,
            idle_in_transaction_timeout_ms: 0,
        }
    }
}

/// The row lock a db-lock job takes on its row. Both keep other jobs out;
/// they differ in what else waits (PostgreSQL's conflict table, "Row-Level
/// Locks"): the foreign-key check of an insert referencing the row takes
/// `FOR KEY SHARE`, which conflicts with `FOR UPDATE` only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LockStrength {
    /// `SELECT … FOR UPDATE`, the post's: foreign-key checks on the row wait.
    ForUpdate,
    /// `SELECT … FOR NO KEY UPDATE`: the lock for a job that never changes
    /// the row's key; foreign-key checks pass.
    ForNoKeyUpdate,
}

impl LockStrength {
    fn is_for_update(&self) -> bool {
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DbWait {
    Block,
    Nowait,
    SkipLocked,
}

/// `unique-insert` has no settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UniqueInsertSettings {}

/// Something a fault is aimed at: one party, every Redis node, or whoever holds the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Party(Party),
    /// `redis`: every Redis node at once.
    AllRedis,
    /// `holder`: the instance holding the lock when the fault strikes.
    Holder,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Party(party) => write!(f, "{party}"),
            Target::AllRedis => f.write_str("redis"),
            Target::Holder => f.write_str("holder"),
        }
    }
}

impl Serialize for Target {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl Target {
    /// A target by the name a scenario gives it: `holder`, `redis` (every
    /// Redis node) or a party's name.
    pub fn parse(name: &str) -> Option<Target> {
        match name {
            "redis" => Some(Target::AllRedis),
            "holder" => Some(Target::Holder),
            _ => Party::parse(name).map(Target::Party),
        }
    }
}

impl<'de> Deserialize<'de> for Target {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::ids::deserialize_name(deserializer, |name| Target::parse(name).ok_or_else(|| unknown_target(name)))
    }
}

/// The error of a fault's target that names no party.
fn unknown_target(name: &str) -> String {
    format!(
        "unknown party `{name}`, expected an instance a…h, redis-1…redis-5, redis-1-replica, redis, db, storage, slack, consensus or holder"
    )
}

/// Defines the fault variants once and derives from that list the contract's
/// `{"kind": "gc_pause", …}` form (written by serde), each kind's fields
/// ([`Fault::fields`], [`Fault::with_field`], [`FAULT_FIELDS`]), through which
/// a fault is read field by field so an error names `faults[2].duration_ms`,
/// not just `faults[2]` (serde buffers internally tagged enums and loses the
/// field), and, for the tests, the by-kind form serde's derive read them in.
macro_rules! faults {
    ($( $(#[$meta:meta])* $variant:ident { $( $(#[$field_meta:meta])* $field:ident : $kind:ty ),* $(,)? } ),* $(,)?) => {
        /// A fault: data appended to a scenario, applied at `at_ms`.
        #[derive(Clone, Debug, PartialEq, Serialize)]
        #[serde(tag = "kind", rename_all = "snake_case")]
        pub enum Fault {
            $( $(#[$meta])* $variant { $( $(#[$field_meta])* $field: $kind ),* } ),*
        }

        /// The fault read by serde's derive, field by field, from a map of
        /// its fields under its kind: how faults were read before
        /// [`RawValue`]; kept for the test that holds the reader to it.
        #[cfg(test)]
        #[derive(Deserialize)]
        #[serde(rename_all = "snake_case", deny_unknown_fields)]
        enum FaultByKind {
            $( $variant { $( $(#[$field_meta])* $field: $kind ),* } ),*
        }

        /// How many fault kinds there are: [`FAULT_KINDS`]'s length, so a
        /// kind added here and not listed there fails to compile.
        const FAULT_KIND_COUNT: usize = [$( stringify!($variant) ),*].len();

        /// Each kind's fields, in the order it declares them, by the kind's
        /// place in [`FAULT_KINDS`]: what an unknown field's error lists.
        const FAULT_FIELDS: [&[&str]; FAULT_KIND_COUNT] = [$( &[$( stringify!($field) ),*] ),*];

        /// The variants as written, in order, for the test that holds
        /// [`FAULT_KINDS`] to them.
        #[cfg(test)]
        const FAULT_VARIANTS: [&str; FAULT_KIND_COUNT] = [$( stringify!($variant) ),*];

        impl Fault {
            /// The fields of this fault besides `kind`, in the order its kind
            /// declares them (`at_ms` first), each with its value: what the
            /// lab's fault script edits, so a new kind's fields reach it from
            /// this list alone.
            pub fn fields(&self) -> Vec<(&'static str, FieldValue)> {
                match self {
                    $( Fault::$variant { $( $field ),* } => vec![$( (stringify!($field), FaultField::value($field)) ),*] ),*
                }
            }

            /// This fault with its field `name` set to `value`; `None` when
            /// the kind has no such field or the value is of another type.
            /// Ranges are the scenario's validation's to check.
            pub fn with_field(&self, name: &str, value: FieldValue) -> Option<Fault> {
                let mut fault = self.clone();
                match &mut fault {
                    $( Fault::$variant { $( $field ),* } => {
                        $( if name == stringify!($field) {
                            *$field = FaultField::from_value(value)?;
                            return Some(fault);
                        } )*
                        None
                    } ),*
                }
            }
        }

        #[cfg(test)]
        impl From<FaultByKind> for Fault {
            fn from(fault: FaultByKind) -> Fault {
                match fault {
                    $( FaultByKind::$variant { $( $field ),* } => Fault::$variant { $( $field ),* } ),*
                }
            }
        }


        /// The field of a `kind` fault an error was about, as found before
        /// [`RawValue`]: kept for the test that holds [`faulty_field`] to it.
        #[cfg(test)]
        fn derived_faulty_field(kind: &str, fields: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
            type Reads = fn(&serde_json::Value) -> bool;
            let kinds: &[(&str, &[(&str, Reads)])] = &[
                $( (stringify!($variant), &[$( (stringify!($field), reads_as::<$kind>) ),*]) ),*
            ];
            let (_, known) = kinds.iter().find(|(variant, _)| snake_case(variant) == kind)?;
            if let Some(unknown) = fields.keys().find(|key| !known.iter().any(|(field, _)| field == key)) {
                return Some(unmarked(unknown));
            }
            known
                .iter()
                .find(|(field, reads)| fields.get(*field).is_some_and(|value| !reads(value)))
                .map(|(field, _)| (*field).to_owned())
        }
    };
}

/// A fault field's value, by the type the field has: what an editor shows
/// and reads back. Every field type of [`Fault`] is one of these
/// ([`FaultField`]), so a new kind needs none.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FieldValue {
    /// Milliseconds (a time, a duration).
    Ms(u64),
    /// Milliseconds, or none (a restart that never comes).
    OptionalMs(Option<u64>),
    /// A signed whole number (a clock's jump, a drift in ppm).
    Signed(i64),
    /// A decimal (a slow-down factor).
    Decimal(f64),
    Flag(bool),
    Party(Target),
    /// Two parties (a partition's sides).
    Parties([Target; 2]),
}

impl FieldValue {
    /// The value of a field a document leaves out, for the types whose
    /// fields may be left out (`#[serde(default)]` in the `faults!` list): no
    /// restart, not one-way. The test of the fault reader holds this to
    /// serde's derive.
    fn when_absent(self) -> Option<FieldValue> {
        match self {
            FieldValue::OptionalMs(_) => Some(FieldValue::OptionalMs(None)),
            FieldValue::Flag(_) => Some(FieldValue::Flag(false)),
            FieldValue::Ms(_)
            | FieldValue::Signed(_)
            | FieldValue::Decimal(_)
            | FieldValue::Party(_)
            | FieldValue::Parties(_) => None,
        }
    }
}

/// A type a fault's field can have, and how it is a [`FieldValue`].
pub trait FaultField: Sized {
    fn value(&self) -> FieldValue;
    fn from_value(value: FieldValue) -> Option<Self>;
}

/// Implements [`FaultField`] for a type held by one [`FieldValue`] variant.
macro_rules! fault_field {
    ($( $type:ty => $variant:ident ),* $(,)?) => {
        $( impl FaultField for $type {
            fn value(&self) -> FieldValue {
                FieldValue::$variant(*self)
            }
            fn from_value(value: FieldValue) -> Option<Self> {
                // Only this type's own variant carries it.
                if let FieldValue::$variant(inner) = value { Some(inner) } else { None }
            }
        } )*
    };
}

fault_field! {
    u64 => Ms,
    Option<u64> => OptionalMs,
    i64 => Signed,
    f64 => Decimal,
    bool => Flag,
    Target => Party,
    [Target; 2] => Parties,
}

/// Whether a JSON value reads as a `T`.
#[cfg(test)]
fn reads_as<T: serde::de::DeserializeOwned>(value: &serde_json::Value) -> bool {
    serde_json::from_value::<T>(value.clone()).is_ok()
}

/// `GcPause` → `gc_pause`, as serde's `rename_all = "snake_case"` spells it.
#[cfg(test)]
fn snake_case(name: &str) -> String {
    let mut snake = String::new();
    for character in name.chars() {
        if character.is_ascii_uppercase() && !snake.is_empty() {
            snake.push('_');
        }
        snake.push(character.to_ascii_lowercase());
    }
    snake
}

faults! {
    OomKill {
        at_ms: u64,
        target: Target,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        restart_after_ms: Option<u64>,
    },
    HostLoss {
        at_ms: u64,
        target: Target,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        restart_after_ms: Option<u64>,
    },
    GcPause { at_ms: u64, target: Target, duration_ms: u64 },
    ClockJump { at_ms: u64, target: Target, by_ms: i64 },
    ClockDrift { at_ms: u64, target: Target, ppm: i64 },
    NetworkDelay { at_ms: u64, from: Target, to: Target, extra_ms: u64, duration_ms: u64 },
    Partition {
        at_ms: u64,
        between: [Target; 2],
        duration_ms: u64,
        #[serde(default, skip_serializing_if = "is_false")]
        one_way: bool,
    },
    RedisRestart { at_ms: u64, target: Target, down_ms: u64 },
    RedisFailover { at_ms: u64, target: Target },
    ConsensusLeaderLoss { at_ms: u64 },
    DbSlow { at_ms: u64, factor: f64, duration_ms: u64 },
}

/// Every fault kind as the format names it, in the order the lab's fault
/// script and the explorer offer them: the one list of kinds. Its length is
/// the `faults!` list's, and a test holds its names to the variants'.
pub const FAULT_KINDS: [&str; FAULT_KIND_COUNT] = [
    "oom_kill",
    "host_loss",
    "gc_pause",
    "clock_jump",
    "clock_drift",
    "network_delay",
    "partition",
    "redis_restart",
    "redis_failover",
    "consensus_leader_loss",
    "db_slow",
];

/// Separates a field path from its message inside a custom error, so that
/// [`Scenario::from_json`] can report it. serde_json places an error raised
/// after a fault was read (a fault is read whole, then dispatched on its
/// `kind`) wherever its reader had got to, so a fault's errors carry their
/// own path, `faults[i].field`, ahead of this mark.
pub(crate) const FIELD_MARK: char = '\u{1f}';

/// Reads the fault list, counting, so that an error names its fault.
fn deserialize_faults<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Fault>, D::Error> {
    struct Faults;
    impl<'de> serde::de::Visitor<'de> for Faults {
        type Value = Vec<Fault>;
        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("a list of faults")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut sequence: A) -> Result<Vec<Fault>, A::Error> {
            use serde::de::Error;
            let mut faults = Vec::new();
            loop {
                let index = faults.len();
                match sequence.next_element::<Fault>() {
                    Ok(Some(fault)) => faults.push(fault),
                    Ok(None) => return Ok(faults),
                    Err(error) => {
                        let text = error.to_string();
                        // Errors without the mark are the parser's own and carry their position.
                        return Err(match text.split_once(FIELD_MARK) {
                            Some((field, message)) => {
                                A::Error::custom(format!("faults[{index}]{field}{FIELD_MARK}{message}"))
                            }
                            None => error,
                        });
                    }
                }
            }
        }
    }
    deserializer.deserialize_seq(Faults)
}

impl<'de> Deserialize<'de> for Fault {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        // In key order: fields are read in the order serde read them from the
        // JSON map (ordered by key) this reader replaces, so the first error
        // is the same.
        let mut fields = FaultObject::deserialize(deserializer)?.0;
        let kind = match fields.iter().position(|(key, _)| key == "kind").map(|index| fields.remove(index).1) {
            Some(RawValue::Text(kind)) => kind,
            Some(other) => {
                return Err(D::Error::custom(format!(".kind{FIELD_MARK}must be a string, found {}", other.to_json())));
            }
            None => return Err(D::Error::custom(format!("{FIELD_MARK}missing field `kind`"))),
        };
        read_fault::<D::Error>(&kind, &fields).map_err(|error| {
            let field = faulty_field::<D::Error>(&kind, &fields).map(|field| format!(".{field}")).unwrap_or_default();
            D::Error::custom(format!("{field}{FIELD_MARK}{error}"))
        })
    }
}

/// A value in a fault's object as read, before its kind says what type each
/// field has: what a `serde_json::Value` holds, without the JSON map (a
/// B-tree) behind it, which no page then carries. A number reads as
/// `serde_json` reads one: a whole number not below zero is unsigned.
#[derive(Debug)]
enum RawValue {
    Null,
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Text(String),
    List(Vec<RawValue>),
    /// Entries in key order, each key once with its last value, as a
    /// `serde_json::Value` keeps an object (only ever written in an error).
    Object(Vec<(String, RawValue)>),
}

impl RawValue {
    /// What serde's errors call this value, as `serde_json::Value` names it.
    fn unexpected(&self) -> serde::de::Unexpected<'_> {
        use serde::de::Unexpected;
        match self {
            RawValue::Null => Unexpected::Unit,
            RawValue::Bool(value) => Unexpected::Bool(*value),
            RawValue::Unsigned(value) => Unexpected::Unsigned(*value),
            RawValue::Signed(value) => Unexpected::Signed(*value),
            RawValue::Float(value) => Unexpected::Float(*value),
            RawValue::Text(text) => Unexpected::Str(text),
            RawValue::List(_) => Unexpected::Seq,
            RawValue::Object(_) => Unexpected::Map,
        }
    }

    /// The value as compact JSON, as a `serde_json::Value` displays itself.
    fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl Serialize for RawValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RawValue::Null => serializer.serialize_unit(),
            RawValue::Bool(value) => serializer.serialize_bool(*value),
            RawValue::Unsigned(value) => serializer.serialize_u64(*value),
            RawValue::Signed(value) => serializer.serialize_i64(*value),
            RawValue::Float(value) => serializer.serialize_f64(*value),
            RawValue::Text(text) => serializer.serialize_str(text),
            RawValue::List(items) => serializer.collect_seq(items),
            RawValue::Object(entries) => serializer.collect_map(entries.iter().map(|(key, value)| (key, value))),
        }
    }
}

impl<'de> Deserialize<'de> for RawValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = RawValue;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("any valid JSON value")
            }
            fn visit_bool<E>(self, value: bool) -> Result<RawValue, E> {
                Ok(RawValue::Bool(value))
            }
            fn visit_i64<E>(self, value: i64) -> Result<RawValue, E> {
                Ok(u64::try_from(value).map_or(RawValue::Signed(value), RawValue::Unsigned))
            }
            fn visit_u64<E>(self, value: u64) -> Result<RawValue, E> {
                Ok(RawValue::Unsigned(value))
            }
            fn visit_f64<E>(self, value: f64) -> Result<RawValue, E> {
                // JSON has no infinity: serde_json keeps one as null.
                Ok(if value.is_finite() { RawValue::Float(value) } else { RawValue::Null })
            }
            fn visit_str<E>(self, value: &str) -> Result<RawValue, E> {
                Ok(RawValue::Text(value.to_owned()))
            }
            fn visit_string<E>(self, value: String) -> Result<RawValue, E> {
                Ok(RawValue::Text(value))
            }
            fn visit_unit<E>(self) -> Result<RawValue, E> {
                Ok(RawValue::Null)
            }
            fn visit_none<E>(self) -> Result<RawValue, E> {
                Ok(RawValue::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<RawValue, D::Error> {
                RawValue::deserialize(deserializer)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut sequence: A) -> Result<RawValue, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = sequence.next_element()? {
                    items.push(item);
                }
                Ok(RawValue::List(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<RawValue, A::Error> {
                let mut entries: Vec<(String, RawValue)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, RawValue>()? {
                    match entries.binary_search_by(|(known, _)| known.as_str().cmp(&key)) {
                        Ok(index) => entries[index].1 = value,
                        Err(index) => entries.insert(index, (key, value)),
                    }
                }
                Ok(RawValue::Object(entries))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// A fault's fields as read, in key order, refusing a key given
/// twice (a JSON map keeps the last one silently, and a typo's twin must not
/// win unseen).
struct FaultObject(Vec<(String, RawValue)>);

impl<'de> Deserialize<'de> for FaultObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = FaultObject;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a fault, as an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<FaultObject, A::Error> {
                use serde::de::Error;
                let mut fields: Vec<(String, RawValue)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, RawValue>()? {
                    match fields.binary_search_by(|(known, _)| known.as_str().cmp(&key)) {
                        Ok(_) => {
                            return Err(A::Error::custom(format!(".{}{FIELD_MARK}is given twice", unmarked(&key))));
                        }
                        Err(index) => fields.insert(index, (key, value)),
                    }
                }
                Ok(FaultObject(fields))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// The fault of `kind` with `fields` (in key order), or the first error in
/// the words serde's derive gave it: an unknown kind or field, a value of
/// the wrong type, then the first field missing in the order the kind
/// declares them. The kind's template gives each field's type
/// ([`Fault::fields`]), and [`Fault::with_field`] sets it.
fn read_fault<E: serde::de::Error>(kind: &str, fields: &[(String, RawValue)]) -> Result<Fault, E> {
    let (Some(index), Some(mut fault)) =
        (FAULT_KINDS.iter().position(|known| *known == kind), Fault::template(kind, 0))
    else {
        return Err(E::unknown_variant(kind, &FAULT_KINDS));
    };
    let declared = fault.fields();
    for (key, raw) in fields {
        let Some(&(name, like)) = declared.iter().find(|(name, _)| name == key) else {
            return Err(E::unknown_field(key, FAULT_FIELDS[index]));
        };
        fault = set_field(&fault, name, read_field(raw, like)?)?;
    }
    for &(name, like) in &declared {
        if !fields.iter().any(|(key, _)| key == name) {
            let absent = like.when_absent().ok_or_else(|| E::missing_field(name))?;
            fault = set_field(&fault, name, absent)?;
        }
    }
    Ok(fault)
}

/// `fault` with field `name` set to `value`, which is of the field's own type.
fn set_field<E: serde::de::Error>(fault: &Fault, name: &'static str, value: FieldValue) -> Result<Fault, E> {
    // Never refused: the value was read as the type the kind's own field has.
    fault.with_field(name, value).ok_or_else(|| E::custom(format!("`{name}` is of another type")))
}

/// A field's value as a value of the type `like` has, refused as serde
/// refuses it for that type.
fn read_field<E: serde::de::Error>(raw: &RawValue, like: FieldValue) -> Result<FieldValue, E> {
    use serde::de::Unexpected;
    Ok(match like {
        FieldValue::Ms(_) => FieldValue::Ms(read_ms(raw)?),
        FieldValue::OptionalMs(_) => FieldValue::OptionalMs(match raw {
            RawValue::Null => None,
            RawValue::Bool(_)
            | RawValue::Unsigned(_)
            | RawValue::Signed(_)
            | RawValue::Float(_)
            | RawValue::Text(_)
            | RawValue::List(_)
            | RawValue::Object(_) => Some(read_ms(raw)?),
        }),
        FieldValue::Signed(_) => FieldValue::Signed(match raw {
            RawValue::Signed(value) => *value,
            RawValue::Unsigned(value) => {
                i64::try_from(*value).map_err(|_| E::invalid_value(Unexpected::Unsigned(*value), &"i64"))?
            }
            RawValue::Null
            | RawValue::Bool(_)
            | RawValue::Float(_)
            | RawValue::Text(_)
            | RawValue::List(_)
            | RawValue::Object(_) => return Err(E::invalid_type(raw.unexpected(), &"i64")),
        }),
        FieldValue::Decimal(_) => FieldValue::Decimal(match raw {
            // As serde reads a whole number into an f64.
            RawValue::Unsigned(value) => *value as f64,
            RawValue::Signed(value) => *value as f64,
            RawValue::Float(value) => *value,
            RawValue::Null | RawValue::Bool(_) | RawValue::Text(_) | RawValue::List(_) | RawValue::Object(_) => {
                return Err(E::invalid_type(raw.unexpected(), &"f64"));
            }
        }),
        FieldValue::Flag(_) => FieldValue::Flag(match raw {
            RawValue::Bool(value) => *value,
            RawValue::Null
            | RawValue::Unsigned(_)
            | RawValue::Signed(_)
            | RawValue::Float(_)
            | RawValue::Text(_)
            | RawValue::List(_)
            | RawValue::Object(_) => return Err(E::invalid_type(raw.unexpected(), &"a boolean")),
        }),
        FieldValue::Party(_) => FieldValue::Party(read_target(raw)?),
        FieldValue::Parties(_) => {
            const PAIR: &str = "an array of length 2";
            let RawValue::List(items) = raw else {
                return Err(E::invalid_type(raw.unexpected(), &PAIR));
            };
            let first = read_target(items.first().ok_or_else(|| E::invalid_length(0, &PAIR))?)?;
            let second = read_target(items.get(1).ok_or_else(|| E::invalid_length(1, &PAIR))?)?;
            if items.len() > 2 {
                return Err(E::invalid_length(items.len(), &"fewer elements in array"));
            }
            FieldValue::Parties([first, second])
        }
    })
}

/// Milliseconds: a whole number not below zero.
fn read_ms<E: serde::de::Error>(raw: &RawValue) -> Result<u64, E> {
    match raw {
        RawValue::Unsigned(value) => Ok(*value),
        RawValue::Signed(value) => Err(E::invalid_value(serde::de::Unexpected::Signed(*value), &"u64")),
        RawValue::Null
        | RawValue::Bool(_)
        | RawValue::Float(_)
        | RawValue::Text(_)
        | RawValue::List(_)
        | RawValue::Object(_) => Err(E::invalid_type(raw.unexpected(), &"u64")),
    }
}

fn read_target<E: serde::de::Error>(raw: &RawValue) -> Result<Target, E> {
    match raw {
        RawValue::Text(name) => Target::parse(name).ok_or_else(|| E::custom(unknown_target(name))),
        RawValue::Null
        | RawValue::Bool(_)
        | RawValue::Unsigned(_)
        | RawValue::Signed(_)
        | RawValue::Float(_)
        | RawValue::List(_)
        | RawValue::Object(_) => Err(E::invalid_type(raw.unexpected(), &"a name")),
    }
}

/// The field of a `kind` fault an error is about: the first field (in key
/// order) this kind does not have, or else the first, in the order the kind
/// declares them, whose value does not read as its type.
fn faulty_field<E: serde::de::Error>(kind: &str, fields: &[(String, RawValue)]) -> Option<String> {
    let declared = Fault::template(kind, 0)?.fields();
    if let Some((unknown, _)) = fields.iter().find(|(key, _)| !declared.iter().any(|(name, _)| name == key)) {
        return Some(unmarked(unknown));
    }
    declared
        .iter()
        .find(|(name, like)| fields.iter().any(|(key, raw)| key == name && read_field::<E>(raw, *like).is_err()))
        .map(|(name, _)| (*name).to_owned())
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

fn is_default_foreign_key_percent(value: &u8) -> bool {
    *value == World::default().background_foreign_key_percent
}

fn is_default_background_pool_size(value: &u8) -> bool {
    *value == World::default().background_pool_size
}

fn is_true(value: &bool) -> bool {
    *value
}

impl Fault {
    /// A fault of `kind` at `at_ms` with sensible fields: what the lab's
    /// fault script adds when a kind is chosen.
    #[inline]
    pub fn template(kind: &str, at_ms: u64) -> Option<Fault> {
        let holder = Target::Holder;
        let redis_1 = Target::Party(Party::Redis(RedisNodeId(0)));
        Some(match kind {
            "gc_pause" => Fault::GcPause { at_ms, target: holder, duration_ms: 60_000 },
            "oom_kill" => Fault::OomKill { at_ms, target: holder, restart_after_ms: Some(20_000) },
            "host_loss" => Fault::HostLoss { at_ms, target: holder, restart_after_ms: None },
            "clock_jump" => Fault::ClockJump { at_ms, target: holder, by_ms: 30_000 },
            "clock_drift" => Fault::ClockDrift { at_ms, target: holder, ppm: 10_000 },
            "network_delay" => {
                Fault::NetworkDelay { at_ms, from: holder, to: Target::AllRedis, extra_ms: 5_000, duration_ms: 60_000 }
            }
            "partition" => {
                Fault::Partition { at_ms, between: [holder, Target::AllRedis], duration_ms: 60_000, one_way: false }
            }
            "redis_restart" => Fault::RedisRestart { at_ms, target: redis_1, down_ms: 5_000 },
            "redis_failover" => Fault::RedisFailover { at_ms, target: redis_1 },
            "consensus_leader_loss" => Fault::ConsensusLeaderLoss { at_ms },
            "db_slow" => Fault::DbSlow { at_ms, factor: 20.0, duration_ms: 60_000 },
            _ => return None,
        })
    }

    pub fn at_ms(&self) -> u64 {
        match self {
            Fault::OomKill { at_ms, .. }
            | Fault::HostLoss { at_ms, .. }
            | Fault::GcPause { at_ms, .. }
            | Fault::ClockJump { at_ms, .. }
            | Fault::ClockDrift { at_ms, .. }
            | Fault::NetworkDelay { at_ms, .. }
            | Fault::Partition { at_ms, .. }
            | Fault::RedisRestart { at_ms, .. }
            | Fault::RedisFailover { at_ms, .. }
            | Fault::ConsensusLeaderLoss { at_ms }
            | Fault::DbSlow { at_ms, .. } => *at_ms,
        }
    }

    /// Whether the fault aims at whoever holds the lock when it strikes.
    pub fn targets_holder(&self) -> bool {
        match self {
            Fault::OomKill { target, .. }
            | Fault::HostLoss { target, .. }
            | Fault::GcPause { target, .. }
            | Fault::ClockJump { target, .. }
            | Fault::ClockDrift { target, .. }
            | Fault::RedisRestart { target, .. }
            | Fault::RedisFailover { target, .. } => *target == Target::Holder,
            Fault::NetworkDelay { from, to, .. } => *from == Target::Holder || *to == Target::Holder,
            Fault::Partition { between, .. } => between.contains(&Target::Holder),
            Fault::ConsensusLeaderLoss { .. } | Fault::DbSlow { .. } => false,
        }
    }

    /// How long a fault on the network lasts (a partition, a delay); `None`
    /// for any other fault.
    pub fn network_duration_ms(&self) -> Option<u64> {
        match self {
            Fault::NetworkDelay { duration_ms, .. } | Fault::Partition { duration_ms, .. } => Some(*duration_ms),
            Fault::OomKill { .. }
            | Fault::HostLoss { .. }
            | Fault::GcPause { .. }
            | Fault::ClockJump { .. }
            | Fault::ClockDrift { .. }
            | Fault::RedisRestart { .. }
            | Fault::RedisFailover { .. }
            | Fault::ConsensusLeaderLoss { .. }
            | Fault::DbSlow { .. } => None,
        }
    }

    /// The fault's `kind` as the format spells it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Fault::OomKill { .. } => "oom_kill",
            Fault::HostLoss { .. } => "host_loss",
            Fault::GcPause { .. } => "gc_pause",
            Fault::ClockJump { .. } => "clock_jump",
            Fault::ClockDrift { .. } => "clock_drift",
            Fault::NetworkDelay { .. } => "network_delay",
            Fault::Partition { .. } => "partition",
            Fault::RedisRestart { .. } => "redis_restart",
            Fault::RedisFailover { .. } => "redis_failover",
            Fault::ConsensusLeaderLoss { .. } => "consensus_leader_loss",
            Fault::DbSlow { .. } => "db_slow",
        }
    }

    /// The fault's kind in words, for a reader (the explorer's choices).
    pub fn kind_title(&self) -> &'static str {
        match self {
            Fault::OomKill { .. } => "OOM kill",
            Fault::HostLoss { .. } => "host lost",
            Fault::GcPause { .. } => "GC pause",
            Fault::ClockJump { .. } => "clock jump",
            Fault::ClockDrift { .. } => "clock drift",
            Fault::NetworkDelay { .. } => "network delay",
            Fault::Partition { .. } => "network partition",
            Fault::RedisRestart { .. } => "Redis restart",
            Fault::RedisFailover { .. } => "Redis failover",
            Fault::ConsensusLeaderLoss { .. } => "consensus leader lost",
            Fault::DbSlow { .. } => "slow database",
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::OomKill { target, restart_after_ms, .. } => match restart_after_ms {
                Some(after) => write!(f, "OOM-kill {target}, restart after {}", seconds(*after)),
                None => write!(f, "OOM-kill {target} (no restart)"),
            },
            Fault::HostLoss { target, restart_after_ms, .. } => match restart_after_ms {
                Some(after) => write!(f, "host of {target} lost, back after {}", seconds(*after)),
                None => write!(f, "host of {target} lost"),
            },
            Fault::GcPause { target, duration_ms, .. } => {
                write!(f, "GC pause on {target} for {}", seconds(*duration_ms))
            }
            Fault::ClockJump { target, by_ms, .. } => {
                let sign = if *by_ms < 0 { "-" } else { "+" };
                write!(f, "clock of {target} jumps {sign}{}", seconds(by_ms.unsigned_abs()))
            }
            Fault::ClockDrift { target, ppm, .. } => {
                write!(f, "clock of {target} drifts {ppm:+} ppm")
            }
            Fault::NetworkDelay { from, to, extra_ms, duration_ms, .. } => {
                write!(f, "{from} → {to} delayed {} for {}", seconds(*extra_ms), seconds(*duration_ms))
            }
            Fault::Partition { between, duration_ms, one_way, .. } => {
                let arrow = if *one_way { "→" } else { "↔" };
                write!(f, "partition {} {arrow} {} for {}", between[0], between[1], seconds(*duration_ms))
            }
            Fault::RedisRestart { target, down_ms, .. } => {
                write!(f, "{target} restarts without persistence, down {}", seconds(*down_ms))
            }
            Fault::RedisFailover { target, .. } => {
                write!(f, "{target} dies and fails over (to its replica if it has one, else it restarts empty)")
            }
            Fault::ConsensusLeaderLoss { .. } => f.write_str("consensus leader lost"),
            Fault::DbSlow { factor, duration_ms, .. } => {
                write!(f, "database {}× slower for {}", crate::format::decimal(*factor), seconds(*duration_ms))
            }
        }
    }
}

impl Fault {
    /// How long the fault's effect lasts from when it strikes, as the world
    /// it strikes has it; `None` for good (a kill with no restart, a stepped
    /// or drifting clock). A Redis node's delayed restart (Redlock) keeps it
    /// out longer than `down_ms`: the log says how long.
    pub fn lasts_ms(&self, world: &World) -> Option<u64> {
        match self {
            Fault::OomKill { restart_after_ms, .. } | Fault::HostLoss { restart_after_ms, .. } => *restart_after_ms,
            Fault::GcPause { duration_ms, .. }
            | Fault::Partition { duration_ms, .. }
            | Fault::DbSlow { duration_ms, .. } => Some(*duration_ms),
            Fault::NetworkDelay { extra_ms, duration_ms, .. } => Some(duration_ms + extra_ms),
            Fault::RedisRestart { down_ms, .. } => Some(*down_ms),
            Fault::RedisFailover { .. } | Fault::ConsensusLeaderLoss { .. } => Some(world.failover_ms),
            Fault::ClockJump { .. } | Fault::ClockDrift { .. } => None,
        }
    }
}

impl Fault {
    /// The fault in words with how long it really lasted, where the log shows
    /// that it lasted longer than the fault says: a Redis node that restarted
    /// after `down_ms` but came back `back_after_ms` after it went down (a
    /// Redlock node's delayed restart keeps it out one lock TTL more).
    pub fn words_with_effect(&self, back_after_ms: Option<u64>) -> String {
        match (self, back_after_ms) {
            (Fault::RedisRestart { down_ms, .. }, Some(back)) if back > *down_ms => format!(
                "{self}, and back only after {}: a restarted Redlock node stays out one lock TTL more (the delayed restart)",
                seconds(back)
            ),
            _ => self.to_string(),
        }
    }
}

/// Whether a run kept the data correct, and whether only timing did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Safety {
    /// No stale write landed and no two holders wrote where no fence checked.
    Safe,
    /// Two runs held the lock at once and both wrote where no fence checked:
    /// the data survived only by timing. Mutual exclusion, which is what the
    /// Redis documentation calls a lock's safety, was lost.
    AtRisk,
    /// A stale write landed or a stored report was damaged.
    Unsafe,
}

impl Safety {
    /// The contract's word for it.
    pub fn name(self) -> &'static str {
        match self {
            Safety::Safe => "safe",
            Safety::AtRisk => "at_risk",
            Safety::Unsafe => "unsafe",
        }
    }
}

/// Whether every period got its report, and in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Liveness {
    Ok,
    Late,
    Missed,
    /// The system does not keep up: each job needs more than a cron period of
    /// work and runs queue for the lock one behind another, so every period's
    /// report comes later than the last, without bound.
    Behind,
}

impl Liveness {
    /// The contract's word for it.
    pub fn name(self) -> &'static str {
        match self {
            Liveness::Ok => "ok",
            Liveness::Late => "late",
            Liveness::Missed => "missed",
            Liveness::Behind => "behind",
        }
    }
}

/// Whether the strategy did the job's work once, and let other work be:
/// the third axis of the verdict, as the post judges option D ("triple the
/// S3 writes, triple the Slack pings") and option C ("connection pool
/// starved"). Kleppmann's locks *for efficiency* exist to save exactly this.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Efficiency {
    /// Work was done twice only where a fault forced it.
    Ok,
    /// A run did work another run was already doing with no fault to force
    /// it (no lock, or a lock that let it in on its own), or other services'
    /// queries failed waiting behind the job's lock.
    Wasteful,
}

impl Efficiency {
    /// The contract's word for it.
    pub fn name(self) -> &'static str {
        match self {
            Efficiency::Ok => "ok",
            Efficiency::Wasteful => "wasteful",
        }
    }
}

/// What a built-in scenario promises about one strategy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    pub safety: Safety,
    pub liveness: Liveness,
    /// Absent in documents written before the verdict had three axes; every
    /// built-in states it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<Efficiency>,
    /// Finding kinds that must appear in the report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<String>,
    /// Why, in a sentence, with the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// What `why` says about the run, in the claims of `crate::claim` (read
    /// by the texts test from the document; see [`Scenario::claims`]).
    #[serde(default, skip_serializing)]
    pub claims: serde::de::IgnoredAny,
}

/// A scenario refused, with the field and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// Where in the document, e.g. `faults[2].duration_ms`; empty for the whole document.
    pub path: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    /// The path and the message, with any control character a document put
    /// in them (a key, a value quoted back) written as an escape: an error
    /// goes to a terminal or a page as it is, and must not steer either.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !(self.path.is_empty() || self.path == ".") {
            write!(f, "{}: ", Printable(&self.path))?;
        }
        write!(f, "{}", Printable(&self.message))
    }
}

/// Text with its control characters written as `\u{1b}`.
#[derive(Clone, Copy, Debug)]
pub struct Printable<'a>(pub &'a str);

/// A key from the document, made safe to stand before [`FIELD_MARK`]: a
/// mark of its own would move where the error's path seems to end.
fn unmarked(key: &str) -> String {
    key.replace(FIELD_MARK, "\\u{1f}")
}

impl fmt::Display for Printable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for character in self.0.chars() {
            if character.is_control() && character != '\n' {
                write!(f, "\\u{{{:x}}}", u32::from(character))?;
            } else {
                write!(f, "{character}")?;
            }
        }
        Ok(())
    }
}

/// `network_latency_ms` as the format writes it, `[low, high]`, with a
/// message that says so when it is not.
fn deserialize_latency<'de, D: Deserializer<'de>>(deserializer: D) -> Result<[u64; 2], D::Error> {
    use serde::de::Error;
    let values = Vec::<u64>::deserialize(deserializer)?;
    match values.as_slice() {
        [low, high] => Ok([*low, *high]),
        other => Err(D::Error::custom(format!(
            "network_latency_ms must be two numbers of milliseconds, [low, high]; found {} number{}",
            other.len(),
            if other.len() == 1 { "" } else { "s" }
        ))),
    }
}

/// Most characters in a scenario's name and its description: every valid
/// scenario must also fit in a share link.
pub const MAX_NAME_CHARS: usize = 200;
pub const MAX_DESCRIPTION_CHARS: usize = 4_000;

/// Refuses a text field that is too long or holds a control character (a
/// name ends up in a terminal, an SVG and a page title).
fn check_text(path: &str, text: &str, most: usize) -> Result<(), ScenarioError> {
    let count = text.chars().count();
    if count > most {
        return Err(refuse(path, format!("is {count} characters long; at most {most} are allowed")));
    }
    if let Some(control) = text.chars().find(|character| character.is_control()) {
        return Err(refuse(
            path,
            format!("holds the control character {}, which a scenario's text may not", Printable(&control.to_string())),
        ));
    }
    Ok(())
}

impl std::error::Error for ScenarioError {}

/// The field path and message of a serde_json error in `text`, where the
/// scenario sits at `scenario_path` (empty for a scenario document): a fault's
/// error names its own path (see [`FIELD_MARK`]); any other is placed by its
/// position. The message keeps serde_json's "at line L column C".
pub(crate) fn error_path(text: &str, error: &serde_json::Error, scenario_path: &str) -> (String, String) {
    let message = error.to_string();
    // Only a fault's errors carry the mark, and they begin with the fault's
    // place; a mark anywhere else came from the document and proves nothing.
    match message.split_once(FIELD_MARK) {
        Some((path, rest)) if path.starts_with("faults[") && scenario_path.is_empty() => {
            (path.to_owned(), rest.to_owned())
        }
        Some((path, rest)) if path.starts_with("faults[") => (format!("{scenario_path}.{path}"), rest.to_owned()),
        Some(_) | None => (crate::json_path::at(text, error.line(), error.column()), message),
    }
}

/// Refuses an array where the format has an object (see
/// [`crate::json_path::array_not_allowed`]): only the format's list fields
/// are arrays. `scenario_path` is where the scenario sits in `text`.
pub(crate) fn objects_are_objects(text: &str, scenario_path: &str) -> Result<(), ScenarioError> {
    const LISTS: [&str; 7] = ["faults", "network_latency_ms", "between", "findings", "choices", "answer", "references"];
    let list = |path: &str| {
        let last = path.rsplit('.').next().unwrap_or(path);
        // What lies under `claims` is the texts' claims, which the engine keeps nothing of.
        let claims = path.split('.').any(|segment| segment == "claims");
        path.starts_with(scenario_path) && (LISTS.contains(&last) || claims)
    };
    match crate::json_path::array_not_allowed(text, &list) {
        Some(path) => {
            let path = if path.is_empty() { "the document".to_owned() } else { path };
            Err(refuse(path, "is an array; the format has an object with named fields here"))
        }
        None => Ok(()),
    }
}

fn refuse(path: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError { path: path.into(), message: message.into() }
}

impl Scenario {
    /// Parses and validates a scenario document.
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        // A byte-order mark is how some editors begin a UTF-8 file; it is not JSON.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let scenario: Scenario = serde_json::from_str(text).map_err(|error| {
            let (path, message) = error_path(text, &error, "");
            refuse(path, message)
        })?;
        objects_are_objects(text, "")?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// The document as pretty JSON, in the format's field order.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|error| format!("{{\"error\": \"{error}\"}}"))
    }

    /// What every period writes: the document's `world.output`, or its
    /// format version's default (`daily` in `locklab/2`, `per_period` in
    /// `locklab/1`, whose meaning a document keeps).
    pub fn output(&self) -> Output {
        self.world.output.unwrap_or(if self.format == FORMAT_V1 { Output::PerPeriod } else { Output::Daily })
    }

    /// The same scenario as a document of the current format, for the lab to
    /// write a changed or saved scenario in. A `locklab/1` document keeps
    /// its meaning: the output its version gave it becomes explicit.
    pub fn in_current_format(mut self) -> Scenario {
        if self.format != FORMAT {
            self.world.output = Some(self.output());
            self.format = FORMAT.to_owned();
        }
        self
    }

    /// Which store the writes meet, in a sentence for wherever a verdict is
    /// shown: a fencing token protects only a resource that checks it.
    pub fn storage_text(&self) -> &'static str {
        if self.world.storage_checks_tokens {
            "storage checks fencing tokens: it refuses a write whose token is lower than one it has seen"
        } else {
            "storage is a plain object store, like S3: the last PUT wins and no token is checked"
        }
    }

    /// The wall-clock time of t = 0, in milliseconds since midnight, if
    /// `clock_origin` reads as `HH:MM:SS`.
    pub fn clock_origin_ms(&self) -> Option<u64> {
        let mut parts = self.clock_origin.split(':');
        let mut field = |limit: u64| -> Option<u64> {
            let text = parts.next()?;
            if text.len() != 2 || !text.bytes().all(|byte| byte.is_ascii_digit()) {
                return None;
            }
            text.parse::<u64>().ok().filter(|value| *value < limit)
        };
        let (hours, minutes, seconds) = (field(24)?, field(60)?, field(60)?);
        if parts.next().is_some() {
            return None;
        }
        Some(((hours * 60 + minutes) * 60 + seconds) * 1_000)
    }

    /// The report a period's run writes: its own, or the day's.
    pub fn report_of(&self, period: Period) -> ReportOf {
        ReportRule::of(self).report_of(period)
    }

    /// Simulated time to run: the window in which cron fires. Runs still
    /// in flight at its end go on ([`Scenario::drain_ms`]).
    pub fn duration_ms(&self) -> u64 {
        self.duration_ms.unwrap_or(3 * self.world.cron_period_ms)
    }

    /// How long, at most, the runs in flight at the window's end go on
    /// after it: two cron periods or two jobs, whichever is longer, and never
    /// more than a day. No cron tick fires after the end; a run that started
    /// before it finishes, so a period is judged on what its runs did, not on
    /// where the window cut them. A run still in flight this long after the
    /// end (a lock that a lost host keeps until TCP keepalive gives up) is
    /// reported unfinished, never missed.
    pub fn drain_ms(&self) -> u64 {
        (2 * self.world.cron_period_ms.max(self.world.job_ms)).min(MAX_DURATION_MS)
    }

    /// The latest a run can end: the window plus its drain.
    pub fn horizon_ms(&self) -> u64 {
        self.duration_ms().saturating_add(self.drain_ms())
    }

    /// The strategies to run, in the fixed order, with settings resolved.
    pub fn strategy_settings(&self) -> Vec<StrategySettings> {
        let Some(chosen) = &self.strategies else {
            return StrategyId::ALL.into_iter().map(StrategySettings::default_for).collect();
        };
        let mut settings = Vec::new();
        if let Some(naive) = &chosen.naive {
            settings.push(StrategySettings::Naive(naive.clone()));
        }
        if let Some(fencing) = &chosen.fencing {
            settings.push(StrategySettings::Fencing(fencing.clone()));
        }
        if let Some(redlock) = &chosen.redlock {
            settings.push(StrategySettings::Redlock(redlock.clone()));
        }
        if let Some(db_lock) = &chosen.db_lock {
            settings.push(StrategySettings::DbLock(db_lock.clone()));
        }
        if chosen.unique_insert.is_some() {
            settings.push(StrategySettings::UniqueInsert);
        }
        if let Some(consensus) = &chosen.consensus {
            settings.push(StrategySettings::Consensus(consensus.clone()));
        }
        settings
    }

    /// The settings for one strategy: the scenario's own if it names it, else the defaults.
    pub fn settings_for(&self, id: StrategyId) -> StrategySettings {
        self.strategy_settings()
            .into_iter()
            .find(|settings| settings.id() == id)
            .unwrap_or_else(|| StrategySettings::default_for(id))
    }

    /// Checks what the types alone cannot: ranges, parties that exist, times in the run.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        if self.format != FORMAT && self.format != FORMAT_V1 {
            return Err(refuse(
                "format",
                format!("must be \"{FORMAT}\" (or the older \"{FORMAT_V1}\"), found \"{}\"", self.format),
            ));
        }
        check_text("name", &self.name, MAX_NAME_CHARS)?;
        if let Some(description) = &self.description {
            check_text("description", description, MAX_DESCRIPTION_CHARS)?;
        }
        if self.clock_origin_ms().is_none() {
            return Err(refuse(
                "clock_origin",
                format!("must be a time of day as HH:MM:SS (00:00:00 to 23:59:59), found \"{}\"", self.clock_origin),
            ));
        }
        let world = &self.world;
        let day = MAX_DURATION_MS;
        check_range("world.instances", u64::from(world.instances), 1, u64::from(MAX_INSTANCES))?;
        check_range("world.cron_period_ms", world.cron_period_ms, 1_000, day)?;
        check_range("world.cron_jitter_ms", world.cron_jitter_ms, 0, world.cron_period_ms / 2)?;
        check_range("world.job_ms", world.job_ms, 1, day)?;
        check_range("world.report_chunks", u64::from(world.report_chunks), 1, 64)?;
        check_range("world.retry_ms", world.retry_ms, 1, day)?;
        let [latency_low, latency_high] = world.network_latency_ms;
        check_range("world.network_latency_ms[0]", latency_low, 0, 60_000)?;
        check_range("world.network_latency_ms[1]", latency_high, latency_low, 60_000)?;
        check_range("world.db_pool_size", u64::from(world.db_pool_size), 1, 100)?;
        check_range("world.db_max_connections", u64::from(world.db_max_connections), 1, 10_000)?;
        check_range("world.background_queries_per_s", u64::from(world.background_queries_per_s), 0, 1_000)?;
        check_range("world.background_foreign_key_percent", u64::from(world.background_foreign_key_percent), 0, 100)?;
        check_range("world.background_pool_size", u64::from(world.background_pool_size), 1, 100)?;
        check_range("world.background_timeout_ms", world.background_timeout_ms, 0, day)?;
        check_range("world.tcp_keepalive_ms", world.tcp_keepalive_ms, 1, day)?;
        check_range("world.replication_lag_ms", world.replication_lag_ms, 0, day)?;
        check_range("world.failover_ms", world.failover_ms, 0, day)?;
        let duration = self.duration_ms();
        check_range("duration_ms", duration, 1, day)?;
        if let Some(chosen) = &self.strategies {
            if self.strategy_settings().is_empty() {
                return Err(refuse("strategies", "names no strategy; leave the field out to run all six"));
            }
            self.validate_strategies(chosen)?;
        }
        if self.faults.len() > MAX_FAULTS {
            return Err(refuse("faults", format!("{} faults; at most {MAX_FAULTS} are allowed", self.faults.len())));
        }
        for (index, fault) in self.faults.iter().enumerate() {
            self.validate_fault(&format!("faults[{index}]"), fault, duration)?;
        }
        if let Some(quiz) = &self.quiz {
            quiz.validate()?;
        }
        crate::budget::check(self)
    }

    fn validate_strategies(&self, chosen: &Strategies) -> Result<(), ScenarioError> {
        let day = MAX_DURATION_MS;
        if let Some(naive) = &chosen.naive {
            check_range("strategies.naive.ttl_ms", naive.ttl_ms, 1, day)?;
        }
        for (name, lease) in [("fencing", &chosen.fencing), ("consensus", &chosen.consensus)] {
            if let Some(lease) = lease {
                check_range(&format!("strategies.{name}.ttl_ms"), lease.ttl_ms, 1, day)?;
                check_range(&format!("strategies.{name}.renew_every_ms"), lease.renew_every_ms, 1, day)?;
            }
        }
        if let Some(redlock) = &chosen.redlock {
            check_range("strategies.redlock.ttl_ms", redlock.ttl_ms, 1, day)?;
            check_range("strategies.redlock.renew_every_ms", redlock.renew_every_ms, 1, day)?;
            check_range("strategies.redlock.nodes", u64::from(redlock.nodes), 1, u64::from(MAX_REDIS_NODES))?;
            if !(0.0..=0.5).contains(&redlock.drift_factor) {
                return Err(refuse("strategies.redlock.drift_factor", "must be between 0 and 0.5"));
            }
        }
        if let Some(db_lock) = &chosen.db_lock {
            check_range("strategies.db-lock.lock_timeout_ms", db_lock.lock_timeout_ms, 0, day)?;
            check_range(
                "strategies.db-lock.idle_in_transaction_timeout_ms",
                db_lock.idle_in_transaction_timeout_ms,
                0,
                day,
            )?;
        }
        Ok(())
    }

    fn validate_target(&self, path: &str, target: Target, allowed: TargetKind) -> Result<(), ScenarioError> {
        let fits = match (target, allowed) {
            (Target::Holder, TargetKind::Instance | TargetKind::Clock | TargetKind::Any) => true,
            (Target::Holder, TargetKind::Redis) => false,
            (Target::AllRedis, TargetKind::Redis | TargetKind::Clock | TargetKind::Any) => true,
            (Target::AllRedis, TargetKind::Instance) => false,
            (Target::Party(Party::Instance(id)), _) if id.0 >= self.world.instances => {
                return Err(refuse(
                    path,
                    format!("instance `{id}` does not exist: the world has {} instances", self.world.instances),
                ));
            }
            (Target::Party(party), TargetKind::Instance) => matches!(party, Party::Instance(_)),
            (Target::Party(party), TargetKind::Redis) => {
                matches!(party, Party::Redis(_) | Party::RedisReplica)
            }
            (Target::Party(party), TargetKind::Clock) => !matches!(party, Party::Storage | Party::Slack),
            (Target::Party(_), TargetKind::Any) => true,
        };
        if fits {
            Ok(())
        } else {
            Err(refuse(path, format!("`{target}` cannot be the target here: {}", allowed.explain())))
        }
    }

    fn validate_fault(&self, path: &str, fault: &Fault, duration: u64) -> Result<(), ScenarioError> {
        let day = MAX_DURATION_MS;
        let at = fault.at_ms();
        if at >= duration {
            return Err(refuse(
                format!("{path}.at_ms"),
                format!("{at} is not inside the run, which lasts {duration} ms"),
            ));
        }
        let field = |name: &str| format!("{path}.{name}");
        match fault {
            Fault::OomKill { target, restart_after_ms, .. } | Fault::HostLoss { target, restart_after_ms, .. } => {
                self.validate_target(&field("target"), *target, TargetKind::Instance)?;
                if let Some(after) = restart_after_ms {
                    check_range(&field("restart_after_ms"), *after, 0, day)?;
                }
            }
            Fault::GcPause { target, duration_ms, .. } => {
                self.validate_target(&field("target"), *target, TargetKind::Instance)?;
                check_range(&field("duration_ms"), *duration_ms, 1, day)?;
            }
            Fault::ClockJump { target, by_ms, .. } => {
                self.validate_target(&field("target"), *target, TargetKind::Clock)?;
                check_range(&field("by_ms"), by_ms.unsigned_abs(), 0, day)?;
            }
            Fault::ClockDrift { target, ppm, .. } => {
                self.validate_target(&field("target"), *target, TargetKind::Clock)?;
                check_range(&field("ppm"), ppm.unsigned_abs(), 0, 500_000)?;
            }
            Fault::NetworkDelay { from, to, extra_ms, duration_ms, .. } => {
                self.validate_target(&field("from"), *from, TargetKind::Any)?;
                self.validate_target(&field("to"), *to, TargetKind::Any)?;
                check_range(&field("extra_ms"), *extra_ms, 0, day)?;
                check_range(&field("duration_ms"), *duration_ms, 1, day)?;
            }
            Fault::Partition { between, duration_ms, .. } => {
                self.validate_target(&field("between[0]"), between[0], TargetKind::Any)?;
                self.validate_target(&field("between[1]"), between[1], TargetKind::Any)?;
                if between[0] == between[1] {
                    return Err(refuse(field("between"), "a partition needs two different sides"));
                }
                check_range(&field("duration_ms"), *duration_ms, 1, day)?;
            }
            Fault::RedisRestart { target, down_ms, .. } => {
                self.validate_target(&field("target"), *target, TargetKind::Redis)?;
                check_range(&field("down_ms"), *down_ms, 0, day)?;
            }
            Fault::RedisFailover { target, .. } => {
                self.validate_target(&field("target"), *target, TargetKind::Redis)?;
            }
            Fault::ConsensusLeaderLoss { .. } => {}
            Fault::DbSlow { factor, duration_ms, .. } => {
                if !factor.is_finite() || !(1.0..=1000.0).contains(factor) {
                    return Err(refuse(
                        field("factor"),
                        format!("{} must be between 1 and 1000", crate::format::decimal(*factor)),
                    ));
                }
                check_range(&field("duration_ms"), *duration_ms, 1, day)?;
            }
        }
        Ok(())
    }
}

/// How a period maps to the report it writes: everything
/// [`Scenario::report_of`] needs, small enough for the simulator to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportRule {
    pub output: Output,
    pub clock_origin_ms: u64,
    pub cron_period_ms: u64,
}

impl ReportRule {
    pub fn of(scenario: &Scenario) -> ReportRule {
        ReportRule {
            output: scenario.output(),
            clock_origin_ms: scenario.clock_origin_ms().unwrap_or(0),
            cron_period_ms: scenario.world.cron_period_ms,
        }
    }

    /// The report `period`'s run writes: under `daily`, the day its tick falls on.
    pub fn report_of(self, period: Period) -> ReportOf {
        const DAY_MS: u64 = 24 * 60 * 60 * 1_000;
        match self.output {
            Output::PerPeriod => ReportOf::Period(period),
            Output::Daily => {
                let tick_ms = self.clock_origin_ms + u64::from(period.0) * self.cron_period_ms;
                ReportOf::Day(u32::try_from(tick_ms / DAY_MS).unwrap_or(u32::MAX))
            }
        }
    }
}

#[derive(Clone, Copy)]
enum TargetKind {
    Instance,
    Redis,
    Clock,
    Any,
}

impl TargetKind {
    fn explain(self) -> &'static str {
        match self {
            TargetKind::Instance => "this fault strikes an instance (a…h or holder)",
            TargetKind::Redis => "this fault strikes a Redis node (redis-1…redis-5, redis-1-replica or redis)",
            TargetKind::Clock => "storage and Slack have no clock the lab models",
            TargetKind::Any => "",
        }
    }
}

fn check_range(path: &str, value: u64, low: u64, high: u64) -> Result<(), ScenarioError> {
    if value < low || value > high {
        Err(refuse(path, format!("{value} is out of range: expected {low} to {high}")))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_list_names_every_fault_and_each_kind_has_a_template() {
        let kinds: Vec<String> = FAULT_VARIANTS.iter().map(|variant| snake_case(variant)).collect();
        assert_eq!(FAULT_KINDS.to_vec(), kinds, "FAULT_KINDS names the faults! list's kinds, in its order");
        for kind in FAULT_KINDS {
            let template = Fault::template(kind, 7).unwrap_or_else(|| panic!("`{kind}` has a template"));
            assert_eq!((template.kind_name(), template.at_ms()), (kind, 7));
            let scenario = Scenario { faults: vec![template], ..Scenario::default() };
            assert!(Scenario::from_json(&scenario.to_json()).is_ok(), "`{kind}`'s template is a valid fault");
        }
        assert_eq!(Fault::template("no_such_kind", 0), None);
    }

    #[test]
    fn a_struct_given_as_an_array_is_refused_by_name() {
        let cases = [
            (r#"{"format": "locklab/2", "world": [3, 300000]}"#, "world"),
            (r#"["locklab/2"]"#, "the document"),
            (r#"{"format": "locklab/2", "strategies": {"naive": [30000]}}"#, "strategies.naive"),
            (r#"{"format": "locklab/2", "expect": {"naive": ["safe", "ok"]}}"#, "expect.naive"),
        ];
        for (text, path) in cases {
            let error = Scenario::from_json(text).expect_err(text);
            assert_eq!(error.path, path, "{text}: {error}");
            assert!(error.message.contains("is an array"), "{error}");
        }
        let lists = r#"{"format": "locklab/2", "world": {"network_latency_ms": [1, 2]},
            "faults": [{"at_ms": 1, "kind": "partition", "between": ["a", "redis"], "duration_ms": 5}]}"#;
        assert!(Scenario::from_json(lists).is_ok(), "list fields stay lists");
    }

    #[test]
    fn the_minimal_document_is_the_seed_world() {
        let scenario = Scenario::from_json(r#"{"format": "locklab/1"}"#).unwrap();
        assert_eq!(scenario.world, World::default());
        assert_eq!(scenario.duration_ms(), 900_000);
        assert_eq!(scenario.strategy_settings().len(), 6);
    }

    #[test]
    fn a_title_names_the_settings_that_differ_from_the_seeds() {
        let title = |json: &str, id: StrategyId| Scenario::from_json(json).unwrap().settings_for(id).title();
        let seed = r#"{"format": "locklab/1"}"#;
        assert_eq!(title(seed, StrategyId::Naive), StrategyId::Naive.title());
        assert_eq!(title(seed, StrategyId::Redlock), StrategyId::Redlock.title());
        let sized = r#"{"format": "locklab/1", "strategies": {"naive": {"ttl_ms": 100000}}}"#;
        assert_eq!(title(sized, StrategyId::Naive), "SET NX EX 100");
        let overrun = r#"{"format": "locklab/1", "strategies": {"naive": {"ttl_ms": 1500, "release": "del"}}}"#;
        assert_eq!(title(overrun, StrategyId::Naive), "SET NX PX 1500, released with a plain DEL");
        let three = r#"{"format": "locklab/1", "strategies": {"redlock": {"nodes": 3}}}"#;
        assert_eq!(title(three, StrategyId::Redlock), "Redlock over 3 Redis nodes");
        assert_eq!(title(three, StrategyId::Fencing), StrategyId::Fencing.title());
    }

    #[test]
    fn a_document_keeps_the_output_of_its_version() {
        let v2 = Scenario::from_json(r#"{"format": "locklab/2"}"#).unwrap();
        assert_eq!(v2.output(), Output::Daily);
        let v1 = Scenario::from_json(r#"{"format": "locklab/1"}"#).unwrap();
        assert_eq!(v1.output(), Output::PerPeriod, "version 1 gave every period its own report");
        let chosen = Scenario::from_json(r#"{"format": "locklab/1", "world": {"output": "daily"}}"#).unwrap();
        assert_eq!(chosen.output(), Output::Daily, "a document may say which it means");
        assert_eq!(Scenario::from_json(&v1.to_json()).unwrap().output(), Output::PerPeriod, "and keeps it");
        assert_eq!(v2.report_of(Period(2)), v2.report_of(Period(0)), "every period rewrites the day's report");
        assert_eq!(v1.report_of(Period(2)), ReportOf::Period(Period(2)));
        // 02:00 plus 22 hours of five-minute periods crosses midnight: the next day's report.
        assert_eq!(v2.report_of(Period(263)), ReportOf::Day(0));
        assert_eq!(v2.report_of(Period(264)), ReportOf::Day(1));
    }

    #[test]
    fn a_strategy_alone_with_defaults() {
        let scenario = Scenario::from_json(r#"{"format": "locklab/1", "strategies": {"fencing": {}}}"#).unwrap();
        assert_eq!(scenario.strategy_settings(), vec![StrategySettings::Fencing(LeaseSettings::default())]);
    }

    #[test]
    fn unknown_fields_and_bad_values_name_the_field() {
        let cases = [
            (r#"{"format": "locklab/1", "wrold": {}}"#, "wrold: unknown field `wrold`"),
            (r#"{"format": "locklab/1", "world": {"instance": 3}}"#, "world.instance: unknown field `instance`"),
            (r#"{"format": "locklab/3"}"#, "format: must be"),
            (r#"{"format": "locklab/2", "clock_origin": "banana"}"#, "clock_origin: must be a time of day"),
            (r#"{"format": "locklab/2", "clock_origin": "99:00:00"}"#, "clock_origin: must be a time of day"),
            (r#"{"format": "locklab/2", "world": {"output": "weekly"}}"#, "world.output: unknown variant"),
            (r#"{"format": "locklab/2", "strategies": {}}"#, "strategies: names no strategy"),
            (
                r#"{"format": "locklab/2", "world": {"network_latency_ms": [1, 2, 3]}}"#,
                "network_latency_ms must be two numbers of milliseconds, [low, high]; found 3 numbers",
            ),
            (
                r#"{"format": "locklab/2", "faults": [{"at_ms": 5, "kind": "gc_pause", "target": "a", "duration_ms": 1, "duration_ms": 2}]}"#,
                "faults[0].duration_ms: is given twice",
            ),
            (r#"{"format": "locklab/2", "name": "\u001b[31mred"}"#, "name: holds the control character \\u{1b}"),
            (r#"{"format": "locklab/2", "description": "a\u0007"}"#, "description: holds the control character \\u{7}"),
            // A mark of the parser's own, written into the document, does not move the path.
            (r#"{"format": "locklab/2", "w\u001forld": 1}"#, "w\\u{1f}orld: unknown field `w\\u{1f}orld`"),
            (
                r#"{"format": "locklab/2", "faults": [{"at_ms": 5, "kind": "gc_pause", "target": "a", "x\u001fy": 1}]}"#,
                "faults[0].x\\u{1f}y: unknown field",
            ),
            (r#"{"format": "locklab/1", "world": {"instances": 9}}"#, "world.instances: 9 is out of range"),
            (
                r#"{"format": "locklab/1", "faults": [{"at_ms": -5, "kind": "gc_pause", "target": "a", "duration_ms": 1}]}"#,
                "faults[0].at_ms",
            ),
            (
                r#"{"format": "locklab/1", "faults": [{"at_ms": 5, "kind": "gc_pause", "target": "a", "duration_ms": 1},
                    {"at_ms": 5, "kind": "gc_pause", "target": "a", "duration_ms": "long"}]}"#,
                "faults[1].duration_ms: invalid type",
            ),
            (
                r#"{"format": "locklab/1", "faults": [{"at_ms": 5, "kind": "gc_pause", "target": "a"}  ]}"#,
                "faults[0]: missing field `duration_ms`",
            ),
            (r#"{"format": "locklab/1", "faults": [{"at_ms": 5}]}"#, "faults[0]: missing field `kind`"),
            (
                r#"{"format": "locklab/1", "faults": [{"at_ms": 5, "kind": "gc_pause", "target": "a", "durations_ms": 1}]}"#,
                "faults[0].durations_ms: unknown field `durations_ms`",
            ),
            (
                r#"{"format": "locklab/1", "faults": [{"at_ms": 5, "kind": "partition", "between": ["a"], "duration_ms": 1}]}"#,
                "faults[0].between: invalid length 1",
            ),
            (
                r#"{"format": "locklab/1", "faults": [{"at_ms": 5, "kind": "gc_paws", "target": "a", "duration_ms": 1}]}"#,
                "unknown variant `gc_paws`",
            ),
            (
                r#"{"format": "locklab/1", "faults": [{"at_ms": 5, "kind": "gc_pause", "target": "z", "duration_ms": 1}]}"#,
                "unknown party `z`",
            ),
            (
                r#"{"format": "locklab/1", "faults": [{"at_ms": 5, "kind": "gc_pause", "target": "d", "duration_ms": 1}]}"#,
                "faults[0].target: instance `d` does not exist",
            ),
            (
                r#"{"format": "locklab/1", "faults": [{"at_ms": 5000000, "kind": "gc_pause", "target": "a", "duration_ms": 1}]}"#,
                "faults[0].at_ms: 5000000 is not inside the run",
            ),
            (
                r#"{"format": "locklab/1", "faults": [{"at_ms": 5, "kind": "redis_restart", "target": "a", "down_ms": 1}]}"#,
                "faults[0].target: `a` cannot be the target",
            ),
            (r#"{"format": "locklab/1", "strategies": {"fencin": {}}}"#, "strategies.fencin: unknown field `fencin`"),
            (r#"{"format": "locklab/1", "duration_ms": 99999999999}"#, "duration_ms: 99999999999 is out of range"),
            ("{", "EOF"),
        ];
        for (text, expected) in cases {
            let error = Scenario::from_json(text).expect_err(text).to_string();
            assert!(error.contains(expected), "{text}\n  gave: {error}\n  wanted: {expected}");
        }
    }

    #[test]
    fn a_byte_order_mark_is_read_past_and_long_text_refused() {
        let scenario =
            Scenario::from_json("\u{feff}{\"format\": \"locklab/2\", \"name\": \"from an editor\"}").unwrap();
        assert_eq!(scenario.name, "from an editor");
        let long = format!(r#"{{"format": "locklab/2", "name": "{}"}}"#, "x".repeat(MAX_NAME_CHARS + 1));
        let error = Scenario::from_json(&long).expect_err("too long").to_string();
        assert_eq!(
            error,
            format!("name: is {} characters long; at most {MAX_NAME_CHARS} are allowed", MAX_NAME_CHARS + 1)
        );
    }

    #[test]
    fn every_fault_field_is_listed_and_set_by_name() {
        for kind in FAULT_KINDS {
            let fault = Fault::template(kind, 1_000).expect("a template per kind");
            let fields = fault.fields();
            assert_eq!(fields.first(), Some(&("at_ms", FieldValue::Ms(1_000))), "{kind}: at_ms first");
            for (name, value) in &fields {
                assert_eq!(fault.with_field(name, *value).as_ref(), Some(&fault), "{kind}.{name} set to itself");
            }
            assert_eq!(fault.with_field("nothing", FieldValue::Ms(1)), None, "{kind} has no such field");
        }
        let pause = Fault::template("gc_pause", 0).expect("a kind");
        let longer = pause.with_field("duration_ms", FieldValue::Ms(5_000)).expect("a duration");
        assert_eq!(longer.fields()[2], ("duration_ms", FieldValue::Ms(5_000)));
        assert_eq!(pause.with_field("duration_ms", FieldValue::Flag(true)), None, "a flag is not a duration");
    }

    #[test]
    fn the_contract_example_loads_and_round_trips() {
        let text = include_str!("../tests/fixtures/contract-example.json");
        let scenario = Scenario::from_json(text).unwrap();
        assert_eq!(scenario.seed, 7);
        assert_eq!(scenario.strategy_settings().len(), 6);
        let again = Scenario::from_json(&scenario.to_json()).unwrap();
        assert_eq!(scenario, again);
    }

    /// A fault read as faults were read before [`RawValue`]: its object as a
    /// JSON map, read by serde's derive under its kind.
    #[derive(Debug)]
    struct DerivedFault(Fault);

    impl<'de> Deserialize<'de> for DerivedFault {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Visitor;
            impl<'de> serde::de::Visitor<'de> for Visitor {
                type Value = serde_json::Map<String, serde_json::Value>;
                fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                    formatter.write_str("a fault, as an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                    use serde::de::Error;
                    let mut fields = serde_json::Map::new();
                    while let Some((key, value)) = map.next_entry::<String, serde_json::Value>()? {
                        if fields.contains_key(&key) {
                            return Err(A::Error::custom(format!(".{}{FIELD_MARK}is given twice", unmarked(&key))));
                        }
                        fields.insert(key, value);
                    }
                    Ok(fields)
                }
            }
            use serde::de::Error;
            let mut fields = deserializer.deserialize_map(Visitor)?;
            let kind = match fields.remove("kind") {
                Some(serde_json::Value::String(kind)) => kind,
                Some(other) => {
                    return Err(D::Error::custom(format!(".kind{FIELD_MARK}must be a string, found {other}")));
                }
                None => return Err(D::Error::custom(format!("{FIELD_MARK}missing field `kind`"))),
            };
            let by_kind = serde_json::Value::Object(
                std::iter::once((kind.clone(), serde_json::Value::Object(fields.clone()))).collect(),
            );
            serde_json::from_value::<FaultByKind>(by_kind).map(|fault| DerivedFault(fault.into())).map_err(|error| {
                let field = derived_faulty_field(&kind, &fields).map(|field| format!(".{field}")).unwrap_or_default();
                D::Error::custom(format!("{field}{FIELD_MARK}{error}"))
            })
        }
    }

    /// The fault reader gives what serde's derive over a JSON map gave, fault
    /// or error word for word (its place included), for every kind with
    /// each field left out, given twice, unknown, or holding each kind of
    /// JSON value, and for kinds that are no kind.
    #[test]
    fn faults_read_as_serde_derive_read_them() {
        let values = [
            "null",
            "true",
            "false",
            "0",
            "-0",
            "7",
            "-5",
            "1.5",
            "-2.5",
            "5.0",
            "1e30",
            "18446744073709551615",
            "9223372036854775808",
            "-9223372036854775808",
            "\"a\"",
            "\"holder\"",
            "\"redis\"",
            "\"redis-1\"",
            "\"zz\"",
            "\"d\"",
            "\"x\\u001fy\"",
            "[]",
            "[\"a\"]",
            "[\"a\", \"redis\"]",
            "[\"a\", 5]",
            "[5, \"a\"]",
            "[\"a\", \"b\", \"c\"]",
            "[\"a\", \"zz\", 1]",
            "{}",
            "{\"b\": 1, \"a\": [1.5, \"x\"], \"b\": null}",
        ];
        let mut documents = Vec::new();
        for kind in FAULT_KINDS {
            let template = Fault::template(kind, 5).expect("every kind has a template");
            let fields: Vec<(String, String)> = serde_json::to_value(&template)
                .expect("a fault is JSON")
                .as_object()
                .expect("an object")
                .iter()
                .map(|(key, value)| (key.clone(), value.to_string()))
                .collect();
            let object = |fields: &[(String, String)]| {
                let entries: Vec<String> = fields.iter().map(|(key, value)| format!("\"{key}\": {value}")).collect();
                format!("{{{}}}", entries.join(", "))
            };
            documents.push(object(&fields));
            let reversed: Vec<(String, String)> = fields.iter().rev().cloned().collect();
            documents.push(object(&reversed));
            let declared: Vec<&str> =
                FAULT_FIELDS[FAULT_KINDS.iter().position(|known| *known == kind).unwrap()].to_vec();
            for field in declared.iter().copied().chain(["kind"]) {
                let without: Vec<(String, String)> = fields.iter().filter(|(key, _)| key != field).cloned().collect();
                documents.push(object(&without));
                for value in values {
                    let mut changed = without.clone();
                    changed.push((field.to_owned(), value.to_owned()));
                    documents.push(object(&changed));
                    changed.insert(0, ("zzz".to_owned(), value.to_owned()));
                    documents.push(object(&changed));
                }
                let mut twice = fields.clone();
                twice.push((field.to_owned(), "1".to_owned()));
                documents.push(object(&twice));
            }
            for unknown in ["aaa", "zzz", "x\\u001fy", "at_mss"] {
                let mut more = fields.clone();
                more.push((unknown.to_owned(), "1".to_owned()));
                documents.push(object(&more));
                more.push(("at_ms".to_owned(), "\"soon\"".to_owned()));
                documents.push(object(&more));
            }
        }
        documents.push("{\"kind\": \"gc_paws\", \"at_ms\": 5}".to_owned());
        documents.push("{\"kind\": \"gc_paws\", \"at_ms\": \"x\"}".to_owned());
        documents.push("{\"kind\": [\"gc_pause\"]}".to_owned());
        documents.push("{}".to_owned());
        documents.extend(
            ["[]", "5", "\"gc_pause\"", "null", "{\"kind\": \"gc_pause\", \"at_ms\": 5,}", "{\"kind\": 1e999}"]
                .map(String::from),
        );
        for document in &documents {
            let text = format!("[{document}]");
            let read = serde_json::from_str::<Vec<Fault>>(&text).map_err(|error| error.to_string());
            let derived = serde_json::from_str::<Vec<DerivedFault>>(&text)
                .map(|faults| faults.into_iter().map(|fault| fault.0).collect::<Vec<Fault>>())
                .map_err(|error| error.to_string());
            assert_eq!(read, derived, "{text}");
        }
        assert!(documents.len() > 1000, "{} documents", documents.len());
    }
}
