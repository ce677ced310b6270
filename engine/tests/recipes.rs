//! The built-in locks as recipes: every strategy, with the settings each
//! built-in scenario gives it (its defaults where the scenario names it
//! not), has a `locklab-recipe/1` document that validates and comes back
//! from JSON unchanged, unless it is one of the documented exceptions.

use locklab_engine::event::{RedisCommand, RedisReply};
use locklab_engine::ids::{Party, RunId};
use locklab_engine::recipe::{RECIPE_FORMAT, Recipe};
use locklab_engine::scenario::{Liveness, StrategyId};
use locklab_engine::{Event, EventKind, Scenario, builtin};

/// The built-ins whose code the recipe's steps cannot express
/// (`StrategySettings::recipe` says why each one reaches): none today.
const WITHOUT_RECIPE: &[StrategyId] = &[];

#[test]
fn every_builtin_lock_under_every_builtin_scenario_is_a_recipe() {
    let mut failures = Vec::new();
    let mut recipes = 0_u32;
    for builtin in builtin::ALL {
        let scenario = Scenario::from_json(builtin.text).unwrap_or_else(|error| panic!("{}: {error}", builtin.name));
        for strategy in StrategyId::ALL {
            let settings = scenario.settings_for(strategy);
            let Some(recipe) = settings.recipe() else {
                if !WITHOUT_RECIPE.contains(&strategy) {
                    failures.push(format!("{} / {strategy}: no recipe", builtin.name));
                }
                continue;
            };
            recipes += 1;
            if WITHOUT_RECIPE.contains(&strategy) {
                failures.push(format!("{} / {strategy}: a recipe, though listed as having none", builtin.name));
            }
            if let Err(error) = recipe.validate() {
                failures.push(format!("{} / {strategy}: refused at {error}", builtin.name));
            }
            let json = serde_json::to_string_pretty(&recipe).unwrap_or_else(|error| panic!("{error}"));
            let back: Recipe = serde_json::from_str(&json).unwrap_or_else(|error| panic!("{json}: {error}"));
            let again = serde_json::to_string_pretty(&back).unwrap_or_else(|error| panic!("{error}"));
            if back != recipe || again != json {
                failures
                    .push(format!("{} / {strategy}: the JSON round trip changed it:\n{json}\n{again}", builtin.name));
            }
            if recipe.format != RECIPE_FORMAT || recipe.name != settings.title() {
                failures
                    .push(format!("{} / {strategy}: format {} and name {}", builtin.name, recipe.format, recipe.name));
            }
        }
    }
    assert!(failures.is_empty(), "built-in recipes:\n{}", failures.join("\n"));
    assert!(recipes >= 6, "only {recipes} recipes were checked");
}

#[test]
fn each_recipe_says_what_its_strategy_does() {
    let seed = Scenario::default();
    let recipe = |strategy| seed.settings_for(strategy).recipe().unwrap_or_else(|| panic!("{strategy}: no recipe"));
    let fencing = serde_json::to_value(recipe(StrategyId::Fencing)).unwrap_or_default();
    assert_eq!(fencing["token"], "incr_in_script");
    assert_eq!(fencing["writes"]["report_row"], "fenced_upsert");
    assert_eq!(fencing["renew"]["with"], "compare_and_pexpire");
    let redlock = serde_json::to_value(recipe(StrategyId::Redlock)).unwrap_or_default();
    assert_eq!(redlock["lock"]["on"], "redis_majority");
    assert_eq!(redlock["retry"], "jittered");
    let db_lock = serde_json::to_value(recipe(StrategyId::DbLock)).unwrap_or_default();
    assert_eq!(db_lock["take"]["with"], "select_for_update");
    assert_eq!(db_lock["release"], "commit");
    let unique = serde_json::to_value(recipe(StrategyId::UniqueInsert)).unwrap_or_default();
    assert_eq!(unique["lock"]["on"], "nowhere");
    assert_eq!(unique["writes"]["objects"], "own");
    let consensus = serde_json::to_value(recipe(StrategyId::Consensus)).unwrap_or_default();
    assert_eq!(consensus["token"], "etcd_revision");
    assert_eq!(consensus["renew"]["with"], "keep_alive");
}

/// Every built-in lock, played from its recipe under every built-in
/// scenario, gives the built-in's own event log, byte for byte: the naive
/// and fencing recipes through the interpreter, step by step; the others
/// through the built-in whose recipe they are, their settings read back
/// from the recipe.
#[test]
fn every_builtin_lock_played_from_its_recipe_logs_what_the_builtin_logs() {
    let mut failures = Vec::new();
    let mut compared = 0_usize;
    for builtin in builtin::ALL {
        let scenario = Scenario::from_json(builtin.text).unwrap_or_else(|error| panic!("{}: {error}", builtin.name));
        for strategy in StrategyId::ALL {
            let Some(recipe) = scenario.settings_for(strategy).recipe() else { continue };
            compared += 1;
            let played = locklab_engine::simulate_recipe(&scenario, strategy, &recipe);
            let built_in = locklab_engine::simulate(&scenario, strategy);
            match played {
                Ok(log) if log == built_in => {}
                Ok(log) => {
                    let first = log.iter().zip(&built_in).position(|(one, other)| one != other);
                    failures.push(format!(
                        "{} / {strategy}: {} events against {}, first difference at {first:?}: {:?} / {:?}",
                        builtin.name,
                        log.len(),
                        built_in.len(),
                        first.and_then(|at| log.get(at)),
                        first.and_then(|at| built_in.get(at)),
                    ));
                }
                Err(error) => failures.push(format!("{} / {strategy}: {error}", builtin.name)),
            }
        }
    }
    assert!(failures.is_empty(), "recipes that do not play as their built-ins:\n{}", failures.join("\n"));
    assert_eq!(compared, builtin::ALL.len() * StrategyId::ALL.len(), "every built-in lock under every built-in");
}

/// A recipe document, from the seed's lock with `changes` (JSON) merged in.
fn recipe(changes: serde_json::Value) -> Recipe {
    let mut document = serde_json::to_value(Recipe::default()).unwrap_or_default();
    if let (Some(fields), Some(changed)) = (document.as_object_mut(), changes.as_object()) {
        fields.extend(changed.clone());
    }
    let recipe: Recipe = serde_json::from_value(document).unwrap_or_else(|error| panic!("{error}"));
    recipe.validate().unwrap_or_else(|error| panic!("{error}"));
    recipe
}

fn redis_events(log: &[Event]) -> impl Iterator<Item = (u64, RunId, RedisCommand, RedisReply)> + '_ {
    log.iter().filter_map(|event| match event.kind {
        EventKind::Redis { run, command, reply, .. } => Some((event.at_ms, run, command, reply)),
        _ => None,
    })
}

#[test]
fn setnx_then_expire_takes_two_round_trips_and_a_death_between_them_leaves_a_key_that_never_expires() {
    let setnx = recipe(serde_json::json!({"take": {"with": "setnx_then_expire", "value": "locked", "ttl_s": 300}}));
    let calm = Scenario::from_json(builtin::find("calm-night").expect("a built-in").text).expect("valid");
    let log = locklab_engine::simulate_recipe(&calm, StrategyId::Naive, &setnx).expect("it plays");
    // The first SETNX that set the key, and its run's next command: EXPIRE, and only then the belief.
    let (set_ms, holder, _, _) = redis_events(&log)
        .find(|(_, _, command, reply)| {
            matches!(command, RedisCommand::SetNx { .. }) && *reply == RedisReply::Integer(1)
        })
        .expect("a SETNX sets the key");
    let (expire_ms, _, expire, answer) = redis_events(&log)
        .find(|(at_ms, run, ..)| *run == holder && *at_ms > set_ms)
        .expect("the holder's next command");
    assert_eq!((expire, answer), (RedisCommand::Expire { ttl_s: 300 }, RedisReply::Integer(1)));
    let believed_ms = log
        .iter()
        .find_map(|event| match event.kind {
            EventKind::Belief { run, holds: true, .. } if run == holder => Some(event.at_ms),
            _ => None,
        })
        .expect("the holder believes it holds the lock");
    assert!(believed_ms >= expire_ms, "the belief waits for EXPIRE's answer: {believed_ms} < {expire_ms}");
    assert_eq!(locklab_engine::report::analyze(&calm, StrategyId::Naive, &log).liveness, Liveness::Ok);

    // The holder killed after SETNX set the key, before its answer came back:
    // the key has no expiry, so no later period's run ever takes the lock.
    let client = log
        .iter()
        .find_map(|event| match event.kind {
            EventKind::Redis { run, client, .. } if run == holder => Some(client),
            _ => None,
        })
        .expect("the holder's instance");
    let sent_ms = log
        .iter()
        .find_map(|event| match event.kind {
            EventKind::Sent { from: Party::Instance(from), .. } if from == client && event.at_ms > set_ms => {
                Some(event.at_ms)
            }
            _ => None,
        })
        .expect("the EXPIRE goes out");
    assert!(sent_ms > set_ms + 1, "a window to die in: SETNX at {set_ms}, EXPIRE sent at {sent_ms}");
    let mut killed = calm.clone();
    let kill = format!(r#"{{"kind": "oom_kill", "at_ms": {}, "target": "holder"}}"#, set_ms + 1);
    killed.faults.push(serde_json::from_str(&kill).expect("a fault"));
    let log = locklab_engine::simulate_recipe(&killed, StrategyId::Naive, &setnx).expect("it plays");
    assert!(!redis_events(&log).any(|(_, _, command, _)| matches!(command, RedisCommand::Expire { .. })), "no EXPIRE");
    assert!(!log.iter().any(|event| matches!(event.kind, EventKind::KeyExpired { .. })), "the key never expires");
    let grants = log.iter().filter(|event| matches!(event.kind, EventKind::Granted { .. })).count();
    assert_eq!(grants, 1, "nobody takes the lock after the dead one");
    let report = locklab_engine::report::analyze(&killed, StrategyId::Naive, &log);
    assert!(report.metrics.missed_periods > 0, "{:?}", report.metrics);
    // The seed's SET NX EX 300, killed the same way, frees the lock when the TTL runs out.
    let seed = locklab_engine::simulate_recipe(&killed, StrategyId::Naive, &Recipe::default()).expect("it plays");
    assert!(seed.iter().any(|event| matches!(event.kind, EventKind::KeyExpired { .. })));
}

#[test]
fn a_plain_expire_renews_whatever_key_is_there_so_a_holder_that_carries_on_extends_the_next_one_s_lock() {
    let fencing = Scenario::default().settings_for(StrategyId::Fencing).recipe().expect("fencing is a recipe");
    let mut document = serde_json::to_value(&fencing).unwrap_or_default();
    document["renew"] = serde_json::json!({"with": "expire", "every_ms": 10_000});
    document["on_lost"] = serde_json::json!("carry_on");
    let plain: Recipe = serde_json::from_value(document).expect("a recipe");
    plain.validate().unwrap_or_else(|error| panic!("{error}"));
    let pause = Scenario::from_json(builtin::find("pause-after-check").expect("a built-in").text).expect("valid");
    let log = locklab_engine::simulate_recipe(&pause, StrategyId::Fencing, &plain).expect("it plays");
    assert!(extended_another(&log) > 0, "the paused holder's EXPIRE extends the new holder's key");
    // The extend script, compared: a renewal extends only the run's own key.
    let scripted = locklab_engine::simulate_recipe(&pause, StrategyId::Fencing, &fencing).expect("it plays");
    assert_eq!(extended_another(&scripted), 0);
    assert!(redis_events(&scripted).any(|(_, _, command, _)| matches!(command, RedisCommand::CompareAndExtend { .. })));
}

/// How many renewals (a plain `EXPIRE` or the extend script) answered 1
/// while the lock service counted another run as the holder.
fn extended_another(log: &[Event]) -> usize {
    let mut holder = None;
    let mut extended = 0;
    for event in log {
        match event.kind {
            EventKind::Granted { run, .. } => holder = Some(run),
            EventKind::Revoked { run, .. } if holder == Some(run) => holder = None,
            EventKind::Redis {
                run,
                command: RedisCommand::Expire { .. } | RedisCommand::CompareAndExtend { .. },
                reply: RedisReply::Integer(1),
                ..
            } if holder.is_some_and(|holder| holder != run) => extended += 1,
            _ => {}
        }
    }
    extended
}

/// A night of one minute (a 20 s job in four chunks) whose holder a GC
/// pause of 35 s strikes at `pause_at_ms`: longer than the 30 s lease.
fn paused_minute(pause_at_ms: u64) -> Scenario {
    Scenario::from_json(&format!(
        r#"{{"format": "locklab/2", "seed": 3, "duration_ms": 60000,
            "world": {{"cron_period_ms": 60000, "job_ms": 20000, "storage_checks_tokens": false}},
            "faults": [{{"kind": "gc_pause", "at_ms": {pause_at_ms}, "target": "holder", "duration_ms": 35000}}]}}"#
    ))
    .expect("a valid scenario")
}

/// The run the pause struck, and whether it wrote after it woke (a chunk,
/// the Slack post or the report row sent from 45 s on).
fn paused_run_wrote_after_waking(log: &[Event]) -> (RunId, bool, bool) {
    let paused = log
        .iter()
        .find_map(|event| match event.kind {
            EventKind::Granted { run, .. } => Some(run),
            _ => None,
        })
        .expect("somebody holds the lock when the pause strikes");
    let instance = log
        .iter()
        .find_map(|event| match event.kind {
            EventKind::Granted { run, instance, .. } if run == paused => Some(instance),
            _ => None,
        })
        .expect("its instance");
    let wrote = log.iter().any(|event| {
        event.at_ms >= 45_000
            && matches!(event.kind, EventKind::Sent { from: Party::Instance(from), what, .. }
                if from == instance && what != locklab_engine::event::MessageKind::Redis)
    });
    let stopped = log.iter().any(|event| {
        matches!(event.kind, EventKind::Run { run, phase: locklab_engine::event::RunPhase::Aborted(locklab_engine::event::AbortReason::LeaseTooShort), .. } if run == paused)
    });
    (paused, wrote, stopped)
}

#[test]
fn a_lease_check_before_each_write_stops_a_holder_that_woke_late_but_not_one_paused_after_the_check() {
    // SET NX PX 30000 with the run's own value, never renewed, no token; the
    // unlock script at the end; with and without a look at the lease's time
    // left (2 s at least) before each write.
    let unchecked = recipe(serde_json::json!({
        "take": {"with": "set_nx_px", "value": "own", "ttl_ms": 30_000},
        "release": "compare_and_delete"
    }));
    let mut document = serde_json::to_value(&unchecked).unwrap_or_default();
    document["before_write"] = serde_json::json!({"check": "lease_time_left", "at_least_ms": 2_000});
    let checked: Recipe = serde_json::from_value(document).expect("a recipe");
    checked.validate().unwrap_or_else(|error| panic!("{error}"));
    // Paused between two steps (at 11 s: the job's chunks go out every 4 s
    // from 0.07 s, each a second's upload): at the next step it wakes with
    // its lease long gone by its own clock. Unchecked it writes anyway;
    // checked it stops.
    let between = paused_minute(11_000);
    let log = locklab_engine::simulate_recipe(&between, StrategyId::Naive, &unchecked).expect("it plays");
    let (_, wrote, stopped) = paused_run_wrote_after_waking(&log);
    assert!(wrote && !stopped, "unchecked, the paused holder writes when it wakes");
    let log = locklab_engine::simulate_recipe(&between, StrategyId::Naive, &checked).expect("it plays");
    let (_, wrote, stopped) = paused_run_wrote_after_waking(&log);
    assert!(stopped && !wrote, "checked, it stops at its next write instead");
    // Paused after the check, while the third chunk uploads (sent at
    // 12.07 s): the check passed, and the write lands after the lease ran
    // out and another run took the lock (Kleppmann's pause).
    let after_check = paused_minute(12_500);
    let log = locklab_engine::simulate_recipe(&after_check, StrategyId::Naive, &checked).expect("it plays");
    let report = locklab_engine::report::analyze(&after_check, StrategyId::Naive, &log);
    assert!(report.metrics.stale_writes_accepted > 0, "the check did not stop it: {:?}", report.metrics);
}

#[test]
fn get_and_compare_before_each_write_stops_a_holder_whose_key_is_another_s_but_not_one_paused_after_the_answer() {
    let unchecked = recipe(serde_json::json!({
        "take": {"with": "set_nx_px", "value": "own", "ttl_ms": 30_000},
        "release": "compare_and_delete"
    }));
    let mut document = serde_json::to_value(&unchecked).unwrap_or_default();
    document["before_write"] = serde_json::json!({"check": "get_and_compare"});
    let checked: Recipe = serde_json::from_value(document).expect("a recipe");
    checked.validate().unwrap_or_else(|error| panic!("{error}"));
    // Paused between two steps: when it wakes, the key is the next holder's.
    let between = paused_minute(11_000);
    let log = locklab_engine::simulate_recipe(&between, StrategyId::Naive, &checked).expect("it plays");
    let (paused, wrote, _) = paused_run_wrote_after_waking(&log);
    assert!(!wrote, "it asked Redis first, and the key was not its own");
    let stopped = log.iter().any(|event| {
        matches!(event.kind, EventKind::Run { run, phase: locklab_engine::event::RunPhase::Aborted(locklab_engine::event::AbortReason::NotHolder), .. } if run == paused)
    });
    assert!(stopped, "it stops, naming why");
    // Every write of a holder went out after a GET that found its value.
    let gets = redis_events(&log).filter(|(_, _, command, _)| *command == RedisCommand::Get).count();
    assert!(gets >= 4, "a GET before each write: {gets}");
    // Paused after the answer, while the chunk uploads: the write lands
    // after the lease ran out, as with any look before a write.
    let after_check = paused_minute(12_500);
    let log = locklab_engine::simulate_recipe(&after_check, StrategyId::Naive, &checked).expect("it plays");
    let report = locklab_engine::report::analyze(&after_check, StrategyId::Naive, &log);
    assert!(report.metrics.stale_writes_accepted > 0, "the check did not stop it: {:?}", report.metrics);
}
