//! Where a live run (`locklab live`) and its simulated twin may
//! legitimately differ: races a real machine orders either way, each named
//! with its reason. The live matrix holds a live verdict to its twin's up to
//! these, the CLI's `--compare` prints the reason, and the recorded-run page
//! says it beside the two verdicts. A run whose machine stalled longer than
//! its time scale allows is compared with nothing: it is inconclusive
//! ([`crate::recorded::LiveRecording::inconclusive`]). Pure data and a
//! comparison, so the pages share it with the native runtime.

use crate::recorded::LiveRecording;
use crate::report::StrategyReport;
use crate::scenario::{Scenario, StrategyId};

/// How a live verdict compares with its simulated twin's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agreement {
    /// The same safety, liveness, efficiency and kinds of findings.
    Same,
    /// The same but for a race the machine may order either way; the text says which.
    SameUpToRace(&'static str),
    Different,
    /// The machine stalled the live run longer than its time scale allows,
    /// so its verdict says nothing about the lock: neither the same nor
    /// different ([`LiveRecording::stall_sentence`] says when and how long).
    Inconclusive,
}

/// A race live mode is known to order differently from the simulator: the
/// kinds of finding it may add or take away, where (a scenario, by the name
/// its document gives it, and a strategy; or anywhere), and why.
#[derive(Clone, Copy, Debug)]
pub struct Race {
    pub scenario: Option<&'static str>,
    pub strategy: Option<StrategyId>,
    /// Finding kinds that may stand in for one another, or be missing from either side.
    pub kinds: &'static [&'static str],
    /// Whether the race may also move the liveness verdict (a period's
    /// report late in one, missed in the other). Safety never may, nor
    /// efficiency: no race is known to make work wasted in one and not the other.
    pub liveness: bool,
    pub reason: &'static str,
}

/// The post's own key expiring as the next period begins, on its night with
/// or without the redelivered job.
const POSTS_KEY_EXPIRES: &str = "the post's key, set a tenth of a second into the night for 300 s, expires within about 60 ms of the second period's first attempts: which instance's SET NX comes first after the expiry is a race of a few ms on the wall clock, and when a loser of the first period wins it, that period's job runs again (or a period's run is duplicated, or its report missed instead of late). Unsafe either way";

/// The races a real machine orders either way, each with its reason.
pub const RACES: &[Race] = &[
    Race {
        scenario: None,
        strategy: None,
        kinds: &["corrupted_report", "report_went_back"],
        liveness: false,
        reason: "when a paused holder wakes while the new holder is finishing, which lands last, its stale chunk or the new holder's report row, is a race on a real machine: the report is damaged either way, as mixing two runs or as going back in time",
    },
    Race {
        scenario: Some("An idle timeout unfences the row lock"),
        strategy: Some(StrategyId::DbLock),
        kinds: &["long_lock_wait"],
        liveness: false,
        reason: "the third instance waits two idle timeouts, 60 s less the few ms the first took to lock the row, against the report's 60 s threshold for a long wait: a round trip on the real machine decides which side of it the wait falls",
    },
    Race {
        scenario: Some("Redis failover hands out a token twice"),
        strategy: Some(StrategyId::Consensus),
        kinds: &["stale_write_rejected"],
        liveness: false,
        reason: "etcd revokes expired leases on a 500 ms loop of the wall clock, so a lease outlives its TTL by up to 500 ms (the simulator ends it at the TTL); scaled, that is seconds of the night, and the retries that fall in that gap miss the lock for a retry period: the paused holder's chunk then lands before the new holder's and passes, instead of being refused after it. Safe either way",
    },
    Race {
        scenario: Some("2 am Saturday"),
        strategy: Some(StrategyId::Naive),
        kinds: &["duplicate_post", "duplicate_run", "missed_period", "rerun"],
        liveness: true,
        reason: POSTS_KEY_EXPIRES,
    },
    Race {
        scenario: Some("2 am Saturday: the locks alone"),
        strategy: Some(StrategyId::Consensus),
        kinds: &["rewrite_abandoned"],
        liveness: false,
        reason: "etcd revokes expired leases on a loop of the wall clock, so the OOM-killed holder's lease outlives its TTL by up to about a second of wall time (measured 0.9 s), 13 s of the night at ×15: the lock passes later, which moves whose retry takes it and so which instance holds it when the GC pause strikes the holder, and whether that holder stopped with chunks of its own left in the report. Safe either way",
    },
    // The same night without the redelivered job: the same key, the same race.
    Race {
        scenario: Some("2 am Saturday: the locks alone"),
        strategy: Some(StrategyId::Naive),
        kinds: &["duplicate_post", "duplicate_run", "missed_period", "rerun"],
        liveness: true,
        reason: POSTS_KEY_EXPIRES,
    },
];

/// Compares a recorded run's verdict with its simulated twin's: a live run
/// whose machine stalled beyond its time scale is [`Agreement::Inconclusive`],
/// whatever the verdicts; otherwise as [`agreement`].
pub fn recorded_agreement(
    scenario: &Scenario,
    strategy: StrategyId,
    recorded: &StrategyReport,
    simulated: &StrategyReport,
    live: Option<&LiveRecording>,
) -> Agreement {
    if live.is_some_and(LiveRecording::inconclusive) {
        return Agreement::Inconclusive;
    }
    agreement(scenario, strategy, recorded, simulated)
}

/// Compares a live verdict with the simulated twin's for `scenario` under `strategy`.
pub fn agreement(
    scenario: &Scenario,
    strategy: StrategyId,
    live: &StrategyReport,
    simulated: &StrategyReport,
) -> Agreement {
    let kinds = |report: &StrategyReport, race: Option<&Race>| {
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
    if live.safety != simulated.safety || live.efficiency != simulated.efficiency {
        return Agreement::Different;
    }
    let same_liveness = live.liveness == simulated.liveness;
    if same_liveness && kinds(live, None) == kinds(simulated, None) {
        return Agreement::Same;
    }
    let applies = |race: &&Race| {
        race.scenario.is_none_or(|name| name == scenario.name)
            && race.strategy.is_none_or(|id| id == strategy)
            && (same_liveness || race.liveness)
    };
    RACES
        .iter()
        .filter(applies)
        .find(|race| kinds(live, Some(race)) == kinds(simulated, Some(race)))
        .map_or(Agreement::Different, |race| Agreement::SameUpToRace(race.reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_race_excuses_only_its_kinds_where_it_applies() {
        let text = crate::builtin::find("redis-failover").expect("a built-in").text;
        let scenario = Scenario::from_json(text).expect("built-ins are valid");
        let twin_of = |strategy| {
            let log = crate::simulate_whole(&scenario, strategy).expect("the built-in runs");
            crate::report::analyze(&scenario, strategy, &log)
        };
        let twin = twin_of(StrategyId::Consensus);
        assert_eq!(agreement(&scenario, StrategyId::Consensus, &twin, &twin), Agreement::Same);
        let without = |report: &StrategyReport, kind: &str| {
            let mut report = report.clone();
            report.findings.retain(|finding| finding.kind != kind);
            report
        };
        // etcd's lease-expiry loop may take the refused stale write away, under consensus in this scenario.
        let live = without(&twin, "stale_write_rejected");
        assert!(matches!(agreement(&scenario, StrategyId::Consensus, &live, &twin), Agreement::SameUpToRace(_)));
        let mut elsewhere = scenario.clone();
        elsewhere.name = "another night".to_owned();
        assert_eq!(agreement(&elsewhere, StrategyId::Consensus, &live, &twin), Agreement::Different);
        // A race that leaves liveness alone does not excuse a liveness that moved.
        let mut missed = live.clone();
        missed.liveness = crate::scenario::Liveness::Missed;
        assert_eq!(agreement(&scenario, StrategyId::Consensus, &missed, &twin), Agreement::Different);
        // A kind no race names is a difference; so is another safety.
        assert_eq!(
            agreement(&scenario, StrategyId::Consensus, &without(&twin, "overlap"), &twin),
            Agreement::Different
        );
        let fencing = twin_of(StrategyId::Fencing);
        assert_eq!(agreement(&scenario, StrategyId::Fencing, &twin, &fencing), Agreement::Different);
    }

    #[test]
    fn a_stalled_live_run_is_inconclusive_whatever_its_verdict() {
        let text = crate::builtin::find("calm-night").expect("a built-in").text;
        let scenario = Scenario::from_json(text).expect("built-ins are valid");
        let log = crate::simulate_whole(&scenario, StrategyId::Redlock).expect("the built-in runs");
        let twin = crate::report::analyze(&scenario, StrategyId::Redlock, &log);
        let mut live = LiveRecording::new(Vec::new(), 10);
        let compare =
            |live: &LiveRecording| recorded_agreement(&scenario, StrategyId::Redlock, &twin, &twin, Some(live));
        assert_eq!(compare(&live), Agreement::Same, "a run with no stall is compared");
        live.stalls.push(crate::recorded::Stall {
            at_ms: 60_000,
            lag_us: 80_000,
            allowed_us: 5_000,
            instance: None,
            server: None,
        });
        assert_eq!(compare(&live), Agreement::Inconclusive, "the same verdict is no pass");
        // More of other services' queries failed: no longer forgiven as a stall, a difference.
        let mut failed = twin.clone();
        failed.metrics.background_query_timeouts += 3;
        failed.findings.push(crate::report::Finding {
            at_ms: 60_000,
            kind: "background_timeouts",
            text: String::new(),
            event: 0,
            cause: None,
        });
        let stalled = recorded_agreement(&scenario, StrategyId::Redlock, &failed, &twin, Some(&live));
        assert_eq!(stalled, Agreement::Inconclusive, "nor is a different one a difference");
        assert_eq!(agreement(&scenario, StrategyId::Redlock, &failed, &twin), Agreement::Different);
    }
}
