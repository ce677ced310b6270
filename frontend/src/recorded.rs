//! The recorded-run page (recorded.html, its own wasm): a run's log document
//! (`locklab-log/1`), simulated or recorded live by `locklab live`, shown
//! read-only, beside its simulated twin. A recorded run cannot be forked:
//! it is what happened, on one machine, once. A live run says where it was
//! recorded wherever it is shown, embeds included.
//!
//! The document comes from `?log=PATH` (a file beside the page, as a post
//! embeds one), from the file picker ("Open a recorded run"), or, with
//! neither, from the example the site ships: the post's night under the
//! fencing token, recorded live. Its scenario travels in the document
//! (`scenario_document`), so the verdict and the twin are computed from it;
//! a document without one is refused by name.

use crate::components::event_log::EventLog;
use crate::components::timeline::Timeline;
use crate::components::verdicts::{headline, liveness_badge, safety_badge};
use crate::format;
use crate::lab::{LabRun, RunRef, Shared};
use crate::state::{Action, QUIET_KINDS, toggled};
use locklab_engine::races::Agreement;
use locklab_engine::report::StrategyReport;
use locklab_engine::scenario::StrategyId;
use locklab_engine::{LiveRecording, LogDocument, Scenario};
use std::rc::Rc;
use yew::prelude::*;

/// The example the page opens with when the address names no document.
pub const EXAMPLE: &str = "recorded/two-am-saturday-fencing.live.json";
/// The largest document the page reads: a day of events is far less.
const MOST_BYTES: f64 = 32.0 * 1024.0 * 1024.0;

/// A document read and its runs computed.
#[derive(Clone, Debug, PartialEq)]
pub struct Shown {
    pub source: String,
    pub live: Option<LiveRecording>,
    pub run: RunRef,
    pub twin: RunRef,
}

/// Where the recorded run came from, in a sentence.
pub fn origin(live: Option<&LiveRecording>, seed: u64) -> String {
    match live {
        Some(live) => format!(
            "Recorded live on real {}, time scaled ×{} (the loopback network was not scaled).",
            live.servers.join(" / "),
            live.time_scale
        ),
        None => format!("Simulated by locklab's engine (seed {seed})."),
    }
}

/// How the recorded verdict compares with its simulated twin's, in a
/// sentence: the same, the same but for a race named with its reason
/// (`locklab_engine::races`), or different.
pub fn twin_agreement(
    scenario: &Scenario,
    strategy: StrategyId,
    recorded: &StrategyReport,
    twin: &StrategyReport,
) -> String {
    match locklab_engine::races::agreement(scenario, strategy, recorded, twin) {
        Agreement::Same => {
            "Its verdict is the recorded run's: the same safety, liveness and kinds of findings.".to_owned()
        }
        Agreement::SameUpToRace(reason) => {
            format!("Its verdict is the recorded run's but for a race the machine orders its own way: {reason}.")
        }
        Agreement::Different => {
            "Its verdict differs from the recorded run's: safety, liveness or the kinds of findings.".to_owned()
        }
    }
}

/// Reads a log document and computes what the page shows; a message names what is wrong.
pub fn read(text: &str, source: &str) -> Result<Shown, String> {
    let document = LogDocument::from_json(text).map_err(|error| format!("{source}: {error}."))?;
    let scenario_text = document.scenario_document.as_ref().ok_or_else(|| {
        format!("{source} does not carry its scenario (`scenario_document`), so its verdict cannot be computed.")
    })?;
    let scenario = Scenario::from_json(&scenario_text.to_string()).map_err(|error| format!("{source}: {error}."))?;
    let scenario = Rc::new(scenario);
    let strategy = document.strategy;
    let run = LabRun::from_log(Rc::clone(&scenario), strategy, document.events);
    let twin = LabRun::compute(scenario, strategy);
    Ok(Shown { source: source.to_owned(), live: document.live, run: Shared(Rc::new(run)), twin: Shared(Rc::new(twin)) })
}

#[derive(Clone, Debug, PartialEq)]
pub enum Page {
    Loading,
    Failed(String),
    Shown(Shown),
}

#[derive(Clone, Debug, PartialEq)]
pub struct RecordedState {
    pub page: Page,
    /// Why the last document could not be read, while the page keeps what it showed.
    pub problem: Option<String>,
    pub cursor_ms: u64,
    /// The event list's filters, as the lab's: the quiet kinds hidden at first.
    pub hidden_parties: Rc<Vec<String>>,
    pub hidden_kinds: Rc<Vec<String>>,
    pub embed: bool,
    pub narrow: bool,
}

#[derive(Debug)]
pub enum RecordedAction {
    Loaded(Result<Shown, String>),
    Seek(u64),
    /// The arrow keys: to the recorded run's next or previous event.
    Step {
        forward: bool,
    },
    /// Shift and the arrow keys: a hundredth of the run either way.
    Scrub(i64),
    ToggleParty(String),
    ToggleKind(String),
    ShowAllEvents,
}

impl Reducible for RecordedState {
    type Action = RecordedAction;
    fn reduce(self: Rc<Self>, action: RecordedAction) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            RecordedAction::Loaded(Ok(shown)) => {
                next.cursor_ms = shown.run.duration_ms();
                next.page = Page::Shown(shown);
                next.problem = None;
            }
            // What the page showed stays; the message says what could not be read.
            RecordedAction::Loaded(Err(problem)) => match &self.page {
                Page::Shown(_) => next.problem = Some(problem),
                Page::Loading | Page::Failed(_) => next.page = Page::Failed(problem),
            },
            RecordedAction::Seek(at_ms) => next.cursor_ms = at_ms,
            RecordedAction::Step { forward } => {
                if let Page::Shown(shown) = &self.page {
                    let timeline = &shown.run.timeline;
                    next.cursor_ms = if forward {
                        timeline.next_event_ms(self.cursor_ms).unwrap_or(shown.run.duration_ms())
                    } else {
                        timeline.previous_event_ms(self.cursor_ms).unwrap_or(0)
                    };
                }
            }
            RecordedAction::Scrub(hundredths) => {
                if let Page::Shown(shown) = &self.page {
                    let step = i64::try_from(shown.run.duration_ms() / 100).unwrap_or(i64::MAX / 200);
                    let to = self.cursor_ms.saturating_add_signed(step.saturating_mul(hundredths));
                    next.cursor_ms = to.min(shown.run.duration_ms());
                }
            }
            RecordedAction::ToggleParty(party) => next.hidden_parties = toggled(&self.hidden_parties, party),
            RecordedAction::ToggleKind(kind) => next.hidden_kinds = toggled(&self.hidden_kinds, kind),
            RecordedAction::ShowAllEvents => {
                next.hidden_parties = Rc::new(Vec::new());
                next.hidden_kinds = Rc::new(Vec::new());
            }
        }
        Rc::new(next)
    }
}

/// What the page starts with.
#[derive(Clone, Debug, PartialEq)]
pub struct Boot {
    pub log: String,
    pub embed: bool,
    pub narrow: bool,
}

fn boot() -> Boot {
    let search = web_sys::window().and_then(|window| window.location().search().ok()).unwrap_or_default();
    let params = web_sys::UrlSearchParams::new_with_str(&search).ok();
    let log = params.as_ref().and_then(|params| params.get("log")).filter(|log| !log.is_empty());
    let narrow = web_sys::window()
        .and_then(|window| window.match_media(crate::effects::NARROW_QUERY).ok().flatten())
        .is_some_and(|query| query.matches());
    Boot {
        log: log.unwrap_or_else(|| EXAMPLE.to_owned()),
        embed: params.as_ref().is_some_and(|params| params.has("embed")),
        narrow,
    }
}

/// Fetches a document beside the page. Only a relative path is taken: the
/// page requests nothing but its own site's files.
async fn fetch_log(path: String) -> Result<Shown, String> {
    if path.contains("://") || path.starts_with("//") {
        return Err(format!("`{path}` is not a file of this site; a recorded run is read from beside the page."));
    }
    let text = crate::effects::call_page_function("locklabFetchText", path.as_str().into())
        .await
        .map_err(|error| format!("{error}."))?;
    let text = text.as_string().ok_or_else(|| format!("{path} is not text."))?;
    read(&text, &path)
}

/// Reads a document the reader chose.
fn read_file(file: web_sys::File, dispatch: Callback<RecordedAction>) {
    let name = file.name();
    if file.size() > MOST_BYTES {
        let problem = format!("The file {name} is larger than 32 MB, more than any recorded run; it was not read.");
        return dispatch.emit(RecordedAction::Loaded(Err(problem)));
    }
    wasm_bindgen_futures::spawn_local(async move {
        let loaded = match wasm_bindgen_futures::JsFuture::from(file.text()).await {
            Ok(text) => read(&text.as_string().unwrap_or_default(), &name),
            Err(_) => Err(format!("The file {name} could not be read.")),
        };
        dispatch.emit(RecordedAction::Loaded(loaded));
    });
}

/// Mounts the page on its `#recorded` element (or the body).
pub fn start() {
    crate::mount::<RecordedApp>("recorded", || RecordedProps { boot: Rc::new(boot()) });
}

#[derive(Properties, PartialEq, Debug)]
pub struct RecordedProps {
    pub boot: Rc<Boot>,
}

#[function_component(RecordedApp)]
pub fn recorded_app(props: &RecordedProps) -> Html {
    let boot = props.boot.clone();
    let state = use_reducer(|| RecordedState {
        page: Page::Loading,
        problem: None,
        cursor_ms: 0,
        hidden_parties: Rc::new(Vec::new()),
        hidden_kinds: Rc::new(QUIET_KINDS.iter().map(|kind| (*kind).to_owned()).collect()),
        embed: boot.embed,
        narrow: boot.narrow,
    });
    let dispatch = {
        let dispatcher = state.dispatcher();
        Callback::from(move |action: RecordedAction| dispatcher.dispatch(action))
    };
    {
        let (dispatch, path) = (dispatch.clone(), props.boot.log.clone());
        use_effect_with(path, move |path| {
            let path = path.clone();
            wasm_bindgen_futures::spawn_local(
                async move { dispatch.emit(RecordedAction::Loaded(fetch_log(path).await)) },
            );
        });
    }
    let on_seek = {
        let dispatch = dispatch.clone();
        // The lab's components speak the lab's actions; this page takes the
        // cursor and the event list's filters, and has nothing else to change.
        Callback::from(move |action: Action| {
            let taken = if let Action::Seek(at_ms) = action {
                RecordedAction::Seek(at_ms)
            } else if let Action::StepForward = action {
                RecordedAction::Step { forward: true }
            } else if let Action::StepBack = action {
                RecordedAction::Step { forward: false }
            } else if let Action::ScrubPercent(hundredths) = action {
                RecordedAction::Scrub(hundredths)
            } else if let Action::ToggleParty(party) = action {
                RecordedAction::ToggleParty(party)
            } else if let Action::ToggleKind(kind) = action {
                RecordedAction::ToggleKind(kind)
            } else if let Action::ShowAllEvents = action {
                RecordedAction::ShowAllEvents
            } else {
                return;
            };
            dispatch.emit(taken);
        })
    };
    // The lab's keys, as its legend says: arrows step, shift+arrows scrub.
    crate::effects::use_keyboard(on_seek.clone());
    let on_file = {
        let dispatch = dispatch.clone();
        Callback::from(move |event: Event| {
            let input: Option<web_sys::HtmlInputElement> = event.target_dyn_into();
            if let Some(file) = input.and_then(|input| input.files()).and_then(|files| files.get(0)) {
                read_file(file, dispatch.clone());
            }
        })
    };
    let body = match &state.page {
        Page::Loading => html! { <p class="boot-note">{"Reading the recorded run…"}</p> },
        Page::Failed(problem) => html! { <p class="message error" role="alert">{ problem.clone() }</p> },
        Page::Shown(shown) => html! {
            <ShownRun shown={shown.clone()} cursor_ms={state.cursor_ms} narrow={state.narrow}
                hidden_parties={state.hidden_parties.clone()} hidden_kinds={state.hidden_kinds.clone()} on_seek={on_seek} />
        },
    };
    let ready = matches!(state.page, Page::Shown(_) | Page::Failed(_));
    html! {
        <div class={classes!("recorded-page", state.embed.then_some("embed"))} data-ready={ready.to_string()}>
            if !state.embed {
                <header class="topbar">
                    <div class="brand">
                        <p class="site-name"><a href="index.html">{"locklab"}</a></p>
                        <h1>{"A recorded run"}</h1>
                    </div>
                    <nav class="pages" aria-label="Other pages">
                        <a href="index.html">{"Lab"}</a>
                        <a href="story.html">{"Story"}</a>
                        <a href="quiz.html">{"Quiz"}</a>
                    </nav>
                </header>
            }
            <main id="main" class="recorded-main">
                if !state.embed {
                    <p class="recorded-open">
                        <label for="recorded-file">{"Open a recorded run"}</label>
                        <input id="recorded-file" type="file" accept=".json,application/json" onchange={on_file} />
                        <span class="hint">{" a locklab-log/1 document, from "}<code>{"locklab live --log OUT"}</code>{" or the lab's Export"}</span>
                    </p>
                }
                if let Some(problem) = state.problem.clone() {
                    <p class="message error" role="alert">{ problem }{" What was shown stays."}</p>
                }
                { body }
            </main>
        </div>
    }
}

#[derive(Properties, PartialEq, Debug)]
struct ShownRunProps {
    shown: Shown,
    cursor_ms: u64,
    narrow: bool,
    hidden_parties: Rc<Vec<String>>,
    hidden_kinds: Rc<Vec<String>>,
    on_seek: Callback<Action>,
}

/// The recorded run and its simulated twin, one above the other on one cursor.
#[function_component(ShownRun)]
fn shown_run(props: &ShownRunProps) -> Html {
    let shown = &props.shown;
    let run = &shown.run;
    let scenario = &run.scenario;
    let title = format!("{} — {}", scenario.name, scenario.settings_for(run.strategy).title());
    html! {
        <>
            <section class="recorded-run" aria-labelledby="recorded-title" data-live={shown.live.is_some().to_string()}>
                <h2 id="recorded-title">{ title }</h2>
                <p class="recorded-origin" id="recorded-origin">{ origin(shown.live.as_ref(), scenario.seed) }</p>
                <p class="recorded-source">{"Read from "}<code>{ shown.source.clone() }</code>{". A recorded run is shown as it happened; it cannot be changed or replayed."}</p>
                <Verdict run={run.clone()} label="This run" findings_label="Findings of this run" />
                <Timeline run={run.clone()} cursor_ms={props.cursor_ms} dispatch={props.on_seek.clone()}
                    narrow={props.narrow} label={AttrValue::from("Time cursor of the recorded run")} />
            </section>
            <section class="recorded-twin" aria-labelledby="twin-title">
                <h2 id="twin-title">{"Its simulated twin"}</h2>
                <p>{ format!("The same scenario and strategy in locklab's engine (seed {}). ", scenario.seed) }
                    { twin_agreement(scenario, run.strategy, &run.report, &shown.twin.report) }</p>
                <Verdict run={shown.twin.clone()} label="The simulated twin" findings_label="Findings of the simulated twin" />
                <Timeline run={shown.twin.clone()} cursor_ms={props.cursor_ms} dispatch={props.on_seek.clone()}
                    narrow={props.narrow} label={AttrValue::from("Time cursor of the simulated twin")} />
            </section>
            <section class="recorded-events" aria-labelledby="events-title">
                <h2 id="events-title">{ format!("The recorded events at {}", format::t_label(props.cursor_ms)) }</h2>
                <EventLog run={run.clone()} cursor_ms={props.cursor_ms} hidden_parties={props.hidden_parties.clone()}
                    hidden_kinds={props.hidden_kinds.clone()} dispatch={props.on_seek.clone()} />
            </section>
        </>
    }
}

#[derive(Properties, PartialEq, Debug)]
struct VerdictProps {
    run: RunRef,
    label: &'static str,
    findings_label: &'static str,
}

/// A run's verdict in a line, and its findings.
#[function_component(Verdict)]
fn verdict(props: &VerdictProps) -> Html {
    let report = &props.run.report;
    html! {
        <div class="recorded-verdict" data-safety={report.safety.name()} data-liveness={report.liveness.name()}>
            <p><strong>{ format!("{}: ", props.label) }</strong>{ safety_badge(report.safety) }{" "}{ liveness_badge(report.liveness) }{" "}{ headline(report) }</p>
            // It scrolls when long, so it takes the focus (and keys) itself.
            <ul class="findings" tabindex="0" aria-label={props.findings_label}>
                { for report.findings.iter().map(|finding| html! {
                    <li data-kind={finding.kind}>{ format!("{} — {}", format::t_label(finding.at_ms), finding.text) }</li>
                }) }
            </ul>
        </div>
    }
}
