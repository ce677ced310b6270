//! Tests of the quiz page's pure parts, run by `wasm-bindgen-test` in headless
//! Chromium like the lab's component tests: the stored-progress parser (every
//! way a stored value can be unreadable), the cards, and the reducer (nothing
//! runs before the check; the pairing of the two runs; progress and reset).

use locklab_frontend::quiz::progress::{PROGRESS_KEY, Progress, Status, parse_progress};
use locklab_frontend::quiz::state::{Pairing, QuizAction, QuizState, load_cards};
use std::rc::Rc;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};
use yew::Reducible;

wasm_bindgen_test_configure!(run_in_browser);

fn reduce(state: QuizState, actions: impl IntoIterator<Item = QuizAction>) -> QuizState {
    let mut state = Rc::new(state);
    for action in actions {
        state = state.reduce(action);
    }
    (*state).clone()
}

fn fresh() -> QuizState {
    let (cards, problems) = load_cards();
    assert!(problems.is_empty(), "{problems:?}");
    QuizState::new(Rc::new(cards), Progress::default(), None, None)
}

#[wasm_bindgen_test]
fn progress_round_trips_under_a_versioned_key() {
    assert_eq!(PROGRESS_KEY, "locklab.quiz.v1");
    let progress = Progress::default().with("two-am", "B", false).with("pause-after-check", "B", true);
    let text = progress.to_json();
    assert_eq!(
        text,
        r#"{"version":1,"cards":{"pause-after-check":{"pick":"B","right":true},"two-am":{"pick":"B","right":false}}}"#
    );
    assert_eq!(parse_progress(&text), Ok(progress.clone()));
    assert_eq!(progress.status("two-am"), Status::Wrong);
    assert_eq!(progress.status("pause-after-check"), Status::Right);
    assert_eq!(progress.status("delayed-packet"), Status::NotTried);
    // A card that no longer exists does not count.
    assert_eq!(progress.score(["two-am", "pause-after-check", "delayed-packet"]), (1, 2));
    assert_eq!(progress.score(["two-am"]), (0, 1));
    // No cards yet is a valid record too.
    assert_eq!(parse_progress(r#"{"version": 1}"#), Ok(Progress::default()));
}

#[wasm_bindgen_test]
fn an_unreadable_progress_value_says_why() {
    let cases = [
        ("", "it is not JSON"),
        ("{\"version\": 1, \"cards\": ", "it is not JSON"),
        ("locklab", "it is not JSON"),
        ("[1, 2, 3]", "it is not a quiz progress record: it has no version number"),
        ("{\"cards\": {}}", "it is not a quiz progress record: it has no version number"),
        ("{\"version\": \"1\"}", "it is not a quiz progress record: it has no version number"),
        ("{\"version\": 2, \"cards\": {}}", "it is version 2, which this quiz does not know (it reads version 1)"),
        ("{\"version\": 0}", "it is version 0, which this quiz does not know (it reads version 1)"),
    ];
    for (text, reason) in cases {
        assert_eq!(parse_progress(text), Err(reason.to_owned()), "{text}");
    }
    let shapes = [
        r#"{"version": 1, "cards": []}"#,
        r#"{"version": 1, "cards": {"two-am": {"pick": 3, "right": true}}}"#,
        r#"{"version": 1, "cards": {"two-am": {"pick": "A"}}}"#,
        r#"{"version": 1, "cards": {"two-am": {"pick": "A", "right": true, "extra": 1}}}"#,
        r#"{"version": 1, "cards": {}, "more": true}"#,
    ];
    for text in shapes {
        let reason = parse_progress(text).expect_err(text);
        assert!(reason.starts_with("it does not have the shape of quiz progress: "), "{text}: {reason}");
    }
}

#[wasm_bindgen_test]
fn every_card_comes_in_order_without_its_answer_in_the_scenario() {
    let (cards, problems) = load_cards();
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(cards.len(), locklab_engine::builtin::QUIZZES.len(), "every card file is a card on the page");
    assert_eq!(cards[0].name, "two-am", "the 2 am story first");
    for card in &cards {
        // A share link carries the scenario: it must not carry the answer.
        assert!(card.scenario.quiz.is_none(), "{}", card.name);
        assert!(card.quiz.choices.len() >= 2);
    }
}

#[wasm_bindgen_test]
fn nothing_runs_before_the_check_and_a_wrong_pick_is_shown_beside_a_right_answer() {
    let state = reduce(fresh(), [QuizAction::Pick("B".to_owned())]);
    assert_eq!(state.card().map(|card| card.name), Some("two-am"));
    assert_eq!(state.pick.as_deref(), Some("B"));
    assert!(state.answered.is_none(), "a pick alone runs nothing");
    // A choice the card does not have is ignored.
    assert_eq!(reduce(state.clone(), [QuizAction::Pick("Z".to_owned())]).pick.as_deref(), Some("B"));
    let state = reduce(state, [QuizAction::Check]);
    let answered = state.answered.as_ref().expect("checked");
    assert!(!answered.right);
    assert_eq!(answered.pairing, Pairing::RightAnswer);
    assert_eq!(answered.pick.run.strategy.name(), "redlock");
    assert_eq!(answered.other.run.strategy.name(), "fencing", "the card's first right answer");
    assert_eq!(state.progress.status("two-am"), Status::Wrong);
    assert_eq!(state.score(), (0, 1));
    // The pick is fixed once checked; playback runs to the end and stops.
    let state = reduce(state, [QuizAction::Pick("A".to_owned()), QuizAction::TogglePlay]);
    assert_eq!(state.pick.as_deref(), Some("B"));
    assert!(state.playing);
    let end = state.duration_ms();
    let state = reduce(state, [QuizAction::Advance(end + 1_000)]);
    assert_eq!((state.cursor_ms, state.playing), (end, false));
}

#[wasm_bindgen_test]
fn a_right_pick_is_shown_beside_another_right_answer_or_the_closest_wrong_one() {
    // Card 1's only right answer is A, the post's: beside it, the closest
    // wrong choice, which the post names too: D, right data at triple the work.
    let state = reduce(fresh(), [QuizAction::Pick("A".to_owned()), QuizAction::Check]);
    let answered = state.answered.as_ref().expect("checked");
    assert!(answered.right);
    assert_eq!((answered.pairing, answered.other.choice.id.as_str()), (Pairing::ClosestWrong, "D"));
    // Card 2's only right answer is B (Redlock): its closest wrong choice is
    // A, the same lease with a token that refuses the stale write.
    let state = reduce(state, [QuizAction::Open(1), QuizAction::Pick("B".to_owned()), QuizAction::Check]);
    let answered = state.answered.as_ref().expect("checked");
    assert!(answered.right);
    assert_eq!((answered.pairing, answered.other.choice.id.as_str()), (Pairing::ClosestWrong, "A"));
    assert_eq!(answered.other.run.report.metrics.stale_writes_rejected, 1);
    // Card 3 has two right answers, B and C: each is shown beside the other.
    let state = reduce(state, [QuizAction::Open(2), QuizAction::Pick("B".to_owned()), QuizAction::Check]);
    let answered = state.answered.as_ref().expect("checked");
    assert!(answered.right);
    assert_eq!((answered.pairing, answered.other.choice.id.as_str()), (Pairing::AnotherRightAnswer, "C"));
    assert_eq!(state.score(), (3, 3));
    // Reopening an answered card shows it answered; "Try again" frees the
    // pick but keeps the progress; "Reset progress" forgets everything.
    let state = reduce(state, [QuizAction::Open(0)]);
    assert_eq!(state.answered.as_ref().map(|answered| answered.pick.choice.id.as_str()), Some("A"));
    let state = reduce(state, [QuizAction::TryAgain]);
    assert!(state.answered.is_none() && state.pick.is_none());
    assert_eq!(state.score(), (3, 3));
    let state = reduce(state, [QuizAction::ResetProgress]);
    assert_eq!(state.score(), (0, 0));
    assert!(state.notice.is_some());
}

#[wasm_bindgen_test]
fn the_quiz_opens_on_the_first_card_not_tried() {
    let (cards, _) = load_cards();
    let progress = Progress::default().with("two-am", "A", true);
    let state = QuizState::new(Rc::new(cards), progress, None, None);
    assert_eq!(state.card().map(|card| card.name), Some("pause-after-check"));
    assert!(state.answered.is_none());
}
