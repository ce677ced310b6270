//! The timeline of one run as a standalone SVG figure, for posts and builds
//! (`locklab render`) and the browser's export: one lane per instance (what it
//! believes, its job, pauses and deaths), the lock service's grants, storage
//! writes accepted ✓ or rejected ✗, report-row writes, Slack posts, and the
//! faults. A pure function of the log; all text is escaped, no external font
//! or image is referenced.

use crate::Event;
use crate::event::{EventKind, ProcessState, PutOutcome, RunPhase, Sql, SqlOutcome};
use crate::ids::{InstanceId, RunId};
use crate::report::StrategyReport;
use crate::scenario::{Scenario, StrategyId, seconds};
use std::collections::BTreeMap;
use std::fmt::Write as _;

const WIDTH: u64 = 1200;
const LEFT: u64 = 130;
const RIGHT: u64 = 24;
const TOP: u64 = 86;
const LANE: u64 = 34;

/// Colours per instance, paired with the letter everywhere so colour never carries meaning alone.
const INSTANCE_COLOURS: [&str; 8] =
    ["#1f6fb2", "#c2500a", "#17805f", "#6a5fb0", "#b8246f", "#4f7f16", "#8a6417", "#555555"];

/// Escapes text for XML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn colour(instance: InstanceId) -> &'static str {
    INSTANCE_COLOURS[instance.index() % INSTANCE_COLOURS.len()]
}

/// The wall-clock label of a true time, from the scenario's `clock_origin` (`HH:MM:SS`).
pub fn clock_label(origin: &str, at_ms: u64) -> String {
    let mut parts = origin.split(':').map(|part| part.parse::<u64>().unwrap_or(0));
    let (hours, minutes, secs) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    let total = (hours * 3600 + minutes * 60 + secs) * 1000 + at_ms;
    let (h, m, s) = ((total / 3_600_000) % 24, (total / 60_000) % 60, (total / 1000) % 60);
    format!("{h:02}:{m:02}:{s:02}")
}

struct Figure {
    svg: String,
    duration_ms: u64,
}

impl Figure {
    fn x(&self, at_ms: u64) -> u64 {
        LEFT + at_ms.min(self.duration_ms) * (WIDTH - LEFT - RIGHT) / self.duration_ms.max(1)
    }

    fn bar(&mut self, lane_y: u64, from_ms: u64, to_ms: u64, fill: &str, class: &str, label: &str) {
        let (x1, x2) = (self.x(from_ms), self.x(to_ms).max(self.x(from_ms) + 2));
        let _ = write!(
            self.svg,
            r#"<g class="{class}"><rect x="{x1}" y="{}" width="{}" height="14" rx="3" fill="{fill}"/>"#,
            lane_y + 8,
            x2 - x1
        );
        if !label.is_empty() && x2 - x1 > 40 {
            let _ =
                write!(self.svg, r#"<text x="{}" y="{}" class="on-bar">{}</text>"#, x1 + 4, lane_y + 19, escape(label));
        }
        self.svg.push_str("</g>");
    }

    /// A translucent overlay over a whole lane: the process was paused or gone,
    /// while whatever it believed stays visible underneath.
    fn overlay(&mut self, lane_y: u64, from_ms: u64, to_ms: u64, label: &str) {
        let (x1, x2) = (self.x(from_ms), self.x(to_ms).max(self.x(from_ms) + 2));
        let _ = write!(
            self.svg,
            r##"<g class="down"><rect x="{x1}" y="{}" width="{}" height="26" fill="#6b6b6b" fill-opacity="0.35" stroke="#444" stroke-dasharray="3 2"/><text x="{}" y="{}" font-size="10" fill="#222">{}</text></g>"##,
            lane_y + 2,
            x2 - x1,
            x1 + 3,
            lane_y + 36,
            escape(label)
        );
    }
}

/// Renders the timeline of `log` (the run of `strategy` through `scenario`) with its verdict.
pub fn timeline(scenario: &Scenario, strategy: StrategyId, log: &[Event], report: &StrategyReport) -> String {
    let instances = scenario.world.instances;
    let lanes = u64::from(instances) + 4;
    let height = TOP + lanes * LANE + 50;
    let mut figure = Figure { svg: String::new(), duration_ms: scenario.duration_ms() };
    let _ = write!(
        figure.svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" font-family="system-ui, sans-serif" font-size="12" role="img" aria-label="{}">"#,
        escape(&format!("Timeline of {} under {}", scenario.name, scenario.settings_for(strategy).title()))
    );
    figure.svg.push_str(
        "<style>text{fill:#1a1a1a}.lane-label{font-weight:600}.on-bar{fill:#fff;font-size:11px}.fault text{fill:#a0001a}\
         .muted{fill:#555}.title{font-size:16px;font-weight:700}</style>",
    );
    let _ = write!(figure.svg, r##"<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>"##);
    let name = if scenario.name.is_empty() { "Scenario" } else { &scenario.name };
    let _ = write!(
        figure.svg,
        r#"<text x="16" y="26" class="title">{} — {}</text>"#,
        escape(name),
        escape(&format!("{} ({strategy})", scenario.settings_for(strategy).title()))
    );
    let metrics = &report.metrics;
    let verdict = format!(
        "{} · {} · overlap {} · stale writes accepted {} · rejected {} · corrupted reports {} · duplicate runs {} · missed periods {}",
        report.safety.name().replace('_', " ").to_uppercase(),
        report.liveness.name().to_uppercase(),
        seconds(metrics.overlap_ms),
        metrics.stale_writes_accepted,
        metrics.stale_writes_rejected,
        metrics.corrupted_reports,
        metrics.duplicate_runs,
        metrics.missed_periods
    );
    let _ = write!(figure.svg, r#"<text x="16" y="46" class="verdict">{}</text>"#, escape(&verdict));

    let lane_y = |index: u64| TOP + index * LANE;
    let mut labels: Vec<String> = (0..instances).map(|index| format!("instance {}", InstanceId(index))).collect();
    labels.extend(["lock service".to_owned(), "storage".to_owned(), "report row".to_owned(), "slack".to_owned()]);
    for (index, label) in (0u64..).zip(labels.iter()) {
        let y = lane_y(index);
        let _ = write!(
            figure.svg,
            r##"<line x1="{LEFT}" y1="{}" x2="{}" y2="{}" stroke="#d0d0d0"/><text x="16" y="{}" class="lane-label">{}</text>"##,
            y + 30,
            WIDTH - RIGHT,
            y + 30,
            y + 20,
            escape(label)
        );
    }
    let service_lane = lane_y(u64::from(instances));
    let storage_lane = service_lane + LANE;
    let row_lane = storage_lane + LANE;
    let slack_lane = row_lane + LANE;

    // Intervals open until something closes them, or the end of the run.
    let end = figure.duration_ms;
    let mut belief: BTreeMap<InstanceId, (u64, Option<crate::ids::Token>)> = BTreeMap::new();
    let mut working: BTreeMap<RunId, (InstanceId, u64)> = BTreeMap::new();
    let mut granted: BTreeMap<RunId, (InstanceId, u64)> = BTreeMap::new();
    let mut down: BTreeMap<InstanceId, (u64, &str)> = BTreeMap::new();
    let mut faults = Vec::new();
    for event in log {
        let at = event.at_ms;
        match &event.kind {
            EventKind::Run { run, instance, phase, .. } => match phase {
                RunPhase::Started => {
                    working.insert(*run, (*instance, at));
                }
                RunPhase::Finished | RunPhase::Aborted(_) | RunPhase::Skipped | RunPhase::GaveUp => {
                    if let Some((instance, from)) = working.remove(run) {
                        let lane = lane_y(u64::from(instance.0));
                        figure.bar(lane + 10, from, at, "#c9d6e3", "job", "");
                    }
                }
                RunPhase::Trying | RunPhase::Busy | RunPhase::Acquired | RunPhase::Redelivered(_) => {}
            },
            EventKind::Belief { instance, holds, token, .. } => {
                if *holds {
                    belief.insert(*instance, (at, *token));
                } else if let Some((from, token)) = belief.remove(instance) {
                    let label = token.map_or_else(|| "holds the lock".to_owned(), |token| format!("token {token}"));
                    figure.bar(lane_y(u64::from(instance.0)), from, at, colour(*instance), "belief", &label);
                }
            }
            EventKind::Granted { run, instance, .. } => {
                granted.insert(*run, (*instance, at));
            }
            EventKind::Revoked { run, .. } => {
                if let Some((instance, from)) = granted.remove(run) {
                    figure.bar(service_lane, from, at, colour(instance), "granted", &format!("{instance}"));
                }
            }
            EventKind::Process { instance, state } => match state {
                ProcessState::Paused { .. } => {
                    down.insert(*instance, (at, "GC pause"));
                }
                ProcessState::Dead | ProcessState::HostLost => {
                    let what = if *state == ProcessState::Dead { "dead" } else { "host lost" };
                    down.insert(*instance, (at, what));
                }
                ProcessState::Running | ProcessState::Restarted => {
                    if let Some((from, what)) = down.remove(instance) {
                        figure.overlay(lane_y(u64::from(instance.0)), from, at, what);
                    }
                }
            },
            EventKind::Put { instance, chunk, outcome, own_object, .. } => {
                let accepted = *outcome == PutOutcome::Accepted;
                let x = figure.x(at);
                let y = storage_lane + 15;
                let title = escape(&event.to_string());
                let mark = if accepted {
                    format!(r##"<circle cx="{x}" cy="{y}" r="5" fill="{}"/>"##, colour(*instance))
                } else {
                    format!(
                        r##"<path d="M{} {} l10 10 m0 -10 l-10 10" stroke="#a0001a" stroke-width="3"/>"##,
                        x - 5,
                        y - 5
                    )
                };
                // The token is in the hover title; on the figure the labels must not collide.
                let label = format!("{instance}{chunk}");
                let _ = write!(
                    figure.svg,
                    r#"<g class="write {}{}"><title>{title}</title>{mark}<text x="{}" y="{}" font-size="10">{}</text></g>"#,
                    if accepted { "accepted" } else { "rejected" },
                    if *own_object { " own-object" } else { "" },
                    x - 6,
                    y + 18,
                    escape(&label)
                );
            }
            EventKind::Sql { statement: Sql::WriteReport { .. }, outcome, client, .. } => {
                let accepted = matches!(outcome, SqlOutcome::Rows(1));
                let x = figure.x(at);
                let _ = write!(
                    figure.svg,
                    r##"<g class="write row {}"><title>{}</title><rect x="{}" y="{}" width="10" height="10" fill="{}"/><text x="{}" y="{}" font-size="10">{}</text></g>"##,
                    if accepted { "accepted" } else { "rejected" },
                    escape(&event.to_string()),
                    x - 5,
                    row_lane + 10,
                    if accepted { "#1a1a1a" } else { "#ffffff\" stroke=\"#a0001a" },
                    x - 4,
                    row_lane + 32,
                    escape(&client.to_string())
                );
            }
            EventKind::Post { instance, .. } => {
                let x = figure.x(at);
                let _ = write!(
                    figure.svg,
                    r##"<g class="post"><title>{}</title><polygon points="{},{} {},{} {},{}" fill="{}"/></g>"##,
                    escape(&event.to_string()),
                    x,
                    slack_lane + 8,
                    x + 6,
                    slack_lane + 20,
                    x.saturating_sub(6),
                    slack_lane + 20,
                    colour(*instance)
                );
            }
            EventKind::Fault { fault, targets } => {
                let mut text = fault.to_string();
                if fault.targets_holder() {
                    let names: Vec<String> = targets.iter().map(ToString::to_string).collect();
                    text = if names.is_empty() {
                        format!("{text} (no holder: nothing happens)")
                    } else {
                        format!("{text} → {}", names.join(", "))
                    };
                }
                faults.push((at, text));
            }
            EventKind::Cron { .. }
            | EventKind::Clock { .. }
            | EventKind::Sent { .. }
            | EventKind::Lost { .. }
            | EventKind::Redis { .. }
            | EventKind::KeyExpired { .. }
            | EventKind::KeysLost { .. }
            | EventKind::RedisDown { .. }
            | EventKind::RedisUp { .. }
            | EventKind::Sql { .. }
            | EventKind::Connection { .. }
            | EventKind::RowLock { .. }
            | EventKind::Pool { .. }
            | EventKind::Background { .. }
            | EventKind::Consensus { .. }
            | EventKind::LeaseExpired { .. }
            | EventKind::Leader { .. }
            | EventKind::RowApplied { .. }
            | EventKind::DbSlow { .. } => {}
        }
    }
    for (instance, (from, token)) in belief {
        let label = token.map_or_else(|| "holds the lock".to_owned(), |token| format!("token {token}"));
        figure.bar(lane_y(u64::from(instance.0)), from, end, colour(instance), "belief", &label);
    }
    for (_, (instance, from)) in granted {
        figure.bar(service_lane, from, end, colour(instance), "granted", &format!("{instance}"));
    }
    for (instance, (from, what)) in down {
        figure.overlay(lane_y(u64::from(instance.0)), from, end, what);
    }
    let bottom = slack_lane + LANE;
    for (index, (at, text)) in (0u64..).zip(faults.iter()) {
        let x = figure.x(*at);
        let _ = write!(
            figure.svg,
            r##"<g class="fault"><line x1="{x}" y1="{}" x2="{x}" y2="{bottom}" stroke="#a0001a" stroke-dasharray="4 3"/><text x="{}" y="{}" font-size="11">⚡ {}</text></g>"##,
            TOP - 4,
            x + 3,
            62 + (index % 2) * 12,
            escape(text)
        );
    }
    // The time axis, labelled with the scenario's wall clock.
    let step = if figure.duration_ms > 1_800_000 {
        600_000
    } else if figure.duration_ms > 600_000 {
        120_000
    } else {
        60_000
    };
    let mut tick = 0;
    while tick <= figure.duration_ms {
        let x = figure.x(tick);
        let _ = write!(
            figure.svg,
            r##"<line x1="{x}" y1="{bottom}" x2="{x}" y2="{}" stroke="#888"/><text x="{}" y="{}" class="muted" font-size="10">{}</text>"##,
            bottom + 5,
            x.saturating_sub(22),
            bottom + 18,
            clock_label(&scenario.clock_origin, tick)
        );
        tick += step;
    }
    let _ = write!(
        figure.svg,
        r#"<text x="16" y="{}" class="muted" font-size="11">Bars: what each instance believes (token inside) over its job; grey: paused or dead. ● write accepted, ✗ rejected, ■ report row, ▲ Slack post, ⚡ fault. locklab, seed {}.</text>"#,
        height - 10,
        scenario.seed
    );
    figure.svg.push_str("</svg>\n");
    figure.svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin;

    #[test]
    fn the_figure_has_one_mark_per_write_and_escapes_names() {
        let mut scenario =
            Scenario::from_json(builtin::find("pause-after-check").expect("built-in").text).expect("valid");
        scenario.name = "<script>alert('x')</script> & co".to_owned();
        let log = crate::simulate(&scenario, StrategyId::Fencing);
        let report = crate::report::analyze(&scenario, StrategyId::Fencing, &log);
        let svg = timeline(&scenario, StrategyId::Fencing, &log, &report);
        let writes = log
            .iter()
            .filter(|event| {
                matches!(event.kind, EventKind::Put { .. } | EventKind::Sql { statement: Sql::WriteReport { .. }, .. })
            })
            .count();
        assert_eq!(svg.matches(r#"<g class="write "#).count(), writes);
        assert_eq!(svg.matches(r#"<g class="write rejected"#).count(), 1, "the paused holder's write is refused");
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("&lt;script&gt;"));
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
    }

    #[test]
    fn the_figure_says_the_three_valued_verdict() {
        let scenario = Scenario::from_json(builtin::find("redlock-clock-jump").expect("built-in").text).expect("valid");
        let figure = |strategy: StrategyId| {
            let log = crate::simulate(&scenario, strategy);
            let report = crate::report::analyze(&scenario, strategy, &log);
            timeline(&scenario, strategy, &log, &report)
        };
        assert!(figure(StrategyId::Redlock).contains(">AT RISK · "), "two holders that wrote unfenced are at risk");
        assert!(figure(StrategyId::Fencing).contains(">SAFE · "));
    }

    #[test]
    fn wall_clock_labels_start_at_the_origin() {
        assert_eq!(clock_label("02:00:00", 0), "02:00:00");
        assert_eq!(clock_label("02:00:00", 341_615), "02:05:41");
        assert_eq!(clock_label("23:59:30", 60_000), "00:00:30");
    }
}
