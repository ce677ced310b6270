//! The faults: data appended to a scenario, each kind declared once in
//! `faults!`, read field by field so an error names its field, and said in
//! words for the findings and the figures.

use super::error::{FIELD_MARK, unmarked};
use super::world::{World, is_false};
use crate::format::seconds;
use crate::ids::{Party, RedisNodeId};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

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
        pub(super) enum FaultByKind {
            $( $variant { $( $(#[$field_meta])* $field: $kind ),* } ),*
        }

        /// How many fault kinds there are: [`FAULT_KINDS`]'s length, so a
        /// kind added here and not listed there fails to compile.
        pub(super) const FAULT_KIND_COUNT: usize = [$( stringify!($variant) ),*].len();

        /// Each kind's fields, in the order it declares them, by the kind's
        /// place in [`FAULT_KINDS`]: what an unknown field's error lists.
        pub(super) const FAULT_FIELDS: [&[&str]; FAULT_KIND_COUNT] = [$( &[$( stringify!($field) ),*] ),*];

        /// The variants as written, in order, for the test that holds
        /// [`FAULT_KINDS`] to them.
        #[cfg(test)]
        pub(super) const FAULT_VARIANTS: [&str; FAULT_KIND_COUNT] = [$( stringify!($variant) ),*];

        /// A fault's time field, borrowed as the fault is (shared or mutable): the
/// one list of every kind's `at_ms` that [`Fault::at_ms`] and
/// [`Fault::at_ms_mut`] both read.
macro_rules! at_ms_of {
    ($fault:expr) => {
        match $fault {
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
            | Fault::DbSlow { at_ms, .. } => at_ms,
        }
    };
}

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
        pub(super) fn derived_faulty_field(kind: &str, fields: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
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
pub(super) fn reads_as<T: serde::de::DeserializeOwned>(value: &serde_json::Value) -> bool {
    serde_json::from_value::<T>(value.clone()).is_ok()
}

/// `GcPause` → `gc_pause`, as serde's `rename_all = "snake_case"` spells it.
#[cfg(test)]
pub(super) fn snake_case(name: &str) -> String {
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

/// Reads the fault list, counting, so that an error names its fault.
pub(super) fn deserialize_faults<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Fault>, D::Error> {
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
pub(super) enum RawValue {
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
pub(super) fn read_fault<E: serde::de::Error>(kind: &str, fields: &[(String, RawValue)]) -> Result<Fault, E> {
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
pub(super) fn faulty_field<E: serde::de::Error>(kind: &str, fields: &[(String, RawValue)]) -> Option<String> {
    let declared = Fault::template(kind, 0)?.fields();
    if let Some((unknown, _)) = fields.iter().find(|(key, _)| !declared.iter().any(|(name, _)| name == key)) {
        return Some(unmarked(unknown));
    }
    declared
        .iter()
        .find(|(name, like)| fields.iter().any(|(key, raw)| key == name && read_field::<E>(raw, *like).is_err()))
        .map(|(name, _)| (*name).to_owned())
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

    /// When the fault strikes.
    pub fn at_ms(&self) -> u64 {
        *at_ms_of!(self)
    }

    /// When the fault strikes, to move it (the explorer's shrinking does).
    pub fn at_ms_mut(&mut self) -> &mut u64 {
        at_ms_of!(self)
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

    /// How long a fault that holds for a while lasts (a delay, a partition,
    /// a slowed database), and whether it is on the network; `None` for a
    /// fault that strikes once.
    pub fn window_ms(&self) -> Option<(u64, bool)> {
        match self {
            Fault::NetworkDelay { duration_ms, .. } | Fault::Partition { duration_ms, .. } => {
                Some((*duration_ms, true))
            }
            Fault::DbSlow { duration_ms, .. } => Some((*duration_ms, false)),
            Fault::OomKill { .. }
            | Fault::HostLoss { .. }
            | Fault::GcPause { .. }
            | Fault::ClockJump { .. }
            | Fault::ClockDrift { .. }
            | Fault::RedisRestart { .. }
            | Fault::RedisFailover { .. }
            | Fault::ConsensusLeaderLoss { .. } => None,
        }
    }

    /// How long a fault on the network lasts (a partition, a delay); `None`
    /// for any other fault.
    pub fn network_duration_ms(&self) -> Option<u64> {
        self.window_ms().filter(|(_, on_the_network)| *on_the_network).map(|(duration_ms, _)| duration_ms)
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
        let down_ms = match self {
            Fault::RedisRestart { down_ms, .. } => *down_ms,
            Fault::OomKill { .. }
            | Fault::HostLoss { .. }
            | Fault::GcPause { .. }
            | Fault::ClockJump { .. }
            | Fault::ClockDrift { .. }
            | Fault::NetworkDelay { .. }
            | Fault::Partition { .. }
            | Fault::RedisFailover { .. }
            | Fault::ConsensusLeaderLoss { .. }
            | Fault::DbSlow { .. } => return self.to_string(),
        };
        match back_after_ms {
            Some(back) if back > down_ms => format!(
                "{self}, and back only after {}: a restarted Redlock node stays out one lock TTL more (the delayed restart)",
                seconds(back)
            ),
            Some(_) | None => self.to_string(),
        }
    }
}

/// A statement's time while the database is slowed. Kept out of line: the
/// compiler otherwise worked the product out on every statement and arrival
/// and threw it away unless a `db_slow` fault was in force.
#[cold]
#[inline(never)]
pub fn slowed_ms(base_ms: u64, factor: f64) -> u64 {
    // Deterministic everywhere: one IEEE multiplication, truncated;
    // validation bounds the factor to 1..=1000, so the product fits.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let slowed = (base_ms as f64 * factor) as u64;
    slowed
}
