//! How the format's word-valued enums (`"skip_locked"`, `"at_risk"`, …) are
//! read: by one reader that finds the word in the enum's list of names, as
//! serde's derive reads a unit variant (a string, or a map of the name to
//! `null`; the same errors), but shared: the derive wrote that reader again
//! for each enum, a kilobyte of wasm each on every page that reads a
//! scenario. Serialization stays derived; a test holds each list to it
//! (`tests/by_name.rs`).

use serde::Deserializer;
use serde::de::{self, DeserializeSeed, EnumAccess, Unexpected, VariantAccess, Visitor};
use std::fmt;

/// The index in `names` of the unit variant `deserializer` holds.
pub(crate) fn read<'de, D: Deserializer<'de>>(
    deserializer: D,
    name: &'static str,
    names: &'static [&'static str],
) -> Result<usize, D::Error> {
    deserializer.deserialize_enum(name, names, Unit { name, names })
}

struct Unit {
    name: &'static str,
    names: &'static [&'static str],
}

impl<'de> Visitor<'de> for Unit {
    type Value = usize;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "enum {}", self.name)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<usize, A::Error> {
        let (index, variant) = data.variant_seed(Name(self.names))?;
        variant.unit_variant()?;
        Ok(index)
    }
}

/// A variant's name (or index), as the derive's field visitor reads it.
struct Name(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Name {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

/// What the derive says a variant index must be.
struct IndexBelow(usize);

impl de::Expected for IndexBelow {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "variant index 0 <= i < {}", self.0)
    }
}

impl<'de> Visitor<'de> for Name {
    type Value = usize;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("variant identifier")
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<usize, E> {
        match usize::try_from(value) {
            Ok(index) if index < self.0.len() => Ok(index),
            _ => Err(E::invalid_value(Unexpected::Unsigned(value), &IndexBelow(self.0.len()))),
        }
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<usize, E> {
        self.0.iter().position(|name| *name == value).ok_or_else(|| E::unknown_variant(value, self.0))
    }

    fn visit_bytes<E: de::Error>(self, value: &[u8]) -> Result<usize, E> {
        self.0
            .iter()
            .position(|name| name.as_bytes() == value)
            .ok_or_else(|| E::unknown_variant(&String::from_utf8_lossy(value), self.0))
    }
}

/// Reads a unit-only enum by the names its derived `Serialize` writes, listed
/// here in the variants' order: `by_name!(DbWait { Block = "block", … })`.
/// It also lists the pairs, for the test that holds the names to what serde
/// writes (`tests/by_name.rs`).
macro_rules! by_name {
    ($type:ident { $( $variant:ident = $name:literal ),+ $(,)? }) => {
        impl<'de> serde::Deserialize<'de> for $type {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                const NAMES: &[&str] = &[$( $name ),+];
                let index = $crate::by_name::read(deserializer, stringify!($type), NAMES)?;
                [$( $type::$variant ),+]
                    .into_iter()
                    .nth(index)
                    .ok_or_else(|| <D::Error as serde::de::Error>::custom("a variant index out of range"))
            }
        }

        impl $type {
            /// Each variant with the name it is read by (for the test that
            /// holds the names to what serde writes; no page calls it).
            #[doc(hidden)]
            #[allow(dead_code)]
            pub fn by_name() -> Vec<($type, &'static str)> {
                vec![$( ($type::$variant, $name) ),+]
            }
        }
    };
}
pub(crate) use by_name;
