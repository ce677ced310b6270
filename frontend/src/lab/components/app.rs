//! The root: the one reducer state, the side effects, and the page layout.

use crate::lab::components::{
    charts::CostCharts, compare::CompareView, inject::InjectPanel, picker::StrategyPicker, script::FaultScript,
    topology::Topology, transport::Transport,
};
use crate::lab::effects::{self, Boot};
use crate::lab::state::{Action, LabState};
use crate::ui::callbacks::sending;
use crate::ui::event_log::EventLog;
use crate::ui::message::{Message, Tone};
use crate::ui::timeline::Timeline;
use crate::ui::verdicts::Verdicts;
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
    let state = use_reducer(move || {
        // A share link's cursor and view; the link was checked against the run's length.
        let mut state = LabState::start(boot.scenario.clone(), boot.strategy, boot.compare, Some(boot.cursor_ms));
        if boot.message.is_some() {
            state.message = boot.message.clone();
        }
        state.narrow = boot.narrow;
        state.embed = boot.embed;
        state
    });
    let dispatch = {
        let dispatcher = state.dispatcher();
        use_memo((), move |()| Callback::from(move |action: Action| dispatcher.dispatch(action)))
    };
    let dispatch: Callback<Action> = (*dispatch).clone();
    // What the pages' timeline, verdict and event log ask for, as the lab's
    // actions. They take the cursor as a prop, so they render with every
    // frame anyway: the callbacks need not be kept from one render to the next.
    let on_seek = dispatch.reform(Action::Seek);

    effects::use_persistence(&state, props.boot.stored_kept);
    effects::use_run_slices(&state);
    effects::use_playback(&state);
    effects::use_input(dispatch.clone());
    let crash_test = props.boot.crash_test;
    use_effect_with((), move |()| {
        crate::ui::frames::mark_first_render();
        if crash_test {
            panic!("a deliberate crash, asked for by #crash-test in the address");
        }
    });

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
        let scenario = state.scenario.clone();
        use_callback(scenario, move |(), scenario| {
            let message = match effects::save_scenario_file(scenario) {
                Ok(name) => Message { tone: Tone::Info, text: format!("Saved the scenario as {name}.") },
                Err(problem) => {
                    Message { tone: Tone::Error, text: format!("The scenario could not be saved: {problem}.") }
                }
            };
            dispatch.emit(Action::Notify(message));
        })
    };

    let on_copy_link = {
        let dispatch = dispatch.clone();
        let state = state.clone();
        Callback::from(move |_: MouseEvent| effects::copy_share_link(&state, dispatch.clone()))
    };
    let on_search_world = {
        let state = state.clone();
        let dispatch = dispatch.clone();
        Callback::from(move |_: MouseEvent| effects::search_this_world(&state, dispatch.clone()))
    };
    let exporter = effects::use_exporter(dispatch.clone());
    let on_export = |figure: effects::Figure| {
        let exporter = exporter.clone();
        let state = state.clone();
        Callback::from(move |_: MouseEvent| exporter.export(&state, figure))
    };
    let on_copy_embed = {
        let dispatch = dispatch.clone();
        let state = state.clone();
        Callback::from(move |_: MouseEvent| effects::copy_embed_code(&state, dispatch.clone()))
    };
    let share_bar = html! {
        <div class="share-bar">
            <div class="button-group" role="group" aria-label="Share">
                <button type="button" id="copy-link" class="primary" onclick={on_copy_link}
                    title="Put a link to this exact view in the address bar and the clipboard">{"Copy link"}</button>
                <button type="button" id="copy-embed" onclick={on_copy_embed}
                    title="Copy an <iframe> snippet that shows this run, compact, inside a post">{"Copy embed code"}</button>
            </div>
            <div class="button-group" role="group" aria-label="Explore">
                <button type="button" id="search-world" onclick={on_search_world}
                    title="Open the explorer on this scenario's world and strategy: search for the fault schedule that breaks it">
                    {"Search this world ↗"}</button>
            </div>
            <div class="button-group" role="group" aria-labelledby="export-label">
                <span id="export-label" class="group-label">{"Export the timeline:"}</span>
                <button type="button" id="export-svg" onclick={on_export(effects::Figure::Svg)}
                    title="The timeline as an SVG figure (the same as `locklab render --svg`)">{"SVG"}</button>
                <button type="button" id="export-png" onclick={on_export(effects::Figure::Png)}
                    title="The timeline as a PNG picture">{"PNG"}</button>
                <button type="button" id="export-log" onclick={on_export(effects::Figure::Log)}
                    title="The event log as JSON (the same as `locklab render --log`)">{"Log JSON"}</button>
            </div>
        </div>
    };

    let run = state.run.clone();
    let message = state.message.as_ref().map(|message| {
        let (class, role) = match message.tone {
            Tone::Info => ("message info", "status"),
            Tone::Error => ("message error", "alert"),
        };
        let icon = if message.tone == Tone::Error { "⚠ " } else { "ℹ " };
        let dismiss = sending(&dispatch, Action::Dismiss);
        html! {
            <div class={class} role={role} id="message">
                <span aria-hidden="true">{icon}</span>
                <span class="message-text">{ &message.text }</span>
                <button class="ghost" onclick={dismiss}><span aria-hidden="true">{"✕"}</span><span class="visually-hidden">{"Dismiss the message"}</span></button>
            </div>
        }
    });
    // A run being computed: how far, and a way out.
    let pending = state.pending.as_ref().map(|pending| {
        let stop = sending(&dispatch, Action::StopRun);
        let name = pending.job.borrow().scenario().name.clone();
        html! {
            <div class="message info" role="status" id="pending">
                <span class="message-text">
                    { "Running " }<strong>{ name }</strong>
                    { ": a long run, computed a slice at a time. The lab shows the run it had until it is done." }
                </span>
                <progress max="1000" value={pending.progress_permille.to_string()} aria-label="How far the run is" />
                <button type="button" id="stop-run" onclick={stop}>{"Stop"}</button>
            </div>
        }
    });
    let compare_toggle = {
        let on = state.compare.is_some();
        let onchange = sending(&dispatch, Action::SetCompare(!on));
        html! {
            <label class="switch">
                <input type="checkbox" id="compare-toggle" checked={on} {onchange} />
                <span>{"Compare all six"}</span>
            </label>
        }
    };
    let scenario_line = {
        let name = if state.scenario.name.is_empty() { "Untitled scenario" } else { &state.scenario.name };
        let faults = state.scenario.faults.len();
        html! {
            <p class="scenario-line">
                <strong>{ name }</strong>
                { format!(" · seed {} · {} fault{} · {} simulated", state.scenario.seed, faults,
                    if faults == 1 { "" } else { "s" }, crate::ui::format::duration(run.duration_ms())) }
                if let Some(description) = &state.scenario.description {
                    <span class="description">{ format!(" — {description}") }</span>
                }
            </p>
        }
    };

    // The timeline and the verdict: the lab's middle row, and all an embed shows.
    let run_panels = html! {
        <>
            <section class="panel timeline-panel" aria-labelledby="timeline-title">
                <h2 id="timeline-title">{"Timeline: belief beside truth"}</h2>
                <Timeline run={run.clone()} cursor_ms={state.cursor_ms} on_seek={on_seek.clone()} narrow={state.narrow} />
            </section>
            <section class="panel verdict-panel" aria-labelledby="verdict-title">
                <h2 id="verdict-title">{"Verdict"}</h2>
                <Verdicts run={run.clone()} cursor_ms={state.cursor_ms} on_seek={on_seek.clone()} />
            </section>
        </>
    };
    if state.embed {
        return html! {
            <div class="lab embed" data-ready="true" data-strategy={state.strategy.name()}
                data-cursor-ms={state.cursor_ms.to_string()} data-playing={state.playing.to_string()}>
                <header class="embed-bar">
                    <p class="embed-title">
                        <strong>{ if state.scenario.name.is_empty() { "Untitled scenario" } else { &state.scenario.name } }</strong>
                        { format!(" · {}", crate::ui::run::strategy_label_in(&state.scenario, state.strategy)) }
                    </p>
                    <a class="embed-open" href={effects::full_size_href()} target="_blank" rel="noopener"
                        id="open-full-size">{"Open in locklab ↗"}</a>
                </header>
                { for message }
                { for pending.clone() }
                <Transport cursor_ms={state.cursor_ms} duration_ms={run.duration_ms()}
                    playing={state.playing} speed_ratio={state.speed_ratio} seed={state.scenario.seed}
                    clock_origin={state.scenario.clock_origin.clone()} dispatch={dispatch.clone()} />
                <main id="main" class="embed-main">
                    { run_panels }
                </main>
                <p class="hint embed-note">{"A simulation: the full lab says what it simplifies."}</p>
            </div>
        };
    }

    let body = match &state.compare {
        Some(runs) => html! {
            <main id="main" class="compare-main">
                <CompareView runs={runs.clone()} cursor_ms={state.cursor_ms}
                    selected={state.strategy} dispatch={dispatch.clone()} on_seek={on_seek.clone()} />
            </main>
        },
        None => html! {
            <main id="main" class="grid">
                <section class="panel topology-panel" aria-labelledby="topology-title">
                    <h2 id="topology-title">{"The world at the cursor"}</h2>
                    <Topology run={run.clone()} cursor_ms={state.cursor_ms} narrow={state.narrow} />
                </section>
                <section class="panel inject-panel" aria-labelledby="inject-title">
                    <h2 id="inject-title">{"Break something now"}</h2>
                    <InjectPanel params={state.inject.clone()} strategy={state.strategy}
                        cursor_ms={state.cursor_ms} duration_ms={run.duration_ms()}
                        instances={state.scenario.world.instances}
                        replica={state.scenario.world.redis_replica}
                        lock_parties={state.scenario.settings_for(state.strategy).lock_parties(&state.scenario.world)}
                        dispatch={dispatch.clone()} />
                </section>
                { run_panels }
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
                    <FaultScript run={run.clone()} cursor_ms={state.cursor_ms}
                        dispatch={dispatch.clone()} on_file={on_file.clone()} on_save={on_save.clone()}
                        on_builtin={on_builtin.clone()} />
                </section>
            </main>
        },
    };

    html! {
        <div class="lab" data-ready="true" data-strategy={state.strategy.name()}
            data-cursor-ms={state.cursor_ms.to_string()} data-playing={state.playing.to_string()}>
            <a class="skip-link" href="#main">{"Skip to the lab"}</a>
            <header class="topbar">
                <div class="brand">
                    <h1>{"locklab"}</h1>
                    <p class="tagline">{"Why distributed locks fail: break things and watch."}</p>
                </div>
                <StrategyPicker selected={state.strategy} dispatch={dispatch.clone()} />
                { compare_toggle }
                <nav class="pages" aria-label="Other pages">
                    <a href="story.html">{"Story"}</a>
                    <a href="quiz.html">{"Quiz"}</a>
                    <a href="explore.html">{"Explorer"}</a>
                </nav>
            </header>
            { scenario_line }
            { share_bar }
            { for message }
            { for pending }
            <Transport cursor_ms={state.cursor_ms} duration_ms={run.duration_ms()}
                playing={state.playing} speed_ratio={state.speed_ratio} seed={state.scenario.seed}
                clock_origin={state.scenario.clock_origin.clone()} dispatch={dispatch.clone()} />
            { body }
        </div>
    }
}
