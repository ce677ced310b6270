//! The counterexample explorer's expected results, each as a search that
//! must or must not find a schedule. Where a
//! search must find one, the counterexample is replayed as an ordinary
//! scenario and must show the same violation. A failing search prints its
//! options and the command to rerun it.

use locklab_engine::explore::{ExploreOptions, Explorer, Goal};
use locklab_engine::{Scenario, StrategyId, report};

fn search(
    strategy: StrategyId,
    goal: Goal,
    kinds: &[&str],
    max_faults: u8,
    runs: u32,
) -> locklab_engine::explore::Exploration {
    let mut options = ExploreOptions::new(strategy, goal);
    options.kinds = kinds.iter().map(|kind| (*kind).to_owned()).collect();
    options.max_faults = max_faults;
    options.runs = runs;
    options.validate().expect("valid options");
    Explorer::new(options).run()
}

fn rerun_hint(strategy: StrategyId, goal: &str, kinds: &[&str], max_faults: u8, runs: u32) -> String {
    format!(
        "rerun: cargo run --release --bin locklab -- explore --strategy {strategy} --goal {goal} --faults {} --max-faults {max_faults} --runs {runs}",
        kinds.join(",")
    )
}

/// The found scenario replays as an ordinary scenario with the same verdict.
fn replays(found: &locklab_engine::explore::Exploration, goal: Goal) -> Scenario {
    let scenario = found.scenario.clone().expect("a counterexample");
    let scenario = Scenario::from_json(&scenario.to_json()).expect("the counterexample is a valid scenario");
    let log = locklab_engine::simulate(&scenario, found.strategy);
    let outcome = report::analyze(&scenario, found.strategy, &log);
    assert!(goal.met_by(&outcome), "replaying the counterexample does not show the violation:\n{}", scenario.to_json());
    scenario
}

#[test]
fn a_single_pause_breaks_redlock_within_a_few_thousand_schedules() {
    let kinds = ["gc_pause"];
    let found = search(StrategyId::Redlock, Goal::Unsafe, &kinds, 1, 5_000);
    assert!(found.found, "{}", rerun_hint(StrategyId::Redlock, "unsafe", &kinds, 1, 5_000));
    let scenario = replays(&found, Goal::Unsafe);
    assert_eq!(scenario.faults.len(), 1, "shrunk to one fault");
    assert!(scenario.description.as_deref().unwrap_or_default().contains("stale write"));
    // It opens where it broke: the first finding that names a cause, after the pause.
    let log = locklab_engine::simulate(&scenario, found.strategy);
    let outcome = report::analyze(&scenario, found.strategy, &log);
    let met_at_ms = found.met_at_ms.expect("a moment it broke");
    assert!(met_at_ms > scenario.faults[0].at_ms(), "it broke after the fault struck");
    assert!(
        outcome.findings.iter().any(|finding| finding.at_ms == met_at_ms && finding.cause.is_some()),
        "a finding with a cause at {met_at_ms}"
    );
}

#[test]
fn a_search_allowed_several_faults_finds_the_single_pause_first() {
    // Up to three pauses, seed 9: the budget's first third goes to single
    // pauses, so the counterexample is one pause, not two found together.
    let kinds = ["gc_pause"];
    let mut options = ExploreOptions::new(StrategyId::Redlock, Goal::Unsafe);
    options.kinds = kinds.iter().map(|kind| (*kind).to_owned()).collect();
    options.runs = 5_000;
    options.seed = 9;
    assert_eq!(options.max_faults, 3);
    let found = Explorer::new(options).run();
    let hint = format!("{} --seed 9", rerun_hint(StrategyId::Redlock, "unsafe", &kinds, 3, 5_000));
    assert!(found.found, "{hint}");
    assert!(found.runs <= 5_000 / 3 + 1, "found among the single pauses: after {} schedules; {hint}", found.runs);
    assert_eq!(replays(&found, Goal::Unsafe).faults.len(), 1, "{hint}");
}

/// The naive lock as a team sizes it after the OOM night, so that a dead
/// holder's lock does not sit for four minutes: `EX 100`, just above the 90 s
/// job. With no fault it is exclusive and safe; the seed's own `EX 300` is the
/// cron period.
const NAIVE_SIZED_TO_THE_JOB: &str = r#"{
  "format": "locklab/1",
  "name": "The naive lock sized to the job",
  "duration_ms": 300000,
  "world": {"background_queries_per_s": 0},
  "strategies": {"naive": {"ttl_ms": 100000}}
}"#;

#[test]
fn a_single_pause_breaks_the_naive_lock_once_its_ttl_is_sized_to_the_job() {
    let world = Scenario::from_json(NAIVE_SIZED_TO_THE_JOB).expect("valid scenario");
    let calm = report::analyze(&world, StrategyId::Naive, &locklab_engine::simulate(&world, StrategyId::Naive));
    assert_eq!(calm.safety, locklab_engine::scenario::Safety::Safe, "with no fault the lock is safe");
    assert_eq!(calm.metrics.overlap_ms, 0, "with no fault the lock is exclusive");

    let mut options = ExploreOptions::for_world(StrategyId::Naive, Goal::Unsafe, Some(&world));
    options.kinds = vec!["gc_pause".to_owned()];
    options.max_faults = 1;
    options.runs = 5_000;
    let found = Explorer::new(options).run();
    assert!(
        found.found,
        "rerun: cargo run --release --bin locklab -- explore FILE --strategy naive --faults gc_pause --max-faults 1 --runs 5000\nwith FILE holding:\n{NAIVE_SIZED_TO_THE_JOB}"
    );
    let scenario = replays(&found, Goal::Unsafe);
    assert_eq!(scenario.faults.len(), 1, "shrunk to one fault");
    assert_eq!(scenario.faults[0].kind_name(), "gc_pause");
    assert_eq!(scenario.settings_for(StrategyId::Naive), world.settings_for(StrategyId::Naive), "the world is kept");
}

#[test]
fn a_single_pause_breaks_the_seeds_naive_lock_because_every_run_rewrites_the_daily_report() {
    // The seed's job is generate-daily-report: the next period's run rewrites
    // the same report, so a holder paused past its 300 s lock and the next
    // period's holder both write it ("Both write to the same output").
    let single = ["gc_pause"];
    let found = search(StrategyId::Naive, Goal::Unsafe, &single, 1, 5_000);
    assert!(found.found, "{}", rerun_hint(StrategyId::Naive, "unsafe", &single, 1, 5_000));
    assert_eq!(replays(&found, Goal::Unsafe).faults.len(), 1, "shrunk to one pause");
}

#[test]
fn under_per_period_output_a_pause_alone_cannot_break_the_seeds_naive_lock() {
    // A locklab/1 world gives every period its own report: a pause that outlives
    // the 300 s lock hands it to the next period's run, which writes another
    // report (late, never a rival for the same one). With the key lost (a Redis
    // restart), a loser of the same period walks in.
    let world = Scenario::from_json(r#"{"format": "locklab/1", "duration_ms": 300000}"#).expect("valid");
    let search_world = |kinds: &[&str], max_faults: u8, runs: u32| {
        let mut options = ExploreOptions::for_world(StrategyId::Naive, Goal::Unsafe, Some(&world));
        options.kinds = kinds.iter().map(|kind| (*kind).to_owned()).collect();
        options.max_faults = max_faults;
        options.runs = runs;
        Explorer::new(options).run()
    };
    let hint = "rerun: cargo run --release --bin locklab -- explore FILE --strategy naive --faults KINDS with FILE holding {\"format\": \"locklab/1\", \"duration_ms\": 300000}";
    let alone = search_world(&["gc_pause"], 1, 3_000);
    assert!(!alone.found, "{hint}");
    // A Redis restart alone lets a loser of the same period in beside the holder,
    // and the holder marks the report complete over the loser's first chunk.
    let found = search_world(&["redis_restart"], 1, 5_000);
    assert!(found.found, "{hint}");
    assert_eq!(replays(&found, Goal::Unsafe).faults.len(), 1);
}

#[test]
fn fencing_refuses_every_stale_write_under_pauses_delays_and_clock_jumps() {
    let kinds = ["gc_pause", "network_delay", "clock_jump"];
    let found = search(StrategyId::Fencing, Goal::StaleWrite, &kinds, 3, 100_000);
    assert!(
        !found.found,
        "{}\n{:?}",
        rerun_hint(StrategyId::Fencing, "stale_write", &kinds, 3, 100_000),
        found.scenario
    );
    assert_eq!(found.runs, 100_000);
}

#[test]
fn a_redis_failover_breaks_fencing() {
    let kinds = ["redis_failover", "gc_pause"];
    let found = search(StrategyId::Fencing, Goal::Unsafe, &kinds, 3, 20_000);
    assert!(found.found, "{}", rerun_hint(StrategyId::Fencing, "unsafe", &kinds, 3, 20_000));
    let scenario = replays(&found, Goal::Unsafe);
    assert!(scenario.faults.iter().any(|fault| fault.kind_name() == "redis_failover"), "the failover is essential");
}

#[test]
fn fencing_does_not_make_a_report_spread_over_two_resources_atomic() {
    // Honest limit of the token: it refuses stale writes per resource, but an in-doubt
    // commit (a report row landing after its client gave up) can leave a completed
    // report whose chunks a later, legitimate holder partly rewrote.
    let kinds = ["gc_pause", "network_delay"];
    let found = search(StrategyId::Fencing, Goal::Unsafe, &kinds, 3, 20_000);
    assert!(found.found, "{}", rerun_hint(StrategyId::Fencing, "unsafe", &kinds, 3, 20_000));
    let scenario = replays(&found, Goal::Unsafe);
    let log = locklab_engine::simulate(&scenario, StrategyId::Fencing);
    let outcome = report::analyze(&scenario, StrategyId::Fencing, &log);
    assert_eq!(outcome.metrics.stale_writes_accepted, 0, "no stale write got through");
    assert!(outcome.metrics.corrupted_reports > 0);
}

#[test]
fn the_consensus_lease_accepts_no_stale_write_under_any_fault() {
    let kinds = locklab_engine::scenario::FAULT_KINDS;
    let found = search(StrategyId::Consensus, Goal::StaleWrite, &kinds, 3, 100_000);
    assert!(
        !found.found,
        "{}\n{:?}",
        rerun_hint(StrategyId::Consensus, "stale_write", &kinds, 3, 100_000),
        found.scenario
    );
}

#[test]
fn db_lock_keeps_mutual_exclusion_but_wastes_when_asked() {
    let kinds = locklab_engine::scenario::FAULT_KINDS;
    let exclusive = search(StrategyId::DbLock, Goal::TwoHolders, &kinds, 3, 20_000);
    assert!(
        !exclusive.found,
        "{}\n{:?}",
        rerun_hint(StrategyId::DbLock, "two_holders", &kinds, 3, 20_000),
        exclusive.scenario
    );
    let wasteful = search(StrategyId::DbLock, Goal::Wasteful, &kinds, 3, 1_000);
    assert!(wasteful.found);
    replays(&wasteful, Goal::Wasteful);
}

#[test]
fn unique_insert_keeps_one_report_but_not_single_side_effects() {
    let kinds = locklab_engine::scenario::FAULT_KINDS;
    let unsafe_search = search(StrategyId::UniqueInsert, Goal::Unsafe, &kinds, 3, 20_000);
    assert!(
        !unsafe_search.found,
        "{}\n{:?}",
        rerun_hint(StrategyId::UniqueInsert, "unsafe", &kinds, 3, 20_000),
        unsafe_search.scenario
    );
    let wasteful = search(StrategyId::UniqueInsert, Goal::Wasteful, &kinds, 1, 100);
    assert!(wasteful.found && wasteful.runs == 1, "every run duplicates side effects");
}

#[test]
fn the_same_options_give_the_same_search() {
    let kinds = ["gc_pause", "clock_jump"];
    let first = search(StrategyId::Redlock, Goal::Unsafe, &kinds, 2, 2_000);
    let second = search(StrategyId::Redlock, Goal::Unsafe, &kinds, 2, 2_000);
    assert_eq!(first, second);
}
