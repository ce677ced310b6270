//! No verdict turns on a race the run did not order. Events of the same
//! millisecond that concern no party in common (a's write and c's grant,
//! two instances' cron ticks) happened in no order the run decided: the
//! simulator's queue put one first. Every built-in and quiz card, under every
//! strategy it runs, is judged again on its log with such events swapped at
//! random, and must get the same three verdicts.

mod common;

use common::perturbed;
use locklab_engine::report::analyze;
use locklab_engine::{Scenario, builtin, simulate};

#[test]
fn shuffling_what_the_run_did_not_order_moves_no_verdict() {
    let mut failures = Vec::new();
    let mut swapped_somewhere = false;
    for document in builtin::ALL.iter().chain(builtin::QUIZZES) {
        let name = document.name;
        let scenario = Scenario::from_json(document.text).expect("built-ins are valid");
        for settings in scenario.strategy_settings() {
            let strategy = settings.id();
            let log = simulate(&scenario, strategy);
            let report = analyze(&scenario, strategy, &log);
            let verdict = (report.safety, report.liveness, report.efficiency);
            for seed in 1..=6 {
                let shuffled = perturbed(&log, seed);
                swapped_somewhere |= shuffled != log;
                let again = analyze(&scenario, strategy, &shuffled);
                let moved = (again.safety, again.liveness, again.efficiency);
                if moved != verdict {
                    failures.push(format!(
                        "{name} / {strategy}: {verdict:?} becomes {moved:?} with same-millisecond events shuffled (seed {seed})\n    rerun: cargo test -p locklab-engine --test order"
                    ));
                    break;
                }
            }
        }
    }
    assert!(swapped_somewhere, "no log had two unordered events in one millisecond: the test tests nothing");
    assert!(failures.is_empty(), "verdicts that turn on a race the run did not order:\n{}", failures.join("\n"));
}
