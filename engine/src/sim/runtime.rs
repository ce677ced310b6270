//! The instance runtime: what every scheduler instance does whatever the
//! strategy. Cron ticks by the instance's own clock, a run per period, retries
//! while the lock is busy, the job itself (report chunks to storage, a Slack
//! post, the report row), the DB connection pool, and what a crash or restart
//! does to all of that.
//!
//! The job's steps are, in order: acquire, check whether the period's report
//! exists (skip if so), `report_chunks` PUTs spread over `job_ms`, the Slack
//! post, and last the report row, which marks the period done. The row comes
//! last so that a crash before it leaves the period to be retried.
//!
//! The job's work is time the process runs, not time on the wall: a GC pause
//! moves every step still ahead by the length of the pause (a 90 s job paused
//! for 60 s takes 150 s), while deadlines that passed during the pause
//! (renewals, request timeouts, a lease's own validity) fire at once.
//!
//! With `world.redeliver_after_crash`, a job whose process died is handed
//! again to that instance when it restarts (an at-least-once job runner), and
//! runs under the grant it was first handed out with: no new lock. It carries
//! no token: the token lived in the memory of the process that died, and a
//! restarted process remembers nothing.

use super::table::HotTable;
use super::{Action, Cx, Reply, Request, Sim, TimerId, TimerPurpose, run_index};
use crate::event::{
    AbortReason, EventKind, Owner, ProcessState, PutOutcome, RowWrite, RunPhase, Sql, SqlError, SqlOutcome,
};
use crate::ids::{InstanceId, Party, Period, ReportOf, RunId, SessionId, Token};
use crate::rng::SimRng;
use crate::strategy::{Notice, SimStrategy};
use std::collections::VecDeque;

/// Client timeouts of the runtime's own requests.
pub const STORAGE_TIMEOUT_MS: u64 = 10_000;
/// How long a report chunk takes to stream to storage from the instance.
/// The lease is checked when the upload starts (the chunk's step), so a
/// pause during this second is Kleppmann's "pause after the check".
pub const CHUNK_UPLOAD_MS: u64 = 1_000;
pub const SQL_TIMEOUT_MS: u64 = 30_000;

/// An instance's process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Process {
    Running,
    /// Stopped by a GC pause since `since_ms`, until `until_ms` (true times).
    Paused {
        since_ms: u64,
        until_ms: u64,
    },
    Dead,
    HostLost,
}

/// What a reply is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    Strategy {
        tag: u32,
    },
    Chunk,
    Post,
    /// The report row, sent on the strategy's own session.
    Row,
    /// The existence check, sent on the strategy's own session.
    Exists {
        after_acquire: bool,
    },
    /// Opening a pool connection.
    PoolConnect,
    /// A one-off query on a pool connection.
    Pooled {
        session: SessionId,
        query: PooledQuery,
    },
}

/// One-off queries the runtime runs on a pool connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PooledQuery {
    Exists { after_acquire: bool },
    Row,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Pending {
    pub(crate) run: RunId,
    pub(crate) purpose: Purpose,
    pub(crate) body: Request,
    pub(crate) timer: Option<TimerId>,
}

/// What a pool waiter wants.
#[derive(Clone, Copy, Debug)]
pub(crate) enum PoolJob {
    Query { sql: Sql, query: PooledQuery },
    Hold { tag: u32 },
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct PoolConn {
    pub(crate) session: SessionId,
    pub(crate) busy: bool,
}

/// A client-side connection pool (HikariCP-like): connections open lazily up
/// to `size`, requests wait in order for a free one.
#[derive(Clone, Debug)]
pub(crate) struct Pool {
    pub(crate) size: u8,
    pub(crate) conns: Vec<PoolConn>,
    pub(crate) connecting: u8,
    pub(crate) waiters: VecDeque<(RunId, PoolJob)>,
    last_logged: (u8, u8, u16),
}

impl Pool {
    fn new(size: u8) -> Pool {
        // Sized up front: every instance opens connections and queues for them in every run.
        Pool {
            size,
            conns: Vec::with_capacity(usize::from(size)),
            connecting: 0,
            waiters: VecDeque::with_capacity(4),
            last_logged: (0, 0, 0),
        }
    }
}

/// One scheduler instance.
#[derive(Clone, Debug)]
pub(crate) struct Instance {
    pub(crate) process: Process,
    /// Bumped at every death: what belonged to the old process is ignored.
    pub(crate) generation: u32,
    pub(crate) rng: SimRng,
    pub(crate) deferred: Vec<Action>,
    pub(crate) pending: HotTable<u32, Pending>,
    pub(crate) pool: Pool,
    next_period: u32,
    /// Jobs the process died in, with their runs, for the job runner to hand
    /// again at restart (`world.redeliver_after_crash`).
    redeliver: Vec<RunId>,
    /// A restart is queued for the dead process.
    pub(crate) restart_queued: bool,
    /// Its runs that have not ended, oldest first.
    live: Vec<RunId>,
}

impl Instance {
    pub(crate) fn new(rng: SimRng, pool_size: u8) -> Instance {
        Instance {
            process: Process::Running,
            generation: 0,
            rng,
            deferred: Vec::new(),
            pending: HotTable::with_capacity(8),
            pool: Pool::new(pool_size),
            next_period: 0,
            redeliver: Vec::new(),
            restart_queued: false,
            live: Vec::with_capacity(4),
        }
    }
    pub(crate) fn is_paused(&self) -> bool {
        matches!(self.process, Process::Paused { .. })
    }
    pub(crate) fn is_alive(&self) -> bool {
        matches!(self.process, Process::Running | Process::Paused { .. })
    }
    pub(crate) fn defer(&mut self, action: Action) {
        self.deferred.push(action);
    }
    /// Nothing of the job is in flight here: no live run, no job waiting for
    /// a queued restart to be handed out again, no upload still streaming
    /// out (it goes on the wire when it is done, whatever became of its run).
    pub(crate) fn idle(&self) -> bool {
        let streaming =
            self.pending.values().any(|pending| pending.purpose == Purpose::Chunk && pending.timer.is_none());
        let handed_back_later = self.restart_queued && !self.redeliver.is_empty();
        self.live.is_empty() && !handed_back_later && !streaming
    }
}

/// Where a run is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    Trying,
    Waiting,
    RetryCheck,
    Checking,
    Working,
    Finishing,
    Ended,
}

/// One run: an instance's attempt at one period's job.
#[derive(Clone, Debug)]
pub(crate) struct RunRecord {
    pub(crate) instance: InstanceId,
    pub(crate) period: Period,
    pub(crate) owner: Owner,
    pub(crate) generation: u32,
    pub(crate) stage: Stage,
    pub(crate) token: Option<Token>,
    /// The lock service counts this run as the holder.
    pub(crate) granted: bool,
    /// The instance believes this run holds the lock.
    pub(crate) believes: bool,
    pub(crate) started: bool,
    pub(crate) ended: bool,
    /// Handed the job a dead run had (`world.redeliver_after_crash`): it
    /// writes with no token, and never took the lock itself.
    pub(crate) redelivered: bool,
    /// Chunk uploads sent and not yet answered.
    chunks_in_flight: u8,
    /// The retry it waits for: a run waits for one retry at a time.
    retry_timer: Option<TimerId>,
    /// The job's progress: it started when its instance's clock read
    /// `start_local_ms`, has been moved `paused_ms` later by pauses, and its
    /// next step is chunk `next_step` (or, at `report_chunks`, the job's end),
    /// due by `work_timer`.
    job: JobProgress,
}

/// Where a run's job is in its work (see [`RunRecord::job`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct JobProgress {
    start_local_ms: i64,
    paused_ms: u64,
    next_step: u8,
    work_timer: Option<TimerId>,
}

impl Sim {
    fn cx(&mut self, run: RunId) -> Cx<'_> {
        Cx { sim: self, run }
    }

    fn run_record(&self, run: RunId) -> &RunRecord {
        &self.runs[run_index(run)]
    }

    fn run_record_mut(&mut self, run: RunId) -> &mut RunRecord {
        &mut self.runs[run_index(run)]
    }

    fn log_run(&mut self, run: RunId, phase: RunPhase) {
        let record = self.run_record(run);
        let (instance, period) = (record.instance, record.period);
        self.record(EventKind::Run { run, instance, period, phase });
    }

    // ----- cron -----

    pub(crate) fn schedule_next_cron(&mut self, instance: InstanceId) {
        let period_ms = i64::try_from(self.world.cron_period_ms).unwrap_or(i64::MAX);
        let jitter_bound = self.world.cron_jitter_ms + 1;
        let state = &mut self.instances[instance.index()];
        let jitter = i64::try_from(state.rng.below(jitter_bound)).unwrap_or(0);
        let deadline = i64::from(state.next_period) * period_ms + jitter;
        self.set_timer_at(Party::Instance(instance), deadline, TimerPurpose::Cron { instance });
    }

    fn cron_fired(&mut self, instance: InstanceId, strategy: &mut SimStrategy) {
        let period_ms = i64::try_from(self.world.cron_period_ms).unwrap_or(i64::MAX);
        let local = self.local_now(Party::Instance(instance));
        let state = &mut self.instances[instance.index()];
        // If the clock jumped over several ticks, cron runs the latest one, not each.
        let current = u32::try_from((local / period_ms).max(0)).unwrap_or(u32::MAX);
        let period = Period(state.next_period.max(current));
        state.next_period = period.0 + 1;
        // After the window's end a tick starts no run, but it still ends the
        // retries of the period before it, as it would in a longer window: the
        // runs in flight finish exactly as they would have (see `drained`).
        let in_window = self.now_ms < self.window_end_ms;
        if in_window {
            self.record(EventKind::Cron { instance, period });
        }
        self.schedule_next_cron(instance);
        self.give_up_waiting_runs(instance, strategy);
        if in_window {
            self.start_run(instance, period, strategy);
        }
    }

    /// A loser stops retrying when the next tick comes.
    fn give_up_waiting_runs(&mut self, instance: InstanceId, strategy: &mut SimStrategy) {
        let waiting: Vec<RunId> = self
            .live_runs(instance)
            .into_iter()
            .filter(|run| matches!(self.run_record(*run).stage, Stage::Waiting | Stage::RetryCheck))
            .collect();
        for run in waiting {
            self.log_run(run, RunPhase::GaveUp);
            strategy.forget(run);
            self.end_run(run);
        }
    }

    /// The runs of `instance` that have not ended, oldest first: a cron tick
    /// or a crash visits these, never the whole history of the run.
    fn live_runs(&self, instance: InstanceId) -> Vec<RunId> {
        self.instances[instance.index()].live.clone()
    }

    fn start_run(&mut self, instance: InstanceId, period: Period, strategy: &mut SimStrategy) {
        let run = self.new_run(instance, period, Stage::Trying, false);
        self.log_run(run, RunPhase::Trying);
        strategy.acquire(&mut self.cx(run));
    }

    /// The job runner hands `instance`'s fresh process the job that `dead`
    /// died in. The worker takes no lock: it runs under the grant the job was
    /// handed out with, believing itself entitled. It has no token: the dead
    /// process's memory is gone, and the runner hands out jobs, not tokens.
    fn redeliver(&mut self, instance: InstanceId, dead: RunId, strategy: &mut SimStrategy) {
        let period = self.run_record(dead).period;
        let run = self.new_run(instance, period, Stage::Checking, true);
        self.log_run(run, RunPhase::Redelivered(dead));
        self.record(EventKind::Belief { instance, run, holds: true, token: None });
        self.check_report(run, true, strategy);
    }

    /// A new run of `instance` for `period`: a run that tries for the lock, or
    /// (`redelivered`) one handed a job under an earlier grant, with no token.
    pub(crate) fn new_run(&mut self, instance: InstanceId, period: Period, stage: Stage, redelivered: bool) -> RunId {
        let run = RunId(u32::try_from(self.runs.len()).unwrap_or(u32::MAX));
        let state = &mut self.instances[instance.index()];
        let owner = Owner { instance, nonce: state.rng.nonce() };
        let generation = state.generation;
        state.live.push(run);
        self.runs.push(RunRecord {
            instance,
            period,
            owner,
            generation,
            stage,
            token: None,
            granted: false,
            believes: redelivered,
            started: false,
            ended: false,
            redelivered,
            chunks_in_flight: 0,
            retry_timer: None,
            job: JobProgress::default(),
        });
        run
    }

    /// The token a run's writes carry: the strategy's; a redelivered job,
    /// which never asked the strategy for the lock, has none.
    fn write_token(&self, run: RunId, strategy: &SimStrategy) -> Option<Token> {
        let record = self.run_record(run);
        if record.redelivered { None } else { strategy.token(run) }
    }

    /// The report row a period's run writes: the day's (or period's) report,
    /// except that a first-writer-wins insert keeps its unique key
    /// (job, period), as the contract's option D has it.
    fn row_report(&self, run: RunId, strategy: &SimStrategy) -> ReportOf {
        let period = self.run_record(run).period;
        match strategy.report_row(run) {
            RowWrite::InsertOrNothing => ReportOf::Period(period),
            RowWrite::Upsert | RowWrite::FencedUpsert => self.reports.report_of(period),
        }
    }

    // ----- notices from the strategy -----

    pub(crate) fn handle_notices(&mut self, strategy: &mut SimStrategy) {
        while let Some(notice) = self.notices.pop_front() {
            match notice {
                Notice::Acquired { run, token } => self.acquired(run, token, strategy),
                Notice::Busy { run, retry_after_ms } => self.busy(run, retry_after_ms),
                Notice::Lost { run, reason } => self.abort(run, reason, strategy),
                Notice::Committed { run, ok } => {
                    if ok {
                        self.finish(run, strategy);
                    } else {
                        self.abort(run, AbortReason::SessionLost, strategy);
                    }
                }
                Notice::Checkout { run, tag, result } => {
                    strategy.on_reply(&mut self.cx(run), tag, Reply::Checkout(result));
                }
            }
        }
    }

    fn acquired(&mut self, run: RunId, token: Option<Token>, strategy: &mut SimStrategy) {
        if self.run_record(run).ended {
            return;
        }
        let takes_lock = strategy.takes_lock();
        let record = self.run_record_mut(run);
        record.token = token;
        record.believes = takes_lock;
        record.stage = Stage::Checking;
        let instance = record.instance;
        self.log_run(run, RunPhase::Acquired);
        if takes_lock {
            self.record(EventKind::Belief { instance, run, holds: true, token });
        }
        self.check_report(run, true, strategy);
    }

    fn busy(&mut self, run: RunId, retry_after_ms: u64) {
        if self.run_record(run).ended {
            return;
        }
        self.log_run(run, RunPhase::Busy);
        let record = self.run_record_mut(run);
        record.stage = Stage::Waiting;
        let instance = record.instance;
        let timer = self.set_timer(Party::Instance(instance), retry_after_ms, TimerPurpose::Retry { run });
        let previous = self.run_record_mut(run).retry_timer.replace(timer);
        assert!(previous.is_none_or(|previous| self.timer_deadline(previous).is_none()), "{run} waits for two retries");
    }

    /// The run stops before finishing.
    fn abort(&mut self, run: RunId, reason: AbortReason, strategy: &mut SimStrategy) {
        if self.run_record(run).ended {
            return;
        }
        self.log_run(run, RunPhase::Aborted(reason));
        if reason == AbortReason::ProcessDied {
            strategy.forget(run);
        } else {
            strategy.release(&mut self.cx(run));
        }
        self.end_run(run);
    }

    fn finish(&mut self, run: RunId, strategy: &mut SimStrategy) {
        if self.run_record(run).ended {
            return;
        }
        self.log_run(run, RunPhase::Finished);
        strategy.release(&mut self.cx(run));
        self.end_run(run);
    }

    fn drop_belief(&mut self, run: RunId) {
        let record = self.run_record_mut(run);
        if record.believes {
            record.believes = false;
            let instance = record.instance;
            self.record(EventKind::Belief { instance, run, holds: false, token: None });
        }
    }

    fn end_run(&mut self, run: RunId) {
        let record = self.run_record_mut(run);
        assert!(!record.ended, "{run} ended twice");
        record.ended = true;
        record.stage = Stage::Ended;
        let (retry_timer, work_timer) = (record.retry_timer.take(), record.job.work_timer.take());
        let (believed, instance) = (record.believes, record.instance);
        record.believes = false;
        self.instances[instance.index()].live.retain(|live| *live != run);
        for timer in [retry_timer, work_timer].into_iter().flatten() {
            self.cancel_timer(timer);
        }
        if believed {
            self.record(EventKind::Belief { instance, run, holds: false, token: None });
        }
    }

    // ----- the job -----

    fn check_report(&mut self, run: RunId, after_acquire: bool, strategy: &mut SimStrategy) {
        let record = self.run_record(run);
        let (instance, period) = (record.instance, record.period);
        let sql = Sql::ReportExists { period, report: self.row_report(run, strategy) };
        match strategy.session(run) {
            Some(session) => self.send_request(
                instance,
                Party::Db,
                run,
                Request::Sql { session, sql },
                Purpose::Exists { after_acquire },
                Some(SQL_TIMEOUT_MS),
            ),
            None => {
                self.pool_request(instance, run, PoolJob::Query { sql, query: PooledQuery::Exists { after_acquire } })
            }
        }
    }

    fn report_checked(&mut self, run: RunId, after_acquire: bool, outcome: Reply, strategy: &mut SimStrategy) {
        if self.run_record(run).ended {
            return;
        }
        let exists = match outcome {
            Reply::Sql(SqlOutcome::Rows(rows)) => Some(rows > 0),
            Reply::Redis(_)
            | Reply::Sql(_)
            | Reply::Put(_)
            | Reply::Posted
            | Reply::Consensus(_)
            | Reply::Checkout(_)
            | Reply::Timeout => None,
        };
        match (after_acquire, exists) {
            (true, Some(false)) => self.start_job(run, strategy),
            (_, Some(true)) => {
                self.log_run(run, RunPhase::Skipped);
                if after_acquire {
                    strategy.release(&mut self.cx(run));
                } else {
                    strategy.forget(run);
                }
                self.end_run(run);
            }
            (true, None) => {
                // The database did not answer: careful code does not run the job blind.
                strategy.release(&mut self.cx(run));
                self.drop_belief(run);
                let retry = self.world.retry_ms;
                self.busy(run, retry);
            }
            (false, _) => {
                self.run_record_mut(run).stage = Stage::Trying;
                strategy.acquire(&mut self.cx(run));
            }
        }
    }

    fn start_job(&mut self, run: RunId, strategy: &mut SimStrategy) {
        let record = self.run_record_mut(run);
        record.stage = Stage::Working;
        record.started = true;
        let (instance, redelivered) = (record.instance, record.redelivered);
        self.log_run(run, RunPhase::Started);
        if !redelivered {
            strategy.job_started(&mut self.cx(run));
        }
        let start_local_ms = self.local_now(Party::Instance(instance));
        let record = self.run_record_mut(run);
        assert!(record.job.work_timer.is_none(), "{run} started its job twice");
        record.job = JobProgress { start_local_ms, paused_ms: 0, next_step: 0, work_timer: None };
        self.schedule_work(run);
    }

    /// Sets the timer for the job's next step: a chunk, or (after the last) the job's end.
    fn schedule_work(&mut self, run: RunId) {
        let (chunks, job_ms) = (self.world.report_chunks, self.world.job_ms);
        let record = self.run_record(run);
        let (instance, job) = (record.instance, record.job);
        // Step k of `chunks + 1` is due k + 1 equal shares into the job's work.
        let step_ms = job_ms * (u64::from(job.next_step) + 1) / (u64::from(chunks) + 1);
        let due_local_ms =
            job.start_local_ms.saturating_add(i64::try_from(step_ms + job.paused_ms).unwrap_or(i64::MAX / 4));
        let purpose = if job.next_step < chunks {
            TimerPurpose::Chunk { run, chunk: job.next_step }
        } else {
            TimerPurpose::JobEnd { run }
        };
        let timer = self.set_timer_at(Party::Instance(instance), due_local_ms, purpose);
        self.run_record_mut(run).job.work_timer = Some(timer);
    }

    /// `instance` resumes after a pause of `paused_ms`: the work its jobs had
    /// left still takes the time it had left, so each job's next step moves
    /// that much later. A step that was due the moment the pause struck is
    /// due now, and comes before the deadlines that passed during the pause.
    pub(crate) fn resume_work(&mut self, instance: InstanceId, paused_ms: u64) {
        for run in self.live_runs(instance) {
            let Some(timer) = self.run_record(run).job.work_timer else { continue };
            self.cancel_timer(timer);
            let record = self.run_record_mut(run);
            record.job.paused_ms += paused_ms;
            record.job.work_timer = None;
            self.schedule_work(run);
        }
    }

    /// The job's step came due: upload a chunk, or end the work, then set the next step.
    fn work_step(&mut self, run: RunId, strategy: &mut SimStrategy) {
        let record = self.run_record_mut(run);
        record.job.work_timer = None;
        if record.stage != Stage::Working {
            return;
        }
        let step = record.job.next_step;
        record.job.next_step += 1;
        if step < self.world.report_chunks {
            self.write_chunk(run, step, strategy);
            if self.run_record(run).stage == Stage::Working {
                self.schedule_work(run);
            }
        } else {
            self.end_job(run);
        }
    }

    fn write_chunk(&mut self, run: RunId, chunk: u8, strategy: &mut SimStrategy) {
        let record = self.run_record(run);
        if record.stage != Stage::Working {
            return;
        }
        let (instance, period) = (record.instance, record.period);
        let body = Request::Put {
            period,
            report: self.reports.report_of(period),
            chunk,
            own_object: strategy.own_objects(),
            token: self.write_token(run, strategy),
        };
        self.run_record_mut(run).chunks_in_flight += 1;
        let (timeout, upload) = (STORAGE_TIMEOUT_MS, CHUNK_UPLOAD_MS);
        self.send_upload(instance, run, body, Purpose::Chunk, timeout, upload);
    }

    /// A chunk's PUT was answered (or timed out). The job awaits every upload:
    /// a refused or unanswered one fails the run, and the job only ends once all are stored.
    fn chunk_answered(&mut self, run: RunId, body: Reply, strategy: &mut SimStrategy) {
        let record = self.run_record_mut(run);
        record.chunks_in_flight = record.chunks_in_flight.saturating_sub(1);
        if record.ended {
            return;
        }
        match body {
            Reply::Put(PutOutcome::Accepted) => {
                let record = self.run_record(run);
                if record.stage == Stage::Finishing && record.chunks_in_flight == 0 {
                    self.post_report(run);
                }
            }
            Reply::Put(PutOutcome::Rejected(_)) => self.abort(run, AbortReason::WriteRejected, strategy),
            Reply::Redis(_)
            | Reply::Sql(_)
            | Reply::Posted
            | Reply::Consensus(_)
            | Reply::Checkout(_)
            | Reply::Timeout => self.abort(run, AbortReason::WriteFailed, strategy),
        }
    }

    fn end_job(&mut self, run: RunId) {
        let record = self.run_record_mut(run);
        if record.stage != Stage::Working {
            return;
        }
        record.stage = Stage::Finishing;
        if record.chunks_in_flight == 0 {
            self.post_report(run);
        }
    }

    /// Every chunk is stored: announce the report on Slack (the row comes last).
    fn post_report(&mut self, run: RunId) {
        let record = self.run_record(run);
        let (instance, period) = (record.instance, record.period);
        self.send_request(
            instance,
            Party::Slack,
            run,
            Request::Post { period },
            Purpose::Post,
            Some(STORAGE_TIMEOUT_MS),
        );
    }

    fn write_row(&mut self, run: RunId, strategy: &mut SimStrategy) {
        let record = self.run_record(run);
        if record.ended {
            return;
        }
        let (instance, period) = (record.instance, record.period);
        let sql = Sql::WriteReport {
            period,
            report: self.row_report(run, strategy),
            run,
            token: self.write_token(run, strategy),
            how: strategy.report_row(run),
        };
        match strategy.session(run) {
            Some(session) => self.send_request(
                instance,
                Party::Db,
                run,
                Request::Sql { session, sql },
                Purpose::Row,
                Some(SQL_TIMEOUT_MS),
            ),
            None => self.pool_request(instance, run, PoolJob::Query { sql, query: PooledQuery::Row }),
        }
    }

    fn row_written(&mut self, run: RunId, outcome: Reply, strategy: &mut SimStrategy) {
        if self.run_record(run).ended {
            return;
        }
        match outcome {
            Reply::Sql(SqlOutcome::Rows(_)) => {
                if strategy.session(run).is_some() {
                    // Sending COMMIT is where the client stops relying on the lock.
                    self.drop_belief(run);
                    strategy.commit_report(&mut self.cx(run));
                } else {
                    self.finish(run, strategy);
                }
            }
            Reply::Sql(SqlOutcome::StaleToken { .. }) => self.abort(run, AbortReason::WriteRejected, strategy),
            Reply::Sql(SqlOutcome::Error(SqlError::ConnectionClosed | SqlError::IdleInTransactionTimeout)) => {
                self.abort(run, AbortReason::SessionLost, strategy);
            }
            Reply::Redis(_)
            | Reply::Sql(_)
            | Reply::Put(_)
            | Reply::Posted
            | Reply::Consensus(_)
            | Reply::Checkout(_)
            | Reply::Timeout => self.abort(run, AbortReason::RowWriteFailed, strategy),
        }
    }

    // ----- replies and timers -----

    pub(crate) fn instance_reply(
        &mut self,
        instance: InstanceId,
        request: u32,
        body: Reply,
        strategy: &mut SimStrategy,
    ) {
        let Some(pending) = self.instances[instance.index()].pending.remove(&request) else {
            return;
        };
        if let Some(timer) = pending.timer {
            self.cancel_timer(timer);
        }
        self.route(instance, pending, body, strategy);
    }

    fn route(&mut self, instance: InstanceId, pending: Pending, body: Reply, strategy: &mut SimStrategy) {
        let run = pending.run;
        match pending.purpose {
            Purpose::Strategy { tag } => strategy.on_reply(&mut self.cx(run), tag, body),
            Purpose::Chunk => self.chunk_answered(run, body, strategy),
            Purpose::Post => self.write_row(run, strategy),
            Purpose::Row => self.row_written(run, body, strategy),
            Purpose::Exists { after_acquire } => self.report_checked(run, after_acquire, body, strategy),
            Purpose::PoolConnect => self.pool_connected(instance, body, strategy),
            Purpose::Pooled { session, query } => {
                let broken = matches!(body, Reply::Sql(SqlOutcome::Error(_)));
                self.pool_checkin(instance, session, broken);
                match query {
                    PooledQuery::Exists { after_acquire } => self.report_checked(run, after_acquire, body, strategy),
                    PooledQuery::Row => self.row_written(run, body, strategy),
                }
            }
        }
    }

    pub(crate) fn instance_timer(&mut self, purpose: TimerPurpose, strategy: &mut SimStrategy) {
        match purpose {
            TimerPurpose::Cron { instance } => self.cron_fired(instance, strategy),
            TimerPurpose::Retry { run } => {
                let record = self.run_record_mut(run);
                if record.stage == Stage::Waiting {
                    record.stage = Stage::RetryCheck;
                    // Before trying again, look whether somebody already made the report.
                    self.check_report(run, false, strategy);
                }
            }
            TimerPurpose::Chunk { run, .. } | TimerPurpose::JobEnd { run } => self.work_step(run, strategy),
            TimerPurpose::Strategy { run, tag } => {
                if !self.run_record(run).ended {
                    strategy.on_timer(&mut self.cx(run), tag);
                }
            }
            TimerPurpose::UploadDone { instance, request, timeout_ms } => {
                self.upload_done(instance, request, timeout_ms)
            }
            TimerPurpose::RequestTimeout { instance, request } => {
                let Some(pending) = self.instances[instance.index()].pending.remove(&request) else {
                    return;
                };
                let body = Reply::timeout_for(&pending.body);
                self.route(instance, pending, body, strategy);
            }
            TimerPurpose::KeyExpiry { .. }
            | TimerPurpose::LockTimeout { .. }
            | TimerPurpose::IdleTimeout { .. }
            | TimerPurpose::LeaseExpiry { .. } => {}
        }
    }

    // ----- the connection pool -----

    pub(crate) fn pool_request(&mut self, instance: InstanceId, run: RunId, job: PoolJob) {
        self.instances[instance.index()].pool.waiters.push_back((run, job));
        self.pool_pump(instance);
    }

    pub(crate) fn pool_checkin(&mut self, instance: InstanceId, session: SessionId, broken: bool) {
        let pool = &mut self.instances[instance.index()].pool;
        if let Some(position) = pool.conns.iter().position(|conn| conn.session == session) {
            if broken {
                pool.conns.remove(position);
            } else {
                pool.conns[position].busy = false;
            }
        }
        self.pool_pump(instance);
    }

    fn pool_pump(&mut self, instance: InstanceId) {
        loop {
            let pool = &mut self.instances[instance.index()].pool;
            let Some(free) = pool.conns.iter().position(|conn| !conn.busy) else {
                break;
            };
            let Some((run, job)) = pool.waiters.pop_front() else {
                break;
            };
            pool.conns[free].busy = true;
            let session = pool.conns[free].session;
            match job {
                PoolJob::Query { sql, query } => self.send_request(
                    instance,
                    Party::Db,
                    run,
                    Request::Sql { session, sql },
                    Purpose::Pooled { session, query },
                    Some(SQL_TIMEOUT_MS),
                ),
                PoolJob::Hold { tag } => {
                    self.notices.push_back(Notice::Checkout { run, tag, result: Ok(session) });
                }
            }
        }
        let pool = &self.instances[instance.index()].pool;
        assert!(
            pool.conns.len() + usize::from(pool.connecting) <= usize::from(pool.size),
            "{instance}'s pool holds more connections than its size"
        );
        let room = usize::from(pool.size).saturating_sub(pool.conns.len() + usize::from(pool.connecting));
        let wanted = pool.waiters.len().saturating_sub(usize::from(pool.connecting));
        for _ in 0..room.min(wanted) {
            self.instances[instance.index()].pool.connecting += 1;
            let run = self.instances[instance.index()].pool.waiters.front().map_or(RunId(0), |(run, _)| *run);
            self.send_request(
                instance,
                Party::Db,
                run,
                Request::Sql { session: SessionId(0), sql: Sql::Connect },
                Purpose::PoolConnect,
                Some(SQL_TIMEOUT_MS),
            );
        }
        self.log_pool(instance);
    }

    fn pool_connected(&mut self, instance: InstanceId, body: Reply, strategy: &mut SimStrategy) {
        let pool = &mut self.instances[instance.index()].pool;
        pool.connecting = pool.connecting.saturating_sub(1);
        if let Reply::Sql(SqlOutcome::Connected(session)) = body {
            pool.conns.push(PoolConn { session, busy: false });
        } else if let Some((run, job)) = pool.waiters.pop_front() {
            // No connection could be had: the request that asked for it fails.
            let failure = Reply::Sql(SqlOutcome::Error(SqlError::TooManyClients));
            match job {
                PoolJob::Query { query: PooledQuery::Exists { after_acquire }, .. } => {
                    self.report_checked(run, after_acquire, failure, strategy);
                }
                PoolJob::Query { query: PooledQuery::Row, .. } => self.row_written(run, failure, strategy),
                PoolJob::Hold { tag } => {
                    let result = Err(SqlError::TooManyClients);
                    self.notices.push_back(Notice::Checkout { run, tag, result });
                }
            }
        }
        self.pool_pump(instance);
    }

    fn log_pool(&mut self, instance: InstanceId) {
        let pool = &self.instances[instance.index()].pool;
        let busy = u8::try_from(pool.conns.iter().filter(|conn| conn.busy).count()).unwrap_or(u8::MAX);
        let open = u8::try_from(pool.conns.len()).unwrap_or(u8::MAX);
        let waiting = u16::try_from(pool.waiters.len()).unwrap_or(u16::MAX);
        if pool.last_logged != (busy, open, waiting) {
            self.instances[instance.index()].pool.last_logged = (busy, open, waiting);
            self.record(EventKind::Pool { instance, busy, open, waiting });
        }
    }

    // ----- crashes and restarts -----

    pub(crate) fn kill(&mut self, instance: InstanceId, host_lost: bool, strategy: &mut SimStrategy) {
        if !self.instances[instance.index()].is_alive() {
            return;
        }
        for run in self.live_runs(instance) {
            if self.world.redeliver_after_crash && self.run_record(run).started {
                self.instances[instance.index()].redeliver.push(run);
            }
            self.log_run(run, RunPhase::Aborted(AbortReason::ProcessDied));
            strategy.forget(run);
            self.end_run(run);
        }
        let state = &mut self.instances[instance.index()];
        state.process = if host_lost { Process::HostLost } else { Process::Dead };
        state.generation += 1;
        state.deferred.clear();
        let pending: Vec<Pending> = state.pending.take_values();
        let sessions: Vec<SessionId> = state.pool.conns.iter().map(|conn| conn.session).collect();
        state.pool = Pool::new(state.pool.size);
        for pending in pending {
            if let Some(timer) = pending.timer {
                self.cancel_timer(timer);
            }
        }
        self.cancel_party_timers(Party::Instance(instance));
        let state = if host_lost { ProcessState::HostLost } else { ProcessState::Dead };
        self.record(EventKind::Process { instance, state });
        self.log_pool(instance);
        for session in sessions {
            if host_lost {
                // No FIN: the server learns only when TCP keepalive gives up.
                let at = self.now_ms + self.world.tcp_keepalive_ms;
                self.schedule(at, Action::KeepaliveExpiry { session });
            } else {
                self.send_fin(instance, session);
            }
        }
    }

    pub(crate) fn restart(&mut self, instance: InstanceId, strategy: &mut SimStrategy) {
        if self.instances[instance.index()].is_alive() {
            return;
        }
        let period_ms = i64::try_from(self.world.cron_period_ms).unwrap_or(i64::MAX);
        let local = self.local_now(Party::Instance(instance));
        let state = &mut self.instances[instance.index()];
        state.process = Process::Running;
        state.restart_queued = false;
        self.record(EventKind::Process { instance, state: ProcessState::Restarted });
        // The scheduler runs the latest period it missed, once, then keeps the schedule.
        let latest = u32::try_from((local / period_ms).max(0)).unwrap_or(0);
        let state = &mut self.instances[instance.index()];
        state.next_period = latest;
        let redeliver = std::mem::take(&mut state.redeliver);
        self.set_timer_at(Party::Instance(instance), local, TimerPurpose::Cron { instance });
        for dead in redeliver {
            self.redeliver(instance, dead, strategy);
        }
    }
}
