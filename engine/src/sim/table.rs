//! The simulation's tables: `HotTable`, the engine's sorted-vector map
//! (`crate::table`) looking at both ends first, for its hot ones, and
//! `RunMap` for state kept per run (the strategies'), whose ids are dense
//! from 0: a vector indexed by the id.

use crate::ids::RunId;
use crate::table::Table;

/// The simulation's hot tables (in-flight requests, statements, sessions,
/// background queries): touched on nearly every message, with ids that
/// mostly arrive in order.
pub(crate) type HotTable<K, V> = Table<K, V, true>;

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
    use super::{RunId, RunMap};
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
        walk::<true>();
        walk::<false>();
    }

    /// A fixed pseudo-random walk of inserts and removes, mirrored in a BTreeMap.
    fn walk<const ENDS_FIRST: bool>() {
        let mut table: crate::table::Table<u32, u32, ENDS_FIRST> = crate::table::Table::new();
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
