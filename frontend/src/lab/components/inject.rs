//! "Break something now": pick a party (or whoever holds the lock) and inject
//! a fault at the cursor, while it plays or paused. Injecting adds the fault
//! to the scenario at the cursor's time; the run is recomputed from there on.
//!
//! The form is written as markup with one click and one change listener on
//! its container (the wasm has a size budget, and a listener per button costs
//! more than the lab can afford); every control is a real button, radio or
//! select, so it is reachable and labelled. A control that was replaced by a
//! re-render gets its focus back.

use crate::lab::state::{Action, InjectKind, InjectParams};
use crate::ui::format;
use crate::ui::svg::{Esc, Svg};
use locklab_engine::StrategyId;
use locklab_engine::ids::Party;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct InjectProps {
    pub params: InjectParams,
    pub strategy: StrategyId,
    pub cursor_ms: u64,
    pub duration_ms: u64,
    /// When a strike at "the holder" would land (`Timeline::holder_strike_ms`):
    /// the cursor, the next holder's first moment, or never.
    pub holder_strike_ms: Option<u64>,
    pub instances: u8,
    pub replica: bool,
    /// The parties of the strategy's lock in this world.
    pub lock_parties: Vec<Party>,
    pub dispatch: Callback<Action>,
}

/// The inject buttons: their name in the markup, and what they inject.
const KINDS: [(&str, InjectKind); 13] = [
    ("gc", InjectKind::GcPause),
    ("oom", InjectKind::OomKill),
    ("oom-restart", InjectKind::OomKillRestart),
    ("host", InjectKind::HostLoss),
    ("host-restart", InjectKind::HostLossRestart),
    ("clock", InjectKind::ClockJump),
    ("partition", InjectKind::PartitionFromLock),
    ("partition-db", InjectKind::PartitionFromDb),
    ("delay", InjectKind::NetworkDelay),
    ("redis-restart", InjectKind::RedisRestart),
    ("failover", InjectKind::RedisFailover),
    ("leader", InjectKind::LeaderLoss),
    ("db-slow", InjectKind::DbSlow),
];

/// The form's parameters: their name in the markup, how they read, how they are set.
type Getter = fn(&InjectParams) -> i64;
type Setter = fn(&mut InjectParams, i64);
const PARAMS: [(&str, Getter, Setter); 8] = [
    (
        "gc_pause_ms",
        |form| i64::try_from(form.gc_pause_ms).unwrap_or(0),
        |form, value| form.gc_pause_ms = value.unsigned_abs(),
    ),
    (
        "restart_after_ms",
        |form| i64::try_from(form.restart_after_ms).unwrap_or(0),
        |form, value| form.restart_after_ms = value.unsigned_abs(),
    ),
    ("clock_jump_ms", |form| form.clock_jump_ms, |form, value| form.clock_jump_ms = value),
    (
        "partition_ms",
        |form| i64::try_from(form.partition_ms).unwrap_or(0),
        |form, value| form.partition_ms = value.unsigned_abs(),
    ),
    (
        "delay_extra_ms",
        |form| i64::try_from(form.delay_extra_ms).unwrap_or(0),
        |form, value| form.delay_extra_ms = value.unsigned_abs(),
    ),
    ("delay_ms", |form| i64::try_from(form.delay_ms).unwrap_or(0), |form, value| form.delay_ms = value.unsigned_abs()),
    (
        "redis_down_ms",
        |form| i64::try_from(form.redis_down_ms).unwrap_or(0),
        |form, value| form.redis_down_ms = value.unsigned_abs(),
    ),
    (
        "db_slow_ms",
        |form| i64::try_from(form.db_slow_ms).unwrap_or(0),
        |form, value| form.db_slow_ms = value.unsigned_abs(),
    ),
];

/// The parties a fault can be aimed at, with their labels: the holder, the
/// instances, the parties of the strategy's lock (the engine's
/// `StrategySettings::lock_parties`) and the database.
fn targets(instances: u8, lock_parties: &[Party]) -> Vec<(String, String)> {
    let mut targets = vec![("holder".to_owned(), "the lock holder".to_owned())];
    for index in 0..instances {
        let letter = char::from(b'a' + index).to_string();
        targets.push((letter.clone(), letter));
    }
    for party in lock_parties {
        let label = if *party == Party::RedisReplica { "replica".to_owned() } else { party.to_string() };
        targets.push((party.to_string(), label));
    }
    targets.push(("db".to_owned(), "db".to_owned()));
    targets
}

/// Whether a strike at "the holder" lands at the cursor, waits for the next
/// holder, or finds nobody before the run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HolderAt {
    Now,
    Next,
    Never,
}

/// Where a strike goes: the chosen target, whether the cursor is inside the
/// run, and (for "the holder") whether one holds.
#[derive(Clone, Debug, PartialEq)]
struct Aim {
    target: String,
    inside: bool,
    holder: HolderAt,
}

struct Form<'a> {
    svg: Svg,
    params: &'a InjectParams,
    disabled: &'static str,
}

impl Form<'_> {
    fn row_start(&mut self) {
        self.svg.raw(format_args!("<div class=\"action-row\">"));
    }
    fn row_end(&mut self) {
        self.svg.raw(format_args!("</div>"));
    }
    fn button(&mut self, name: &str, text: &str) {
        self.svg.raw(format_args!(
            "<button type=\"button\" id=\"inject-{name}\" class=\"inject\" data-inject=\"{name}\"{}><span aria-hidden=\"true\">⚡ </span>{}</button>",
            self.disabled,
            Esc(text)
        ));
    }
    fn select(&mut self, param: &str, label: &str, choices_ms: &[i64], show: fn(i64) -> String) {
        let current = PARAMS.iter().find(|(name, _, _)| *name == param).map_or(0, |(_, get, _)| get(self.params));
        self.svg.raw(format_args!(
            "<label class=\"field small\"><span>{label}</span><select id=\"param-{param}\" data-param=\"{param}\">"
        ));
        for choice in choices_ms {
            let selected = if *choice == current { " selected" } else { "" };
            self.svg.raw(format_args!("<option value=\"{choice}\"{selected}>{}</option>", show(*choice)));
        }
        self.svg.raw(format_args!("</select></label>"));
    }
    fn note(&mut self, text: &str) {
        self.svg.raw(format_args!("<span class=\"hint\">{}</span>", Esc(text)));
    }
}

fn duration_text(ms: i64) -> String {
    format::duration(ms.unsigned_abs())
}

/// The form's markup for the chosen target.
fn form_markup(
    params: &InjectParams,
    strategy: StrategyId,
    instances: u8,
    replica: bool,
    lock_parties: &[Party],
    aim: &Aim,
) -> String {
    let (target, holder) = (aim.target.as_str(), aim.holder);
    let nobody = target == "holder" && holder == HolderAt::Never;
    let mut form = Form { svg: Svg::new(), params, disabled: if aim.inside && !nobody { "" } else { " disabled" } };
    form.target_chips(target, instances, lock_parties);
    form.svg.raw(format_args!("<div class=\"actions\">"));
    let is_instance = target == "holder" || (target.len() == 1 && target.bytes().all(|byte| byte.is_ascii_lowercase()));
    if is_instance {
        form.instance_actions(&who(target, holder), strategy.lock_service());
    } else if target.starts_with("redis") {
        form.redis_actions(target, replica);
    } else if target == "consensus" {
        form.consensus_actions();
    } else {
        form.db_actions();
    }
    form.svg.raw(format_args!("</div>"));
    form.svg.finish()
}

/// The chosen target in the buttons' words: an instance by name, or the
/// holder, which is the next one when nobody holds at the cursor.
fn who(target: &str, holder: HolderAt) -> String {
    match (target, holder) {
        ("holder", HolderAt::Next) => "the next holder".to_owned(),
        ("holder", HolderAt::Now | HolderAt::Never) => "the holder".to_owned(),
        (_, HolderAt::Now | HolderAt::Next | HolderAt::Never) => target.to_owned(),
    }
}

impl Form<'_> {
    /// One radio chip per party a fault can be aimed at, the chosen one checked.
    fn target_chips(&mut self, target: &str, instances: u8, lock_parties: &[Party]) {
        self.svg.raw(format_args!(
            "<fieldset class=\"targets\"><legend>Strike</legend><div class=\"chips\" role=\"radiogroup\" aria-label=\"Strike\">"
        ));
        for (name, text) in targets(instances, lock_parties) {
            let chosen = name == target;
            self.svg.raw(format_args!(
                "<label for=\"target-{name}\" class=\"chip radio-chip{}\"><input type=\"radio\" name=\"fault-target\" id=\"target-{name}\" value=\"{name}\" data-target=\"{name}\"{}><span>{}</span></label>",
                if chosen { " chosen" } else { "" },
                if chosen { " checked" } else { "" },
                Esc(&text)
            ));
        }
        self.svg.raw(format_args!("</div></fieldset>"));
    }

    /// What can strike an instance (or the holder): its process, its host,
    /// its clock and its network to the lock service or the database.
    fn instance_actions(&mut self, who: &str, service: &str) {
        let params = self.params;
        self.row_start();
        self.button("gc", &format!("GC pause {who} for {}", format::duration(params.gc_pause_ms)));
        self.select(
            "gc_pause_ms",
            "length",
            &[2_000, 5_000, 10_000, 20_000, 30_000, 45_000, 60_000, 90_000, 120_000, 300_000],
            duration_text,
        );
        self.row_end();
        self.row_start();
        self.button("oom", &format!("OOM-kill {who}"));
        self.button("oom-restart", &format!("OOM-kill, restart after {}", format::duration(params.restart_after_ms)));
        self.select(
            "restart_after_ms",
            "restart after",
            &[1_000, 5_000, 20_000, 60_000, 120_000, 600_000],
            duration_text,
        );
        self.row_end();
        self.row_start();
        self.button("host", &format!("Lose {who}'s host"));
        self.button("host-restart", &format!("Lose host, back after {}", format::duration(params.restart_after_ms)));
        self.row_end();
        self.row_start();
        self.button("clock", &format!("Jump {who}'s clock {}", format::offset(params.clock_jump_ms)));
        self.select(
            "clock_jump_ms",
            "by",
            &[-300_000, -60_000, -30_000, -5_000, 5_000, 30_000, 60_000, 300_000],
            format::offset,
        );
        self.row_end();
        self.network_actions(who, service);
    }

    /// An instance's network faults: cut off from the lock service (and
    /// from the database, when that is not the lock service), or delayed.
    fn network_actions(&mut self, who: &str, service: &str) {
        let params = self.params;
        self.row_start();
        self.button("partition", &format!("Cut {who} off from {service}"));
        if service != "db" {
            self.button("partition-db", &format!("Cut {who} off from db"));
        }
        self.select("partition_ms", "for", &[5_000, 15_000, 30_000, 60_000, 120_000, 300_000], duration_text);
        self.row_end();
        self.row_start();
        self.button("delay", &format!("Delay {who} ↔ {service} by {}", format::duration(params.delay_extra_ms)));
        self.select("delay_extra_ms", "by", &[200, 1_000, 5_000, 15_000, 40_000], duration_text);
        self.select("delay_ms", "for", &[10_000, 30_000, 60_000, 120_000], duration_text);
        self.row_end();
    }

    /// What can strike a Redis node: a restart, a failover (which says what
    /// the replica would bring) and its clock.
    fn redis_actions(&mut self, target: &str, replica: bool) {
        self.row_start();
        self.button("redis-restart", &format!("Restart {target} without persistence"));
        self.select("redis_down_ms", "down for", &[0, 1_000, 5_000, 30_000, 120_000], duration_text);
        self.row_end();
        self.row_start();
        self.button("failover", &format!("Fail {target} over"));
        self.note(if target == "redis-1" && replica {
            "the replica is promoted with whatever it had received"
        } else {
            "no replica to promote: it comes back empty"
        });
        self.row_end();
        self.row_start();
        self.button("clock", &format!("Jump {target}'s clock {}", format::offset(self.params.clock_jump_ms)));
        self.row_end();
    }

    /// What can strike the consensus store: its leader and its clock.
    fn consensus_actions(&mut self) {
        self.row_start();
        self.button("leader", "Kill the consensus leader");
        self.row_end();
        self.row_start();
        self.button("clock", &format!("Jump the store's clock {}", format::offset(self.params.clock_jump_ms)));
        self.row_end();
    }

    /// What can strike the database: slower queries for a while.
    fn db_actions(&mut self) {
        let params = self.params;
        self.row_start();
        self.button(
            "db-slow",
            &format!(
                "Make queries {}× slower for {}",
                locklab_engine::format::decimal(params.db_slow_factor),
                format::duration(params.db_slow_ms)
            ),
        );
        self.select("db_slow_ms", "for", &[10_000, 30_000, 60_000, 300_000], duration_text);
        self.row_end();
    }
}

/// The element an event came from, or its nearest ancestor with `attribute`.
fn closest(event: &Event, attribute: &str) -> Option<web_sys::Element> {
    let element = event.target()?.dyn_into::<web_sys::Element>().ok()?;
    element.closest(&format!("[{attribute}]")).ok().flatten()
}

#[function_component(InjectPanel)]
pub fn inject_panel(props: &InjectProps) -> Html {
    let refocus = super::use_refocus();
    let known = targets(props.instances, &props.lock_parties);
    let target = if known.iter().any(|(name, _)| *name == props.params.target) {
        props.params.target.clone()
    } else {
        "holder".to_owned()
    };
    let inside = props.cursor_ms < props.duration_ms;
    let holder = holder_at(props.holder_strike_ms, props.cursor_ms);
    // The form changes with its inputs, not with the cursor: written once per change.
    let markup = use_memo(
        (
            props.params.clone(),
            props.strategy,
            props.instances,
            props.replica,
            props.lock_parties.clone(),
            Aim { target: target.clone(), inside, holder },
        ),
        |(params, strategy, instances, replica, lock_parties, aim)| {
            AttrValue::from(form_markup(params, *strategy, *instances, *replica, lock_parties, aim))
        },
    );
    let onclick = inject_on_click(&props.dispatch);
    let onchange = set_on_change(&props.dispatch, &props.params, &refocus);
    let hint = hint(inside, target == "holder", props.holder_strike_ms, props.cursor_ms);
    html! {
        <div class="inject-form">
            <p class="inject-when">
                { format!("Faults strike at the cursor, {}. ", format::t_label(props.cursor_ms)) }
                <span class="hint">{ hint }</span>
            </p>
            <div class="inject-controls" {onclick} {onchange}>
                { Html::from_html_unchecked((*markup).clone()) }
            </div>
        </div>
    }
}

/// Whether a strike at "the holder" lands at the cursor, at the next
/// holder's first moment, or nowhere.
fn holder_at(holder_strike_ms: Option<u64>, cursor_ms: u64) -> HolderAt {
    match holder_strike_ms {
        Some(at_ms) if at_ms == cursor_ms => HolderAt::Now,
        Some(_) => HolderAt::Next,
        None => HolderAt::Never,
    }
}

/// A click on one of the form's buttons injects its fault.
fn inject_on_click(dispatch: &Callback<Action>) -> Callback<MouseEvent> {
    let dispatch = dispatch.clone();
    Callback::from(move |event: MouseEvent| {
        let name = closest(&event, "data-inject").and_then(|button| button.get_attribute("data-inject"));
        if let Some((_, kind)) = KINDS.iter().find(|(known, _)| Some(*known) == name.as_deref()) {
            dispatch.emit(Action::Inject(*kind));
        }
    })
}

/// A change of target or of a parameter sets the form's parameters, and
/// names the control to refocus, since the re-render replaces it.
fn set_on_change(
    dispatch: &Callback<Action>,
    params: &InjectParams,
    refocus: &Rc<RefCell<Option<String>>>,
) -> Callback<Event> {
    let dispatch = dispatch.clone();
    let params = params.clone();
    let refocus = refocus.clone();
    Callback::from(move |event: Event| {
        let Some(element) = event.target().and_then(|target| target.dyn_into::<web_sys::Element>().ok()) else {
            return;
        };
        *refocus.borrow_mut() = Some(element.id());
        let mut next = params.clone();
        if let Some(target) = element.get_attribute("data-target") {
            next.target = target;
        } else if let Some(param) = element.get_attribute("data-param") {
            let value = element
                .dyn_ref::<web_sys::HtmlSelectElement>()
                .and_then(|select| select.value().parse::<i64>().ok())
                .unwrap_or(0);
            if let Some((_, _, set)) = PARAMS.iter().find(|(name, _, _)| *name == param) {
                set(&mut next, value);
            }
        }
        dispatch.emit(Action::SetInject(next));
    })
}

/// What a strike now would do, or why none can be made.
fn hint(inside: bool, at_holder: bool, holder_strike_ms: Option<u64>, cursor_ms: u64) -> String {
    match (inside, at_holder, holder_strike_ms) {
        (false, _, _) => "Move the cursor inside the run to inject.".to_owned(),
        (true, true, None) => {
            "Nobody holds the lock from here to the end of the run: aim at an instance to inject.".to_owned()
        }
        (true, true, Some(at_ms)) if at_ms != cursor_ms => format!(
            "Nobody holds the lock now: a strike at the holder waits for the next one, at {}.",
            format::t_label(at_ms)
        ),
        (true, _, _) => "The run is recomputed from there; what came before stays the same.".to_owned(),
    }
}
