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
//! longer than the time scale allows makes it *inconclusive*. What it
//! allows is a margin of the scenario's time, scaled
//! (`coordinator::lag_margins`): the coordinator's is the tighter, since it
//! carries the network. A process the coordinator stopped itself (a
//! `gc_pause`'s SIGSTOP, a lost host) is away by the fault's design, so the
//! time it was stopped is not counted; nor is a lag before the scenario's
//! time 0 or after the run's end.
//!
//! The servers (Redis, PostgreSQL, etcd; storage and Slack, which the
//! coordinator plays) are processes of the machine too, and no watchdog
//! runs inside them: each instance times its requests that a server
//! answers at once (every Redis command, etcd's calls, the SQL that waits
//! for no lock, storage's and Slack's lines), outside any fault that slows
//! or cuts the way to a server, and reports a slow answer (or none before
//! the client's timeout) as the server's lag ([`ServerLagLine`]). It is
//! held to the network's margin: like the coordinator's, it can turn a
//! reply into a timeout.

use crate::coordinator::LagMargins;
use crate::unix_us;
use locklab_engine::ids::{InstanceId, Party};
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

impl Lag {
    /// The wall time it covers, from when it should have woken until it did.
    fn span(self) -> Span {
        (self.from_unix_us, self.from_unix_us.saturating_add(self.lag_us))
    }
}

/// The line an instance writes on its output for a lag, beside its events.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct LagLine {
    pub(crate) lag: Lag,
}

/// The line an instance writes when it sends a request whose timeout is
/// tighter than the processes' margin (Redlock's 50 ms per node): from
/// when it went out until its timeout, on the wall clock (µs since the
/// epoch). Only then can a lag of the network's turn a reply into a timeout.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct FlightLine {
    pub(crate) flight: Span,
}

/// The line an instance writes when a server took `lag` to answer one of
/// its requests that the server answers at once, or timed it out.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ServerLagLine {
    pub(crate) server_lag: Lag,
    pub(crate) server: Party,
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

/// A stretch of wall time, from and until (µs since the epoch): a process
/// stopped by a fault, a request in flight, the run itself.
pub(crate) type Span = (u64, u64);

/// What is left of a lag inside the run (`run`: the scenario's time 0 and
/// when the run ended, on the wall clock) once the time it is explained by
/// is taken out (the process stopped on purpose; for a server's answer,
/// the coordinator's own lag, which carried it): a process late while the servers
/// start, in the lead-in to time 0, or while the run is being stopped,
/// moves nothing. (What a lag in the lead-in could move is whether the
/// instances are ready at time 0; a first process still starting then
/// reports that itself, as its lag from time 0.)
fn unplanned_us(lag: Lag, run: Span, explained: &[Span]) -> u64 {
    let (from, until) = lag.span();
    let (from, until) = (from.max(run.0), until.min(run.1));
    // The explained spans clipped to the lag, merged, so that a moment two
    // of them cover is taken out once.
    let mut clipped: Vec<Span> = explained
        .iter()
        .map(|(start, end)| ((*start).max(from), (*end).min(until)))
        .filter(|(start, end)| start < end)
        .collect();
    clipped.sort_unstable();
    let mut covered_us = 0;
    let mut reached = from;
    for (start, end) in clipped {
        covered_us += end.saturating_sub(start.max(reached));
        reached = reached.max(end);
    }
    until.saturating_sub(from).saturating_sub(covered_us)
}

/// Whether two spans of wall time share a moment.
fn overlap(one: Span, other: Span) -> bool {
    one.0 < other.1 && other.0 < one.1
}

/// Every lag a run's processes reported, with whose it was.
#[derive(Clone, Debug, Default)]
pub(crate) struct Lags {
    pub(crate) seen: Vec<(Option<InstanceId>, Lag)>,
    /// When each instance's process was stopped by a fault, on the wall clock.
    pub(crate) stopped: Vec<(InstanceId, Span)>,
    /// When a request with a timeout tighter than the processes' margin was
    /// in flight (see [`FlightLine`]).
    pub(crate) flights: Vec<Span>,
    /// A server's slow answers, with the instance that waited for each.
    pub(crate) servers: Vec<(InstanceId, Party, Lag)>,
}

/// The run's recording judged by its lags: the longest, the allowance at
/// its time scale (the coordinator's margin of the scenario's time,
/// scaled, while a request with a tight timeout is in flight; otherwise,
/// and an instance's always, `margins.process_ms`), the stalls beyond what
/// each process is allowed (when each began on the scenario's clock), and
/// the time scale at which every one of them would have been within it.
/// `run` is the scenario's time 0 and when the run ended, on the wall
/// clock; `scale_fits` says which slower scales the run can be played at.
pub(crate) fn judge(
    recording: &mut LiveRecording,
    lags: &Lags,
    margins: LagMargins,
    run: Span,
    scale_fits: impl Fn(u32) -> bool,
) {
    recording.longest_lag_us = 0;
    let time_scale = recording.time_scale.max(1);
    let allowed_us = |margin_ms: u64| margin_ms.saturating_mul(1_000) / u64::from(time_scale);
    recording.allowed_lag_us = allowed_us(margins.network_ms);
    // The fastest scale at which every stall would have been allowed.
    let mut within = u64::MAX;
    let mut stalls = Vec::new();
    let processes = lags.seen.iter().map(|(instance, lag)| (*instance, None, *lag));
    let servers = lags.servers.iter().map(|(instance, server, lag)| (Some(*instance), Some(*server), *lag));
    // The coordinator's own lags: the way to every server passes through
    // its proxies, so a server's answer late while the coordinator was
    // away is late by the coordinator's lag, which is judged as its own.
    let coordinator_away: Vec<Span> =
        lags.seen.iter().filter(|(instance, _)| instance.is_none()).map(|(_, lag)| lag.span()).collect();
    for (instance, server, lag) in processes.chain(servers) {
        // A process stopped by a fault, or one waiting for an answer while
        // it was stopped, was away by design for that long.
        let mut explained: Vec<Span> =
            lags.stopped.iter().filter(|(whose, _)| Some(*whose) == instance).map(|(_, window)| *window).collect();
        if server.is_some() {
            explained.extend(coordinator_away.iter().copied());
        }
        let lag_us = unplanned_us(lag, run, &explained);
        recording.longest_lag_us = recording.longest_lag_us.max(lag_us);
        // The coordinator carries the network, and a server gives the
        // answers: while a request with a tight timeout is out, their lag
        // can turn the reply into a timeout, so it is held to that timeout;
        // otherwise it moves what any process's does.
        let lag_span = lag.span();
        let holds_a_flight = lags.flights.iter().any(|flight| overlap(lag_span, *flight));
        let network = instance.is_none() || server.is_some();
        let margin_ms = if network && holds_a_flight { margins.network_ms } else { margins.process_ms };
        if lag_us > allowed_us(margin_ms) {
            let since_us = lag.from_unix_us.saturating_sub(run.0);
            let at_ms = since_us.saturating_mul(u64::from(time_scale)) / 1_000;
            stalls.push(Stall { at_ms, lag_us, allowed_us: allowed_us(margin_ms), instance, server });
            within = within.min(margin_ms.saturating_mul(1_000) / lag_us.max(1));
        }
    }
    stalls.sort_by_key(|stall| (stall.at_ms, stall.lag_us));
    if stalls.len() > locklab_engine::recorded::MAX_STALLS_KEPT {
        // Keep the longest ones, in time order.
        stalls.sort_by_key(|stall| std::cmp::Reverse(stall.lag_us));
        stalls.truncate(locklab_engine::recorded::MAX_STALLS_KEPT);
        stalls.sort_by_key(|stall| (stall.at_ms, stall.lag_us));
    }
    // None when even ×1 does not allow the longest stall.
    recording.faithful_time_scale = if stalls.is_empty() {
        None
    } else {
        (1..time_scale).rev().filter(|scale| u64::from(*scale) <= within).find(|scale| scale_fits(*scale))
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
        let run = (start, start + 60_000_000);
        let margins = LagMargins { process_ms: 1_000, network_ms: 1_000 };
        judge(&mut recording, &lags, margins, run, |_| true);
        assert_eq!(recording.allowed_lag_us, 16_666);
        assert_eq!(recording.longest_lag_us, 40_000);
        assert_eq!(
            recording.stalls,
            vec![Stall { at_ms: 60_000, lag_us: 40_000, allowed_us: 16_666, instance: None, server: None }]
        );
        // 1 s over 40 ms is ×25; a scale that must divide 30 (a consensus lease) takes ×15.
        assert_eq!(recording.faithful_time_scale, Some(25));
        judge(&mut recording, &lags, margins, run, |scale| 30 % scale == 0);
        assert_eq!(recording.faithful_time_scale, Some(15));
        // A lag while the servers start, in the lead-in to time 0, or after
        // the run ended, moves nothing; one that runs past time 0 counts
        // from time 0 (as does a first process's late start, which it
        // reports as a lag from time 0).
        let mut outside = Lags::default();
        let run = (start, start + 60_000_000);
        outside.seen.push((None, Lag { from_unix_us: start - 1_500_000, lag_us: 400_000 }));
        outside.seen.push((None, Lag { from_unix_us: start - 300_000, lag_us: 40_000 }));
        outside.seen.push((None, Lag { from_unix_us: start + 60_000_000, lag_us: 400_000 }));
        judge(&mut recording, &outside, margins, run, |_| true);
        assert_eq!((recording.longest_lag_us, recording.stalls.len()), (0, 0));
        outside.seen.push((None, Lag { from_unix_us: start - 20_000, lag_us: 50_000 }));
        outside.seen.push((Some(InstanceId(2)), Lag { from_unix_us: start, lag_us: 25_000 }));
        judge(&mut recording, &outside, margins, run, |_| true);
        assert_eq!(recording.longest_lag_us, 30_000);
        assert_eq!(
            recording.stalls,
            vec![
                Stall { at_ms: 0, lag_us: 25_000, allowed_us: 16_666, instance: Some(InstanceId(2)), server: None },
                Stall { at_ms: 0, lag_us: 30_000, allowed_us: 16_666, instance: None, server: None },
            ]
        );
    }

    #[test]
    fn the_coordinator_carries_the_network_so_its_lag_is_held_to_the_client_timeout_while_a_request_is_out() {
        let start = 1_000_000_000;
        let run = (start, start + 60_000_000);
        // Redlock at ×10: a 50 ms per-node timeout allows the coordinator 5 ms, an instance 100 ms.
        let margins = LagMargins { process_ms: 1_000, network_ms: 50 };
        let mut lags = Lags::default();
        lags.seen.push((Some(InstanceId(2)), Lag { from_unix_us: start + 1_000_000, lag_us: 30_000 }));
        let mut recording = LiveRecording::new(Vec::new(), 10);
        judge(&mut recording, &lags, margins, run, |_| true);
        assert_eq!((recording.allowed_lag_us, recording.stalls.len()), (5_000, 0), "an instance 30 ms late is allowed");
        // The coordinator 30 ms late with no request out: it moved no reply.
        lags.seen.push((None, Lag { from_unix_us: start + 2_000_000, lag_us: 30_000 }));
        judge(&mut recording, &lags, margins, run, |_| true);
        assert_eq!(recording.stalls, vec![], "nothing was in flight");
        // A node's request went out 1 ms before the lag, and its 50 ms (5 ms of wall time) ran into it.
        lags.flights.push((start + 1_999_000, start + 2_004_000));
        // Another ended just before it: it does not count.
        lags.flights.push((start + 1_990_000, start + 1_995_000));
        judge(&mut recording, &lags, margins, run, |_| true);
        assert_eq!(
            recording.stalls,
            vec![Stall { at_ms: 20_000, lag_us: 30_000, allowed_us: 5_000, instance: None, server: None }]
        );
        assert_eq!(recording.faithful_time_scale, Some(1), "50 ms over 30 ms is ×1");
        // The flight holds the coordinator only: an instance as late then is within its margin.
        lags.seen.push((Some(InstanceId(0)), Lag { from_unix_us: start + 2_000_000, lag_us: 30_000 }));
        judge(&mut recording, &lags, margins, run, |_| true);
        assert_eq!(recording.stalls.len(), 1);
    }

    #[test]
    fn a_server_slow_to_answer_is_held_to_the_network_margin_while_its_request_is_out() {
        let start = 1_000_000_000;
        let run = (start, start + 60_000_000);
        let margins = LagMargins { process_ms: 1_000, network_ms: 50 };
        let redis = Party::Redis(locklab_engine::ids::RedisNodeId(0));
        let mut lags = Lags::default();
        // Redis took 30 ms to answer b, whose request had no tight timeout: within b's 100 ms at ×10.
        lags.servers.push((InstanceId(1), redis, Lag { from_unix_us: start + 1_000_000, lag_us: 30_000 }));
        let mut recording = LiveRecording::new(Vec::new(), 10);
        judge(&mut recording, &lags, margins, run, |_| true);
        assert_eq!((recording.longest_lag_us, recording.stalls.len()), (30_000, 0));
        // With Redlock's 50 ms per node out (5 ms of wall time), the same answer would have timed out.
        lags.flights.push((start + 1_000_000, start + 1_005_000));
        judge(&mut recording, &lags, margins, run, |_| true);
        let stall = Stall {
            at_ms: 10_000,
            lag_us: 30_000,
            allowed_us: 5_000,
            instance: Some(InstanceId(1)),
            server: Some(redis),
        };
        assert_eq!(recording.stalls, vec![stall]);
        // b stopped by a gc_pause while it waited: the wait was the fault's.
        lags.stopped.push((InstanceId(1), (start + 999_000, start + 1_040_000)));
        judge(&mut recording, &lags, margins, run, |_| true);
        assert_eq!(recording.stalls, vec![]);
    }

    #[test]
    fn a_server_answer_late_while_the_coordinator_was_away_is_the_coordinator_s_stall() {
        let start = 1_000_000_000;
        let run = (start, start + 60_000_000);
        let margins = LagMargins { process_ms: 1_000, network_ms: 160 };
        let db = Party::Db;
        let mut lags = Lags::default();
        // The database's answer to b came 312 ms late; the coordinator, whose
        // proxy carries it, was away for 300 ms of that (and a stop before
        // it overlaps its start: a moment covered twice is counted once).
        lags.servers.push((InstanceId(1), db, Lag { from_unix_us: start + 1_000_000, lag_us: 312_000 }));
        lags.seen.push((None, Lag { from_unix_us: start + 1_005_000, lag_us: 300_000 }));
        lags.stopped.push((InstanceId(1), (start + 990_000, start + 1_010_000)));
        let mut recording = LiveRecording::new(Vec::new(), 60);
        judge(&mut recording, &lags, margins, run, |_| true);
        let coordinator = Stall { at_ms: 60_300, lag_us: 300_000, allowed_us: 16_666, instance: None, server: None };
        assert_eq!(recording.stalls, vec![coordinator], "the coordinator's stall, not the server's");
        // The same answer with the coordinator running: the server's own.
        lags.seen.clear();
        judge(&mut recording, &lags, margins, run, |_| true);
        assert_eq!(recording.stalls.len(), 1);
        assert_eq!((recording.stalls[0].server, recording.stalls[0].lag_us), (Some(db), 302_000));
    }

    #[test]
    fn a_process_stopped_by_a_fault_is_not_stalled_by_the_machine() {
        let start = 5_000_000;
        let mut lags = Lags::default();
        // Instance a was SIGSTOPped for 500 ms (a gc_pause) and woke 2 ms after SIGCONT.
        lags.seen.push((Some(InstanceId(0)), Lag { from_unix_us: start + 100_000, lag_us: 502_000 }));
        lags.stopped.push((InstanceId(0), (start + 99_000, start + 600_000)));
        let mut recording = LiveRecording::new(Vec::new(), 15);
        let run = (start, start + 60_000_000);
        let margins = LagMargins { process_ms: 400, network_ms: 400 };
        judge(&mut recording, &lags, margins, run, |_| true);
        assert_eq!((recording.longest_lag_us, recording.stalls.len()), (2_000, 0));
        // The same stop counts for instance b, which no fault stopped.
        lags.seen.push((Some(InstanceId(1)), Lag { from_unix_us: start + 100_000, lag_us: 502_000 }));
        judge(&mut recording, &lags, margins, run, |_| true);
        assert_eq!(recording.stalls.len(), 1);
        assert_eq!(recording.faithful_time_scale, None, "a lag longer than the margin is too long even at ×1");
    }
}
