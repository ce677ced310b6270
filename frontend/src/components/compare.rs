//! Compare mode: the same scenario under all six strategies at once, as
//! small-multiple timelines in a grid and one verdict row each, so it is
//! plain which one survives. The cursor is shared.

use crate::components::timeline::Timeline;
use crate::components::verdicts::{liveness_badge, liveness_word, safety_badge, safety_word};
use crate::format;
use crate::lab::{CompareRuns, PICKER_ORDER, RunRef, strategy_label};
use crate::state::Action;
use locklab_engine::StrategyId;
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct CompareProps {
    pub runs: CompareRuns,
    pub cursor_ms: u64,
    pub selected: StrategyId,
    pub dispatch: Callback<Action>,
}

fn in_picker_order(runs: &CompareRuns) -> Vec<RunRef> {
    PICKER_ORDER.iter().filter_map(|strategy| runs.0.iter().find(|run| run.strategy == *strategy).cloned()).collect()
}

#[function_component(CompareView)]
pub fn compare_view(props: &CompareProps) -> Html {
    let runs = in_picker_order(&props.runs);
    let open = |strategy: StrategyId| {
        let dispatch = props.dispatch.clone();
        Callback::from(move |_: MouseEvent| {
            dispatch.emit(Action::SelectStrategy(strategy));
            dispatch.emit(Action::SetCompare(false));
        })
    };
    let rows = runs.iter().map(|run| {
        let report = &run.report;
        let metrics = &report.metrics;
        html! {
            <tr class="verdict-row" data-strategy={run.strategy.name()}
                data-safety={safety_word(report.safety)}
                data-liveness={liveness_word(report.liveness)}
                data-overlap-ms={metrics.overlap_ms.to_string()}
                data-stale-accepted={metrics.stale_writes_accepted.to_string()}
                data-stale-rejected={metrics.stale_writes_rejected.to_string()}
                data-corrupted={metrics.corrupted_reports.to_string()}
                data-runs={metrics.runs_started.to_string()}
                data-side-effects={metrics.duplicate_side_effects.to_string()}
                data-missed={metrics.missed_periods.to_string()}
                data-background-failures={metrics.background_query_timeouts.to_string()}>
                <th scope="row">
                    <button class="link" onclick={open(run.strategy)} aria-label={format!("Open {} on its own", strategy_label(run.strategy))}>
                        { strategy_label(run.strategy) }
                    </button>
                </th>
                <td>{ safety_badge(report.safety) }</td>
                <td>{ liveness_badge(report.liveness) }</td>
                <td class="num">{ format::duration(metrics.overlap_ms) }</td>
                <td class="num">{ metrics.stale_writes_accepted }</td>
                <td class="num">{ metrics.stale_writes_rejected }</td>
                <td class="num">{ metrics.corrupted_reports }</td>
                <td class="num">{ format!("{} ({})", metrics.runs_started, metrics.duplicate_runs) }</td>
                <td class="num">{ metrics.duplicate_side_effects }</td>
                <td class="num">{ metrics.missed_periods }</td>
                <td class="num">{ metrics.background_query_timeouts }</td>
            </tr>
        }
    });
    let cells = runs.iter().map(|run| {
        let report = &run.report;
        let chosen = run.strategy == props.selected;
        html! {
            <figure class={classes!("multiple", chosen.then_some("chosen"))} data-strategy={run.strategy.name()}>
                <figcaption>
                    <button class="link title" onclick={open(run.strategy)}>{ strategy_label(run.strategy) }</button>
                    { safety_badge(report.safety) }
                    { liveness_badge(report.liveness) }
                </figcaption>
                <Timeline run={run.clone()} cursor_ms={props.cursor_ms} dispatch={props.dispatch.clone()}
                    compact=true label={AttrValue::from(format!("Time cursor, {}", strategy_label(run.strategy)))} />
                <p class="multiple-note">{ crate::components::verdicts::headline(report) }</p>
            </figure>
        }
    });
    html! {
        <div class="compare" id="compare">
            <p class="compare-intro">
                {"The same scenario and seed under all six strategies. Each lane shows what an instance believed (solid) beside what the lock service granted (outline); the shaded stretch is where two believed at once; ✓/✗ are writes."}
            </p>
            <div class="table-wrap">
                <table class="verdict-table" id="verdict-table">
                    <caption class="visually-hidden">{"One verdict row per strategy"}</caption>
                    <thead>
                        <tr>
                            <th scope="col">{"Strategy"}</th>
                            <th scope="col">{"Safety"}</th>
                            <th scope="col">{"Liveness"}</th>
                            <th scope="col">{"Overlap"}</th>
                            <th scope="col"><abbr title="stale writes accepted">{"Stale ✓"}</abbr></th>
                            <th scope="col"><abbr title="stale writes rejected">{"Stale ✗"}</abbr></th>
                            <th scope="col">{"Corrupt"}</th>
                            <th scope="col">{"Runs (dup.)"}</th>
                            <th scope="col"><abbr title="duplicate side effects">{"Dup. effects"}</abbr></th>
                            <th scope="col">{"Missed"}</th>
                            <th scope="col"><abbr title="background queries that failed">{"Bg. failed"}</abbr></th>
                        </tr>
                    </thead>
                    <tbody>{ for rows }</tbody>
                </table>
            </div>
            <div class="multiples">{ for cells }</div>
        </div>
    }
}
