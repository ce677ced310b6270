//! Keeping a lease alive: the renewal schedule shared by `fencing`, `redlock`
//! and `consensus`.
//!
//! The holder renews every `renew_every_ms`. A renewal that is refused ("not
//! yours any more") loses the lock at once. One that gets no answer (timeout,
//! no leader, connection refused) is retried every second, but only until the
//! lease the holder last secured would run out by its own clock: then it stops
//! the job. That is what careful clients do (etcd's session keep-alive,
//! Redisson's watchdog), and it is the contract's "a renewal that fails makes
//! the holder stop the job".
//!
//! A process paused by GC runs none of this until it resumes; then its overdue
//! timers fire in the order they came due, and writes due before the renewal
//! go out first. That is the gap Kleppmann's fencing argument is about.

use crate::event::AbortReason;
use crate::vocab::{Context, Timer, TimerId};

/// How soon a renewal that got no answer is tried again.
const RETRY_RENEW_MS: u64 = 1_000;

/// One held lease's renewal state.
#[derive(Clone, Debug)]
pub(crate) struct LeaseKeeper {
    renew_every_ms: u64,
    renew_timer: Option<TimerId>,
    deadline_timer: Option<TimerId>,
    valid_until_local_ms: i64,
}

impl LeaseKeeper {
    /// Starts keeping a lease that is valid until `valid_until_local_ms` on the holder's clock.
    pub(crate) fn start<C: Context + ?Sized>(
        cx: &mut C,
        renew_every_ms: u64,
        valid_until_local_ms: i64,
    ) -> LeaseKeeper {
        let mut keeper =
            LeaseKeeper { renew_every_ms, renew_timer: None, deadline_timer: None, valid_until_local_ms: i64::MIN };
        keeper.secured(cx, valid_until_local_ms);
        keeper
    }

    /// A renewal succeeded: the lease now lasts until `valid_until_local_ms`.
    pub(crate) fn secured<C: Context + ?Sized>(&mut self, cx: &mut C, valid_until_local_ms: i64) {
        // A renewal every 0 ms would renew in a loop that never lets time pass.
        debug_assert!(self.renew_every_ms > 0, "a lease renewed every 0 ms");
        self.valid_until_local_ms = valid_until_local_ms;
        self.stop(cx);
        let remaining = u64::try_from(valid_until_local_ms - cx.local_now()).unwrap_or(0);
        self.deadline_timer = Some(cx.set_timer(remaining, Timer::Deadline));
        self.renew_timer = Some(cx.set_timer(self.renew_every_ms, Timer::Renew));
    }

    /// A renewal got no answer: try again soon, while the lease may still hold.
    pub(crate) fn unanswered<C: Context + ?Sized>(&mut self, cx: &mut C) {
        if let Some(timer) = self.renew_timer.take() {
            cx.cancel_timer(timer);
        }
        if cx.local_now() < self.valid_until_local_ms {
            self.renew_timer = Some(cx.set_timer(RETRY_RENEW_MS, Timer::Renew));
        }
    }

    /// A renewal was refused: the lock is somebody else's now.
    pub(crate) fn lost<C: Context + ?Sized>(&mut self, cx: &mut C) {
        self.stop(cx);
        cx.lost(AbortReason::RenewalFailed);
    }

    /// The lease ran out by the holder's own clock before a renewal secured
    /// more: a deadline that passed (during a pause, say) fires at once.
    pub(crate) fn expired<C: Context + ?Sized>(&mut self, cx: &mut C) {
        self.stop(cx);
        cx.lost(AbortReason::LeaseExpired);
    }

    /// Cancels the keeper's timers.
    pub(crate) fn stop<C: Context + ?Sized>(&mut self, cx: &mut C) {
        if let Some(timer) = self.renew_timer.take() {
            cx.cancel_timer(timer);
        }
        if let Some(timer) = self.deadline_timer.take() {
            cx.cancel_timer(timer);
        }
    }
}
