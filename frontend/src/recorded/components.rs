//! The recorded-run page's components: the root, which owns the one state
//! and calls the effects, and its leaves: the run and its twin on the
//! pages' timeline, verdicts in a line, and the pages' event list.

use crate::recorded::effects::{self, Boot};
use crate::recorded::state::{Page, RecordedAction, RecordedState, Shown};
use crate::ui::event_log::{EventLog, LogFilters};
use crate::ui::format;
use crate::ui::input::{TimelineKey, use_timeline_keys};
use crate::ui::run::RunRef;
use crate::ui::timeline::Timeline;
use crate::ui::verdicts::verdict_badges;
use locklab_engine::races::Agreement;
use locklab_engine::report::StrategyReport;
use locklab_engine::scenario::StrategyId;
use locklab_engine::{LiveRecording, Scenario};
use std::rc::Rc;
use yew::prelude::*;

/// Where the recorded run came from, in a sentence, and whether it was
/// stopped before its end.
pub fn origin(live: Option<&LiveRecording>, seed: u64) -> String {
    match live {
        Some(live) => {
            let stopped = live.interrupted_at_ms.map_or_else(String::new, |at_ms| {
                format!(" It was interrupted at {}: this is what was recorded up to then.", format::t_label(at_ms))
            });
            format!(
                "Recorded live on real {}, time scaled ×{} (the loopback network was not scaled).{stopped}",
                live.servers.join(" / "),
                live.time_scale
            )
        }
        None => format!("Simulated by locklab's engine (seed {seed})."),
    }
}

/// How the recorded verdict compares with its simulated twin's, in a
/// sentence: the same, the same but for a race named with its reason
/// (`locklab_engine::races`), different, or not comparable because the
/// machine stalled the live run beyond what its time scale allows.
pub fn twin_agreement(
    scenario: &Scenario,
    strategy: StrategyId,
    recorded: &StrategyReport,
    twin: &StrategyReport,
    live: Option<&LiveRecording>,
) -> String {
    match locklab_engine::races::recorded_agreement(scenario, strategy, recorded, twin, live) {
        Agreement::Same => {
            "Its verdict is the recorded run's: the same safety, liveness, efficiency and kinds of findings.".to_owned()
        }
        Agreement::SameUpToRace(reason) => {
            format!("Its verdict is the recorded run's but for what a real machine does its own way: {reason}.")
        }
        Agreement::Different => {
            "Its verdict differs from the recorded run's: safety, liveness, efficiency or the kinds of findings."
                .to_owned()
        }
        Agreement::Inconclusive => format!(
            "The recorded run is inconclusive, so the two verdicts are not compared: {}.",
            live.and_then(LiveRecording::stall_sentence).unwrap_or_default()
        ),
    }
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
        filters: LogFilters::default(),
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
            wasm_bindgen_futures::spawn_local(async move {
                dispatch.emit(RecordedAction::Loaded(effects::fetch_log(path).await))
            });
        });
    }
    // The pages' timeline keys, as the lab's legend says them: arrows step,
    // shift+arrows scrub, Home and End go to the ends; a recorded run neither plays nor changes strategy.
    use_timeline_keys(dispatch.clone(), |key| match key {
        TimelineKey::Step { forward } => Some(RecordedAction::Step { forward }),
        TimelineKey::Scrub(hundredths) => Some(RecordedAction::Scrub(hundredths)),
        // The cursor stops at the run's end (`RecordedAction::Seek`).
        TimelineKey::Ends { end } => Some(RecordedAction::Seek(if end { u64::MAX } else { 0 })),
        TimelineKey::PlayOrPause | TimelineKey::Strategy(_) => None,
    });
    let on_file = {
        let dispatch = dispatch.clone();
        Callback::from(move |event: Event| {
            let input: Option<web_sys::HtmlInputElement> = event.target_dyn_into();
            if let Some(file) = input.and_then(|input| input.files()).and_then(|files| files.get(0)) {
                effects::read_file(file, dispatch.clone());
            }
        })
    };
    let body = match &state.page {
        Page::Loading => html! { <p class="boot-note">{"Reading the recorded run…"}</p> },
        Page::Failed(problem) => html! { <p class="message error" role="alert">{ problem.clone() }</p> },
        Page::Shown(shown) => html! {
            <ShownRun shown={shown.clone()} cursor_ms={state.cursor_ms} narrow={state.narrow}
                filters={state.filters.clone()} {dispatch} />
        },
    };
    let ready = matches!(state.page, Page::Shown(_) | Page::Failed(_));
    html! {
        <div class={classes!("recorded-page", state.embed.then_some("embed"))} data-ready={ready.to_string()}>
            if !state.embed { { top_bar() } }
            <main id="main" class="recorded-main">
                if !state.embed { { file_picker(on_file) } }
                if let Some(problem) = state.problem.clone() {
                    <p class="message error" role="alert">{ problem }{" What was shown stays."}</p>
                }
                { body }
            </main>
        </div>
    }
}

/// The page's header: the brand and the other pages.
fn top_bar() -> Html {
    html! {
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
}

/// The way to open a recorded run from a file.
fn file_picker(on_file: Callback<Event>) -> Html {
    html! {
        <p class="recorded-open">
            <label for="recorded-file">{"Open a recorded run"}</label>
            <input id="recorded-file" type="file" accept=".json,application/json" onchange={on_file} />
            <span class="hint">{" a locklab-log/1 document, from "}<code>{"locklab live --log OUT"}</code>{" or the lab's Export"}</span>
        </p>
    }
}

#[derive(Properties, PartialEq, Debug)]
struct ShownRunProps {
    shown: Shown,
    cursor_ms: u64,
    narrow: bool,
    filters: LogFilters,
    dispatch: Callback<RecordedAction>,
}

/// The recorded run and its simulated twin, one above the other on one cursor.
#[function_component(ShownRun)]
fn shown_run(props: &ShownRunProps) -> Html {
    let shown = &props.shown;
    let run = &shown.run;
    let scenario = &run.scenario;
    let title = format!("{} — {}", scenario.name, scenario.settings_for(run.strategy).title());
    let on_seek = props.dispatch.reform(RecordedAction::Seek);
    html! {
        <>
            <section class="recorded-run" aria-labelledby="recorded-title" data-live={shown.live.is_some().to_string()}
                data-inconclusive={shown.live.as_ref().is_some_and(LiveRecording::inconclusive).to_string()}>
                <h2 id="recorded-title">{ title }</h2>
                <p class="recorded-origin" id="recorded-origin">{ origin(shown.live.as_ref(), scenario.seed) }</p>
                if let Some(stall) = shown.live.as_ref().and_then(LiveRecording::stall_sentence) {
                    <p class="message recorded-inconclusive" id="recorded-inconclusive">
                        <strong>{"Inconclusive: "}</strong>{ stall }{". Its verdict below is what was recorded, not a finding about the lock."}
                    </p>
                }
                <p class="recorded-source">{"Read from "}<code>{ shown.source.clone() }</code>{". A recorded run is shown as it happened; it cannot be changed or replayed."}</p>
                <Verdict run={run.clone()} label="This run" findings_label="Findings of this run" />
                <Timeline run={run.clone()} cursor_ms={props.cursor_ms} on_seek={on_seek.clone()}
                    narrow={props.narrow} label={AttrValue::from("Time cursor of the recorded run")} />
            </section>
            <section class="recorded-twin" aria-labelledby="twin-title">
                <h2 id="twin-title">{"Its simulated twin"}</h2>
                <p>{ format!("The same scenario and strategy in locklab's engine (seed {}). ", scenario.seed) }
                    { twin_agreement(scenario, run.strategy, &run.report, &shown.twin.report, shown.live.as_ref()) }</p>
                <Verdict run={shown.twin.clone()} label="The simulated twin" findings_label="Findings of the simulated twin" />
                <Timeline run={shown.twin.clone()} cursor_ms={props.cursor_ms} on_seek={on_seek.clone()}
                    narrow={props.narrow} label={AttrValue::from("Time cursor of the simulated twin")} />
            </section>
            <section class="recorded-events" aria-labelledby="events-title">
                <h2 id="events-title">{ format!("The recorded events at {}", format::t_label(props.cursor_ms)) }</h2>
                <EventLog run={run.clone()} cursor_ms={props.cursor_ms} filters={props.filters.clone()} {on_seek}
                    on_filter={props.dispatch.reform(RecordedAction::Filter)} />
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
        <div class="recorded-verdict" data-safety={report.safety.name()} data-liveness={report.liveness.name()}
            data-efficiency={report.efficiency.name()}>
            <p><strong>{ format!("{}: ", props.label) }</strong>{ verdict_badges(report) }{" "}{ report.safety_summary() }</p>
            // It scrolls when long, so it takes the focus (and keys) itself.
            <ul class="findings" tabindex="0" aria-label={props.findings_label}>
                { for report.findings.iter().map(|finding| html! {
                    <li data-kind={finding.kind}>{ format!("{} — {}", format::t_label(finding.at_ms), finding.text) }</li>
                }) }
            </ul>
        </div>
    }
}
