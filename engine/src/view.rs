//! The world at a moment, and the timeline's lanes: pure functions of the
//! event log, for the browser lab (and anything else that draws a run).
//!
//! [`Timeline::build`] reads a log once and derives everything drawn along the
//! time axis: what each instance believed beside what the lock service
//! granted, the stretches where two believed at once, process states, Redis
//! keys per node, the jobs-row lock, every write with its token and verdict,
//! Slack posts, fault markers and the cost series. [`Timeline::world_at`]
//! gives the state of every party at a time: it replays the log from the
//! nearest checkpoint, so scrubbing a three-hour run costs a few hundred
//! events per frame, not the whole log.
//!
//! The world at a moment holds only what the log says: a replica's keys are
//! what its `replicated` events bring, a lease's deadline moves only at the
//! replies and refreshes the log records, and a key's TTL is read against
//! the clock of its node that the log's clock events give.
//!
//! No I/O, no hash maps: same log, same view.

use crate::clock::LocalClock;
use crate::event::{
    BackgroundOutcome, ConnectionChange, ConsensusOp, ConsensusReply, DbClient, Event, EventKind, LockKey, LockValue,
    Owner, ProcessState, PutOutcome, RedisCommand, RedisReply, RowLockChange, RowLockMode, RunPhase, Sql, SqlOutcome,
};
use crate::ids::{InstanceId, LeaseId, MessageId, Party, Period, ReportOf, RunId, SessionId, Token};
use crate::scenario::{Fault, Scenario, StrategyId};
use crate::table::Table;

/// Events replayed between two checkpoints of the world.
const CHECKPOINT_EVERY: u32 = 256;
/// How many of the last Slack posts the world at the cursor keeps.
const RECENT_POSTS: usize = 2;
/// How many buckets the cost series have.
pub const SERIES_BUCKETS: u32 = 240;
/// How long a dropped message stays on screen, in simulated time.
const DROPPED_VISIBLE_MS: u64 = 400;

/// A stretch of time `[from_ms, to_ms)`; `to_ms` is the run's end while open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub from_ms: u64,
    pub to_ms: u64,
}

/// An instance's belief, or the lock service's grant, over a stretch of time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockSpan {
    pub instance: InstanceId,
    pub run: RunId,
    pub token: Option<Token>,
    pub span: Span,
    /// Index of the event that began it.
    pub event: u32,
}

/// What an instance's process was doing over a stretch of time (running is
/// the default and is not listed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessSpan {
    pub instance: InstanceId,
    pub state: ProcessKind,
    pub span: Span,
}

/// An instance's process state, without its details.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ProcessKind {
    Running,
    Paused,
    Dead,
    HostLost,
}

impl ProcessKind {
    /// The word people read.
    pub fn label(self) -> &'static str {
        match self {
            ProcessKind::Running => "running",
            ProcessKind::Paused => "GC pause",
            ProcessKind::Dead => "dead",
            ProcessKind::HostLost => "host lost",
        }
    }
}

/// Who held the lock key on one Redis node (or the jobs-row lock, or the
/// consensus key) over a stretch of time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HolderSpan {
    pub resource: Resource,
    pub holder: InstanceId,
    pub span: Span,
}

/// A lock-holding resource drawn as a lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Resource {
    Redis(Party),
    /// The jobs row's `FOR UPDATE` lock.
    RowLock,
    /// The consensus store's lease key.
    Lease,
}

/// Where a write went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum WriteTarget {
    /// A storage PUT of one chunk (`own_object`: the run's own object, which
    /// never conflicts).
    Storage { chunk: u8, own_object: bool },
    /// The report row.
    Row,
}

/// What became of a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteVerdict {
    Accepted,
    /// Refused: the resource had seen `highest`.
    Rejected {
        highest: Token,
    },
    /// The statement did nothing (`ON CONFLICT DO NOTHING` met a row) or failed.
    NoEffect,
}

impl WriteVerdict {
    fn of_put(outcome: PutOutcome) -> WriteVerdict {
        match outcome {
            PutOutcome::Accepted => WriteVerdict::Accepted,
            PutOutcome::Rejected(highest) => WriteVerdict::Rejected { highest },
        }
    }

    /// A report row's write took effect where it touched a row.
    fn of_row_write(outcome: SqlOutcome) -> WriteVerdict {
        match outcome {
            SqlOutcome::Rows(rows) if rows > 0 => WriteVerdict::Accepted,
            SqlOutcome::StaleToken { highest } => WriteVerdict::Rejected { highest },
            SqlOutcome::Connected(_) | SqlOutcome::Rows(_) | SqlOutcome::Error(_) => WriteVerdict::NoEffect,
        }
    }
}

/// One write, with its token and verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteMark {
    pub at_ms: u64,
    pub instance: InstanceId,
    pub run: RunId,
    pub period: Period,
    pub target: WriteTarget,
    pub token: Option<Token>,
    pub verdict: WriteVerdict,
    pub event: u32,
}

impl WriteMark {
    /// A short label: `✓ 43`, `✗ 42 < 43`, `✓ no token`, `✗ no token`.
    pub fn label(&self) -> String {
        let token = self.token.map_or_else(|| "no token".to_owned(), |token| token.to_string());
        match (self.verdict, self.token) {
            (WriteVerdict::Accepted, _) => format!("✓ {token}"),
            (WriteVerdict::Rejected { highest }, Some(_)) => format!("✗ {token} < {highest}"),
            (WriteVerdict::Rejected { .. }, None) => "✗ no token".to_owned(),
            (WriteVerdict::NoEffect, _) => format!("– {token}"),
        }
    }

    /// The sentence: `b's chunk 0 with token 42 rejected: stale token 42 < 43`.
    pub fn sentence(&self) -> String {
        let what = match self.target {
            WriteTarget::Storage { chunk, .. } => format!("chunk {chunk}"),
            WriteTarget::Row => "report row".to_owned(),
        };
        let token = self.token.map_or_else(|| "no token".to_owned(), |token| format!("token {token}"));
        match self.verdict {
            WriteVerdict::Accepted => format!("{}'s {what} with {token} accepted", self.instance),
            WriteVerdict::Rejected { highest } => match self.token {
                Some(mine) => {
                    format!("{}'s {what} with {token} rejected: stale token {mine} < {highest}", self.instance)
                }
                None => format!(
                    "{}'s {what} with no token rejected: the report is fenced at token {highest}",
                    self.instance
                ),
            },
            WriteVerdict::NoEffect => format!("{}'s {what} with {token} had no effect", self.instance),
        }
    }
}

/// A Slack post.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PostMark {
    pub at_ms: u64,
    pub instance: InstanceId,
    pub period: Period,
    pub event: u32,
}

/// A fault that struck.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultMark {
    pub at_ms: u64,
    pub fault: Fault,
    pub targets: Vec<Party>,
    pub event: u32,
    /// How long after it struck the node it downed came back, where the log
    /// says (a Redis restart).
    pub back_after_ms: Option<u64>,
}

/// Cost figures over time, in [`SERIES_BUCKETS`] equal buckets of the run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CostSeries {
    pub bucket_ms: u64,
    /// Most DB sessions open at once in each bucket (all clients).
    pub db_connections: Vec<u32>,
    /// Slowest background query finished in each bucket, in ms (0: none).
    pub background_latency_ms: Vec<u64>,
    /// Background queries that failed in each bucket.
    pub background_failures: Vec<u32>,
    /// Time other services' queries spent waiting in each bucket, summed
    /// over the queries (divided by the bucket's length: how many waited on
    /// average), from when each arrived to when it ran.
    pub background_waiting_ms: Vec<u64>,
    /// Storage PUTs accepted so far, at each bucket's end.
    pub puts_total: Vec<u32>,
    /// Slack posts so far, at each bucket's end.
    pub posts_total: Vec<u32>,
}

/// Everything drawn along the time axis, and checkpoints for [`Timeline::world_at`].
#[derive(Clone, Debug)]
pub struct Timeline {
    pub strategy: StrategyId,
    /// The run's length: the scenario's window, or longer when runs in flight
    /// at its end drained after it (see [`Scenario::drain_ms`]).
    pub duration_ms: u64,
    /// The window's end: the last moment a cron tick could start a run.
    pub window_end_ms: u64,
    pub instances: u8,
    /// The Redis nodes the strategy uses, in order (with the replica last).
    pub redis_nodes: Vec<Party>,
    pub beliefs: Vec<LockSpan>,
    pub grants: Vec<LockSpan>,
    /// Stretches when two or more instances each believed they held the lock.
    pub overlaps: Vec<Span>,
    pub processes: Vec<ProcessSpan>,
    pub holders: Vec<HolderSpan>,
    /// Stretches when some live instance's job was doing its work: whom a
    /// strike at "the holder" finds when no lock is held or believed (the
    /// simulator's rule; with no lock at all, the only one).
    pub working: Vec<Span>,
    pub writes: Vec<WriteMark>,
    pub posts: Vec<PostMark>,
    pub faults: Vec<FaultMark>,
    pub series: CostSeries,
    /// `at_ms` of every event, for finding the event at a time.
    times_ms: Vec<u64>,
    checkpoints: Vec<WorldAt>,
}

/// A party's clock as the log last reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ClockView {
    clock: LocalClock,
}

impl ClockView {
    fn set(&mut self, at_ms: u64, local_ms: i64, drift_ppm: i64) {
        let mut clock = LocalClock::default();
        clock.jump(at_ms, local_ms - clock.local_at(at_ms));
        clock.set_drift(at_ms, drift_ppm);
        self.clock = clock;
    }
    /// What the clock reads at true time `at_ms`.
    pub fn local_at(&self, at_ms: u64) -> i64 {
        self.clock.local_at(at_ms)
    }
    /// How far the clock is from true time at `at_ms` (positive: ahead).
    pub fn offset_ms(&self, at_ms: u64) -> i64 {
        self.local_at(at_ms) - i64::try_from(at_ms).unwrap_or(i64::MAX)
    }
    pub fn drift_ppm(&self) -> i64 {
        self.clock.drift_ppm()
    }
}

/// An instance's process at a moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessView {
    Running,
    Paused {
        until_ms: u64,
    },
    /// OOM-killed; `restart_at_ms` when the fault promised a restart.
    Dead {
        restart_at_ms: Option<u64>,
    },
    HostLost {
        restart_at_ms: Option<u64>,
    },
}

impl ProcessView {
    pub fn kind(self) -> ProcessKind {
        match self {
            ProcessView::Running => ProcessKind::Running,
            ProcessView::Paused { .. } => ProcessKind::Paused,
            ProcessView::Dead { .. } => ProcessKind::Dead,
            ProcessView::HostLost { .. } => ProcessKind::HostLost,
        }
    }
}

/// A run in progress (or the last one) on an instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunView {
    pub run: RunId,
    pub period: Period,
    pub phase: RunPhase,
    /// Storage PUTs this run has had accepted.
    pub chunks_written: u8,
}

/// An instance's connection pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PoolView {
    pub busy: u8,
    pub open: u8,
    pub waiting: u16,
}

/// One instance at a moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstanceView {
    pub id: InstanceId,
    pub process: ProcessView,
    pub clock: ClockView,
    /// What it believes: `Some((run, token))` while a run of it thinks it
    /// holds the lock (its newest, when two do: see `WorldAt::believing`).
    pub belief: Option<(RunId, Option<Token>)>,
    /// Whether the lock service counts it as the holder.
    pub granted: Option<(RunId, Option<Token>)>,
    pub run: Option<RunView>,
    pub pool: PoolView,
}

/// A Redis node at a moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedisNodeView {
    pub party: Party,
    pub up: bool,
    /// The replica before a failover promotes it: it takes no commands.
    pub standby: bool,
    pub key: Option<LockKey>,
    /// `job:daily-report:token`; 0 when absent.
    pub counter: i64,
    pub clock: ClockView,
}

impl RedisNodeView {
    /// The lock key's remaining TTL by the node's own clock at `at_ms`; -1
    /// for a key with no expiry (`SETNX`), as Redis's `PTTL` answers.
    pub fn ttl_ms(&self, at_ms: u64) -> Option<i64> {
        self.key.map(|key| {
            if key.expires_local_ms == LockKey::NO_EXPIRY {
                -1
            } else {
                (key.expires_local_ms - self.clock.local_at(at_ms)).max(0)
            }
        })
    }
}

/// A lock on the jobs row, held or waited for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowLockView {
    pub session: SessionId,
    pub client: DbClient,
    pub mode: RowLockMode,
    pub since_ms: u64,
}

/// The database at a moment.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct DbView {
    /// Open sessions by client.
    pub sessions: Table<SessionId, DbClient>,
    pub row_lock_holders: Vec<RowLockView>,
    /// Waiters in the order they began waiting.
    pub row_lock_queue: Vec<RowLockView>,
    /// The report rows, by key (the period's own row, or the day's): the
    /// period whose run wrote it, that run and its token.
    pub report_rows: Table<ReportOf, (Period, RunId, Option<Token>)>,
    /// The last background query's latency and outcome.
    pub last_background: Option<(u64, BackgroundOutcome)>,
    /// Query slowdown in percent (100: normal).
    pub slow_percent: u32,
}

impl DbView {
    pub fn session_count(&self) -> u32 {
        u32::try_from(self.sessions.len()).unwrap_or(u32::MAX)
    }
}

/// One stored chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkView {
    pub instance: InstanceId,
    pub run: RunId,
    pub token: Option<Token>,
}

/// Object storage at a moment.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct StorageView {
    /// The highest token seen per report.
    pub highest_token: Table<ReportOf, Token>,
    /// The shared report's chunks: who wrote each last.
    pub chunks: Table<(ReportOf, u8), ChunkView>,
    pub puts_accepted: u32,
    pub puts_rejected: u32,
}

/// The consensus store's lease key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseView {
    pub value: Owner,
    pub lease: LeaseId,
    pub revision: Token,
    pub ttl_ms: u64,
    /// True time the lease runs out unless kept alive.
    pub expires_at_ms: u64,
}

/// The consensus store at a moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConsensusView {
    pub leader_up: bool,
    pub key: Option<LeaseView>,
    pub revision: Option<Token>,
}

impl Default for ConsensusView {
    fn default() -> Self {
        ConsensusView { leader_up: true, key: None, revision: None }
    }
}

/// A message on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flight {
    pub message: MessageId,
    pub from: Party,
    pub to: Party,
    pub sent_ms: u64,
    /// `None`: dropped by a partition.
    pub arrive_ms: Option<u64>,
    /// Carries a request (not a reply).
    pub request: bool,
}

impl Flight {
    /// How far along its way the message is at `at_ms`, 0 to 1.
    pub fn progress(&self, at_ms: u64) -> f64 {
        match self.arrive_ms {
            Some(arrive) if arrive > self.sent_ms => {
                let done = at_ms.saturating_sub(self.sent_ms) as f64;
                (done / (arrive - self.sent_ms) as f64).clamp(0.0, 1.0)
            }
            Some(_) => 1.0,
            None => 0.3,
        }
    }
}

/// The whole world at a moment.
#[derive(Clone, Debug, PartialEq)]
pub struct WorldAt {
    pub at_ms: u64,
    /// Events applied: the log's first `applied` events are in this state.
    pub applied: u32,
    pub instances: Vec<InstanceView>,
    pub redis: Vec<RedisNodeView>,
    pub db: DbView,
    pub storage: StorageView,
    /// How many posts Slack has had, and the last few (a view copies the
    /// world at every checkpoint, so nothing here grows with the run).
    pub slack_post_count: u32,
    pub recent_posts: Vec<PostMark>,
    pub consensus: ConsensusView,
    pub flights: Vec<Flight>,
    /// Restarts promised by faults, applied when the process event comes.
    restarts: Vec<(InstanceId, u64)>,
    /// Every run that believes it holds the lock: a process can have two (a
    /// job the runner handed back after a crash beside a run its cron was
    /// granted), and one letting go leaves the other's belief.
    believing: Table<(InstanceId, RunId), Option<Token>>,
    db_clock: ClockView,
    consensus_clock: ClockView,
}

impl WorldAt {
    fn new(instances: u8, redis_nodes: &[Party]) -> WorldAt {
        WorldAt {
            at_ms: 0,
            applied: 0,
            instances: (0..instances)
                .map(|index| InstanceView {
                    id: InstanceId(index),
                    process: ProcessView::Running,
                    clock: ClockView::default(),
                    belief: None,
                    granted: None,
                    run: None,
                    pool: PoolView::default(),
                })
                .collect(),
            redis: redis_nodes
                .iter()
                .map(|party| RedisNodeView {
                    party: *party,
                    up: true,
                    standby: *party == Party::RedisReplica,
                    key: None,
                    counter: 0,
                    clock: ClockView::default(),
                })
                .collect(),
            db: DbView { slow_percent: 100, ..DbView::default() },
            storage: StorageView::default(),
            slack_post_count: 0,
            recent_posts: Vec::new(),
            consensus: ConsensusView::default(),
            flights: Vec::new(),
            restarts: Vec::new(),
            believing: Table::new(),
            db_clock: ClockView::default(),
            consensus_clock: ClockView::default(),
        }
    }

    pub fn instance(&self, id: InstanceId) -> Option<&InstanceView> {
        self.instances.get(id.index())
    }

    fn instance_mut(&mut self, id: InstanceId) -> Option<&mut InstanceView> {
        self.instances.get_mut(id.index())
    }

    pub fn redis_node(&self, party: Party) -> Option<&RedisNodeView> {
        self.redis.iter().find(|node| node.party == party)
    }

    fn redis_mut(&mut self, party: Party) -> Option<&mut RedisNodeView> {
        self.redis.iter_mut().find(|node| node.party == party)
    }

    /// Instances that believe they hold the lock.
    pub fn believers(&self) -> Vec<InstanceId> {
        self.instances.iter().filter(|view| view.belief.is_some()).map(|view| view.id).collect()
    }

    /// Moves time on to `at_ms`: finished flights leave.
    fn advance(&mut self, at_ms: u64) {
        self.at_ms = self.at_ms.max(at_ms);
        let now = self.at_ms;
        self.flights.retain(|flight| match flight.arrive_ms {
            Some(arrive) => arrive > now,
            None => flight.sent_ms + DROPPED_VISIBLE_MS > now,
        });
    }

    fn apply(&mut self, index: u32, event: &Event) {
        self.advance(event.at_ms);
        self.applied = index + 1;
        let at = event.at_ms;
        match &event.kind {
            EventKind::Fault { fault, targets } => self.on_fault(fault, targets, at),
            EventKind::Process { instance, state } => self.on_process(*instance, *state),
            EventKind::Clock { party, local_ms, drift_ppm } => {
                let mut clock = ClockView::default();
                clock.set(at, *local_ms, *drift_ppm);
                self.on_clock(*party, clock);
            }
            EventKind::Sent { message, from, to, what, arrive_at_ms } => {
                let request = !matches!(what, crate::event::MessageKind::Reply);
                let (message, from, to, arrive_ms) = (*message, *from, *to, *arrive_at_ms);
                self.flights.push(Flight { message, from, to, sent_ms: at, arrive_ms, request });
            }
            EventKind::Lost { message, .. } => self.flights.retain(|flight| flight.message != *message),
            EventKind::Run { run, instance, period, phase } => self.on_run(*instance, *run, *period, *phase),
            EventKind::Granted { run, instance, token } => self.on_granted(*instance, Some((*run, *token))),
            EventKind::Revoked { run, instance, .. } => {
                if self.instance(*instance).and_then(|view| view.granted).is_some_and(|(granted, _)| granted == *run) {
                    self.on_granted(*instance, None);
                }
            }
            EventKind::Belief { instance, run, holds, token } => self.on_belief(*instance, *run, *holds, *token),
            EventKind::Redis { node, client, command, reply, .. } => {
                self.redis_command(*node, *client, *command, *reply, at);
            }
            EventKind::KeyExpired { node, .. } => {
                if let Some(state) = self.redis_mut(*node) {
                    state.key = None;
                }
            }
            EventKind::KeysLost { .. } | EventKind::Cron { .. } => {}
            EventKind::Replicated { key, counter } => self.redis_holds(Party::RedisReplica, *key, *counter),
            EventKind::RedisDown { node } => self.on_redis_down(*node),
            EventKind::RedisUp { node, promoted } => self.on_redis_up(*node, *promoted),
            EventKind::Sql { client, outcome: SqlOutcome::Connected(opened), .. } => {
                self.db.sessions.insert(*opened, *client);
            }
            EventKind::Sql { .. } => {}
            EventKind::Connection { session, client, change } => self.on_connection(*session, *client, *change),
            EventKind::RowLock { session, client, mode, change } => {
                let lock = RowLockView { session: *session, client: *client, mode: *mode, since_ms: at };
                self.on_row_lock(lock, *change);
            }
            EventKind::Pool { instance, busy, open, waiting } => {
                self.on_pool(*instance, PoolView { busy: *busy, open: *open, waiting: *waiting });
            }
            EventKind::Background { latency_ms, outcome, .. } => {
                self.db.last_background = Some((*latency_ms, *outcome));
            }
            EventKind::Put { .. } => self.on_put(&event.kind),
            EventKind::Post { instance, period, .. } => {
                self.on_post(PostMark { at_ms: at, instance: *instance, period: *period, event: index });
            }
            EventKind::Consensus { op, reply, .. } => self.consensus_op(*op, *reply, at),
            EventKind::LeaseExpired { lease, .. } => self.consensus_lease(*lease, None),
            EventKind::Leader { up } => self.consensus.leader_up = *up,
            EventKind::LeaseRefreshed { lease } => self.consensus_lease(*lease, Some(at)),
            EventKind::RowApplied { period, report, run, token } => {
                self.db.report_rows.insert(*report, (*period, *run, *token));
                self.forget_old_reports(*report);
            }
            EventKind::DbSlow { factor_percent } => self.db.slow_percent = *factor_percent,
        }
    }

    fn on_granted(&mut self, instance: InstanceId, granted: Option<(RunId, Option<Token>)>) {
        if let Some(view) = self.instance_mut(instance) {
            view.granted = granted;
        }
    }

    /// Slack's count and its last few posts.
    fn on_post(&mut self, post: PostMark) {
        self.slack_post_count += 1;
        if self.recent_posts.len() == RECENT_POSTS {
            self.recent_posts.remove(0);
        }
        self.recent_posts.push(post);
    }

    /// The consensus key's lease: given its whole TTL again at a time, or gone.
    fn consensus_lease(&mut self, lease: LeaseId, refreshed_at_ms: Option<u64>) {
        let Some(key) = self.consensus.key.as_mut().filter(|key| key.lease == lease) else { return };
        match refreshed_at_ms {
            Some(at_ms) => key.expires_at_ms = at_ms + key.ttl_ms,
            None => self.consensus.key = None,
        }
    }

    fn on_process(&mut self, instance: InstanceId, state: ProcessState) {
        let restart_at_ms = self.restarts.iter().find(|(id, _)| *id == instance).map(|(_, restart_at)| *restart_at);
        if matches!(state, ProcessState::Restarted) {
            self.restarts.retain(|(id, _)| *id != instance);
        }
        if matches!(state, ProcessState::Dead | ProcessState::HostLost) {
            self.believing.retain(|(believer, _), _| *believer != instance);
        }
        let Some(view) = self.instance_mut(instance) else { return };
        view.process = match state {
            ProcessState::Running | ProcessState::Restarted => ProcessView::Running,
            ProcessState::Paused { until_ms } => ProcessView::Paused { until_ms },
            ProcessState::Dead => ProcessView::Dead { restart_at_ms },
            ProcessState::HostLost => ProcessView::HostLost { restart_at_ms },
        };
        if matches!(state, ProcessState::Dead | ProcessState::HostLost) {
            // The process's memory is gone: it believes nothing any more.
            view.belief = None;
        }
        if matches!(state, ProcessState::Restarted) {
            view.run = None;
            view.pool = PoolView::default();
        }
    }

    fn on_clock(&mut self, party: Party, clock: ClockView) {
        match party {
            Party::Instance(id) => {
                if let Some(view) = self.instance_mut(id) {
                    view.clock = clock;
                }
            }
            Party::Redis(_) | Party::RedisReplica => {
                if let Some(node) = self.redis_mut(party) {
                    node.clock = clock;
                }
            }
            Party::Db => self.db_clock = clock,
            Party::Consensus => self.consensus_clock = clock,
            Party::Storage | Party::Slack => {}
        }
    }

    fn on_run(&mut self, instance: InstanceId, run: RunId, period: Period, phase: RunPhase) {
        if let Some(view) = self.instance_mut(instance) {
            // A run keeps its count of chunks written from one phase to the next.
            let chunks_written =
                view.run.filter(|current| current.run == run).map_or(0, |current| current.chunks_written);
            view.run = Some(RunView { run, period, phase, chunks_written });
        }
    }

    fn on_belief(&mut self, instance: InstanceId, run: RunId, holds: bool, token: Option<Token>) {
        if holds {
            self.believing.insert((instance, run), token);
        } else {
            self.believing.remove(&(instance, run));
        }
        // Run ids grow with time: an instance's newest run is its last entry.
        let newest = self.believing.entries().iter().rev().find(|((believer, _), _)| *believer == instance);
        let newest = newest.map(|((_, run), token)| (*run, *token));
        if let Some(view) = self.instance_mut(instance) {
            view.belief = newest;
        }
    }

    /// Sets what a node holds: its lock key and its counter.
    fn redis_holds(&mut self, node: Party, key: Option<LockKey>, counter: i64) {
        if let Some(state) = self.redis_mut(node) {
            state.key = key;
            state.counter = counter;
        }
    }

    /// A node down forgets every key (no persistence; a promotion keeps the replica's own).
    fn on_redis_down(&mut self, node: Party) {
        self.redis_holds(node, None, 0);
        if let Some(state) = self.redis_mut(node) {
            state.up = false;
        }
    }

    fn on_pool(&mut self, instance: InstanceId, pool: PoolView) {
        if let Some(view) = self.instance_mut(instance) {
            view.pool = pool;
        }
    }

    /// A node back up: a promoted replica keeps what it had, a restarted node is empty.
    fn on_redis_up(&mut self, node: Party, promoted: bool) {
        if let Some(state) = self.redis_mut(node) {
            state.up = true;
            if promoted {
                state.standby = false;
            } else {
                state.key = None;
                state.counter = 0;
            }
        }
    }

    fn on_connection(&mut self, session: SessionId, client: DbClient, change: ConnectionChange) {
        match change {
            ConnectionChange::Opened => {
                self.db.sessions.insert(session, client);
            }
            ConnectionChange::Refused => {}
            ConnectionChange::Closed | ConnectionChange::Terminated(_) => {
                self.db.sessions.remove(&session);
                self.db.row_lock_holders.retain(|held| held.session != session);
                self.db.row_lock_queue.retain(|held| held.session != session);
            }
        }
    }

    fn on_row_lock(&mut self, lock: RowLockView, change: RowLockChange) {
        let same = |held: &RowLockView| held.session == lock.session && held.mode == lock.mode;
        match change {
            RowLockChange::Waiting => self.db.row_lock_queue.push(lock),
            RowLockChange::Granted => {
                self.db.row_lock_queue.retain(|held| !same(held));
                self.db.row_lock_holders.push(lock);
            }
            RowLockChange::Released => self.db.row_lock_holders.retain(|held| !same(held)),
            RowLockChange::GaveUp => self.db.row_lock_queue.retain(|held| !same(held)),
        }
    }

    /// A chunk PUT: the store's counts, its highest token per report, its
    /// chunks, and the writer's progress.
    fn on_put(&mut self, put: &EventKind) {
        let EventKind::Put { instance, run, report, chunk, own_object, token, outcome, .. } = *put else { return };
        match outcome {
            PutOutcome::Accepted => {
                self.storage.puts_accepted += 1;
                if let Some(token) = token {
                    let highest = self.storage.highest_token.get_or_insert(report, token);
                    *highest = (*highest).max(token);
                }
                if !own_object {
                    self.storage.chunks.insert((report, chunk), ChunkView { instance, run, token });
                }
                if let Some(view) = self.instance_mut(instance)
                    && let Some(current) = &mut view.run
                    && current.run == run
                {
                    current.chunks_written = current.chunks_written.saturating_add(1);
                }
            }
            PutOutcome::Rejected(highest) => {
                self.storage.puts_rejected += 1;
                let seen = self.storage.highest_token.get_or_insert(report, highest);
                *seen = (*seen).max(highest);
            }
        }
        self.forget_old_reports(report);
    }

    /// A kill or host loss that restarts: the process event that follows
    /// says "dead", and only the fault says when it comes back.
    fn on_fault(&mut self, fault: &Fault, targets: &[Party], at: u64) {
        let (Fault::OomKill { restart_after_ms: Some(after), .. }
        | Fault::HostLoss { restart_after_ms: Some(after), .. }) = fault
        else {
            return;
        };
        let after = *after;
        for target in targets {
            if let Party::Instance(id) = target {
                self.restarts.retain(|(pending, _)| pending != id);
                self.restarts.push((*id, at + after));
            }
        }
    }

    /// Keeps the stored reports, rows and tokens of the latest report and the
    /// one before it, which is all the world at the cursor shows: under
    /// `per_period` output a new report comes every period, and a view copies
    /// the world at every checkpoint, so what it keeps must not grow with the run.
    fn forget_old_reports(&mut self, written: ReportOf) {
        let latest = [
            Some(written),
            self.storage.highest_token.last().map(|(report, _)| *report),
            self.storage.chunks.last().map(|((report, _), _)| *report),
            self.db.report_rows.last().map(|(report, _)| *report),
        ]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(written);
        let oldest_kept = match latest {
            ReportOf::Period(period) => ReportOf::Period(Period(period.0.saturating_sub(1))),
            ReportOf::Day(day) => ReportOf::Day(day.saturating_sub(1)),
        };
        self.storage.highest_token.retain(|report, _| *report >= oldest_kept);
        self.storage.chunks.retain(|(report, _), _| *report >= oldest_kept);
        self.db.report_rows.retain(|report, _| *report >= oldest_kept);
    }

    fn redis_command(&mut self, node: Party, setter: InstanceId, command: RedisCommand, reply: RedisReply, at: u64) {
        let Some(state) = self.redis_mut(node) else {
            return;
        };
        let local = state.clock.local_at(at);
        let expiry = |ttl_ms: u64| local.saturating_add(i64::try_from(ttl_ms).unwrap_or(i64::MAX / 4));
        // What each command did to the node's key, by its reply.
        let extended = reply == RedisReply::Integer(1);
        match command {
            RedisCommand::SetNxEx { value, ttl_s } if reply == RedisReply::Ok => {
                state.key = Some(LockKey { value, setter, expires_local_ms: expiry(ttl_s.saturating_mul(1000)) });
            }
            RedisCommand::SetNxPx { value, ttl_ms } | RedisCommand::SetPx { value, ttl_ms }
                if reply == RedisReply::Ok =>
            {
                state.key = Some(LockKey { value, setter, expires_local_ms: expiry(ttl_ms) });
            }
            RedisCommand::SetNx { value } if extended => {
                state.key = Some(LockKey { value, setter, expires_local_ms: LockKey::NO_EXPIRY });
            }
            RedisCommand::Del | RedisCommand::CompareAndDelete { .. } if extended => state.key = None,
            RedisCommand::Pexpire { .. } | RedisCommand::CompareAndExtend { .. } | RedisCommand::Expire { .. }
                if extended =>
            {
                if let (Some(key), Some(ttl_ms)) = (&mut state.key, command.extended_ttl_ms()) {
                    key.expires_local_ms = expiry(ttl_ms);
                }
            }
            RedisCommand::SetNxPxIncr { value, ttl_ms } => {
                if let RedisReply::Integer(counter) = reply {
                    let expires_local_ms = expiry(ttl_ms);
                    state.key = Some(LockKey { value: LockValue::Owner(value), setter, expires_local_ms });
                    state.counter = counter;
                }
            }
            RedisCommand::Incr => {
                if let RedisReply::Integer(value) = reply {
                    state.counter = value;
                }
            }
            // Refused, or a read: the key is as it was.
            RedisCommand::SetNxEx { .. }
            | RedisCommand::SetNxPx { .. }
            | RedisCommand::SetPx { .. }
            | RedisCommand::SetNx { .. }
            | RedisCommand::Expire { .. }
            | RedisCommand::Del
            | RedisCommand::CompareAndDelete { .. }
            | RedisCommand::Pexpire { .. }
            | RedisCommand::CompareAndExtend { .. }
            | RedisCommand::Get => {}
        }
    }

    fn consensus_op(&mut self, op: ConsensusOp, reply: ConsensusReply, at: u64) {
        match op {
            ConsensusOp::Acquire { value, ttl_ms } => {
                if let ConsensusReply::Acquired { lease, revision } = reply {
                    self.consensus.key = Some(LeaseView { value, lease, revision, ttl_ms, expires_at_ms: at + ttl_ms });
                    self.consensus.revision = Some(self.consensus.revision.map_or(revision, |seen| seen.max(revision)));
                }
            }
            ConsensusOp::KeepAlive { lease } => {
                if let (ConsensusReply::Alive { ttl_ms }, Some(key)) = (reply, &mut self.consensus.key)
                    && key.lease == lease
                {
                    key.ttl_ms = ttl_ms.max(key.ttl_ms);
                    key.expires_at_ms = at + ttl_ms;
                }
            }
            ConsensusOp::Revoke { lease } => {
                if reply == ConsensusReply::Revoked && self.consensus.key.is_some_and(|key| key.lease == lease) {
                    self.consensus.key = None;
                }
            }
        }
    }
}

/// Open stretches while building lanes.
#[derive(Default)]
struct Open {
    beliefs: Table<InstanceId, LockSpan>,
    grants: Table<RunId, LockSpan>,
    processes: Table<InstanceId, ProcessSpan>,
    holders: Table<Resource, HolderSpan>,
    overlap_from: Option<u64>,
    working_from: Option<u64>,
}

/// A timeline being built, fed the log a slice at a time (see
/// [`crate::Simulation`]); [`Timeline::build`] is this, fed in one go.
pub struct TimelineBuilder {
    timeline: Timeline,
    world: WorldAt,
    open: Open,
    series: SeriesBuilder,
}

impl std::fmt::Debug for TimelineBuilder {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("TimelineBuilder").field("events", &self.timeline.times_ms.len()).finish()
    }
}

impl TimelineBuilder {
    /// `scenario` supplies the world (instances, replica, lag) and the run's length.
    pub fn new(scenario: &Scenario, strategy: StrategyId) -> TimelineBuilder {
        let duration_ms = scenario.duration_ms();
        let redis_nodes = redis_nodes_of(scenario, strategy);
        let world = WorldAt::new(scenario.world.instances, &redis_nodes);
        TimelineBuilder {
            timeline: Timeline {
                strategy,
                duration_ms,
                window_end_ms: duration_ms,
                instances: scenario.world.instances,
                redis_nodes,
                beliefs: Vec::new(),
                grants: Vec::new(),
                overlaps: Vec::new(),
                processes: Vec::new(),
                holders: Vec::new(),
                working: Vec::new(),
                writes: Vec::new(),
                posts: Vec::new(),
                faults: Vec::new(),
                series: CostSeries::default(),
                times_ms: Vec::new(),
                checkpoints: Vec::new(),
            },
            world,
            open: Open::default(),
            series: SeriesBuilder::new(duration_ms),
        }
    }

    /// Reads the log's next events, in order.
    pub fn feed(&mut self, events: &[Event]) {
        for event in events {
            let index = u32::try_from(self.timeline.times_ms.len()).unwrap_or(u32::MAX);
            if index % CHECKPOINT_EVERY == 0 {
                self.timeline.checkpoints.push(self.world.clone());
            }
            self.timeline.times_ms.push(event.at_ms);
            self.world.apply(index, event);
            self.timeline.lanes(&mut self.open, &self.world, index, event);
            self.series.record(event, &self.world);
        }
    }

    /// Closes what is still open at the end of the run.
    pub fn finish(self) -> Timeline {
        let TimelineBuilder { mut timeline, mut open, series, .. } = self;
        // The run ends with the window, or later when runs in flight drained after it.
        let end = timeline.duration_ms.max(timeline.times_ms.last().copied().unwrap_or(0));
        timeline.duration_ms = end;
        for (_, mut span) in open.beliefs.take() {
            span.span.to_ms = end;
            timeline.beliefs.push(span);
        }
        for (_, mut span) in open.grants.take() {
            span.span.to_ms = end;
            timeline.grants.push(span);
        }
        for (_, mut span) in open.processes.take() {
            span.span.to_ms = end;
            timeline.processes.push(span);
        }
        for (_, mut span) in open.holders.take() {
            span.span.to_ms = end;
            timeline.holders.push(span);
        }
        if let Some(from_ms) = open.overlap_from {
            timeline.overlaps.push(Span { from_ms, to_ms: end });
        }
        if let Some(from_ms) = open.working_from {
            timeline.working.push(Span { from_ms, to_ms: end });
        }
        // The spans stay in the order they ended, which is time order per
        // lane; no sort, which keeps the browser build small.
        timeline.series = series.finish();
        timeline
    }
}

impl Timeline {
    /// Reads a log once. `scenario` supplies the world (instances, replica,
    /// lag) and the run's length.
    pub fn build(scenario: &Scenario, strategy: StrategyId, log: &[Event]) -> Timeline {
        let mut builder = TimelineBuilder::new(scenario, strategy);
        builder.feed(log);
        builder.finish()
    }

    /// Extends the lanes with one event, `world` already updated by it.
    fn lanes(&mut self, open: &mut Open, world: &WorldAt, index: u32, event: &Event) {
        let at = event.at_ms;
        match &event.kind {
            EventKind::Belief { instance, .. } => {
                self.track_belief(open, world, *instance, at, index);
                self.track_overlap(open, at);
            }
            EventKind::Process { instance, .. } => {
                self.track_belief(open, world, *instance, at, index);
                self.track_process(open, world, *instance, at);
                self.track_overlap(open, at);
            }
            EventKind::Granted { run, instance, token } => {
                let (instance, run, token, span) = (*instance, *run, *token, Span { from_ms: at, to_ms: at });
                open.grants.insert(run, LockSpan { instance, run, token, span, event: index });
            }
            EventKind::Revoked { run, .. } => {
                if let Some(mut span) = open.grants.remove(run) {
                    span.span.to_ms = at;
                    self.grants.push(span);
                }
            }
            EventKind::Put { .. } | EventKind::Sql { .. } => self.track_write(index, event),
            EventKind::Post { instance, period, .. } => {
                self.posts.push(PostMark { at_ms: at, instance: *instance, period: *period, event: index })
            }
            EventKind::Fault { fault, targets } => self.faults.push(FaultMark {
                at_ms: at,
                fault: fault.clone(),
                targets: targets.clone(),
                event: index,
                back_after_ms: None,
            }),
            EventKind::RedisUp { node, .. } => {
                let restarted = |mark: &&mut FaultMark| {
                    matches!(mark.fault, Fault::RedisRestart { .. }) && mark.targets.contains(node)
                };
                if let Some(mark) = self.faults.iter_mut().rev().find(restarted)
                    && mark.back_after_ms.is_none()
                {
                    mark.back_after_ms = Some(at - mark.at_ms);
                }
            }
            EventKind::Cron { .. }
            | EventKind::Clock { .. }
            | EventKind::Sent { .. }
            | EventKind::Lost { .. }
            | EventKind::Run { .. }
            | EventKind::Redis { .. }
            | EventKind::KeyExpired { .. }
            | EventKind::KeysLost { .. }
            | EventKind::RedisDown { .. }
            | EventKind::Connection { .. }
            | EventKind::RowLock { .. }
            | EventKind::Pool { .. }
            | EventKind::Background { .. }
            | EventKind::Consensus { .. }
            | EventKind::LeaseExpired { .. }
            | EventKind::Leader { .. }
            | EventKind::LeaseRefreshed { .. }
            | EventKind::Replicated { .. }
            | EventKind::RowApplied { .. }
            | EventKind::DbSlow { .. } => {}
        }
        self.track_holders(open, world, at);
        self.track_working(open, world, at);
    }

    /// A write's mark: a chunk's PUT, or an instance's report row.
    fn track_write(&mut self, index: u32, event: &Event) {
        let at_ms = event.at_ms;
        let (instance, run, period, token, target, verdict) =
            if let EventKind::Put { instance, run, period, chunk, own_object, token, outcome, .. } = &event.kind {
                let target = WriteTarget::Storage { chunk: *chunk, own_object: *own_object };
                (*instance, *run, *period, *token, target, WriteVerdict::of_put(*outcome))
            } else if let EventKind::Sql {
                client: DbClient::Instance(instance),
                run: Some(run),
                statement: Sql::WriteReport { period, token, .. },
                outcome,
                ..
            } = &event.kind
            {
                (*instance, *run, *period, *token, WriteTarget::Row, WriteVerdict::of_row_write(*outcome))
            } else {
                // Any other statement writes nothing a lane marks.
                return;
            };
        self.writes.push(WriteMark { at_ms, instance, run, period, target, token, verdict, event: index });
    }

    /// Opens or closes the stretch when some live instance's job is at work.
    fn track_working(&mut self, open: &mut Open, world: &WorldAt, at: u64) {
        let working = world.instances.iter().any(|view| {
            let live = matches!(view.process, ProcessView::Running | ProcessView::Paused { .. });
            live && view.run.is_some_and(|run| run.phase == RunPhase::Started)
        });
        match (open.working_from, working) {
            (None, true) => open.working_from = Some(at),
            (Some(from_ms), false) => {
                self.working.push(Span { from_ms, to_ms: at });
                open.working_from = None;
            }
            (None, false) | (Some(_), true) => {}
        }
    }

    /// Ends the instance's belief span where its belief changed, and opens the new one.
    fn track_belief(&mut self, open: &mut Open, world: &WorldAt, instance: InstanceId, at: u64, index: u32) {
        let now = world.instance(instance).and_then(|view| view.belief);
        let current = open.beliefs.get(&instance).map(|span| (span.run, span.token));
        if now == current {
            return;
        }
        if let Some(mut span) = open.beliefs.remove(&instance) {
            span.span.to_ms = at;
            self.beliefs.push(span);
        }
        if let Some((run, token)) = now {
            let span = Span { from_ms: at, to_ms: at };
            open.beliefs.insert(instance, LockSpan { instance, run, token, span, event: index });
        }
    }

    /// Ends the instance's process span (paused, dead, host lost) where its state changed.
    fn track_process(&mut self, open: &mut Open, world: &WorldAt, instance: InstanceId, at: u64) {
        let kind = world.instance(instance).map_or(ProcessKind::Running, |view| view.process.kind());
        let current = open.processes.get(&instance).map(|span| span.state);
        if current == Some(kind) {
            return;
        }
        if let Some(mut span) = open.processes.remove(&instance) {
            span.span.to_ms = at;
            self.processes.push(span);
        }
        if kind != ProcessKind::Running {
            open.processes
                .insert(instance, ProcessSpan { instance, state: kind, span: Span { from_ms: at, to_ms: at } });
        }
    }

    /// Opens an overlap where a second instance came to believe it holds
    /// the lock, and closes it where fewer than two do.
    fn track_overlap(&mut self, open: &mut Open, at: u64) {
        match (open.overlap_from, open.beliefs.len() >= 2) {
            (None, true) => open.overlap_from = Some(at),
            (Some(from_ms), false) => {
                self.overlaps.push(Span { from_ms, to_ms: at });
                open.overlap_from = None;
            }
            (None, false) | (Some(_), true) => {}
        }
    }

    /// Keeps the holder lanes (Redis keys per node, the row lock, the lease) in step.
    fn track_holders(&mut self, open: &mut Open, world: &WorldAt, at: u64) {
        let mut now: Vec<(Resource, InstanceId)> = Vec::new();
        for node in &world.redis {
            if let (true, Some(key)) = (node.up, node.key) {
                now.push((Resource::Redis(node.party), key.setter));
            }
        }
        if let Some(holder) = world.db.row_lock_holders.iter().find_map(|held| match held.client {
            DbClient::Instance(id) if held.mode.is_job_lock() => Some(id),
            DbClient::Instance(_) | DbClient::Background => None,
        }) {
            now.push((Resource::RowLock, holder));
        }
        if let Some(key) = world.consensus.key {
            now.push((Resource::Lease, key.value.instance));
        }
        let stale: Vec<Resource> = open
            .holders
            .iter()
            .filter(|(resource, span)| !now.contains(&(**resource, span.holder)))
            .map(|(resource, _)| *resource)
            .collect();
        for resource in stale {
            if let Some(mut span) = open.holders.remove(&resource) {
                span.span.to_ms = at;
                self.holders.push(span);
            }
        }
        for (resource, holder) in now {
            open.holders
                .get_or_insert(resource, HolderSpan { resource, holder, span: Span { from_ms: at, to_ms: at } });
        }
    }

    /// How many events happened at or before `at_ms`.
    pub fn events_until(&self, at_ms: u64) -> u32 {
        let count = self.times_ms.partition_point(|time| *time <= at_ms);
        u32::try_from(count).unwrap_or(u32::MAX)
    }

    /// The time of the first event after `at_ms`, if any.
    pub fn next_event_ms(&self, at_ms: u64) -> Option<u64> {
        let after = self.times_ms.partition_point(|time| *time <= at_ms);
        self.times_ms.get(after).copied()
    }

    /// The time of the last event before `at_ms`, if any.
    pub fn previous_event_ms(&self, at_ms: u64) -> Option<u64> {
        let before = self.times_ms.partition_point(|time| *time < at_ms);
        before.checked_sub(1).and_then(|index| self.times_ms.get(index).copied())
    }

    /// The world once every event at or before `at_ms` has happened. `log`
    /// must be the log the timeline was built from.
    pub fn world_at(&self, log: &[Event], at_ms: u64) -> WorldAt {
        let count = self.events_until(at_ms).min(u32::try_from(log.len()).unwrap_or(u32::MAX));
        let checkpoint = usize::try_from(count / CHECKPOINT_EVERY).unwrap_or(0);
        let mut world = match self.checkpoints.get(checkpoint).or_else(|| self.checkpoints.last()) {
            Some(saved) => saved.clone(),
            None => WorldAt::new(self.instances, &self.redis_nodes),
        };
        let from = world.applied;
        for index in from..count {
            if let Some(event) = log.get(usize::try_from(index).unwrap_or(usize::MAX)) {
                world.apply(index, event);
            }
        }
        world.advance(at_ms);
        world
    }

    /// When a strike aimed at "the holder" at `at_ms` finds one: `at_ms`
    /// itself while the lock service counts an instance as holder, one
    /// believes it holds the lock or a job is at work, else the first moment
    /// after it that one is, or `None` when nobody is from `at_ms` to the end. A strike
    /// after `at_ms` lands a millisecond after the grant or belief began, so
    /// the simulator, which applies a fault before the events of its own
    /// millisecond that were scheduled later, has seen the holder.
    pub fn holder_strike_ms(&self, at_ms: u64) -> Option<u64> {
        self.grants
            .iter()
            .chain(&self.beliefs)
            .map(|lock| lock.span)
            .chain(self.working.iter().copied())
            .filter_map(|span| {
                let strike_ms = if span.from_ms <= at_ms { at_ms } else { span.from_ms + 1 };
                // A span still open at the run's end reaches `duration_ms`.
                (span.to_ms > strike_ms).then_some(strike_ms)
            })
            .min()
    }

    /// Spans when `instance` believed it held the lock.
    pub fn beliefs_of(&self, instance: InstanceId) -> impl Iterator<Item = &LockSpan> {
        self.beliefs.iter().filter(move |span| span.instance == instance)
    }

    /// Spans when the lock service counted `instance` as the holder.
    pub fn grants_of(&self, instance: InstanceId) -> impl Iterator<Item = &LockSpan> {
        self.grants.iter().filter(move |span| span.instance == instance)
    }
}

/// The Redis nodes a strategy talks to: the parties of its lock that are Redis.
pub fn redis_nodes_of(scenario: &Scenario, strategy: StrategyId) -> Vec<Party> {
    let mut parties = scenario.settings_for(strategy).lock_parties(&scenario.world);
    parties.retain(|party| matches!(party, Party::Redis(_) | Party::RedisReplica));
    parties
}

struct SeriesBuilder {
    bucket_ms: u64,
    series: CostSeries,
}

impl SeriesBuilder {
    fn new(duration_ms: u64) -> SeriesBuilder {
        let buckets = usize::try_from(SERIES_BUCKETS).unwrap_or(1);
        SeriesBuilder {
            bucket_ms: duration_ms.div_ceil(u64::from(SERIES_BUCKETS)).max(1),
            series: CostSeries {
                bucket_ms: duration_ms.div_ceil(u64::from(SERIES_BUCKETS)).max(1),
                db_connections: vec![0; buckets],
                background_latency_ms: vec![0; buckets],
                background_failures: vec![0; buckets],
                background_waiting_ms: vec![0; buckets],
                puts_total: vec![0; buckets],
                posts_total: vec![0; buckets],
            },
        }
    }

    fn bucket(&self, at_ms: u64) -> usize {
        let bucket = (at_ms / self.bucket_ms).min(u64::from(SERIES_BUCKETS - 1));
        usize::try_from(bucket).unwrap_or(0)
    }

    // The one wildcard over the engine's events: the cost series count four
    // kinds and nothing else ever adds to them, and the listed form of this
    // match, per event of every run in the lab, costs the lab page 400 bytes
    // of its wasm budget (measured).
    #[allow(clippy::wildcard_enum_match_arm)]
    fn record(&mut self, event: &Event, world: &WorldAt) {
        let bucket = self.bucket(event.at_ms);
        let series = &mut self.series;
        match &event.kind {
            EventKind::Connection { .. } | EventKind::Sql { .. } => {
                let open = world.db.session_count();
                series.db_connections[bucket] = series.db_connections[bucket].max(open);
            }
            EventKind::Background { latency_ms, outcome, .. } => {
                series.background_latency_ms[bucket] = series.background_latency_ms[bucket].max(*latency_ms);
                if outcome.failed() {
                    series.background_failures[bucket] += 1;
                }
                // Its wait, spread over the buckets it spans (the event comes at its end).
                let (from_ms, to_ms) = (event.at_ms.saturating_sub(*latency_ms), event.at_ms);
                let bucket_ms = self.bucket_ms;
                for waited in self.bucket(from_ms)..=bucket {
                    let start = u64::try_from(waited).unwrap_or(0) * bucket_ms;
                    let overlap = to_ms.min(start + bucket_ms).saturating_sub(from_ms.max(start));
                    self.series.background_waiting_ms[waited] += overlap;
                }
            }
            EventKind::Put { outcome: PutOutcome::Accepted, .. } => series.puts_total[bucket] += 1,
            EventKind::Post { .. } => series.posts_total[bucket] += 1,
            _ => {}
        }
    }

    fn finish(mut self) -> CostSeries {
        let series = &mut self.series;
        // Connections stay open between events: carry the level forward into
        // buckets without events; totals become running sums.
        let mut level = 0;
        let mut puts = 0;
        let mut posts = 0;
        for bucket in 0..series.db_connections.len() {
            if series.db_connections[bucket] == 0 {
                series.db_connections[bucket] = level;
            }
            level = series.db_connections[bucket];
            puts += series.puts_total[bucket];
            series.puts_total[bucket] = puts;
            posts += series.posts_total[bucket];
            series.posts_total[bucket] = posts;
        }
        self.series
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::RedisNodeId;
    use crate::simulate;

    fn scenario(json: &str) -> Scenario {
        Scenario::from_json(json).expect("test scenario")
    }

    fn gc_pause_at(at_ms: u64) -> Scenario {
        scenario(&format!(
            r#"{{"format": "locklab/1", "seed": 1, "faults": [
                {{"at_ms": {at_ms}, "kind": "gc_pause", "target": "holder", "duration_ms": 90000}}]}}"#
        ))
    }

    /// Replays the whole log without checkpoints: the reference `world_at` must match.
    fn replay(timeline: &Timeline, log: &[Event], at_ms: u64) -> WorldAt {
        let mut world = WorldAt::new(timeline.instances, &timeline.redis_nodes);
        for (position, event) in log.iter().enumerate() {
            if event.at_ms > at_ms {
                break;
            }
            world.apply(u32::try_from(position).unwrap(), event);
        }
        world.advance(at_ms);
        world
    }

    #[test]
    fn view_from_checkpoints_equals_a_full_replay() {
        let scenario = gc_pause_at(18_500);
        for strategy in StrategyId::ALL {
            let log = simulate(&scenario, strategy);
            let timeline = Timeline::build(&scenario, strategy, &log);
            for at_ms in [0, 1, 9_000, 30_050, 99_010, 333_333, 899_999] {
                assert_eq!(timeline.world_at(&log, at_ms), replay(&timeline, &log, at_ms), "{strategy} at {at_ms}");
            }
        }
    }

    /// Nobody holds the lock at t=0; a strike at "the holder" at the moment
    /// `holder_strike_ms` names finds one under every strategy, and a strike
    /// where it says "now" strikes at the cursor.
    #[test]
    fn a_strike_at_the_holder_lands_when_someone_holds() {
        let calm = scenario(r#"{"format": "locklab/2", "seed": 1}"#);
        for strategy in StrategyId::ALL {
            let log = simulate(&calm, strategy);
            let timeline = Timeline::build(&calm, strategy, &log);
            let strike_ms =
                timeline.holder_strike_ms(0).unwrap_or_else(|| panic!("{strategy}: someone takes the lock"));
            assert!(strike_ms > 0, "{strategy}: nobody holds at t=0");
            assert_eq!(timeline.holder_strike_ms(strike_ms), Some(strike_ms), "{strategy}: held then");
            let struck = scenario(&format!(
                r#"{{"format": "locklab/2", "seed": 1, "faults": [
                    {{"at_ms": {strike_ms}, "kind": "oom_kill", "target": "holder"}}]}}"#
            ));
            let log = simulate(&struck, strategy);
            let targets = log.iter().find_map(|event| {
                if let EventKind::Fault { targets, .. } = &event.kind { Some(targets.clone()) } else { None }
            });
            assert!(targets.is_some_and(|targets| !targets.is_empty()), "{strategy}: the strike found a holder");
        }
        let end = simulate(&calm, StrategyId::Fencing);
        let timeline = Timeline::build(&calm, StrategyId::Fencing, &end);
        assert_eq!(timeline.holder_strike_ms(timeline.duration_ms), None, "nobody after the end");
    }

    /// A view copies the world at every checkpoint, so the world must not grow
    /// with the run: a long per-period run keeps two reports and two posts.
    #[test]
    fn the_world_at_the_cursor_does_not_grow_with_the_run() {
        let long = scenario(
            r#"{"format": "locklab/1", "seed": 1, "duration_ms": 3600000,
                "world": {"cron_period_ms": 60000, "job_ms": 20000, "background_queries_per_s": 0}}"#,
        );
        let log = simulate(&long, StrategyId::Fencing);
        let timeline = Timeline::build(&long, StrategyId::Fencing, &log);
        let world = timeline.world_at(&log, long.duration_ms());
        let reports: Vec<ReportOf> = world.storage.chunks.iter().map(|((report, _), _)| *report).collect();
        assert!(reports.iter().all(|report| *report >= ReportOf::Period(Period(58))), "{reports:?}");
        assert!(world.db.report_rows.len() <= 2 && world.storage.highest_token.len() <= 2);
        assert_eq!(world.recent_posts.len(), 2);
        assert!(world.slack_post_count >= 59, "every post is counted: {}", world.slack_post_count);
        assert_eq!(world, replay(&timeline, &log, long.duration_ms()), "the same as a full replay");
    }

    #[test]
    fn view_shows_the_paused_holder_still_believing_after_its_ttl() {
        let scenario = gc_pause_at(18_500);
        let log = simulate(&scenario, StrategyId::Fencing);
        let timeline = Timeline::build(&scenario, StrategyId::Fencing, &log);
        let fault = timeline.faults.first().expect("the fault struck");
        let holder = fault.targets[0].instance().expect("an instance was paused");
        let world = timeline.world_at(&log, 60_000);
        let view = world.instance(holder).unwrap();
        assert_eq!(view.process, ProcessView::Paused { until_ms: 108_500 });
        assert!(view.belief.is_some(), "a paused holder keeps believing");
        assert!(view.granted.is_none(), "but Redis no longer counts it");
        assert!(world.believers().len() >= 2, "another instance took the lock");
        let key = world.redis[0].key.expect("the newcomer's key");
        assert_ne!(key.setter, holder);
        let ttl = world.redis[0].ttl_ms(60_000).unwrap();
        assert!(ttl > 0 && ttl <= 30_000, "TTL counts down from 30 s: {ttl}");
        assert!(!timeline.overlaps.is_empty(), "the overlap is a lane");
        let rejected = timeline
            .writes
            .iter()
            .find(|write| matches!(write.verdict, WriteVerdict::Rejected { .. }))
            .expect("the stale write is rejected");
        assert_eq!(rejected.instance, holder);
        let label = rejected.label();
        assert!(label.starts_with('✗') && label.contains(" < "), "{label}");
    }

    #[test]
    fn view_lanes_are_well_formed() {
        let scenario = gc_pause_at(18_500);
        for strategy in StrategyId::ALL {
            let log = simulate(&scenario, strategy);
            let timeline = Timeline::build(&scenario, strategy, &log);
            for span in timeline
                .beliefs
                .iter()
                .chain(&timeline.grants)
                .map(|span| span.span)
                .chain(timeline.overlaps.iter().copied())
            {
                assert!(span.from_ms <= span.to_ms && span.to_ms <= timeline.duration_ms);
            }
            for instance in 0..timeline.instances {
                let spans: Vec<_> = timeline.beliefs_of(InstanceId(instance)).collect();
                for pair in spans.windows(2) {
                    assert!(pair[0].span.to_ms <= pair[1].span.from_ms, "{strategy}: beliefs overlap on one lane");
                }
            }
            let overlap: u64 = timeline.overlaps.iter().map(|span| span.to_ms - span.from_ms).sum();
            let report = crate::report::analyze(&scenario, strategy, &log);
            assert_eq!(overlap, report.metrics.overlap_ms, "{strategy}: overlap lane = report");
        }
    }

    #[test]
    fn view_cost_series_count_every_put_and_post() {
        let scenario = gc_pause_at(18_500);
        for strategy in StrategyId::ALL {
            let log = simulate(&scenario, strategy);
            let timeline = Timeline::build(&scenario, strategy, &log);
            let puts = log
                .iter()
                .filter(|event| matches!(event.kind, EventKind::Put { outcome: PutOutcome::Accepted, .. }))
                .count();
            let posts = log.iter().filter(|event| matches!(event.kind, EventKind::Post { .. })).count();
            let series = &timeline.series;
            assert_eq!(series.puts_total.last().copied(), Some(u32::try_from(puts).unwrap()));
            assert_eq!(series.posts_total.last().copied(), Some(u32::try_from(posts).unwrap()));
            assert_eq!(series.db_connections.len(), usize::try_from(SERIES_BUCKETS).unwrap());
            assert!(series.db_connections.iter().any(|open| *open > 0), "{strategy}: the DB is used");
        }
    }

    #[test]
    fn view_db_lock_shows_holder_and_queue() {
        let scenario = gc_pause_at(18_500);
        let log = simulate(&scenario, StrategyId::DbLock);
        let timeline = Timeline::build(&scenario, StrategyId::DbLock, &log);
        let world = timeline.world_at(&log, 50_000);
        let holder = world
            .db
            .row_lock_holders
            .iter()
            .find(|held| held.mode.is_job_lock())
            .expect("the paused holder still holds the row lock");
        assert!(matches!(holder.client, DbClient::Instance(_)));
        assert!(!world.db.row_lock_queue.is_empty(), "others queue behind it");
        assert!(timeline.holders.iter().any(|span| span.resource == Resource::RowLock), "the row lock is a lane");
    }

    #[test]
    fn view_row_lock_holders_are_open_sessions_and_do_not_pile_up() {
        // Other services' queries that waited for the row are shown holding
        // it, and must be shown letting go: otherwise every checkpoint copies
        // a list that grows with the run.
        let scenario = scenario(
            r#"{"format": "locklab/2", "seed": 5, "duration_ms": 3600000,
                "world": {"background_queries_per_s": 10}, "strategies": {"db-lock": {}},
                "faults": [{"at_ms": 400000, "kind": "gc_pause", "target": "b", "duration_ms": 200000}]}"#,
        );
        let log = simulate(&scenario, StrategyId::DbLock);
        let timeline = Timeline::build(&scenario, StrategyId::DbLock, &log);
        let mut waited = 0;
        // The checkpoints, and the world every ten seconds: most of a job's
        // waiting logs nothing until the row lock goes, so checkpoints (every
        // so many events) can all fall where the queue has just emptied.
        let sampled: Vec<WorldAt> =
            (0..scenario.duration_ms()).step_by(10_000).map(|at| timeline.world_at(&log, at)).collect();
        for world in timeline.checkpoints.iter().chain(&sampled) {
            for held in world.db.row_lock_holders.iter().chain(&world.db.row_lock_queue) {
                assert!(
                    world.db.sessions.get(&held.session).is_some(),
                    "{held:?} at {} ms has no session",
                    world.at_ms
                );
            }
            assert!(world.db.row_lock_holders.len() <= world.db.sessions.len());
            waited += world.db.row_lock_queue.len();
        }
        assert!(waited > 0, "background queries did wait for the row");
    }

    #[test]
    fn view_redlock_has_five_nodes_with_keys() {
        let scenario = gc_pause_at(18_500);
        let log = simulate(&scenario, StrategyId::Redlock);
        let timeline = Timeline::build(&scenario, StrategyId::Redlock, &log);
        assert_eq!(timeline.redis_nodes.len(), 5);
        let world = timeline.world_at(&log, 5_000);
        assert_eq!(world.redis.iter().filter(|node| node.key.is_some()).count(), 5);
    }

    #[test]
    fn view_replica_follows_the_primary_and_failover_loses_the_lag() {
        let scenario = scenario(
            r#"{"format": "locklab/1", "seed": 3, "world": {"redis_replica": true, "replication_lag_ms": 2000},
                "faults": [{"at_ms": 60000, "kind": "redis_failover", "target": "redis-1"}]}"#,
        );
        let log = simulate(&scenario, StrategyId::Fencing);
        let timeline = Timeline::build(&scenario, StrategyId::Fencing, &log);
        assert_eq!(timeline.redis_nodes, vec![Party::Redis(RedisNodeId(0)), Party::RedisReplica]);
        let before = timeline.world_at(&log, 50_000);
        let replica = before.redis_node(Party::RedisReplica).unwrap();
        assert!(replica.standby);
        assert_eq!(replica.counter, before.redis[0].counter, "the counter has replicated");
        let after = timeline.world_at(&log, 80_000);
        let promoted = after.redis_node(Party::RedisReplica).unwrap();
        assert!(!promoted.standby && promoted.up, "the replica was promoted");
        assert!(!after.redis_node(Party::Redis(RedisNodeId(0))).unwrap().up);
        // The replica holds what the last `replicated` event before the
        // cursor brought, and nothing the primary wrote after it.
        let last_replicated = log
            .iter()
            .rev()
            .filter(|event| event.at_ms <= 50_000)
            .find_map(|event| {
                if let EventKind::Replicated { key, counter, .. } = event.kind { Some((key, counter)) } else { None }
            })
            .expect("writes reached the replica before 50 s");
        assert_eq!((replica.key, replica.counter), last_replicated);
        let primary_wrote_later = log.iter().any(|event| {
            (50_000 - 2_000..=50_000).contains(&event.at_ms)
                && matches!(&event.kind, EventKind::Redis { command, .. } if command.writes())
        });
        if !primary_wrote_later {
            assert_eq!(replica.key, before.redis[0].key, "with no write in the lag, the replica has caught up");
        }
    }

    #[test]
    fn view_lease_deadline_moves_with_the_new_leaders_refresh() {
        let scenario = scenario(
            r#"{"format": "locklab/1", "seed": 1, "world": {"failover_ms": 4000},
                "faults": [{"at_ms": 45000, "kind": "consensus_leader_loss"}]}"#,
        );
        let log = simulate(&scenario, StrategyId::Consensus);
        let timeline = Timeline::build(&scenario, StrategyId::Consensus, &log);
        let refreshed = log
            .iter()
            .find_map(|event| {
                if let EventKind::LeaseRefreshed { lease } = event.kind { Some((event.at_ms, lease)) } else { None }
            })
            .expect("the new leader refreshes the holder's lease");
        let (at_ms, lease) = refreshed;
        let world = timeline.world_at(&log, at_ms);
        let key = world.consensus.key.expect("the key is held through the election");
        assert_eq!(key.lease, lease);
        assert_eq!(key.ttl_ms, 30_000, "the consensus strategy's default lease");
        assert_eq!(key.expires_at_ms, at_ms + key.ttl_ms, "the deadline is the refresh's, not the last keep-alive's");
    }

    #[test]
    fn view_prefix_before_an_injected_fault_is_unchanged() {
        // The lab forks a run by adding a fault at the cursor; what came before must not move.
        let calm = scenario(r#"{"format": "locklab/1", "seed": 1}"#);
        let forked = gc_pause_at(9_000);
        for strategy in StrategyId::ALL {
            let before = simulate(&calm, strategy);
            let after = simulate(&forked, strategy);
            let prefix =
                |log: &[Event]| -> Vec<Event> { log.iter().filter(|event| event.at_ms < 9_000).cloned().collect() };
            assert_eq!(prefix(&before), prefix(&after), "{strategy}");
        }
    }
}
