//! The root: the one reducer state, the side effects, and the page layout,
//! in named parts: the top bar, the scenario line, the share bar, the
//! notices, the transport, the run's panels, and the embed's view or the
//! full lab's body (the grid of panels, or compare mode).

use crate::lab::components::{
    charts::CostCharts, compare::CompareView, inject::InjectPanel, picker::StrategyPicker, script::FaultScript,
    topology::Topology, transport::Transport,
};
use crate::lab::effects::{self, Boot, Exporter, Figure};
use crate::lab::state::{Action, LabState};
use crate::ui::callbacks::sending;
use crate::ui::event_log::EventLog;
use crate::ui::message::{Message, Tone};
use crate::ui::shared::Shared;
use crate::ui::timeline::Timeline;
use crate::ui::verdicts::Verdicts;
use locklab_engine::Scenario;
use std::rc::Rc;
use yew::prelude::*;

#[derive(Properties, Debug)]
pub struct AppProps {
    pub boot: Rc<Boot>,
}

/// The same boot is the same props: the app is mounted once, and comparing
/// scenarios field by field would only cost wasm.
impl PartialEq for AppProps {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.boot, &other.boot)
    }
}

#[function_component(App)]
pub fn app(props: &AppProps) -> Html {
    let boot = props.boot.clone();
    let state = use_reducer(move || start_state(&boot));
    let dispatch = {
        let dispatcher = state.dispatcher();
        use_memo((), move |()| Callback::from(move |action: Action| dispatcher.dispatch(action)))
    };
    let dispatch: Callback<Action> = (*dispatch).clone();
    effects::use_persistence(&state, props.boot.stored_kept);
    effects::use_run_slices(&state);
    effects::use_verdict_slices(&state);
    effects::use_playback(&state);
    effects::use_input(dispatch.clone());
    let crash_test = props.boot.crash_test;
    use_effect_with((), move |()| {
        crate::ui::frames::mark_first_render();
        if crash_test {
            panic!("a deliberate crash, asked for by #crash-test in the address");
        }
    });
    let script = use_script_callbacks(&dispatch, &state.scenario);
    let exporter = effects::use_exporter(dispatch.clone());
    // What the pages' timeline, verdict and event log ask for, as the lab's
    // actions. They take the cursor as a prop, so they render with every
    // frame anyway: the callbacks need not be kept from one render to the next.
    let on_seek = dispatch.reform(Action::Seek);
    let (message, pending) = (message_bar(&state, &dispatch), pending_bar(&state, &dispatch));
    let (transport, panels) = (transport_bar(&state, &dispatch), run_panels(&state, &dispatch, &on_seek));
    if state.embed {
        return html! {
            <div class="lab embed" data-ready="true" data-strategy={state.strategy.name()}
                data-cursor-ms={state.cursor_ms.to_string()} data-playing={state.playing.to_string()}>
                { embed_bar(&state) }
                // The night under all six, their verdicts, and a way to switch.
                <StrategyPicker selected={state.strategy} dispatch={dispatch.clone()} verdicts={state.verdicts.clone()} />
                { for message }
                { for pending }
                { transport }
                <main id="main" class="embed-main">{ panels }</main>
                <p class="hint embed-note">{"A simulation: the full lab says what it simplifies."}</p>
            </div>
        };
    }
    html! {
        <div class="lab" data-ready="true" data-strategy={state.strategy.name()}
            data-cursor-ms={state.cursor_ms.to_string()} data-playing={state.playing.to_string()}>
            <a class="skip-link" href="#main">{"Skip to the lab"}</a>
            { top_bar(&state, &dispatch) }
            <div class="scenario-row">
                { scenario_line(&state) }
                { share_bar(&state, &dispatch, &exporter) }
            </div>
            { for message }
            { for pending }
            { transport }
            { main_view(&state, &dispatch, on_seek, script, panels) }
        </div>
    }
}

/// The lab as the boot found it: a share link's cursor and view (the link
/// was checked against the run's length), a message, the screen, the embed.
fn start_state(boot: &Boot) -> LabState {
    let mut state = LabState::start(boot.scenario.clone(), boot.strategy, boot.compare, Some(boot.cursor_ms));
    if boot.message.is_some() {
        state.message = boot.message.clone();
    }
    state.narrow = boot.narrow;
    state.embed = boot.embed;
    state
}

/// What the fault script asks of the page: read a file, load a built-in,
/// save the scenario.
#[derive(Debug)]
struct ScriptCallbacks {
    on_file: Callback<web_sys::File>,
    on_builtin: Callback<String>,
    on_save: Callback<()>,
}

#[hook]
fn use_script_callbacks(dispatch: &Callback<Action>, scenario: &Shared<Scenario>) -> ScriptCallbacks {
    let on_file = {
        let dispatch = dispatch.clone();
        use_callback((), move |file: web_sys::File, ()| {
            effects::read_scenario_file(file, dispatch.clone());
        })
    };
    let on_builtin = {
        let dispatch = dispatch.clone();
        use_callback((), move |name: String, ()| effects::load_builtin(name, dispatch.clone()))
    };
    let on_save = {
        let dispatch = dispatch.clone();
        use_callback(scenario.clone(), move |(), scenario| {
            let message = match effects::save_scenario_file(scenario) {
                Ok(name) => Message { tone: Tone::Info, text: format!("Saved the scenario as {name}.") },
                Err(problem) => {
                    Message { tone: Tone::Error, text: format!("The scenario could not be saved: {problem}.") }
                }
            };
            dispatch.emit(Action::Notify(message));
        })
    };
    ScriptCallbacks { on_file, on_builtin, on_save }
}

/// The name, the tagline, the strategy picker, compare mode and the other pages.
fn top_bar(state: &LabState, dispatch: &Callback<Action>) -> Html {
    let compare = state.compare.is_some();
    html! {
        <header class="topbar">
            <div class="brand">
                <h1>{"locklab"}</h1>
                <p class="tagline">{"Why distributed locks fail: break things and watch."}</p>
            </div>
            <StrategyPicker selected={state.strategy} dispatch={dispatch.clone()} verdicts={state.verdicts.clone()} />
            <label class="switch">
                <input type="checkbox" id="compare-toggle" checked={compare}
                    onchange={sending(dispatch, Action::SetCompare(!compare))} />
                <span>{"Compare all six"}</span>
            </label>
            <nav class="pages" aria-label="Other pages">
                <a href="story.html">{"Story"}</a>
                <a href="quiz.html">{"Quiz"}</a>
                <a href="explore.html">{"Explorer"}</a>
            </nav>
        </header>
    }
}

/// An embedded lab's header: the scenario, the strategy and a way to the full lab.
fn embed_bar(state: &LabState) -> Html {
    html! {
        <header class="embed-bar">
            <p class="embed-title">
                <strong>{ scenario_name(state) }</strong>
                { format!(" · {}", crate::ui::run::strategy_label_in(&state.scenario, state.strategy)) }
            </p>
            <a class="embed-open" href={effects::full_size_href()} target="_blank" rel="noopener"
                id="open-full-size">{"Open in locklab ↗"}</a>
        </header>
    }
}

fn scenario_name(state: &LabState) -> &str {
    if state.scenario.name.is_empty() { "Untitled scenario" } else { &state.scenario.name }
}

/// The scenario's name, seed, faults, length and story, in a line; on a
/// phone the story folds away, so the timeline starts on the first screen.
fn scenario_line(state: &LabState) -> Html {
    let faults = state.scenario.faults.len();
    let line = html! {
        <>
            <strong>{ scenario_name(state) }</strong>
            { format!(" · seed {} · {} fault{} · {} simulated", state.scenario.seed, faults,
                if faults == 1 { "" } else { "s" }, crate::ui::format::duration(state.run.duration_ms())) }
        </>
    };
    match &state.scenario.description {
        Some(description) => html! {
            <details class="scenario-line" open={!state.narrow}>
                <summary>{ line }<span class="hint more">{" · what happens"}</span></summary>
                <p class="description">{ description.clone() }</p>
            </details>
        },
        None => html! { <p class="scenario-line">{ line }</p> },
    }
}

/// Links, embed code, the explorer on this world, and the exports.
fn share_bar(state: &UseReducerHandle<LabState>, dispatch: &Callback<Action>, exporter: &Rc<Exporter>) -> Html {
    let with_state = |effect: fn(&LabState, Callback<Action>)| {
        let (state, dispatch) = (state.clone(), dispatch.clone());
        Callback::from(move |_: MouseEvent| effect(&state, dispatch.clone()))
    };
    let on_export = |figure: Figure| {
        let (exporter, state) = (exporter.clone(), state.clone());
        Callback::from(move |_: MouseEvent| exporter.export(&state, figure))
    };
    // A disclosure: Play is the first thing to press; sharing comes after.
    html! {
        <details class="share-menu" id="share-menu">
        <summary>{"Share · embed · export"}</summary>
        <div class="share-bar">
            <div class="button-group" role="group" aria-label="Share">
                <button type="button" id="copy-link" onclick={with_state(effects::copy_share_link)}
                    title="Put a link to this exact view in the address bar and the clipboard">{"Copy link"}</button>
                <button type="button" id="copy-embed" onclick={with_state(effects::copy_embed_code)}
                    title="Copy an <iframe> snippet that shows this run, compact, inside a post">{"Copy embed code"}</button>
            </div>
            <div class="button-group" role="group" aria-label="Explore">
                <button type="button" id="search-world" onclick={with_state(effects::search_this_world)}
                    title="Open the explorer on this scenario's world and strategy: search for the fault schedule that breaks it">
                    {"Search this world ↗"}</button>
            </div>
            <div class="button-group" role="group" aria-labelledby="export-label">
                <span id="export-label" class="group-label">{"Export the timeline:"}</span>
                <button type="button" id="export-svg" onclick={on_export(Figure::Svg)}
                    title="The timeline as an SVG figure (the same as `locklab render --svg`)">{"SVG"}</button>
                <button type="button" id="export-png" onclick={on_export(Figure::Png)}
                    title="The timeline as a PNG picture">{"PNG"}</button>
                <button type="button" id="export-log" onclick={on_export(Figure::Log)}
                    title="The event log as JSON (the same as `locklab render --log`)">{"Log JSON"}</button>
            </div>
        </div>
        </details>
    }
}

/// The message to the reader, if there is one, until dismissed or replaced.
fn message_bar(state: &LabState, dispatch: &Callback<Action>) -> Option<Html> {
    let message = state.message.as_ref()?;
    let (class, role, icon) = match message.tone {
        Tone::Info => ("message info", "status", "ℹ "),
        Tone::Error => ("message error", "alert", "⚠ "),
    };
    Some(html! {
        <div class={class} role={role} id="message">
            <span aria-hidden="true">{icon}</span>
            <span class="message-text">{ &message.text }</span>
            <button class="ghost" onclick={sending(dispatch, Action::Dismiss)}><span aria-hidden="true">{"✕"}</span><span class="visually-hidden">{"Dismiss the message"}</span></button>
        </div>
    })
}

/// A run being computed: how far, and a way out.
fn pending_bar(state: &LabState, dispatch: &Callback<Action>) -> Option<Html> {
    let pending = state.pending.as_ref()?;
    let name = pending.job.borrow().scenario().name.clone();
    Some(html! {
        <div class="message info" role="status" id="pending">
            <span class="message-text">
                { "Running " }<strong>{ name }</strong>
                { ": a long run, computed a slice at a time. The lab shows the run it had until it is done." }
            </span>
            <progress max="1000" value={pending.progress_permille.to_string()} aria-label="How far the run is" />
            <button type="button" id="stop-run" onclick={sending(dispatch, Action::StopRun)}>{"Stop"}</button>
        </div>
    })
}

/// Playback, the seed and the clock.
fn transport_bar(state: &LabState, dispatch: &Callback<Action>) -> Html {
    html! {
        <Transport cursor_ms={state.cursor_ms} duration_ms={state.run.duration_ms()}
            playing={state.playing} speed_ratio={state.speed_ratio} seed={state.scenario.seed}
            clock_origin={state.scenario.clock_origin.clone()} dispatch={dispatch.clone()} />
    }
}

/// The timeline and the verdict: the lab's middle row, and all an embed shows.
fn run_panels(state: &LabState, dispatch: &Callback<Action>, on_seek: &Callback<u64>) -> Html {
    let on_without_redelivery = Some(dispatch.reform(|()| Action::WithoutRedelivery));
    html! {
        <>
            <section class="panel timeline-panel" aria-labelledby="timeline-title">
                <h2 id="timeline-title">{"Timeline: belief beside truth"}</h2>
                <Timeline run={state.run.clone()} cursor_ms={state.cursor_ms} on_seek={on_seek.clone()} narrow={state.narrow} />
            </section>
            <section class="panel verdict-panel" aria-labelledby="verdict-title">
                <h2 id="verdict-title">{"Verdict"}</h2>
                <Verdicts run={state.run.clone()} cursor_ms={state.cursor_ms} on_seek={on_seek.clone()} {on_without_redelivery}
                    folded={state.embed} />
            </section>
        </>
    }
}

/// The full lab's body: all six side by side in compare mode; otherwise the
/// world, the inject form, the run's panels, the event log, the costs and
/// the fault script.
fn main_view(
    state: &LabState,
    dispatch: &Callback<Action>,
    on_seek: Callback<u64>,
    script: ScriptCallbacks,
    panels: Html,
) -> Html {
    let run = &state.run;
    if let Some(runs) = &state.compare {
        return html! {
            <main id="main" class="compare-main">
                <CompareView runs={runs.clone()} cursor_ms={state.cursor_ms}
                    selected={state.strategy} dispatch={dispatch.clone()} {on_seek} />
            </main>
        };
    }
    let ScriptCallbacks { on_file, on_builtin, on_save } = script;
    html! {
        <main id="main" class="grid">
            // The timeline and the verdict first, in reading order as on screen.
            { panels }
            <section class="panel topology-panel" aria-labelledby="topology-title">
                <h2 id="topology-title">{"The world at the cursor"}</h2>
                <Topology run={run.clone()} cursor_ms={state.cursor_ms} narrow={state.narrow} />
            </section>
            <section class="panel inject-panel" aria-labelledby="inject-title">
                <h2 id="inject-title">{"Break something now"}</h2>
                <InjectPanel params={state.inject.clone()} strategy={state.strategy}
                    cursor_ms={state.cursor_ms} duration_ms={run.duration_ms()}
                    holder_strike_ms={state.run.timeline.holder_strike_ms(state.cursor_ms)}
                    instances={state.scenario.world.instances}
                    replica={state.scenario.world.redis_replica}
                    lock_parties={state.scenario.settings_for(state.strategy).lock_parties(&state.scenario.world)}
                    dispatch={dispatch.clone()} />
            </section>
            <section class="panel log-panel" aria-labelledby="log-title">
                <h2 id="log-title">{"Event log: what went over the wire"}</h2>
                <EventLog run={run.clone()} cursor_ms={state.cursor_ms} filters={state.filters.clone()}
                    {on_seek} on_filter={dispatch.reform(Action::Filter)} />
            </section>
            <section class="panel cost-panel" aria-labelledby="cost-title">
                <h2 id="cost-title">{"What it costs"}</h2>
                <CostCharts run={run.clone()} cursor_ms={state.cursor_ms} />
            </section>
            <section class="panel script-panel" aria-labelledby="script-title">
                <h2 id="script-title">{"Fault script"}</h2>
                <FaultScript run={run.clone()} cursor_ms={state.cursor_ms} dispatch={dispatch.clone()}
                    {on_file} {on_save} {on_builtin} />
            </section>
        </main>
    }
}
