//! The timeline of one run as SVG, drawn once for every place it shows: the
//! lab's lanes, the quiz's and the story's panels, the embed, the exported
//! figure and `locklab render` all call [`lanes`] or [`figure`], which draw
//! the same marks from [`view::Timeline`](crate::view::Timeline). Per
//! instance: what it believed beside what the lock service granted, with
//! process states and the stretches where two believed at once; per resource
//! who held it; every write with its token and verdict; Slack posts; fault
//! markers.
//!
//! The drawing is written as markup text, not as a node per shape: the
//! timeline is many small shapes, and text costs the pages far less
//! WebAssembly (each page has a size budget) and renders faster. Everything
//! that goes into the markup from data is escaped here ([`Esc`]). Classes
//! carry the look: a page styles them with its theme, and [`figure`] carries
//! its own style sheet so the file stands alone.

use crate::format;
use crate::ids::{InstanceId, Token};
use crate::report::{Metric, StrategyReport};
use crate::scenario::{Fault, Scenario};
use crate::view::{HolderSpan, LockSpan, ProcessKind, Resource, Span, Timeline, WriteMark, WriteTarget, WriteVerdict};
use std::fmt::{self, Display, Write};

/// A number with at most one decimal, written without the float formatting
/// machinery (`12.3`, `-4`, `0.5`).
#[derive(Clone, Copy, Debug)]
pub struct Num(pub f64);

impl Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let value = if self.0.is_finite() { self.0 } else { 0.0 };
        // Coordinates are far inside i64 range.
        #[allow(clippy::cast_possible_truncation)]
        let tenths = (value * 10.0).round() as i64;
        let sign = if tenths < 0 { "-" } else { "" };
        let magnitude = tenths.unsigned_abs();
        match magnitude % 10 {
            0 => write!(f, "{sign}{}", magnitude / 10),
            tenth => write!(f, "{sign}{}.{tenth}", magnitude / 10),
        }
    }
}

/// Text made safe for element content and attribute values.
#[derive(Clone, Copy, Debug)]
pub struct Esc<'a>(pub &'a str);

impl Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(position) = rest.find(['&', '<', '>', '"', '\'']) {
            f.write_str(&rest[..position])?;
            f.write_str(match rest.as_bytes()[position] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => "&#39;",
            })?;
            rest = &rest[position + 1..];
        }
        f.write_str(rest)
    }
}

/// A growing SVG document.
#[derive(Debug, Default)]
pub struct Svg {
    pub out: String,
}

impl Svg {
    pub fn new() -> Svg {
        Svg { out: String::with_capacity(16 * 1024) }
    }

    /// Appends formatted markup; the caller escapes what comes from data.
    pub fn raw(&mut self, args: fmt::Arguments<'_>) {
        let _ = self.out.write_fmt(args);
    }

    /// `<text x y class [anchor]>text</text>`, optionally with a tooltip.
    pub fn text(&mut self, x: f64, y: f64, class: &str, anchor: Option<&str>, text: &str) {
        self.raw(format_args!("<text x=\"{}\" y=\"{}\" class=\"{class}\"", Num(x), Num(y)));
        if let Some(anchor) = anchor {
            self.raw(format_args!(" text-anchor=\"{anchor}\""));
        }
        self.raw(format_args!(">{}</text>", Esc(text)));
    }

    /// `<rect>` with a tooltip; `width` is at least one unit so it shows.
    pub fn rect(&mut self, class: &str, x: f64, y: f64, width: f64, height: f64, title: &str) {
        self.raw(format_args!(
            "<rect class=\"{class}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>",
            Num(x),
            Num(y),
            Num(width.max(1.0)),
            Num(height),
            Esc(title)
        ));
    }

    pub fn line(&mut self, class: &str, x1: f64, y1: f64, x2: f64, y2: f64) {
        self.raw(format_args!(
            "<line class=\"{class}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
            Num(x1),
            Num(y1),
            Num(x2),
            Num(y2)
        ));
    }

    pub fn finish(self) -> String {
        self.out
    }
}

/// The drawing's geometry; the cursor layer uses the same.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Geometry {
    pub width: f64,
    pub height: f64,
    pub gutter: f64,
    pub plot: f64,
    pub duration_ms: u64,
    compact: bool,
    font: f64,
}

impl Geometry {
    /// The x of a time.
    pub fn x(&self, at_ms: u64) -> f64 {
        let share = if self.duration_ms == 0 { 0.0 } else { at_ms as f64 / self.duration_ms as f64 };
        self.gutter + share.clamp(0.0, 1.0) * self.plot
    }

    /// Where a stretch of time is drawn: its x and its width.
    fn extent(&self, span: &Span) -> (f64, f64) {
        let x = self.x(span.from_ms);
        (x, self.x(span.to_ms) - x)
    }

    /// The time at a fraction of the drawing's width (a pointer position).
    pub fn time_at(&self, width_fraction: f64) -> u64 {
        let x = width_fraction * self.width;
        let share = ((x - self.gutter) / self.plot).clamp(0.0, 1.0);
        // Inside the run's length, which is at most a day.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let at = (share * self.duration_ms as f64).round() as u64;
        at
    }
}

/// Rows of the drawing, top to bottom.
#[derive(Clone, Debug, PartialEq)]
enum Row {
    Axis,
    Faults,
    /// Labels for the stretches where two believed at once.
    Overlap,
    Instance(InstanceId),
    Holder(Resource),
    Storage,
    Rows,
    Slack,
}

impl Row {
    fn height(&self, compact: bool) -> f64 {
        match (self, compact) {
            // Two lines: the cursor's time label above, the axis labels below, so they never overlap.
            (Row::Axis, false) => 34.0,
            (Row::Axis, true) => 4.0,
            (Row::Faults, false) => 30.0,
            (Row::Faults, true) => 14.0,
            (Row::Overlap, _) => 14.0,
            // Room under the granted bar for a process label ("GC pause", "dead").
            (Row::Instance(_), false) => 52.0,
            (Row::Instance(_), true) => 24.0,
            (Row::Holder(Resource::Redis(_)), _) if compact => 9.0,
            (Row::Holder(_), false) => 18.0,
            (Row::Holder(_), true) => 10.0,
            (Row::Storage, false) => 30.0,
            (Row::Storage, true) => 20.0,
            (Row::Rows, false) => 24.0,
            (Row::Rows, true) => 16.0,
            (Row::Slack, false) => 20.0,
            (Row::Slack, true) => 14.0,
        }
    }
}

fn rows(timeline: &Timeline, compact: bool) -> Vec<Row> {
    let mut rows = vec![Row::Axis, Row::Faults];
    if !compact {
        rows.push(Row::Overlap);
    }
    rows.extend((0..timeline.instances).map(|index| Row::Instance(InstanceId(index))));
    let mut resources: Vec<Resource> = timeline.redis_nodes.iter().map(|party| Resource::Redis(*party)).collect();
    let mut used: Vec<Resource> = Vec::new();
    for span in &timeline.holders {
        if let Err(index) = used.binary_search(&span.resource) {
            used.insert(index, span.resource);
        }
    }
    for resource in used {
        if !resources.contains(&resource) {
            resources.push(resource);
        }
    }
    if compact && resources.len() > 1 && timeline.redis_nodes.len() > 1 {
        resources.truncate(timeline.redis_nodes.len());
    }
    rows.extend(resources.into_iter().map(Row::Holder));
    rows.push(Row::Storage);
    rows.push(Row::Rows);
    rows.push(Row::Slack);
    rows
}

/// The geometry for a run.
pub fn geometry(timeline: &Timeline, compact: bool, narrow: bool) -> Geometry {
    let (width, gutter, font) = match (compact, narrow) {
        (true, _) => (600.0, 58.0, 11.0),
        (false, true) => (380.0, 46.0, 12.5),
        (false, false) => (1000.0, 96.0, 11.5),
    };
    let height: f64 = rows(timeline, compact).iter().map(|row| row.height(compact)).sum::<f64>() + 4.0;
    Geometry { width, height, gutter, plot: width - gutter - 10.0, duration_ms: timeline.duration_ms, compact, font }
}

/// A row of the drawing that a page can point at (the story's highlights).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Band {
    Faults,
    Instance(InstanceId),
    Holder(Resource),
    Storage,
    Rows,
    Slack,
}

/// Where `band` is drawn: its top and height, in the drawing's units; `None`
/// when the run draws no such row.
pub fn band(timeline: &Timeline, compact: bool, band: Band) -> Option<(f64, f64)> {
    let wanted = match band {
        Band::Faults => Row::Faults,
        Band::Instance(instance) => Row::Instance(instance),
        Band::Holder(resource) => Row::Holder(resource),
        Band::Storage => Row::Storage,
        Band::Rows => Row::Rows,
        Band::Slack => Row::Slack,
    };
    let mut top = 0.0;
    for row in rows(timeline, compact) {
        let height = row.height(compact);
        if row == wanted {
            return Some((top, height));
        }
        top += height;
    }
    None
}

/// The band a write's mark is drawn in.
pub fn write_band(write: &WriteMark) -> Band {
    match write.target {
        WriteTarget::Storage { .. } => Band::Storage,
        WriteTarget::Row => Band::Rows,
    }
}

/// Tick spacing: the smallest round step that gives at most `most` ticks.
fn tick_step_ms(duration_ms: u64, most: u64) -> u64 {
    const STEPS_S: [u64; 14] = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200];
    STEPS_S.iter().map(|step| step * 1000).find(|step| duration_ms / step <= most).unwrap_or(4 * 3600 * 1000)
}

fn instance_class(instance: InstanceId) -> &'static str {
    ["inst-0", "inst-1", "inst-2", "inst-3", "inst-4", "inst-5", "inst-6", "inst-7"]
        .get(instance.index())
        .copied()
        .unwrap_or("inst-0")
}

fn resource_label(resource: Resource, short: bool) -> String {
    match (resource, short) {
        (Resource::Redis(party), false) => format!("{party} key"),
        (Resource::Redis(party), true) => party.to_string().replace("redis-", "r"),
        (Resource::RowLock, false) => "row lock".to_owned(),
        (Resource::RowLock, true) => "row".to_owned(),
        (Resource::Lease, _) => "lease".to_owned(),
    }
}

/// A write's mark, and its label where the label before it in the row
/// (ending at `label_end`) leaves room: labels never run into each other.
fn write_mark(svg: &mut Svg, write: &WriteMark, at: (f64, f64), stale: bool, geometry: &Geometry, label_end: &mut f64) {
    let ((x, y), compact) = (at, geometry.compact);
    let verdict = match write.verdict {
        WriteVerdict::Accepted if stale => "stale",
        WriteVerdict::Accepted => "accepted",
        WriteVerdict::Rejected { .. } => "rejected",
        WriteVerdict::NoEffect => "no-effect",
    };
    let own = if matches!(write.target, WriteTarget::Storage { own_object: true, .. }) { " own" } else { "" };
    let glyph = match write.verdict {
        WriteVerdict::Accepted => "✓",
        WriteVerdict::Rejected { .. } => "✗",
        WriteVerdict::NoEffect => "–",
    };
    let mut title = format!("{}: {}", format::t_label(write.at_ms), write.sentence());
    if stale {
        title.push_str(" — a stale write: it landed on a newer run's data");
    }
    svg.raw(format_args!(
        "<g class=\"write {} {verdict}{own}\" data-event=\"{}\"><title>{}</title>",
        instance_class(write.instance),
        write.event,
        Esc(&title)
    ));
    svg.text(x, y, "glyph", Some("middle"), glyph);
    let text = match (write.verdict, stale, compact) {
        (WriteVerdict::Rejected { .. }, _, false) => Some(format!("{} {}", write.instance, write.label())),
        (WriteVerdict::Accepted, true, false) => Some(format!("{} stale {}", write.instance, write.label())),
        (_, true, true) => Some("stale".to_owned()),
        _ => None,
    };
    if let Some(text) = text
        && x + 5.0 >= *label_end
    {
        svg.text(x + 5.0, y - 9.0, "write-label", None, &text);
        *label_end = x + 5.0 + text.chars().count() as f64 * geometry.font * 0.55;
    }
    svg.raw(format_args!("</g>"));
}

/// The lanes of a run as the SVG element a page shows, in the page's layout:
/// `compact` for panels and the embed, `narrow` for a phone. The page's
/// style sheet gives the classes their look.
pub fn lanes(timeline: &Timeline, report: &StrategyReport, clock_origin: &str, compact: bool, narrow: bool) -> String {
    let geometry = geometry(timeline, compact, narrow);
    let mut svg = Svg::new();
    svg.raw(format_args!(
        "<svg class=\"lanes{}\" viewBox=\"0 0 {} {}\" font-size=\"{}\" aria-hidden=\"true\">",
        if compact { " compact" } else { "" },
        Num(geometry.width),
        Num(geometry.height),
        Num(geometry.font)
    ));
    marks(&mut svg, timeline, report, clock_origin, &geometry, narrow);
    svg.raw(format_args!("</svg>"));
    svg.finish()
}

/// Draws the marks of the lanes into `svg`, in the drawing's own units: the
/// overlap bands first, under everything, then each row top to bottom.
fn marks(
    svg: &mut Svg,
    timeline: &Timeline,
    report: &StrategyReport,
    clock_origin: &str,
    geometry: &Geometry,
    narrow: bool,
) {
    let compact = geometry.compact;
    let stale_events: Vec<u32> = report
        .findings
        .iter()
        .filter(|finding| finding.kind == "stale_write_accepted")
        .map(|finding| finding.event)
        .collect();
    let hatch = format!("hatch-{}{}", timeline.strategy.name(), if compact { "-small" } else { "" });
    let reused = reused_tokens(timeline);
    let lane =
        Lane { timeline, geometry, narrow, hatch: &hatch, reused: &reused, stale_events: &stale_events, clock_origin };
    svg.raw(format_args!(
        "<defs><pattern id=\"{hatch}\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">\
         <line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" class=\"hatch-line\"/></pattern></defs>"
    ));
    let all_rows = rows(timeline, compact);
    drain_band(svg, &lane);
    overlap_bands(svg, &lane, &all_rows);
    let mut y = 0.0;
    for row in &all_rows {
        let height = row.height(compact);
        match row {
            Row::Axis => axis_row(svg, &lane, y),
            Row::Faults => faults_row(svg, &lane, y, height),
            Row::Overlap => overlap_labels(svg, &lane, y, height),
            Row::Instance(instance) => instance_row(svg, &lane, instance, y, height),
            Row::Holder(resource) => holder_row(svg, &lane, resource, y, height),
            Row::Storage | Row::Rows => writes_row(svg, &lane, row, y, height),
            Row::Slack => slack_row(svg, &lane, y, height),
        }
        y += height;
    }
}

/// What drawing a row needs besides its place: the run's timeline and the
/// drawing's layout, and what is worked out once for every row.
struct Lane<'a> {
    timeline: &'a Timeline,
    geometry: &'a Geometry,
    narrow: bool,
    /// The id of the hatch pattern a pause is filled with.
    hatch: &'a str,
    /// Tokens the lock service handed to more than one run.
    reused: &'a [Token],
    /// The events of stale writes that were accepted.
    stale_events: &'a [u32],
    clock_origin: &'a str,
}

/// After the window's end no cron tick starts a run and the runs in flight
/// finish: a pale band from the end to the run's last event, under every
/// row, and a dashed line where the window ends, so nobody reads the drain
/// as more of the night.
fn drain_band(svg: &mut Svg, lane: &Lane<'_>) {
    let (timeline, geometry) = (lane.timeline, lane.geometry);
    if timeline.duration_ms <= timeline.window_end_ms {
        return;
    }
    let (x, width) = geometry.extent(&Span { from_ms: timeline.window_end_ms, to_ms: timeline.duration_ms });
    let title = format!(
        "{} → {}: after the scenario's end no cron tick starts a run; the runs already going finish, so no verdict depends on where the window ends",
        format::t_label(timeline.window_end_ms),
        format::t_label(timeline.duration_ms)
    );
    svg.raw(format_args!("<g class=\"drain\">"));
    svg.rect("drain-band", x, 0.0, width, geometry.height, &title);
    svg.line("window-end", x, 0.0, x, geometry.height);
    svg.raw(format_args!("</g>"));
}

/// The stretches where two or more believed they held the lock, as bands
/// across every instance's lane.
fn overlap_bands(svg: &mut Svg, lane: &Lane<'_>, all_rows: &[Row]) {
    let (timeline, geometry, compact) = (lane.timeline, lane.geometry, lane.geometry.compact);
    let mut top = 0.0;
    let mut instances_from = None;
    let mut instances_to = 0.0;
    for row in all_rows {
        if let Row::Instance(_) = row {
            instances_from.get_or_insert(top);
            instances_to = top + row.height(compact);
        }
        top += row.height(compact);
    }
    if let Some(band_top) = instances_from {
        for span in &timeline.overlaps {
            let (x, width) = geometry.extent(span);
            let title = format!(
                "{} → {}: two or more instances each believe they hold the lock",
                format::t_label(span.from_ms),
                format::t_label(span.to_ms)
            );
            svg.raw(format_args!("<g class=\"overlap\">"));
            svg.rect("band", x, band_top, width.max(1.5), instances_to - band_top, &title);
            svg.raw(format_args!("</g>"));
        }
    }
}

/// The time axis: ticks, labelled by the wall clock when they are minutes apart.
fn axis_row(svg: &mut Svg, lane: &Lane<'_>, y: f64) {
    let (geometry, narrow, compact, clock_origin) =
        (lane.geometry, lane.narrow, lane.geometry.compact, lane.clock_origin);
    if !compact {
        let step = tick_step_ms(geometry.duration_ms, if narrow { 5 } else { 10 });
        let mut at = 0;
        while at <= geometry.duration_ms {
            let x = geometry.x(at);
            let text = if step >= 60_000 {
                format::wall_minute(clock_origin, i64::try_from(at).unwrap_or(0))
            } else {
                format::elapsed(at).trim_end_matches(".000").to_owned()
            };
            svg.line("tick", x, y + 28.0, x, geometry.height);
            // A label centred on a tick at either edge would be cut in half:
            // there it is set flush to the tick, inside the drawing.
            let half_width = text.chars().count() as f64 * geometry.font * 0.31;
            let anchor = if x + half_width > geometry.width {
                "end"
            } else if x < half_width {
                "start"
            } else {
                "middle"
            };
            svg.text(x, y + 25.0, "axis-label", Some(anchor), &text);
            at += step;
        }
    }
}

/// The faults: a line down the drawing where each struck, and its words.
fn faults_row(svg: &mut Svg, lane: &Lane<'_>, y: f64, height: f64) {
    let (timeline, geometry, narrow, compact) = (lane.timeline, lane.geometry, lane.narrow, lane.geometry.compact);
    if !compact {
        svg.text(4.0, y + 15.0, "lane-label", None, if narrow { "fault" } else { "faults" });
    }
    // Labels that would run into the one before go up a line, or stay a bare ⚡.
    let mut line_ends = [f64::MIN; 2];
    for mark in &timeline.faults {
        let x = geometry.x(mark.at_ms);
        let title = if mark.targets.is_empty() {
            format!("{}: {} — nothing to strike, so it did nothing", format::t_label(mark.at_ms), mark.fault)
        } else {
            let targets: Vec<String> = mark.targets.iter().map(ToString::to_string).collect();
            let fault = mark.fault.words_with_effect(mark.back_after_ms);
            format!("{}: {fault} (struck {})", format::t_label(mark.at_ms), targets.join(", "))
        };
        svg.raw(format_args!("<g class=\"fault-mark\" data-event=\"{}\"><title>{}</title>", mark.event, Esc(&title)));
        svg.line("", x, y, x, geometry.height);
        let full = format!("⚡ {}", short_fault(&mark.fault));
        let width = full.chars().count() as f64 * geometry.font * 0.62;
        let line = line_ends.iter().position(|end| *end < x);
        let (text, line) = match (compact, line) {
            (false, Some(line)) => (full, line),
            _ => ("⚡".to_owned(), 0),
        };
        if text.len() > 4 {
            line_ends[line] = x + width;
        }
        let line_y = y + height - 6.0 - 10.0 * line as f64;
        svg.text(x + 2.0, line_y, "", None, &text);
        svg.raw(format_args!("</g>"));
    }
}

/// Labels over the stretches where two believed at once.
fn overlap_labels(svg: &mut Svg, lane: &Lane<'_>, y: f64, height: f64) {
    let (timeline, geometry) = (lane.timeline, lane.geometry);
    // Each label fits its band and stops short of the next fault
    // line or band: the longest wording that fits, or none.
    for (index, span) in timeline.overlaps.iter().enumerate() {
        let x = geometry.x(span.from_ms);
        let next_band = timeline.overlaps.get(index + 1).map_or(span.to_ms, |next| next.from_ms);
        // Fault marks are in time order: the first one after the band's start.
        let next_fault =
            timeline.faults.iter().find(|mark| mark.at_ms > span.from_ms).map_or(span.to_ms, |mark| mark.at_ms);
        let end_ms = span.to_ms.min(next_band).min(next_fault);
        let room = geometry.x(end_ms).max(x + 14.0) - x - 4.0;
        let fits = |text: &str| text.chars().count() as f64 * geometry.font * 0.6 <= room;
        if let Some(text) =
            ["⚠ two believe they hold it", "⚠ two believe", "⚠ two", "⚠"].into_iter().find(|text| fits(text))
        {
            svg.text(x + 2.0, y + height - 3.0, "band-label", None, text);
        }
    }
}

/// An instance's lane: its process states, what it believed (with its
/// token) and what the lock service granted it.
fn instance_row(svg: &mut Svg, lane: &Lane<'_>, instance: &InstanceId, y: f64, height: f64) {
    let (timeline, geometry, narrow, compact, hatch, reused) =
        (lane.timeline, lane.geometry, lane.narrow, lane.geometry.compact, lane.hatch, lane.reused);
    let right = geometry.gutter + geometry.plot;
    let class = instance_class(*instance);
    let (belief_y, belief_h, grant_y, grant_h) =
        if compact { (y + 3.0, 9.0, y + 14.0, 6.0) } else { (y + 5.0, 15.0, y + 24.0, 11.0) };
    svg.line("lane-rule", 0.0, y + height, right, y + height);
    svg.text(4.0, belief_y + belief_h - 3.0, "lane-label strong", None, &instance.to_string());
    if !compact && !narrow {
        svg.text(18.0, belief_y + belief_h - 3.0, "lane-sub", None, "believes");
        svg.text(18.0, grant_y + grant_h - 2.0, "lane-sub", None, "granted");
    }
    for span in timeline.processes.iter().filter(|span| span.instance == *instance) {
        let (x, width) = geometry.extent(&span.span);
        let kind = match span.state {
            ProcessKind::Paused => "paused",
            ProcessKind::Dead | ProcessKind::HostLost => "dead",
            ProcessKind::Running => "running",
        };
        let title = format!(
            "{instance}: {} from {} to {}",
            span.state.label(),
            format::t_label(span.span.from_ms),
            format::t_label(span.span.to_ms)
        );
        let fill = if kind == "paused" { format!(" fill=\"url(#{hatch})\"") } else { String::new() };
        svg.raw(format_args!(
            "<rect class=\"process {kind}\"{fill} x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>",
            Num(x),
            Num(y + 1.0),
            Num(width.max(1.0)),
            Num(height - 2.0),
            Esc(&title)
        ));
        if !compact && width > 30.0 {
            svg.text(x + 3.0, y + height - 3.0, "process-label", None, span.state.label());
        }
    }
    for span in timeline.beliefs_of(*instance) {
        let (x, width) = geometry.extent(&span.span);
        let token = span.token.map(|token| format!(" token {token}")).unwrap_or_default();
        let title = format!("{instance} believes it holds the lock{token} ({})", stretch(span));
        svg.rect(&format!("belief {class}"), x, belief_y, width, belief_h, &title);
        let twice = span.token.is_some_and(|token| reused.contains(&token));
        if !compact && width > 34.0 {
            let text = match span.token {
                Some(token) if twice && width > 110.0 => format!("tok {token} ⚠ handed out twice"),
                Some(token) if twice => format!("tok {token} ⚠"),
                Some(token) => format!("tok {token}"),
                None => "holds".to_owned(),
            };
            svg.text(x + 3.0, belief_y + belief_h - 4.0, "bar-label", None, &text);
        }
    }
    for span in timeline.grants_of(*instance) {
        let (x, width) = geometry.extent(&span.span);
        let title = format!("the lock service counts {instance} as holder ({})", stretch(span));
        svg.rect(&format!("grant {class}"), x, grant_y, width, grant_h, &title);
    }
}

/// A lock span's run and times, for its tooltip: `run 3, t=5:00.179 → t=8:50.031`.
fn stretch(span: &LockSpan) -> String {
    format!("{}, {} → {}", span.run, format::t_label(span.span.from_ms), format::t_label(span.span.to_ms))
}

/// A resource's lane: who held it when.
fn holder_row(svg: &mut Svg, lane: &Lane<'_>, resource: &Resource, y: f64, height: f64) {
    let (timeline, geometry, narrow, compact) = (lane.timeline, lane.geometry, lane.narrow, lane.geometry.compact);
    let label_class = if compact { "lane-label tiny" } else { "lane-label" };
    svg.text(4.0, y + height - 4.0, label_class, None, &resource_label(*resource, narrow || compact));
    for span in timeline.holders.iter().filter(|span: &&HolderSpan| span.resource == *resource) {
        let (x, width) = geometry.extent(&span.span);
        let title = format!(
            "{} held by {} from {} to {}",
            resource_label(*resource, false),
            span.holder,
            format::t_label(span.span.from_ms),
            format::t_label(span.span.to_ms)
        );
        svg.rect(&format!("holder {}", instance_class(span.holder)), x, y + 2.0, width, height - 4.0, &title);
        if !compact && width > 12.0 {
            svg.text(x + 2.0, y + height - 5.0, "holder-label", None, &span.holder.to_string());
        }
    }
}

/// The storage's or the report rows' lane: every write with its verdict.
fn writes_row(svg: &mut Svg, lane: &Lane<'_>, row: &Row, y: f64, height: f64) {
    let (timeline, geometry, narrow, stale_events) = (lane.timeline, lane.geometry, lane.narrow, lane.stale_events);
    let storage = *row == Row::Storage;
    let label = match (storage, narrow) {
        (true, false) => "storage",
        (true, true) => "store",
        (false, false) => "db rows",
        (false, true) => "rows",
    };
    svg.text(4.0, y + height - 6.0, "lane-label", None, label);
    let mut label_end = f64::MIN;
    for write in timeline.writes.iter().filter(|write| matches!(write.target, WriteTarget::Storage { .. }) == storage) {
        let stale = stale_events.contains(&write.event);
        let at = (geometry.x(write.at_ms), y + height - 5.0);
        write_mark(svg, write, at, stale, geometry, &mut label_end);
    }
}

/// Slack's lane: each post.
fn slack_row(svg: &mut Svg, lane: &Lane<'_>, y: f64, height: f64) {
    let (timeline, geometry) = (lane.timeline, lane.geometry);
    svg.text(4.0, y + height - 5.0, "lane-label", None, "slack");
    for post in &timeline.posts {
        let title = format!(
            "{}: {} posts period {}'s report to Slack",
            format::t_label(post.at_ms),
            post.instance,
            post.period.0
        );
        svg.raw(format_args!("<g class=\"post {}\"><title>{}</title>", instance_class(post.instance), Esc(&title)));
        svg.text(geometry.x(post.at_ms), y + height - 5.0, "", Some("middle"), "✉");
        svg.raw(format_args!("</g>"));
    }
}

/// Colours of the instances in a figure, `inst-0` to `inst-7`: the lab's
/// light theme. The letter is beside every mark, so colour never carries
/// meaning alone.
const FIGURE_INSTANCE_COLOURS: [&str; 8] =
    ["#2563d4", "#c04f00", "#7a3cc0", "#0d7a74", "#a62d6c", "#5b6a00", "#8a4a2a", "#3d4c55"];

/// The figure's own style sheet: the classes the lanes carry, in the lab's
/// light theme, so the file looks as the lab does with no page around it.
const FIGURE_STYLE: &str = "text{fill:#1b1f24}.title{font-size:16px;font-weight:700}.legend{fill:#535b66;font-size:11px}\
.tick{stroke:#e3e7eb}.axis-label{fill:#535b66;font-size:.9em}.lane-rule{stroke:#e3e7eb}.lane-label{fill:#535b66}\
.lane-label.strong{fill:#1b1f24;font-weight:700;font-size:1.15em}.lane-label.tiny{font-size:.8em}\
.lane-sub{fill:#535b66;font-size:.82em}.grant{fill:#fff;stroke-width:1.5}.holder{opacity:.55}\
.bar-label{fill:#fff;font-size:.85em;font-weight:700}.holder-label{font-size:.85em;font-weight:700}\
.process.paused{stroke:#855400;stroke-width:1}.hatch-line{stroke:#855400;stroke-width:2.2}\
.process.dead{fill:rgba(176,42,32,.13);stroke:#b02a20;stroke-width:1}\
.process-label{fill:#855400;font-weight:700;font-size:.85em}\
.overlap .band{fill:rgba(176,42,32,.13);stroke:#b02a20;stroke-width:.8;stroke-dasharray:3 2}\
.drain-band{fill:#f7f8fa}.window-end{stroke:#535b66;stroke-width:1.2;stroke-dasharray:2 3}.band-label{fill:#b02a20;font-weight:700;font-size:.9em}.fault-mark line{stroke:#855400;stroke-width:1.4;stroke-dasharray:4 3}\
.fault-mark text{fill:#855400;font-weight:700}.write .glyph{font-weight:700;font-size:1.15em}\
.write.accepted .glyph{fill:#146c36}.write.own .glyph{opacity:.7}.write.rejected .glyph,.write.stale .glyph{fill:#b02a20}\
.write.no-effect .glyph{fill:#535b66}.write-label{fill:#b02a20;font-weight:700;font-size:.9em}.post text{font-size:1.1em}";

/// The figure's type: 12 px, its widest common glyphs about 7 px, so a line
/// measured at 7 px a character stays inside the drawing.
const FIGURE_CHAR_PX: f64 = 7.0;
const FIGURE_LINE_PX: f64 = 16.0;

/// Splits `text` at its spaces into lines that fit `width_px` of the figure's type.
fn wrap(text: &str, width_px: f64) -> Vec<String> {
    let fits = |characters: usize| characters as f64 * FIGURE_CHAR_PX <= width_px.max(20.0 * FIGURE_CHAR_PX);
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if fits(line.chars().count() + 1 + word.chars().count()) => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_owned()),
        }
    }
    lines
}

/// The timeline of a run as a standalone SVG file, for posts and builds
/// (`locklab render`) and the lab's export: the title, the verdict, then the
/// lab's lanes in its wide layout, mark for mark, and a key. It references
/// no font, image or page style. Every line of text is wrapped to the
/// drawing's width, so nothing runs past its right edge.
pub fn figure(scenario: &Scenario, timeline: &Timeline, report: &StrategyReport) -> String {
    let geometry = geometry(timeline, false, false);
    // Room on the right for the last tick's label.
    let width = geometry.width + 24.0;
    let strategy = timeline.strategy;
    let name = if scenario.name.is_empty() { "Scenario" } else { &scenario.name };
    let title = scenario.settings_for(strategy).title();
    let text_px = width - 32.0;
    let mut heading = wrap(&format!("{name} — {title}"), text_px);
    let verdict = verdict_line(report);
    heading.extend(wrap(&verdict, text_px));
    let key = [
        "Each lane: solid, the instance believes it holds the lock (tok = its token); outline, the lock service \
         counts it as holder; shaded ⚠, two believe at once; hatched, a GC pause."
            .to_owned(),
        format!(
            "✓ write accepted · ✗ rejected · ✉ Slack post · ⚡ fault. Drawn by locklab from seed {}.",
            scenario.seed
        ),
    ];
    let key: Vec<String> = key.iter().flat_map(|line| wrap(line, text_px)).collect();
    let header_px = 12.0 + FIGURE_LINE_PX * heading.len() as f64 + 8.0;
    let footer_px = 8.0 + FIGURE_LINE_PX * key.len() as f64 + 4.0;
    let height = header_px + geometry.height + footer_px;
    let mut svg = Svg::new();
    svg.raw(format_args!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" \
         font-family=\"system-ui, sans-serif\" font-size=\"12\" role=\"img\" aria-label=\"Timeline of {} under {}\">\
         <style>{FIGURE_STYLE}",
        Esc(name),
        Esc(&title),
        w = Num(width),
        h = Num(height)
    ));
    for (index, colour) in FIGURE_INSTANCE_COLOURS.iter().enumerate() {
        svg.raw(format_args!(
            ".inst-{index} .glyph,.post.inst-{index} text,.belief.inst-{index},.holder.inst-{index}{{fill:{colour}}}\
             .grant.inst-{index}{{stroke:{colour}}}"
        ));
    }
    svg.raw(format_args!("</style><rect width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>", Num(width), Num(height)));
    let title_lines = heading.len() - wrap(&verdict, text_px).len();
    for (index, line) in heading.iter().enumerate() {
        let class = if index < title_lines { "title" } else { "verdict" };
        svg.text(16.0, 24.0 + FIGURE_LINE_PX * index as f64, class, None, line);
    }
    svg.raw(format_args!(
        "<svg class=\"lanes\" y=\"{}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" font-size=\"{}\" overflow=\"visible\">",
        Num(header_px),
        Num(geometry.width),
        Num(geometry.height),
        Num(geometry.width),
        Num(geometry.height),
        Num(geometry.font)
    ));
    marks(&mut svg, timeline, report, &scenario.clock_origin, &geometry, false);
    svg.raw(format_args!("</svg>"));
    let key_y = header_px + geometry.height + 16.0;
    for (index, line) in key.iter().enumerate() {
        svg.text(16.0, key_y + FIGURE_LINE_PX * index as f64, "legend", None, line);
    }
    svg.raw(format_args!("</svg>\n"));
    svg.finish()
}

/// The verdict in one line: safety, liveness and efficiency, each by its
/// axis, and the figures behind them.
fn verdict_line(report: &StrategyReport) -> String {
    format!(
        "safety {} · liveness {} · efficiency {} · {}",
        report.safety.name().replace('_', " ").to_uppercase(),
        report.liveness.name().to_uppercase(),
        report.efficiency.name().to_uppercase(),
        Metric::line(&report.metrics, format::seconds, true)
    )
}

/// Tokens the lock service handed to more than one run: it forgot the
/// counter (a failover to a replica that had not caught up, a restart
/// without persistence), and a fencing token is only as good as its counter.
pub fn reused_tokens(timeline: &Timeline) -> Vec<Token> {
    let mut first_run = Vec::new();
    let mut reused = Vec::new();
    for span in &timeline.beliefs {
        let Some(token) = span.token else {
            continue;
        };
        match first_run.iter().find(|(seen, _)| *seen == token) {
            Some((_, run)) if *run != span.run && !reused.contains(&token) => reused.push(token),
            Some(_) => {}
            None => first_run.push((token, span.run)),
        }
    }
    reused
}

/// A fault in a few words for the marker.
fn short_fault(fault: &Fault) -> String {
    use Fault as F;
    match fault {
        F::OomKill { target, .. } => format!("OOM {target}"),
        F::HostLoss { target, .. } => format!("host {target} lost"),
        F::GcPause { target, duration_ms, .. } => format!("GC {target} {}", format::duration(*duration_ms)),
        F::ClockJump { target, by_ms, .. } => format!("clock {target} {}", format::offset(*by_ms)),
        F::ClockDrift { target, ppm, .. } => format!("drift {target} {ppm:+}ppm"),
        F::NetworkDelay { from, to, .. } => format!("delay {from}→{to}"),
        F::Partition { between, .. } => format!("cut {}↔{}", between[0], between[1]),
        F::RedisRestart { target, .. } => format!("{target} restart"),
        F::RedisFailover { target, .. } => format!("{target} failover"),
        F::ConsensusLeaderLoss { .. } => "leader lost".to_owned(),
        F::DbSlow { factor, .. } => format!("db {}× slow", format::decimal(*factor)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::StrategyId;
    use crate::{builtin, report, simulate};

    fn run(name: &str, strategy: StrategyId) -> (Scenario, Timeline, StrategyReport) {
        let scenario = Scenario::from_json(builtin::find(name).expect("built-in").text).expect("valid");
        let log = simulate(&scenario, strategy);
        let report = report::analyze(&scenario, strategy, &log);
        let timeline = Timeline::build(&scenario, strategy, &log);
        (scenario, timeline, report)
    }

    /// The marks of a drawing: each group's and shape's class with its
    /// tooltip, in drawing order.
    fn marks_of(svg: &str) -> Vec<String> {
        let drawing = &svg[svg.find("<svg class=\"lanes").expect("the lanes")..];
        let drawing = &drawing[..drawing.find("</svg>").expect("the lanes end")];
        let mut marks = Vec::new();
        for piece in drawing.split('<').skip(1) {
            let tag = piece.split([' ', '>', '/']).next().unwrap_or_default();
            if tag == "title" {
                marks.push(format!("  {}", &piece["title>".len()..]));
            } else if let Some(class) = piece.split("class=\"").nth(1) {
                marks.push(format!("{tag}.{}", class.split('"').next().unwrap_or_default()));
            }
        }
        marks
    }

    #[test]
    fn the_exported_figure_draws_the_marks_the_lab_shows() {
        for (name, strategy) in [
            ("two-am-saturday", StrategyId::Naive),
            ("pause-after-check", StrategyId::Fencing),
            ("delayed-packet", StrategyId::Redlock),
            ("redis-failover", StrategyId::Fencing),
        ] {
            let (scenario, timeline, report) = run(name, strategy);
            let on_screen = marks_of(&lanes(&timeline, &report, &scenario.clock_origin, false, false));
            let exported = marks_of(&figure(&scenario, &timeline, &report));
            assert!(on_screen.len() > 20, "{name} under {strategy} draws {} marks", on_screen.len());
            assert_eq!(on_screen, exported, "{name} under {strategy}: the export is the lab's drawing");
            let writes = timeline.writes.len();
            assert_eq!(exported.iter().filter(|mark| mark.starts_with("g.write ")).count(), writes);
        }
    }

    #[test]
    fn the_figure_escapes_names_and_says_the_three_valued_verdict() {
        let (mut scenario, timeline, report) = run("pause-after-check", StrategyId::Fencing);
        scenario.name = "<script>alert('x')</script> & co".to_owned();
        let svg = figure(&scenario, &timeline, &report);
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("&lt;script&gt;"));
        assert!(svg.starts_with("<svg xmlns") && svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<g class=\"write ").count(), timeline.writes.len());
        assert_eq!(
            svg.matches("write inst-0 rejected").count()
                + svg.matches("write inst-1 rejected").count()
                + svg.matches("write inst-2 rejected").count(),
            1,
            "the paused holder's write is refused"
        );
        assert!(svg.contains(">safety SAFE · liveness "), "the three axes, safety first");
        assert!(svg.contains(" · efficiency "), "the three axes");
        let (scenario, timeline, report) = run("redlock-clock-jump", StrategyId::Redlock);
        assert!(
            figure(&scenario, &timeline, &report).contains(">safety AT RISK · "),
            "two holders that wrote unfenced are at risk"
        );
    }

    #[test]
    fn the_lanes_show_a_rejected_write_with_both_tokens() {
        let mut scenario = Scenario::from_json(builtin::find("calm-night").expect("built-in").text).expect("valid");
        // The pause strikes while the holder uploads its first chunk, after the
        // lease check: the upload lands after the pause, with the old token.
        scenario.faults =
            vec![Fault::GcPause { at_ms: 18_500, target: crate::scenario::Target::Holder, duration_ms: 90_000 }];
        let log = simulate(&scenario, StrategyId::Fencing);
        let report = report::analyze(&scenario, StrategyId::Fencing, &log);
        let timeline = Timeline::build(&scenario, StrategyId::Fencing, &log);
        let svg = lanes(&timeline, &report, &scenario.clock_origin, false, false);
        let rejected = timeline
            .writes
            .iter()
            .find(|write| matches!(write.verdict, WriteVerdict::Rejected { .. }))
            .expect("fencing rejects the paused holder's write");
        let label = Esc(&rejected.label()).to_string();
        assert!(svg.contains(&label), "the lane labels the rejected write: {label}");
        assert!(svg.contains("⚠ two"), "the overlap is labelled, not only shaded");
    }

    #[test]
    fn numbers_and_escapes() {
        assert_eq!(Num(12.34).to_string(), "12.3");
        assert_eq!(Num(-4.0).to_string(), "-4");
        assert_eq!(Num(0.05).to_string(), "0.1");
        assert_eq!(Esc("a<b & \"c\"").to_string(), "a&lt;b &amp; &quot;c&quot;");
    }

    /// The lab's light theme: the first `:root` block of its style sheet, as
    /// (variable, value) pairs.
    fn light_theme() -> Vec<(String, String)> {
        let css = include_str!("../../static/style.css");
        let block = css.split(":root {").nth(1).and_then(|rest| rest.split('}').next()).expect("a :root block");
        block
            .lines()
            .filter_map(|line| line.trim().strip_prefix("--")?.strip_suffix(';')?.split_once(": "))
            .map(|(name, value)| (name.to_owned(), value.replace(", ", ",").replace("0.", ".")))
            .collect()
    }

    /// Every colour the figure's style sheet names (`#rrggbb`, `#fff` or `rgba(…)`).
    fn colours(style: &str) -> Vec<String> {
        let mut found = Vec::new();
        let mut rest = style;
        while let Some(start) = rest.find(['#', 'r']) {
            let tail = &rest[start..];
            let length = if let Some(hex) = tail.strip_prefix('#') {
                1 + hex.chars().take_while(char::is_ascii_hexdigit).count()
            } else if tail.starts_with("rgba(") {
                tail.find(')').map_or(0, |end| end + 1)
            } else {
                0
            };
            if length > 1 {
                found.push(tail[..length].to_owned());
            }
            rest = &tail[length.max(1)..];
        }
        found
    }

    #[test]
    fn the_figure_speaks_the_labs_light_theme() {
        // The exported file carries its own style sheet, so that it looks as
        // the lab does with no page around it; this holds the two together.
        let theme = light_theme();
        let value = |name: &str| theme.iter().find(|(variable, _)| variable == name).map(|(_, value)| value.as_str());
        for (index, colour) in FIGURE_INSTANCE_COLOURS.iter().enumerate() {
            let letter = char::from(b'a' + u8::try_from(index).unwrap());
            assert_eq!(Some(*colour), value(&format!("inst-{letter}")), "instance {index}'s colour");
        }
        let figure_colours = colours(FIGURE_STYLE);
        assert!(figure_colours.len() > 10, "the style sheet's colours were found: {figure_colours:?}");
        for colour in figure_colours {
            // White is the panel's colour, and the text on a filled bar.
            let known = colour == "#fff" || theme.iter().any(|(_, value)| *value == colour);
            assert!(known, "the figure's {colour} is not a colour of the lab's light theme ({theme:?})");
        }
    }
}
