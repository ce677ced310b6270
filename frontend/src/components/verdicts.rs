//! The engine's report on the run: safety, liveness, the metrics and the
//! findings as sentences. Clicking a finding moves the cursor to its event.

use crate::format;
use crate::lab::{RunRef, strategy_label};
use crate::state::Action;
use locklab_engine::report::{Metrics, StrategyReport};
use locklab_engine::scenario::{Liveness, Safety};
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct VerdictProps {
    pub run: RunRef,
    pub cursor_ms: u64,
    pub dispatch: Callback<Action>,
}

/// The contract's word for a safety verdict.
pub fn safety_word(safety: Safety) -> &'static str {
    match safety {
        Safety::Safe => "safe",
        Safety::Unsafe => "unsafe",
    }
}

/// The contract's word for a liveness verdict.
pub fn liveness_word(liveness: Liveness) -> &'static str {
    match liveness {
        Liveness::Ok => "ok",
        Liveness::Late => "late",
        Liveness::Missed => "missed",
    }
}

/// `✓ safe` / `✗ unsafe`, with a class for colour (the word carries the meaning).
pub fn safety_badge(safety: Safety) -> Html {
    match safety {
        Safety::Safe => html! { <span class="badge-verdict good" data-safety="safe">{"✓ safe"}</span> },
        Safety::Unsafe => html! { <span class="badge-verdict bad" data-safety="unsafe">{"✗ unsafe"}</span> },
    }
}

pub fn liveness_badge(liveness: Liveness) -> Html {
    match liveness {
        Liveness::Ok => html! { <span class="badge-verdict good" data-liveness="ok">{"✓ on time"}</span> },
        Liveness::Late => html! { <span class="badge-verdict warn" data-liveness="late">{"⚠ late"}</span> },
        Liveness::Missed => {
            html! { <span class="badge-verdict bad" data-liveness="missed">{"✗ missed a period"}</span> }
        }
    }
}

/// One sentence that says what happened to the data.
pub fn headline(report: &StrategyReport) -> String {
    let metrics = &report.metrics;
    let mut parts = Vec::new();
    if metrics.stale_writes_accepted > 0 {
        parts.push(format!(
            "A stale write was accepted ({} in all): an instance that had lost the lock overwrote newer data.",
            metrics.stale_writes_accepted
        ));
    }
    if metrics.corrupted_reports > 0 {
        parts.push(format!("{} report(s) mix chunks from two runs.", metrics.corrupted_reports));
    }
    if metrics.stale_writes_rejected > 0 {
        parts.push(format!(
            "{} stale write(s) were rejected because their token was lower than one already seen.",
            metrics.stale_writes_rejected
        ));
    }
    if metrics.duplicate_side_effects > 0 {
        parts.push(format!(
            "{} duplicate side effect(s): extra storage PUTs or Slack posts.",
            metrics.duplicate_side_effects
        ));
    }
    if parts.is_empty() {
        parts.push("Every period's report was written once, by one run.".to_owned());
    }
    parts.join(" ")
}

/// The metrics as (label, value) pairs, for people.
pub fn metric_rows(metrics: &Metrics) -> Vec<(&'static str, &'static str, String)> {
    vec![
        ("overlap", "Two believed they held the lock", format::duration(metrics.overlap_ms)),
        ("stale-accepted", "Stale writes accepted", metrics.stale_writes_accepted.to_string()),
        ("stale-rejected", "Stale writes rejected", metrics.stale_writes_rejected.to_string()),
        ("corrupted", "Corrupted reports", metrics.corrupted_reports.to_string()),
        ("runs", "Runs started (duplicates)", format!("{} ({})", metrics.runs_started, metrics.duplicate_runs)),
        ("side-effects", "Duplicate side effects", metrics.duplicate_side_effects.to_string()),
        ("missed", "Missed periods", metrics.missed_periods.to_string()),
        ("delay", "Longest report delay", format::duration(metrics.max_report_delay_ms)),
        ("lock-wait", "Row-lock waits", format::duration(metrics.db_lock_wait_ms)),
        ("pool", "Pool exhausted", format::duration(metrics.pool_exhausted_ms)),
        ("background", "Background queries failed", metrics.background_query_timeouts.to_string()),
    ]
}

#[function_component(Verdicts)]
pub fn verdicts(props: &VerdictProps) -> Html {
    let run = &props.run;
    let report = &run.report;
    let metrics = &report.metrics;
    let findings = report.findings.iter().map(|finding| {
        let at_ms = finding.at_ms;
        let onclick = props.dispatch.reform(move |_: MouseEvent| Action::Seek(at_ms));
        let when = if finding.event == u32::MAX { "end".to_owned() } else { format::t_label(at_ms) };
        let later = at_ms > props.cursor_ms;
        html! {
            <li class={classes!("finding", later.then_some("later"), format!("kind-{}", finding.kind))}
                data-kind={finding.kind}>
                <button class="finding-button" {onclick}
                    aria-label={format!("{when}: {}. Move the cursor here.", finding.text)}>
                    <span class="finding-time">{ when }</span>
                    <span class="finding-text">{ finding.text.clone() }</span>
                </button>
            </li>
        }
    });
    let expected = run.scenario.expect.get(&run.strategy).map(|expectation| match report.check(expectation) {
        Ok(()) => html! { <p class="expect ok">{"✓ As the scenario expects."}</p> },
        Err(problem) => html! { <p class="expect bad">{ format!("✗ Not as the scenario expects: {problem}.") }</p> },
    });
    html! {
        <div class="verdicts" id="verdicts"
            data-safety={safety_word(report.safety)}
            data-liveness={liveness_word(report.liveness)}
            data-stale-accepted={metrics.stale_writes_accepted.to_string()}
            data-stale-rejected={metrics.stale_writes_rejected.to_string()}>
            <p class="verdict-head">
                <span class="verdict-strategy">{ strategy_label(run.strategy) }</span>
                { safety_badge(report.safety) }
                { liveness_badge(report.liveness) }
            </p>
            <p class="headline">{ headline(report) }</p>
            { for expected }
            <dl class="metrics">
                { for metric_rows(metrics).into_iter().map(|(key, name, value)| html! {
                    <div class="metric" data-metric={key}><dt>{ name }</dt><dd>{ value }</dd></div>
                }) }
            </dl>
            <h3 class="findings-title">{ format!("Findings ({})", report.findings.len()) }</h3>
            if report.findings.is_empty() {
                <p class="hint">{"Nothing notable: no overlap, no stale write, no missed period."}</p>
            } else {
                <ol class="findings">{ for findings }</ol>
            }
        </div>
    }
}
