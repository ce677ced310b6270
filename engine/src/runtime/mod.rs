//! The instance runtime: what every scheduler instance does whatever the
//! strategy, written once for the simulator and live mode. Cron ticks by the
//! instance's own clock, a run per period, retries while the lock is busy,
//! the job itself (report chunks to storage, a Slack post, the report row),
//! the DB connection pool, and what a crash or restart does to all of that.
//!
//! It is sans-IO, in the shape of the strategies it drives: a [`Runtime`]
//! holds one instance's process state and does nothing by itself. A
//! [`Host`] gives it the time, takes its events, sets its timers and puts its
//! requests on the wire; the host calls it back with the timers that fire
//! ([`Runtime::on_timer`]) and the replies that come ([`Runtime::on_reply`]).
//! The simulator's host is the simulated world (`crate::sim`); live mode's
//! is an instance process with real sockets, real timers and real signals.
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
//!
//! Invariants, each backed by an `assert!`: a run ends once; a run waits for
//! one retry at a time; a job starts its work once; the pool never holds
//! more connections than its size; every entry point leaves no notice of the
//! strategy unhandled.

mod job;
mod pool;
mod run;

use crate::event::{AbortReason, EventKind, RunPhase, Sql, SqlOutcome};
use crate::ids::{InstanceId, Party, Period, ReportOf, RunId, SessionId, Token};
use crate::rng::SimRng;
use crate::scenario::{ReportRule, World};
use crate::table::Table;
use crate::vocab::{Context, Notice, Reply, Request, Strategy, Tag, Timer, TimerId};
use pool::{Pool, PoolJob};
pub use run::{RunState, Stage};
use std::collections::VecDeque;

/// What an instance's runtime needs from whatever runs it: the time, the
/// log, timers and the wire. Every effect of the runtime goes through here.
pub trait Host {
    fn world(&self) -> &World;
    /// The scenario's true time now, in ms.
    fn true_ms(&self) -> u64;
    /// What the instance's clock reads now: its timers, its cron and its leases go by it.
    fn local_ms(&self) -> i64;
    /// Appends an event to the run's log, at the true time now.
    fn record(&mut self, kind: EventKind);
    /// A timer that fires [`Runtime::on_timer`] with `timer` when the instance's
    /// clock reads `deadline_local_ms`.
    fn set_timer_at(&mut self, deadline_local_ms: i64, timer: InstanceTimer) -> TimerId;
    /// A timer that fires once the instance's clock has moved on by `after_ms`.
    /// (Inlined into its callers natively: the simulator sets a timer for
    /// nearly every request, and the call cost the engine a few percent of
    /// its speed. The pages' size-optimized wasm keeps the one copy.)
    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    fn set_timer(&mut self, after_ms: u64, timer: InstanceTimer) -> TimerId {
        let deadline = self.local_ms().saturating_add(i64::try_from(after_ms).unwrap_or(i64::MAX / 4));
        self.set_timer_at(deadline, timer)
    }
    fn cancel_timer(&mut self, id: TimerId);
    /// Whether timer `id` is still set (neither fired nor cancelled).
    fn timer_is_set(&self, id: TimerId) -> bool;
    /// A new run's id: unique across every instance of the run.
    fn next_run_id(&mut self) -> RunId;
    /// A new request's id, which its reply comes back with.
    fn next_request_id(&mut self) -> u32;
    /// Puts request `request` on the wire to `to`. `Sql::Connect` opens a
    /// new session, which comes back as `SqlOutcome::Connected`; no reply
    /// at all comes back as the timeout the runtime set, after `timeout_ms`.
    fn transmit(&mut self, request: u32, run: RunId, to: Party, body: Request, timeout_ms: Option<u64>);
    /// The Redis node a single-Redis strategy talks to now (a failover moves it).
    fn redis_primary(&self) -> Party;
    /// The pool dropped `session` after an error: the client closes it.
    fn drop_session(&mut self, session: SessionId);
}

/// A timer of the runtime's, handed back by the host when it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstanceTimer {
    /// The cron's next tick.
    Cron,
    /// A waiting run tries again.
    Retry { run: RunId },
    /// The job's next step (a chunk, or its end) is due.
    Work { run: RunId },
    /// A timer the run's strategy set.
    Strategy { run: RunId, timer: Timer },
    /// No reply came to `request` in time.
    RequestTimeout { request: u32 },
    /// The last bytes of an upload leave the instance (see [`Runtime::send_upload`]).
    /// (`timeout_ms` is a `u32`, as no client waits 49 days: it keeps the
    /// simulator's timer entries, one per timer set in a run, at 32 bytes.)
    UploadDone { request: u32, timeout_ms: u32 },
}

/// What a reply is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    Strategy {
        tag: Tag,
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

/// A request awaiting its reply.
#[derive(Clone, Copy, Debug)]
struct Pending {
    run: RunId,
    purpose: Purpose,
    body: Request,
    timer: Option<TimerId>,
}

/// Client timeouts of the instance runtime's own requests.
pub use crate::vocab::{CHUNK_UPLOAD_MS, SQL_TIMEOUT_MS, STORAGE_TIMEOUT_MS};

/// A strategy the runtime can drive on host `H`: one that takes a
/// [`RunCx`] of any lifetime.
pub trait Drives<H>: for<'a> Strategy<RunCx<'a, H>> {}
impl<H, S: ?Sized + for<'a> Strategy<RunCx<'a, H>>> Drives<H> for S {}

/// A boxed strategy for host `H`, as a host that is not the simulator holds it.
pub type Driven<H> = dyn for<'a> Strategy<RunCx<'a, H>>;

/// The scenario's strategy for host `H`: the same code the simulator runs.
pub fn strategy_for<H: Host>(settings: &crate::scenario::StrategySettings) -> Box<Driven<H>> {
    crate::strategy::boxed_strategy!(settings)
}

/// One scheduler instance's process: its cron, its runs, its requests in
/// flight and its pool. A process that dies keeps only what the job runner
/// outside it keeps: the jobs to hand back ([`Runtime::die`]).
#[derive(Clone, Debug)]
pub struct Runtime {
    me: InstanceId,
    /// Bumped at every death: what belonged to the old process is ignored.
    generation: u32,
    rng: SimRng,
    reports: ReportRule,
    /// The scenario's end: no tick at or after it starts a run.
    window_end_ms: u64,
    next_period: u32,
    /// Its runs, by id: ids grow, and the ones looked up are mostly the newest.
    runs: Table<RunId, RunState, true>,
    /// Its runs that have not ended, oldest first: a cron tick or a crash
    /// visits these, never the whole history of the run.
    live: Vec<RunId>,
    /// Jobs the process died in, with their periods, for the job runner to
    /// hand again at restart (`world.redeliver_after_crash`).
    redeliver: Vec<(RunId, Period)>,
    pending: Table<u32, Pending, true>,
    pool: Pool,
    /// What the strategy reported, handled after it returns.
    notices: VecDeque<Notice>,
}

impl Runtime {
    /// Instance `me`'s runtime, drawing from `rng`, writing the reports
    /// `reports` names, starting runs until `window_end_ms`.
    pub fn new(me: InstanceId, rng: SimRng, world: &World, reports: ReportRule, window_end_ms: u64) -> Runtime {
        Runtime {
            me,
            generation: 0,
            rng,
            reports,
            window_end_ms,
            next_period: 0,
            // Room for a night's runs of one instance. At 8 entries (of 120
            // bytes) the table is a small block, which the allocator hands
            // out and takes back faster than one of 32.
            runs: Table::with_capacity(8),
            live: Vec::with_capacity(4),
            redeliver: Vec::new(),
            // Sized up front: every instance has requests in flight in every run.
            pending: Table::with_capacity(8),
            pool: Pool::new(world.db_pool_size),
            // Sized up front: nearly every instance's strategy reports in every run.
            notices: VecDeque::with_capacity(4),
        }
    }

    pub fn instance(&self) -> InstanceId {
        self.me
    }

    /// How many times the process has died.
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// Run `run` of this instance, if it is one.
    pub fn run(&self, run: RunId) -> Option<&RunState> {
        self.runs.get(&run)
    }

    /// Its runs that have not ended, oldest first, with their state.
    pub(crate) fn live_runs(&self) -> impl Iterator<Item = (RunId, &RunState)> {
        self.live.iter().map(|run| (*run, self.run_state(*run)))
    }

    /// The sessions the pool holds open.
    pub fn pool_sessions(&self) -> Vec<SessionId> {
        self.pool.sessions()
    }

    /// Nothing of the job is in flight here: no live run, no upload still
    /// streaming out (it goes on the wire when it is done, whatever became
    /// of its run).
    pub fn idle(&self) -> bool {
        let streaming =
            self.pending.values().any(|pending| pending.purpose == Purpose::Chunk && pending.timer.is_none());
        self.live.is_empty() && !streaming
    }

    /// Whether the job runner has jobs to hand back at the next start.
    pub fn has_redeliveries(&self) -> bool {
        !self.redeliver.is_empty()
    }

    /// The jobs the job runner hands the process when it starts again
    /// (live mode: the runs its dead process held, with their periods).
    pub fn hand_back(&mut self, jobs: Vec<(RunId, Period)>) {
        self.redeliver = jobs;
    }

    // ----- entry points -----

    /// The process starts for the first time: its cron's first tick.
    pub fn start<H: Host>(&mut self, host: &mut H) {
        self.schedule_next_cron(host);
    }

    /// The process starts again after a crash: the scheduler runs the
    /// latest period it missed, once, then keeps the schedule; the job
    /// runner hands back the jobs the dead process held.
    pub fn restart<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S) {
        let period_ms = i64::try_from(host.world().cron_period_ms.max(1)).unwrap_or(i64::MAX);
        let local = host.local_ms();
        self.next_period = u32::try_from((local / period_ms).max(0)).unwrap_or(0);
        host.set_timer_at(local, InstanceTimer::Cron);
        for (dead, period) in std::mem::take(&mut self.redeliver) {
            self.redeliver_job(host, strategy, dead, period);
        }
        self.handle_notices(host, strategy);
    }

    /// Opens the pool's first connection before the night starts, as a pool
    /// warms up at start (live mode: a real connection takes a while).
    pub fn warm_pool<H: Host>(&mut self, host: &mut H) {
        self.pool_warm_up(host);
    }

    /// A timer of the runtime's fired.
    pub fn on_timer<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S, timer: InstanceTimer) {
        match timer {
            InstanceTimer::Cron => self.cron_fired(host, strategy),
            InstanceTimer::Retry { run } => self.retry_due(host, strategy, run),
            InstanceTimer::Work { run } => self.work_step(host, strategy, run),
            InstanceTimer::Strategy { run, timer } => {
                if !self.ended(run) {
                    strategy.on_timer(&mut self.cx(host, run), timer);
                }
            }
            InstanceTimer::UploadDone { request, timeout_ms } => {
                self.upload_done(host, request, u64::from(timeout_ms));
            }
            InstanceTimer::RequestTimeout { request } => {
                if let Some(pending) = self.pending.remove(&request) {
                    let body = Reply::timeout_for(&pending.body);
                    self.route(host, strategy, pending.run, pending.purpose, body);
                }
            }
        }
        self.handle_notices(host, strategy);
    }

    /// The reply to request `request` came.
    pub fn on_reply<H: Host, S: Drives<H> + ?Sized>(
        &mut self,
        host: &mut H,
        strategy: &mut S,
        request: u32,
        body: Reply,
    ) {
        if let Some(pending) = self.pending.remove(&request) {
            if let Some(timer) = pending.timer {
                host.cancel_timer(timer);
            }
            self.route(host, strategy, pending.run, pending.purpose, body);
        }
        self.handle_notices(host, strategy);
    }

    /// The process resumes after a pause of `paused_ms`: the work its jobs
    /// had left still takes the time it had left, so each job's next step
    /// moves that much later. A step that was due the moment the pause
    /// struck is due now, and comes before the deadlines that passed during the pause.
    pub fn resume_work<H: Host>(&mut self, host: &mut H, paused_ms: u64) {
        for run in self.live.clone() {
            let Some(timer) = self.run_state(run).job.work_timer else { continue };
            host.cancel_timer(timer);
            let state = self.run_state_mut(run);
            state.job.paused_ms += paused_ms;
            state.job.work_timer = None;
            self.schedule_work(host, run);
        }
    }

    /// The process dies: every live run aborts, and what it had in flight
    /// is forgotten (its requests' timers cancelled, its pool emptied). The
    /// job runner keeps the jobs that had started, when it redelivers.
    /// Returns the sessions the pool held, for the host to close or lose.
    pub fn die<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S) -> Vec<SessionId> {
        for run in self.live.clone() {
            let state = self.run_state(run);
            if host.world().redeliver_after_crash && state.started {
                let period = state.period;
                self.redeliver.push((run, period));
            }
            self.log_run(host, run, RunPhase::Aborted(AbortReason::ProcessDied));
            strategy.forget(run);
            self.end_run(host, run);
        }
        self.generation += 1;
        for pending in self.pending.take_values() {
            if let Some(timer) = pending.timer {
                host.cancel_timer(timer);
            }
        }
        let sessions = self.pool.sessions();
        self.pool = Pool::new(self.pool.size());
        sessions
    }

    /// Logs the pool's state if it changed since it was last logged.
    pub fn log_pool<H: Host>(&mut self, host: &mut H) {
        if let Some((busy, open, waiting)) = self.pool.changed() {
            host.record(EventKind::Pool { instance: self.me, busy, open, waiting });
        }
    }

    // ----- requests -----

    /// Sends a request, remembering what the reply is for, with its timeout.
    fn send_request<H: Host>(
        &mut self,
        host: &mut H,
        run: RunId,
        to: Party,
        body: Request,
        purpose: Purpose,
        timeout_ms: Option<u64>,
    ) {
        let request = self.await_reply(host, run, body, purpose, timeout_ms);
        host.transmit(request, run, to, body, timeout_ms);
    }

    /// Remembers what the reply to a new request is for, and sets its timeout; returns the request's id.
    fn await_reply<H: Host>(
        &mut self,
        host: &mut H,
        run: RunId,
        body: Request,
        purpose: Purpose,
        timeout_ms: Option<u64>,
    ) -> u32 {
        let request = host.next_request_id();
        let timer = timeout_ms.map(|after| host.set_timer(after, InstanceTimer::RequestTimeout { request }));
        self.pending.insert(request, Pending { run, purpose, body, timer });
        request
    }

    /// Sends storage a request whose body takes `upload_ms` of the instance's
    /// time to stream out: it leaves when that time is up, and a pause that
    /// strikes meanwhile holds it until the process resumes. Once started,
    /// the upload is not called back when the run stops: the HTTP client
    /// finishes sending what it began, which is how a write checked before a
    /// pause lands after it (Kleppmann 2016). The client's timeout counts
    /// from the end of the upload, as a response timeout does.
    fn send_upload<H: Host>(&mut self, host: &mut H, run: RunId, body: Request, timeout_ms: u64, upload_ms: u64) {
        let request = self.await_reply(host, run, body, Purpose::Chunk, None);
        let timeout_ms = u32::try_from(timeout_ms).expect("a client's timeout fits 32 bits of ms");
        host.set_timer(upload_ms, InstanceTimer::UploadDone { request, timeout_ms });
    }

    /// A request's upload is done: it goes on the wire, unless its answer is
    /// no longer awaited (timed out, or the process died).
    fn upload_done<H: Host>(&mut self, host: &mut H, request: u32, timeout_ms: u64) {
        let Some(pending) = self.pending.get_mut(&request) else {
            return;
        };
        pending.timer = Some(host.set_timer(timeout_ms, InstanceTimer::RequestTimeout { request }));
        let (run, body) = (pending.run, pending.body);
        host.transmit(request, run, Party::Storage, body, Some(timeout_ms));
    }

    /// Hands a reply to what its request (of run `run`) was for. It is given
    /// the two fields it reads, not the whole `Pending` with its request.
    fn route<H: Host, S: Drives<H> + ?Sized>(
        &mut self,
        host: &mut H,
        strategy: &mut S,
        run: RunId,
        purpose: Purpose,
        body: Reply,
    ) {
        match purpose {
            Purpose::Strategy { tag } => strategy.on_reply(&mut self.cx(host, run), tag, body),
            Purpose::Chunk => self.chunk_answered(host, strategy, run, body),
            Purpose::Post => self.write_row(host, strategy, run),
            Purpose::Row => self.row_written(host, strategy, run, body),
            Purpose::Exists { after_acquire } => self.report_checked(host, strategy, run, after_acquire, body),
            Purpose::PoolConnect => self.pool_connected(host, strategy, body),
            Purpose::Pooled { session, query } => {
                let broken = matches!(body, Reply::Sql(SqlOutcome::Error(_)));
                self.pool_checkin(host, session, broken);
                match query {
                    PooledQuery::Exists { after_acquire } => {
                        self.report_checked(host, strategy, run, after_acquire, body);
                    }
                    PooledQuery::Row => self.row_written(host, strategy, run, body),
                }
            }
        }
    }

    /// A statement the job runs on the strategy's own session, else on a
    /// connection from the pool.
    fn send_statement<H: Host, S: Drives<H> + ?Sized>(
        &mut self,
        host: &mut H,
        strategy: &S,
        run: RunId,
        sql: Sql,
        query: PooledQuery,
    ) {
        match strategy.session(run) {
            Some(session) => {
                let purpose = match query {
                    PooledQuery::Exists { after_acquire } => Purpose::Exists { after_acquire },
                    PooledQuery::Row => Purpose::Row,
                };
                let body = Request::Sql { session, sql };
                self.send_request(host, run, Party::Db, body, purpose, Some(SQL_TIMEOUT_MS));
            }
            None => self.pool_request(host, run, PoolJob::Query { sql, query }),
        }
    }

    // ----- notices from the strategy -----

    /// Handles what the strategy reported. Most replies and timers leave no
    /// notice, so the common case is one check here, not a call.
    #[inline]
    fn handle_notices<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S) {
        if !self.notices.is_empty() {
            self.drain_notices(host, strategy);
        }
    }

    fn drain_notices<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S) {
        while let Some(notice) = self.notices.pop_front() {
            match notice {
                Notice::Acquired { run, token } => self.acquired(host, strategy, run, token),
                Notice::Busy { run, retry_after_ms } => self.busy(host, run, retry_after_ms),
                Notice::Lost { run, reason } => self.abort(host, strategy, run, reason),
                Notice::Committed { run, ok } => {
                    if ok {
                        self.finish(host, strategy, run);
                    } else {
                        self.abort(host, strategy, run, AbortReason::SessionLost);
                    }
                }
                Notice::WriteCleared { run } => self.write_cleared(host, strategy, run),
                Notice::Checkout { run, tag, result } => {
                    strategy.on_reply(&mut self.cx(host, run), tag, Reply::Checkout(result));
                }
            }
        }
    }

    /// The context a strategy acts through for `run`.
    fn cx<'a, H>(&'a mut self, host: &'a mut H, run: RunId) -> RunCx<'a, H> {
        RunCx { runtime: self, host, run }
    }

    /// The token the writes of run `run` (whose state is `state`) carry: the
    /// strategy's; a redelivered job, which never asked the strategy for the
    /// lock, has none. The caller has the state at hand, so it is not looked up again.
    #[inline]
    fn write_token<H: Host, S: Drives<H> + ?Sized>(strategy: &S, run: RunId, state: &RunState) -> Option<Token> {
        if state.redelivered { None } else { strategy.token(run) }
    }

    /// The report row period `period`'s run writes, written `how`: the day's
    /// (or period's) report, except that a first-writer-wins insert keeps
    /// its unique key (job, period), as the contract's option D has it.
    #[inline]
    fn row_report(&self, how: crate::event::RowWrite, period: Period) -> ReportOf {
        match how {
            crate::event::RowWrite::InsertOrNothing => ReportOf::Period(period),
            crate::event::RowWrite::Upsert | crate::event::RowWrite::FencedUpsert => self.reports.report_of(period),
        }
    }
}

/// What a strategy sees of the runtime for one run: what it does becomes the
/// runtime's requests, timers and notices, bound to that run.
pub struct RunCx<'a, H> {
    runtime: &'a mut Runtime,
    host: &'a mut H,
    run: RunId,
}

impl<H> std::fmt::Debug for RunCx<'_, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunCx").field("instance", &self.runtime.me).field("run", &self.run).finish()
    }
}

impl<H: Host> Context for RunCx<'_, H> {
    fn run(&self) -> RunId {
        self.run
    }
    fn believes(&self) -> bool {
        self.runtime.run_state(self.run).believes
    }
    fn owner(&self) -> crate::event::Owner {
        self.runtime.run_state(self.run).owner
    }
    fn world(&self) -> &World {
        self.host.world()
    }
    fn local_now(&self) -> i64 {
        self.host.local_ms()
    }
    fn send(&mut self, to: Party, body: Request, tag: Tag, timeout_ms: Option<u64>) {
        self.runtime.send_request(self.host, self.run, to, body, Purpose::Strategy { tag }, timeout_ms);
    }
    fn set_timer(&mut self, after_ms: u64, timer: Timer) -> TimerId {
        self.host.set_timer(after_ms, InstanceTimer::Strategy { run: self.run, timer })
    }
    fn cancel_timer(&mut self, id: TimerId) {
        self.host.cancel_timer(id);
    }
    fn redis_primary(&self) -> Party {
        self.host.redis_primary()
    }
    fn checkout(&mut self, tag: Tag) {
        self.runtime.pool_request(self.host, self.run, PoolJob::Hold { tag });
    }
    fn checkin(&mut self, session: SessionId, broken: bool) {
        self.runtime.pool_checkin(self.host, session, broken);
    }
    fn random_between(&mut self, low: u64, high: u64) -> u64 {
        self.runtime.rng.between(low, high)
    }
    fn acquired(&mut self, token: Option<Token>) {
        self.runtime.notices.push_back(Notice::Acquired { run: self.run, token });
    }
    fn busy(&mut self, retry_after_ms: u64) {
        self.runtime.notices.push_back(Notice::Busy { run: self.run, retry_after_ms });
    }
    fn lost(&mut self, reason: AbortReason) {
        self.runtime.notices.push_back(Notice::Lost { run: self.run, reason });
    }
    fn committed(&mut self, ok: bool) {
        self.runtime.notices.push_back(Notice::Committed { run: self.run, ok });
    }
    fn write_cleared(&mut self) {
        self.runtime.notices.push_back(Notice::WriteCleared { run: self.run });
    }
}
