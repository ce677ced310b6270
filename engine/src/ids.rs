//! Newtype identifiers for everything the simulation names: instances, Redis
//! nodes, runs, tokens, DB sessions, periods and messages.
//!
//! They are small fixed-width integers, never `usize`, so that the same scenario
//! lays out the same way on 64-bit hosts and on 32-bit wasm.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The most instances a world may have (`a` … `h`).
pub const MAX_INSTANCES: u8 = 8;
/// The most Redis nodes a world may have (`redis-1` … `redis-5`).
pub const MAX_REDIS_NODES: u8 = 5;

/// One scheduler instance: `a`, `b`, `c`, …
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct InstanceId(pub u8);

impl InstanceId {
    /// The instance's letter, as people and scenario files name it.
    pub fn letter(self) -> char {
        char::from(b'a' + self.0)
    }
    /// Position of the instance in per-instance tables.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

impl fmt::Display for InstanceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

/// One Redis node, zero-based: `RedisNodeId(0)` is `redis-1`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct RedisNodeId(pub u8);

impl RedisNodeId {
    /// Position of the node in per-node tables.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// One attempt by one instance to do one period's job, from its first try at
/// the lock to its end; numbered in the order attempts begin.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub struct RunId(pub u32);

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "run {}", self.0)
    }
}

/// A fencing token: a number the lock service hands out that only goes up
/// (unless the service forgets, which is the point of the failover scenario).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub struct Token(pub u64);

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A PostgreSQL backend session (one client connection).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub struct SessionId(pub u32);

/// A cron period: period `k` is due at `k × cron_period_ms` on the instance's
/// own clock.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub struct Period(pub u32);

/// Which stored report a period's run writes: its own (`per_period` output)
/// or the one report of the day that every period refreshes (`daily`, the
/// seed's `generate-daily-report`). Day `d` is the `d`-th day since the day
/// `clock_origin` falls on.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportOf {
    Period(Period),
    Day(u32),
}

impl fmt::Display for ReportOf {
    /// The report's folder in object storage.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportOf::Period(period) => write!(f, "reports/{}", period.0),
            ReportOf::Day(0) => f.write_str("reports/daily"),
            ReportOf::Day(day) => write!(f, "reports/daily+{day}"),
        }
    }
}

/// A message on the simulated network.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub struct MessageId(pub u32);

/// A consensus-store lease.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub struct LeaseId(pub u32);

/// Everything that can send or receive a message, own a clock or suffer a fault.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Party {
    Instance(InstanceId),
    Redis(RedisNodeId),
    /// The replica of `redis-1`, promoted to primary by a failover.
    RedisReplica,
    Db,
    Storage,
    Slack,
    Consensus,
}

impl Party {
    /// Parses a party's name as scenario files write it.
    pub fn parse(name: &str) -> Option<Party> {
        match name {
            "db" => return Some(Party::Db),
            "storage" => return Some(Party::Storage),
            "slack" => return Some(Party::Slack),
            "consensus" => return Some(Party::Consensus),
            "redis-1-replica" => return Some(Party::RedisReplica),
            _ => {}
        }
        if let Some(number) = name.strip_prefix("redis-") {
            let number: u8 = number.parse().ok()?;
            if (1..=MAX_REDIS_NODES).contains(&number) {
                return Some(Party::Redis(RedisNodeId(number - 1)));
            }
            return None;
        }
        let mut letters = name.chars();
        match (letters.next(), letters.next()) {
            (Some(letter @ 'a'..='h'), None) => {
                Some(Party::Instance(InstanceId(u8::try_from(u32::from(letter) - u32::from('a')).ok()?)))
            }
            _ => None,
        }
    }

    /// The instance behind this party, if it is one.
    pub fn instance(self) -> Option<InstanceId> {
        match self {
            Party::Instance(id) => Some(id),
            Party::Redis(_) | Party::RedisReplica | Party::Db | Party::Storage | Party::Slack | Party::Consensus => {
                None
            }
        }
    }
}

impl fmt::Display for Party {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Party::Instance(id) => write!(f, "{id}"),
            Party::Redis(node) => write!(f, "redis-{}", node.0 + 1),
            Party::RedisReplica => f.write_str("redis-1-replica"),
            Party::Db => f.write_str("db"),
            Party::Storage => f.write_str("storage"),
            Party::Slack => f.write_str("slack"),
            Party::Consensus => f.write_str("consensus"),
        }
    }
}

impl Serialize for Party {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Party {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_name(deserializer, |name| Party::parse(name).ok_or_else(|| format!("unknown party `{name}`")))
    }
}

/// Reads a name and turns it into a value with `parse`. The refusal happens
/// inside the string's own deserialization, so serde_json places the error at
/// the string and the message's field path is the string's.
pub(crate) fn deserialize_name<'de, D, T, F>(deserializer: D, parse: F) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    F: FnOnce(&str) -> Result<T, String>,
{
    struct Name<F>(F);
    impl<'de, T, F: FnOnce(&str) -> Result<T, String>> serde::de::Visitor<'de> for Name<F> {
        type Value = T;
        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("a name")
        }
        fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<T, E> {
            (self.0)(name).map_err(E::custom)
        }
    }
    deserializer.deserialize_str(Name(parse))
}

impl Serialize for InstanceId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for InstanceId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Party::deserialize(deserializer)? {
            Party::Instance(id) => Ok(id),
            other @ Party::Redis(_)
            | other @ Party::RedisReplica
            | other @ Party::Db
            | other @ Party::Storage
            | other @ Party::Slack
            | other @ Party::Consensus => Err(serde::de::Error::custom(format!("`{other}` is not an instance"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn party_names_round_trip() {
        for name in ["a", "h", "redis-1", "redis-5", "redis-1-replica", "db", "storage", "slack", "consensus"] {
            let party = Party::parse(name).expect(name);
            assert_eq!(party.to_string(), name);
        }
        for bad in ["i", "redis-0", "redis-6", "redis", "A", "", "ab", "holder"] {
            assert_eq!(Party::parse(bad), None, "{bad} must not parse as one party");
        }
    }
}
