//! The fault script: the scenario's faults as an editable list (add, remove,
//! change time and fields), the built-in scenarios as starting points, and
//! loading and saving the whole scenario as `locklab/1` JSON.
//!
//! Edits go through the scenario's own validation: a bad value is refused
//! with the field named (`faults[2].duration_ms: …`) and the run is kept.

use crate::format;
use crate::state::{Action, Message, Tone};
use locklab_engine::scenario::Target;
use locklab_engine::{Fault, Scenario, builtin};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct ScriptProps {
    pub scenario: Rc<Scenario>,
    pub cursor_ms: u64,
    pub dispatch: Callback<Action>,
    pub on_file: Callback<web_sys::File>,
    pub on_save: Callback<()>,
}

/// How a fault field is edited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FieldType {
    Ms,
    OptionalMs,
    SignedMs,
    Ppm,
    Factor,
    Party,
    Bool,
}

/// The fault kinds, as the format names them.
pub const KINDS: [&str; 11] = [
    "gc_pause",
    "oom_kill",
    "host_loss",
    "clock_jump",
    "clock_drift",
    "network_delay",
    "partition",
    "redis_restart",
    "redis_failover",
    "consensus_leader_loss",
    "db_slow",
];

/// The fields a kind has besides `kind` and `at_ms`.
fn fields_of(kind: &str) -> &'static [(&'static str, FieldType)] {
    match kind {
        "gc_pause" => &[("target", FieldType::Party), ("duration_ms", FieldType::Ms)],
        "oom_kill" | "host_loss" => &[("target", FieldType::Party), ("restart_after_ms", FieldType::OptionalMs)],
        "clock_jump" => &[("target", FieldType::Party), ("by_ms", FieldType::SignedMs)],
        "clock_drift" => &[("target", FieldType::Party), ("ppm", FieldType::Ppm)],
        "network_delay" => &[
            ("from", FieldType::Party),
            ("to", FieldType::Party),
            ("extra_ms", FieldType::Ms),
            ("duration_ms", FieldType::Ms),
        ],
        "partition" => &[
            ("between[0]", FieldType::Party),
            ("between[1]", FieldType::Party),
            ("duration_ms", FieldType::Ms),
            ("one_way", FieldType::Bool),
        ],
        "redis_restart" => &[("target", FieldType::Party), ("down_ms", FieldType::Ms)],
        "redis_failover" => &[("target", FieldType::Party)],
        "db_slow" => &[("factor", FieldType::Factor), ("duration_ms", FieldType::Ms)],
        _ => &[],
    }
}

/// A fault of `kind` at `at_ms` with sensible fields, as the "kind" select makes it.
pub fn template(kind: &str, at_ms: u64) -> Option<Fault> {
    let holder = Target::Holder;
    let redis_1 = Target::Party(locklab_engine::ids::Party::Redis(locklab_engine::ids::RedisNodeId(0)));
    Some(match kind {
        "gc_pause" => Fault::GcPause { at_ms, target: holder, duration_ms: 60_000 },
        "oom_kill" => Fault::OomKill { at_ms, target: holder, restart_after_ms: Some(20_000) },
        "host_loss" => Fault::HostLoss { at_ms, target: holder, restart_after_ms: None },
        "clock_jump" => Fault::ClockJump { at_ms, target: holder, by_ms: 30_000 },
        "clock_drift" => Fault::ClockDrift { at_ms, target: holder, ppm: 10_000 },
        "network_delay" => {
            Fault::NetworkDelay { at_ms, from: holder, to: Target::AllRedis, extra_ms: 5_000, duration_ms: 60_000 }
        }
        "partition" => {
            Fault::Partition { at_ms, between: [holder, Target::AllRedis], duration_ms: 60_000, one_way: false }
        }
        "redis_restart" => Fault::RedisRestart { at_ms, target: redis_1, down_ms: 5_000 },
        "redis_failover" => Fault::RedisFailover { at_ms, target: redis_1 },
        "consensus_leader_loss" => Fault::ConsensusLeaderLoss { at_ms },
        "db_slow" => Fault::DbSlow { at_ms, factor: 20.0, duration_ms: 60_000 },
        _ => return None,
    })
}

/// The text a field's input shows.
fn field_text(fault: &Fault, name: &str) -> String {
    use Fault as F;
    match (fault, name) {
        (
            F::GcPause { target, .. }
            | F::OomKill { target, .. }
            | F::HostLoss { target, .. }
            | F::ClockJump { target, .. }
            | F::ClockDrift { target, .. }
            | F::RedisRestart { target, .. }
            | F::RedisFailover { target, .. },
            "target",
        ) => target.to_string(),
        (
            F::GcPause { duration_ms, .. }
            | F::NetworkDelay { duration_ms, .. }
            | F::Partition { duration_ms, .. }
            | F::DbSlow { duration_ms, .. },
            "duration_ms",
        ) => duration_ms.to_string(),
        (F::OomKill { restart_after_ms, .. } | F::HostLoss { restart_after_ms, .. }, "restart_after_ms") => {
            restart_after_ms.map(|after| after.to_string()).unwrap_or_default()
        }
        (F::ClockJump { by_ms, .. }, "by_ms") => by_ms.to_string(),
        (F::ClockDrift { ppm, .. }, "ppm") => ppm.to_string(),
        (F::NetworkDelay { from, .. }, "from") => from.to_string(),
        (F::NetworkDelay { to, .. }, "to") => to.to_string(),
        (F::NetworkDelay { extra_ms, .. }, "extra_ms") => extra_ms.to_string(),
        (F::Partition { between, .. }, "between[0]") => between[0].to_string(),
        (F::Partition { between, .. }, "between[1]") => between[1].to_string(),
        (F::Partition { one_way, .. }, "one_way") => one_way.to_string(),
        (F::RedisRestart { down_ms, .. }, "down_ms") => down_ms.to_string(),
        (F::DbSlow { factor, .. }, "factor") => factor.to_string(),
        _ => String::new(),
    }
}

fn parse_ms(text: &str) -> Result<u64, String> {
    text.parse().map_err(|_| format!("`{text}` is not a whole number of milliseconds"))
}

fn parse_party(text: &str) -> Result<Target, String> {
    crate::state::parse_target(text).ok_or_else(|| format!("unknown party `{text}`"))
}

/// The fault's time, to change it.
fn at_ms_mut(fault: &mut Fault) -> &mut u64 {
    use Fault as F;
    match fault {
        F::OomKill { at_ms, .. }
        | F::HostLoss { at_ms, .. }
        | F::GcPause { at_ms, .. }
        | F::ClockJump { at_ms, .. }
        | F::ClockDrift { at_ms, .. }
        | F::NetworkDelay { at_ms, .. }
        | F::Partition { at_ms, .. }
        | F::RedisRestart { at_ms, .. }
        | F::RedisFailover { at_ms, .. }
        | F::ConsensusLeaderLoss { at_ms }
        | F::DbSlow { at_ms, .. } => at_ms,
    }
}

/// A fault with one field changed, or what is wrong with the text. Ranges
/// are checked afterwards, by the scenario's own validation.
pub fn with_field(fault: &Fault, name: &str, text: &str) -> Result<Fault, String> {
    use Fault as F;
    let mut fault = fault.clone();
    let text = text.trim();
    if name == "at_ms" {
        *at_ms_mut(&mut fault) = parse_ms(text)?;
        return Ok(fault);
    }
    match (&mut fault, name) {
        (
            F::GcPause { target, .. }
            | F::OomKill { target, .. }
            | F::HostLoss { target, .. }
            | F::ClockJump { target, .. }
            | F::ClockDrift { target, .. }
            | F::RedisRestart { target, .. }
            | F::RedisFailover { target, .. },
            "target",
        ) => *target = parse_party(text)?,
        (
            F::GcPause { duration_ms, .. }
            | F::NetworkDelay { duration_ms, .. }
            | F::Partition { duration_ms, .. }
            | F::DbSlow { duration_ms, .. },
            "duration_ms",
        ) => *duration_ms = parse_ms(text)?,
        (F::OomKill { restart_after_ms, .. } | F::HostLoss { restart_after_ms, .. }, "restart_after_ms") => {
            *restart_after_ms = if text.is_empty() { None } else { Some(parse_ms(text)?) };
        }
        (F::ClockJump { by_ms, .. }, "by_ms") => {
            *by_ms = text.parse().map_err(|_| format!("`{text}` is not a whole number of milliseconds"))?;
        }
        (F::ClockDrift { ppm, .. }, "ppm") => {
            *ppm = text.parse().map_err(|_| format!("`{text}` is not a whole number"))?;
        }
        (F::NetworkDelay { from, .. }, "from") => *from = parse_party(text)?,
        (F::NetworkDelay { to, .. }, "to") => *to = parse_party(text)?,
        (F::NetworkDelay { extra_ms, .. }, "extra_ms") => *extra_ms = parse_ms(text)?,
        (F::Partition { between, .. }, "between[0]") => between[0] = parse_party(text)?,
        (F::Partition { between, .. }, "between[1]") => between[1] = parse_party(text)?,
        (F::Partition { one_way, .. }, "one_way") => *one_way = text == "true",
        (F::RedisRestart { down_ms, .. }, "down_ms") => *down_ms = parse_ms(text)?,
        (F::DbSlow { factor, .. }, "factor") => {
            let value: f64 = text.parse().map_err(|_| format!("`{text}` is not a number"))?;
            if !value.is_finite() {
                return Err(format!("`{text}` is not a finite number"));
            }
            *factor = value;
        }
        _ => return Err(format!("a {} fault has no field `{name}`", fault.kind_name())),
    }
    Ok(fault)
}

/// The parties a target select offers.
fn party_choices(instances: u8) -> Vec<String> {
    let mut names = vec!["holder".to_owned()];
    names.extend((0..instances).map(|index| char::from(b'a' + index).to_string()));
    names.push("redis".to_owned());
    names.extend((1..=5).map(|node| format!("redis-{node}")));
    for name in ["redis-1-replica", "db", "storage", "slack", "consensus"] {
        names.push(name.to_owned());
    }
    names
}

fn input_value(event: &Event) -> String {
    let Some(target) = event.target() else {
        return String::new();
    };
    if let Some(input) = target.dyn_ref::<web_sys::HtmlInputElement>() {
        if input.type_() == "checkbox" {
            return input.checked().to_string();
        }
        return input.value();
    }
    target.dyn_ref::<web_sys::HtmlSelectElement>().map(web_sys::HtmlSelectElement::value).unwrap_or_default()
}

#[function_component(FaultScript)]
pub fn fault_script(props: &ScriptProps) -> Html {
    let scenario = &props.scenario;
    let dispatch = &props.dispatch;
    let faults = &scenario.faults;
    let refuse = |index: usize, field: &str, problem: String| {
        Action::Notify(Message {
            tone: Tone::Error,
            text: format!("faults[{index}].{field}: {problem}. The current run is unchanged."),
        })
    };
    let rows = faults.iter().enumerate().map(|(index, fault)| {
        let kind = fault.kind_name();
        let on_at = {
            let faults = faults.clone();
            dispatch.reform(move |event: Event| {
                let text = input_value(&event);
                match with_field(&faults[index], "at_ms", &text) {
                    Ok(fault) => {
                        let mut next = faults.clone();
                        next[index] = fault;
                        Action::SetFaults(next)
                    }
                    Err(problem) => refuse(index, "at_ms", problem),
                }
            })
        };
        let on_kind = {
            let faults = faults.clone();
            dispatch.reform(move |event: Event| {
                let kind = input_value(&event);
                let mut next = faults.clone();
                match template(&kind, next[index].at_ms()) {
                    Some(fault) => {
                        next[index] = fault;
                        Action::SetFaults(next)
                    }
                    None => refuse(index, "kind", format!("unknown kind `{kind}`")),
                }
            })
        };
        let on_remove = {
            let faults = faults.clone();
            dispatch.reform(move |_: MouseEvent| {
                let mut next = faults.clone();
                next.remove(index);
                Action::SetFaults(next)
            })
        };
        let fields = fields_of(kind).iter().map(|(name, field_type)| {
            let name = *name;
            let field_type = *field_type;
            let text = field_text(fault, name);
            let id = format!("fault-{index}-{}", name.replace(['[', ']'], "-"));
            let onchange = {
                let faults = faults.clone();
                dispatch.reform(move |event: Event| {
                    let text = input_value(&event);
                    match with_field(&faults[index], name, &text) {
                        Ok(fault) => {
                            let mut next = faults.clone();
                            next[index] = fault;
                            Action::SetFaults(next)
                        }
                        Err(problem) => refuse(index, name, problem),
                    }
                })
            };
            let input = match field_type {
                FieldType::Party => html! {
                    <select id={id.clone()} {onchange}>
                        { for party_choices(scenario.world.instances).into_iter().map(|party| html! {
                            <option value={party.clone()} selected={party == text}>{ party.clone() }</option>
                        }) }
                    </select>
                },
                FieldType::Bool => html! {
                    <input id={id.clone()} type="checkbox" checked={text == "true"} {onchange} />
                },
                _ => html! {
                    <input id={id.clone()} type="text" inputmode="numeric" class="num" value={text.clone()} {onchange}
                        placeholder={if field_type == FieldType::OptionalMs { "none" } else { "" }} />
                },
            };
            html! {
                <label class="field small" for={id}>
                    <span>{ name }</span>
                    { input }
                </label>
            }
        });
        html! {
            <li class="fault-row" data-kind={kind}>
                <span class="fault-index">{ format!("{index}") }</span>
                <label class="field small" for={format!("fault-{index}-at")}>
                    <span>{"at_ms"}</span>
                    <input id={format!("fault-{index}-at")} type="text" inputmode="numeric" class="num"
                        value={fault.at_ms().to_string()} onchange={on_at} />
                </label>
                <span class="fault-t" aria-hidden="true">{ format::t_label(fault.at_ms()) }</span>
                <label class="field small" for={format!("fault-{index}-kind")}>
                    <span>{"kind"}</span>
                    <select id={format!("fault-{index}-kind")} onchange={on_kind}>
                        { for KINDS.iter().map(|option| html! {
                            <option value={*option} selected={*option == kind}>{ *option }</option>
                        }) }
                    </select>
                </label>
                { for fields }
                <button class="ghost remove" onclick={on_remove} aria-label={format!("Remove fault {index}: {fault}")}>
                    <span aria-hidden="true">{"✕ "}</span>{"Remove"}
                </button>
                <span class="fault-summary">{ fault.to_string() }</span>
            </li>
        }
    });
    let on_add = {
        let faults = faults.clone();
        let at_ms = props.cursor_ms.min(scenario.duration_ms().saturating_sub(1));
        dispatch.reform(move |_: MouseEvent| {
            let mut next = faults.clone();
            next.extend(template("gc_pause", at_ms));
            Action::SetFaults(next)
        })
    };
    let on_clear = dispatch.reform(|_: MouseEvent| Action::SetFaults(Vec::new()));
    let on_builtin = dispatch.reform(|event: Event| {
        let name = input_value(&event);
        match builtin::find(&name) {
            Some(found) => Action::LoadScenario { text: found.text.to_owned(), source: format!("the built-in {name}") },
            None => {
                Action::Notify(Message { tone: Tone::Error, text: format!("There is no built-in named `{name}`.") })
            }
        }
    });
    let on_file = {
        let on_file = props.on_file.clone();
        Callback::from(move |event: Event| {
            let Some(input) = event.target_dyn_into::<web_sys::HtmlInputElement>() else {
                return;
            };
            if let Some(file) = input.files().and_then(|files| files.get(0)) {
                on_file.emit(file);
            }
            // Choosing the same file again must load it again.
            input.set_value("");
        })
    };
    let on_save = props.on_save.reform(|_: MouseEvent| ());
    html! {
        <div class="script">
            <div class="script-tools">
                <label class="field">
                    <span>{"Start from a built-in"}</span>
                    <select id="builtin" onchange={on_builtin}>
                        <option value="" selected=true disabled=true>{"choose…"}</option>
                        { for builtin::ALL.iter().map(|found| {
                            let title = Scenario::from_json(found.text).map(|scenario| scenario.name).unwrap_or_default();
                            html! { <option value={found.name}>{ format!("{} — {title}", found.name) }</option> }
                        }) }
                    </select>
                </label>
                <span class="file-button">
                    <input type="file" id="load-file" accept=".json,application/json" class="visually-hidden" onchange={on_file} />
                    <label for="load-file" class="button">{"Load scenario JSON…"}</label>
                </span>
                <button id="save-file" onclick={on_save}>{"Save scenario JSON"}</button>
                <button id="add-fault" onclick={on_add}>{ format!("Add a fault at {}", format::t_label(props.cursor_ms)) }</button>
                <button id="clear-faults" class="ghost" onclick={on_clear} disabled={faults.is_empty()}>{"Remove every fault"}</button>
            </div>
            if faults.is_empty() {
                <p class="hint" id="no-faults">{"No faults: the night is calm. Inject one above, or add one here."}</p>
            } else {
                <ol class="fault-list" id="fault-list">{ for rows }</ol>
            }
        </div>
    }
}
