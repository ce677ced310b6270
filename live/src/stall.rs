//! How late the machine lets a live run's processes run. Every process of
//! the run (the coordinator, which also carries the network's proxies, and
//! each instance) keeps a watchdog: a thread that sleeps a short tick and
//! measures, on the monotonic clock, how much longer than the tick it was
//! away. That excess is the process's *lag*: time it wanted to run and the
//! machine (other processes, both cores busy, the disk) did not let it. A
//! lag of `d` wall ms moves what the process does by `d × time_scale` of the
//! scenario's time, which no simulated run has.
//!
//! The coordinator gathers every lag and judges the run ([`judge`]): a lag
//! longer than the time scale allows makes it *inconclusive*. A process the
//! coordinator stopped itself (a `gc_pause`'s SIGSTOP, a lost host) is away
//! by the fault's design, so the time it was stopped is not counted.

use crate::unix_us;
use locklab_engine::ids::InstanceId;
use locklab_engine::{LiveRecording, Stall};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// One time a process was away longer than it asked to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Lag {
    /// When it should have woken, by the system's wall clock (µs since the epoch).
    pub(crate) from_unix_us: u64,
    /// How much later it woke, in µs.
    pub(crate) lag_us: u64,
}

/// The line an instance writes on its output for a lag, beside its events.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct LagLine {
    pub(crate) lag: Lag,
}

/// A watchdog's thread; dropping this stops it.
#[derive(Debug)]
pub(crate) struct Watchdog {
    stop: Arc<AtomicBool>,
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// The tick a watchdog sleeps when a lag of `allowed` counts: a quarter of
/// it, so a stall that long is seen whole, between 1 and 20 ms.
pub(crate) fn tick_for(allowed: Duration) -> Duration {
    (allowed / 4).clamp(Duration::from_millis(1), Duration::from_millis(20))
}

impl Watchdog {
    /// Starts the watchdog: every `tick` it measures its lag, and hands
    /// `seen` every lag longer than `report_over`, and every lag longer than
    /// all before it (so the longest is known, counted or not).
    pub(crate) fn start(tick: Duration, report_over: Duration, mut seen: impl FnMut(Lag) + Send + 'static) -> Watchdog {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut longest = Duration::ZERO;
            while !stopped.load(Ordering::SeqCst) {
                let asleep = Instant::now();
                // The watchdog's own tick: the sleep is what it measures.
                std::thread::sleep(tick);
                let lag = asleep.elapsed().saturating_sub(tick);
                if lag > report_over || lag > longest {
                    longest = longest.max(lag);
                    let lag_us = u64::try_from(lag.as_micros()).unwrap_or(u64::MAX);
                    seen(Lag { from_unix_us: unix_us().saturating_sub(lag_us), lag_us });
                }
            }
        });
        Watchdog { stop }
    }
}

/// A stretch of wall time (µs since the epoch) a process was stopped by a fault.
pub(crate) type Stopped = (u64, u64);

/// What is left of a lag once the time the process was stopped on purpose is taken out.
fn unplanned_us(lag: Lag, stopped: &[Stopped]) -> u64 {
    let (from, until) = (lag.from_unix_us, lag.from_unix_us.saturating_add(lag.lag_us));
    let planned: u64 = stopped.iter().map(|(stop, resume)| until.min(*resume).saturating_sub(from.max(*stop))).sum();
    lag.lag_us.saturating_sub(planned)
}

/// Every lag a run's processes reported, with whose it was.
#[derive(Clone, Debug, Default)]
pub(crate) struct Lags {
    pub(crate) seen: Vec<(Option<InstanceId>, Lag)>,
    /// When each instance's process was stopped by a fault, on the wall clock.
    pub(crate) stopped: Vec<(InstanceId, Stopped)>,
}

/// The run's recording judged by its lags: the longest, the allowance at
/// its time scale (`margin_ms` of the scenario's time, scaled), the stalls
/// beyond it (when each began on the scenario's clock, from `start_unix_us`),
/// and the time scale at which the longest would have been within it.
/// `scale_fits` says which slower scales the run can be played at.
pub(crate) fn judge(
    recording: &mut LiveRecording,
    lags: &Lags,
    margin_ms: u64,
    start_unix_us: u64,
    scale_fits: impl Fn(u32) -> bool,
) {
    let time_scale = recording.time_scale.max(1);
    let allowed_us = margin_ms.saturating_mul(1_000) / u64::from(time_scale);
    recording.allowed_lag_us = allowed_us;
    let mut stalls = Vec::new();
    for (instance, lag) in &lags.seen {
        let stopped: Vec<Stopped> =
            lags.stopped.iter().filter(|(whose, _)| Some(*whose) == *instance).map(|(_, window)| *window).collect();
        let lag_us = unplanned_us(*lag, &stopped);
        recording.longest_lag_us = recording.longest_lag_us.max(lag_us);
        if lag_us > allowed_us {
            let since_us = lag.from_unix_us.saturating_sub(start_unix_us);
            let at_ms = since_us.saturating_mul(u64::from(time_scale)) / 1_000;
            stalls.push(Stall { at_ms, lag_us, instance: *instance });
        }
    }
    stalls.sort_by_key(|stall| (stall.at_ms, stall.lag_us));
    if stalls.len() > locklab_engine::recorded::MAX_STALLS_KEPT {
        // Keep the longest ones, in time order.
        stalls.sort_by_key(|stall| std::cmp::Reverse(stall.lag_us));
        stalls.truncate(locklab_engine::recorded::MAX_STALLS_KEPT);
        stalls.sort_by_key(|stall| (stall.at_ms, stall.lag_us));
    }
    // The fastest scale that allows the longest lag; none when even ×1 does not.
    let longest_us = recording.longest_lag_us.max(1);
    let within = u32::try_from(margin_ms.saturating_mul(1_000) / longest_us).unwrap_or(u32::MAX);
    recording.faithful_time_scale = if stalls.is_empty() {
        None
    } else {
        (1..time_scale).rev().filter(|scale| *scale <= within).find(|scale| scale_fits(*scale))
    };
    recording.stalls = stalls;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lag_beyond_the_allowance_is_a_stall_named_with_a_faithful_scale() {
        let start = 1_000_000_000;
        let mut lags = Lags::default();
        // The coordinator away 40 ms one second in; instance b 3 ms two seconds in.
        lags.seen.push((None, Lag { from_unix_us: start + 1_000_000, lag_us: 40_000 }));
        lags.seen.push((Some(InstanceId(1)), Lag { from_unix_us: start + 2_000_000, lag_us: 3_000 }));
        let mut recording = LiveRecording::new(Vec::new(), 60);
        // A 1 s margin at ×60 allows 16.6 ms.
        judge(&mut recording, &lags, 1_000, start, |_| true);
        assert_eq!(recording.allowed_lag_us, 16_666);
        assert_eq!(recording.longest_lag_us, 40_000);
        assert_eq!(recording.stalls, vec![Stall { at_ms: 60_000, lag_us: 40_000, instance: None }]);
        // 1 s over 40 ms is ×25; a scale that must divide 30 (a consensus lease) takes ×15.
        assert_eq!(recording.faithful_time_scale, Some(25));
        judge(&mut recording, &lags, 1_000, start, |scale| 30 % scale == 0);
        assert_eq!(recording.faithful_time_scale, Some(15));
    }

    #[test]
    fn a_process_stopped_by_a_fault_is_not_stalled_by_the_machine() {
        let start = 5_000_000;
        let mut lags = Lags::default();
        // Instance a was SIGSTOPped for 500 ms (a gc_pause) and woke 2 ms after SIGCONT.
        lags.seen.push((Some(InstanceId(0)), Lag { from_unix_us: start + 100_000, lag_us: 502_000 }));
        lags.stopped.push((InstanceId(0), (start + 99_000, start + 600_000)));
        let mut recording = LiveRecording::new(Vec::new(), 15);
        judge(&mut recording, &lags, 400, start, |_| true);
        assert_eq!((recording.longest_lag_us, recording.stalls.len()), (2_000, 0));
        // The same stop counts for instance b, which no fault stopped.
        lags.seen.push((Some(InstanceId(1)), Lag { from_unix_us: start + 100_000, lag_us: 502_000 }));
        judge(&mut recording, &lags, 400, start, |_| true);
        assert_eq!(recording.stalls.len(), 1);
        assert_eq!(recording.faithful_time_scale, None, "a lag longer than the margin is too long even at ×1");
    }
}
