//! Component tests of the browser lab, run by `wasm-bindgen-test` in headless
//! Chromium: the reducer's rules, the pieces drawn from a run, the error
//! panel, and the whole app mounted and clicked.

use locklab_engine::{Fault, Scenario, StrategyId, builtin};
use locklab_frontend::lab::components::app::{App, AppProps};
use locklab_frontend::lab::effects::{Boot, restore};
use locklab_frontend::lab::state::{Action, InjectKind, LabState};
use locklab_frontend::ui::links::link_state;
use locklab_frontend::ui::message::Tone;
use locklab_frontend::ui::run::LabRun;
use locklab_frontend::ui::{format, panic};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};
use yew::Reducible;

wasm_bindgen_test_configure!(run_in_browser);

fn calm_night() -> Scenario {
    Scenario::from_json(builtin::find("calm-night").expect("the calm night is built in").text).unwrap()
}

fn reduce(state: LabState, actions: impl IntoIterator<Item = Action>) -> LabState {
    let mut state = Rc::new(state);
    for action in actions {
        state = state.reduce(action);
    }
    (*state).clone()
}

#[wasm_bindgen_test]
fn injecting_at_the_cursor_forks_the_run_and_keeps_the_past() {
    let before = LabState::new(calm_night(), StrategyId::Fencing);
    let after = reduce(before.clone(), [Action::Seek(9_000), Action::Inject(InjectKind::GcPause)]);
    assert_eq!(after.scenario.faults.len(), 1, "one fault was added");
    assert_eq!(after.scenario.faults[0].at_ms(), 9_000, "at the cursor");
    assert_eq!(after.message.as_ref().map(|message| message.tone), Some(Tone::Info));
    let prefix = |state: &LabState| -> Vec<String> {
        state.run.log.iter().filter(|event| event.at_ms < 9_000).map(ToString::to_string).collect()
    };
    assert_eq!(prefix(&before), prefix(&after), "the run before the cursor does not change");
    assert_ne!(before.run.digest, after.run.digest, "the run after it does");
}

#[wasm_bindgen_test]
fn a_bad_scenario_is_refused_by_name_and_the_run_is_kept() {
    let state = LabState::new(calm_night(), StrategyId::Redlock);
    let text =
        r#"{"format": "locklab/1", "faults": [{"at_ms": 5, "kind": "gc_pause", "target": "z", "duration_ms": 1}]}"#;
    let after =
        reduce(state.clone(), [Action::LoadScenario { text: text.to_owned(), source: "the file bad.json".to_owned() }]);
    let message = after.message.expect("a message");
    assert_eq!(message.tone, Tone::Error);
    assert!(message.text.contains("unknown party `z`"), "{}", message.text);
    assert!(message.text.contains("bad.json"), "{}", message.text);
    assert_eq!(after.run, state.run, "the same run, not even recomputed");
}

#[wasm_bindgen_test]
fn an_out_of_range_fault_edit_names_the_field() {
    let state = reduce(
        LabState::new(calm_night(), StrategyId::Fencing),
        [Action::Seek(10_000), Action::Inject(InjectKind::GcPause)],
    );
    let mut faults = state.scenario.faults.clone();
    faults[0] = locklab_frontend::lab::components::script::with_field(&faults[0], "duration_ms", "0").unwrap();
    let after = reduce(state.clone(), [Action::SetFaults(faults)]);
    let message = after.message.expect("a message");
    assert!(message.text.contains("faults[0].duration_ms"), "{}", message.text);
    assert_eq!(after.run, state.run);
    assert!(
        locklab_frontend::lab::components::script::with_field(&state.scenario.faults[0], "duration_ms", "soon")
            .is_err()
    );
}

/// A day under `FOR UPDATE` with other services busy: hundreds of thousands
/// of events, far past what the reducer runs before it answers.
fn long_day() -> String {
    r#"{"format": "locklab/2", "name": "A busy day", "duration_ms": 86400000,
        "world": {"background_queries_per_s": 10}, "strategies": {"db-lock": {}}}"#
        .to_owned()
}

/// Advances the pending run the way the page does, reporting progress.
fn finish_pending(mut state: LabState) -> LabState {
    let mut last = 0;
    while let Some(pending) = state.pending.clone() {
        let done = pending.job.borrow_mut().step(locklab_frontend::lab::run::SLICE_EVENTS);
        let permille = pending.job.borrow().progress_permille();
        assert!(permille >= last, "progress never goes back");
        last = permille;
        let action = if done { Action::RunDone(pending.id) } else { Action::RunProgress { id: pending.id, permille } };
        state = reduce(state, [action]);
    }
    state
}

#[wasm_bindgen_test]
fn a_long_run_is_pending_while_the_lab_shows_the_run_it_had() {
    let state = LabState::new(calm_night(), StrategyId::DbLock);
    let load = Action::LoadScenario { text: long_day(), source: "the file day.json".to_owned() };
    let pending = reduce(state.clone(), [load]);
    let job = pending.pending.as_ref().expect("too long to run before answering");
    assert!(job.progress_permille < 1000);
    assert_eq!(pending.run, state.run, "the calm night is still shown");
    assert_eq!(pending.scenario.name, state.scenario.name);
    // The old run still plays while the new one is computed.
    let moved = reduce(pending.clone(), [Action::Seek(60_000)]);
    assert_eq!(moved.cursor_ms, 60_000);
    let done = finish_pending(moved);
    assert_eq!(done.scenario.name, "A busy day");
    assert_eq!(done.run.strategy, StrategyId::DbLock);
    // A day of other services' queries waiting behind the row lock: many
    // times the events the lab runs before answering, so many slices.
    let events = done.run.log.len();
    assert!(
        events > 5 * usize::try_from(locklab_frontend::lab::state::SYNC_EVENTS).unwrap_or(0),
        "the whole day: {events} events"
    );
    assert_eq!(
        done.run.digest,
        LabRun::compute(Rc::clone(&done.scenario.0), StrategyId::DbLock).digest,
        "sliced = whole"
    );
    assert_eq!(done.cursor_ms, 60_000, "the cursor stays where it was put");
}

#[wasm_bindgen_test]
fn stopping_a_pending_run_keeps_the_lab_and_a_late_slice_is_ignored() {
    let state = LabState::new(calm_night(), StrategyId::DbLock);
    let pending = reduce(state.clone(), [Action::LoadScenario { text: long_day(), source: "a file".to_owned() }]);
    let id = pending.pending.as_ref().map(|job| job.id).expect("pending");
    let stopped = reduce(pending, [Action::StopRun]);
    assert!(stopped.pending.is_none());
    assert_eq!(stopped.run, state.run);
    assert!(stopped.message.as_ref().is_some_and(|message| message.text.contains("Stopped")), "{:?}", stopped.message);
    let late = reduce(stopped.clone(), [Action::RunDone(id), Action::RunProgress { id, permille: 500 }]);
    assert_eq!(late.run, state.run, "a stopped job's answer changes nothing");
    assert!(late.pending.is_none());
}

#[wasm_bindgen_test]
fn going_back_to_the_strategy_on_screen_drops_a_pending_switch() {
    let scenario = Scenario::from_json(&long_day()).expect("within the budget");
    let shown = finish_pending(LabState::start(scenario, StrategyId::DbLock, false, None));
    let switching = reduce(shown.clone(), [Action::SelectStrategy(StrategyId::Redlock)]);
    assert!(switching.pending.as_ref().is_some_and(|pending| pending.strategy == StrategyId::Redlock));
    let back = reduce(switching, [Action::SelectStrategy(StrategyId::DbLock)]);
    assert!(back.pending.is_none(), "nothing left to compute");
    assert_eq!(back.run, shown.run, "the run on screen, not computed again");
}

#[wasm_bindgen_test]
fn a_lab_opened_on_a_long_run_stands_in_with_the_posts_night() {
    let scenario = Scenario::from_json(&long_day()).expect("within the budget");
    let state = LabState::start(scenario, StrategyId::DbLock, false, Some(3_600_000));
    assert!(state.pending.is_some());
    assert_eq!(state.scenario.name, Scenario::from_json(builtin::ALL[0].text).unwrap().name);
    let done = finish_pending(state);
    assert_eq!(done.scenario.name, "A busy day");
    assert_eq!(done.cursor_ms, 3_600_000, "the link's cursor, once its run is shown");
}

#[wasm_bindgen_test]
fn stepping_and_scrubbing_stay_inside_the_run() {
    let state = LabState::new(calm_night(), StrategyId::Fencing);
    let first = state.run.log[0].at_ms;
    let stepped = reduce(state.clone(), [Action::StepForward]);
    assert_eq!(stepped.cursor_ms, first, "step lands on the first event");
    let back = reduce(stepped, [Action::StepBack, Action::StepBack]);
    assert_eq!(back.cursor_ms, 0);
    let end = reduce(state.clone(), [Action::ScrubPercent(250)]);
    assert_eq!(end.cursor_ms, state.duration_ms(), "scrubbing stops at the end");
    let playing = reduce(state, [Action::TogglePlay, Action::Advance(u64::MAX)]);
    assert!(!playing.playing, "playback stops at the end");
}

#[wasm_bindgen_test]
fn stored_state_that_does_not_parse_is_reported() {
    assert!(restore("fencing", &calm_night().to_json()).is_ok());
    let error = restore("fencin", &calm_night().to_json()).unwrap_err();
    assert!(error.contains("unknown strategy `fencin`"), "{error}");
    let error = restore("fencing", r#"{"format": "locklab/1", "seed": -1}"#).unwrap_err();
    assert!(error.starts_with("scenario: seed"), "{error}");
}

#[wasm_bindgen_test]
fn a_fault_field_reads_as_its_type_says() {
    use locklab_engine::scenario::{FieldValue, Target};
    use locklab_frontend::lab::components::script::with_field;
    let partition = Fault::template("partition", 5_000).expect("a kind");
    let edited = with_field(&partition, "between[1]", "db").expect("a party");
    let db = Target::parse("db").expect("a party");
    assert_eq!(edited.fields()[1], ("between", FieldValue::Parties([Target::Holder, db])));
    assert!(with_field(&partition, "between[1]", "z").unwrap_err().contains("unknown party `z`"));
    assert!(with_field(&partition, "between[2]", "db").is_err(), "a pair has two");
    let edited = with_field(&edited, "one_way", "true").expect("a checkbox");
    assert!(edited.to_string().contains('→'), "one way: {edited}");
    let slow = Fault::template("db_slow", 0).expect("a kind");
    assert_eq!(with_field(&slow, "factor", "1.5").expect("a decimal").fields()[1].1, FieldValue::Decimal(1.5));
    assert_eq!(with_field(&slow, "factor", "soon").unwrap_err(), "`soon` is not a number");
    let oom = Fault::template("oom_kill", 0).expect("a kind");
    assert_eq!(with_field(&oom, "restart_after_ms", "").expect("none").fields()[2].1, FieldValue::OptionalMs(None));
    assert!(with_field(&oom, "restart_after_ms", "-5").is_err(), "a duration is not negative");
    assert!(with_field(&oom, "ppm", "5").unwrap_err().contains("no field `ppm`"));
    assert_eq!(format::parse_decimal("1e3"), None, "typed numbers are plain decimals");
}

#[wasm_bindgen_test]
fn the_error_panel_shows_the_scenario_and_a_reset_link() {
    panic::show_panel("index out of bounds", "fencing", "{\"format\": \"locklab/1\"}");
    let document = web_sys::window().unwrap().document().unwrap();
    let panel = document.get_element_by_id("panic-panel").expect("the panel is on the page");
    let text = panel.text_content().unwrap_or_default();
    assert!(text.contains("index out of bounds") && text.contains("locklab/1") && text.contains("fencing"));
    let reset = document.get_element_by_id("panic-reset").expect("a reset link");
    assert_eq!(reset.get_attribute("href").as_deref(), Some("?reset"));
    panel.remove();
}

async fn settle() {
    // Yew renders asynchronously: let it run before reading the page.
    wasm_bindgen_futures::JsFuture::from(js_sys::Promise::new(&mut |resolve, _| {
        let _ = web_sys::window().unwrap().set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
    }))
    .await
    .unwrap();
}

/// Waits until `ready` holds, letting Yew render between looks: a recompute
/// can take more than one tick. Gives up after a bounded number of ticks.
async fn settle_until(mut ready: impl FnMut() -> bool) -> bool {
    for _ in 0..200 {
        if ready() {
            return true;
        }
        settle().await;
    }
    ready()
}

fn query(root: &web_sys::Element, selector: &str) -> web_sys::Element {
    root.query_selector(selector).unwrap().unwrap_or_else(|| panic!("no {selector}"))
}

/// The page's share-link checks (after `static/link.js` unpacks the bytes)
/// agree with the engine's `link::decode` on good and bad states.
#[wasm_bindgen_test]
fn a_link_state_is_checked_as_the_engine_checks_it() {
    use locklab_engine::link::{self, LinkState, View};
    let good = LinkState {
        scenario: calm_night(),
        strategy: StrategyId::Naive,
        cursor_ms: 1_234,
        view: View::Compare,
        builtin: None,
    };
    let past_end = LinkState { cursor_ms: u64::MAX, ..good.clone() };
    let mut bad_scenario = good.clone();
    bad_scenario.scenario.world.instances = 0;
    for state in [good.clone(), past_end, bad_scenario] {
        let json = serde_json::to_string_pretty(&state).unwrap();
        assert_eq!(link_state(&json), link::decode(&link::encode(&state)), "{json}");
    }
    assert_eq!(link_state(&serde_json::to_string_pretty(&good).unwrap()), Ok(good));
    let not_state = link_state(r#"{"hello": 1}"#).unwrap_err().to_string();
    assert!(not_state.starts_with("the link's data is not a lab state: "), "{not_state}");
}

#[wasm_bindgen_test]
async fn the_app_mounts_steps_injects_and_compares() {
    let document = web_sys::window().unwrap().document().unwrap();
    let host = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&host).unwrap();
    let boot = Rc::new(Boot {
        scenario: calm_night(),
        strategy: StrategyId::Redlock,
        message: None,
        crash_test: false,
        narrow: false,
        cursor_ms: 0,
        compare: false,
        embed: false,
        stored_kept: false,
    });
    yew::Renderer::<App>::with_root_and_props(host.clone(), AppProps { boot }).render();
    settle().await;
    let lab = query(&host, ".lab");
    assert_eq!(lab.get_attribute("data-strategy").as_deref(), Some("redlock"));
    assert!(query(&host, ".topology").inner_html().contains("redis-5"), "Redlock draws five nodes");

    query(&host, "#step-forward").unchecked_into::<web_sys::HtmlElement>().click();
    settle().await;
    let cursor: u64 = lab.get_attribute("data-cursor-ms").unwrap().parse().unwrap();
    assert!(cursor > 0, "the step moved the cursor");

    let digest = query(&host, ".timeline").get_attribute("data-digest");
    query(&host, "#inject-gc").unchecked_into::<web_sys::HtmlElement>().click();
    let recomputed = settle_until(|| query(&host, ".timeline").get_attribute("data-digest") != digest).await;
    assert!(recomputed, "the run was recomputed");
    assert!(query(&host, "#fault-list").inner_html().contains("gc_pause"), "the script lists the fault");

    query(&host, "#compare-toggle").unchecked_into::<web_sys::HtmlElement>().click();
    settle_until(|| host.query_selector_all(".verdict-row").unwrap().length() > 0).await;
    let rows = host.query_selector_all(".verdict-row").unwrap();
    assert_eq!(rows.length(), 6, "one verdict row per strategy");
    host.remove();
}

/// The explorer's request carries a lab's world to the worker as a scenario
/// document and reads it back validated; a document that is not a valid
/// scenario is refused with the field that is wrong.
#[wasm_bindgen_test]
fn an_explore_request_carries_its_world_as_a_scenario_document() {
    use locklab_frontend::explore::state::{ExploreAction, ExploreState};
    use locklab_frontend::worker::protocol::ExploreRequest;
    let world = Scenario::from_json(builtin::find("lock-sized-to-the-job").expect("built in").text).unwrap();
    let state = Rc::new(ExploreState::default()).reduce(ExploreAction::SetWorld(Some(Box::new(world.clone()))));
    assert_eq!(state.request.window_ms, (0, 200_000), "the first two thirds of its 300 s");
    let text = serde_json::to_string(&state.request).unwrap();
    let wire: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(wire["world"].as_str().is_some_and(|document| document.contains("\"locklab/2\"")), "{text}");
    let back: ExploreRequest = serde_json::from_str(&text).unwrap();
    assert_eq!(back.world.as_deref(), Some(&world));
    let options = back.options().expect("a valid search");
    assert!(options.base.faults.is_empty(), "the world's own fault is set aside");
    assert_eq!(options.base.settings_for(StrategyId::Naive), world.settings_for(StrategyId::Naive));

    let bad = text.replace("\\\"duration_ms\\\": 300000", "\\\"duration_ms\\\": -1");
    assert_ne!(bad, text, "the test edits the document");
    let error = serde_json::from_str::<ExploreRequest>(&bad).expect_err("a negative duration");
    assert!(error.to_string().contains("duration_ms"), "{error}");

    let seed = Rc::new((*state).clone()).reduce(ExploreAction::SetWorld(None));
    assert_eq!(seed.request.world, None);
    assert_eq!(seed.request.window_ms, ExploreState::default().request.window_ms);
}
