//! The three verdicts' rules, each on a run built to need it, so a rule that
//! drifts fails here by name: a former holder's late write is at risk (or
//! unsafe when it lands last), two holders are at risk only for writes both
//! made inside their overlap, work a fault forced is not wasted while work
//! no fault forced is, a period still running when the drain stops is
//! unfinished, never missed, no token outlives its process, a holder that
//! stops halfway is judged by one rule, a lock that queues runs behind a job
//! longer than a period falls behind, other services wait behind `FOR UPDATE`
//! only, each lock names what it lacked, and a takeover or a restart names
//! the fault and the time it really took, and a belief lasts as long as its
//! own run believes. These are rules of the engine, so scenarios no
//! built-in describes get them too.

use locklab_engine::event::{Event, EventKind, PutOutcome, RevokeReason, RunPhase};
use locklab_engine::ids::{InstanceId, Period, ReportOf, RunId};
use locklab_engine::report::{Held, StrategyReport, analyze};
use locklab_engine::scenario::{Efficiency, Liveness, Safety};
use locklab_engine::view::Timeline;
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
    // C's row lock holds other services' queries up on a calm night too;
    // they wait (PostgreSQL's lock_timeout is 0), so none fails.
    let db_lock = builtin_report("calm-night", StrategyId::DbLock);
    assert!(db_lock.metrics.queries_held_behind_lock > 0);
    assert_eq!(db_lock.metrics.background_query_timeouts, 0);
    assert!(db_lock.metrics.background_pool_starved_ms > 0, "the services' pool starves behind the row");
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

#[test]
fn a_holder_that_stops_halfway_is_judged_by_one_rule_whoever_runs_next() {
    // The issue's world: the holder's clock runs slow, then it pauses past
    // its lease; it stops by its own clock with part of the day's report
    // rewritten. Whether the next holder started a moment before or after,
    // the stored report is not damaged: the row still declares the version
    // an earlier run completed, and the abandoned rewrite is named.
    let scenario = Scenario::from_json(
        r#"{"format": "locklab/2", "seed": 3,
            "faults": [{"at_ms": 301000, "kind": "clock_drift", "target": "holder", "ppm": -50000},
                       {"at_ms": 345000, "kind": "gc_pause", "target": "holder", "duration_ms": 32000}],
            "strategies": {"fencing": {}, "redlock": {}, "consensus": {}}}"#,
    )
    .expect("valid");
    for strategy in [StrategyId::Fencing, StrategyId::Redlock, StrategyId::Consensus] {
        let report = analyze(&scenario, strategy, &simulate(&scenario, strategy));
        assert!(kinds(&report).contains(&"rewrite_abandoned"), "{strategy}: {:?}", kinds(&report));
        assert_eq!(report.metrics.corrupted_reports, 0, "{strategy}: {:?}", kinds(&report));
        assert_eq!(report.safety, Safety::Safe, "{strategy}: {:?}", kinds(&report));
        let abandoned = report.findings.iter().find(|finding| finding.kind == "rewrite_abandoned").expect("said");
        assert!(abandoned.text.contains("not atomic") && abandoned.text.contains("new version"), "{}", abandoned.text);
    }
}

#[test]
fn a_lock_that_queues_runs_behind_a_job_longer_than_a_period_falls_behind_in_any_window() {
    // The long report (7-minute job, 5-minute period) under a blocking FOR
    // UPDATE: every period's report comes later than the last. One period or
    // four, the verdict is the same; fencing, whose losers give up at the
    // next tick, misses periods instead, and D, with no lock, is only late.
    let base = Scenario::from_json(builtin::find("long-report").expect("built-in").text).expect("valid");
    for periods in 1..=5 {
        let mut scenario = base.clone();
        scenario.duration_ms = Some(periods * scenario.world.cron_period_ms);
        let judged = |strategy| analyze(&scenario, strategy, &simulate(&scenario, strategy)).liveness;
        assert_eq!(judged(StrategyId::DbLock), Liveness::Behind, "db-lock over {periods} periods");
        assert_eq!(judged(StrategyId::UniqueInsert), Liveness::Late, "unique-insert over {periods} periods");
    }
}

#[test]
fn other_services_wait_behind_for_update_and_not_behind_for_no_key_update_or_with_no_foreign_keys() {
    let night = |world: &str, db_lock: &str| {
        let scenario = Scenario::from_json(&format!(
            r#"{{"format": "locklab/2", "seed": 2, "world": {{{world}}}, "strategies": {{"db-lock": {{{db_lock}}}}}}}"#
        ))
        .expect("valid");
        analyze(&scenario, StrategyId::DbLock, &simulate(&scenario, StrategyId::DbLock))
    };
    // The post's FOR UPDATE: foreign-key checks wait for the row and starve
    // the services' pool, reads queue behind them; nobody gives up (lock_timeout = 0).
    let for_update = night("", "");
    assert!(for_update.metrics.queries_held_behind_lock > 0);
    assert!(for_update.metrics.background_pool_starved_ms > 0);
    assert_eq!(for_update.metrics.background_query_timeouts, 0);
    assert_eq!(for_update.efficiency, Efficiency::Wasteful);
    // FOR NO KEY UPDATE (quiz 8's fix): the checks pass, nothing waits.
    let no_key = night("", r#""lock_strength": "for_no_key_update""#);
    assert_eq!(no_key.metrics.queries_held_behind_lock, 0, "{:?}", kinds(&no_key));
    assert_eq!(no_key.efficiency, Efficiency::Ok);
    assert_eq!(no_key.safety, for_update.safety, "the jobs still exclude each other");
    assert_eq!(no_key.metrics.runs_started, for_update.metrics.runs_started);
    // Plain reads alone never wait for a row lock.
    let reads = night(r#""background_foreign_key_percent": 0"#, "");
    assert_eq!(reads.metrics.queries_held_behind_lock, 0);
    // A timeout the scenario sets makes them fail instead of wait.
    let impatient = night(r#""background_timeout_ms": 5000"#, "");
    assert!(impatient.metrics.queries_failed_behind_lock > 0);
    assert!(kinds(&impatient).contains(&"background_timeouts"));
}

#[test]
fn no_token_outlives_its_process_and_a_fenced_store_refuses_a_write_without_one() {
    let scenario = Scenario::from_json(builtin::find("two-am-saturday").expect("built-in").text).expect("valid");
    for strategy in [StrategyId::Fencing, StrategyId::Consensus] {
        let log = simulate(&scenario, strategy);
        // The job the runner handed b's restarted pod carries no token: the
        // one b held died with its process.
        let redelivered: Vec<RunId> = log
            .iter()
            .filter_map(|event| match event.kind {
                EventKind::Run { run, phase: RunPhase::Redelivered(_), .. } => Some(run),
                _ => None,
            })
            .collect();
        assert!(!redelivered.is_empty(), "{strategy}: the night redelivers b's job");
        for event in &log {
            if let EventKind::Put { run, token, outcome, .. } = event.kind
                && redelivered.contains(&run)
            {
                assert_eq!(token, None, "{strategy}: a redelivered write carries a token");
                assert!(matches!(outcome, PutOutcome::Rejected(_)), "{strategy}: storage let a tokenless write in");
            }
        }
        let report = analyze(&scenario, strategy, &log);
        let refused = report.findings.iter().find(|finding| finding.kind == "tokenless_write_rejected");
        let cause = refused.and_then(|finding| finding.cause.as_ref()).expect("the refusal names who tried");
        assert_eq!((cause.instance, cause.held, cause.refused), (InstanceId(1), Held::Nothing, true));
        assert_eq!(report.safety, Safety::Safe, "{strategy}");
    }
    // The rule itself, written once for the simulator and live mode.
    let fence = PutOutcome::fence;
    use locklab_engine::ids::Token;
    assert_eq!(fence(true, None, None), (PutOutcome::Accepted, None), "nothing fenced yet");
    assert_eq!(fence(true, None, Some(Token(2))), (PutOutcome::Rejected(Token(2)), Some(Token(2))));
    assert_eq!(fence(true, Some(Token(1)), Some(Token(2))), (PutOutcome::Rejected(Token(2)), Some(Token(2))));
    assert_eq!(fence(true, Some(Token(2)), Some(Token(2))), (PutOutcome::Accepted, Some(Token(2))));
    assert_eq!(fence(true, Some(Token(3)), Some(Token(2))), (PutOutcome::Accepted, Some(Token(3))));
    assert_eq!(fence(false, None, Some(Token(2))), (PutOutcome::Accepted, Some(Token(2))), "a plain store");
}

#[test]
fn each_lock_names_what_it_lacked_in_its_own_words() {
    // On the post's night B and C let the same redelivered job through, for
    // different reasons: B has no token to give, C's row lock guards the row.
    let cause = |strategy| {
        let report = builtin_report("two-am-saturday", strategy);
        report
            .findings
            .iter()
            .find_map(|finding| finding.cause.clone().filter(|cause| !cause.refused))
            .expect("a cause")
    };
    let (redlock, db_lock) = (cause(StrategyId::Redlock), cause(StrategyId::DbLock));
    assert_ne!(redlock.checked, db_lock.checked);
    assert_ne!(redlock.fix, db_lock.fix);
    assert!(redlock.checked.contains("Redlock hands out none"), "{}", redlock.checked);
    assert!(db_lock.checked.contains("row lock guards the jobs row"), "{}", db_lock.checked);
}

#[test]
fn a_takeover_names_the_fault_in_force_when_the_holder_lost_the_lock() {
    // The primary's failover came first, but the holder's lease ran out
    // inside its GC pause: the pause let the next holder in.
    let report = builtin_report("redis-failover", StrategyId::Redlock);
    let duplicate = report.findings.iter().find(|finding| finding.kind == "duplicate_run").expect("a takeover");
    assert!(duplicate.text.contains("GC pause"), "{}", duplicate.text);
    assert!(!duplicate.text.contains("fails over"), "{}", duplicate.text);
}

#[test]
fn a_redlock_node_restart_says_how_long_the_node_was_really_out() {
    let scenario = r#"{"format": "locklab/2", "seed": 4, "strategies": {"redlock": {}},
        "faults": [{"at_ms": 20000, "kind": "redis_restart", "target": "redis-2", "down_ms": 1000}]}"#;
    let report = report_of(scenario, StrategyId::Redlock);
    let fault = report.findings.iter().find(|finding| finding.kind == "fault").expect("the fault");
    // Down 1 s, then out one lock TTL (30 s) more: Redlock's delayed restart.
    assert!(fault.text.contains("back only after 31 s"), "{}", fault.text);
}

/// b's job handed back after its crash believes it holds the lock; b's own
/// cron run is granted the lock and lets it go; then c is granted. b still
/// believes, through its first run: the grant to c is one under a believer,
/// whichever of b's runs the database served first, and the lab shows b
/// believing all along.
#[test]
fn a_belief_lasts_until_its_own_run_stops_believing_not_the_instance_s_newest() {
    let scenario = Scenario::from_json(builtin::find("calm-night").expect("a built-in").text).expect("valid");
    let (a, b, c) = (InstanceId(0), InstanceId(1), InstanceId(2));
    let at = |at_ms: u64, kind: EventKind| Event { at_ms, kind };
    let belief = |instance, run, holds| EventKind::Belief { instance, run: RunId(run), holds, token: None };
    let granted = |instance, run| EventKind::Granted { run: RunId(run), instance, token: None };
    let released = |instance, run| EventKind::Revoked { run: RunId(run), instance, reason: RevokeReason::Released };
    let log = vec![
        at(0, granted(a, 0)),
        at(0, belief(a, 0, true)),
        at(10, belief(b, 1, true)),
        at(20, belief(a, 0, false)),
        at(20, released(a, 0)),
        at(30, granted(b, 2)),
        at(30, belief(b, 2, true)),
        at(40, belief(b, 2, false)),
        at(40, released(b, 2)),
        at(50, granted(c, 3)),
        at(50, belief(c, 3, true)),
        at(60, belief(c, 3, false)),
        at(60, released(c, 3)),
        at(70, belief(b, 1, false)),
    ];
    let report = analyze(&scenario, StrategyId::DbLock, &log);
    let said = |kind: &str| -> Vec<u64> {
        report.findings.iter().filter(|finding| finding.kind == kind).map(|finding| finding.at_ms).collect()
    };
    assert_eq!(said("lock_granted_to_another"), vec![50], "{:#?}", report.findings);
    assert_eq!(said("overlap"), vec![10, 50], "{:#?}", report.findings);
    assert_eq!(report.metrics.overlap_ms, 10 + 10, "a and b from 10 to 20 ms, b and c from 50 to 60 ms");
    let timeline = Timeline::build(&scenario, StrategyId::DbLock, &log);
    let believers = |at_ms| timeline.world_at(&log, at_ms).believers();
    assert_eq!(believers(45), vec![b], "b's first run still believes after its second let go");
    assert_eq!(believers(55), vec![b, c]);
    assert_eq!(believers(75), Vec::<InstanceId>::new());
}
