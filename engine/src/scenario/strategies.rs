//! The strategies a scenario runs, declared once (`StrategyId`), and each
//! one's settings as a document writes them.

use super::world::{World, is_true};
use crate::ids::{Party, RedisNodeId};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

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

impl Strategies {
    /// How many strategies it names.
    pub fn named(&self) -> usize {
        [
            self.naive.is_some(),
            self.fencing.is_some(),
            self.redlock.is_some(),
            self.db_lock.is_some(),
            self.unique_insert.is_some(),
            self.consensus.is_some(),
        ]
        .into_iter()
        .filter(|named| *named)
        .count()
    }
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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

crate::by_name::by_name!(NaiveRelease { Never = "never", Del = "del", CompareAndDelete = "compare_and_delete" });

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

/// The row lock a db-lock job takes, and what it does when the row is
/// locked: the recipe's words, one type for both (`crate::recipe` names
/// nothing of the scenario).
pub use crate::recipe::{DbWait, LockStrength};

/// `unique-insert` has no settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UniqueInsertSettings {}
