//! How the recipe's four tagged steps (where the lock lives, how it is
//! taken, the check before a write, the renewal) are read: each as one
//! object of every field its variants have, then the variant its tag names,
//! which refuses a field it does not have and requires the fields it does.
//! The documents accepted, and their meaning, are those of serde's
//! internally tagged form; serde's derive of that form buffers the object
//! and reads it once per variant, which cost every page that reads a
//! scenario several kilobytes of wasm per step.

use super::{
    Check, DbWait, LockStrength, Place, Renewal, Take, Value, block, default_drift_factor, default_nodes, for_update,
    yes,
};
use serde::de::Error;
use serde::{Deserialize, Deserializer};

/// A field that is present: `null` is refused as its type refuses it, not
/// read as absent.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

/// Refuses a field the variant does not have; `given` is each field of the
/// step's object with whether the document has it.
fn only<E: Error>(given: &[(&'static str, bool)], allowed: &'static [&'static str]) -> Result<(), E> {
    match given.iter().find(|(name, is)| *is && !allowed.contains(name)) {
        Some((name, _)) => Err(E::unknown_field(name, allowed)),
        None => Ok(()),
    }
}

/// A field the variant requires.
fn need<T, E: Error>(value: Option<T>, name: &'static str) -> Result<T, E> {
    value.ok_or_else(|| E::missing_field(name))
}

enum PlaceKind {
    Redis,
    RedisMajority,
    PostgresRow,
    Etcd,
    Nowhere,
}

crate::by_name::by_name!(PlaceKind { Redis = "redis", RedisMajority = "redis_majority", PostgresRow = "postgres_row", Etcd = "etcd", Nowhere = "nowhere" });

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlaceFields {
    on: PlaceKind,
    #[serde(default, deserialize_with = "present")]
    nodes: Option<u8>,
    #[serde(default, deserialize_with = "present")]
    drift_factor: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    delayed_restart: Option<bool>,
}

impl<'de> Deserialize<'de> for Place {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let fields = PlaceFields::deserialize(deserializer)?;
        let given = [
            ("nodes", fields.nodes.is_some()),
            ("drift_factor", fields.drift_factor.is_some()),
            ("delayed_restart", fields.delayed_restart.is_some()),
        ];
        let allowed: &'static [&'static str] = match fields.on {
            PlaceKind::RedisMajority => &["nodes", "drift_factor", "delayed_restart"],
            PlaceKind::Redis | PlaceKind::PostgresRow | PlaceKind::Etcd | PlaceKind::Nowhere => &[],
        };
        only(&given, allowed)?;
        Ok(match fields.on {
            PlaceKind::Redis => Place::Redis,
            PlaceKind::RedisMajority => Place::RedisMajority {
                nodes: fields.nodes.unwrap_or_else(default_nodes),
                drift_factor: fields.drift_factor.unwrap_or_else(default_drift_factor),
                delayed_restart: fields.delayed_restart.unwrap_or_else(yes),
            },
            PlaceKind::PostgresRow => Place::PostgresRow,
            PlaceKind::Etcd => Place::Etcd,
            PlaceKind::Nowhere => Place::Nowhere,
        })
    }
}

enum TakeKind {
    SetNxPx,
    SetNxEx,
    SetnxThenExpire,
    GetThenSet,
    SelectForUpdate,
    LeaseAndCreate,
    Nothing,
}

crate::by_name::by_name!(TakeKind { SetNxPx = "set_nx_px", SetNxEx = "set_nx_ex", SetnxThenExpire = "setnx_then_expire", GetThenSet = "get_then_set", SelectForUpdate = "select_for_update", LeaseAndCreate = "lease_and_create", Nothing = "nothing" });

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TakeFields {
    with: TakeKind,
    #[serde(default, deserialize_with = "present")]
    value: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    ttl_ms: Option<u64>,
    #[serde(default, deserialize_with = "present")]
    ttl_s: Option<u64>,
    #[serde(default, deserialize_with = "present")]
    lock_strength: Option<LockStrength>,
    #[serde(default, deserialize_with = "present")]
    wait: Option<DbWait>,
    #[serde(default, deserialize_with = "present")]
    lock_timeout_ms: Option<u64>,
    #[serde(default, deserialize_with = "present")]
    idle_in_transaction_timeout_ms: Option<u64>,
}

impl<'de> Deserialize<'de> for Take {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let fields = TakeFields::deserialize(deserializer)?;
        let given = [
            ("value", fields.value.is_some()),
            ("ttl_ms", fields.ttl_ms.is_some()),
            ("ttl_s", fields.ttl_s.is_some()),
            ("lock_strength", fields.lock_strength.is_some()),
            ("wait", fields.wait.is_some()),
            ("lock_timeout_ms", fields.lock_timeout_ms.is_some()),
            ("idle_in_transaction_timeout_ms", fields.idle_in_transaction_timeout_ms.is_some()),
        ];
        let allowed: &'static [&'static str] = match fields.with {
            TakeKind::SetNxPx | TakeKind::GetThenSet => &["value", "ttl_ms"],
            TakeKind::SetNxEx | TakeKind::SetnxThenExpire => &["value", "ttl_s"],
            TakeKind::SelectForUpdate => {
                &["lock_strength", "wait", "lock_timeout_ms", "idle_in_transaction_timeout_ms"]
            }
            TakeKind::LeaseAndCreate => &["ttl_ms"],
            TakeKind::Nothing => &[],
        };
        only(&given, allowed)?;
        Ok(match fields.with {
            TakeKind::SetNxPx => {
                Take::SetNxPx { value: need(fields.value, "value")?, ttl_ms: need(fields.ttl_ms, "ttl_ms")? }
            }
            TakeKind::SetNxEx => {
                Take::SetNxEx { value: need(fields.value, "value")?, ttl_s: need(fields.ttl_s, "ttl_s")? }
            }
            TakeKind::SetnxThenExpire => {
                Take::SetnxThenExpire { value: need(fields.value, "value")?, ttl_s: need(fields.ttl_s, "ttl_s")? }
            }
            TakeKind::GetThenSet => {
                Take::GetThenSet { value: need(fields.value, "value")?, ttl_ms: need(fields.ttl_ms, "ttl_ms")? }
            }
            TakeKind::SelectForUpdate => Take::SelectForUpdate {
                lock_strength: fields.lock_strength.unwrap_or_else(for_update),
                wait: fields.wait.unwrap_or_else(block),
                lock_timeout_ms: fields.lock_timeout_ms.unwrap_or_default(),
                idle_in_transaction_timeout_ms: fields.idle_in_transaction_timeout_ms.unwrap_or_default(),
            },
            TakeKind::LeaseAndCreate => Take::LeaseAndCreate { ttl_ms: need(fields.ttl_ms, "ttl_ms")? },
            TakeKind::Nothing => Take::Nothing,
        })
    }
}

enum CheckKind {
    Nothing,
    LeaseTimeLeft,
    GetAndCompare,
}

crate::by_name::by_name!(CheckKind { Nothing = "nothing", LeaseTimeLeft = "lease_time_left", GetAndCompare = "get_and_compare" });

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckFields {
    check: CheckKind,
    #[serde(default, deserialize_with = "present")]
    at_least_ms: Option<u64>,
}

impl<'de> Deserialize<'de> for Check {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let fields = CheckFields::deserialize(deserializer)?;
        let given = [("at_least_ms", fields.at_least_ms.is_some())];
        let allowed: &'static [&'static str] = match fields.check {
            CheckKind::LeaseTimeLeft => &["at_least_ms"],
            CheckKind::Nothing | CheckKind::GetAndCompare => &[],
        };
        only(&given, allowed)?;
        Ok(match fields.check {
            CheckKind::Nothing => Check::Nothing,
            CheckKind::LeaseTimeLeft => Check::LeaseTimeLeft { at_least_ms: need(fields.at_least_ms, "at_least_ms")? },
            CheckKind::GetAndCompare => Check::GetAndCompare,
        })
    }
}

enum RenewalKind {
    None,
    CompareAndPexpire,
    Expire,
    KeepAlive,
}

crate::by_name::by_name!(RenewalKind { None = "none", CompareAndPexpire = "compare_and_pexpire", Expire = "expire", KeepAlive = "keep_alive" });

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RenewalFields {
    with: RenewalKind,
    #[serde(default, deserialize_with = "present")]
    every_ms: Option<u64>,
}

impl<'de> Deserialize<'de> for Renewal {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let fields = RenewalFields::deserialize(deserializer)?;
        let given = [("every_ms", fields.every_ms.is_some())];
        let allowed: &'static [&'static str] = match fields.with {
            RenewalKind::CompareAndPexpire | RenewalKind::Expire | RenewalKind::KeepAlive => &["every_ms"],
            RenewalKind::None => &[],
        };
        only(&given, allowed)?;
        Ok(match fields.with {
            RenewalKind::None => Renewal::None,
            RenewalKind::CompareAndPexpire => {
                Renewal::CompareAndPexpire { every_ms: need(fields.every_ms, "every_ms")? }
            }
            RenewalKind::Expire => Renewal::Expire { every_ms: need(fields.every_ms, "every_ms")? },
            RenewalKind::KeepAlive => Renewal::KeepAlive { every_ms: need(fields.every_ms, "every_ms")? },
        })
    }
}
