//! A small ordered map for the simulation's hot tables (in-flight requests,
//! statements, sessions, background queries).
//!
//! These tables hold a handful of entries at a time, keyed by ids that are
//! handed out in increasing order, and are touched on nearly every message. A
//! sorted `Vec` of pairs answers them with a short binary search and no node
//! allocation, where a `BTreeMap` spent a tenth of a run's time. Iteration is
//! in key order, as the `BTreeMap`'s was, so nothing that decides changes.
//!
//! `RunMap` is the same idea for state kept per run (the strategies'), whose
//! ids are dense from 0: a vector indexed by the id.

use crate::ids::RunId;

/// An ordered map on a sorted vector. Invariant: keys are strictly increasing.
#[derive(Clone, Debug)]
pub(crate) struct Table<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for Table<K, V> {
    fn default() -> Self {
        Table { entries: Vec::new() }
    }
}

impl<K: Ord + Copy, V> Table<K, V> {
    pub(crate) fn new() -> Table<K, V> {
        Table::default()
    }

    /// An empty table with room for `capacity` entries before it allocates again.
    pub(crate) fn with_capacity(capacity: usize) -> Table<K, V> {
        Table { entries: Vec::with_capacity(capacity) }
    }

    fn find(&self, key: &K) -> Result<usize, usize> {
        // Ids usually arrive in order (a new one goes at the end), and the
        // oldest entry is the one asked for most (the other services' first
        // connection): check both ends before searching.
        match (self.entries.first(), self.entries.last()) {
            (Some((first, _)), _) if first == key => Ok(0),
            (_, Some((last, _))) if last < key => Err(self.entries.len()),
            _ => self.entries.binary_search_by(|(probe, _)| probe.cmp(key)),
        }
    }

    /// Inserts or replaces `key`'s value, returning the old one.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(index) => Some(std::mem::replace(&mut self.entries[index].1, value)),
            Err(index) => {
                self.entries.insert(index, (key, value));
                debug_assert!(self.entries.windows(2).all(|pair| pair[0].0 < pair[1].0), "keys out of order");
                None
            }
        }
    }

    /// Every entry, in key order.
    pub(crate) fn entries(&self) -> &[(K, V)] {
        &self.entries
    }

    pub(crate) fn remove(&mut self, key: &K) -> Option<V> {
        let index = self.find(key).ok()?;
        Some(self.entries.remove(index).1)
    }

    pub(crate) fn get(&self, key: &K) -> Option<&V> {
        let index = self.find(key).ok()?;
        Some(&self.entries[index].1)
    }

    pub(crate) fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let index = self.find(key).ok()?;
        Some(&mut self.entries[index].1)
    }

    pub(crate) fn contains_key(&self, key: &K) -> bool {
        self.find(key).is_ok()
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Empties the table, giving its values in key order.
    pub(crate) fn take_values(&mut self) -> Vec<V> {
        std::mem::take(&mut self.entries).into_iter().map(|(_, value)| value).collect()
    }
}

/// A map from run ids to values: a vector indexed by the id. Run ids are
/// handed out densely from 0, one per attempt, and strategies look theirs up
/// on every reply and timer, so an index beats a tree; iteration (were it
/// needed) would be in id order, as the `BTreeMap`s it replaces gave.
#[derive(Clone, Debug)]
pub(crate) struct RunMap<V> {
    slots: Vec<Option<V>>,
}

impl<V> Default for RunMap<V> {
    fn default() -> Self {
        RunMap { slots: Vec::new() }
    }
}

impl<V> RunMap<V> {
    /// Room for a typical run's attempts (as `Sim::runs`), so it rarely grows mid-run.
    pub(crate) fn new() -> RunMap<V> {
        RunMap { slots: Vec::with_capacity(128) }
    }

    fn index(run: &RunId) -> usize {
        usize::try_from(run.0).unwrap_or(usize::MAX)
    }

    /// Inserts or replaces `run`'s value, returning the old one.
    pub(crate) fn insert(&mut self, run: RunId, value: V) -> Option<V> {
        let index = RunMap::<V>::index(&run);
        if index >= self.slots.len() {
            self.slots.resize_with(index + 1, || None);
        }
        self.slots[index].replace(value)
    }

    pub(crate) fn get(&self, run: &RunId) -> Option<&V> {
        self.slots.get(RunMap::<V>::index(run))?.as_ref()
    }

    pub(crate) fn get_mut(&mut self, run: &RunId) -> Option<&mut V> {
        self.slots.get_mut(RunMap::<V>::index(run))?.as_mut()
    }

    pub(crate) fn remove(&mut self, run: &RunId) -> Option<V> {
        self.slots.get_mut(RunMap::<V>::index(run))?.take()
    }
}

#[cfg(test)]
mod tests {
    use super::{RunId, RunMap, Table};
    use std::collections::BTreeMap;

    /// The next value of a fixed xorshift walk, for the tables' reference tests.
    fn next(state: &mut u32) -> u32 {
        *state ^= *state << 13;
        *state ^= *state >> 17;
        *state ^= *state << 5;
        *state
    }

    #[test]
    fn run_map_behaves_as_a_map() {
        let mut map = RunMap::new();
        let mut reference = BTreeMap::new();
        let mut state = 0x9e37_79b9_u32;
        for _ in 0..2_000u32 {
            let draw = next(&mut state);
            let run = RunId(draw % 64);
            match draw % 3 {
                0 => assert_eq!(map.insert(run, draw), reference.insert(run, draw)),
                1 => assert_eq!(map.remove(&run), reference.remove(&run)),
                _ => assert_eq!(map.get(&run), reference.get(&run)),
            }
            if let Some(value) = map.get_mut(&run) {
                *value += 1;
                *reference.get_mut(&run).expect("both hold the run") += 1;
            }
        }
    }

    #[test]
    fn behaves_as_an_ordered_map() {
        // A fixed pseudo-random walk of inserts and removes, mirrored in a BTreeMap.
        let mut table = Table::new();
        let mut reference = BTreeMap::new();
        let mut state = 0x2545_f491_u32;
        for step in 0..5_000u32 {
            let draw = next(&mut state);
            let key = draw % 64;
            if draw.is_multiple_of(3) {
                assert_eq!(table.remove(&key), reference.remove(&key), "step {step}");
            } else {
                assert_eq!(table.insert(key, step), reference.insert(key, step), "step {step}");
            }
            assert_eq!(table.len(), reference.len());
            assert_eq!(table.get(&key), reference.get(&key));
            assert_eq!(table.contains_key(&(key + 1)), reference.contains_key(&(key + 1)));
        }
        if let Some(value) = table.get_mut(&0) {
            *value = 7;
        }
        assert_eq!(table.take_values(), {
            if let Some(value) = reference.get_mut(&0) {
                *value = 7;
            }
            reference.into_values().collect::<Vec<_>>()
        });
        assert_eq!(table.len(), 0);
    }
}
