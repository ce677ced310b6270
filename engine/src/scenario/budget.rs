//! The work a scenario asks of the engine, estimated before it runs, so that
//! no document (a file, a share link, the lab's saved state) can make a run
//! that takes minutes or gigabytes: one over the budget is refused with the
//! setting that makes most of the work and the value that would fit.
//!
//! The estimate counts logged events per strategy, from the rates the world
//! sets: cron ticks and their jobs, losers' retries while the lock is held,
//! lease renewals while a job runs, and other services' queries where they
//! are logged (under `FOR UPDATE`, or when their own pool overflows). It is
//! an upper bound in the usual case, not a promise: the report says what
//! happened.

use super::error::ScenarioError;
use super::faults::Fault;
use super::schema::{MAX_DURATION_MS, Scenario};
use super::strategies::{LockStrength, StrategyId, StrategySettings};
use super::world::{BACKGROUND_QUERY_MS, World};
use crate::format::seconds;

/// Most events one strategy's run may be expected to log. A run of this size
/// takes a few seconds and a few hundred megabytes in a browser tab
/// (`docs/bench.md`); every built-in and quiz card is far below it.
pub const MAX_EVENTS: u64 = 1_000_000;

/// The hard cap behind the estimate: a run stops logging here whatever the
/// estimate said, so a scenario the estimate misjudges still ends, in about
/// twice the budget's time and memory. No scenario is known to reach it;
/// callers say so if one does ([`crate::log_was_cut`]).
pub const MAX_LOGGED_EVENTS: u64 = 2 * MAX_EVENTS;

/// What to say of a run that reached [`MAX_LOGGED_EVENTS`].
pub fn cut_message(strategy: StrategyId) -> String {
    format!(
        "{strategy}'s run reached the engine's hard cap of {MAX_LOGGED_EVENTS} events, so it cannot be shown \
         whole; the work budget should have refused it (please report this): shorten duration_ms or slow its rates"
    )
}

/// Events a period's run logs besides its chunks (cron, lock, checks, post, row).
const EVENTS_PER_RUN: u64 = 30;
/// Events a chunk upload logs (the request, the storage's answer, the reply).
const EVENTS_PER_CHUNK: u64 = 6;
/// Events a loser's retry logs (the existence check and the lock attempt).
const EVENTS_PER_RETRY: u64 = 8;

/// How a setting would change to bring the estimate down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fix {
    /// The work falls as the setting rises (a period, an interval).
    Raise(u64),
    /// The work falls with the setting (a rate).
    Lower(u64),
}

/// One source of work, with the setting that drives it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Part {
    path: String,
    events: u64,
    fix: Fix,
}

/// The GC pauses' total: they stretch a job.
fn paused_ms(scenario: &Scenario) -> u64 {
    scenario
        .faults
        .iter()
        .filter_map(|fault| if let Fault::GcPause { duration_ms, .. } = fault { Some(*duration_ms) } else { None })
        .fold(0, u64::saturating_add)
}

/// How long a run is expected to go on after its window: in the usual case
/// the last tick's job, stretched by the pauses. The drain's own limit is for
/// a run that cannot end (a lock a lost host keeps), which the hard cap
/// stands behind.
fn tail_ms(scenario: &Scenario) -> u64 {
    scenario.drain_ms().min(scenario.world.job_ms.saturating_add(paused_ms(scenario)))
}

/// The events a strategy's run is expected to log, by source.
fn parts(scenario: &Scenario, settings: &StrategySettings) -> Vec<Part> {
    // Cron fires in the window; retries, renewals and other services' traffic
    // go on while the runs in flight drain after it.
    let duration_ms = scenario.duration_ms().saturating_add(tail_ms(scenario));
    let busy_ms = busy_ms(scenario, duration_ms);
    let mut parts = vec![cron_part(scenario), retry_part(&scenario.world, busy_ms)];
    parts.extend(renewal_part(settings, busy_ms));
    parts.push(background_part(&scenario.world, settings, duration_ms, busy_ms));
    parts
}

/// How long a job is running (and so the lock held) in `ms` of the run: the
/// job's share of each period, plus the pauses, which stretch a job.
fn busy_ms(scenario: &Scenario, ms: u64) -> u64 {
    let world = &scenario.world;
    let share = ms.saturating_mul(world.job_ms.min(world.cron_period_ms)) / world.cron_period_ms.max(1);
    share.saturating_add(paused_ms(scenario)).min(ms)
}

/// Every instance's run of every period in the window, its chunks included.
fn cron_part(scenario: &Scenario) -> Part {
    let world = &scenario.world;
    let periods = scenario.duration_ms().div_ceil(world.cron_period_ms.max(1));
    Part {
        path: "world.cron_period_ms".to_owned(),
        events: u64::from(world.instances)
            .saturating_mul(periods)
            .saturating_mul(u64::from(world.report_chunks) * EVENTS_PER_CHUNK + EVENTS_PER_RUN),
        fix: Fix::Raise(world.cron_period_ms),
    }
}

/// The retries of every instance but the holder, while a job holds the lock.
fn retry_part(world: &World, busy_ms: u64) -> Part {
    Part {
        path: "world.retry_ms".to_owned(),
        events: u64::from(world.instances).saturating_sub(1).saturating_mul(busy_ms / world.retry_ms.max(1))
            * EVENTS_PER_RETRY,
        fix: Fix::Raise(world.retry_ms),
    }
}

/// A lease's renewals while a job holds it, for the strategies that renew.
fn renewal_part(settings: &StrategySettings, busy_ms: u64) -> Option<Part> {
    let (name, renew_every_ms, per_renewal) = match settings {
        StrategySettings::Fencing(lease) => ("fencing", lease.renew_every_ms, 4),
        StrategySettings::Consensus(lease) => ("consensus", lease.renew_every_ms, 4),
        StrategySettings::Redlock(redlock) => ("redlock", redlock.renew_every_ms, u64::from(redlock.nodes) * 3 + 2),
        StrategySettings::Naive(_) | StrategySettings::DbLock(_) | StrategySettings::UniqueInsert => return None,
    };
    Some(Part {
        path: format!("strategies.{name}.renew_every_ms"),
        // Two holders at once at worst: a paused one and its successor.
        events: (busy_ms / renew_every_ms.max(1)).saturating_mul(2 * per_renewal),
        fix: Fix::Raise(renew_every_ms),
    })
}

/// Other services' queries that are logged: those that queue behind the
/// job's row lock, and those that queue for one of their own connections.
fn background_part(world: &World, settings: &StrategySettings, duration_ms: u64, busy_ms: u64) -> Part {
    let rate = u64::from(world.background_queries_per_s);
    // Other services' own connections: past them, their queries queue and are logged.
    let overflowing = rate.saturating_mul(BACKGROUND_QUERY_MS) > u64::from(world.background_pool_size) * 1_000;
    // Under FOR UPDATE their foreign-key checks queue behind the row lock
    // while a job runs, and each is logged: waiting, granted, done; the
    // reads behind them queue for a connection and are logged once.
    let logged_per_query_tenths = match settings {
        StrategySettings::DbLock(db_lock) if db_lock.lock_strength == LockStrength::ForUpdate => {
            10 + 25 * u64::from(world.background_foreign_key_percent) / 100
        }
        StrategySettings::DbLock(_)
        | StrategySettings::Naive(_)
        | StrategySettings::Fencing(_)
        | StrategySettings::Redlock(_)
        | StrategySettings::UniqueInsert
        | StrategySettings::Consensus(_) => {
            if overflowing {
                10
            } else {
                0
            }
        }
    };
    let logged_ms = if overflowing { duration_ms } else { busy_ms };
    Part {
        path: "world.background_queries_per_s".to_owned(),
        events: rate.saturating_mul(logged_ms) / 1_000 * logged_per_query_tenths / 10,
        fix: Fix::Lower(rate),
    }
}

/// The scenario's heaviest strategy: its expected events, its settings, and
/// where they come from.
fn heaviest(scenario: &Scenario) -> Option<(u64, StrategySettings, Vec<Part>)> {
    scenario
        .strategy_settings()
        .into_iter()
        .map(|settings| {
            let parts = parts(scenario, &settings);
            (parts.iter().map(|part| part.events).fold(0, u64::saturating_add), settings, parts)
        })
        .max_by_key(|(total, ..)| *total)
}

/// Refuses a scenario whose heaviest strategy would log more than
/// [`MAX_EVENTS`], naming the setting that makes most of the work and what
/// would fit.
pub fn check(scenario: &Scenario) -> Result<(), ScenarioError> {
    if let Some((total, settings, parts)) = heaviest(scenario)
        && total > MAX_EVENTS
        && let Some(largest) = parts.iter().max_by_key(|part| part.events)
    {
        // What the setting would have to be for the run to fit, all else the
        // same; said only where such a value exists and is one the format allows.
        let room = MAX_EVENTS.saturating_sub(total - largest.events);
        let mut remedies: Vec<String> = Vec::new();
        match largest.fix {
            _ if room == 0 => {}
            Fix::Raise(now) => remedies.extend(
                now.checked_mul(largest.events)
                    .map(|product| product / room + 1)
                    .filter(|needed| *needed <= MAX_DURATION_MS)
                    .map(|needed| format!("raise it to at least {needed}")),
            ),
            Fix::Lower(now) => match now.saturating_mul(room) / largest.events.max(1) {
                0 => {}
                fits => remedies.push(format!("lower it to at most {fits}")),
            },
        }
        let duration_ms = scenario.duration_ms();
        // Most of the work is proportional to the run's length, its drain
        // included; a tenth is kept in hand for what is not (whole periods,
        // the faults). (A run is at most two days, under 2^28 ms, so the
        // product fits.)
        let tail_ms = tail_ms(scenario);
        let horizon_ms = scenario.duration_ms().saturating_add(tail_ms).saturating_mul(MAX_EVENTS / 10 * 9) / total;
        // The drain alone may be too much: then no shorter window helps.
        if let Some(shorter) = horizon_ms.checked_sub(tail_ms).filter(|shorter| *shorter > 0) {
            remedies.push(format!("shorten duration_ms to {shorter} ({})", seconds(shorter)));
        }
        let remedies = if remedies.is_empty() { String::new() } else { format!(": {}", remedies.join(", or ")) };
        let value = match largest.fix {
            Fix::Raise(now) | Fix::Lower(now) => now,
        };
        return Err(ScenarioError {
            path: largest.path.clone(),
            message: format!(
                "{value} over {} would have {} log about {total} events; the lab runs at most {MAX_EVENTS} per strategy{remedies}",
                seconds(duration_ms),
                settings.id(),
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin;

    /// The events the scenario's heaviest strategy is expected to log.
    fn estimate_events(scenario: &Scenario) -> u64 {
        heaviest(scenario).map_or(0, |(total, ..)| total)
    }

    #[test]
    fn every_builtin_and_quiz_card_fits_with_room_to_spare() {
        for card in builtin::ALL.iter().chain(builtin::QUIZZES) {
            let scenario = Scenario::from_json(card.text).expect("valid");
            let estimate = estimate_events(&scenario);
            assert!(estimate <= MAX_EVENTS / 10, "{}: {estimate} events estimated", card.name);
        }
    }

    #[test]
    fn a_run_the_estimate_missed_stops_at_the_hard_cap() {
        // Validation would refuse this (about 25 M events); the cap is for a
        // scenario the estimate misjudges, so it is built past validation.
        let mut scenario = Scenario::from_json(r#"{"format": "locklab/2", "duration_ms": 86400000}"#).expect("valid");
        scenario.world.background_queries_per_s = 100;
        assert!(check(&scenario).is_err(), "the budget refuses it");
        let log = crate::simulate(&scenario, StrategyId::DbLock);
        assert!(crate::log_was_cut(&log));
        assert_eq!(u64::try_from(log.len()).ok(), Some(MAX_LOGGED_EVENTS));
        let under = crate::simulate(&Scenario::from_json(builtin::ALL[0].text).expect("valid"), StrategyId::DbLock);
        assert!(!crate::log_was_cut(&under));
    }

    #[test]
    fn the_estimate_bounds_what_the_engine_logs() {
        for card in builtin::ALL {
            let scenario = Scenario::from_json(card.text).expect("valid");
            let estimate = estimate_events(&scenario);
            for settings in scenario.strategy_settings() {
                let logged = crate::simulate(&scenario, settings.id()).len();
                let logged = u64::try_from(logged).unwrap_or(u64::MAX);
                assert!(
                    logged <= estimate,
                    "{} / {}: {logged} events logged, {estimate} estimated",
                    card.name,
                    settings.id()
                );
            }
        }
    }

    #[test]
    fn a_run_over_the_budget_is_refused_with_the_setting_and_a_value_that_fits() {
        let cases = [
            (
                r#"{"format": "locklab/2", "duration_ms": 86400000, "world": {"retry_ms": 10}}"#,
                "world.retry_ms: 10 over 86400 s",
            ),
            (
                r#"{"format": "locklab/2", "duration_ms": 86400000, "world": {"background_queries_per_s": 1000}}"#,
                "world.background_queries_per_s: 1000 over 86400 s would have db-lock log",
            ),
            (
                r#"{"format": "locklab/2", "duration_ms": 86400000, "strategies": {"fencing": {"renew_every_ms": 1}}}"#,
                "strategies.fencing.renew_every_ms: 1 over",
            ),
            (
                r#"{"format": "locklab/2", "duration_ms": 86400000, "world": {"cron_period_ms": 1000, "report_chunks": 64}}"#,
                "world.cron_period_ms: 1000 over",
            ),
        ];
        for (text, expected) in cases {
            let error = Scenario::from_json(text).expect_err(text).to_string();
            assert!(error.starts_with(expected), "{text}\n  gave: {error}");
            assert!(error.contains("the lab runs at most 1000000 per strategy"), "{error}");
            // A way out: the setting's value that fits, or a shorter window
            // (none when the drain after the window is too much on its own).
            assert!(
                ["raise it to", "lower it to", "shorten duration_ms to"].iter().any(|way| error.contains(way)),
                "{error}"
            );
        }
        // The value it names does fit (all else the same), and so does the shorter run.
        let over = r#"{"format": "locklab/2", "duration_ms": 21600000, "world": {"retry_ms": 10}, "strategies": {"naive": {}}}"#;
        let error = Scenario::from_json(over).expect_err("over").to_string();
        let value_after = |marker: &str| -> u64 {
            error
                .split(marker)
                .nth(1)
                .and_then(|rest| rest.split([',', ' ']).next())
                .and_then(|value| value.parse().ok())
                .unwrap_or_else(|| panic!("no value after {marker:?} in {error}"))
        };
        let retry_ms = value_after("raise it to at least ");
        assert!(Scenario::from_json(&over.replace(r#""retry_ms": 10"#, &format!(r#""retry_ms": {retry_ms}"#))).is_ok());
        let duration_ms = value_after("shorten duration_ms to ");
        assert!(
            Scenario::from_json(&over.replace("21600000", &duration_ms.to_string())).is_ok(),
            "a run of {duration_ms} ms fits"
        );
    }
}
