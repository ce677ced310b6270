//! Prints one digest over the event logs of many random scenarios, every
//! strategy, so two builds of the engine can be compared: a change meant to
//! keep every log byte-identical (a speed-up) must print the same line before
//! and after. The recorded digests in `tests/fixtures` cover the built-in
//! stories; this covers the rest of the space — every fault kind, busy and
//! idle databases, slowed ones — from a fixed seed.
//!
//! Usage: `cargo run --release --example log_sweep -p locklab-engine -- [SCENARIOS] [SEED]`
//! (defaults 2,000 and 1). It prints the digest and, with `--each`, one line
//! per scenario so a difference can be traced to the scenario that shows it.
//! With `--reports` the digest covers each log's report too (as JSON), for a
//! change to the report that must keep every verdict, metric and finding.
//! With `--settings` each scenario also draws every strategy's settings and
//! the world's switches (redelivery, checking storage, output), for a change
//! to the strategies themselves: the stories' own settings cover few of them.
use locklab_engine::rng::SimRng;
use locklab_engine::{Scenario, StrategyId, builtin, digest, log_digest, report, simulate};

/// One of `choices`, drawn uniformly.
fn pick<T: Copy>(rng: &mut SimRng, choices: &[T]) -> T {
    let index = rng.below(choices.len() as u64);
    choices[usize::try_from(index).unwrap_or(0)]
}

/// One random fault as a `locklab/1` JSON object, at or after `at_ms`.
fn fault(rng: &mut SimRng, duration_ms: u64) -> String {
    let at_ms = rng.below(duration_ms);
    let seconds = |rng: &mut SimRng, low: u64, high: u64| rng.between(low, high) * 1000;
    let instance = |rng: &mut SimRng| pick(rng, &["holder", "holder", "a", "b", "c"]);
    let party = |rng: &mut SimRng| pick(rng, &["redis-1", "redis", "db", "storage", "consensus", "a", "slack"]);
    match rng.below(11) {
        0 => format!(
            r#"{{"at_ms": {at_ms}, "kind": "oom_kill", "target": "{}", "restart_after_ms": {}}}"#,
            instance(rng),
            seconds(rng, 0, 60)
        ),
        1 => format!(r#"{{"at_ms": {at_ms}, "kind": "host_loss", "target": "{}"}}"#, instance(rng)),
        2 => format!(
            r#"{{"at_ms": {at_ms}, "kind": "gc_pause", "target": "{}", "duration_ms": {}}}"#,
            instance(rng),
            seconds(rng, 1, 120)
        ),
        3 => format!(
            r#"{{"at_ms": {at_ms}, "kind": "clock_jump", "target": "{}", "by_ms": {}}}"#,
            party(rng),
            i64::try_from(seconds(rng, 0, 120)).unwrap_or(0) - 60_000
        ),
        4 => format!(
            r#"{{"at_ms": {at_ms}, "kind": "clock_drift", "target": "{}", "ppm": {}}}"#,
            party(rng),
            rng.below(200_000)
        ),
        5 => format!(
            r#"{{"at_ms": {at_ms}, "kind": "network_delay", "from": "{}", "to": "{}", "extra_ms": {}, "duration_ms": {}}}"#,
            instance(rng),
            party(rng),
            seconds(rng, 0, 40),
            seconds(rng, 1, 60)
        ),
        6 => format!(
            r#"{{"at_ms": {at_ms}, "kind": "partition", "between": ["{}", "{}"], "duration_ms": {}}}"#,
            instance(rng),
            party(rng),
            seconds(rng, 1, 60)
        ),
        7 => format!(
            r#"{{"at_ms": {at_ms}, "kind": "redis_restart", "target": "redis-1", "down_ms": {}}}"#,
            seconds(rng, 0, 20)
        ),
        8 => format!(r#"{{"at_ms": {at_ms}, "kind": "redis_failover", "target": "redis-1"}}"#),
        9 => format!(r#"{{"at_ms": {at_ms}, "kind": "consensus_leader_loss"}}"#),
        _ => format!(
            r#"{{"at_ms": {at_ms}, "kind": "db_slow", "factor": {}, "duration_ms": {}}}"#,
            rng.between(2, 20),
            seconds(rng, 1, 120)
        ),
    }
}

/// Every strategy's settings, drawn: the TTLs, renewals and releases of the
/// Redis locks, Redlock's nodes and drift, the row lock's waits and timeouts.
fn strategies(rng: &mut SimRng) -> String {
    let ttl_ms = pick(rng, &[1_500, 10_000, 30_000, 60_000, 300_000]);
    let release = pick(rng, &["never", "del", "compare_and_delete"]);
    let lease = |rng: &mut SimRng| {
        let ttl_ms = pick(rng, &[5_000, 15_000, 30_000, 90_000]);
        format!(r#"{{"ttl_ms": {ttl_ms}, "renew_every_ms": {}}}"#, ttl_ms / pick(rng, &[2, 3, 6]))
    };
    let (fencing, consensus) = (lease(rng), lease(rng));
    let redlock_ttl_ms = pick(rng, &[5_000, 30_000, 90_000]);
    let redlock = format!(
        r#"{{"ttl_ms": {redlock_ttl_ms}, "renew_every_ms": {}, "nodes": {}, "drift_factor": {}, "delayed_restart": {}}}"#,
        redlock_ttl_ms / 3,
        pick(rng, &[1, 3, 5]),
        pick(rng, &["0.01", "0.1", "0"]),
        pick(rng, &["true", "false"])
    );
    let db_lock = format!(
        r#"{{"lock_strength": "{}", "wait": "{}", "lock_timeout_ms": {}, "idle_in_transaction_timeout_ms": {}}}"#,
        pick(rng, &["for_update", "for_no_key_update"]),
        pick(rng, &["block", "nowait", "skip_locked"]),
        pick(rng, &[0, 0, 5_000, 60_000]),
        pick(rng, &[0, 0, 30_000, 120_000])
    );
    format!(
        r#"{{"naive": {{"ttl_ms": {ttl_ms}, "release": "{release}"}}, "fencing": {fencing}, "redlock": {redlock},
            "db-lock": {db_lock}, "unique-insert": {{}}, "consensus": {consensus}}}"#
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let each = args.iter().any(|arg| arg == "--each");
    let reports = args.iter().any(|arg| arg == "--reports");
    let settings = args.iter().any(|arg| arg == "--settings");
    let numbers: Vec<u64> = args.iter().filter_map(|arg| arg.parse().ok()).collect();
    let scenarios = numbers.first().copied().unwrap_or(2_000);
    let seed = numbers.get(1).copied().unwrap_or(1);
    let stories: Vec<Scenario> =
        builtin::ALL.iter().map(|story| Scenario::from_json(story.text).expect("a built-in loads")).collect();
    let mut rng = SimRng::from_seed(seed);
    let mut combined = String::new();
    let mut accepted = 0u64;
    for index in 0..scenarios {
        let mut scenario = stories[usize::try_from(index % stories.len() as u64).unwrap_or(0)].clone();
        scenario.seed = rng.below(u64::MAX);
        scenario.world.background_queries_per_s = pick(&mut rng, &[0, 5, 5, 20, 80]);
        scenario.world.redis_replica = rng.below(2) == 0;
        let duration_ms = scenario.duration_ms();
        let faults: Vec<String> = (0..rng.below(5)).map(|_| fault(&mut rng, duration_ms)).collect();
        let mut document: serde_json::Value = serde_json::from_str(&scenario.to_json()).expect("JSON");
        document["faults"] = serde_json::from_str(&format!("[{}]", faults.join(","))).expect("faults JSON");
        if settings {
            document["strategies"] = serde_json::from_str(&strategies(&mut rng)).expect("strategies JSON");
            document["world"]["redeliver_after_crash"] = (rng.below(2) == 0).into();
            document["world"]["storage_checks_tokens"] = (rng.below(3) != 0).into();
            document["world"]["output"] = pick(&mut rng, &["daily", "per_period"]).into();
        }
        let Ok(scenario) = Scenario::from_json(&document.to_string()) else {
            continue; // a drawn fault the format refuses (e.g. a party this world lacks)
        };
        let digests: Vec<String> = StrategyId::ALL
            .into_iter()
            .map(|id| {
                let log = simulate(&scenario, id);
                if reports {
                    let report =
                        serde_json::to_string(&report::analyze(&scenario, id, &log)).expect("a report is JSON");
                    format!("{}/{}", log_digest(&log), digest(report.as_bytes()))
                } else {
                    log_digest(&log)
                }
            })
            .collect();
        let line = digests.join(" ");
        accepted += 1;
        if each {
            println!("{index} {line}");
        }
        combined = digest((combined + &line).as_bytes());
    }
    println!("{scenarios} scenarios from seed {seed} ({accepted} valid): {combined}");
}
