//! Time on the page: a long run computed a slice per task, and playback on
//! the pages' shared clock ([`crate::ui::frames::use_playback_clock`]).

use crate::lab::run::{RunJob, SLICE_EVENTS, VerdictJob};
use crate::lab::state::{Action, LabState};
use crate::ui::frames::use_playback_clock;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use yew::prelude::*;

/// Advances the pending run (see [`crate::lab::state::PendingRun`]) one slice per
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

fn next_slice(id: u32, job: Rc<RefCell<RunJob>>, dispatcher: UseReducerDispatcher<LabState>, stopped: Rc<Cell<bool>>) {
    gloo_timers::callback::Timeout::new(0, move || {
        if stopped.get() {
            return;
        }
        let (done, permille) = {
            let mut job = job.borrow_mut();
            (job.step(SLICE_EVENTS), job.progress_permille())
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

/// Advances the verdict job (the strategies the lab does not show, see
/// [`crate::lab::run::VerdictJob`]) one slice per task once the shown run is
/// done, and tells the reducer when every verdict is known.
#[hook]
pub fn use_verdict_slices(state: &UseReducerHandle<LabState>) {
    let dispatcher = state.dispatcher();
    // Only once the run on screen is done: it comes first.
    let job = state.verdict_job.as_ref().filter(|_| state.pending.is_none()).map(|(id, job)| (*id, Rc::clone(&job.0)));
    use_effect_with(job.as_ref().map(|(id, _)| *id), move |_| {
        let stopped = Rc::new(Cell::new(false));
        if let Some((id, job)) = job {
            next_verdict_slice(id, job, dispatcher, stopped.clone());
        }
        move || stopped.set(true)
    });
}

fn next_verdict_slice(
    id: u32,
    job: Rc<RefCell<VerdictJob>>,
    dispatcher: UseReducerDispatcher<LabState>,
    stopped: Rc<Cell<bool>>,
) {
    gloo_timers::callback::Timeout::new(0, move || {
        if stopped.get() {
            return;
        }
        if job.borrow_mut().step(SLICE_EVENTS) {
            dispatcher.dispatch(Action::VerdictsDone(id));
        } else {
            next_verdict_slice(id, job, dispatcher, stopped);
        }
    })
    .forget();
}

/// Plays the run: while `playing`, each animation frame moves the cursor by
/// the real time elapsed times the speed. A seek or a speed change while
/// playing re-anchors the loop, so it never jumps back.
#[hook]
pub fn use_playback(state: &UseReducerHandle<LabState>) {
    let dispatcher = state.dispatcher();
    let advance = use_memo((), move |()| Callback::from(move |at_ms| dispatcher.dispatch(Action::Advance(at_ms))));
    use_playback_clock(state.playing, state.cursor_ms, state.speed_ratio, (*advance).clone());
}
