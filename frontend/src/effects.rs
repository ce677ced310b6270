//! Every side effect of the lab, in one place: reading the start-up state
//! (a share link in the fragment, a built-in named in the query, `?embed`, or
//! the stored scenario), storing the scenario, the playback clock on
//! animation frames (shared with the quiz), the keyboard, the narrow-screen
//! media query, loading and saving scenario files, share links and embed
//! code, figure exports through the worker, and the explorer page's
//! connection to the worker (`WorkerLink`).
//! Components call these; the reducer never does.

use crate::lab::PICKER_ORDER;
use crate::state::{Action, LabState, Message, Tone};
use crate::worker::{JsonCodec, LabWorker, Request, Response};
use gloo_worker::{Spawnable, WorkerBridge};
use locklab_engine::link::{LinkError, LinkState, View};
use locklab_engine::{Scenario, StrategyId, builtin};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use yew::prelude::*;

/// Where the lab keeps the scenario between visits.
pub const SCENARIO_KEY: &str = "locklab/scenario";
/// Where the lab keeps the strategy between visits.
pub const STRATEGY_KEY: &str = "locklab/strategy";
/// The media query below which the topology uses its narrow layout.
pub const NARROW_QUERY: &str = "(max-width: 700px)";

/// What the lab starts with.
#[derive(Clone, Debug, PartialEq)]
pub struct Boot {
    pub scenario: Scenario,
    pub strategy: StrategyId,
    pub message: Option<Message>,
    /// `#crash-test` in the address: panic after the first render, to show the error panel.
    pub crash_test: bool,
    pub narrow: bool,
    /// Where a share link put the cursor.
    pub cursor_ms: u64,
    /// A share link asked for all six side by side.
    pub compare: bool,
    /// `?embed`: the compact view for an iframe in a post. It neither reads
    /// nor writes the reader's stored lab: the author's scenario is what shows.
    pub embed: bool,
    /// The stored lab could not be restored: it is not overwritten by the lab
    /// shown instead.
    pub stored_kept: bool,
}

/// The fragment that marks a share link: `#v=1.…`. Other fragments (`#main`
/// from the skip link, `#crash-test`) are not links.
pub const LINK_PREFIX: &str = "#v=";

/// A built-in's text, fetched from its file beside the page (`scenarios/`):
/// the lab's wasm embeds only the post's night, for a fresh lab.
pub async fn fetch_builtin(name: &str) -> Result<String, String> {
    let listed = builtin::CATALOG
        .iter()
        .find(|listed| listed.name == name)
        .ok_or_else(|| format!("there is no built-in scenario named `{name}`"))?;
    let path = format!("scenarios/{}", listed.file);
    let text = call_page_function("locklabFetchText", path.as_str().into()).await?;
    text.as_string().ok_or_else(|| format!("{path} is not text"))
}

/// Loads a built-in into the lab (the scenario picker).
pub fn load_builtin(name: String, dispatch: Callback<Action>) {
    wasm_bindgen_futures::spawn_local(async move {
        dispatch.emit(match fetch_builtin(&name).await {
            Ok(text) => Action::LoadScenario { text, source: format!("the built-in {name}") },
            Err(problem) => Action::Notify(Message {
                tone: Tone::Error,
                text: format!("The built-in could not be loaded: {problem}."),
            }),
        });
    });
}

/// Reads the address and the stored state. Bad stored state is reported,
/// never fatal.
pub async fn boot() -> Rc<Boot> {
    let window = web_sys::window();
    let location = window.as_ref().map(web_sys::Window::location);
    let search = location.as_ref().and_then(|location| location.search().ok()).unwrap_or_default();
    let hash = location.as_ref().and_then(|location| location.hash().ok()).unwrap_or_default();
    let storage = window.as_ref().and_then(|window| window.local_storage().ok().flatten());
    let narrow = window
        .as_ref()
        .and_then(|window| window.match_media(NARROW_QUERY).ok().flatten())
        .is_some_and(|query| query.matches());
    let mut boot = Boot {
        scenario: crate::lab::default_scenario(),
        // A first visit opens on the post's own lock, the night as the post tells it.
        strategy: StrategyId::Naive,
        message: None,
        crash_test: hash == "#crash-test",
        narrow,
        cursor_ms: 0,
        compare: false,
        embed: false,
        stored_kept: false,
    };
    let params = web_sys::UrlSearchParams::new_with_str(&search).ok();
    let param = |name: &str| params.as_ref().and_then(|params| params.get(name));
    boot.embed = params.as_ref().is_some_and(|params| params.has("embed"));
    // `?scenario=NAME&strategy=ID`: a built-in by name, the short form of a link.
    let named = param("scenario");
    if let Some(name) = &named {
        let text = fetch_builtin(name).await;
        match text.and_then(|text| Scenario::from_json(&text).map_err(|error| error.to_string())) {
            Ok(scenario) => boot.scenario = scenario,
            Err(problem) => {
                boot.message = Some(Message {
                    tone: Tone::Error,
                    text: format!("The built-in could not be opened: {problem}. Showing the default lab instead."),
                });
            }
        }
    }
    if let Some(name) = param("strategy") {
        match StrategyId::parse(&name) {
            Some(strategy) => boot.strategy = strategy,
            None => {
                boot.message = Some(Message {
                    tone: Tone::Error,
                    text: format!("There is no strategy named `{name}`. Showing the post's own lock instead."),
                });
            }
        }
    }
    // A link wins over the stored lab; a bad link opens the default lab (not
    // the stored one), so what the reader sees never depends on their history.
    if hash.starts_with(LINK_PREFIX) {
        match unpacked_link() {
            Ok(state) => {
                boot.scenario = state.scenario;
                boot.strategy = state.strategy;
                boot.cursor_ms = state.cursor_ms;
                boot.compare = state.view == View::Compare;
            }
            Err(problem) => {
                boot.message = Some(Message {
                    tone: Tone::Error,
                    text: format!("This link could not be opened: {problem}. Showing the default lab instead."),
                });
            }
        }
        return Rc::new(boot);
    }
    // An embed and a named built-in show what the address says, never the stored lab.
    if boot.embed || named.is_some() {
        return Rc::new(boot);
    }
    // `?reset` as a parameter of its own: `?utm_campaign=preset` is not a reset.
    if params.as_ref().is_some_and(|params| params.has("reset")) {
        if let Some(storage) = &storage {
            let _ = storage.remove_item(SCENARIO_KEY);
            let _ = storage.remove_item(STRATEGY_KEY);
        }
        if let Some(history) = window.as_ref().and_then(|window| window.history().ok()) {
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some("./"));
        }
        boot.message =
            Some(Message { tone: Tone::Info, text: "The lab was reset: the stored scenario was cleared.".to_owned() });
        return Rc::new(boot);
    }
    let stored = storage.and_then(|storage| {
        let scenario = storage.get_item(SCENARIO_KEY).ok().flatten()?;
        let strategy = storage.get_item(STRATEGY_KEY).ok().flatten().unwrap_or_else(|| "fencing".to_owned());
        Some((strategy, scenario))
    });
    if let Some((strategy, scenario)) = stored {
        match restore(&strategy, &scenario) {
            Ok((scenario, strategy)) => {
                boot.scenario = scenario;
                boot.strategy = strategy;
            }
            Err(problem) => {
                boot.message = Some(Message {
                    tone: Tone::Error,
                    text: format!(
                        "Your saved lab could not be restored ({problem}); starting from the built-in scenario \
                         instead. The saved lab is kept until you change this one."
                    ),
                });
                boot.stored_kept = true;
            }
        }
    }
    Rc::new(boot)
}

/// Parses stored state: a strategy name and a scenario document.
pub fn restore(strategy_text: &str, scenario_text: &str) -> Result<(Scenario, StrategyId), String> {
    let strategy = StrategyId::parse(strategy_text.trim())
        .ok_or_else(|| format!("strategy: unknown strategy `{strategy_text}`"))?;
    let scenario = Scenario::from_json(scenario_text).map_err(|error| format!("scenario: {error}"))?;
    Ok((scenario, strategy))
}

/// Stores the scenario and strategy, and remembers them for a panic report.
#[hook]
pub fn use_persistence(state: &UseReducerHandle<LabState>, stored_kept: bool) {
    // The run changes exactly when the scenario or the strategy does.
    let embed = state.embed;
    // A lab that opens on a long run shows the post's night until that run is
    // done; the night is not what the user had, so it is not stored over it.
    let standing_in = state.pending.is_some();
    // Nor is the lab shown instead of a stored one that could not be
    // restored: that stays, as the message says, until the user changes the lab.
    let first_run_kept = use_mut_ref(|| stored_kept);
    use_effect_with(state.run.clone(), move |run| {
        let (scenario, strategy) = (&run.scenario, &run.strategy);
        let json = scenario.to_json();
        let kept = std::mem::take(&mut *first_run_kept.borrow_mut());
        // An embedded lab is someone else's post: it must not replace the reader's own lab.
        let storage = if embed || standing_in || kept {
            None
        } else {
            web_sys::window().and_then(|window| window.local_storage().ok().flatten())
        };
        if let Some(storage) = storage {
            let _ = storage.set_item(SCENARIO_KEY, &json);
            let _ = storage.set_item(STRATEGY_KEY, strategy.name());
        }
        crate::panic::remember(json, strategy.name());
    });
}

/// Advances the pending run (see [`crate::state::PendingRun`]) one slice per
/// task, so the page draws and answers between slices, and tells the reducer
/// how far it is and when it is done. A replaced or stopped job's slices stop
/// at the next one.
#[hook]
pub fn use_run_slices(state: &UseReducerHandle<LabState>) {
    let dispatcher = state.dispatcher();
    let job = state.pending.as_ref().map(|pending| (pending.id, pending.job.clone()));
    use_effect_with(job.as_ref().map(|(id, _)| *id), move |_| {
        let stopped = Rc::new(Cell::new(false));
        if let Some((id, job)) = job {
            next_slice(id, job, dispatcher, stopped.clone());
        }
        move || stopped.set(true)
    });
}

fn next_slice(
    id: u32,
    job: Rc<RefCell<crate::lab::RunJob>>,
    dispatcher: UseReducerDispatcher<LabState>,
    stopped: Rc<Cell<bool>>,
) {
    gloo_timers::callback::Timeout::new(0, move || {
        if stopped.get() {
            return;
        }
        let (done, permille) = {
            let mut job = job.borrow_mut();
            (job.step(crate::lab::SLICE_EVENTS), job.progress_permille())
        };
        if done {
            dispatcher.dispatch(Action::RunDone(id));
        } else {
            dispatcher.dispatch(Action::RunProgress { id, permille });
            next_slice(id, job, dispatcher, stopped);
        }
    })
    .forget();
}

/// Where playback stands between frames.
#[derive(Clone, Copy, Debug)]
struct Anchor {
    real_ms: f64,
    cursor_ms: u64,
    speed_ratio: f64,
    /// The cursor last asked for, and the state's cursor seen at the last frame.
    sent_ms: u64,
    seen_ms: u64,
}

/// What the loop needs from the latest render.
#[derive(Clone, Copy, Debug, Default)]
struct Latest {
    cursor_ms: u64,
    speed_ratio: f64,
}

type FrameClosure = Closure<dyn FnMut(f64)>;

/// Plays the run: while `playing`, each animation frame moves the cursor by
/// the real time elapsed times the speed. A seek or a speed change while
/// playing re-anchors the loop, so it never jumps back.
#[hook]
pub fn use_playback(state: &UseReducerHandle<LabState>) {
    let dispatcher = state.dispatcher();
    let advance = use_memo((), move |()| Callback::from(move |at_ms| dispatcher.dispatch(Action::Advance(at_ms))));
    use_playback_clock(state.playing, state.cursor_ms, state.speed_ratio, (*advance).clone());
}

/// The playback clock any page shares (the lab, the quiz's side by side):
/// while `playing`, each animation frame asks `advance` for the cursor the
/// real time elapsed times the speed has reached.
#[hook]
pub fn use_playback_clock(playing: bool, cursor_ms: u64, speed_ratio: f64, advance: Callback<u64>) {
    let latest = use_mut_ref(Latest::default);
    *latest.borrow_mut() = Latest { cursor_ms, speed_ratio };
    use_effect_with(playing, move |playing| {
        let frame: Rc<RefCell<Option<FrameClosure>>> = Rc::new(RefCell::new(None));
        let handle = Rc::new(Cell::new(0));
        let window = web_sys::window();
        if let (true, Some(window)) = (*playing, window.clone()) {
            let anchor: Rc<Cell<Option<Anchor>>> = Rc::new(Cell::new(None));
            let next_frame = frame.clone();
            let next_handle = handle.clone();
            let loop_window = window.clone();
            *frame.borrow_mut() = Some(Closure::new(move |now_ms: f64| {
                let latest = *latest.borrow();
                let fresh = |cursor_ms| Anchor {
                    real_ms: now_ms,
                    cursor_ms,
                    speed_ratio: latest.speed_ratio,
                    sent_ms: cursor_ms,
                    seen_ms: cursor_ms,
                };
                let mut current = match anchor.get() {
                    None => fresh(latest.cursor_ms),
                    // Somebody else moved the cursor (a seek), or the speed changed.
                    Some(old)
                        if (latest.cursor_ms != old.seen_ms && latest.cursor_ms != old.sent_ms)
                            || latest.speed_ratio != old.speed_ratio =>
                    {
                        fresh(latest.cursor_ms)
                    }
                    Some(old) => old,
                };
                current.seen_ms = latest.cursor_ms;
                let elapsed_ms = (now_ms - current.real_ms).max(0.0) * current.speed_ratio;
                // Far inside u64: runs last at most a day of simulated time.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let target = current.cursor_ms + elapsed_ms as u64;
                if target != current.sent_ms {
                    current.sent_ms = target;
                    advance.emit(target);
                }
                anchor.set(Some(current));
                if let Some(callback) = next_frame.borrow().as_ref()
                    && let Ok(id) = loop_window.request_animation_frame(callback.as_ref().unchecked_ref())
                {
                    next_handle.set(id);
                }
            }));
            if let Some(callback) = frame.borrow().as_ref()
                && let Ok(id) = window.request_animation_frame(callback.as_ref().unchecked_ref())
            {
                handle.set(id);
            }
        }
        move || {
            if let Some(window) = window {
                let _ = window.cancel_animation_frame(handle.get());
            }
            frame.borrow_mut().take();
        }
    });
}

/// Whether a key press belongs to the control that has focus.
pub(crate) fn belongs_to_control(event: &KeyboardEvent) -> bool {
    let Some(element) = event.target().and_then(|target| target.dyn_into::<web_sys::Element>().ok()) else {
        return false;
    };
    let tag = element.tag_name().to_ascii_lowercase();
    if matches!(tag.as_str(), "input" | "select" | "textarea") || element.has_attribute("contenteditable") {
        return true;
    }
    let activates = matches!(event.key().as_str(), " " | "Enter");
    activates && matches!(tag.as_str(), "button" | "a" | "summary")
}

/// The lab's keys: space plays or pauses, arrows step, shift+arrows scrub,
/// digits pick a strategy.
#[hook]
pub fn use_keyboard(dispatch: Callback<Action>) {
    use_effect_with((), move |()| {
        let document = web_sys::window().and_then(|window| window.document());
        let listener = Closure::<dyn Fn(KeyboardEvent)>::new(move |event: KeyboardEvent| {
            if event.ctrl_key() || event.meta_key() || event.alt_key() || belongs_to_control(&event) {
                return;
            }
            let action = match (event.key().as_str(), event.shift_key()) {
                (" ", _) => Some(Action::TogglePlay),
                ("ArrowRight", false) => Some(Action::StepForward),
                ("ArrowLeft", false) => Some(Action::StepBack),
                ("ArrowRight", true) => Some(Action::ScrubPercent(1)),
                ("ArrowLeft", true) => Some(Action::ScrubPercent(-1)),
                (digit, false) => digit
                    .parse::<usize>()
                    .ok()
                    .and_then(|digit| digit.checked_sub(1))
                    .and_then(|index| PICKER_ORDER.get(index))
                    .map(|strategy| Action::SelectStrategy(*strategy)),
                _ => None,
            };
            if let Some(action) = action {
                event.prevent_default();
                dispatch.emit(action);
            }
        });
        if let Some(document) = &document {
            let _ = document.add_event_listener_with_callback("keydown", listener.as_ref().unchecked_ref());
        }
        move || {
            if let Some(document) = document {
                let _ = document.remove_event_listener_with_callback("keydown", listener.as_ref().unchecked_ref());
            }
        }
    });
}

/// Follows the narrow-screen media query.
#[hook]
pub fn use_narrow_screen(dispatch: Callback<Action>) {
    use_effect_with((), move |()| {
        let query = web_sys::window().and_then(|window| window.match_media(NARROW_QUERY).ok().flatten());
        let listener =
            Closure::<dyn Fn(web_sys::MediaQueryListEvent)>::new(move |event: web_sys::MediaQueryListEvent| {
                dispatch.emit(Action::SetNarrow(event.matches()))
            });
        if let Some(query) = &query {
            let _ = query.add_event_listener_with_callback("change", listener.as_ref().unchecked_ref());
        }
        move || {
            if let Some(query) = query {
                let _ = query.remove_event_listener_with_callback("change", listener.as_ref().unchecked_ref());
            }
        }
    });
}

/// Reads a scenario file the user chose and hands its text to the reducer.
pub fn read_scenario_file(file: web_sys::File, dispatch: Callback<Action>) {
    let name = file.name();
    let most = locklab_engine::scenario::MAX_DOCUMENT_BYTES;
    // A size in bytes, far inside f64's exact integers.
    #[allow(clippy::cast_precision_loss)]
    if file.size() > most as f64 {
        let text = format!("The file {name} is larger than {most} bytes, the most a scenario may be; it was not read.");
        return dispatch.emit(Action::Notify(Message { tone: Tone::Error, text }));
    }
    wasm_bindgen_futures::spawn_local(async move {
        match wasm_bindgen_futures::JsFuture::from(file.text()).await {
            Ok(text) => dispatch.emit(Action::LoadScenario {
                text: text.as_string().unwrap_or_default(),
                source: format!("the file {name}"),
            }),
            Err(_) => dispatch.emit(Action::Notify(Message {
                tone: Tone::Error,
                text: format!("The file {name} could not be read. The current run is unchanged."),
            })),
        }
    });
}

/// Offers the scenario as a JSON download, in the current format (a
/// `locklab/1` scenario is saved as `locklab/2` that means the same).
pub fn save_scenario_file(scenario: &Scenario) -> Result<String, String> {
    let file_name = file_name_for(scenario, ".json");
    let document = scenario.clone().in_current_format();
    download_text(&document.to_json(), "application/json", &file_name)?;
    Ok(file_name)
}

/// Offers `text` as a download named `file_name`.
fn download_text(text: &str, mime: &str, file_name: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)
        .map_err(|_| "the browser refused to make the file")?;
    download_blob(&blob, file_name)
}

/// Offers a blob as a download through a temporary object URL.
fn download_blob(blob: &web_sys::Blob, file_name: &str) -> Result<(), String> {
    let document = web_sys::window().and_then(|window| window.document()).ok_or("no document")?;
    let url = web_sys::Url::create_object_url_with_blob(blob).map_err(|_| "no object URL")?;
    let link: web_sys::HtmlAnchorElement =
        document.create_element("a").map_err(|_| "no link")?.dyn_into().map_err(|_| "no link")?;
    link.set_href(&url);
    link.set_download(file_name);
    link.click();
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}

/// The link `static/boot.js` unpacked from the fragment before the lab
/// started (`globalThis.locklabLink`: `{ json }` or `{ error, detail }`),
/// checked as the engine's `link::decode` checks it. The byte work (base64,
/// DEFLATE) is the browser's: the engine's DEFLATE code would not fit the
/// wasm's size budget. Errors are worded by the engine's `LinkError`. Any
/// page started by boot.js has it (the explorer takes a lab's world this way).
pub fn unpacked_link() -> Result<LinkState, LinkError> {
    let unpacked = js_sys::Reflect::get(&js_sys::global(), &"locklabLink".into()).unwrap_or_default();
    let field = |name: &str| js_sys::Reflect::get(&unpacked, &name.into()).ok().and_then(|value| value.as_string());
    if let Some(json) = field("json") {
        return link_state(&json);
    }
    let detail = field("detail").unwrap_or_default();
    Err(match field("error").as_deref() {
        Some("Empty") => LinkError::Empty,
        Some("TooLong") => LinkError::TooLong { chars: detail.parse().unwrap_or_default() },
        Some("NoVersion") => LinkError::NoVersion,
        Some("UnknownVersion") => LinkError::UnknownVersion(detail),
        Some("NotBase64") => LinkError::NotBase64,
        Some("TooLarge") => LinkError::TooLarge,
        _ => LinkError::Damaged,
    })
}

/// The checks `link::decode` makes once the JSON is unpacked: the engine's
/// own `link::parse_state`, without linking its DEFLATE code.
pub fn link_state(json: &str) -> Result<LinkState, LinkError> {
    locklab_engine::link::parse_state(json)
}

/// The share link of the current view: puts it in the address bar (replacing
/// the entry, so Back still leaves the lab) and copies it to the clipboard.
/// Reports the outcome as a message.
pub fn copy_share_link(state: &LabState, dispatch: Callback<Action>) {
    let view = if state.compare.is_some() { View::Compare } else { View::Single };
    let link = link_of(state, view);
    let Some(window) = web_sys::window() else {
        return;
    };
    wasm_bindgen_futures::spawn_local(async move {
        let Some(hash) = share_fragment(&link).await else {
            let text = "The link could not be made: this browser cannot compress it.".to_owned();
            dispatch.emit(Action::Notify(Message { tone: Tone::Error, text }));
            return;
        };
        if let Ok(history) = window.history() {
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&hash));
        }
        let url = window.location().href().unwrap_or(hash);
        let text = if copy_text(&window, &url).await {
            "Copied the link to this view; it is in the address bar too."
        } else {
            "The link to this view is in the address bar (the browser would not let the lab copy it)."
        };
        dispatch.emit(Action::Notify(Message { tone: Tone::Info, text: text.to_owned() }));
    });
}

/// Opens the explorer on the lab's current scenario: the same share link,
/// given to explore.html, whose search then runs in this world (its own
/// faults set aside) under the lab's strategy.
pub fn search_this_world(state: &LabState, dispatch: Callback<Action>) {
    let link = link_of(state, View::Single);
    let Some(window) = web_sys::window() else {
        return;
    };
    wasm_bindgen_futures::spawn_local(async move {
        let Some(hash) = share_fragment(&link).await else {
            let text = "The explorer could not be opened on this world: this browser cannot compress the link.";
            dispatch.emit(Action::Notify(Message { tone: Tone::Error, text: text.to_owned() }));
            return;
        };
        let _ = window.location().set_href(&format!("explore.html{hash}"));
    });
}

/// Puts `text` on the clipboard; false if the browser would not allow it.
async fn copy_text(window: &web_sys::Window, text: &str) -> bool {
    wasm_bindgen_futures::JsFuture::from(window.navigator().clipboard().write_text(text)).await.is_ok()
}

/// What a link to the lab's current view holds.
fn link_of(state: &LabState, view: View) -> LinkState {
    LinkState {
        scenario: (*state.scenario).clone(),
        strategy: state.strategy,
        cursor_ms: state.cursor_ms,
        view,
        builtin: None,
    }
}

/// The address fragment (`#v=1.…`) that opens `link` in the lab, made with
/// the page's `locklabEncodeLink` (static/link.js, the platform's DEFLATE);
/// `None` if this browser cannot compress. Any page loaded by boot.js can use it.
pub async fn share_fragment(link: &LinkState) -> Option<String> {
    // Pretty, as `Scenario::to_json` writes, so the serializer is shared (the
    // whitespace costs a few bytes after DEFLATE).
    let json = serde_json::to_string_pretty(link).ok()?;
    let fragment = call_page_function("locklabEncodeLink", json.into()).await.ok()?.as_string()?;
    Some(format!("{LINK_PREFIX}{fragment}"))
}

/// Calls an async function the page's scripts put on the global object
/// (static/link.js, static/figure.js) and awaits its answer; the error is
/// what the script rejected with, when it is text.
pub(crate) async fn call_page_function(
    name: &str,
    argument: wasm_bindgen::JsValue,
) -> Result<wasm_bindgen::JsValue, String> {
    let function = js_sys::Reflect::get(&js_sys::global(), &name.into())
        .ok()
        .and_then(|function| function.dyn_into::<js_sys::Function>().ok())
        .ok_or_else(|| format!("this page has no {name}"))?;
    let promise = function.call1(&wasm_bindgen::JsValue::NULL, &argument).map_err(|_| format!("{name} failed"))?;
    wasm_bindgen_futures::JsFuture::from(js_sys::Promise::from(promise))
        .await
        .map_err(|error| error.as_string().unwrap_or_else(|| format!("{name} failed")))
}

/// The page's connection to the lab's Web Worker ([`crate::worker`]), made
/// on first use so a visit that never exports loads no worker.
pub struct WorkerLink {
    bridge: RefCell<Option<WorkerBridge<LabWorker>>>,
    on_response: Callback<Response>,
}

impl std::fmt::Debug for WorkerLink {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("WorkerLink")
    }
}

impl WorkerLink {
    pub fn new(on_response: Callback<Response>) -> WorkerLink {
        WorkerLink { bridge: RefCell::new(None), on_response }
    }

    pub fn send(&self, request: Request) {
        let mut bridge = self.bridge.borrow_mut();
        let bridge = bridge.get_or_insert_with(|| {
            let on_response = self.on_response.clone();
            LabWorker::spawner()
                .callback(move |response| on_response.emit(response))
                .encoding::<JsonCodec>()
                .spawn_with_loader(crate::worker::LOADER_PATH)
        });
        bridge.send(request);
    }
}

/// Which figure an export asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    Svg,
    Png,
    Log,
}

/// The lab's exports: the worker, started on first use under
/// [`crate::worker::FIGURES_WORKER_NAME`] (its plain protocol keeps serde and
/// gloo-worker out of the lab's wasm), and the requests waiting for it to load.
pub struct Exporter {
    worker: RefCell<Option<web_sys::Worker>>,
    ready: Rc<Cell<bool>>,
    /// Requests made before the worker said it was ready, in order.
    waiting: Rc<RefCell<Vec<wasm_bindgen::JsValue>>>,
    /// What each request asked for, in order: the worker answers in order.
    wanted: Rc<RefCell<std::collections::VecDeque<Figure>>>,
    dispatch: Callback<Action>,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Exporter")
    }
}

impl Exporter {
    /// Asks the worker for the figures of the current run.
    pub fn export(&self, state: &LabState, figure: Figure) {
        let request = js_sys::Array::of2(&state.scenario.to_json().into(), &state.strategy.name().into());
        self.wanted.borrow_mut().push_back(figure);
        let mut worker = self.worker.borrow_mut();
        if worker.is_none() {
            match self.start() {
                Ok(started) => *worker = Some(started),
                Err(problem) => {
                    self.wanted.borrow_mut().clear();
                    let text = format!("The export failed: {problem}.");
                    self.dispatch.emit(Action::Notify(Message { tone: Tone::Error, text }));
                    return;
                }
            }
        }
        match worker.as_ref() {
            Some(worker) if self.ready.get() => {
                let _ = worker.post_message(&request);
            }
            _ => self.waiting.borrow_mut().push(request.into()),
        }
    }

    fn start(&self) -> Result<web_sys::Worker, String> {
        let options = web_sys::WorkerOptions::new();
        options.set_name(crate::worker::FIGURES_WORKER_NAME);
        let worker = web_sys::Worker::new_with_options(crate::worker::LOADER_PATH, &options)
            .map_err(|_| "the browser would not start the lab's worker".to_owned())?;
        let (ready, waiting, wanted, dispatch) =
            (self.ready.clone(), self.waiting.clone(), self.wanted.clone(), self.dispatch.clone());
        let sender = worker.clone();
        let on_message = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
            let data = event.data();
            if data.as_string().as_deref() == Some("ready") {
                ready.set(true);
                for request in waiting.borrow_mut().drain(..) {
                    let _ = sender.post_message(&request);
                }
                return;
            }
            let reply = js_sys::Array::from(&data);
            let figure = wanted.borrow_mut().pop_front().unwrap_or(Figure::Svg);
            let text = |index: u32| reply.get(index).as_string().unwrap_or_default();
            let result = if reply.length() == 3 { Ok((text(0), text(1), text(2))) } else { Err(text(0)) };
            save_figure(result, figure, dispatch.clone());
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        // The handler lives as long as the page's worker.
        on_message.forget();
        Ok(worker)
    }
}

/// The lab's exporter: the worker's answers become downloads and messages.
#[hook]
pub fn use_exporter(dispatch: Callback<Action>) -> Rc<Exporter> {
    use_memo((), move |()| Exporter {
        worker: RefCell::new(None),
        ready: Rc::new(Cell::new(false)),
        waiting: Rc::new(RefCell::new(Vec::new())),
        wanted: Rc::new(RefCell::new(std::collections::VecDeque::new())),
        dispatch,
    })
}

/// Saves the figures the worker made (svg, log, file stem) as `figure` asks.
fn save_figure(figures: Result<(String, String, String), String>, figure: Figure, dispatch: Callback<Action>) {
    let notify = move |result: Result<String, String>| {
        let message = match result {
            Ok(file_name) => Message { tone: Tone::Info, text: format!("Exported {file_name}.") },
            Err(problem) => Message { tone: Tone::Error, text: format!("The export failed: {problem}.") },
        };
        dispatch.emit(Action::Notify(message));
    };
    let (svg, log, file_stem) = match figures {
        Ok(figures) => figures,
        Err(problem) => return notify(Err(problem)),
    };
    let (text, mime, extension) = match figure {
        Figure::Svg => (svg, "image/svg+xml", "svg"),
        Figure::Log => (log, "application/json", "log.json"),
        Figure::Png => {
            return wasm_bindgen_futures::spawn_local(async move {
                let file_name = format!("{file_stem}.png");
                notify(svg_to_png(svg).await.and_then(|blob| download_blob(&blob, &file_name)).map(|()| file_name));
            });
        }
    };
    let file_name = format!("{file_stem}.{extension}");
    notify(download_text(&text, mime, &file_name).map(|()| file_name));
}

/// Rasterizes an SVG with the page's `locklabSvgToPng` (static/figure.js: an
/// image drawn on a canvas at twice the size, for sharp figures).
async fn svg_to_png(svg: String) -> Result<web_sys::Blob, String> {
    let blob = call_page_function("locklabSvgToPng", svg.into()).await?;
    blob.dyn_into::<web_sys::Blob>().map_err(|_| "the drawing gave no image".to_owned())
}

/// The `<iframe>` snippet that embeds the current view in a post, with the
/// script that sizes the frame (static/embed.js); copied to the clipboard.
pub fn copy_embed_code(state: &LabState, dispatch: Callback<Action>) {
    let link = link_of(state, View::Single);
    let title =
        format!("locklab: {} under {}", state.scenario.name, state.scenario.settings_for(state.strategy).title());
    let Some(window) = web_sys::window() else {
        return;
    };
    wasm_bindgen_futures::spawn_local(async move {
        let Some(fragment) = share_fragment(&link).await else {
            let text = "The embed code could not be made: this browser cannot compress the link.".to_owned();
            dispatch.emit(Action::Notify(Message { tone: Tone::Error, text }));
            return;
        };
        let location = window.location();
        let page = format!(
            "{}{}",
            location.origin().unwrap_or_default(),
            location.pathname().unwrap_or_else(|_| "/".to_owned())
        );
        // The page's folder: embed.js sits beside index.html.
        let folder = &page[..page.rfind('/').map_or(page.len(), |slash| slash + 1)];
        let snippet = embed_snippet(folder, &fragment, &title);
        let text = if copy_text(&window, &snippet).await {
            format!("Copied the embed code: {snippet}")
        } else {
            format!("The browser would not let the lab copy; here is the embed code: {snippet}")
        };
        dispatch.emit(Action::Notify(Message { tone: Tone::Info, text }));
    });
}

/// The full lab on what an embedded view opened with: the same address
/// without `?embed` (a share link in the fragment stays).
pub fn full_size_href() -> String {
    let location = web_sys::window().map(|window| window.location());
    let hash = location.as_ref().and_then(|location| location.hash().ok()).unwrap_or_default();
    let search = location.as_ref().and_then(|location| location.search().ok()).unwrap_or_default();
    let query = web_sys::UrlSearchParams::new_with_str(&search)
        .map(|params| {
            params.delete("embed");
            String::from(params.to_string())
        })
        .unwrap_or_default();
    if query.is_empty() { format!("./{hash}") } else { format!("./?{query}{hash}") }
}

/// The embed snippet for the lab at `folder` (ending in `/`) showing `fragment`.
pub fn embed_snippet(folder: &str, fragment: &str, title: &str) -> String {
    let title = title.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;");
    format!(
        "<iframe src=\"{folder}?embed{fragment}\" title=\"{title}\" data-locklab width=\"100%\" height=\"560\" \
         style=\"border:0\" loading=\"lazy\"></iframe><script src=\"{folder}embed.js\" async></script>"
    )
}

/// `gc-pause-outlives-the-lease.json` from the scenario's name and `extension`.
pub fn file_name_for(scenario: &Scenario, extension: &str) -> String {
    let slug = slug(&scenario.name);
    if slug.is_empty() { format!("locklab-scenario{extension}") } else { format!("{slug}{extension}") }
}

/// `gc-pause-outlives-the-lease-fencing`: a figure's file name without its extension.
pub fn file_stem(scenario_name: &str, strategy: StrategyId) -> String {
    let slug = slug(scenario_name);
    if slug.is_empty() { format!("locklab-{strategy}") } else { format!("{slug}-{strategy}") }
}

/// Lower-case letters and digits of `name`, other runs of characters as one `-`.
fn slug(name: &str) -> String {
    let mut slug = String::new();
    for character in name.chars() {
        if character.is_ascii_alphanumeric() {
            slug.push(character.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    slug.trim_end_matches('-').to_owned()
}

/// Marks the first render on the page's root element (`data-first-render-ms`,
/// milliseconds since navigation), for the benchmark of the first interactive render.
pub fn mark_first_render() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let now_ms = window.performance().map_or(0.0, |performance| performance.now());
    if let Some(root) = window.document().and_then(|document| document.document_element()) {
        let _ = root.set_attribute("data-first-render-ms", &crate::svg::Num(now_ms).to_string());
    }
}
