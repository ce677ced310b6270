//! The engine's report on the run: safety, liveness, the metrics and the
//! findings as sentences. Clicking a finding asks to move the cursor to its
//! event (`on_seek`).

use crate::ui::format;
use crate::ui::run::{RunRef, strategy_label_in};
use crate::ui::svg::{Esc, Svg};
use locklab_engine::Scenario;
use locklab_engine::report::{Metric, StrategyReport};
use locklab_engine::scenario::{Liveness, Safety};
use wasm_bindgen::JsCast;
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct VerdictProps {
    pub run: RunRef,
    pub cursor_ms: u64,
    /// Asked to move the cursor to a finding's time.
    pub on_seek: Callback<u64>,
    /// The element's id: the lab has one verdict panel; a page that shows two
    /// (the quiz's side-by-side) names each.
    #[prop_or(AttrValue::Static("verdicts"))]
    pub id: AttrValue,
}

/// What `at_risk` means, where the verdict says it: the data came through,
/// but nothing would have stopped it from not doing so.
pub const AT_RISK_TEXT: &str =
    "Two runs held the lock at once and wrote where no fence checked; the data survived only by timing.";

/// The tooltip of the efficiency line: why it stands apart from safety.
pub const EFFICIENCY_TITLE: &str = "Kleppmann separates locks for efficiency from locks for correctness: \
when a lock for efficiency fails, work is done twice; when a lock for correctness fails, data is wrong. \
This is the efficiency half of the verdict; safety is the correctness half.";

/// A verdict badge's class, word for `data-*`, and text: the text carries the
/// meaning, the class only colours it.
pub type BadgeParts = (&'static str, &'static str, &'static str, &'static str);

pub fn safety_badge_parts(safety: Safety) -> BadgeParts {
    match safety {
        Safety::Safe => ("good", "data-safety", "safe", "✓ safe"),
        // Never drawn as safe: mutual exclusion was lost, only timing saved the data.
        Safety::AtRisk => ("warn", "data-safety", "at_risk", "⚠ at risk"),
        Safety::Unsafe => ("bad", "data-safety", "unsafe", "✗ unsafe"),
    }
}

pub fn liveness_badge_parts(liveness: Liveness) -> BadgeParts {
    match liveness {
        Liveness::Ok => ("good", "data-liveness", "ok", "✓ on time"),
        Liveness::Late => ("warn", "data-liveness", "late", "⚠ late"),
        Liveness::Missed => ("bad", "data-liveness", "missed", "✗ missed a period"),
    }
}

/// A badge as markup.
pub fn badge_markup((class, attribute, word, text): BadgeParts) -> String {
    format!("<span class=\"badge-verdict {class}\" {attribute}=\"{word}\">{text}</span>")
}

/// A badge as a node.
fn badge((class, _, _, text): BadgeParts) -> Html {
    html! { <span class={classes!("badge-verdict", class)}>{ text }</span> }
}

/// `✓ safe` / `⚠ at risk` / `✗ unsafe`, coloured (the word carries the meaning).
pub fn safety_badge(safety: Safety) -> Html {
    badge(safety_badge_parts(safety))
}

pub fn liveness_badge(liveness: Liveness) -> Html {
    badge(liveness_badge_parts(liveness))
}

/// What happened to the data, in a few sentences: the correctness half of
/// the verdict (duplicated work is the efficiency line's).
pub fn headline(report: &StrategyReport) -> String {
    let metrics = &report.metrics;
    let mut parts = Vec::new();
    match report.safety {
        Safety::AtRisk => parts.push(AT_RISK_TEXT.to_owned()),
        Safety::Safe | Safety::Unsafe => {}
    }
    if metrics.stale_writes_accepted == 0 && metrics.corrupted_reports == 0 && metrics.missed_periods == 0 {
        parts.push("Every report is intact and from one run.".to_owned());
    }
    if metrics.stale_writes_accepted > 0 {
        parts.push(format!(
            "A stale write was accepted ({} in all): an instance that had lost the lock overwrote newer data.",
            metrics.stale_writes_accepted
        ));
    }
    if metrics.corrupted_reports > 0 {
        parts.push(format!(
            "{} report(s) damaged: mixed from two runs, or gone back in time.",
            metrics.corrupted_reports
        ));
    }
    if metrics.stale_writes_rejected > 0 {
        parts.push(format!(
            "{} stale write(s) were rejected because their token was lower than one already seen.",
            metrics.stale_writes_rejected
        ));
    }
    if metrics.background_query_timeouts > 0 {
        parts.push(format!(
            "{} of the other services' queries failed waiting behind the jobs row lock.",
            metrics.background_query_timeouts
        ));
    }
    if metrics.missed_periods > 0 {
        parts.push(format!("{} period(s) got no report by the end of the run.", metrics.missed_periods));
    }
    parts.join(" ")
}

/// The efficiency line and the store, as markup: what every verdict shows
/// beside its safety badge.
fn beside_markup(out: &mut Svg, report: &StrategyReport, scenario: &Scenario) {
    out.raw(format_args!(
        "<p class=\"efficiency\" title=\"{}\">Efficiency: {}</p><p class=\"store\" data-storage-checks-tokens=\"{}\">Store in play: {}</p>",
        Esc(EFFICIENCY_TITLE),
        report.efficiency(),
        scenario.world.storage_checks_tokens,
        scenario.storage_text()
    ));
}

/// The verdict as markup: it depends on the run alone, so it is written once
/// per run; a finding is a button that names its time in `data-seek`.
fn verdict_markup(run: &RunRef) -> String {
    let report = &run.report;
    let metrics = &report.metrics;
    let mut out = Svg::new();
    out.raw(format_args!(
        "<p class=\"verdict-head\"><span class=\"verdict-strategy\">{}</span>{}{}</p><p class=\"headline\">{}</p>",
        Esc(&strategy_label_in(&run.scenario, run.strategy)),
        badge_markup(safety_badge_parts(report.safety)),
        badge_markup(liveness_badge_parts(report.liveness)),
        Esc(&headline(report))
    ));
    beside_markup(&mut out, report, &run.scenario);
    if let Some(expectation) = run.scenario.expect.get(&run.strategy) {
        match report.check(expectation) {
            Ok(()) => out.raw(format_args!("<p class=\"expect ok\">✓ As the scenario expects.</p>")),
            Err(problem) => {
                out.raw(format_args!("<p class=\"expect bad\">✗ Not as the scenario expects: {}.</p>", Esc(&problem)))
            }
        }
    }
    out.raw(format_args!("<dl class=\"metrics\">"));
    for metric in Metric::ALL {
        out.raw(format_args!(
            "<div class=\"metric\" data-metric=\"{}\"><dt>{}</dt><dd>{}</dd></div>",
            metric.key(),
            metric.title(),
            Esc(&metric.value(metrics, format::duration))
        ));
    }
    out.raw(format_args!("</dl><h3 class=\"findings-title\">Findings ({})</h3>", report.findings.len()));
    if report.findings.is_empty() {
        out.raw(format_args!("<p class=\"hint\">Nothing notable: no overlap, no stale write, no missed period.</p>"));
        return out.finish();
    }
    out.raw(format_args!("<ol class=\"findings\">"));
    for finding in &report.findings {
        let when = if finding.event == u32::MAX { "end".to_owned() } else { format::t_label(finding.at_ms) };
        out.raw(format_args!(
            "<li class=\"finding kind-{kind}\" data-kind=\"{kind}\"><button type=\"button\" class=\"finding-button\" data-seek=\"{}\">\
             <span class=\"finding-time\">{when}</span> <span class=\"finding-text\">{}</span>\
             <span class=\"visually-hidden\"> Move the cursor here.</span></button></li>",
            finding.at_ms,
            Esc(&finding.text),
            kind = finding.kind
        ));
    }
    out.raw(format_args!("</ol>"));
    out.finish()
}

#[function_component(Verdicts)]
pub fn verdicts(props: &VerdictProps) -> Html {
    let run = &props.run;
    let report = &run.report;
    let metrics = &report.metrics;
    let markup = use_memo(run.clone(), |run| AttrValue::from(verdict_markup(run)));
    let onclick = {
        let on_seek = props.on_seek.clone();
        Callback::from(move |event: MouseEvent| {
            let at_ms = event
                .target()
                .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
                .and_then(|element| element.closest("[data-seek]").ok().flatten())
                .and_then(|button| button.get_attribute("data-seek"))
                .and_then(|text| text.parse::<u64>().ok());
            if let Some(at_ms) = at_ms {
                on_seek.emit(at_ms);
            }
        })
    };
    html! {
        <div class="verdicts" id={props.id.clone()}
            data-safety={report.safety.name()}
            data-liveness={report.liveness.name()}
            data-stale-accepted={metrics.stale_writes_accepted.to_string()}
            data-stale-rejected={metrics.stale_writes_rejected.to_string()}
            {onclick}>
            { Html::from_html_unchecked((*markup).clone()) }
        </div>
    }
}
