//! No verdict depends on where the window ends. Runs in flight at the end
//! finish (the simulation drains them after the last tick), so a period cut
//! by the end is judged on what its runs did. Held here by lengthening
//! every built-in, under every strategy it runs, by one and by two whole
//! cron periods: a period the shorter run missed stays missed, a period it
//! completed before its window's end is completed at the same moment, and
//! the liveness verdict does not move (a backlog that grows is behind
//! however long the window, never late in a short one).

mod common;

use common::missed_periods;
use locklab_engine::report::analyze;
use locklab_engine::{Event, EventKind, Scenario, builtin, simulate};

/// When each of the first `periods` periods got its report, read from the log.
fn completions(log: &[Event], periods: u32) -> Vec<Option<u64>> {
    (0..periods)
        .map(|period| {
            log.iter()
                .find(|event| matches!(&event.kind, EventKind::RowApplied { period: done, .. } if done.0 == period))
                .map(|event| event.at_ms)
        })
        .collect()
}

#[test]
fn lengthening_a_builtin_by_whole_periods_never_undoes_a_verdict_on_a_period() {
    let mut failures = Vec::new();
    for builtin in builtin::ALL {
        let scenario = Scenario::from_json(builtin.text).expect("built-ins are valid");
        let period_ms = scenario.world.cron_period_ms;
        let periods = u32::try_from(scenario.duration_ms().div_ceil(period_ms)).expect("a few periods");
        for settings in scenario.strategy_settings() {
            let strategy = settings.id();
            let log = simulate(&scenario, strategy);
            let report = analyze(&scenario, strategy, &log);
            let short_missed = missed_periods(&report);
            let short_done = completions(&log, periods);
            for more in [1, 2] {
                let mut longer = scenario.clone();
                longer.duration_ms = Some(scenario.duration_ms() + more * period_ms);
                let long_log = simulate(&longer, strategy);
                let long_report = analyze(&longer, strategy, &long_log);
                let rerun = format!(
                    "\n    rerun: cargo run --bin locklab -- run {} --strategy {strategy} (and with duration_ms {})",
                    builtin.name,
                    longer.duration_ms()
                );
                if long_report.liveness != report.liveness {
                    failures.push(format!(
                        "{} / {strategy}: liveness is {:?} over {} ms but {:?} over {} ms{rerun}",
                        builtin.name,
                        report.liveness,
                        scenario.duration_ms(),
                        long_report.liveness,
                        longer.duration_ms()
                    ));
                }
                let long_missed = missed_periods(&long_report);
                for period in &short_missed {
                    if !long_missed.contains(period) {
                        failures.push(format!(
                            "{} / {strategy}: period {period} is missed over {} ms but not over {} ms{rerun}",
                            builtin.name,
                            scenario.duration_ms(),
                            longer.duration_ms()
                        ));
                    }
                }
                let long_done = completions(&long_log, periods);
                for (period, (short, long)) in short_done.iter().zip(&long_done).enumerate() {
                    if short.is_some_and(|done| done < scenario.duration_ms()) && short != long {
                        failures.push(format!(
                            "{} / {strategy}: period {period} is done at {short:?} over {} ms, at {long:?} over {} ms{rerun}",
                            builtin.name,
                            scenario.duration_ms(),
                            longer.duration_ms()
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "verdicts that depend on where the window ends:\n{}", failures.join("\n"));
}
