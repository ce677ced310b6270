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
//! - [`stall`]: how late the machine lets each process run, and the run
//!   judged by it: a run stalled beyond its time scale is inconclusive.
//! - [`supervisor`]: the process that stops whatever a run started if the
//!   coordinator is killed, and removes its folders.

mod background;
pub mod coordinator;
pub mod instance;
mod io;
mod proxy;
mod record;
pub mod servers;
mod stall;
pub mod supervisor;

pub use coordinator::{LiveOptions, LiveRun, Progress, run};
pub use locklab_engine::races::{Agreement, RACES, Race, agreement, recorded_agreement};
pub use servers::ServerUrls;

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

/// Keeps every page this process has and will have in memory, where the
/// system lets it (as root): a machine that reclaims memory it finds cold
/// (DAMON's `pageout`, on this project's virtual machines) otherwise evicts
/// the code of a path idle for a few seconds (a session between its
/// statements, a run waiting for its retry), and the page faults that bring
/// it back stall the process for hundreds of milliseconds, which a time
/// scale multiplies. Where it is refused the run plays as it is, and such
/// stalls are measured and named (`stall.rs`).
///
/// Pages are locked as they are first touched (`MCL_ONFAULT`, Linux 4.4):
/// locking every mapping whole would fill memory with thread stacks and
/// allocator arenas no one uses (half a gigabyte per instance). Once per
/// process: `MCL_FUTURE` covers what comes later, and another call would
/// walk every mapping again of a process that plays many runs at once (the
/// live tests), for nothing.
pub(crate) fn keep_in_memory() {
    use nix::sys::mman::{MlockAllFlags, mlockall};
    // `MCL_ONFAULT` from <sys/mman.h>, which this nix does not name.
    const MCL_ONFAULT: std::ffi::c_int = 4;
    static LOCKED: std::sync::Once = std::sync::Once::new();
    LOCKED.call_once(|| {
        let on_fault = MlockAllFlags::from_bits_retain(MCL_ONFAULT);
        let _ = mlockall(MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE | on_fault);
    });
}

/// Microseconds since the Unix epoch, by the system's wall clock.
pub fn unix_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| u64::try_from(since.as_micros()).unwrap_or(0))
}
