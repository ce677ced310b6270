//! Compare mode: the same scenario under all six strategies at once, as
//! small-multiple timelines in a grid and one verdict row each, so it is
//! plain which one survives. The cursor is shared.

use crate::lab::run::CompareRuns;
use crate::lab::state::Action;
use crate::ui::callbacks::sending;
use crate::ui::format;
use crate::ui::run::{RunRef, strategy_label_in};
use crate::ui::svg::{Esc, Svg};
use crate::ui::timeline::Timeline;
use crate::ui::verdicts::{
    EFFICIENCY_TITLE, badge_markup, efficiency_badge_parts, liveness_badge_parts, safety_badge_parts, verdict_badges,
};
use locklab_engine::StrategyId;
use locklab_engine::report::Metric;
use wasm_bindgen::JsCast;
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct CompareProps {
    pub runs: CompareRuns,
    pub cursor_ms: u64,
    pub selected: StrategyId,
    pub dispatch: Callback<Action>,
    /// The timelines' seek, as the lab's action.
    pub on_seek: Callback<u64>,
}

fn in_picker_order(runs: &CompareRuns) -> Vec<RunRef> {
    StrategyId::PICKER_ORDER
        .iter()
        .filter_map(|strategy| runs.0.iter().find(|run| run.strategy == *strategy).cloned())
        .collect()
}

#[function_component(CompareView)]
pub fn compare_view(props: &CompareProps) -> Html {
    let runs = in_picker_order(&props.runs);
    let on_table = open_alone_on_click(&props.dispatch);
    let cells = runs.iter().map(|run| multiple(run, props));
    html! {
        <div class="compare" id="compare">
            <p class="compare-intro">
                {"The same scenario and seed under all six strategies. Each lane shows what an instance believed (solid) beside what the lock service granted (outline); the shaded stretch is where two believed at once; ✓/✗ are writes."}
            </p>
            <div class="table-wrap" onclick={on_table}>
                { Html::from_html_unchecked(AttrValue::from(verdict_table(&runs))) }
            </div>
            <div class="multiples">{ for cells }</div>
        </div>
    }
}

/// The metrics the table has a column for, in its order.
fn compared_metrics() -> impl Iterator<Item = Metric> + Clone {
    Metric::ALL.into_iter().filter(|metric| metric.compared())
}

/// The verdict table, one row per run, as markup: one raw node costs far
/// less WebAssembly than a virtual-DOM node per cell.
fn verdict_table(runs: &[RunRef]) -> String {
    let mut table = Svg::new();
    // The six runs share the scenario: one line says which store they all write to.
    if let Some(run) = runs.first() {
        table.raw(format_args!(
            "<p class=\"store\" data-storage-checks-tokens=\"{}\">Store in play: {}</p>",
            run.scenario.world.storage_checks_tokens,
            run.scenario.storage_text()
        ));
    }
    table.raw(format_args!(
        "<table class=\"verdict-table\" id=\"verdict-table\"><caption class=\"visually-hidden\">One verdict row per strategy</caption>\
         <thead><tr><th scope=\"col\">Strategy</th><th scope=\"col\">Safety</th><th scope=\"col\">Liveness</th>\
         <th scope=\"col\" title=\"{}\">Efficiency</th>",
        Esc(EFFICIENCY_TITLE)
    ));
    for metric in compared_metrics() {
        table.raw(format_args!("<th scope=\"col\"><abbr title=\"{}\">{}</abbr></th>", metric.title(), metric.column()));
    }
    table.raw(format_args!("</tr></thead><tbody>"));
    for run in runs {
        verdict_row(&mut table, run);
    }
    table.raw(format_args!("</tbody></table>"));
    table.finish()
}

/// One run's row: its verdicts and compared metrics, each also a data
/// attribute of the row.
fn verdict_row(table: &mut Svg, run: &RunRef) {
    let report = &run.report;
    let metrics = &report.metrics;
    let label = strategy_label_in(&run.scenario, run.strategy);
    table.raw(format_args!(
        "<tr class=\"verdict-row\" data-strategy=\"{name}\" data-safety=\"{safety}\" data-liveness=\"{liveness}\" data-efficiency=\"{efficiency}\"",
        name = run.strategy.name(),
        safety = report.safety.name(),
        liveness = report.liveness.name(),
        efficiency = report.efficiency.name(),
    ));
    for metric in compared_metrics() {
        table.raw(format_args!(" data-{}=\"{}\"", metric.key(), metric.count(metrics)));
    }
    table.raw(format_args!(
        "><th scope=\"row\"><button type=\"button\" class=\"link\" data-open=\"{}\" aria-label=\"Open {} on its own\">{}</button></th>\
         <td data-label=\"Safety\">{}</td><td data-label=\"Liveness\">{}</td><td data-label=\"Efficiency\" title=\"{}\">{}</td>",
        run.strategy.name(),
        Esc(&label),
        Esc(&label),
        badge_markup(safety_badge_parts(report.safety)),
        badge_markup(liveness_badge_parts(report.liveness)),
        Esc(&report.efficiency_summary()),
        badge_markup(efficiency_badge_parts(report.efficiency)),
    ));
    for metric in compared_metrics() {
        table.raw(format_args!(
            "<td class=\"num\" data-label=\"{}\">{}</td>",
            metric.title(),
            Esc(&metric.value(metrics, format::duration))
        ));
    }
    table.raw(format_args!("</tr>"));
}

/// A click in the table on a strategy's name opens that strategy alone.
/// The table is raw markup, so one listener on it finds the button clicked.
fn open_alone_on_click(dispatch: &Callback<Action>) -> Callback<MouseEvent> {
    let dispatch = dispatch.clone();
    Callback::from(move |event: MouseEvent| {
        let name = event
            .target()
            .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
            .and_then(|element| element.closest("[data-open]").ok().flatten())
            .and_then(|button| button.get_attribute("data-open"));
        if let Some(strategy) = name.as_deref().and_then(StrategyId::parse) {
            dispatch.emit(Action::OpenAlone(strategy));
        }
    })
}

/// One run's small multiple: its name, verdicts and compact timeline.
fn multiple(run: &RunRef, props: &CompareProps) -> Html {
    let report = &run.report;
    let chosen = run.strategy == props.selected;
    html! {
        <figure class={classes!("multiple", chosen.then_some("chosen"))} data-strategy={run.strategy.name()}>
            <figcaption>
                <button class="link title" onclick={sending(&props.dispatch, Action::OpenAlone(run.strategy))}>{ strategy_label_in(&run.scenario, run.strategy) }</button>
                { verdict_badges(report) }
            </figcaption>
            <Timeline run={run.clone()} cursor_ms={props.cursor_ms} on_seek={props.on_seek.clone()}
                compact=true label={AttrValue::from(format!("Time cursor, {}", strategy_label_in(&run.scenario, run.strategy)))} />
            <p class="multiple-note">{ report.safety_summary() }</p>
        </figure>
    }
}
