//! Time on the page, as every page keeps it: the playback clock on
//! animation frames (the lab's, the quiz's side by side), and the first
//! render's moment.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use yew::prelude::*;

/// Where playback stands between frames.
#[derive(Clone, Copy, Debug)]
struct Anchor {
    real_ms: f64,
    cursor_ms: u64,
    speed_ratio: f64,
    /// The cursor last asked for, and the state's cursor seen at the last frame.
    sent_ms: u64,
    seen_ms: u64,
}

/// What the loop needs from the latest render.
#[derive(Clone, Copy, Debug, Default)]
struct Latest {
    cursor_ms: u64,
    speed_ratio: f64,
}

type FrameClosure = Closure<dyn FnMut(f64)>;

/// The playback clock any page shares (the lab, the quiz's side by side):
/// while `playing`, each animation frame asks `advance` for the cursor the
/// real time elapsed times the speed has reached.
#[hook]
pub fn use_playback_clock(playing: bool, cursor_ms: u64, speed_ratio: f64, advance: Callback<u64>) {
    let latest = use_mut_ref(Latest::default);
    *latest.borrow_mut() = Latest { cursor_ms, speed_ratio };
    use_effect_with(playing, move |playing| {
        let frame: Rc<RefCell<Option<FrameClosure>>> = Rc::new(RefCell::new(None));
        let handle = Rc::new(Cell::new(0));
        let window = web_sys::window();
        if let (true, Some(window)) = (*playing, window.clone()) {
            let anchor: Rc<Cell<Option<Anchor>>> = Rc::new(Cell::new(None));
            let next_frame = frame.clone();
            let next_handle = handle.clone();
            let loop_window = window.clone();
            *frame.borrow_mut() = Some(Closure::new(move |now_ms: f64| {
                let latest = *latest.borrow();
                let fresh = |cursor_ms| Anchor {
                    real_ms: now_ms,
                    cursor_ms,
                    speed_ratio: latest.speed_ratio,
                    sent_ms: cursor_ms,
                    seen_ms: cursor_ms,
                };
                let mut current = match anchor.get() {
                    None => fresh(latest.cursor_ms),
                    // Somebody else moved the cursor (a seek), or the speed changed.
                    Some(old)
                        if (latest.cursor_ms != old.seen_ms && latest.cursor_ms != old.sent_ms)
                            || latest.speed_ratio != old.speed_ratio =>
                    {
                        fresh(latest.cursor_ms)
                    }
                    Some(old) => old,
                };
                current.seen_ms = latest.cursor_ms;
                let elapsed_ms = (now_ms - current.real_ms).max(0.0) * current.speed_ratio;
                // Far inside u64: runs last at most a day of simulated time.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let target = current.cursor_ms + elapsed_ms as u64;
                if target != current.sent_ms {
                    current.sent_ms = target;
                    advance.emit(target);
                }
                anchor.set(Some(current));
                if let Some(callback) = next_frame.borrow().as_ref()
                    && let Ok(id) = loop_window.request_animation_frame(callback.as_ref().unchecked_ref())
                {
                    next_handle.set(id);
                }
            }));
            if let Some(callback) = frame.borrow().as_ref()
                && let Ok(id) = window.request_animation_frame(callback.as_ref().unchecked_ref())
            {
                handle.set(id);
            }
        }
        move || {
            if let Some(window) = window {
                let _ = window.cancel_animation_frame(handle.get());
            }
            frame.borrow_mut().take();
        }
    });
}

/// Marks the first render on the page's root element (`data-first-render-ms`,
/// milliseconds since navigation), for the benchmark of the first interactive render.
pub fn mark_first_render() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let now_ms = window.performance().map_or(0.0, |performance| performance.now());
    if let Some(root) = window.document().and_then(|document| document.document_element()) {
        let _ = root.set_attribute("data-first-render-ms", &crate::ui::svg::Num(now_ms).to_string());
    }
}
