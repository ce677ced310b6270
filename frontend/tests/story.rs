//! Tests of the story page's reducer, run by `wasm-bindgen-test` in headless
//! Chromium like the quiz's: the post's night loads with every step's run and
//! moment, steps move and the cursor follows, play stops on the last step and
//! starts over from it, and a named step opens there.

use locklab_frontend::story::state::{StoryAction, StoryState, step_ms};
use std::rc::Rc;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};
use yew::Reducible;

wasm_bindgen_test_configure!(run_in_browser);

fn night(start: Option<&str>, playing: bool) -> StoryState {
    let story = locklab_engine::story::find("the-night").expect("the built-in story");
    StoryState::new(&story, start, playing, false, false)
}

#[wasm_bindgen_test]
fn steps_move_and_the_cursor_follows_each_moment() {
    let state = Rc::new(night(None, true));
    assert!(state.problem.is_none(), "{:?}", state.problem);
    let next = state.clone().reduce(StoryAction::Next);
    assert_eq!(next.current, 1);
    assert_eq!(next.cursor_ms, next.steps[1].found.at_ms);
    let back = next.reduce(StoryAction::Back).reduce(StoryAction::Back);
    assert_eq!(back.current, 0, "Back stops at the first step");
    let last = back.clone().reduce(StoryAction::Go(back.steps.len() - 1));
    assert!(!last.playing, "the story stops playing on its last step");
    let again = last.reduce(StoryAction::Toggle);
    assert_eq!((again.current, again.playing), (0, true), "Play on the last step starts over");
    let seeked = again.reduce(StoryAction::Seek(5));
    assert_eq!((seeked.cursor_ms, seeked.playing), (5, false), "moving the cursor pauses the story");
}

#[wasm_bindgen_test]
fn a_named_step_opens_there_and_an_unknown_one_at_the_start() {
    let state = night(Some("gc-pause"), false);
    assert_eq!(state.steps[state.current].id, "gc-pause");
    assert_eq!(state.cursor_ms, state.steps[state.current].found.at_ms);
    let unknown = night(Some("nowhere"), false);
    assert_eq!(unknown.current, 0);
    assert!(unknown.problem.as_deref().is_some_and(|problem| problem.contains("no step named `nowhere`")));
}

#[wasm_bindgen_test]
fn a_step_stays_long_enough_to_read() {
    assert_eq!(step_ms("short"), 7_000);
    let long = "word ".repeat(100);
    assert_eq!(step_ms(&long), 20_000);
    let typical = night(None, false).steps[0].text.clone();
    assert!((9_000..=20_000).contains(&step_ms(&typical)), "{} characters", typical.len());
}
