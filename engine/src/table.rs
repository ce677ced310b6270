//! A small ordered map on a sorted vector, for the engine's small tables:
//! the simulation's hot ones (in-flight requests, statements, sessions,
//! background queries) and the view's (the world at the cursor, the spans
//! still open while a timeline is built).
//!
//! These tables hold a handful of entries at a time, keyed by ids that are
//! mostly handed out in increasing order. A sorted `Vec` of pairs answers
//! them with a short binary search and no node allocation, where a
//! `BTreeMap` spent a tenth of a run's time, and it costs the browser build
//! far less code than a `BTreeMap` per key and value type. Iteration is in
//! key order, as a `BTreeMap`'s is, so nothing that decides changes.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;

/// An ordered map on a sorted vector. Invariant: keys are strictly increasing.
///
/// `ENDS_FIRST` tables look at both ends before searching: the simulation's
/// hot tables, whose ids mostly arrive in order (a new one goes at the end)
/// and whose oldest entry is the one asked for most (the other services'
/// first connection); it is worth 14% of a `db-lock` run's speed. The view's
/// tables are small and cold, and the check would cost the pages' wasm code
/// in every one of them, so they search at once (the default).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table<K, V, const ENDS_FIRST: bool = false> {
    entries: Vec<(K, V)>,
}

impl<K, V, const ENDS_FIRST: bool> Default for Table<K, V, ENDS_FIRST> {
    fn default() -> Self {
        Table { entries: Vec::new() }
    }
}

impl<K: Ord + Copy, V, const ENDS_FIRST: bool> Table<K, V, ENDS_FIRST> {
    pub fn new() -> Self {
        Table::default()
    }

    /// An empty table with room for `capacity` entries before it allocates again.
    pub fn with_capacity(capacity: usize) -> Self {
        Table { entries: Vec::with_capacity(capacity) }
    }

    fn find(&self, key: &K) -> Result<usize, usize> {
        if ENDS_FIRST {
            match (self.entries.first(), self.entries.last()) {
                (Some((first, _)), _) if first == key => return Ok(0),
                (_, Some((last, _))) if last < key => return Err(self.entries.len()),
                // The newest entry is the other one asked for most (an
                // instance's live run): found without a search.
                (_, Some((last, _))) if last == key => return Ok(self.entries.len() - 1),
                _ => {}
            }
        }
        self.entries.binary_search_by(|(probe, _)| probe.cmp(key))
    }

    /// Inserts or replaces `key`'s value, returning the old one.
    ///
    /// In a hot table a new key is nearly always above every key in it (ids
    /// are handed out in order): it goes on the end here, inlined into the
    /// caller, with no search and no call. The general case stays out of
    /// line. Inserting a request's reply slot through a call cost a short
    /// run half a percent of its instructions.
    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        if ENDS_FIRST && self.entries.last().is_none_or(|(last, _)| *last < key) {
            self.entries.push((key, value));
            return None;
        }
        self.insert_found(key, value)
    }

    /// [`Table::insert`] where the key's place must be looked for.
    fn insert_found(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(index) => Some(std::mem::replace(&mut self.entries[index].1, value)),
            Err(index) => {
                self.entries.insert(index, (key, value));
                debug_assert!(self.entries.windows(2).all(|pair| pair[0].0 < pair[1].0), "keys out of order");
                None
            }
        }
    }

    /// The value at `key`, inserted first if absent.
    pub fn get_or_insert(&mut self, key: K, value: V) -> &mut V {
        let index = match self.find(&key) {
            Ok(index) => index,
            Err(index) => {
                self.entries.insert(index, (key, value));
                index
            }
        };
        &mut self.entries[index].1
    }

    /// Every entry, in key order.
    pub fn entries(&self) -> &[(K, V)] {
        &self.entries
    }

    /// Entries in key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> {
        self.entries.iter().map(|(key, value)| (key, value))
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> {
        self.entries.iter().map(|(_, value)| value)
    }

    /// The entry with the greatest key.
    pub fn last(&self) -> Option<(&K, &V)> {
        self.entries.last().map(|(key, value)| (key, value))
    }

    /// The value at `key`, for a table whose newest entry is the one asked
    /// for most: that entry is looked at before anything else.
    pub fn get_newest_first(&self, key: &K) -> Option<&V> {
        match self.entries.last() {
            Some((last, value)) if last == key => Some(value),
            _ => self.get(key),
        }
    }

    /// [`Table::get_newest_first`], to change the value.
    pub fn get_mut_newest_first(&mut self, key: &K) -> Option<&mut V> {
        if self.entries.last().is_some_and(|(last, _)| last == key) {
            return self.entries.last_mut().map(|(_, value)| value);
        }
        self.get_mut(key)
    }

    pub fn remove(&mut self, key: &K) -> Option<V> {
        let index = self.find(key).ok()?;
        // The last entry (often a table's only one: an instance's one request
        // in flight) comes off without a shift, as `Vec::remove` calls
        // memmove even to move nothing; the engine removes an entry per reply.
        if index + 1 == self.entries.len() {
            return self.entries.pop().map(|(_, value)| value);
        }
        Some(self.entries.remove(index).1)
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&K, &V) -> bool) {
        self.entries.retain(|(key, value)| keep(key, value));
    }

    pub fn get(&self, key: &K) -> Option<&V> {
        let index = self.find(key).ok()?;
        Some(&self.entries[index].1)
    }

    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let index = self.find(key).ok()?;
        Some(&mut self.entries[index].1)
    }

    pub fn contains_key(&self, key: &K) -> bool {
        self.find(key).is_ok()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Empties the table, giving its entries in key order.
    pub fn take(&mut self) -> Vec<(K, V)> {
        std::mem::take(&mut self.entries)
    }

    /// Empties the table, giving its values in key order.
    pub fn take_values(&mut self) -> Vec<V> {
        self.take().into_iter().map(|(_, value)| value).collect()
    }
}

/// Entries in key order, as [`Table::iter`] gives them.
impl<'a, K: Ord + Copy, V, const ENDS_FIRST: bool> IntoIterator for &'a Table<K, V, ENDS_FIRST> {
    type Item = (&'a K, &'a V);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(|(key, value)| (key, value))
    }
}

/// Written as a JSON object, in key order, as a `BTreeMap` is.
impl<K: Ord + Copy + Serialize, V: Serialize, const ENDS_FIRST: bool> Serialize for Table<K, V, ENDS_FIRST> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

/// Read as serde reads a `BTreeMap`, in the same words ("expected a map"):
/// a key given twice keeps its last value.
impl<'de, K: Ord + Copy + Deserialize<'de>, V: Deserialize<'de>, const ENDS_FIRST: bool> Deserialize<'de>
    for Table<K, V, ENDS_FIRST>
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<K, V, const ENDS_FIRST: bool>(PhantomData<Table<K, V, ENDS_FIRST>>);
        impl<'de, K: Ord + Copy + Deserialize<'de>, V: Deserialize<'de>, const ENDS_FIRST: bool> serde::de::Visitor<'de>
            for Visitor<K, V, ENDS_FIRST>
        {
            type Value = Table<K, V, ENDS_FIRST>;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a map")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut table = Table::new();
                while let Some((key, value)) = map.next_entry()? {
                    table.insert(key, value);
                }
                Ok(table)
            }
        }
        deserializer.deserialize_map(Visitor(PhantomData))
    }
}
