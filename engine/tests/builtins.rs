//! The built-in table: every built-in scenario loads, names an expectation for
//! every strategy it runs, and the engine reaches exactly that outcome.
//! A mismatch prints the scenario, the strategy and the command to rerun it.

use locklab_engine::{Scenario, builtin, report};

#[test]
fn every_builtin_meets_its_expectations() {
    let mut failures = Vec::new();
    for builtin in builtin::ALL {
        let scenario = Scenario::from_json(builtin.text).unwrap_or_else(|error| panic!("{}: {error}", builtin.name));
        for settings in scenario.strategy_settings() {
            let strategy = settings.id();
            let Some(expected) = scenario.expect.get(&strategy) else {
                failures.push(format!("{}: no expectation for {strategy}", builtin.name));
                continue;
            };
            let log = locklab_engine::simulate(&scenario, strategy);
            let outcome = report::analyze(&scenario, strategy, &log);
            if let Err(problem) = outcome.check(expected) {
                failures.push(format!(
                    "{} / {strategy}: {problem}\n    rerun: cargo run --bin locklab -- run {} --strategy {strategy}",
                    builtin.name, builtin.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "built-in outcomes differ:\n{}", failures.join("\n"));
}

#[test]
fn the_seed_story_comes_first_and_names_are_unique() {
    assert_eq!(builtin::ALL[0].name, "two-am-saturday");
    let mut names: Vec<&str> = builtin::ALL.iter().map(|builtin| builtin.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), builtin::ALL.len());
    assert!(builtin::ALL.len() >= 8, "the lab teaches from at least eight nights");
}

/// The post's night, sentence by sentence, under the post's own lock. Each
/// step is found in the log after the one before it; a step that does not
/// happen, or happens out of order, names itself.
#[test]
fn the_posts_night_plays_in_the_posts_order_under_its_own_lock() {
    use locklab_engine::event::{LockValue, RedisCommand, RevokeReason, RunPhase};
    use locklab_engine::ids::{InstanceId, ReportOf};
    use locklab_engine::scenario::Safety;
    use locklab_engine::{EventKind, Fault, StrategyId};

    let scenario = Scenario::from_json(builtin::find("two-am-saturday").expect("built-in").text).expect("valid");
    let log = locklab_engine::simulate(&scenario, StrategyId::Naive);
    let (a, b, c) = (InstanceId(0), InstanceId(1), InstanceId(2));
    let mut from = 0;
    let mut step = |what: &str, found: &dyn Fn(&EventKind) -> bool| -> u64 {
        let position = log[from..]
            .iter()
            .position(|event| found(&event.kind))
            .unwrap_or_else(|| panic!("the night does not go on: no `{what}` after event {from}"));
        from += position + 1;
        log[from - 1].at_ms
    };
    // "SET job:daily-report locked NX EX 300 → only one instance wins": b, with the literal value.
    step(
        "b's SET … locked NX EX 300 wins",
        &|kind| matches!(kind, EventKind::Redis { client, command: RedisCommand::SetNxEx { value: LockValue::Locked, ttl_s: 300 }, reply: locklab_engine::event::RedisReply::Ok, .. } if *client == b),
    );
    let started = step(
        "b starts the job",
        &|kind| matches!(kind, EventKind::Run { instance, phase: RunPhase::Started, .. } if *instance == b),
    );
    // "60 seconds in, the pod gets OOM-killed."
    let killed = step(
        "b is OOM-killed",
        &|kind| matches!(kind, EventKind::Fault { fault: Fault::OomKill { .. }, targets } if targets.first().and_then(|party| party.instance()) == Some(b)),
    );
    assert!((59_000..=61_000).contains(&(killed - started)), "b dies {} ms into the job", killed - started);
    // "The lock is still there. TTL says 300 seconds."
    let expired = step(
        "b's key expires",
        &|kind| matches!(kind, EventKind::Revoked { instance, reason: RevokeReason::Expired, .. } if *instance == b),
    );
    assert!(expired >= 300_000, "the key sits for its whole TTL: gone at {expired} ms");
    assert!(
        !log.iter().any(|event| event.at_ms > killed
            && event.at_ms < expired
            && matches!(event.kind, EventKind::Granted { .. })),
        "nobody takes the lock while the dead holder's key sits"
    );
    // "Then instance A grabs it."
    step("a grabs the lock", &|kind| matches!(kind, EventKind::Granted { instance, .. } if *instance == a));
    // "B's pod restarted and it's ALSO trying to run it now" (the job runner redelivers).
    assert!(
        log.iter().any(|event| matches!(event.kind, EventKind::Run { instance, phase: RunPhase::Redelivered(_), .. } if instance == b)),
        "b's restarted process runs the job it died in"
    );
    // "A slow GC pause on instance A makes it hold the lock past TTL."
    step(
        "a freezes",
        &|kind| matches!(kind, EventKind::Fault { fault: Fault::GcPause { .. }, targets } if targets.first().and_then(|party| party.instance()) == Some(a)),
    );
    step(
        "a's key expires while a believes",
        &|kind| matches!(kind, EventKind::Revoked { instance, reason: RevokeReason::Expired, .. } if *instance == a),
    );
    // "Redis quietly hands the lock to instance C."
    step("c is granted the lock", &|kind| matches!(kind, EventKind::Granted { instance, .. } if *instance == c));
    // "Now A thinks it owns the lock. C also thinks it owns the lock."
    let believers_at =
        step("c believes", &|kind| matches!(kind, EventKind::Belief { instance, holds: true, .. } if *instance == c));
    let a_still_believes =
        log.iter().rev().filter(|event| event.at_ms <= believers_at).find_map(|event| match event.kind {
            EventKind::Belief { instance, holds, .. } if instance == a => Some(holds),
            _ => None,
        });
    assert_eq!(a_still_believes, Some(true), "a still believes when c starts to");
    // "Both write to the same output."
    let daily = |kind: &EventKind, who: InstanceId| matches!(kind, EventKind::Put { instance, report: ReportOf::Day(0), outcome: locklab_engine::event::PutOutcome::Accepted, .. } if *instance == who);
    step("a writes the daily report after waking", &|kind| daily(kind, a));
    step("c writes the same daily report", &|kind| daily(kind, c));
    let verdict = report::analyze(&scenario, StrategyId::Naive, &log);
    assert_eq!(verdict.safety, Safety::Unsafe, "the stored report is damaged");
    assert!(
        verdict.findings.iter().any(|finding| finding.kind == "corrupted_report" && finding.text.contains("a and c")),
        "the damage is a's and c's: {:?}",
        verdict.findings
    );
}

/// A log document reads back as the events it was written from, for every
/// built-in under every strategy: a recorded run (simulated or live) loads
/// into the same report code as a fresh one.
#[test]
fn every_log_document_reads_back_as_its_events() {
    let live = locklab_engine::LiveRecording::new(vec!["Redis 7.0.15".to_owned()], 60);
    for builtin in builtin::ALL {
        let scenario = Scenario::from_json(builtin.text).unwrap_or_else(|error| panic!("{}: {error}", builtin.name));
        for settings in scenario.strategy_settings() {
            let strategy = settings.id();
            let log = locklab_engine::simulate(&scenario, strategy);
            let recording = (builtin.name == "two-am-saturday").then_some(&live);
            let text = locklab_engine::recorded_log_document(&scenario, strategy, &log, recording);
            let document = locklab_engine::LogDocument::from_json(&text)
                .unwrap_or_else(|error| panic!("{} / {strategy}: {error}", builtin.name));
            assert_eq!(document.events, log, "{} / {strategy}", builtin.name);
            assert_eq!((document.strategy, document.seed), (strategy, scenario.seed));
            assert_eq!(document.live.as_ref(), recording, "{} / {strategy}", builtin.name);
            let carried = document.scenario_document.map(|value| Scenario::from_json(&value.to_string()));
            assert_eq!(carried, Some(Ok(scenario.clone())), "{}: the document carries its scenario", builtin.name);
        }
    }
    let refused = locklab_engine::LogDocument::from_json(r#"{"format": "locklab/2"}"#);
    assert_eq!(refused, Err("format `locklab/2` is not locklab-log/1".to_owned()));
}

/// The plain-DEL hazard, and the Redis page's fix: the same overrun night
/// released with a plain `DEL` lets a second run in (b's DEL deletes a's
/// lock, and c walks in beside a), while compare-and-delete, where each run
/// writes its own value and the unlock script deletes only its own key,
/// leaves a's lock alone and no run is wasted.
#[test]
fn overrun_del_differs_from_compare_and_delete_as_the_redis_page_says() {
    use locklab_engine::StrategyId;
    use locklab_engine::scenario::Efficiency;

    let text = builtin::find("overrun-del").expect("built-in").text;
    let released = |release: &str| {
        let mut document: serde_json::Value = serde_json::from_str(text).expect("JSON");
        document["strategies"]["naive"]["release"] = serde_json::Value::from(release);
        let scenario = Scenario::from_json(&document.to_string()).expect("valid");
        let log = locklab_engine::simulate(&scenario, StrategyId::Naive);
        report::analyze(&scenario, StrategyId::Naive, &log)
    };
    let has =
        |outcome: &report::StrategyReport, kind: &str| outcome.findings.iter().any(|finding| finding.kind == kind);

    let del = released("del");
    assert!(has(&del, "lock_deleted_by_other"), "a plain DEL deletes another run's lock: {:?}", del.findings);
    assert!(del.metrics.wasted_runs > 0, "the run it lets in is wasted: {:?}", del.metrics);
    assert_eq!(del.efficiency, Efficiency::Wasteful);

    let compare = released("compare_and_delete");
    assert!(!has(&compare, "lock_deleted_by_other"), "compare-and-delete deletes only its own: {:?}", compare.findings);
    assert_eq!(compare.metrics.wasted_runs, 0, "nobody is let in: {:?}", compare.metrics);
    assert_eq!(compare.efficiency, Efficiency::Ok);
}
