//! The simulation's tables: `HotTable`, the engine's sorted-vector map
//! (`crate::table`) looking at both ends first, for its hot ones. (`RunMap`,
//! for state kept per run, is the strategies' vocabulary: `crate::vocab`.)

use crate::table::Table;

/// The simulation's hot tables (in-flight requests, statements, sessions,
/// background queries): touched on nearly every message, with ids that
/// mostly arrive in order.
pub(crate) type HotTable<K, V> = Table<K, V, true>;
