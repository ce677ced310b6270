//! The timeline: the run's lanes with the time cursor on top. Click or drag
//! anywhere on it to move the cursor (`on_seek`, the time the pointer is
//! at); with focus, the page's arrow keys step and scrub. It is a slider to
//! assistive technology.

use crate::ui::format;
use crate::ui::lanes::Lanes;
use crate::ui::run::RunRef;
use crate::ui::svg::Num;
use locklab_engine::svg::geometry;
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct TimelineProps {
    pub run: RunRef,
    pub cursor_ms: u64,
    /// Asked to move the cursor to this time.
    pub on_seek: Callback<u64>,
    #[prop_or(false)]
    pub compact: bool,
    #[prop_or(false)]
    pub narrow: bool,
    /// A name for the slider, in compare mode.
    #[prop_or_default]
    pub label: Option<AttrValue>,
}

/// The fraction of `element`'s width at a pointer event. (Yew delegates
/// events, so the event's current target is not the timeline itself.)
fn pointer_fraction(element: &NodeRef, event: &PointerEvent) -> Option<f64> {
    let element = element.cast::<web_sys::Element>()?;
    let rect = element.get_bounding_client_rect();
    if rect.width() <= 0.0 {
        return None;
    }
    Some(((f64::from(event.client_x()) - rect.left()) / rect.width()).clamp(0.0, 1.0))
}

#[function_component(Timeline)]
pub fn timeline(props: &TimelineProps) -> Html {
    let run = &props.run;
    let geometry = geometry(&run.timeline, props.compact, props.narrow);
    let node = use_node_ref();
    let seek = {
        let on_seek = props.on_seek.clone();
        let node = node.clone();
        move |event: &PointerEvent| {
            if let Some(fraction) = pointer_fraction(&node, event) {
                on_seek.emit(geometry.time_at(fraction));
            }
        }
    };
    let on_down = {
        let seek = seek.clone();
        let node = node.clone();
        Callback::from(move |event: PointerEvent| {
            if let Some(element) = node.cast::<web_sys::Element>() {
                let _ = element.set_pointer_capture(event.pointer_id());
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
        <>
        <div ref={node} class={classes!("timeline", props.compact.then_some("compact"))}
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
        if !props.compact {
            <ul class="timeline-legend" aria-label="How to read the timeline">
                <li><span class="key key-belief" aria-hidden="true"></span>{"solid: the instance believes it holds the lock (tok = its token)"}</li>
                <li><span class="key key-grant" aria-hidden="true"></span>{"outline: the lock service counts it as holder"}</li>
                <li><span class="key key-overlap" aria-hidden="true"></span>{"shaded ⚠: two believe at once"}</li>
                <li><span class="key key-paused" aria-hidden="true"></span>{"hatched: GC pause"}</li>
                <li>{"✓ write accepted · ✗ rejected (tokens) · ✉ Slack post · ⚡ fault"}</li>
                <li class="pointer-hint">{"Click or drag to move the cursor; ←/→ step, shift+←/→ scrub, Home/End go to the ends."}</li>
                <li class="touch-hint">{"Tap or slide along the timeline to move the cursor."}</li>
            </ul>
        }
        </>
    }
}
