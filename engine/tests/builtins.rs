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
    assert!(builtin::ALL.len() >= 8, "the issue asks for eight stories");
}
