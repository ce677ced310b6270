//! Where a live run (`locklab live`) and its simulated twin may
//! legitimately differ: races a real machine orders either way, each named
//! with its reason. The live matrix holds a live verdict to its twin's up to
//! these, the CLI's `--compare` prints the reason, and the recorded-run page
//! says it beside the two verdicts. Pure data and a comparison, so the
//! pages share it with the native runtime.

use crate::report::StrategyReport;
use crate::scenario::{Scenario, StrategyId};

/// How a live verdict compares with its simulated twin's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agreement {
    /// The same safety, liveness, efficiency and kinds of findings.
    Same,
    /// The same but for a race the machine may order either way, or a stall of
    /// the machine ([`MACHINE_STALL`]); the text says which.
    SameUpToRace(&'static str),
    Different,
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

/// Other services' queries that failed live but not in the twin, none of them
/// behind the jobs row lock: their timeout runs on the wall clock, and a
/// stall of the machine (other processes, the disk) longer than it fails
/// them; the simulator has no machine to stall.
pub const MACHINE_STALL: &str = "other services' queries failed in the live run with no job holding the jobs row: their timeout runs on the wall clock, and a stall of this machine (other processes, the disk) longer than it fails them, which the simulator, with no machine to stall, cannot do. Not the lock's cost: the efficiency verdict counts only queries failed behind the row lock";

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
    // The same night without the redelivered job: the same key, the same race.
    Race {
        scenario: Some("2 am Saturday: the locks alone"),
        strategy: Some(StrategyId::Naive),
        kinds: &["duplicate_post", "duplicate_run", "missed_period", "rerun"],
        liveness: true,
        reason: POSTS_KEY_EXPIRES,
    },
];

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
    // A stall of the machine: more of other services' queries failed live,
    // none more behind the row lock, and nothing else differs.
    let stalled = live.metrics.background_query_timeouts > simulated.metrics.background_query_timeouts
        && live.metrics.queries_failed_behind_lock == simulated.metrics.queries_failed_behind_lock;
    let without_timeouts = |report: &StrategyReport| {
        let mut kinds = kinds(report, None);
        kinds.retain(|kind| *kind != "background_timeouts");
        kinds
    };
    if stalled && same_liveness && without_timeouts(live) == without_timeouts(simulated) {
        return Agreement::SameUpToRace(MACHINE_STALL);
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
    fn queries_failed_with_nobody_on_the_row_are_a_stall_of_the_machine_not_the_lock() {
        let text = crate::builtin::find("calm-night").expect("a built-in").text;
        let scenario = Scenario::from_json(text).expect("built-ins are valid");
        let log = crate::simulate_whole(&scenario, StrategyId::Redlock).expect("the built-in runs");
        let twin = crate::report::analyze(&scenario, StrategyId::Redlock, &log);
        assert_eq!(twin.metrics.background_query_timeouts, 0, "the calm night fails no query");
        let mut stalled = twin.clone();
        stalled.metrics.background_query_timeouts = 3;
        let finding = |kind| crate::report::Finding { at_ms: 60_000, kind, text: String::new(), event: 0, cause: None };
        stalled.findings.push(finding("background_timeouts"));
        assert_eq!(agreement(&scenario, StrategyId::Redlock, &stalled, &twin), Agreement::SameUpToRace(MACHINE_STALL));
        // Failed behind the row lock, they are the lock's cost: a difference.
        let mut behind = stalled.clone();
        behind.metrics.queries_failed_behind_lock = 3;
        assert_eq!(agreement(&scenario, StrategyId::Redlock, &behind, &twin), Agreement::Different);
        // A stall excuses the failed queries, nothing else.
        let mut more = stalled.clone();
        more.findings.push(finding("overlap"));
        assert_eq!(agreement(&scenario, StrategyId::Redlock, &more, &twin), Agreement::Different);
    }
}
