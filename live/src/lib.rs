//! Live mode: a scenario played for real on this machine. Real
//! `redis-server`s and a real PostgreSQL (throwaway ones, on loopback ports,
//! stopped at the end whatever happens), one OS process per instance running
//! the engine's own strategy code over real sockets, and the scenario's faults
//! as real signals (SIGKILL for an OOM kill, SIGSTOP/SIGCONT for a GC pause).
//!
//! The run is recorded as the engine's events, so the engine's report code
//! gives the verdict and a `locklab-log/1` document (marked `live`) carries
//! it. Time is scaled: the scenario's milliseconds run `time_scale` times
//! faster on the wall clock; the network between processes is not scaled.
//!
//! - [`coordinator`]: starts the servers and the instances, strikes the
//!   faults, plays storage and Slack, and collects what everyone reports.
//! - [`instance`]: one instance's process: cron, runs, the job, and the
//!   strategy, driven by an event loop over real replies and timers.
//! - [`record`]: turns what was collected into the engine's log: run ids
//!   numbered across instances, and the lock service's truth.

mod background;
pub mod coordinator;
pub mod instance;
mod io;
mod proxy;
mod record;
pub mod servers;

pub use coordinator::{LiveOptions, LiveRun, run};
pub use servers::ServerUrls;

use locklab_engine::scenario::StrategyId;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The scenario's time on the wall clock: `time_scale` scenario ms pass per
/// real ms, from a start every process of the run shares. It reads the
/// system's wall clock, so all processes agree without talking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaledClock {
    pub start_unix_us: u64,
    pub time_scale: u32,
}

impl ScaledClock {
    /// The scenario's time now, in ms (negative before the start).
    pub fn now_ms(self) -> i64 {
        let now = i64::try_from(unix_us()).unwrap_or(i64::MAX);
        let start = i64::try_from(self.start_unix_us).unwrap_or(i64::MAX);
        (now - start) * i64::from(self.time_scale) / 1_000
    }

    /// How long `scenario_ms` of the scenario's time takes on the wall clock.
    pub fn real(self, scenario_ms: u64) -> Duration {
        Duration::from_micros(scenario_ms.saturating_mul(1_000) / u64::from(self.time_scale.max(1)))
    }
}

/// Microseconds since the Unix epoch, by the system's wall clock.
pub fn unix_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| u64::try_from(since.as_micros()).unwrap_or(0))
}

/// How a live verdict compares with its simulated twin's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agreement {
    /// The same safety, liveness and kinds of findings.
    Same,
    /// The same but for a race the machine may order either way; the text says which.
    SameUpToRace(&'static str),
    Different,
}

/// A race live mode is known to order differently from the simulator: the
/// kinds of finding it may add or take away, where (a built-in and a
/// strategy, or anywhere), and why.
#[derive(Clone, Copy, Debug)]
pub struct Race {
    pub scenario: Option<&'static str>,
    pub strategy: Option<StrategyId>,
    /// Finding kinds that may stand in for one another, or be missing from either side.
    pub kinds: &'static [&'static str],
    pub reason: &'static str,
}

/// The races a real machine orders either way, each with its reason.
pub const RACES: &[Race] = &[
    Race {
        scenario: None,
        strategy: None,
        kinds: &["corrupted_report", "report_went_back"],
        reason: "when a paused holder wakes while the new holder is finishing, which lands last, its stale chunk or the new holder's report row, is a race on a real machine: the report is damaged either way, as mixing two runs or as going back in time",
    },
    Race {
        scenario: Some("idle-timeout-unfences-the-row-lock"),
        strategy: Some(StrategyId::DbLock),
        kinds: &["long_lock_wait"],
        reason: "the third instance waits two idle timeouts, 60 s less the few ms the first took to lock the row, against the report's 60 s threshold for a long wait: a round trip on the real machine decides which side of it the wait falls",
    },
    Race {
        scenario: Some("redis-failover"),
        strategy: Some(StrategyId::Consensus),
        kinds: &["stale_write_rejected"],
        reason: "etcd revokes expired leases on a 500 ms loop of the wall clock, so a lease outlives its TTL by up to 500 ms (the simulator ends it at the TTL); scaled, that is seconds of the night, and the retries that fall in that gap miss the lock for a retry period: the paused holder's chunk then lands before the new holder's and passes, instead of being refused after it. Safe either way",
    },
];

/// Compares a live verdict with the simulated twin's for `scenario` (its
/// built-in name, or its `name`) under `strategy`.
pub fn agreement(
    scenario: &str,
    strategy: StrategyId,
    live: &locklab_engine::StrategyReport,
    simulated: &locklab_engine::StrategyReport,
) -> Agreement {
    let kinds = |report: &locklab_engine::StrategyReport, race: Option<&Race>| {
        let mut kinds: Vec<&str> = report
            .findings
            .iter()
            .map(|finding| finding.kind)
            .filter(|kind| race.is_none_or(|race| !race.kinds.contains(kind)))
            .collect();
        kinds.sort_unstable();
        kinds.dedup();
        kinds
    };
    if live.safety != simulated.safety || live.liveness != simulated.liveness {
        return Agreement::Different;
    }
    if kinds(live, None) == kinds(simulated, None) {
        return Agreement::Same;
    }
    let applies = |race: &&Race| {
        race.scenario.is_none_or(|name| name == scenario) && race.strategy.is_none_or(|id| id == strategy)
    };
    RACES
        .iter()
        .filter(applies)
        .find(|race| kinds(live, Some(race)) == kinds(simulated, Some(race)))
        .map_or(Agreement::Different, |race| Agreement::SameUpToRace(race.reason))
}
