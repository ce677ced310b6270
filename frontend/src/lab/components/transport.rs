//! Playback controls: reset, step back, play or pause, step forward, speed,
//! seed, and where the cursor is in simulated and wall-clock time.

use crate::lab::state::{Action, DEFAULT_SPEED_RATIO, SPEEDS};
use crate::ui::callbacks::sending;
use crate::ui::format;
use crate::ui::message::{Message, Tone};
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct TransportProps {
    pub cursor_ms: u64,
    pub duration_ms: u64,
    pub playing: bool,
    pub speed_ratio: f64,
    pub seed: u64,
    pub clock_origin: String,
    pub dispatch: Callback<Action>,
}

fn speed_text(speed: f64) -> String {
    // Through the engine's decimal: the page carries no float formatting.
    let speed = if speed < 1.0 { speed } else { speed.round() };
    format!("{}×", locklab_engine::format::decimal(speed))
}

#[function_component(Transport)]
pub fn transport(props: &TransportProps) -> Html {
    let dispatch = &props.dispatch;
    let on_reset = sending(dispatch, Action::Reset);
    let on_back = sending(dispatch, Action::StepBack);
    let on_play = sending(dispatch, Action::TogglePlay);
    let on_forward = sending(dispatch, Action::StepForward);
    let on_speed = dispatch.reform(|event: Event| {
        let value =
            event.target_dyn_into::<web_sys::HtmlSelectElement>().map(|select| select.value()).unwrap_or_default();
        let index: usize = value.parse().unwrap_or(0);
        Action::SetSpeed(SPEEDS.get(index).copied().unwrap_or(DEFAULT_SPEED_RATIO))
    });
    let on_seed = dispatch.reform(|event: Event| {
        let value = event
            .target_dyn_into::<web_sys::HtmlInputElement>()
            .map(|input| input.value())
            .unwrap_or_default();
        match value.trim().parse::<u64>() {
            Ok(seed) => Action::SetSeed(seed),
            Err(_) => Action::Notify(Message {
                tone: Tone::Error,
                text: format!(
                    "The seed `{value}` was refused: a seed is a whole number from 0 to 18446744073709551615. The current run is unchanged."
                ),
            }),
        }
    });
    let speeds = SPEEDS.iter().enumerate().map(|(index, speed)| {
        html! {
            <option value={index.to_string()} selected={(*speed - props.speed_ratio).abs() < 1e-9}>
                { speed_text(*speed) }
            </option>
        }
    });
    let (play_icon, play_label) = if props.playing { ("❚❚", "Pause") } else { ("▶", "Play") };
    let wall = format::wall_clock(&props.clock_origin, i64::try_from(props.cursor_ms).unwrap_or(i64::MAX / 2));
    html! {
        <div class="transport" role="toolbar" aria-label="Playback">
            <button id="reset" onclick={on_reset} title="Back to the start, paused">
                <span aria-hidden="true">{"↺ "}</span>{"Reset"}
            </button>
            <button id="step-back" onclick={on_back} title="Previous event (←)" aria-label="Step back to the previous event">
                <span aria-hidden="true">{"◀|"}</span>
            </button>
            <button id="play" class="primary" onclick={on_play} aria-pressed={props.playing.to_string()}
                title="Play or pause (space)">
                <span aria-hidden="true">{ format!("{play_icon} ") }</span>{ play_label }
            </button>
            <button id="step-forward" onclick={on_forward} title="Next event (→)" aria-label="Step to the next event">
                <span aria-hidden="true">{"|▶"}</span>
            </button>
            <label class="field">
                <span>{"Speed"}</span>
                <select id="speed" onchange={on_speed}>{ for speeds }</select>
            </label>
            <label class="field">
                <span>{"Seed"}</span>
                <input id="seed" type="number" min="0" step="1" inputmode="numeric" class="seed"
                    value={props.seed.to_string()} onchange={on_seed} title="Same seed, same run" />
            </label>
            <output class="clock" id="clock" aria-live="off">
                <span class="clock-t">{ format::t_label(props.cursor_ms) }</span>
                <span class="clock-of">{ format!(" of {}", format::elapsed(props.duration_ms)) }</span>
                <span class="clock-wall">{ format!(" · wall {wall}") }</span>
            </output>
            <span class="hint keys">{"space play · ←/→ step · shift+←/→ scrub"}</span>
        </div>
    }
}
