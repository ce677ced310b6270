//! "Break something now": pick a party (or whoever holds the lock) and inject
//! a fault at the cursor, while it plays or paused. Injecting adds the fault
//! to the scenario at the cursor's time; the run is recomputed from there on.

use crate::format;
use crate::state::{Action, InjectKind, InjectParams, lock_service};
use locklab_engine::StrategyId;
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct InjectProps {
    pub params: InjectParams,
    pub strategy: StrategyId,
    pub cursor_ms: u64,
    pub duration_ms: u64,
    pub instances: u8,
    pub replica: bool,
    pub dispatch: Callback<Action>,
}

/// A `<select>` of durations in ms that sets one field of the form.
fn duration_select(
    id: &'static str,
    label: &'static str,
    value_ms: u64,
    choices_ms: &[u64],
    params: &InjectParams,
    dispatch: &Callback<Action>,
    set: fn(&mut InjectParams, u64),
) -> Html {
    let params = params.clone();
    let onchange = dispatch.reform(move |event: Event| {
        let value = event
            .target_dyn_into::<web_sys::HtmlSelectElement>()
            .and_then(|select| select.value().parse().ok())
            .unwrap_or(0);
        let mut next = params.clone();
        set(&mut next, value);
        Action::SetInject(next)
    });
    html! {
        <label class="field small">
            <span>{ label }</span>
            <select id={id} {onchange}>
                { for choices_ms.iter().map(|choice| html! {
                    <option value={choice.to_string()} selected={*choice == value_ms}>{ format::duration(*choice) }</option>
                }) }
            </select>
        </label>
    }
}

#[function_component(InjectPanel)]
pub fn inject_panel(props: &InjectProps) -> Html {
    let params = &props.params;
    let dispatch = &props.dispatch;
    let target = params.target.clone();
    let inside = props.cursor_ms < props.duration_ms;
    let service = lock_service(props.strategy);

    let mut targets: Vec<(String, String)> = vec![("holder".to_owned(), "the lock holder".to_owned())];
    for index in 0..props.instances {
        let letter = char::from(b'a' + index).to_string();
        targets.push((letter.clone(), letter));
    }
    match props.strategy {
        StrategyId::Redlock => {
            for node in 1..=5 {
                targets.push((format!("redis-{node}"), format!("redis-{node}")));
            }
        }
        StrategyId::Naive | StrategyId::Fencing => {
            targets.push(("redis-1".to_owned(), "redis-1".to_owned()));
            if props.replica {
                targets.push(("redis-1-replica".to_owned(), "replica".to_owned()));
            }
        }
        StrategyId::Consensus => targets.push(("consensus".to_owned(), "consensus".to_owned())),
        StrategyId::DbLock | StrategyId::UniqueInsert => {}
    }
    targets.push(("db".to_owned(), "db".to_owned()));
    let chosen_is_known = targets.iter().any(|(name, _)| *name == target);
    let target = if chosen_is_known { target } else { "holder".to_owned() };

    let chips = targets.iter().map(|(name, text)| {
        let checked = *name == target;
        let mut next = params.clone();
        next.target = name.clone();
        let onchange = dispatch.reform(move |_: Event| Action::SetInject(next.clone()));
        let id = format!("target-{name}");
        html! {
            <label for={id.clone()} class={classes!("chip", "radio-chip", checked.then_some("chosen"))}>
                <input type="radio" name="fault-target" id={id} value={name.clone()} {checked} {onchange} />
                <span>{ text.clone() }</span>
            </label>
        }
    });

    let button = |kind: InjectKind, id: &'static str, text: String| {
        let onclick = dispatch.reform(move |_: MouseEvent| Action::Inject(kind));
        html! {
            <button id={id} class="inject" disabled={!inside} {onclick}>
                <span aria-hidden="true">{"⚡ "}</span>{ text }
            </button>
        }
    };
    let who = if target == "holder" { "the holder".to_owned() } else { target.clone() };
    let is_instance = target == "holder" || (target.len() == 1 && target.chars().all(|c| c.is_ascii_lowercase()));
    let is_redis = target.starts_with("redis");
    let actions = if is_instance {
        html! {
            <>
                <div class="action-row">
                    { button(InjectKind::GcPause, "inject-gc", format!("GC pause {who} for {}", format::duration(params.gc_pause_ms))) }
                    { duration_select("gc-length", "length", params.gc_pause_ms,
                        &[2_000, 5_000, 10_000, 20_000, 30_000, 45_000, 60_000, 90_000, 120_000, 300_000],
                        params, dispatch, |form, value| form.gc_pause_ms = value) }
                </div>
                <div class="action-row">
                    { button(InjectKind::OomKill, "inject-oom", format!("OOM-kill {who}")) }
                    { button(InjectKind::OomKillRestart, "inject-oom-restart", format!("OOM-kill, restart after {}", format::duration(params.restart_after_ms))) }
                    { duration_select("restart-after", "restart after", params.restart_after_ms,
                        &[1_000, 5_000, 20_000, 60_000, 120_000, 600_000],
                        params, dispatch, |form, value| form.restart_after_ms = value) }
                </div>
                <div class="action-row">
                    { button(InjectKind::HostLoss, "inject-host", format!("Lose {who}'s host")) }
                    { button(InjectKind::HostLossRestart, "inject-host-restart", format!("Lose host, back after {}", format::duration(params.restart_after_ms))) }
                </div>
                <div class="action-row">
                    { button(InjectKind::ClockJump, "inject-clock", format!("Jump {who}'s clock {}", format::offset(params.clock_jump_ms))) }
                    <label class="field small">
                        <span>{"by"}</span>
                        <select id="clock-by" onchange={{
                            let params = params.clone();
                            dispatch.reform(move |event: Event| {
                                let value = event.target_dyn_into::<web_sys::HtmlSelectElement>()
                                    .and_then(|select| select.value().parse().ok()).unwrap_or(0);
                                Action::SetInject(InjectParams { clock_jump_ms: value, ..params.clone() })
                            })
                        }}>
                            { for [-300_000_i64, -60_000, -30_000, -5_000, 5_000, 30_000, 60_000, 300_000].iter().map(|by| html! {
                                <option value={by.to_string()} selected={*by == params.clock_jump_ms}>{ format::offset(*by) }</option>
                            }) }
                        </select>
                    </label>
                </div>
                <div class="action-row">
                    { button(InjectKind::PartitionFromLock, "inject-partition", format!("Cut {who} off from {service}")) }
                    if service != "db" {
                        { button(InjectKind::PartitionFromDb, "inject-partition-db", format!("Cut {who} off from db")) }
                    }
                    { duration_select("partition-length", "for", params.partition_ms,
                        &[5_000, 15_000, 30_000, 60_000, 120_000, 300_000],
                        params, dispatch, |form, value| form.partition_ms = value) }
                </div>
                <div class="action-row">
                    { button(InjectKind::NetworkDelay, "inject-delay", format!("Delay {who} ↔ {service} by {}", format::duration(params.delay_extra_ms))) }
                    { duration_select("delay-extra", "by", params.delay_extra_ms,
                        &[200, 1_000, 5_000, 15_000, 40_000],
                        params, dispatch, |form, value| form.delay_extra_ms = value) }
                    { duration_select("delay-length", "for", params.delay_ms,
                        &[10_000, 30_000, 60_000, 120_000],
                        params, dispatch, |form, value| form.delay_ms = value) }
                </div>
            </>
        }
    } else if is_redis {
        let failover_note = if target == "redis-1" && props.replica {
            "the replica is promoted with whatever it had received"
        } else {
            "no replica to promote: it comes back empty"
        };
        html! {
            <>
                <div class="action-row">
                    { button(InjectKind::RedisRestart, "inject-redis-restart", format!("Restart {target} without persistence")) }
                    { duration_select("redis-down", "down for", params.redis_down_ms,
                        &[0, 1_000, 5_000, 30_000, 120_000],
                        params, dispatch, |form, value| form.redis_down_ms = value) }
                </div>
                <div class="action-row">
                    { button(InjectKind::RedisFailover, "inject-failover", format!("Fail {target} over")) }
                    <span class="hint">{ failover_note }</span>
                </div>
                <div class="action-row">
                    { button(InjectKind::ClockJump, "inject-clock", format!("Jump {target}'s clock {}", format::offset(params.clock_jump_ms))) }
                </div>
            </>
        }
    } else if target == "consensus" {
        html! {
            <>
                <div class="action-row">{ button(InjectKind::LeaderLoss, "inject-leader", "Kill the consensus leader".to_owned()) }</div>
                <div class="action-row">{ button(InjectKind::ClockJump, "inject-clock", format!("Jump the store's clock {}", format::offset(params.clock_jump_ms))) }</div>
            </>
        }
    } else {
        html! {
            <div class="action-row">
                { button(InjectKind::DbSlow, "inject-db-slow", format!("Make queries {}× slower for {}", params.db_slow_factor, format::duration(params.db_slow_ms))) }
                { duration_select("db-slow-length", "for", params.db_slow_ms,
                    &[10_000, 30_000, 60_000, 300_000],
                    params, dispatch, |form, value| form.db_slow_ms = value) }
            </div>
        }
    };
    html! {
        <div class="inject-form">
            <p class="inject-when">
                { format!("Faults strike at the cursor, {}. ", format::t_label(props.cursor_ms)) }
                if inside {
                    <span class="hint">{"The run is recomputed from there; what came before stays the same."}</span>
                } else {
                    <span class="hint">{"Move the cursor inside the run to inject."}</span>
                }
            </p>
            <fieldset class="targets">
                <legend>{"Strike"}</legend>
                <div class="chips">{ for chips }</div>
            </fieldset>
            <div class="actions">{ actions }</div>
        </div>
    }
}
