//! Every sentence the lab shows about a built-in run is held to that run: a
//! scenario's `description` to the claims it lists per strategy, each
//! `expect.why` to its own, a quiz card's story and explanation to the
//! claims it lists per strategy. The text must list a claim for every
//! verdict word, instance, count and token it states (`claim::check_text`),
//! and every claim must hold in the run it names (`Claim::check`). A text
//! that names a holder, a pause target, an order or a count its run does not
//! have fails here, naming the document, the field and the claim.
//! (Story steps are held the same way by `stories.rs`.) The claims are read
//! from the documents here: the engine accepts them and keeps nothing of
//! them, so no page carries their grammar.

use locklab_engine::claim::{Claim, check, check_text};
use locklab_engine::report::{StrategyReport, analyze};
use locklab_engine::view::Timeline;
use locklab_engine::{Scenario, StrategyId, builtin, simulate};
use serde_json::Value;
use std::collections::BTreeMap;

/// A list of claims at `path` in a document (absent: none).
fn claims_at(document: &Value, path: &[&str]) -> Vec<String> {
    let mut value = document;
    for key in path {
        match value.get(key) {
            Some(inner) => value = inner,
            None => return Vec::new(),
        }
    }
    value
        .as_array()
        .map(|claims| claims.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Claims per strategy at `path` (`{"naive": [...]}`).
fn claims_by_strategy(document: &Value, path: &[&str]) -> BTreeMap<StrategyId, Vec<String>> {
    let mut value = document;
    for key in path {
        match value.get(key) {
            Some(inner) => value = inner,
            None => return BTreeMap::new(),
        }
    }
    let Some(map) = value.as_object() else { return BTreeMap::new() };
    map.iter()
        .map(|(name, claims)| {
            let strategy =
                StrategyId::parse(name).unwrap_or_else(|| panic!("claims for `{name}`, which is no strategy"));
            let claims =
                claims.as_array().map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned).collect());
            (strategy, claims.unwrap_or_default())
        })
        .collect()
}

/// The run of one strategy, its timeline and report.
fn run(scenario: &Scenario, strategy: StrategyId) -> (Timeline, StrategyReport) {
    let log = simulate(scenario, strategy);
    (Timeline::build(scenario, strategy, &log), analyze(scenario, strategy, &log))
}

/// A text whose claims are given per strategy: the text against all of them,
/// each strategy's claims against its run.
fn check_per_strategy(
    scenario: &Scenario,
    text: &str,
    claims: &BTreeMap<StrategyId, Vec<String>>,
) -> Result<(), String> {
    let all: Vec<Claim> = claims.values().flatten().map(|claim| Claim::parse(claim)).collect::<Result<_, _>>()?;
    check_text(text, &all, scenario)?;
    for (strategy, claims) in claims {
        let (timeline, report) = run(scenario, *strategy);
        for claim in claims {
            Claim::parse(claim)?
                .check(&scenario.clock_origin, &timeline, &report)
                .map_err(|problem| format!("under {strategy}: {problem}"))?;
        }
    }
    Ok(())
}

#[test]
fn every_scenario_text_says_what_its_runs_do() {
    let mut failures = Vec::new();
    for builtin in builtin::ALL {
        let scenario = Scenario::from_json(builtin.text).unwrap_or_else(|error| panic!("{}: {error}", builtin.name));
        let document: Value = serde_json::from_str(builtin.text).expect("a built-in is JSON");
        if let Some(description) = &scenario.description
            && let Err(problem) =
                check_per_strategy(&scenario, description, &claims_by_strategy(&document, &["claims"]))
        {
            failures.push(format!("{}: description: {problem}", builtin.name));
        }
        for (strategy, expectation) in &scenario.expect {
            let Some(why) = &expectation.why else { continue };
            let (timeline, report) = run(&scenario, *strategy);
            let claims = claims_at(&document, &["expect", strategy.name(), "claims"]);
            if let Err(problem) = check(why, &claims, &scenario, &timeline, &report) {
                failures.push(format!(
                    "{}: expect.{strategy}.why: {problem}\n    look: cargo run --bin locklab -- run {} --strategy {strategy}",
                    builtin.name, builtin.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "texts that do not say what their runs do:\n{}", failures.join("\n"));
}

#[test]
fn every_quiz_text_says_what_its_runs_do() {
    let mut failures = Vec::new();
    for builtin in builtin::QUIZZES {
        let scenario = Scenario::from_json(builtin.text).unwrap_or_else(|error| panic!("{}: {error}", builtin.name));
        let quiz = scenario.quiz.as_ref().expect("a quiz card");
        let document: Value = serde_json::from_str(builtin.text).expect("a quiz card is JSON");
        let claims = claims_by_strategy(&document, &["quiz", "claims"]);
        for (field, text) in [("story", &quiz.story), ("explanation", &quiz.explanation)] {
            if let Err(problem) = check_per_strategy(&scenario, text, &claims) {
                failures.push(format!(
                    "quiz {}: {field}: {problem}\n    look: cargo run --bin locklab -- compare engine/quizzes/*-{}.json",
                    builtin.name, builtin.name
                ));
            }
        }
        // The fix a card offers to play says what its own run does.
        if let (Some(fix), Some((fixed, _))) = (&quiz.fix, quiz.fix_scenario(&scenario)) {
            let claims = claims_by_strategy(&document, &["quiz", "fix", "claims"]);
            if claims.is_empty() {
                failures.push(format!("quiz {}: fix: lists no claims", builtin.name));
            }
            if let Err(problem) = check_per_strategy(&fixed, &fix.text, &claims) {
                failures.push(format!("quiz {}: fix.text: {problem}", builtin.name));
            }
        }
    }
    assert!(failures.is_empty(), "quiz texts that do not say what their runs do:\n{}", failures.join("\n"));
}

#[test]
fn a_text_that_misnames_its_run_fails() {
    // The post's night under its own lock: b wins the first grant, the GC pause strikes a.
    let scenario = Scenario::from_json(builtin::find("two-am-saturday").expect("built-in").text).expect("valid");
    let (timeline, report) = run(&scenario, StrategyId::Naive);
    let claims = |texts: &[&str]| texts.iter().map(|text| (*text).to_owned()).collect::<Vec<_>>();
    assert!(check("b wins the lock.", &claims(&["grant#1@b"]), &scenario, &timeline, &report).is_ok());
    assert!(
        check("c wins the lock.", &claims(&["grant#1@c"]), &scenario, &timeline, &report).is_err(),
        "the wrong holder"
    );
    assert!(
        check("c wins the lock.", &claims(&["grant#1@b"]), &scenario, &timeline, &report).is_err(),
        "c is no claim's"
    );
    assert!(
        check("A pause freezes b.", &claims(&["fault:gc_pause@b"]), &scenario, &timeline, &report).is_err(),
        "the wrong target"
    );
    assert!(check("It is safe.", &claims(&["safe"]), &scenario, &timeline, &report).is_err(), "the wrong verdict");
    assert!(
        check("a wakes before c.", &claims(&["order:grant@c<grant@a"]), &scenario, &timeline, &report).is_err(),
        "the wrong order"
    );
    assert!(
        check("It posts 9 posts.", &claims(&["count:finding:duplicate_post=9"]), &scenario, &timeline, &report)
            .is_err()
    );
}
