//! The timeline: the run's lanes with the time cursor on top. Click or drag
//! anywhere on it to move the cursor; with focus, the lab's arrow keys step
//! and scrub. It is a slider to assistive technology.

use crate::components::lanes::{Lanes, geometry};
use crate::format;
use crate::lab::RunRef;
use crate::state::Action;
use crate::svg::Num;
use wasm_bindgen::JsCast;
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct TimelineProps {
    pub run: RunRef,
    pub cursor_ms: u64,
    pub dispatch: Callback<Action>,
    #[prop_or(false)]
    pub compact: bool,
    #[prop_or(false)]
    pub narrow: bool,
    /// A name for the slider, in compare mode.
    #[prop_or_default]
    pub label: Option<AttrValue>,
}

/// The fraction of the element's width at a pointer event.
fn pointer_fraction(event: &PointerEvent) -> Option<f64> {
    let element = event.current_target()?.dyn_into::<web_sys::Element>().ok()?;
    let rect = element.get_bounding_client_rect();
    if rect.width() <= 0.0 {
        return None;
    }
    Some(((f64::from(event.client_x()) - rect.left()) / rect.width()).clamp(0.0, 1.0))
}

#[function_component(Timeline)]
pub fn timeline(props: &TimelineProps) -> Html {
    let run = &props.run;
    let geometry = geometry(run, props.compact, props.narrow);
    let seek = {
        let dispatch = props.dispatch.clone();
        move |event: &PointerEvent| {
            if let Some(fraction) = pointer_fraction(event) {
                dispatch.emit(Action::Seek(geometry.time_at(fraction)));
            }
        }
    };
    let on_down = {
        let seek = seek.clone();
        Callback::from(move |event: PointerEvent| {
            if let Some(element) = event.current_target().and_then(|target| target.dyn_into::<web_sys::Element>().ok())
            {
                let _ = element.set_pointer_capture(event.pointer_id());
                if let Some(element) = element.dyn_ref::<web_sys::HtmlElement>() {
                    let _ = element.focus();
                }
            }
            event.prevent_default();
            seek(&event);
        })
    };
    let on_move = Callback::from(move |event: PointerEvent| {
        if event.buttons() & 1 == 1 {
            seek(&event);
        }
    });
    let x = geometry.x(props.cursor_ms);
    let label_x = if x > geometry.width - 90.0 { x - 4.0 } else { x + 4.0 };
    let anchor = if x > geometry.width - 90.0 { "end" } else { "start" };
    let value_text = format!("{} of {}", format::t_label(props.cursor_ms), format::elapsed(run.duration_ms()));
    let name = props.label.clone().unwrap_or_else(|| AttrValue::from("Time cursor"));
    html! {
        <div class={classes!("timeline", props.compact.then_some("compact"))}
            role="slider" tabindex="0" aria-label={name}
            aria-valuemin="0" aria-valuemax={run.duration_ms().to_string()}
            aria-valuenow={props.cursor_ms.to_string()} aria-valuetext={value_text}
            data-digest={format!("{:016x}", run.digest)} data-events={run.log.len().to_string()}
            onpointerdown={on_down} onpointermove={on_move}>
            <Lanes run={run.clone()} compact={props.compact} narrow={props.narrow} />
            <svg class="cursor-layer" viewBox={format!("0 0 {} {}", Num(geometry.width), Num(geometry.height))}
                preserveAspectRatio="none" aria-hidden="true">
                <line class="cursor" x1={Num(x).to_string()} x2={Num(x).to_string()} y1="0" y2={Num(geometry.height).to_string()} />
                if !props.compact {
                    <text class="cursor-label" x={Num(label_x).to_string()} y="11" text-anchor={anchor}>
                        { format::t_label(props.cursor_ms) }
                    </text>
                }
            </svg>
        </div>
    }
}
