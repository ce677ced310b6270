//! The world at the cursor, drawn as a diagram: the load balancer and the
//! instances on the left with their state, clock and belief; on the right the
//! lock service (Redis nodes, the consensus store or the database), storage
//! and Slack with what each holds; messages in flight between them.

use crate::ui::format;
use crate::ui::run::RunRef;
use crate::ui::svg::{Esc, Num, Svg};
use locklab_engine::event::{DbClient, LockValue, RunPhase};
use locklab_engine::ids::{InstanceId, Party, ReportOf, Token};
use locklab_engine::scenario::{Output, World};
use locklab_engine::view::{Flight, InstanceView, ProcessView, RedisNodeView, RunView, WorldAt};
use locklab_engine::{Scenario, StrategyId};
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct TopologyProps {
    pub run: RunRef,
    pub cursor_ms: u64,
    pub narrow: bool,
}

/// Sizes of the drawing, wide or narrow.
#[derive(Clone, Copy)]
struct Layout {
    width: f64,
    column: f64,
    line: f64,
    pad: f64,
    gap: f64,
    font: f64,
    single: bool,
}

impl Layout {
    fn new(narrow: bool) -> Layout {
        if narrow {
            // One column: the cards stack under each other, the bus runs down the left.
            Layout { width: 340.0, column: 314.0, line: 15.0, pad: 6.0, gap: 8.0, font: 11.5, single: true }
        } else {
            Layout { width: 720.0, column: 296.0, line: 17.0, pad: 8.0, gap: 10.0, font: 13.0, single: false }
        }
    }
    fn bus_x(&self) -> f64 {
        if self.single { 10.0 } else { self.width / 2.0 }
    }
    fn left_x(&self) -> f64 {
        if self.single { 26.0 } else { 0.0 }
    }
    fn right_x(&self) -> f64 {
        if self.single { 26.0 } else { self.width - self.column }
    }
    /// Where the instances' cards meet the bus.
    fn left_edge(&self) -> f64 {
        if self.single { self.left_x() } else { self.column }
    }
}

/// A card: a party's box with lines of text.
struct Card {
    party: Option<Party>,
    title: String,
    /// Extra class on the box: state (paused, dead, down, …).
    tone: &'static str,
    lines: Vec<(String, &'static str)>,
    y: f64,
    height: f64,
}

fn card_height(layout: Layout, lines: usize) -> f64 {
    let count = u32::try_from(lines + 1).unwrap_or(1);
    f64::from(count) * layout.line + 2.0 * layout.pad
}

fn instance_lines(
    view: &InstanceView,
    at_ms: u64,
    origin: &str,
    pool_size: u8,
    reused: &[Token],
) -> (String, &'static str, Vec<(String, &'static str)>) {
    let (state, tone) = process_state(view.process, at_ms);
    let title = format!("{} · {state}", view.id);
    let lines = vec![
        (clock_line(view, at_ms, origin), "clock"),
        belief_line(view, reused),
        truth_line(view),
        (run_line(view.run), "run"),
        (pool_line(view, pool_size), "pool"),
    ];
    (title, tone, lines)
}

/// The instance's process in a few words, with its card's tone: how long a
/// pause has left, and when a dead process or a lost host comes back.
fn process_state(process: ProcessView, at_ms: u64) -> (String, &'static str) {
    let left = |until_ms: u64| format::countdown(i64::try_from(until_ms.saturating_sub(at_ms)).unwrap_or(0));
    match process {
        ProcessView::Running => ("● running".to_owned(), "running"),
        ProcessView::Paused { until_ms } => (format!("❚❚ GC pause, {} left", left(until_ms)), "paused"),
        ProcessView::Dead { restart_at_ms } => (
            match restart_at_ms {
                Some(at) => format!("✕ dead, restarting in {}", left(at)),
                None => "✕ dead (OOM-killed)".to_owned(),
            },
            "dead",
        ),
        ProcessView::HostLost { restart_at_ms } => (
            match restart_at_ms {
                Some(at) => format!("⚠ host lost, back in {}", left(at)),
                None => "⚠ host lost".to_owned(),
            },
            "dead",
        ),
    }
}

/// The time by the instance's own clock, with how far it is off when it is.
fn clock_line(view: &InstanceView, at_ms: u64, origin: &str) -> String {
    let offset = view.clock.offset_ms(at_ms);
    let mut clock = format!("own clock {}", format::wall_clock(origin, view.clock.local_at(at_ms)));
    if offset.abs() >= 1 {
        clock.push_str(&format!(" ({})", format::offset(offset)));
    }
    clock
}

/// What the instance believes, in its own words, flagged when its token
/// was handed out twice.
fn belief_line(view: &InstanceView, reused: &[Token]) -> (String, &'static str) {
    match view.belief {
        Some((_, Some(token))) if reused.contains(&token) => {
            (format!("“I hold the lock, token {token}” ⚠ handed out twice"), "belief holds wrong")
        }
        Some((_, Some(token))) => (format!("“I hold the lock, token {token}”"), "belief holds"),
        Some((_, None)) => ("“I hold the lock”".to_owned(), "belief holds"),
        None => ("“I don't hold the lock”".to_owned(), "belief"),
    }
}

/// Whether the lock service agrees with the instance's belief.
fn truth_line(view: &InstanceView) -> (String, &'static str) {
    match (view.belief.is_some(), view.granted.is_some()) {
        (true, true) => ("✓ the lock service agrees".to_owned(), "truth ok"),
        (true, false) => ("⚠ the lock service disagrees".to_owned(), "truth wrong"),
        (false, true) => ("lock service: granted, not yet known".to_owned(), "truth"),
        (false, false) => ("lock service: not the holder".to_owned(), "truth"),
    }
}

/// The instance's current (or last) run, its period and where it stands.
fn run_line(run: Option<RunView>) -> String {
    let Some(run) = run else { return "no run yet".to_owned() };
    let phase = match run.phase {
        RunPhase::Trying => "trying the lock".to_owned(),
        RunPhase::Busy => "lock busy, will retry".to_owned(),
        RunPhase::Acquired => "got the lock".to_owned(),
        RunPhase::Skipped => "report exists, skipped".to_owned(),
        RunPhase::Started => format!("working, {} chunk(s) written", run.chunks_written),
        RunPhase::Finished => "finished".to_owned(),
        RunPhase::Aborted(_) => "stopped its job".to_owned(),
        RunPhase::GaveUp => "gave up".to_owned(),
        RunPhase::Redelivered(from) => format!("redelivered {from}'s job, no lock"),
    };
    format!("{} p{}: {phase}", run.run, run.period.0)
}

/// The instance's connection pool: busy of its size, and who waits for one.
fn pool_line(view: &InstanceView, pool_size: u8) -> String {
    format!(
        "pool {}/{} busy{}",
        view.pool.busy,
        pool_size,
        if view.pool.waiting > 0 { format!(", {} waiting", view.pool.waiting) } else { String::new() }
    )
}

/// A stored report in a few words: `report p3`, `daily report`.
fn report_name(report: ReportOf) -> String {
    match report {
        ReportOf::Period(period) => format!("report p{}", period.0),
        ReportOf::Day(0) => "daily report".to_owned(),
        ReportOf::Day(day) => format!("daily report, day +{day}"),
    }
}

/// The world's set-up that decides what a lost lock costs, in sentences:
/// which store the writes meet, what each period writes, and whether a job
/// that crashed comes back.
fn setup_notes(scenario: &Scenario) -> Vec<&'static str> {
    let mut notes = vec![
        scenario.storage_text(),
        match scenario.output() {
            Output::Daily => "the job rewrites one daily report",
            Output::PerPeriod => "each period writes its own report",
        },
    ];
    if scenario.world.redeliver_after_crash {
        notes.push("at-least-once job runner: a crashed job is redelivered and runs without the lock");
    }
    notes
}

fn client_name(client: DbClient) -> String {
    match client {
        DbClient::Instance(id) => id.to_string(),
        DbClient::Background => "other services".to_owned(),
    }
}

/// The services' cards, right of the load balancer: each Redis node, etcd
/// under consensus, the database, storage and Slack.
fn service_cards(world: &WorldAt, run: &RunRef) -> Vec<Card> {
    let scenario = &run.scenario;
    let redlock = run.strategy == StrategyId::Redlock;
    let lag_ms = scenario.world.replication_lag_ms;
    let mut cards: Vec<Card> = world.redis.iter().map(|node| redis_card(node, world.at_ms, redlock, lag_ms)).collect();
    if run.strategy == StrategyId::Consensus {
        cards.push(consensus_card(world));
    }
    cards.push(db_card(world, &scenario.world));
    cards.push(storage_card(world, scenario.world.storage_checks_tokens));
    cards.push(slack_card(world));
    cards
}

impl Card {
    /// A card not yet placed: `stack` gives it its place and height.
    fn new(party: Party, title: String, tone: &'static str, lines: Vec<(String, &'static str)>) -> Card {
        Card { party: Some(party), title, tone, lines, y: 0.0, height: 0.0 }
    }
}

/// A Redis node: its lock key and TTL by its own clock, the token counter,
/// whether it is up, a standby replica or a promoted one.
fn redis_card(node: &RedisNodeView, at_ms: u64, redlock: bool, lag_ms: u64) -> Card {
    let key_name = if redlock { "key" } else { "job:daily-report" };
    let mut lines = Vec::new();
    let key = match (node.key, node.ttl_ms(at_ms)) {
        (Some(key), Some(ttl)) => format!(
            "{key_name} = {}{} · TTL {}",
            key.value,
            // The literal `locked` does not say whose it is; the diagram does.
            match key.value {
                LockValue::Locked => format!(" ({})", key.setter),
                LockValue::Owner(_) => String::new(),
            },
            // -1 is a key with no expiry at all (SETNX), as Redis's PTTL says.
            if ttl < 0 { "none".to_owned() } else { format::countdown(ttl) }
        ),
        _ => format!("{key_name} (no key)"),
    };
    lines.push((key, "key"));
    if !redlock {
        let counter = if node.counter == 0 { "(absent)".to_owned() } else { node.counter.to_string() };
        lines.push((format!(":token = {counter}"), "key"));
    }
    let state = if !node.up {
        "✕ down"
    } else if node.standby {
        "replica (standby)"
    } else if node.party == Party::RedisReplica {
        "promoted primary"
    } else {
        "● up"
    };
    let mut title = format!("{} · {state}", node.party);
    let offset = node.clock.offset_ms(at_ms);
    if offset != 0 {
        title.push_str(&format!(" · clock {}", format::offset(offset)));
    }
    if node.standby && !redlock {
        lines.push((format!("gets writes {} late", format::duration(lag_ms)), "note"));
    }
    Card::new(node.party, title, if node.up { "up" } else { "down" }, lines)
}

/// etcd under consensus: the key, its lease and TTL, the revision that fences.
fn consensus_card(world: &WorldAt) -> Card {
    let consensus = world.consensus;
    let mut lines = Vec::new();
    match consensus.key {
        Some(key) => {
            lines.push((format!("/locks/daily-report = {}", key.value), "key"));
            let left = i64::try_from(key.expires_at_ms).unwrap_or(0) - i64::try_from(world.at_ms).unwrap_or(0);
            lines.push((format!("lease {} · TTL {}", key.lease.0, format::countdown(left)), "key"));
        }
        None => lines.push(("/locks/daily-report (no key)".to_owned(), "key")),
    }
    if let Some(revision) = consensus.revision {
        lines.push((format!("revision {revision} = the fencing token"), "note"));
    }
    let title = format!("consensus · {}", if consensus.leader_up { "● leader up" } else { "✕ electing a leader" });
    Card::new(Party::Consensus, title, if consensus.leader_up { "up" } else { "down" }, lines)
}

/// The database: the jobs row's lock and its queue, the pools, the latest
/// report row, other services' last query, connections and slowness.
fn db_card(world: &WorldAt, settings: &World) -> Card {
    let (db, at_ms) = (&world.db, world.at_ms);
    let mut lines = Vec::new();
    let holder = db.row_lock_holders.iter().find(|held| held.mode.is_job_lock());
    lines.push((
        match holder {
            Some(held) => format!(
                "jobs row: {} FOR UPDATE, {}",
                client_name(held.client),
                format::duration(at_ms.saturating_sub(held.since_ms))
            ),
            None => "jobs row: no FOR UPDATE lock".to_owned(),
        },
        if holder.is_some() { "key" } else { "note" },
    ));
    if !db.row_lock_queue.is_empty() {
        let instances: Vec<String> = db
            .row_lock_queue
            .iter()
            .filter(|held| matches!(held.client, DbClient::Instance(_)))
            .map(|held| client_name(held.client))
            .collect();
        let others = db.row_lock_queue.len() - instances.len();
        let mut queue = format!("waiting: {}", instances.join(", "));
        if others > 0 {
            queue.push_str(&format!("{}{others} background", if instances.is_empty() { "" } else { " + " }));
        }
        lines.push((queue, "wrong"));
    }
    let pools: Vec<String> = world
        .instances
        .iter()
        .map(|view| format!("{} {}/{}", view.id, view.pool.busy, settings.db_pool_size))
        .collect();
    lines.push((format!("pools busy: {}", pools.join(" · ")), "pool"));
    if let Some((report, (period, run_id, token))) = db.report_rows.iter().next_back() {
        let token = token.map(|token| format!(", token {token}")).unwrap_or_default();
        let row = match report {
            ReportOf::Period(_) => format!("report p{}: {run_id}{token}", period.0),
            // The day's row says which period's refresh it holds.
            ReportOf::Day(_) => format!("{}: p{} by {run_id}{token}", report_name(*report), period.0),
        };
        lines.push((row, "key"));
    }
    if let Some((latency, outcome)) = db.last_background {
        let mark = if outcome.failed() { " ✕ failed" } else { "" };
        lines.push((
            format!("other services' query: {}{mark}", format::duration(latency)),
            if mark.is_empty() { "note" } else { "wrong" },
        ));
    }
    let mut title = format!("db · {} of {} connections", db.session_count(), settings.db_max_connections);
    if db.slow_percent != 100 {
        title.push_str(&format!(" · {}× slow", locklab_engine::format::per_mille(i64::from(db.slow_percent) * 10)));
    }
    Card::new(Party::Db, title, "up", lines)
}

/// Storage: whether it checks tokens, the highest it has seen, and whose
/// chunks the latest report is made of.
fn storage_card(world: &WorldAt, checks_tokens: bool) -> Card {
    let storage = &world.storage;
    let (store, tone) = if checks_tokens {
        ("checks tokens: refuses lower ones", "note")
    } else {
        ("like S3: last PUT wins, no token check", "wrong")
    };
    let mut lines = vec![(store.to_owned(), tone)];
    match storage.highest_token.iter().next_back() {
        Some((report, token)) => lines.push((format!("highest token seen: {token} ({})", report_name(*report)), "key")),
        None => lines.push(("highest token seen: none".to_owned(), "note")),
    }
    if let Some(((report, _), _)) = storage.chunks.iter().next_back() {
        let writers: Vec<String> = storage
            .chunks
            .iter()
            .filter(|((chunk_report, _), _)| chunk_report == report)
            .map(|(_, chunk)| chunk.instance.to_string())
            .collect();
        lines.push((format!("{} chunks by: {}", report_name(*report), writers.join(" ")), "key"));
    }
    let title = format!("storage · {} PUT ✓ · {} ✗", storage.puts_accepted, storage.puts_rejected);
    Card::new(Party::Storage, title, "up", lines)
}

/// Slack: the last few posts, and that it cannot check a token.
fn slack_card(world: &WorldAt) -> Card {
    let mut lines: Vec<(String, &'static str)> = world
        .recent_posts
        .iter()
        .rev()
        .map(|post| {
            (
                format!("✉ {}: “report p{} is ready” ({})", post.instance, post.period.0, format::t_label(post.at_ms)),
                "key",
            )
        })
        .collect();
    if lines.is_empty() {
        lines.push(("no posts yet".to_owned(), "note"));
    }
    lines.push(("cannot check a token".to_owned(), "note"));
    let count = world.slack_post_count;
    Card::new(Party::Slack, format!("slack · {count} post{}", if count == 1 { "" } else { "s" }), "up", lines)
}

/// Stacks cards from `top`, returns the bottom.
fn stack(cards: &mut [Card], layout: Layout, top: f64) -> f64 {
    let mut y = top;
    for card in cards {
        card.y = y;
        card.height = card_height(layout, card.lines.len());
        y += card.height + layout.gap;
    }
    y
}

fn draw_card(svg: &mut Svg, card: &Card, x: f64, layout: Layout, extra_class: &str) {
    let text_x = x + layout.pad;
    let first = card.y + layout.pad + layout.line * 0.8;
    let party = card.party.map(|party| party.to_string()).unwrap_or_default();
    svg.raw(format_args!(
        "<g class=\"card {} {extra_class}\" data-party=\"{}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"6\"/>",
        card.tone,
        Esc(&party),
        Num(x),
        Num(card.y),
        Num(layout.column),
        Num(card.height)
    ));
    svg.text(text_x, first, "card-title", None, &card.title);
    let mut y = first;
    for (text, class) in &card.lines {
        y += layout.line;
        svg.text(text_x, y, &format!("line {class}"), None, text);
    }
    svg.raw(format_args!("</g>"));
}

/// Where a party's card meets the network bus.
fn anchor(party: Party, left: &[Card], right: &[Card], layout: Layout) -> Option<(f64, f64)> {
    if let Some(card) = left.iter().find(|card| card.party == Some(party)) {
        return Some((layout.left_edge(), card.y + card.height / 2.0));
    }
    right.iter().find(|card| card.party == Some(party)).map(|card| (layout.right_x(), card.y + card.height / 2.0))
}

/// A point along the path from one card to another through the bus.
fn along(from: (f64, f64), to: (f64, f64), bus_x: f64, progress: f64) -> (f64, f64) {
    let legs = [(from, (bus_x, from.1)), ((bus_x, from.1), (bus_x, to.1)), ((bus_x, to.1), to)];
    let lengths: Vec<f64> = legs.iter().map(|(a, b)| (b.0 - a.0).abs() + (b.1 - a.1).abs()).collect();
    let total: f64 = lengths.iter().sum();
    let mut left = progress * total;
    for ((a, b), length) in legs.iter().zip(&lengths) {
        if left <= *length && *length > 0.0 {
            let share = left / length;
            return (a.0 + (b.0 - a.0) * share, a.1 + (b.1 - a.1) * share);
        }
        left -= length;
    }
    to
}

fn instance_class(party: Party) -> &'static str {
    match party.instance() {
        Some(id) => ["inst-0", "inst-1", "inst-2", "inst-3", "inst-4", "inst-5", "inst-6", "inst-7"]
            .get(id.index())
            .copied()
            .unwrap_or("inst-0"),
        None => "",
    }
}

fn draw_flight(svg: &mut Svg, flight: &Flight, at_ms: u64, left: &[Card], right: &[Card], layout: Layout) {
    let (Some(from), Some(to)) = (anchor(flight.from, left, right, layout), anchor(flight.to, left, right, layout))
    else {
        return;
    };
    let owner = if flight.from.instance().is_some() { flight.from } else { flight.to };
    let class = instance_class(owner);
    match flight.arrive_ms {
        None => {
            let (x, y) = along(from, to, layout.bus_x(), 0.25);
            svg.raw(format_args!(
                "<text class=\"flight dropped\" x=\"{}\" y=\"{}\" text-anchor=\"middle\"><title>{} → {}: dropped by the partition</title>✕</text>",
                Num(x),
                Num(y + 4.0),
                flight.from,
                flight.to
            ));
        }
        Some(_) => {
            let (x, y) = along(from, to, layout.bus_x(), flight.progress(at_ms));
            if flight.request {
                svg.raw(format_args!(
                    "<circle class=\"flight {class}\" cx=\"{}\" cy=\"{}\" r=\"4.5\"/>",
                    Num(x),
                    Num(y)
                ));
            } else {
                svg.raw(format_args!(
                    "<rect class=\"flight reply {class}\" x=\"{}\" y=\"{}\" width=\"7\" height=\"7\" transform=\"rotate(45 {} {})\"/>",
                    Num(x - 3.5),
                    Num(y - 3.5),
                    Num(x),
                    Num(y)
                ));
            }
        }
    }
}

/// The diagram as SVG markup.
fn diagram_svg(left: &[Card], right: &[Card], world: &WorldAt, cut: &[Party], layout: Layout) -> String {
    let height = left.iter().chain(right).map(|card| card.y + card.height).fold(0.0, f64::max);
    let bus_x = layout.bus_x();
    let mut svg = Svg::new();
    svg.raw(format_args!(
        "<svg class=\"diagram\" viewBox=\"0 0 {} {}\" font-size=\"{}\" aria-hidden=\"true\">",
        Num(layout.width),
        Num(height),
        Num(layout.font)
    ));
    svg.line("bus", bus_x, 0.0, bus_x, height);
    if let (false, Some(lb)) = (layout.single, left.first()) {
        for card in left.iter().skip(1) {
            svg.raw(format_args!(
                "<path class=\"lb-wire\" d=\"M 4 {} V {} H 0\"/>",
                Num(lb.y + lb.height),
                Num(card.y + card.height / 2.0)
            ));
        }
    }
    for (card, is_left) in left.iter().skip(1).map(|card| (card, true)).chain(right.iter().map(|card| (card, false))) {
        let y = card.y + card.height / 2.0;
        let class = if card.party.is_some_and(|party| cut.contains(&party)) { "wire cut" } else { "wire" };
        let (x1, x2) = if is_left { (layout.left_edge(), bus_x) } else { (bus_x, layout.right_x()) };
        svg.line(class, x1, y, x2, y);
    }
    for card in left {
        let class = card.party.map_or("", instance_class);
        draw_card(&mut svg, card, layout.left_x(), layout, class);
    }
    for card in right {
        draw_card(&mut svg, card, layout.right_x(), layout, "service");
    }
    svg.raw(format_args!("<g class=\"flights\">"));
    for flight in &world.flights {
        draw_flight(&mut svg, flight, world.at_ms, left, right, layout);
    }
    svg.raw(format_args!("</g></svg>"));
    svg.finish()
}

/// Network faults in force at the cursor, as sentences.
fn network_now(run: &RunRef, at_ms: u64) -> Vec<(String, Vec<Party>)> {
    run.timeline
        .faults
        .iter()
        .filter_map(|mark| {
            let duration_ms = mark.fault.network_duration_ms()?;
            (mark.at_ms <= at_ms && at_ms < mark.at_ms + duration_ms).then(|| {
                (format!("{} (until {})", mark.fault, format::t_label(mark.at_ms + duration_ms)), mark.targets.clone())
            })
        })
        .collect()
}

#[function_component(Topology)]
pub fn topology(props: &TopologyProps) -> Html {
    let run = &props.run;
    let world = run.timeline.world_at(&run.log, props.cursor_ms);
    let layout = Layout::new(props.narrow);
    let mut left = instance_cards(&world, run, props.cursor_ms);
    let mut right = service_cards(&world, run);
    let left_bottom = stack(&mut left, layout, 0.0);
    stack(&mut right, layout, if layout.single { left_bottom } else { 0.0 });
    let network = network_now(run, props.cursor_ms);
    let cut: Vec<Party> = network.iter().flat_map(|(_, parties)| parties.iter().copied()).collect();
    let diagram = Html::from_html_unchecked(AttrValue::from(diagram_svg(&left, &right, &world, &cut, layout)));
    let in_flight = world.flights.iter().filter(|flight| flight.arrive_ms.is_some()).count();
    let believers = world.believers();
    html! {
        <div class={classes!("topology", props.narrow.then_some("narrow"))} data-believers={believers.len().to_string()}>
            { alarm(&believers) }
            { diagram }
            <p id="topology-summary" class="visually-hidden">{ summary(&world, &believers) }</p>
            <p class="setup-notes" id="setup-notes">{ setup_notes(&run.scenario).join(" · ") }</p>
            <p class="network-note">
                { format!("{in_flight} message{} in flight", if in_flight == 1 { "" } else { "s" }) }
                <span class="legend">{" · ● request  ◆ reply  ✕ dropped"}</span>
            </p>
            if !network.is_empty() {
                <ul class="network-faults">
                    { for network.iter().map(|(text, _)| html! { <li><span aria-hidden="true">{"✂ "}</span>{ text.clone() }</li> }) }
                </ul>
            }
        </div>
    }
}

/// The cards left of the bus: the load balancer, then each instance at the cursor.
fn instance_cards(world: &WorldAt, run: &RunRef, cursor_ms: u64) -> Vec<Card> {
    let origin = &run.scenario.clock_origin;
    let pool_size = run.scenario.world.db_pool_size;
    let reused = locklab_engine::svg::reused_tokens(&run.timeline);
    let mut left: Vec<Card> = vec![Card {
        party: None,
        title: "load balancer".to_owned(),
        tone: "lb",
        lines: vec![("web traffic only: cron runs on every instance".to_owned(), "note")],
        y: 0.0,
        height: 0.0,
    }];
    for view in &world.instances {
        let (title, tone, lines) = instance_lines(view, cursor_ms, origin, pool_size, &reused);
        left.push(Card { party: Some(Party::Instance(view.id)), title, tone, lines, y: 0.0, height: 0.0 });
    }
    left
}

/// The alarm over the diagram when two or more instances believe they hold
/// the lock at once; nothing otherwise.
fn alarm(believers: &[InstanceId]) -> Html {
    if believers.len() < 2 {
        return Html::default();
    }
    html! {
        <p class="alarm" role="status">
            <span aria-hidden="true">{"⚠ "}</span>
            { format!("{} instances believe they hold the lock: {}",
                believers.len(),
                believers.iter().map(ToString::to_string).collect::<Vec<_>>().join(" and ")) }
        </p>
    }
}

/// The diagram in sentences, for a screen reader: each instance's state,
/// belief and standing with the lock service, and an overlap if there is one.
fn summary(world: &WorldAt, believers: &[InstanceId]) -> String {
    let mut parts: Vec<String> = world
        .instances
        .iter()
        .map(|view| {
            let belief = match view.belief {
                Some((_, Some(token))) => format!("believes it holds the lock with token {token}"),
                Some((_, None)) => "believes it holds the lock".to_owned(),
                None => "does not believe it holds the lock".to_owned(),
            };
            let truth = if view.granted.is_some() {
                "the lock service counts it as holder"
            } else {
                "the lock service does not count it"
            };
            format!("{} is {}, {belief}; {truth}", view.id, view.process.kind().label())
        })
        .collect();
    if believers.len() >= 2 {
        parts.push(format!("{} instances believe they hold the lock at once", believers.len()));
    }
    parts.join(". ")
}
