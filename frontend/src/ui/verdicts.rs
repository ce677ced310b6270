//! The engine's report on the run: safety, liveness, the metrics and the
//! findings as sentences. Clicking a finding asks to move the cursor to its
//! event (`on_seek`).

use crate::ui::format;
use crate::ui::run::{RunRef, strategy_label_in};
use crate::ui::svg::{Esc, Svg};
use locklab_engine::Scenario;
use locklab_engine::report::{Metric, StrategyReport};
use locklab_engine::scenario::{Efficiency, Liveness, Safety};
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
    /// Asked to play the same night without the job runner's redelivery,
    /// offered where a redelivered job (which asks no lock) did the damage,
    /// so the lock's own behaviour can be seen apart from the runner's.
    #[prop_or_default]
    pub on_without_redelivery: Option<Callback<()>>,
    /// The figures and the findings behind a disclosure (an embed, which
    /// must fit a blog's column: the three axes stay in view).
    #[prop_or(false)]
    pub folded: bool,
}

/// The tooltip of the efficiency verdict: what it judges, and why it stands
/// beside safety with the same weight.
pub const EFFICIENCY_TITLE: &str = "Kleppmann separates locks for efficiency from locks for correctness: \
when a lock for efficiency fails, work is done twice; when a lock for correctness fails, data is wrong. \
Wasteful: a run did work another run was already doing with no fault to force it (no lock, or a lock \
that let it in on its own), or other services' queries waited behind the job's row lock. The post \
rejects option D for this: triple the S3 writes, triple the Slack pings; and option C: connection pool starved.";

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

/// Liveness and efficiency misses are drawn as costs, never in unsafe's red.
pub fn liveness_badge_parts(liveness: Liveness) -> BadgeParts {
    match liveness {
        Liveness::Ok => ("good", "data-liveness", "ok", "✓ on time"),
        Liveness::Late => ("cost", "data-liveness", "late", "◷ late"),
        Liveness::Missed => ("cost", "data-liveness", "missed", "◷ missed a period"),
        Liveness::Behind => ("cost", "data-liveness", "behind", "◷ falls behind"),
    }
}

pub fn efficiency_badge_parts(efficiency: Efficiency) -> BadgeParts {
    match efficiency {
        Efficiency::Ok => ("good", "data-efficiency", "ok", "✓ efficient"),
        Efficiency::Wasteful => ("cost", "data-efficiency", "wasteful", "↻ wasteful"),
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

pub fn efficiency_badge(efficiency: Efficiency) -> Html {
    badge(efficiency_badge_parts(efficiency))
}

/// The three badges, safety, liveness and efficiency, each named by its
/// axis for screen readers: the verdict has three parts of equal weight.
pub fn verdict_badges(report: &StrategyReport) -> Html {
    html! {
        <span class="axes">
            <span class="visually-hidden">{"Safety: "}</span>{ safety_badge(report.safety) }
            <span class="visually-hidden">{" Liveness: "}</span>{ liveness_badge(report.liveness) }
            <span class="visually-hidden">{" Efficiency: "}</span>{ efficiency_badge(report.efficiency) }
        </span>
    }
}

/// The three badges as markup, for the pages that write theirs as text.
pub fn verdict_badges_markup(report: &StrategyReport) -> String {
    format!(
        "<span class=\"axes\">{}{}{}</span>",
        badge_markup(safety_badge_parts(report.safety)),
        badge_markup(liveness_badge_parts(report.liveness)),
        badge_markup(efficiency_badge_parts(report.efficiency))
    )
}

/// The three axes in a sentence each, and the store the run was judged
/// against: what every verdict shows under its badges.
fn axes_markup(out: &mut Svg, report: &StrategyReport, scenario: &Scenario, with_weighing: bool) {
    // How the post weighs A's lateness against D's waste goes under the axis
    // it weighs (liveness for A, efficiency for D), where a reader looks.
    let weighing = report
        .weighing()
        .filter(|_| with_weighing)
        .map(|line| format!(" <span class=\"weighing\">{}</span>", Esc(&line)));
    let (on_liveness, on_efficiency) = match report.liveness {
        Liveness::Late => (weighing.unwrap_or_default(), String::new()),
        Liveness::Ok | Liveness::Missed | Liveness::Behind => (String::new(), weighing.unwrap_or_default()),
    };
    out.raw(format_args!(
        "<dl class=\"axis-lines\"><dt>Safety</dt><dd data-axis=\"safety\">{}</dd><dt>Liveness</dt><dd data-axis=\"liveness\">{}{on_liveness}</dd>\
         <dt title=\"{}\">Efficiency</dt><dd data-axis=\"efficiency\">{}{on_efficiency}</dd></dl>\
         <p class=\"store\" data-storage-checks-tokens=\"{}\">Store in play: {}</p>",
        Esc(&report.safety_summary()),
        Esc(&report.liveness_summary()),
        Esc(EFFICIENCY_TITLE),
        Esc(&capitalized(&report.efficiency_summary())),
        scenario.world.storage_checks_tokens,
        scenario.storage_text()
    ));
}

/// A sentence with its first letter upper-case. ASCII only: the engine's
/// sentences begin with a digit or an ASCII letter, and Unicode's case
/// tables would cost the pages 13 KB of WebAssembly.
pub fn capitalized(text: &str) -> String {
    let mut text = text.to_owned();
    if let Some(first) = text.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    text
}

/// The verdict as markup: it depends on the run alone, so it is written once
/// per run; a finding is a button that names its time in `data-seek`.
fn verdict_markup(run: &RunRef, folded: bool) -> String {
    let report = &run.report;
    let metrics = &report.metrics;
    let mut out = Svg::new();
    out.raw(format_args!(
        "<p class=\"verdict-head\"><span class=\"verdict-strategy\">{}</span>{}</p>",
        Esc(&strategy_label_in(&run.scenario, run.strategy)),
        verdict_badges_markup(report)
    ));
    // Folded (an embed in a blog's column), the weighing waits in the fold with the figures.
    axes_markup(&mut out, report, &run.scenario, !folded);
    if folded {
        out.raw(format_args!(
            "<details class=\"verdict-more\"><summary>The figures and the {} finding{}</summary>",
            report.findings.len(),
            if report.findings.len() == 1 { "" } else { "s" }
        ));
        if let Some(weighing) = report.weighing() {
            out.raw(format_args!("<p class=\"weighing\">{}</p>", Esc(&weighing)));
        }
    }
    // Whether the run did what its scenario promised: with the figures, inside the fold when folded.
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
        if folded {
            out.raw(format_args!("</details>"));
        }
        return out.finish();
    }
    out.raw(format_args!("<ol class=\"findings\">"));
    for finding in &report.findings {
        let when = if finding.event == u32::MAX { "end".to_owned() } else { format::t_label(finding.at_ms) };
        let cause = finding.cause.as_ref().map(|cause| cause.sentence()).unwrap_or_default();
        out.raw(format_args!(
            "<li class=\"finding kind-{kind}\" data-kind=\"{kind}\"><button type=\"button\" class=\"finding-button\" data-seek=\"{}\">\
             <span class=\"finding-time\">{when}</span> <span class=\"finding-text\">{}</span>\
             <span class=\"visually-hidden\"> Move the cursor here.</span></button>",
            finding.at_ms,
            Esc(&finding.text),
            kind = finding.kind
        ));
        if !cause.is_empty() {
            let held = finding.cause.as_ref().map_or("", |cause| cause.held.name());
            out.raw(format_args!("<p class=\"finding-cause\" data-held=\"{held}\">{}</p>", Esc(&cause)));
        }
        out.raw(format_args!("</li>"));
    }
    out.raw(format_args!("</ol>"));
    if folded {
        out.raw(format_args!("</details>"));
    }
    out.finish()
}

#[function_component(Verdicts)]
pub fn verdicts(props: &VerdictProps) -> Html {
    let run = &props.run;
    let report = &run.report;
    let metrics = &report.metrics;
    let markup = use_memo((run.clone(), props.folded), |(run, folded)| AttrValue::from(verdict_markup(run, *folded)));
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
            data-efficiency={report.efficiency.name()}
            data-stale-accepted={metrics.stale_writes_accepted.to_string()}
            data-stale-rejected={metrics.stale_writes_rejected.to_string()}
            {onclick}>
            { Html::from_html_unchecked((*markup).clone()) }
            { without_redelivery(props) }
        </div>
    }
}

/// The offer to play the night without the redelivered job, where one
/// caused a bad outcome and the page can act on it.
fn without_redelivery(props: &VerdictProps) -> Html {
    let redelivered =
        props.run.report.findings.iter().any(|finding| {
            finding.cause.as_ref().is_some_and(|cause| cause.held == locklab_engine::report::Held::Nothing)
        });
    match &props.on_without_redelivery {
        Some(on_without) if redelivered => {
            let onclick = on_without.reform(|_: MouseEvent| ());
            html! {
                <p class="alone-offer">
                    {"This damage came from a job the runner handed back after a crash, which asks no lock. "}
                    <button type="button" id="without-redelivery" {onclick}>{"Play the same night without that job"}</button>
                </p>
            }
        }
        Some(_) | None => Html::default(),
    }
}
