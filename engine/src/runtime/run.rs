//! A run's life: the cron tick that starts it, taking the lock (or waiting
//! and retrying), and its end, whichever way it comes.

use super::{Drives, Host, InstanceTimer, Runtime};
use crate::event::{AbortReason, EventKind, Owner, RunPhase};
use crate::ids::{Period, RunId, Token};
use crate::vocab::TimerId;

/// Where a run is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Trying,
    Waiting,
    RetryCheck,
    Checking,
    Working,
    Finishing,
    Ended,
}

/// A write of the job that waits for the strategy's check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HeldWrite {
    Chunk(u8),
    Post,
    Row,
}

/// One run: an instance's attempt at one period's job.
#[derive(Clone, Debug)]
pub struct RunState {
    pub(crate) period: Period,
    pub(crate) owner: Owner,
    /// The process generation the run belongs to.
    pub(crate) generation: u32,
    pub(crate) stage: Stage,
    pub(crate) token: Option<Token>,
    /// The instance believes this run holds the lock.
    pub(crate) believes: bool,
    pub(crate) started: bool,
    pub(crate) ended: bool,
    /// Handed the job a dead run had (`world.redeliver_after_crash`): it
    /// writes with no token, and never took the lock itself.
    pub(crate) redelivered: bool,
    /// Chunk uploads sent and not yet answered, and chunks held for a check.
    pub(crate) chunks_in_flight: u8,
    /// Writes held until the strategy's check before them is answered
    /// (`WriteGate::WhenCleared`), in the order the job made them; the
    /// first one's check is out.
    pub(crate) held_writes: std::collections::VecDeque<HeldWrite>,
    /// The retry it waits for: a run waits for one retry at a time.
    pub(crate) retry_timer: Option<TimerId>,
    /// The job's progress: it started when its instance's clock read
    /// `start_local_ms`, has been moved `paused_ms` later by pauses, and its
    /// next step is chunk `next_step` (or, at `report_chunks`, the job's end),
    /// due by `work_timer`.
    pub(crate) job: JobProgress,
}

impl RunState {
    /// The instance believes this run holds the lock now.
    pub fn believes(&self) -> bool {
        self.believes
    }
    /// The run's job has started its work.
    pub fn started(&self) -> bool {
        self.started
    }
    pub fn ended(&self) -> bool {
        self.ended
    }
    /// The process generation the run belongs to.
    pub fn generation(&self) -> u32 {
        self.generation
    }
    pub fn stage(&self) -> Stage {
        self.stage
    }
}

/// Where a run's job is in its work (see [`RunState::job`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct JobProgress {
    pub(crate) start_local_ms: i64,
    pub(crate) paused_ms: u64,
    pub(crate) next_step: u8,
    pub(crate) work_timer: Option<TimerId>,
}

impl Runtime {
    /// Run `run`'s state. The run asked about is nearly always the
    /// instance's newest (its live one), so that is looked at before any
    /// search: the runtime asks several times per reply and timer.
    #[inline]
    pub(crate) fn run_state(&self, run: RunId) -> &RunState {
        self.runs.get_newest_first(&run).unwrap_or_else(|| panic!("{run} is not a run of {}", self.me))
    }

    #[inline]
    pub(crate) fn run_state_mut(&mut self, run: RunId) -> &mut RunState {
        let me = self.me;
        self.runs.get_mut_newest_first(&run).unwrap_or_else(|| panic!("{run} is not a run of {me}"))
    }

    #[inline]
    pub(crate) fn ended(&self, run: RunId) -> bool {
        self.run_state(run).ended
    }

    #[inline]
    pub(crate) fn log_run<H: Host>(&self, host: &mut H, run: RunId, phase: RunPhase) {
        let period = self.run_state(run).period;
        host.record(EventKind::Run { run, instance: self.me, period, phase });
    }

    #[inline]
    fn log_belief<H: Host>(&self, host: &mut H, run: RunId, holds: bool, token: Option<Token>) {
        host.record(EventKind::Belief { instance: self.me, run, holds, token });
    }

    // ----- cron -----

    pub(crate) fn schedule_next_cron<H: Host>(&mut self, host: &mut H) {
        let world = host.world();
        let period_ms = i64::try_from(world.cron_period_ms).unwrap_or(i64::MAX);
        let jitter_bound = world.cron_jitter_ms + 1;
        let jitter = i64::try_from(self.rng.below(jitter_bound)).unwrap_or(0);
        let deadline = i64::from(self.next_period) * period_ms + jitter;
        host.set_timer_at(deadline, InstanceTimer::Cron);
    }

    pub(crate) fn cron_fired<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S) {
        let period_ms = i64::try_from(host.world().cron_period_ms.max(1)).unwrap_or(i64::MAX);
        // If the clock jumped over several ticks, cron runs the latest one, not each.
        let current = u32::try_from((host.local_ms() / period_ms).max(0)).unwrap_or(u32::MAX);
        let period = Period(self.next_period.max(current));
        self.next_period = period.0 + 1;
        // After the window's end a tick starts no run, but it still ends the
        // retries of the period before it, as it would in a longer window: the
        // runs in flight finish exactly as they would have.
        let in_window = host.true_ms() < self.window_end_ms;
        if in_window {
            host.record(EventKind::Cron { instance: self.me, period });
        }
        self.schedule_next_cron(host);
        self.give_up_waiting_runs(host, strategy);
        if in_window {
            self.start_run(host, strategy, period);
        }
    }

    /// A loser stops retrying when the next tick comes.
    fn give_up_waiting_runs<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S) {
        let waiting: Vec<RunId> = self
            .live
            .iter()
            .copied()
            .filter(|run| matches!(self.run_state(*run).stage, Stage::Waiting | Stage::RetryCheck))
            .collect();
        for run in waiting {
            self.log_run(host, run, RunPhase::GaveUp);
            strategy.forget(run);
            self.end_run(host, run);
        }
    }

    fn start_run<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S, period: Period) {
        let run = self.new_run(host, period, Stage::Trying, false);
        self.log_run(host, run, RunPhase::Trying);
        strategy.acquire(&mut self.cx(host, run));
    }

    /// The job runner hands the fresh process the job that `dead` died in.
    /// The worker takes no lock: it runs under the grant the job was handed
    /// out with, believing itself entitled. It has no token: the dead
    /// process's memory is gone, and the runner hands out jobs, not tokens.
    pub(crate) fn redeliver_job<H: Host, S: Drives<H> + ?Sized>(
        &mut self,
        host: &mut H,
        strategy: &mut S,
        dead: RunId,
        period: Period,
    ) {
        let run = self.new_run(host, period, Stage::Checking, true);
        self.log_run(host, run, RunPhase::Redelivered(dead));
        self.log_belief(host, run, true, None);
        self.check_report(host, strategy, run, true);
    }

    /// A new run for `period`: a run that tries for the lock, or
    /// (`redelivered`) one handed a job under an earlier grant, with no token.
    fn new_run<H: Host>(&mut self, host: &mut H, period: Period, stage: Stage, redelivered: bool) -> RunId {
        let run = host.next_run_id();
        let owner = Owner { instance: self.me, nonce: self.rng.nonce() };
        self.live.push(run);
        let state = RunState {
            period,
            owner,
            generation: self.generation,
            stage,
            token: None,
            believes: redelivered,
            started: false,
            ended: false,
            redelivered,
            chunks_in_flight: 0,
            held_writes: std::collections::VecDeque::new(),
            retry_timer: None,
            job: JobProgress::default(),
        };
        assert!(self.runs.insert(run, state).is_none(), "{run} was handed out twice");
        run
    }

    // ----- taking the lock -----

    pub(crate) fn acquired<H: Host, S: Drives<H> + ?Sized>(
        &mut self,
        host: &mut H,
        strategy: &mut S,
        run: RunId,
        token: Option<Token>,
    ) {
        if self.ended(run) {
            return;
        }
        let takes_lock = strategy.takes_lock();
        let state = self.run_state_mut(run);
        state.token = token;
        state.believes = takes_lock;
        state.stage = Stage::Checking;
        self.log_run(host, run, RunPhase::Acquired);
        if takes_lock {
            self.log_belief(host, run, true, token);
        }
        self.check_report(host, strategy, run, true);
    }

    /// The run waits `retry_after_ms` to try again. A loser comes here on
    /// every try, so the run is looked up once for all of it (and its
    /// `Busy` logged here, as [`Runtime::log_run`] would).
    pub(crate) fn busy<H: Host>(&mut self, host: &mut H, run: RunId, retry_after_ms: u64) {
        let instance = self.me;
        let state = self.run_state_mut(run);
        if state.ended {
            return;
        }
        host.record(EventKind::Run { run, instance, period: state.period, phase: RunPhase::Busy });
        state.stage = Stage::Waiting;
        let timer = host.set_timer(retry_after_ms, InstanceTimer::Retry { run });
        let previous = state.retry_timer.replace(timer);
        assert!(previous.is_none_or(|previous| !host.timer_is_set(previous)), "{run} waits for two retries");
    }

    /// A waiting run's retry came due: before trying again, it looks whether
    /// somebody already made the report.
    pub(crate) fn retry_due<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S, run: RunId) {
        let state = self.run_state_mut(run);
        if state.stage == Stage::Waiting {
            state.stage = Stage::RetryCheck;
            self.check_report(host, strategy, run, false);
        }
    }

    // ----- the end -----

    /// The run stops before finishing.
    pub(crate) fn abort<H: Host, S: Drives<H> + ?Sized>(
        &mut self,
        host: &mut H,
        strategy: &mut S,
        run: RunId,
        reason: AbortReason,
    ) {
        if self.ended(run) {
            return;
        }
        self.log_run(host, run, RunPhase::Aborted(reason));
        if reason == AbortReason::ProcessDied {
            strategy.forget(run);
        } else {
            strategy.release(&mut self.cx(host, run));
        }
        self.end_run(host, run);
    }

    pub(crate) fn finish<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S, run: RunId) {
        if self.ended(run) {
            return;
        }
        self.log_run(host, run, RunPhase::Finished);
        strategy.release(&mut self.cx(host, run));
        self.end_run(host, run);
    }

    pub(crate) fn drop_belief<H: Host>(&mut self, host: &mut H, run: RunId) {
        let state = self.run_state_mut(run);
        if state.believes {
            state.believes = false;
            self.log_belief(host, run, false, None);
        }
    }

    pub(crate) fn end_run<H: Host>(&mut self, host: &mut H, run: RunId) {
        let state = self.run_state_mut(run);
        assert!(!state.ended, "{run} ended twice");
        state.ended = true;
        state.stage = Stage::Ended;
        let (retry_timer, work_timer) = (state.retry_timer.take(), state.job.work_timer.take());
        let believed = state.believes;
        state.believes = false;
        self.live.retain(|live| *live != run);
        for timer in [retry_timer, work_timer].into_iter().flatten() {
            host.cancel_timer(timer);
        }
        if believed {
            self.log_belief(host, run, false, None);
        }
    }
}
