//! The three verdicts' rules, each on a run built to need it, so a rule that
//! drifts fails here by name: a former holder's late write is at risk (or
//! unsafe when it lands last), two holders are at risk only for writes both
//! made inside their overlap, work a fault forced is not wasted while work
//! no fault forced is, and a period still running when the drain stops is
//! unfinished, never missed. These are rules of the engine, so scenarios no
//! built-in describes get them too.

use locklab_engine::event::{Event, EventKind, PutOutcome, RevokeReason, RunPhase};
use locklab_engine::ids::{InstanceId, Period, ReportOf, RunId};
use locklab_engine::report::{Held, StrategyReport, analyze};
use locklab_engine::scenario::{Efficiency, Liveness, Safety};
use locklab_engine::{Scenario, StrategyId, builtin, simulate};

fn report_of(json: &str, strategy: StrategyId) -> StrategyReport {
    let scenario = Scenario::from_json(json).unwrap_or_else(|error| panic!("{error}: {json}"));
    analyze(&scenario, strategy, &simulate(&scenario, strategy))
}

fn builtin_report(name: &str, strategy: StrategyId) -> StrategyReport {
    let scenario = Scenario::from_json(builtin::find(name).expect("a built-in").text).expect("valid");
    analyze(&scenario, strategy, &simulate(&scenario, strategy))
}

fn kinds(report: &StrategyReport) -> Vec<&'static str> {
    report.findings.iter().map(|finding| finding.kind).collect()
}

/// A holder's chunk delayed `extra_ms` on its way to storage: the holder's
/// PUT times out, it gives up, the next holder takes the lock, and the late
/// PUT lands while the next holder holds it.
fn delayed_chunk(strategy: &str, extra_ms: u64) -> String {
    format!(
        r#"{{"format": "locklab/2", "seed": 3, "duration_ms": 300000, "strategies": {{"{strategy}": {{}}}},
            "faults": [{{"at_ms": 17000, "kind": "network_delay", "from": "holder", "to": "storage",
                         "extra_ms": {extra_ms}, "duration_ms": 3000}}]}}"#
    )
}

#[test]
fn a_former_holders_late_write_is_at_risk_or_unsafe_never_safe() {
    for strategy in [StrategyId::Redlock, StrategyId::DbLock] {
        // Lands before the next holder rewrites the chunk: only timing saved the report.
        let report = report_of(&delayed_chunk(strategy.name(), 20_000), strategy);
        assert_eq!(report.safety, Safety::AtRisk, "{strategy}: {:?}", kinds(&report));
        let finding = report.findings.iter().find(|finding| finding.kind == "former_holder_write").expect("said");
        let cause = finding.cause.as_ref().expect("a cause");
        assert_eq!(cause.held, Held::Former, "the writer no longer held the lock: {}", finding.text);
        assert!(cause.checked.starts_with("nothing"), "{}", cause.checked);
        // Lands after it: a stale write, unsafe.
        let report = report_of(&delayed_chunk(strategy.name(), 30_000), strategy);
        assert_eq!(report.safety, Safety::Unsafe, "{strategy}: {:?}", kinds(&report));
    }
    // A fencing token turns the late write away.
    let report = report_of(&delayed_chunk("fencing", 20_000), StrategyId::Fencing);
    assert_eq!(report.safety, Safety::Safe, "{:?}", kinds(&report));
}

/// A log by hand: a holds the lock and writes chunk 0; its lock expires and
/// b takes it while a still believes; b writes chunk 0; a writes `a_writes_in_overlap` more.
fn two_holders(a_writes_in_overlap: bool) -> Vec<Event> {
    let (a, b) = (InstanceId(0), InstanceId(1));
    let (first, second) = (RunId(0), RunId(1));
    let report = ReportOf::Day(0);
    let put = |at_ms, instance, run, chunk| Event {
        at_ms,
        kind: EventKind::Put {
            instance,
            run,
            period: Period(0),
            report,
            chunk,
            own_object: false,
            token: None,
            outcome: PutOutcome::Accepted,
        },
    };
    let run =
        |at_ms, instance, run, phase| Event { at_ms, kind: EventKind::Run { run, instance, period: Period(0), phase } };
    let mut log = vec![
        run(0, a, first, RunPhase::Trying),
        Event { at_ms: 1, kind: EventKind::Granted { run: first, instance: a, token: None } },
        Event { at_ms: 1, kind: EventKind::Belief { instance: a, run: first, holds: true, token: None } },
        run(2, a, first, RunPhase::Started),
        put(10, a, first, 0),
        run(15, b, second, RunPhase::Trying),
        Event { at_ms: 19, kind: EventKind::Revoked { run: first, instance: a, reason: RevokeReason::Expired } },
        Event { at_ms: 20, kind: EventKind::Granted { run: second, instance: b, token: None } },
        Event { at_ms: 20, kind: EventKind::Belief { instance: b, run: second, holds: true, token: None } },
        run(21, b, second, RunPhase::Started),
        put(30, b, second, 0),
    ];
    if a_writes_in_overlap {
        log.push(put(35, a, first, 0));
    }
    log.push(run(40, a, first, RunPhase::GaveUp));
    log
}

#[test]
fn two_holders_are_at_risk_only_for_writes_both_made_inside_their_overlap() {
    let scenario = Scenario::from_json(r#"{"format": "locklab/2", "strategies": {"naive": {}}}"#).expect("valid");
    // a wrote only before b held the lock: nothing of a's could meet b's write.
    let before = analyze(&scenario, StrategyId::Naive, &two_holders(false));
    assert!(!kinds(&before).contains(&"unfenced_overlap"), "{:?}", kinds(&before));
    assert_eq!(before.safety, Safety::Safe);
    // a writes again while b holds it: both wrote unfenced inside the overlap.
    let inside = analyze(&scenario, StrategyId::Naive, &two_holders(true));
    assert_ne!(inside.safety, Safety::Safe, "{:?}", kinds(&inside));
}

#[test]
fn work_a_fault_forced_is_not_wasted_and_work_no_fault_forced_is() {
    // The post's night: A's duplicate runs come from the redelivered job and the pause.
    let fencing = builtin_report("two-am-saturday", StrategyId::Fencing);
    assert!(fencing.metrics.duplicate_runs > 0);
    assert_eq!((fencing.metrics.wasted_runs, fencing.efficiency), (0, Efficiency::Ok));
    // D runs every period's job on every instance, faults or none.
    let unique = builtin_report("calm-night", StrategyId::UniqueInsert);
    assert!(unique.metrics.wasted_runs > 0 && unique.metrics.wasted_side_effects > 0);
    assert_eq!(unique.efficiency, Efficiency::Wasteful);
    // C's row lock fails other services' queries on a calm night too.
    let db_lock = builtin_report("calm-night", StrategyId::DbLock);
    assert!(db_lock.metrics.queries_failed_behind_lock > 0);
    assert_eq!(db_lock.efficiency, Efficiency::Wasteful);
    // A calm night under a lock wastes nothing.
    assert_eq!(builtin_report("calm-night", StrategyId::Fencing).efficiency, Efficiency::Ok);
    // A plain DEL that lets a run in with no fault behind it wastes that run.
    let overrun = builtin_report("overrun-del", StrategyId::Naive);
    assert!(overrun.metrics.wasted_runs > 0, "{:?}", kinds(&overrun));
}

#[test]
fn a_period_still_running_when_the_drain_stops_is_unfinished_never_missed() {
    // A lost host keeps its row lock until TCP keepalive gives up, two hours
    // away: the later periods' runs wait on the row past the drain's limit.
    let report = report_of(
        r#"{"format": "locklab/2", "seed": 12, "duration_ms": 900000, "strategies": {"db-lock": {}},
            "faults": [{"at_ms": 30000, "kind": "host_loss", "target": "holder"}]}"#,
        StrategyId::DbLock,
    );
    assert!(report.metrics.unfinished_periods > 0, "{:?}", kinds(&report));
    assert_eq!(report.metrics.missed_periods, 0, "{:?}", kinds(&report));
    assert_eq!(report.liveness, Liveness::Late);
    assert!(kinds(&report).contains(&"unfinished_period"));
}
