//! The explorer's components: the root ([`ExplorePage`]), which owns the
//! one state and calls the effects, and the page's named parts: the world
//! searched, the form's fields and fault kinds, the search's progress or
//! outcome, and the speed probe.

use crate::explore::effects::{WorkerLink, state_from_address, use_worker};
use crate::explore::state::{ExploreAction, ExploreState, Outcome, Status};
use crate::ui::run::{strategy_label, strategy_label_in};
use crate::worker::protocol::ExploreRequest;
use crate::worker::protocol::Request;
use locklab_engine::scenario::StrategySettings;
use locklab_engine::scenario::{FAULT_KINDS, Fault};
use locklab_engine::{Scenario, StrategyId};
use std::rc::Rc;
use yew::prelude::*;

/// The goals the search can look for, with what each means.
pub const GOALS: [(&str, &str); 6] = [
    ("unsafe", "Unsafe: a stale write accepted or a report damaged"),
    ("at_risk", "At risk or worse: two holders wrote where no fence checks, or unsafe"),
    ("stale_write", "Stale write: a write applied over a newer holder's (what a fencing token prevents)"),
    ("two_holders", "Two holders: two instances believed they held the lock at once"),
    ("late", "Late: a report late or missing"),
    ("wasteful", "Wasteful: duplicate side effects, a starved pool, other services failing"),
];

/// How the chosen strategy is set in a lab's world when that differs from
/// the seed's (the strategy picker's labels name the seed's settings).
fn settings_note(world: &Scenario, strategy: StrategyId) -> Option<String> {
    let settings = world.settings_for(strategy);
    if settings == StrategySettings::default_for(strategy) {
        return None;
    }
    let text = settings.to_json()?;
    Some(format!("Here {strategy} is set to {text}, not the seed's settings."))
}

/// The engine's option checks speak the command line's flags. The form's
/// number fields carry their ranges, so the browser stops those itself; what
/// is left to say is the fault kinds.
fn in_form_words(problem: &str) -> String {
    let worded = problem.replace("--faults needs at least one fault kind", "allow at least one fault kind");
    format!("The search cannot start: {worded}.")
}

fn number_input<T: std::str::FromStr + ToString + 'static>(
    id: &'static str,
    label: &'static str,
    value: T,
    [min, max]: [&str; 2],
    disabled: bool,
    dispatch: &Callback<ExploreAction>,
    action: fn(T) -> ExploreAction,
) -> Html {
    let dispatch = dispatch.clone();
    // A value that is not a number is left as typed and not taken; the engine checks the ranges.
    let onchange = Callback::from(move |event: Event| {
        let input: web_sys::HtmlInputElement = event.target_unchecked_into();
        if let Ok(value) = input.value().trim().parse::<T>() {
            dispatch.emit(action(value));
        }
    });
    html! {
        <label class="field" for={id}>
            <span>{ label }</span>
            <input type="number" id={id} min={min.to_owned()} max={max.to_owned()} value={value.to_string()} {disabled} {onchange} />
        </label>
    }
}

#[function_component(ExplorePage)]
pub fn explore_page() -> Html {
    let state = use_reducer(state_from_address);
    let dispatch: Callback<ExploreAction> = {
        let dispatcher = state.dispatcher();
        (*use_memo((), move |()| Callback::from(move |action| dispatcher.dispatch(action)))).clone()
    };
    let worker = use_worker(dispatch.clone());
    use_effect_with((), |()| crate::ui::frames::mark_first_render());
    let running = state.running();
    let on_search = {
        let (worker, dispatch, request) = (worker.clone(), dispatch.clone(), state.request.clone());
        Callback::from(move |event: SubmitEvent| {
            event.prevent_default();
            // Checked here too, so a bad input is named at once, in the form's words.
            if let Err(problem) = request.options() {
                dispatch.emit(ExploreAction::Refuse(in_form_words(&problem)));
                return;
            }
            dispatch.emit(ExploreAction::Started);
            worker.send(Request::Explore(request.clone()));
        })
    };
    let on_cancel = {
        let worker = worker.clone();
        Callback::from(move |_: MouseEvent| worker.send(Request::Cancel))
    };
    html! {
        <div class="lab explore" data-ready="true">
            <header class="topbar">
                <div class="brand">
                    <h1>{"locklab · explorer"}</h1>
                    <p class="tagline">{"Proof, not opinion: search for the schedule of faults that breaks a strategy."}</p>
                </div>
                <nav class="pages" aria-label="Other pages">
                    <a href="./">{"Lab"}</a>
                    <a href="story.html">{"Story"}</a>
                    <a href="quiz.html">{"Quiz"}</a>
                </nav>
            </header>
            if let Some(error) = &state.error {
                <div class="message error" role="alert" id="message"><span class="message-text">{ error }</span></div>
            }
            <main id="main">
            <form class="panel explore-form" onsubmit={on_search} aria-labelledby="search-title">
                <h2 id="search-title">{"What to search"}</h2>
                { world_line(&state.request, running, &dispatch) }
                { search_fields(&state, running, &dispatch) }
                { fault_kinds(&state.request, running, &dispatch) }
                <div class="button-group">
                    <button type="submit" class="primary" id="search" disabled={running}>{"Search"}</button>
                    <button type="button" id="cancel" disabled={!running} onclick={on_cancel}>{"Cancel"}</button>
                </div>
                <p class="hint">{"The same inputs always give the same search. Each schedule is a full run of the \
                    world above with the faults drawn for it; what was found is shrunk — fewer faults, shorter pauses, \
                    earlier times — until nothing smaller still fails. The search runs in a Web Worker: this page stays usable."}</p>
            </form>
            { progress(&state.status) }
            { bench_panel(&state, &dispatch, &worker) }
            </main>
        </div>
    }
}

/// The world searched in: a lab's (its name, its length, its own faults set
/// aside, how its settings differ), with a way back to the seed's; or the seed's.
fn world_line(request: &ExploreRequest, running: bool, dispatch: &Callback<ExploreAction>) -> Html {
    let Some(world) = &request.world else {
        return html! {
            <div class="world" id="world" data-world="seed">
                <p>{"World: the seed's — 3 instances, one 5-minute cron period, every setting at its default. \
                    To search another (a longer run, a shorter lock TTL, a replica), open it in the lab and press \
                    “Search this world”."}</p>
            </div>
        };
    };
    let on_seed_world = dispatch.reform(|_: MouseEvent| ExploreAction::SetWorld(None));
    let length = crate::ui::format::duration(world.duration_ms());
    let own_faults = match world.faults.len() {
        0 => "it has no faults of its own".to_owned(),
        1 => "its own fault set aside".to_owned(),
        count => format!("its own {count} faults set aside"),
    };
    html! {
        <div class="world" id="world" data-world="lab">
            <p>
                {"World: "}<strong>{ world.name.clone() }</strong>
                { format!(" from the lab — its instances, settings and seed over {length} of simulated time; \
                    {own_faults}.") }
                if let Some(note) = settings_note(world, request.strategy) {
                    {" "}<span id="world-settings">{ note }</span>
                }
            </p>
            <button type="button" id="seed-world" disabled={running} onclick={on_seed_world}>
                {"Search the seed's world instead"}</button>
        </div>
    }
}

/// The strategy, the goal, and the search's limits and seed.
fn search_fields(state: &ExploreState, running: bool, dispatch: &Callback<ExploreAction>) -> Html {
    let request = &state.request;
    // In a lab's world, the labels say how its settings differ from the seed's ("SET NX EX 100").
    let label = |strategy: StrategyId| match &request.world {
        Some(world) => strategy_label_in(world, strategy),
        None => strategy_label(strategy),
    };
    let strategies = StrategyId::PICKER_ORDER.iter().map(|strategy| {
        let strategy = *strategy;
        html! {
            <option value={strategy.name()} selected={strategy == request.strategy}>{ label(strategy) }</option>
        }
    });
    let on_strategy = dispatch.reform(|event: Event| {
        let select: web_sys::HtmlSelectElement = event.target_unchecked_into();
        ExploreAction::SetStrategy(StrategyId::parse(&select.value()).unwrap_or(StrategyId::Fencing))
    });
    let goals = GOALS.iter().map(|(goal, text)| {
        html! { <option value={*goal} selected={*goal == request.goal}>{ *text }</option> }
    });
    let on_goal = dispatch.reform(|event: Event| {
        let select: web_sys::HtmlSelectElement = event.target_unchecked_into();
        ExploreAction::SetGoal(select.value())
    });
    let window_max_s = state.world_duration_s().max(1).to_string();
    html! {
        <div class="explore-fields">
            <label class="field" for="strategy">
                <span>{"Strategy"}</span>
                <select id="strategy" disabled={running} onchange={on_strategy}>{ for strategies }</select>
            </label>
            <label class="field wide" for="goal">
                <span>{"Stop at the first run that is"}</span>
                <select id="goal" disabled={running} onchange={on_goal}>{ for goals }</select>
            </label>
            { number_input("max-faults", "Faults at most", request.max_faults, ["1", "8"], running, dispatch, ExploreAction::SetMaxFaults) }
            { number_input("window-end", "Faults strike before (s)", request.window_ms.1 / 1_000, ["1", &window_max_s], running, dispatch, ExploreAction::SetWindowEndS) }
            { number_input("runs", "Schedules at most", request.runs, ["1", "10000000"], running, dispatch, ExploreAction::SetRuns) }
            { number_input("seed", "Seed", request.seed, ["0", "18446744073709551615"], running, dispatch, ExploreAction::SetSeed) }
        </div>
    }
}

/// The fault kinds the search may draw, in the engine's order.
fn fault_kinds(request: &ExploreRequest, running: bool, dispatch: &Callback<ExploreAction>) -> Html {
    let kinds = FAULT_KINDS.iter().map(|kind| {
        let kind = *kind;
        let checked = request.kinds.iter().any(|known| known == kind);
        let onchange = dispatch.reform(move |_: Event| ExploreAction::ToggleKind(kind.to_owned()));
        let id = format!("kind-{kind}");
        html! {
            <label class="kind" for={id.clone()}>
                <input type="checkbox" id={id} {checked} disabled={running} {onchange} />
                { Fault::template(kind, 0).map_or(kind, |fault| fault.kind_title()) }
                <code class="kind-id">{ kind }</code>
            </label>
        }
    });
    html! {
        <fieldset class="kinds">
            <legend>{"Fault kinds allowed"}</legend>
            { for kinds }
        </fieldset>
    }
}

/// A running search's progress, or how the last one ended.
fn progress(status: &Status) -> Html {
    match status {
        Status::Idle => html! {},
        Status::Running { runs, budget, elapsed_ms, .. } => {
            let rate = f64::from(*runs) * 1_000.0 / elapsed_ms.max(1.0);
            html! {
                <div class="progress" id="progress" role="status" aria-live="polite">
                    <progress max={budget.to_string()} value={runs.to_string()}></progress>
                    <p>{ format!("{runs} of {budget} schedules · {rate:.0} schedules/s · {:.1} s", elapsed_ms / 1_000.0) }</p>
                </div>
            }
        }
        Status::Done { runs, elapsed_ms, outcome } => outcome_panel(*runs, *elapsed_ms, outcome),
    }
}

/// How a search ended: the smallest counterexample and the way into the
/// lab, nothing found (evidence, not proof), or cancelled.
fn outcome_panel(runs: u32, elapsed_ms: f64, outcome: &Outcome) -> Html {
    let rate = f64::from(runs) * 1_000.0 / elapsed_ms.max(1.0);
    let summary = format!("{runs} schedules in {:.1} s ({rate:.0} schedules/s)", elapsed_ms / 1_000.0);
    match outcome {
        Outcome::Found { scenario, lab_href } => found_panel(runs, elapsed_ms, scenario, lab_href.as_deref()),
        Outcome::NotFound => html! {
            <section class="panel result" id="result" data-outcome="not-found">
                <h2>{ format!("Nothing found: {summary}") }</h2>
                <p>{"No schedule within these limits broke the strategy for this goal. That is evidence, not proof: \
                    a larger budget, more faults or other kinds may still find one, and the lab's world is a model."}</p>
            </section>
        },
        Outcome::Cancelled => html! {
            <section class="panel result" id="result" data-outcome="cancelled">
                <h2>{ format!("Cancelled after {summary}") }</h2>
            </section>
        },
    }
}

/// The counterexample: its story, its faults, and the lab link once made.
fn found_panel(runs: u32, elapsed_ms: f64, scenario: &Rc<Scenario>, lab_href: Option<&str>) -> Html {
    let faults = scenario.faults.iter().map(|fault| {
        html! { <li>{ format!("at {}: ", crate::ui::format::t_label(fault.at_ms())) }<code>{ fault.to_string() }</code></li> }
    });
    html! {
        <section class="panel result found" id="result" data-outcome="found" aria-labelledby="result-title">
            <h2 id="result-title">{ format!("Broken: a counterexample after {runs} schedule{} (found and shrunk in {:.1} s)",
                if runs == 1 { "" } else { "s" }, elapsed_ms / 1_000.0) }</h2>
            <p class="story">{ scenario.description.clone().unwrap_or_default() }</p>
            <h3>{ format!("The smallest schedule that still fails ({} fault{})", scenario.faults.len(),
                if scenario.faults.len() == 1 { "" } else { "s" }) }</h3>
            <ol class="faults">{ for faults }</ol>
            if let Some(href) = lab_href {
                <p><a class="button primary" id="open-in-lab" href={href.to_owned()}>{"Open it in the lab"}</a></p>
            } else {
                <p class="hint">{"Making the lab link…"}</p>
            }
        </section>
    }
}

/// The speed probe: runs of the seed's story per second in this browser.
fn bench_panel(state: &ExploreState, dispatch: &Callback<ExploreAction>, worker: &Rc<WorkerLink>) -> Html {
    let on_bench = {
        let (worker, dispatch, strategy) = (worker.clone(), dispatch.clone(), state.request.strategy);
        Callback::from(move |_: MouseEvent| {
            dispatch.emit(ExploreAction::Bench);
            worker.send(Request::Bench { strategy, runs: 1_000 });
        })
    };
    let bench = state.bench.map(|(strategy, runs_per_s, runs)| {
        html! {
            <p id="bench-result" data-runs-per-s={format!("{runs_per_s:.0}")}>
                { format!("{runs_per_s:.0} runs/s of the seed's story under {strategy} ({runs} seeds) in this browser's WebAssembly.") }
            </p>
        }
    });
    html! {
        <section class="panel bench" aria-labelledby="bench-title">
            <h2 id="bench-title">{"Engine speed in this browser"}</h2>
            <button type="button" id="bench" disabled={state.benching} onclick={on_bench}>
                { if state.benching { "Measuring…" } else { "Measure" } }
            </button>
            { for bench }
        </section>
    }
}
