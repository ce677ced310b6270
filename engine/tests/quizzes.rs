//! Every quiz card runs through the engine, and its stated answer must be the
//! one the engine computes: an author who writes a wrong answer (or an engine
//! change that alters an outcome) fails here, with the command to look.

use locklab_engine::{Scenario, builtin};

#[test]
fn every_quiz_answer_is_what_the_engine_computes() {
    let mut failures = Vec::new();
    for builtin in builtin::QUIZZES {
        let scenario =
            Scenario::from_json(builtin.text).unwrap_or_else(|error| panic!("quiz {}: {error}", builtin.name));
        let quiz = scenario.quiz.as_ref().unwrap_or_else(|| panic!("quiz {} has no quiz fields", builtin.name));
        let (computed, reports) = quiz.compute(&scenario);
        if !quiz.is_right(&computed) {
            let outcomes: Vec<String> = reports
                .iter()
                .map(|(id, report)| format!("{id}={}: {:?}/{:?}", report.strategy, report.safety, report.liveness))
                .collect();
            failures.push(format!(
                "{}: states {:?}, the engine computes {:?} ({}). Look: cargo run --bin locklab -- compare engine/quizzes/*-{}.json",
                builtin.name,
                quiz.answer,
                computed,
                outcomes.join(", "),
                builtin.name
            ));
        }
    }
    assert!(failures.is_empty(), "quiz answers differ:\n{}", failures.join("\n"));
}

#[test]
fn there_are_at_least_ten_quizzes_and_the_seed_story_comes_first() {
    // Adding a card is adding a file: every file in engine/quizzes/ is a card.
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("quizzes");
    let files = std::fs::read_dir(&folder)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|entry| entry.path().extension().is_some_and(|extension| extension == "json"))
                .count()
        })
        .unwrap_or(0);
    assert_eq!(builtin::QUIZZES.len(), files, "every file in {} is a card", folder.display());
    assert_eq!(builtin::QUIZZES[0].name, "two-am");
    let first = Scenario::from_json(builtin::QUIZZES[0].text).expect("valid");
    let quiz = first.quiz.expect("quiz fields");
    let letters: Vec<&str> = quiz.choices.iter().map(|choice| choice.id.as_str()).collect();
    assert_eq!(letters, ["A", "B", "C", "D"], "the seed's question offers A–D");
}

#[test]
fn a_quiz_with_an_answer_outside_its_choices_is_refused() {
    let mut scenario = Scenario::from_json(builtin::QUIZZES[0].text).expect("valid");
    if let Some(quiz) = scenario.quiz.as_mut() {
        quiz.answer = vec!["Z".to_owned()];
    }
    let error = Scenario::from_json(&scenario.to_json()).expect_err("Z is not a choice");
    assert_eq!(error.to_string(), "quiz.answer[0]: `Z` is not one of the choices");
}

/// A choice that quotes the naive lock's command must quote the card's own
/// settings: the overrun card once offered "EX 300, the lock we have today"
/// over a 60 s lock released with DEL.
#[test]
fn a_choice_that_quotes_the_naive_lock_quotes_the_cards_own_ttl() {
    use locklab_engine::scenario::{StrategyId, StrategySettings};
    for builtin in builtin::QUIZZES {
        let scenario = Scenario::from_json(builtin.text).expect("valid quiz card");
        let StrategySettings::Naive(naive) = scenario.settings_for(StrategyId::Naive) else {
            unreachable!("settings_for(naive) is the naive lock's")
        };
        let quiz = scenario.quiz.as_ref().expect("quiz fields");
        for choice in quiz.choices.iter().filter(|choice| choice.strategy == StrategyId::Naive) {
            let quoted = choice.text.split_once(" EX ").map(|(_, rest)| {
                rest.chars().take_while(char::is_ascii_digit).collect::<String>().parse::<u64>().unwrap_or(0)
            });
            if let Some(seconds) = quoted {
                assert_eq!(
                    seconds * 1_000,
                    naive.ttl_ms,
                    "quiz {}: choice {} says EX {seconds}, the card's naive lock lives {} ms",
                    builtin.name,
                    choice.id,
                    naive.ttl_ms
                );
            }
        }
    }
}
