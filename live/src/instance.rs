//! One instance's process (`locklab live-instance`, its plan the first line
//! of its input): the scheduler's
//! cron, its runs and the job, around the engine's own strategy code
//! ([`locklab_engine::strategy::build_for`]) driven over real connections.
//!
//! The job follows the simulator's instance runtime step for step
//! (`engine/src/sim/runtime.rs`): the cron fires each period with the
//! scenario's jitter; a run checks whether the report exists, takes the lock,
//! checks again, then works `job_ms`, uploading the report's chunks at equal
//! shares of it (each upload taking its second), announces the report on
//! Slack and writes the report row; a loser retries every `retry_ms` and
//! gives up at the next tick. A process restarted after a crash is handed
//! back the jobs it died in, when the world's job runner redelivers.
//!
//! What it does is written to standard output as the engine's events, one
//! JSON line each, stamped with the scenario's time ([`ScaledClock`]); its
//! run ids are its own, and the coordinator numbers them across instances.
//!
//! A GC pause is a real SIGSTOP, so this process cannot see it coming; it
//! sees it afterwards, as a gap in its own clock, and moves its job's
//! remaining steps by the gap: the work left still takes the time it had
//! left, as in the simulator. Its lease timers are not moved: a lease's
//! clock runs on while the process is stopped, which is the point.

use crate::ScaledClock;
use crate::io::{ConsensusLink, Incoming, RedisLink, ResourceLink, Session};
use locklab_clients::{EtcdEndpoint, PostgresEndpoint, RedisEndpoint, SessionSettings};
use locklab_engine::clock::LocalClock;
use locklab_engine::event::{
    AbortReason, ConnectionChange, DbClient, Owner, PutOutcome, RedisCommand, RedisReply, RowLockChange, RowLockMode,
    RowWrite, RunPhase, Sql, SqlError, SqlOutcome, TerminateReason,
};
use locklab_engine::ids::{InstanceId, Party, Period, ReportOf, RunId, SessionId, Token};
use locklab_engine::rng::SimRng;
use locklab_engine::scenario::{ReportRule, Scenario, StrategyId, StrategySettings, World};
use locklab_engine::strategy::{
    CHUNK_UPLOAD_MS, Context, Reply, Request, SQL_TIMEOUT_MS, STORAGE_TIMEOUT_MS, Strategy, Tag,
    Timer as StrategyTimer, TimerId, build_for,
};
use locklab_engine::{Event, EventKind};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::process::ExitCode;
use std::sync::mpsc::{RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

/// A statement that took at least this long (scenario ms) waited for a lock:
/// well above a loopback round trip at any time scale the tool is run at.
const LOCK_WAIT_SEEN_MS: u64 = 500;
/// The longest the event loop sleeps, on the wall clock, before it looks at
/// its clock again: short enough to see a pause as a gap.
const LOOP_TICK: Duration = Duration::from_millis(10);
/// A gap in the loop's wall clock longer than this was a stop, not scheduling noise.
const PAUSE_GAP: Duration = Duration::from_millis(60);

/// A job the job runner hands a restarted process: the run it died in, with
/// its period. No token: the one the dead run held died with its process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Redelivery {
    pub run: u32,
    pub period: u32,
}

/// Everything an instance process is told when it starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstancePlan {
    pub instance: InstanceId,
    pub scenario_json: String,
    pub strategy: StrategyId,
    pub clock: (u64, u32),
    /// Each Redis node the strategy locks.
    pub redis: Vec<Dial>,
    /// The PostgreSQL server (its URL says who logs in, with what password),
    /// and the schema the sessions' names resolve in.
    pub postgres: Dial,
    pub postgres_schema: Option<String>,
    /// The etcd member, for the consensus lease.
    pub etcd: Option<Dial>,
    /// Storage's and Slack's ports (the coordinator plays both).
    pub storage_port: u16,
    pub slack_port: u16,
    /// The first run id this process may use (its earlier processes used the ones before).
    pub first_run: u32,
    pub redeliver: Vec<Redelivery>,
    /// Whether this process is a restart after a crash.
    pub restarted: bool,
    /// What the names of the lock's keys begin with on the servers (a run
    /// on servers of the user's has keys of its own; empty on live mode's).
    pub key_prefix: String,
    /// The watchdog's tick, and the lag it always reports (µs): see `stall.rs`.
    pub lag_tick_us: u64,
    pub lag_report_over_us: u64,
}

/// A server as an instance reaches it: its URL, with the credentials (the
/// plan goes on the instance's standard input, never its command line,
/// where any user of the machine could read it), and the port of the
/// loopback proxy the instance dials, which forwards to the server.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Dial {
    pub url: String,
    pub proxy_port: u16,
}

impl std::fmt::Debug for Dial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let url = locklab_clients::endpoint::redacted(&self.url);
        f.debug_struct("Dial").field("url", &url).field("proxy_port", &self.proxy_port).finish()
    }
}

impl Dial {
    /// The URL and the proxy's port, as the connections take them.
    fn url_and_port(&self) -> (String, u16) {
        (self.url.clone(), self.proxy_port)
    }
}

/// The plan, the first line of standard input (a pipe from the
/// coordinator: the passwords in its URLs are on no command line), with
/// every URL checked to be one its client can use before any connection is
/// opened, so that a bad one is a usage error.
fn read_plan() -> Result<InstancePlan, String> {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|error| format!("cannot read the plan on standard input: {error}"))?;
    let plan: InstancePlan =
        serde_json::from_str(&line).map_err(|error| format!("the plan does not parse: {error}"))?;
    check_urls(&plan)?;
    Ok(plan)
}

/// Whether every URL of the plan is one its client can use.
fn check_urls(plan: &InstancePlan) -> Result<(), String> {
    for redis in &plan.redis {
        RedisEndpoint::parse(&redis.url).map_err(|error| error.to_string())?;
    }
    PostgresEndpoint::parse(&plan.postgres.url).map_err(|error| error.to_string())?;
    if let Some(etcd) = &plan.etcd {
        EtcdEndpoint::parse(&etcd.url).map_err(|error| error.to_string())?;
    }
    Ok(())
}

/// The process's entry point: reads the plan (the first line of its
/// input), runs until the coordinator closes standard input. A plan that
/// does not parse, or names a server by a URL its client cannot use, is a
/// usage error.
pub fn main() -> ExitCode {
    let plan = match read_plan() {
        Ok(plan) => plan,
        Err(error) => {
            eprintln!("locklab live-instance: {error}");
            return ExitCode::from(2);
        }
    };
    let scenario = match Scenario::from_json(&plan.scenario_json) {
        Ok(scenario) => scenario,
        Err(error) => {
            eprintln!("locklab live-instance: {error}");
            return ExitCode::from(2);
        }
    };
    // How late this process runs, for the coordinator to judge the run by.
    let _watchdog = crate::stall::Watchdog::start(
        Duration::from_micros(plan.lag_tick_us.max(1_000)),
        Duration::from_micros(plan.lag_report_over_us),
        |lag| {
            let line = serde_json::to_string(&crate::stall::LagLine { lag }).unwrap_or_default();
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        },
    );
    let (replies, inbox) = channel();
    let stop = replies.clone();
    std::thread::spawn(move || {
        // The coordinator steps or skews this instance's clock with a line
        // (`jump MS`, `drift PPM`), and ends the run by closing the input.
        for line in std::io::stdin().lines().map_while(Result::ok) {
            let mut words = line.split(' ');
            let (what, number) = (words.next(), words.next().and_then(|number| number.parse::<i64>().ok()));
            let change = match (what, number) {
                (Some("jump"), Some(by_ms)) => Incoming::ClockJump { by_ms },
                (Some("drift"), Some(ppm)) => Incoming::ClockDrift { ppm },
                _ => continue,
            };
            if stop.send(change).is_err() {
                return;
            }
        }
        let _ = stop.send(Incoming::Stop);
    });
    let settings = scenario.settings_for(plan.strategy);
    let mut strategy: Box<dyn Strategy<Host>> = build_for(&settings);
    let mut host = Host::new(&plan, &scenario, replies);
    host.begin(&plan, strategy.as_mut());
    let mut last_wake = Instant::now();
    loop {
        host.turn_ms = None;
        let wait = host.next_deadline_ms().map_or(LOOP_TICK, |deadline| {
            let left = u64::try_from(deadline - host.local_ms()).unwrap_or(0);
            host.clock.real(left).min(LOOP_TICK)
        });
        let mut received = inbox.recv_timeout(wait);
        let gap = last_wake.elapsed().saturating_sub(wait);
        last_wake = Instant::now();
        host.turn_ms = Some(host.clock.now_ms());
        if gap > PAUSE_GAP {
            let scale = u64::from(host.clock.time_scale);
            host.resume_work(u64::try_from(gap.as_millis()).unwrap_or(0).saturating_mul(scale));
        }
        // Every reply already here is read before any timer fires: after a
        // pause, a reply waiting in the socket beats the timeout that came due
        // while the process was stopped, as it does in a client library.
        loop {
            match received {
                Ok(Incoming::Stop) | Err(RecvTimeoutError::Disconnected) => return ExitCode::SUCCESS,
                Ok(Incoming::Reply { request, reply }) => host.reply(request, reply, strategy.as_mut()),
                Ok(Incoming::Opened { request, session }) => host.opened(request, session, strategy.as_mut()),
                Ok(Incoming::SessionEnded { session, error }) => host.session_ended(session, error),
                Ok(Incoming::ClockJump { by_ms }) => host.change_clock(|clock, now| clock.jump(now, by_ms)),
                Ok(Incoming::ClockDrift { ppm }) => host.change_clock(|clock, now| clock.set_drift(now, ppm)),
                Err(RecvTimeoutError::Timeout) => break,
            }
            received = inbox.try_recv().map_err(|error| match error {
                std::sync::mpsc::TryRecvError::Empty => RecvTimeoutError::Timeout,
                std::sync::mpsc::TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
            });
        }
        host.fire_due(strategy.as_mut());
    }
}

/// Where a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Trying,
    Waiting,
    RetryCheck,
    Checking,
    Working,
    Finishing,
    Ended,
}

#[derive(Clone, Debug)]
struct RunState {
    period: Period,
    owner: Owner,
    stage: Stage,
    token: Option<Token>,
    believes: bool,
    started: bool,
    redelivered: bool,
    chunks_in_flight: u8,
    retry_timer: Option<TimerId>,
    work_timer: Option<TimerId>,
    job_start_ms: i64,
    paused_ms: u64,
    next_step: u8,
}

/// What a timer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timer {
    Cron,
    Retry(RunId),
    Work(RunId),
    UploadDone { run: RunId, request: u32 },
    Strategy { run: RunId, timer: StrategyTimer },
    Timeout { request: u32 },
}

/// What a reply is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    Strategy {
        tag: Tag,
    },
    Exists {
        after_acquire: bool,
    },
    Chunk,
    Post,
    Row,
    /// A statement on a pooled session, given back when answered.
    Pooled {
        session: SessionId,
        query: PooledQuery,
    },
    /// A session the pool opens.
    PoolConnect,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PooledQuery {
    Exists { after_acquire: bool },
    Row,
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    run: RunId,
    purpose: Purpose,
    request: Request,
    timer: Option<TimerId>,
    /// The Redis node a command went to, for its event.
    to: Party,
    /// When it was sent, by the scenario's clock.
    sent_ms: i64,
}

/// What the pool is asked for: a statement to run, or a connection to hold.
#[derive(Clone, Copy, Debug)]
enum PoolJob {
    Query { sql: Sql, query: PooledQuery },
    Hold { tag: Tag },
}

/// What the strategy reported, handled after it returns.
#[derive(Clone, Copy, Debug)]
enum Notice {
    Acquired(RunId, Option<Token>),
    Busy(RunId, u64),
    Lost(RunId, AbortReason),
    Committed(RunId, bool),
    Checkout(RunId, Tag, Result<SessionId, SqlError>),
}

/// The instance's state; it is also the strategy's [`Context`], for the run in `current`.
pub struct Host {
    me: InstanceId,
    world: World,
    /// The scenario's end: no tick after it starts a run (see the simulator's `cron_fired`).
    window_end_ms: u64,
    reports: ReportRule,
    clock: ScaledClock,
    /// When the event loop's current turn began, on the scenario's clock.
    turn_ms: Option<i64>,
    /// What this instance's clock reads: the scenario's time, stepped and skewed by faults.
    local: LocalClock,
    rng: SimRng,
    next_period: u32,
    next_run: u32,
    current: RunId,
    runs: BTreeMap<RunId, RunState>,
    timers: BTreeMap<(i64, u32), Timer>,
    timer_keys: BTreeMap<u32, (i64, u32)>,
    next_timer: u32,
    pending: BTreeMap<u32, Pending>,
    next_request: u32,
    notices: VecDeque<Notice>,
    redis: Vec<RedisLink>,
    consensus: Option<ConsensusLink>,
    storage: ResourceLink,
    slack: ResourceLink,
    /// The PostgreSQL server's URL and the proxy's port.
    postgres: (String, u16),
    replies: Sender<Incoming>,
    sessions: BTreeMap<SessionId, Session>,
    pool_free: Vec<SessionId>,
    pool_busy: Vec<SessionId>,
    pool_connecting: u8,
    pool_waiters: VecDeque<(RunId, PoolJob)>,
    next_session: u32,
    /// What every session sets with its login: its name, its schema, and
    /// the db-lock strategy's server timeouts, scaled.
    session_settings: SessionSettings,
    /// Sessions the server ended between statements, and what their next statement gets.
    ended_sessions: BTreeMap<SessionId, SqlError>,
    /// The sessions holding the jobs row's `FOR UPDATE`.
    row_lock_sessions: Vec<(SessionId, RowLockMode)>,
    /// The pool as last logged: busy, open, waiting.
    pool_logged: (u8, u8, u16),
    out: std::io::Stdout,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host").field("instance", &self.me).field("runs", &self.runs.len()).finish()
    }
}

impl Host {
    fn new(plan: &InstancePlan, scenario: &Scenario, replies: Sender<Incoming>) -> Host {
        // The instance's stream is the scenario's seed forked once per
        // instance before it; a restart forks one more, so it draws anew.
        let mut root = SimRng::from_seed(scenario.seed);
        let mut rng = root.fork();
        for _ in 0..u32::from(plan.instance.0) + u32::from(plan.restarted) * 16 {
            rng = root.fork();
        }
        let redis = plan
            .redis
            .iter()
            .map(|node| RedisLink::start(node.url.clone(), node.proxy_port, plan.key_prefix.clone(), replies.clone()))
            .collect();
        Host {
            me: plan.instance,
            world: scenario.world.clone(),
            window_end_ms: scenario.duration_ms(),
            reports: ReportRule::of(scenario),
            clock: ScaledClock { start_unix_us: plan.clock.0, time_scale: plan.clock.1 },
            turn_ms: None,
            local: LocalClock::default(),
            rng,
            next_period: 0,
            next_run: plan.first_run,
            current: RunId(plan.first_run),
            runs: BTreeMap::new(),
            timers: BTreeMap::new(),
            timer_keys: BTreeMap::new(),
            next_timer: 0,
            pending: BTreeMap::new(),
            next_request: 0,
            notices: VecDeque::new(),
            redis,
            consensus: plan.etcd.as_ref().map(|etcd| {
                let lease_base = u32::from(plan.instance.0) * 10_000 + plan.first_run * 100 + 1;
                let lease_key = format!("{}{}", plan.key_prefix, locklab_engine::event::LEASE_KEY);
                ConsensusLink::start(etcd.url_and_port(), lease_key, lease_base, plan.clock.1, replies.clone())
            }),
            storage: ResourceLink::start(plan.storage_port, replies.clone()),
            slack: ResourceLink::start(plan.slack_port, replies.clone()),
            postgres: plan.postgres.url_and_port(),
            replies,
            sessions: BTreeMap::new(),
            pool_free: Vec::new(),
            pool_busy: Vec::new(),
            pool_connecting: 0,
            pool_waiters: VecDeque::new(),
            next_session: u32::from(plan.instance.0) * 1_000 + plan.first_run * 10,
            session_settings: session_settings(
                &scenario.settings_for(plan.strategy),
                plan.clock.1,
                plan.postgres_schema.clone(),
            ),
            ended_sessions: BTreeMap::new(),
            row_lock_sessions: Vec::new(),
            pool_logged: (0, 0, 0),
            out: std::io::stdout(),
        }
    }

    /// The first things the process does: its cron, and (after a restart)
    /// the jobs the runner hands it back.
    fn begin(&mut self, plan: &InstancePlan, strategy: &mut dyn Strategy<Host>) {
        // The pool's first connection is opened before the night starts, as
        // a pool warms up at start: PostgreSQL's connection handshake takes a
        // few ms of wall time, which the time scale would turn into most of
        // a second before the first job, where the simulator's connect is a
        // round trip. The simulator's first jobs start when the live ones do.
        if self.world.db_pool_size > 0 {
            self.pool_connecting += 1;
            self.open_session(self.current);
        }
        let period_ms = i64::try_from(self.world.cron_period_ms.max(1)).unwrap_or(i64::MAX);
        let now = self.local_ms();
        if plan.restarted {
            // The scheduler runs the latest period it missed, once, then keeps the schedule.
            self.next_period = u32::try_from((now / period_ms).max(0)).unwrap_or(0);
            self.set_timer_at(now, Timer::Cron);
        } else {
            self.schedule_next_cron();
        }
        for job in &plan.redeliver {
            let period = Period(job.period);
            let run = self.new_run(period, Stage::Checking, None, true);
            self.log_run(run, RunPhase::Redelivered(RunId(job.run)));
            self.record(EventKind::Belief { instance: self.me, run, holds: true, token: None });
            self.check_report(run, true, strategy);
        }
        self.handle_notices(strategy);
    }

    /// The scenario's true time now, in ms (0 before the start).
    /// The scenario's time now: within a turn of the event loop, the
    /// turn's start, so that what one turn does happens at one instant, as
    /// in the simulator (a paused holder's overdue upload and the lease
    /// check that ends its belief are one instant, not a few ms apart).
    fn true_ms(&self) -> u64 {
        u64::try_from(self.turn_ms.unwrap_or_else(|| self.clock.now_ms())).unwrap_or(0)
    }

    /// What this instance's clock reads now: its timers, its cron and its leases go by it.
    fn local_ms(&self) -> i64 {
        self.local.local_at(self.true_ms())
    }

    /// A clock fault: the clock changes now, and says what it reads.
    fn change_clock(&mut self, change: impl FnOnce(&mut LocalClock, u64)) {
        let now = self.true_ms();
        change(&mut self.local, now);
        let (local_ms, drift_ppm) = (self.local_ms(), self.local.drift_ppm());
        self.record(EventKind::Clock { party: Party::Instance(self.me), local_ms, drift_ppm });
    }

    fn record(&mut self, kind: EventKind) {
        let at_ms = self.true_ms();
        self.record_at(at_ms, kind);
    }

    /// Records an event at a time already past (the coordinator sorts by time).
    fn record_at(&mut self, at_ms: u64, kind: EventKind) {
        let line = serde_json::to_string(&Event { at_ms, kind }).unwrap_or_default();
        let mut out = self.out.lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }

    fn state(&self, run: RunId) -> Option<&RunState> {
        self.runs.get(&run)
    }

    fn state_mut(&mut self, run: RunId) -> &mut RunState {
        self.runs.get_mut(&run).unwrap_or_else(|| panic!("{run} is not a run of this process"))
    }

    fn ended(&self, run: RunId) -> bool {
        self.state(run).is_none_or(|state| state.stage == Stage::Ended)
    }

    fn log_run(&mut self, run: RunId, phase: RunPhase) {
        let period = self.state_mut(run).period;
        self.record(EventKind::Run { run, instance: self.me, period, phase });
    }

    // ----- timers -----

    fn set_timer_at(&mut self, deadline_ms: i64, timer: Timer) -> TimerId {
        let id = self.next_timer;
        self.next_timer += 1;
        self.timers.insert((deadline_ms, id), timer);
        self.timer_keys.insert(id, (deadline_ms, id));
        TimerId(id)
    }

    fn set_timer_in(&mut self, after_ms: u64, timer: Timer) -> TimerId {
        let deadline = self.local_ms().saturating_add(i64::try_from(after_ms).unwrap_or(i64::MAX / 4));
        self.set_timer_at(deadline, timer)
    }

    fn cancel(&mut self, id: TimerId) {
        if let Some(key) = self.timer_keys.remove(&id.0) {
            self.timers.remove(&key);
        }
    }

    fn next_deadline_ms(&self) -> Option<i64> {
        self.timers.keys().next().map(|(deadline, _)| *deadline)
    }

    fn fire_due(&mut self, strategy: &mut dyn Strategy<Host>) {
        loop {
            let now = self.local_ms();
            let Some((&key, &timer)) = self.timers.iter().next() else { break };
            if key.0 > now {
                break;
            }
            self.timers.remove(&key);
            self.timer_keys.remove(&key.1);
            self.timer(timer, strategy);
            self.handle_notices(strategy);
        }
    }

    fn timer(&mut self, timer: Timer, strategy: &mut dyn Strategy<Host>) {
        match timer {
            Timer::Cron => self.cron_fired(strategy),
            Timer::Retry(run) => {
                if self.state(run).is_some_and(|state| state.stage == Stage::Waiting) {
                    let state = self.state_mut(run);
                    state.stage = Stage::RetryCheck;
                    state.retry_timer = None;
                    self.check_report(run, false, strategy);
                }
            }
            Timer::Work(run) => self.work_step(run, strategy),
            Timer::UploadDone { run, request } => {
                // The upload's last bytes leave: storage gets the PUT now, and
                // the client starts waiting for its answer (as in the simulator).
                let Some(pending) = self.pending.get(&request).copied() else { return };
                if let Request::Put { period, report, chunk, own_object, token } = pending.request {
                    let timeout = self.set_timer_in(STORAGE_TIMEOUT_MS, Timer::Timeout { request });
                    if let Some(pending) = self.pending.get_mut(&request) {
                        pending.timer = Some(timeout);
                    }
                    let line = put_line(self.me, run, period, report, chunk, own_object, token);
                    self.storage.send(request, line, self.clock.real(STORAGE_TIMEOUT_MS));
                }
            }
            Timer::Strategy { run, timer } => {
                if !self.ended(run) {
                    self.current = run;
                    strategy.on_timer(self, timer);
                }
            }
            Timer::Timeout { request } => {
                if let Some(pending) = self.pending.remove(&request) {
                    let reply = Reply::timeout_for(&pending.request);
                    self.route(pending, reply, strategy);
                }
            }
        }
    }

    /// The process was stopped for `paused_ms` of the scenario's time: each
    /// job's remaining steps move that much later.
    fn resume_work(&mut self, paused_ms: u64) {
        let working: Vec<RunId> =
            self.runs.iter().filter(|(_, state)| state.work_timer.is_some()).map(|(run, _)| *run).collect();
        for run in working {
            let state = self.state_mut(run);
            state.paused_ms += paused_ms;
            if let Some(timer) = state.work_timer.take() {
                self.cancel(timer);
            }
            self.schedule_work(run);
        }
    }

    // ----- cron and runs -----

    fn schedule_next_cron(&mut self) {
        let period_ms = i64::try_from(self.world.cron_period_ms).unwrap_or(i64::MAX);
        let jitter = i64::try_from(self.rng.below(self.world.cron_jitter_ms + 1)).unwrap_or(0);
        let deadline = i64::from(self.next_period) * period_ms + jitter;
        self.set_timer_at(deadline, Timer::Cron);
    }

    fn cron_fired(&mut self, strategy: &mut dyn Strategy<Host>) {
        let period_ms = i64::try_from(self.world.cron_period_ms.max(1)).unwrap_or(i64::MAX);
        let current = u32::try_from((self.local_ms() / period_ms).max(0)).unwrap_or(u32::MAX);
        let period = Period(self.next_period.max(current));
        self.next_period = period.0 + 1;
        // After the window's end a tick starts no run, but still ends the
        // retries of the period before it, as in the simulator.
        let in_window = self.true_ms() < self.window_end_ms;
        if in_window {
            self.record(EventKind::Cron { instance: self.me, period });
        }
        self.schedule_next_cron();
        let waiting: Vec<RunId> = self
            .runs
            .iter()
            .filter(|(_, state)| matches!(state.stage, Stage::Waiting | Stage::RetryCheck))
            .map(|(run, _)| *run)
            .collect();
        for run in waiting {
            self.log_run(run, RunPhase::GaveUp);
            strategy.forget(run);
            self.end_run(run);
        }
        if !in_window {
            return;
        }
        let run = self.new_run(period, Stage::Trying, None, false);
        self.log_run(run, RunPhase::Trying);
        self.current = run;
        strategy.acquire(self);
    }

    fn new_run(&mut self, period: Period, stage: Stage, token: Option<Token>, redelivered: bool) -> RunId {
        let run = RunId(self.next_run);
        self.next_run += 1;
        let owner = Owner { instance: self.me, nonce: self.rng.nonce() };
        let state = RunState {
            period,
            owner,
            stage,
            token,
            believes: redelivered,
            started: false,
            redelivered,
            chunks_in_flight: 0,
            retry_timer: None,
            work_timer: None,
            job_start_ms: 0,
            paused_ms: 0,
            next_step: 0,
        };
        self.runs.insert(run, state);
        run
    }

    fn write_token(&self, run: RunId, strategy: &dyn Strategy<Host>) -> Option<Token> {
        let state = self.state(run)?;
        // A redelivered job never asked the strategy for the lock: it has no token.
        if state.redelivered { None } else { strategy.token(run) }
    }

    fn row_report(&self, run: RunId, period: Period, strategy: &dyn Strategy<Host>) -> ReportOf {
        match strategy.report_row(run) {
            RowWrite::InsertOrNothing => ReportOf::Period(period),
            RowWrite::Upsert | RowWrite::FencedUpsert => self.reports.report_of(period),
        }
    }

    fn handle_notices(&mut self, strategy: &mut dyn Strategy<Host>) {
        while let Some(notice) = self.notices.pop_front() {
            match notice {
                Notice::Acquired(run, token) => self.acquired(run, token, strategy),
                Notice::Busy(run, retry_after_ms) => self.busy(run, retry_after_ms),
                Notice::Lost(run, reason) => self.abort(run, reason, strategy),
                Notice::Committed(run, true) => self.finish(run, strategy),
                Notice::Committed(run, false) => self.abort(run, AbortReason::SessionLost, strategy),
                Notice::Checkout(run, tag, result) => {
                    self.current = run;
                    strategy.on_reply(self, tag, Reply::Checkout(result));
                }
            }
        }
    }

    fn acquired(&mut self, run: RunId, token: Option<Token>, strategy: &mut dyn Strategy<Host>) {
        if self.ended(run) {
            return;
        }
        let takes_lock = strategy.takes_lock();
        let state = self.state_mut(run);
        state.token = token;
        state.believes = takes_lock;
        state.stage = Stage::Checking;
        self.log_run(run, RunPhase::Acquired);
        if takes_lock {
            self.record(EventKind::Belief { instance: self.me, run, holds: true, token });
        }
        self.check_report(run, true, strategy);
    }

    fn busy(&mut self, run: RunId, retry_after_ms: u64) {
        if self.ended(run) {
            return;
        }
        self.log_run(run, RunPhase::Busy);
        self.state_mut(run).stage = Stage::Waiting;
        let timer = self.set_timer_in(retry_after_ms, Timer::Retry(run));
        if let Some(previous) = self.state_mut(run).retry_timer.replace(timer) {
            self.cancel(previous);
        }
    }

    fn abort(&mut self, run: RunId, reason: AbortReason, strategy: &mut dyn Strategy<Host>) {
        if self.ended(run) {
            return;
        }
        self.log_run(run, RunPhase::Aborted(reason));
        self.current = run;
        strategy.release(self);
        self.end_run(run);
    }

    fn finish(&mut self, run: RunId, strategy: &mut dyn Strategy<Host>) {
        if self.ended(run) {
            return;
        }
        self.log_run(run, RunPhase::Finished);
        self.current = run;
        strategy.release(self);
        self.end_run(run);
    }

    fn drop_belief(&mut self, run: RunId) {
        let state = self.state_mut(run);
        if state.believes {
            state.believes = false;
            self.record(EventKind::Belief { instance: self.me, run, holds: false, token: None });
        }
    }

    fn end_run(&mut self, run: RunId) {
        self.drop_belief(run);
        let state = self.state_mut(run);
        state.stage = Stage::Ended;
        let timers = [state.retry_timer.take(), state.work_timer.take()];
        for timer in timers.into_iter().flatten() {
            self.cancel(timer);
        }
    }

    // ----- the job -----

    fn check_report(&mut self, run: RunId, after_acquire: bool, strategy: &mut dyn Strategy<Host>) {
        let period = self.state_mut(run).period;
        let sql = Sql::ReportExists { period, report: self.row_report(run, period, strategy) };
        let query = PooledQuery::Exists { after_acquire };
        match strategy.session(run) {
            Some(session) => self.send_sql(run, session, sql, Purpose::Exists { after_acquire }),
            None => self.pool_request(run, PoolJob::Query { sql, query }),
        }
    }

    fn report_checked(&mut self, run: RunId, after_acquire: bool, reply: Reply, strategy: &mut dyn Strategy<Host>) {
        if self.ended(run) {
            return;
        }
        let exists = match reply {
            Reply::Sql(SqlOutcome::Rows(rows)) => Some(rows > 0),
            Reply::Redis(_)
            | Reply::Sql(_)
            | Reply::Put(_)
            | Reply::Posted
            | Reply::Consensus(_)
            | Reply::Checkout(_)
            | Reply::Timeout => None,
        };
        self.current = run;
        match (after_acquire, exists) {
            (true, Some(false)) => self.start_job(run, strategy),
            (_, Some(true)) => {
                self.log_run(run, RunPhase::Skipped);
                if after_acquire {
                    strategy.release(self);
                } else {
                    strategy.forget(run);
                }
                self.end_run(run);
            }
            (true, None) => {
                // The database did not answer: careful code does not run the job blind.
                strategy.release(self);
                self.drop_belief(run);
                let retry = self.world.retry_ms;
                self.busy(run, retry);
            }
            (false, _) => {
                self.state_mut(run).stage = Stage::Trying;
                strategy.acquire(self);
            }
        }
    }

    fn start_job(&mut self, run: RunId, strategy: &mut dyn Strategy<Host>) {
        let now = self.local_ms();
        let state = self.state_mut(run);
        state.stage = Stage::Working;
        state.started = true;
        state.job_start_ms = now;
        let redelivered = state.redelivered;
        self.log_run(run, RunPhase::Started);
        if !redelivered {
            self.current = run;
            strategy.job_started(self);
        }
        self.schedule_work(run);
    }

    /// Sets the timer for the job's next step: a chunk, or (after the last) the job's end.
    fn schedule_work(&mut self, run: RunId) {
        let (chunks, job_ms) = (self.world.report_chunks, self.world.job_ms);
        let state = self.state_mut(run);
        let step_ms = job_ms * (u64::from(state.next_step) + 1) / (u64::from(chunks) + 1);
        let due = state.job_start_ms.saturating_add(i64::try_from(step_ms + state.paused_ms).unwrap_or(i64::MAX / 4));
        let timer = self.set_timer_at(due, Timer::Work(run));
        self.state_mut(run).work_timer = Some(timer);
    }

    fn work_step(&mut self, run: RunId, strategy: &mut dyn Strategy<Host>) {
        let chunks = self.world.report_chunks;
        let state = self.state_mut(run);
        state.work_timer = None;
        if state.stage != Stage::Working {
            return;
        }
        let step = state.next_step;
        state.next_step += 1;
        if step < chunks {
            self.write_chunk(run, step, strategy);
            if self.state(run).is_some_and(|state| state.stage == Stage::Working) {
                self.schedule_work(run);
            }
        } else {
            let state = self.state_mut(run);
            state.stage = Stage::Finishing;
            if state.chunks_in_flight == 0 {
                self.post_report(run);
            }
        }
    }

    fn write_chunk(&mut self, run: RunId, chunk: u8, strategy: &mut dyn Strategy<Host>) {
        let period = self.state_mut(run).period;
        let request = Request::Put {
            period,
            report: self.reports.report_of(period),
            chunk,
            own_object: strategy.own_objects(),
            token: self.write_token(run, strategy),
        };
        self.state_mut(run).chunks_in_flight += 1;
        let id = self.track(run, Purpose::Chunk, request, Party::Storage, None);
        self.set_timer_in(CHUNK_UPLOAD_MS, Timer::UploadDone { run, request: id });
    }

    fn chunk_answered(&mut self, run: RunId, reply: Reply, strategy: &mut dyn Strategy<Host>) {
        let state = self.state_mut(run);
        state.chunks_in_flight = state.chunks_in_flight.saturating_sub(1);
        if self.ended(run) {
            return;
        }
        match reply {
            Reply::Put(PutOutcome::Accepted) => {
                let state = self.state_mut(run);
                if state.stage == Stage::Finishing && state.chunks_in_flight == 0 {
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

    fn post_report(&mut self, run: RunId) {
        let period = self.state_mut(run).period;
        let id = self.track(run, Purpose::Post, Request::Post { period }, Party::Slack, Some(STORAGE_TIMEOUT_MS));
        let line = format!("POST {} {} {}", self.me, run.0, period.0);
        self.slack.send(id, line, self.clock.real(STORAGE_TIMEOUT_MS));
    }

    fn write_row(&mut self, run: RunId, strategy: &mut dyn Strategy<Host>) {
        if self.ended(run) {
            return;
        }
        let period = self.state_mut(run).period;
        let sql = Sql::WriteReport {
            period,
            report: self.row_report(run, period, strategy),
            run,
            token: self.write_token(run, strategy),
            how: strategy.report_row(run),
        };
        match strategy.session(run) {
            Some(session) => self.send_sql(run, session, sql, Purpose::Row),
            None => self.pool_request(run, PoolJob::Query { sql, query: PooledQuery::Row }),
        }
    }

    fn row_written(&mut self, run: RunId, reply: Reply, strategy: &mut dyn Strategy<Host>) {
        if self.ended(run) {
            return;
        }
        self.current = run;
        match reply {
            Reply::Sql(SqlOutcome::Rows(_)) => {
                if strategy.session(run).is_some() {
                    // Sending COMMIT is where the client stops relying on the lock.
                    self.drop_belief(run);
                    strategy.commit_report(self);
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

    // ----- requests and replies -----

    /// Remembers a request and arms its timeout; returns its number.
    fn track(&mut self, run: RunId, purpose: Purpose, request: Request, to: Party, timeout_ms: Option<u64>) -> u32 {
        let id = self.next_request;
        self.next_request += 1;
        let timer = timeout_ms.map(|timeout_ms| self.set_timer_in(timeout_ms, Timer::Timeout { request: id }));
        let sent_ms = self.clock.now_ms();
        self.pending.insert(id, Pending { run, purpose, request, timer, to, sent_ms });
        id
    }

    fn send_sql(&mut self, run: RunId, session: SessionId, sql: Sql, purpose: Purpose) {
        let request = Request::Sql { session, sql };
        let id = self.track(run, purpose, request, Party::Db, Some(SQL_TIMEOUT_MS));
        self.dispatch_sql(id, session, sql, self.clock.real(SQL_TIMEOUT_MS));
    }

    /// Hands a statement to its session's thread; a session the server ended
    /// answers with the error its end left (as the server's next reply would).
    fn dispatch_sql(&mut self, id: u32, session: SessionId, sql: Sql, limit: Duration) {
        if let Some(error) = self.ended_sessions.get(&session) {
            let reply = Reply::Sql(SqlOutcome::Error(*error));
            let _ = self.replies.send(Incoming::Reply { request: id, reply });
            return;
        }
        match self.sessions.get(&session) {
            Some(open) => open.send(id, sql, limit),
            None => {
                let reply = Reply::Sql(SqlOutcome::Error(SqlError::ConnectionClosed));
                let _ = self.replies.send(Incoming::Reply { request: id, reply });
            }
        }
    }

    fn reply(&mut self, request: u32, reply: Reply, strategy: &mut dyn Strategy<Host>) {
        let Some(pending) = self.pending.remove(&request) else { return };
        if let Some(timer) = pending.timer {
            self.cancel(timer);
        }
        self.route(pending, reply, strategy);
        self.handle_notices(strategy);
    }

    fn route(&mut self, pending: Pending, reply: Reply, strategy: &mut dyn Strategy<Host>) {
        let run = pending.run;
        self.log_reply(&pending, reply);
        match pending.purpose {
            Purpose::Strategy { tag } => {
                if !self.ended(run) {
                    self.current = run;
                    strategy.on_reply(self, tag, reply);
                }
            }
            Purpose::Exists { after_acquire } => self.report_checked(run, after_acquire, reply, strategy),
            Purpose::Chunk => self.chunk_answered(run, reply, strategy),
            Purpose::Post => self.write_row(run, strategy),
            Purpose::Row => self.row_written(run, reply, strategy),
            Purpose::Pooled { session, query } => {
                let broken = matches!(reply, Reply::Sql(SqlOutcome::Error(_)));
                self.pool_checkin(session, broken);
                match query {
                    PooledQuery::Exists { after_acquire } => self.report_checked(run, after_acquire, reply, strategy),
                    PooledQuery::Row => self.row_written(run, reply, strategy),
                }
            }
            Purpose::PoolConnect => {}
        }
    }

    /// The events a reply makes: the command and its answer, as the server
    /// gave it, and a report row that took effect.
    fn log_reply(&mut self, pending: &Pending, reply: Reply) {
        let run = pending.run;
        match (pending.request, reply) {
            (Request::Redis(command), Reply::Redis(reply)) => {
                self.record(EventKind::Redis { node: pending.to, client: self.me, run, command, reply });
            }
            (Request::Sql { session, sql }, Reply::Sql(outcome)) => {
                let client = DbClient::Instance(self.me);
                let now = self.clock.now_ms();
                let took_ms = u64::try_from(now - pending.sent_ms).unwrap_or(0);
                // A statement that took longer than a round trip waited for a lock.
                let waited_ms = if took_ms >= LOCK_WAIT_SEEN_MS { took_ms } else { 0 };
                if let Sql::LockJobRow { strength, .. } = sql {
                    let mode = RowLockMode::of(strength);
                    let row_lock = |change| EventKind::RowLock { session, client, mode, change };
                    let change = match outcome {
                        SqlOutcome::Rows(1..) => Some(RowLockChange::Granted),
                        SqlOutcome::Error(SqlError::LockTimeout | SqlError::Timeout) => Some(RowLockChange::GaveUp),
                        SqlOutcome::Rows(0)
                        | SqlOutcome::Connected(_)
                        | SqlOutcome::StaleToken { .. }
                        | SqlOutcome::Error(_) => None,
                    };
                    if waited_ms > 0 && change.is_some() {
                        let at_ms = u64::try_from(pending.sent_ms).unwrap_or(0);
                        self.record_at(at_ms, row_lock(RowLockChange::Waiting));
                    }
                    if let Some(change) = change {
                        self.record(row_lock(change));
                    }
                    if change == Some(RowLockChange::Granted) {
                        self.row_lock_sessions.push((session, mode));
                    }
                }
                self.record(EventKind::Sql { session, client, run: Some(run), statement: sql, outcome, waited_ms });
                if let (Sql::WriteReport { period, report, token, .. }, SqlOutcome::Rows(1..)) = (sql, outcome) {
                    self.record(EventKind::RowApplied { period, report, run, token });
                }
                let ended = matches!(sql, Sql::Commit | Sql::Rollback)
                    || matches!(
                        outcome,
                        SqlOutcome::Error(SqlError::ConnectionClosed | SqlError::IdleInTransactionTimeout)
                    );
                if ended {
                    self.release_row_lock(session);
                }
            }
            (Request::Consensus(op), Reply::Consensus(reply)) => {
                self.record(EventKind::Consensus { client: self.me, run, op, reply });
            }
            (
                Request::Redis(_)
                | Request::Sql { .. }
                | Request::Put { .. }
                | Request::Post { .. }
                | Request::Consensus(_),
                Reply::Redis(_)
                | Reply::Sql(_)
                | Reply::Put(_)
                | Reply::Posted
                | Reply::Consensus(_)
                | Reply::Checkout(_)
                | Reply::Timeout,
            ) => {}
        }
    }

    // ----- the connection pool -----

    fn pool_request(&mut self, run: RunId, job: PoolJob) {
        self.pool_waiters.push_back((run, job));
        self.pool_pump();
    }

    fn pool_checkin(&mut self, session: SessionId, broken: bool) {
        self.pool_busy.retain(|busy| *busy != session);
        if broken {
            self.sessions.remove(&session);
        } else {
            self.pool_free.push(session);
        }
        self.pool_pump();
    }

    fn log_pool(&mut self) {
        let busy = u8::try_from(self.pool_busy.len()).unwrap_or(u8::MAX);
        let open = u8::try_from(self.pool_busy.len() + self.pool_free.len()).unwrap_or(u8::MAX);
        let waiting = u16::try_from(self.pool_waiters.len()).unwrap_or(u16::MAX);
        if self.pool_logged != (busy, open, waiting) {
            self.pool_logged = (busy, open, waiting);
            self.record(EventKind::Pool { instance: self.me, busy, open, waiting });
        }
    }

    fn pool_pump(&mut self) {
        while !self.pool_free.is_empty() {
            let Some((run, job)) = self.pool_waiters.pop_front() else { break };
            let session = self.pool_free.remove(0);
            self.pool_busy.push(session);
            match job {
                PoolJob::Query { sql, query } => self.send_sql(run, session, sql, Purpose::Pooled { session, query }),
                PoolJob::Hold { tag } => self.notices.push_back(Notice::Checkout(run, tag, Ok(session))),
            }
        }
        let open = self.pool_free.len() + self.pool_busy.len() + usize::from(self.pool_connecting);
        let room = usize::from(self.world.db_pool_size).saturating_sub(open);
        let wanted = self.pool_waiters.len().saturating_sub(usize::from(self.pool_connecting));
        for _ in 0..room.min(wanted) {
            self.pool_connecting += 1;
            let run = self.pool_waiters.front().map_or(self.current, |(run, _)| *run);
            self.open_session(run);
        }
        self.log_pool();
    }

    /// The pool opens a connection; it joins the pool when the server takes it.
    fn open_session(&mut self, run: RunId) {
        let request = Request::Sql { session: SessionId(0), sql: Sql::Connect };
        let id = self.track(run, Purpose::PoolConnect, request, Party::Db, Some(SQL_TIMEOUT_MS));
        self.next_session += 1;
        let settings = self.session_settings.clone();
        Session::open(id, SessionId(self.next_session), self.postgres.clone(), settings, self.replies.clone());
    }

    /// The server ended `session` on its own: recorded now, with the row lock it held.
    fn session_ended(&mut self, session: SessionId, error: SqlError) {
        self.sessions.remove(&session);
        self.ended_sessions.insert(session, error);
        let client = DbClient::Instance(self.me);
        if error == SqlError::IdleInTransactionTimeout {
            let change = ConnectionChange::Terminated(TerminateReason::IdleInTransactionTimeout);
            self.record(EventKind::Connection { session, client, change });
        }
        self.release_row_lock(session);
    }

    /// The session's transaction ended: the row lock it held (in its mode) goes.
    fn release_row_lock(&mut self, session: SessionId) {
        let Some(position) = self.row_lock_sessions.iter().position(|(held, _)| *held == session) else { return };
        let (_, mode) = self.row_lock_sessions.remove(position);
        let client = DbClient::Instance(self.me);
        self.record(EventKind::RowLock { session, client, mode, change: RowLockChange::Released });
    }

    fn opened(&mut self, request: u32, session: Result<Session, SqlError>, strategy: &mut dyn Strategy<Host>) {
        let Some(pending) = self.pending.remove(&request) else { return };
        if let Some(timer) = pending.timer {
            self.cancel(timer);
        }
        self.pool_connecting = self.pool_connecting.saturating_sub(1);
        match session {
            Ok(session) => {
                let id = session.id;
                self.sessions.insert(id, session);
                self.pool_free.push(id);
            }
            Err(error) => {
                if let Some((run, job)) = self.pool_waiters.pop_front() {
                    let failure = Reply::Sql(SqlOutcome::Error(error));
                    match job {
                        PoolJob::Query { query: PooledQuery::Exists { after_acquire }, .. } => {
                            self.report_checked(run, after_acquire, failure, strategy);
                        }
                        PoolJob::Query { query: PooledQuery::Row, .. } => self.row_written(run, failure, strategy),
                        PoolJob::Hold { tag } => self.notices.push_back(Notice::Checkout(run, tag, Err(error))),
                    }
                }
            }
        }
        self.pool_pump();
        self.handle_notices(strategy);
    }
}

/// A chunk's PUT as the storage line protocol carries it.
fn put_line(
    me: InstanceId,
    run: RunId,
    period: Period,
    report: ReportOf,
    chunk: u8,
    own_object: bool,
    token: Option<Token>,
) -> String {
    let report = serde_json::to_string(&report).unwrap_or_default();
    let token = token.map_or_else(|| "-".to_owned(), |token| token.0.to_string());
    format!("PUT {me} {} {} {report} {chunk} {own_object} {token}", run.0, period.0)
}

impl Context for Host {
    fn run(&self) -> RunId {
        self.current
    }
    fn owner(&self) -> Owner {
        self.state(self.current).map_or(Owner { instance: self.me, nonce: 0 }, |state| state.owner)
    }
    fn world(&self) -> &World {
        &self.world
    }
    fn believes(&self) -> bool {
        self.state(self.current).is_some_and(|state| state.believes)
    }
    fn local_now(&self) -> i64 {
        self.local_ms()
    }
    fn send(&mut self, to: Party, body: Request, tag: Tag, timeout_ms: Option<u64>) {
        let run = self.current;
        let id = self.track(run, Purpose::Strategy { tag }, body, to, timeout_ms);
        // No timeout is what it says: a statement that waits for a row lock
        // waits as long as the run lasts (the connection's thread is its own).
        let limit = timeout_ms.map_or(Duration::from_secs(24 * 3_600), |timeout_ms| self.clock.real(timeout_ms));
        match (to, body) {
            (Party::Redis(node), Request::Redis(command)) => match self.redis.get(usize::from(node.0)) {
                Some(link) => link.send(id, scaled(command, self.clock.time_scale), limit),
                None => {
                    let reply = Reply::Redis(RedisReply::ConnectionRefused);
                    let _ = self.replies.send(Incoming::Reply { request: id, reply });
                }
            },
            (_, Request::Sql { session, sql }) => self.dispatch_sql(id, session, sql, limit),
            (Party::Consensus, Request::Consensus(op)) if self.consensus.is_some() => {
                if let Some(link) = self.consensus.as_ref() {
                    link.send(id, op, limit);
                }
            }
            (
                Party::Instance(_)
                | Party::Redis(_)
                | Party::RedisReplica
                | Party::Db
                | Party::Storage
                | Party::Slack
                | Party::Consensus,
                Request::Redis(_) | Request::Put { .. } | Request::Post { .. } | Request::Consensus(_),
            ) => {
                // Not played live (the consensus store, a replica): the
                // coordinator refuses such runs before they start.
                let reply = Reply::timeout_for(&body);
                let _ = self.replies.send(Incoming::Reply { request: id, reply });
            }
        }
    }
    fn set_timer(&mut self, after_ms: u64, timer: StrategyTimer) -> TimerId {
        let run = self.current;
        self.set_timer_in(after_ms, Timer::Strategy { run, timer })
    }
    fn cancel_timer(&mut self, id: TimerId) {
        self.cancel(id);
    }
    fn redis_primary(&self) -> Party {
        Party::Redis(locklab_engine::ids::RedisNodeId(0))
    }
    fn checkout(&mut self, tag: Tag) {
        let run = self.current;
        self.pool_request(run, PoolJob::Hold { tag });
    }
    fn checkin(&mut self, session: SessionId, broken: bool) {
        self.pool_checkin(session, broken);
    }
    fn random_between(&mut self, low: u64, high: u64) -> u64 {
        self.rng.between(low, high)
    }
    fn acquired(&mut self, token: Option<Token>) {
        self.notices.push_back(Notice::Acquired(self.current, token));
    }
    fn busy(&mut self, retry_after_ms: u64) {
        self.notices.push_back(Notice::Busy(self.current, retry_after_ms));
    }
    fn lost(&mut self, reason: AbortReason) {
        self.notices.push_back(Notice::Lost(self.current, reason));
    }
    fn committed(&mut self, ok: bool) {
        self.notices.push_back(Notice::Committed(self.current, ok));
    }
}

/// The command with its TTL on the wall clock's scale: what the real server
/// must count down. `EX` in whole seconds becomes `PX` when the scaled TTL is
/// not a whole second.
fn scaled(command: RedisCommand, time_scale: u32) -> RedisCommand {
    let scale = u64::from(time_scale.max(1));
    let ms = |ttl_ms: u64| (ttl_ms / scale).max(1);
    match command {
        RedisCommand::SetNxEx { value, ttl_s } => RedisCommand::SetNxPx { value, ttl_ms: ms(ttl_s * 1_000) },
        RedisCommand::SetNxPx { value, ttl_ms } => RedisCommand::SetNxPx { value, ttl_ms: ms(ttl_ms) },
        RedisCommand::SetNxPxIncr { value, ttl_ms } => RedisCommand::SetNxPxIncr { value, ttl_ms: ms(ttl_ms) },
        RedisCommand::Pexpire { ttl_ms } => RedisCommand::Pexpire { ttl_ms: ms(ttl_ms) },
        RedisCommand::CompareAndExtend { value, ttl_ms } => {
            RedisCommand::CompareAndExtend { value, ttl_ms: ms(ttl_ms) }
        }
        RedisCommand::Get | RedisCommand::Del | RedisCommand::Incr | RedisCommand::CompareAndDelete { .. } => command,
    }
}

/// What every session of the instance sets with its login: live mode's
/// application name (the coordinator counts its sessions by it), the run's
/// schema on a server of the user's, and the db-lock strategy's
/// `lock_timeout` and `idle_in_transaction_session_timeout` on the wall
/// clock's scale (as the simulator applies them to instances' sessions).
fn session_settings(settings: &StrategySettings, time_scale: u32, schema: Option<String>) -> SessionSettings {
    let scaled = |ms: u64| Duration::from_millis((ms / u64::from(time_scale.max(1))).max(1));
    let mut session = SessionSettings {
        application_name: Some(crate::servers::APPLICATION_NAME.to_owned()),
        search_path: schema,
        ..SessionSettings::default()
    };
    if let StrategySettings::DbLock(db_lock) = settings {
        session.lock_timeout = (db_lock.lock_timeout_ms > 0).then(|| scaled(db_lock.lock_timeout_ms));
        session.idle_in_transaction_session_timeout =
            (db_lock.idle_in_transaction_timeout_ms > 0).then(|| scaled(db_lock.idle_in_transaction_timeout_ms));
    }
    session
}
