//! Time on the page: a long run computed a slice per task, the playback
//! clock on animation frames (shared with the quiz), and the first render's
//! moment.

use crate::state::{Action, LabState};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use yew::prelude::*;

/// Advances the pending run (see [`crate::state::PendingRun`]) one slice per
/// task, so the page draws and answers between slices, and tells the reducer
/// how far it is and when it is done. A replaced or stopped job's slices stop
/// at the next one.
#[hook]
pub fn use_run_slices(state: &UseReducerHandle<LabState>) {
    let dispatcher = state.dispatcher();
    let job = state.pending.as_ref().map(|pending| (pending.id, Rc::clone(&pending.job.0)));
    use_effect_with(job.as_ref().map(|(id, _)| *id), move |_| {
        let stopped = Rc::new(Cell::new(false));
        if let Some((id, job)) = job {
            next_slice(id, job, dispatcher, stopped.clone());
        }
        move || stopped.set(true)
    });
}

fn next_slice(
    id: u32,
    job: Rc<RefCell<crate::lab::RunJob>>,
    dispatcher: UseReducerDispatcher<LabState>,
    stopped: Rc<Cell<bool>>,
) {
    gloo_timers::callback::Timeout::new(0, move || {
        if stopped.get() {
            return;
        }
        let (done, permille) = {
            let mut job = job.borrow_mut();
            (job.step(crate::lab::SLICE_EVENTS), job.progress_permille())
        };
        if done {
            dispatcher.dispatch(Action::RunDone(id));
        } else {
            dispatcher.dispatch(Action::RunProgress { id, permille });
            next_slice(id, job, dispatcher, stopped);
        }
    })
    .forget();
}

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

/// Plays the run: while `playing`, each animation frame moves the cursor by
/// the real time elapsed times the speed. A seek or a speed change while
/// playing re-anchors the loop, so it never jumps back.
#[hook]
pub fn use_playback(state: &UseReducerHandle<LabState>) {
    let dispatcher = state.dispatcher();
    let advance = use_memo((), move |()| Callback::from(move |at_ms| dispatcher.dispatch(Action::Advance(at_ms))));
    use_playback_clock(state.playing, state.cursor_ms, state.speed_ratio, (*advance).clone());
}

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
        let _ = root.set_attribute("data-first-render-ms", &crate::svg::Num(now_ms).to_string());
    }
}
