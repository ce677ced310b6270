//! The discrete-event core: one queue of actions ordered by (simulated time,
//! sequence number), the parties of the world, the network between them, and
//! the faults that strike them.
//!
//! Invariants, each backed by an `assert!` where it is cheap:
//! - time never goes backwards: every action runs at or after the last one;
//! - ties are broken by the order actions were queued, never by a hash;
//! - randomness comes only from the seeded streams forked in [`Sim::new`], in a
//!   fixed order (network, background traffic, then one per instance), so a
//!   fault added at `t` changes nothing that happens before `t`;
//! - the log is only appended to.

pub(crate) mod consensus;
pub(crate) mod db;
pub(crate) mod probe;
pub(crate) mod process;
pub(crate) mod redis;
pub(crate) mod table;

use crate::clock::{ClockChange, ClockKind, LocalClock};
use crate::event::{Event, EventKind, LossReason, MessageKind, PutOutcome};
use crate::ids::{InstanceId, MessageId, Party, ReportOf, RunId, SessionId, Token};
use crate::rng::SimRng;
use crate::runtime::{InstanceTimer, RunCx, Runtime};
use crate::scenario::{Fault, ReportRule, Scenario, StrategySettings, Target, World};
use crate::strategy::Strategy;
use crate::table::Table;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

pub use crate::vocab::{Reply, Request, TimerId};
pub(crate) use process::{Instance, RunRecord, SimHost};

/// A strategy as the simulator holds it: driven by the instance runtime on
/// the world's own host, [`SimHost`], so the simulation's calls are direct
/// (and inlined) while the same strategy code can be driven by any other `Context`.
pub(crate) type SimStrategy = dyn for<'a, 's> Strategy<RunCx<'a, SimHost<'s>>>;

/// Builds the strategy for a setting, as the simulator holds it.
pub(crate) fn build(settings: &StrategySettings) -> Box<SimStrategy> {
    crate::strategy::boxed_strategy!(settings)
}

#[derive(Clone, Copy, Debug)]
enum Payload {
    Request {
        request: u32,
        run: RunId,
        body: Request,
    },
    Reply {
        request: u32,
        body: Reply,
    },
    /// The kernel's FIN for a DB session of a process that died.
    Fin {
        session: SessionId,
    },
}

#[derive(Clone, Copy, Debug)]
struct Message {
    from: Party,
    to: Party,
    payload: Payload,
}

/// What a timer is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimerPurpose {
    /// One of an instance runtime's timers.
    Instance {
        instance: InstanceId,
        timer: InstanceTimer,
    },
    KeyExpiry {
        node: Party,
    },
    LockTimeout {
        session: SessionId,
    },
    IdleTimeout {
        session: SessionId,
    },
    LeaseExpiry {
        lease: crate::ids::LeaseId,
    },
}

#[derive(Clone, Copy, Debug)]
struct TimerEntry {
    party: Party,
    /// The party's clock the deadline is read on.
    on: ClockKind,
    deadline_local_ms: i64,
    purpose: TimerPurpose,
}

// A run sets thousands of timers and keeps every entry until it ends: an
// entry of 40 bytes instead of 32 cost a tenth more page faults and time.
const _: () = assert!(size_of::<TimerEntry>() <= 32, "a timer entry fits 32 bytes");

/// A table of values under sequential `u32` ids, each taken out at most once.
/// Ids are handed out in order and never reused within a run, so lookups are
/// an index and the order is the order of creation: deterministic, no hashing.
#[derive(Clone, Debug)]
pub(crate) struct Slots<T> {
    items: Vec<Option<T>>,
}

impl<T: Copy> Slots<T> {
    fn new() -> Slots<T> {
        Slots { items: Vec::new() }
    }
    fn with_capacity(capacity: usize) -> Slots<T> {
        Slots { items: Vec::with_capacity(capacity) }
    }
    pub(crate) fn push(&mut self, item: T) -> u32 {
        self.items.push(Some(item));
        u32::try_from(self.items.len() - 1).expect("fewer than 2^32 items in a run")
    }
    fn get(&self, id: u32) -> Option<T> {
        self.items.get(usize::try_from(id).ok()?).copied().flatten()
    }
    fn take(&mut self, id: u32) -> Option<T> {
        self.items.get_mut(usize::try_from(id).ok()?).and_then(Option::take)
    }
    /// Live items with their ids, in creation order.
    fn live(&self) -> impl Iterator<Item = (u32, T)> + '_ {
        (0u32..).zip(self.items.iter()).filter_map(|(id, item)| item.map(|item| (id, item)))
    }
}

/// How many parties have a slot in per-party tables (clocks, links).
const PARTY_SLOTS: usize = 18;

/// A party's place in per-party tables.
fn slot(party: Party) -> usize {
    match party {
        Party::Instance(id) => id.index(),
        Party::Redis(node) => 8 + node.index(),
        Party::RedisReplica => 13,
        Party::Db => 14,
        Party::Consensus => 15,
        Party::Storage => 16,
        Party::Slack => 17,
    }
}

/// Something queued to happen at a true time.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Action {
    Fault(u32),
    Timer {
        id: TimerId,
        epoch: u32,
    },
    Deliver(MessageId),
    Resume {
        instance: InstanceId,
        generation: u32,
    },
    Restart {
        instance: InstanceId,
    },
    RedisUp {
        node: Party,
    },
    Promote,
    LeaderUp,
    StatementDone {
        session: SessionId,
        statement: u32,
    },
    /// A write reaches the replica; the op waits in the replication table.
    Replicate {
        op: u32,
        incarnation: u32,
    },
    BackgroundGiveUp {
        query: u32,
    },
    BackgroundDone {
        query: u32,
    },
    KeepaliveExpiry {
        session: SessionId,
    },
    /// The fast path's `FOR KEY SHARE` has ended: the row lock's queue may move.
    RowRecheck,
}

/// How many low bits of a queue key hold the sequence number.
const SEQ_BITS: u32 = 36;

/// An action in the queue. Its key is the time it falls due and its
/// sequence number packed into one integer, `at_ms << SEQ_BITS | seq`, so a
/// heap level compares one integer, without a branch, instead of a tuple's
/// two fields (the heap's pops were a quarter of a run; what is left of their
/// cost is the chain of loads down the heap). A run is at most a day
/// (validated, asserted in `Sim::new`), under 2^28 ms, and queues far fewer
/// than 2^36 actions (asserted in `schedule`), so the packing loses nothing.
#[derive(Clone, Copy, Debug)]
struct Queued {
    key: u64,
    action: Action,
}

impl Queued {
    fn at_ms(&self) -> u64 {
        self.key >> SEQ_BITS
    }
}

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// A party's wall and monotonic clocks (`clock.rs`): one oscillator, so a
/// drift changes both; a step moves the wall clock alone.
#[derive(Clone, Copy, Debug)]
struct ClockState {
    clock: LocalClock,
    monotonic: LocalClock,
    /// Bumped on every change of the wall clock, so timers queued under the old reading are ignored.
    epoch: u32,
    /// The same for the monotonic clock, which a step leaves as it is.
    monotonic_epoch: u32,
}

impl ClockState {
    fn of(&self, on: ClockKind) -> (LocalClock, u32) {
        match on {
            ClockKind::Wall => (self.clock, self.epoch),
            ClockKind::Monotonic => (self.monotonic, self.monotonic_epoch),
        }
    }
}

#[derive(Clone, Debug)]
struct Window {
    from: Vec<Party>,
    to: Vec<Party>,
    start_ms: u64,
    end_ms: u64,
    both_ways: bool,
    extra_ms: u64,
}

impl Window {
    fn covers(&self, from: Party, to: Party, at_ms: u64) -> bool {
        if at_ms < self.start_ms || at_ms >= self.end_ms {
            return false;
        }
        let forward = self.from.contains(&from) && self.to.contains(&to);
        let backward = self.both_ways && self.from.contains(&to) && self.to.contains(&from);
        forward || backward
    }
}

/// Object storage: the highest token seen per report, when it checks tokens.
#[derive(Clone, Debug, Default)]
pub(crate) struct Storage {
    /// The engine's sorted-vector map, as the view's, not a `BTreeMap`.
    highest_token: Table<ReportOf, Token>,
}

/// The whole simulated world and its queue.
pub(crate) struct Sim {
    pub(crate) world: World,
    /// The scenario's end: no cron tick starts a run at or after it. The runs
    /// already in flight go on (see [`Sim::drained`]).
    pub(crate) window_end_ms: u64,
    /// Nothing is queued at or after it: the window's end plus the longest
    /// the runs in flight may take to finish ([`Scenario::drain_ms`]).
    pub(crate) horizon_ms: u64,
    pub(crate) now_ms: u64,
    seq: u64,
    queue: BinaryHeap<Reverse<Queued>>,
    /// Request timeouts waiting outside the heap, by key (see `park`).
    parked: VecDeque<Queued>,
    /// The key of the parked timeout that is in the heap, below every key in `parked`.
    parked_guard: Option<u64>,
    /// Whether request timeouts are parked; off only for the reference run
    /// the parking is tested against (`simulate_unparked`).
    pub(crate) park_timeouts: bool,
    /// When the one pending background arrival falls due: it is kept out of
    /// the heap (see `schedule_background`), and may lag behind `now_ms`
    /// while the arrivals are deferred (see `db::background_deferred`).
    next_background: Option<u64>,
    /// Whether arrivals may be deferred; off only for the test that checks
    /// deferring changes nothing.
    pub(crate) defer_background: bool,
    /// Arrivals are being deferred (see `db::background_deferred`).
    background_deferring: bool,
    pub(crate) log: Vec<Event>,
    rng_network: SimRng,
    pub(crate) rng_background: SimRng,
    /// What the world keeps of each instance's process (see `process`).
    pub(crate) instances: Vec<Instance>,
    /// Each instance's runtime; out of the world while one is called (see `Sim::with_runtime`).
    pub(crate) runtimes: Vec<Option<Box<Runtime>>>,
    /// Every run, as the servers know it, by id.
    pub(crate) runs: Vec<RunRecord>,
    pub(crate) redis: redis::RedisCluster,
    pub(crate) db: db::Database,
    pub(crate) consensus: consensus::ConsensusStore,
    storage: Storage,
    /// Messages from instances still on the wire: a write sent before a run
    /// ended can land after it, so the run is not over while one is.
    instance_messages_in_flight: u32,
    clocks: [ClockState; PARTY_SLOTS],
    timers: Slots<TimerEntry>,
    messages: Slots<Message>,
    pub(crate) replications: Slots<redis::ReplicationOp>,
    /// When the last message on each directed link arrives: TCP keeps order.
    link_last_arrival: Vec<u64>,
    partitions: Vec<Window>,
    delays: Vec<Window>,
    faults: Vec<Fault>,
    pub(crate) next_request: u32,
}

impl std::fmt::Debug for Sim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sim").field("now_ms", &self.now_ms).field("events", &self.log.len()).finish()
    }
}

impl Sim {
    pub(crate) fn new(scenario: &Scenario, settings: StrategySettings) -> Sim {
        let world = scenario.world.clone();
        let mut root = SimRng::from_seed(scenario.seed);
        // The fork order is part of the format's meaning: never reorder it.
        let rng_network = root.fork();
        let rng_background = root.fork();
        let instance_rngs: Vec<SimRng> = (0..world.instances).map(|_| root.fork()).collect();

        let redis = redis_for(&world, &settings);
        let clock = LocalClock::default();
        let clocks = [ClockState { clock, monotonic: clock, epoch: 0, monotonic_epoch: 0 }; PARTY_SLOTS];

        let reports = ReportRule::of(scenario);
        let instances = (0..world.instances).map(|_| Instance::new()).collect();
        let runtimes = (0..world.instances)
            .zip(instance_rngs)
            .map(|(index, rng)| {
                Some(Box::new(Runtime::new(InstanceId(index), rng, &world, reports, scenario.duration_ms())))
            })
            .collect();
        let mut db = db::Database::new(&world);
        db.configure(&settings);
        // Queue keys pack the time into the bits above the sequence number.
        let horizon_ms = scenario.horizon_ms();
        assert!(
            horizon_ms < 1 << (64 - SEQ_BITS),
            "a run of {horizon_ms} ms is longer than the engine can queue (validation allows a day and its drain)"
        );
        let mut sim = Sim {
            window_end_ms: scenario.duration_ms(),
            horizon_ms,
            now_ms: 0,
            seq: 0,
            // Sized for a typical run, so the hot tables rarely grow mid-run.
            queue: BinaryHeap::with_capacity(64),
            parked: VecDeque::with_capacity(64),
            parked_guard: None,
            park_timeouts: true,
            next_background: None,
            defer_background: true,
            background_deferring: false,
            log: Vec::with_capacity(1024),
            rng_network,
            rng_background,
            instances,
            runtimes,
            runs: Vec::with_capacity(128),
            redis,
            db,
            consensus: consensus::ConsensusStore::default(),
            storage: Storage::default(),
            instance_messages_in_flight: 0,
            clocks,
            timers: Slots::with_capacity(512),
            messages: Slots::with_capacity(1024),
            replications: Slots::new(),
            link_last_arrival: vec![0; PARTY_SLOTS * PARTY_SLOTS],
            partitions: Vec::new(),
            delays: Vec::new(),
            faults: scenario.faults.clone(),
            next_request: 0,
            world,
        };
        sim.queue_start();
        sim
    }

    /// What is queued before time starts: the faults first, so that at equal
    /// times they strike before anything else; each instance's first cron
    /// tick; other services' first query.
    fn queue_start(&mut self) {
        for index in 0..self.faults.len() {
            let at = self.faults[index].at_ms();
            self.schedule(at, Action::Fault(u32::try_from(index).unwrap_or(u32::MAX)));
        }
        for index in 0..self.world.instances {
            self.with_runtime(InstanceId(index), |runtime, host| runtime.start(host));
        }
        if self.world.background_queries_per_s > 0 {
            let gap = self.background_gap_ms();
            self.schedule_background(gap);
        }
    }

    /// Runs the simulation, driving `strategy`, until it ends or its log
    /// holds `log_until` events or more; says whether it ended. A run whose
    /// log reaches [`crate::budget::MAX_LOGGED_EVENTS`] ends there.
    pub(crate) fn run_until(&mut self, strategy: &mut SimStrategy, log_until: usize) -> bool {
        let cap = usize::try_from(crate::budget::MAX_LOGGED_EVENTS).unwrap_or(usize::MAX);
        loop {
            if self.log.len() >= cap {
                // A step may log several events: the log ends at the cap exactly.
                self.log.truncate(cap);
                break;
            }
            if self.log.len() >= log_until {
                return false;
            }
            // Other services' arrivals are most of what happens in a run: the
            // pending one, and those after it, go straight to their handler
            // while they come no later than the heap's next action (at equal
            // times, arrivals first), unless they can be deferred.
            let heap_next_ms = self.queue.peek().map_or(u64::MAX, |Reverse(top)| top.at_ms());
            let background_next = self
                .next_background
                .filter(|background_ms| *background_ms <= heap_next_ms && !self.background_deferred());
            let next_ms = background_next.unwrap_or(heap_next_ms);
            // The run ends at the horizon, or once the window has closed and
            // nothing of the job is left in flight; what comes after (other
            // services' traffic, timers of no run) changes no verdict.
            if next_ms >= self.horizon_ms || (next_ms >= self.window_end_ms && self.drained()) {
                break;
            }
            if background_next.is_some() {
                self.background_until(heap_next_ms);
            } else {
                let Some(Reverse(next)) = self.queue.pop() else {
                    break;
                };
                if self.parked_guard == Some(next.key) {
                    self.unpark();
                }
                self.advance_to(next.at_ms());
                self.dispatch(next.action, strategy);
            }
        }
        self.now_ms = self.now_ms.max(self.window_end_ms).min(self.horizon_ms);
        // Other services' queries still waiting are part of what the run did:
        // the log says so, or a wait longer than the run would leave no trace.
        self.background_still_waiting();
        self.log.truncate(cap);
        true
    }

    /// Whether nothing of the job is in flight: no run of any instance is
    /// live (trying, waiting, working or paused mid-job), no job waits for a
    /// restart to be handed out again, no upload is still streaming out, and
    /// no message an instance sent is on the wire. After the window closes,
    /// the run ends when this holds: runs that started before the end
    /// finish, and a write sent before a run ended still lands, so no
    /// verdict depends on where the window ends.
    fn drained(&self) -> bool {
        self.instance_messages_in_flight == 0
            && (0..self.world.instances).all(|index| self.instance_idle(InstanceId(index)))
    }

    fn advance_to(&mut self, at_ms: u64) {
        assert!(at_ms >= self.now_ms, "time went backwards: {at_ms} < {}", self.now_ms);
        self.now_ms = at_ms;
    }

    fn dispatch(&mut self, action: Action, strategy: &mut SimStrategy) {
        match action {
            Action::Fault(index) => self.apply_fault(index, strategy),
            Action::Timer { id, epoch } => self.fire_timer(id, epoch, strategy),
            Action::Deliver(message) => self.deliver(message, strategy),
            Action::Resume { instance, generation } => self.resume(instance, generation),
            Action::Restart { instance } => self.restart(instance, strategy),
            Action::RedisUp { node } => self.redis_up(node),
            Action::Promote => self.promote_replica(),
            Action::LeaderUp => self.leader_up(),
            Action::StatementDone { session, statement } => self.statement_done(session, statement),
            Action::Replicate { op, incarnation } => {
                if let Some(op) = self.replications.take(op) {
                    self.replicate(op, incarnation);
                }
            }
            Action::BackgroundGiveUp { query } => self.background_give_up(query),
            Action::BackgroundDone { query } => self.background_done(query),
            Action::KeepaliveExpiry { session } => self.keepalive_expiry(session),
            Action::RowRecheck => self.row_recheck(),
        }
    }

    // ----- queue, log, clocks and timers -----

    #[inline]
    pub(crate) fn schedule(&mut self, at_ms: u64, action: Action) {
        if let Some(entry) = self.queued(at_ms, action) {
            self.queue.push(Reverse(entry));
        }
    }

    /// The queue entry for an action due at `at_ms` (now, if that is past),
    /// with the next sequence number; `None` when it falls due at or after
    /// the end, since then it never runs and is not queued.
    #[inline(always)]
    fn queued(&mut self, at_ms: u64, action: Action) -> Option<Queued> {
        let at_ms = at_ms.max(self.now_ms);
        if at_ms >= self.horizon_ms {
            return None;
        }
        self.seq += 1;
        assert!(self.seq < 1 << SEQ_BITS, "more than 2^{SEQ_BITS} actions queued in one run");
        Some(Queued { key: at_ms << SEQ_BITS | self.seq, action })
    }

    /// Queues a request timeout. Nearly every one is cancelled by its reply
    /// long before it is due, and then its turn in the heap would be a pop
    /// that does nothing. So only the timeout with the smallest key, the
    /// guard, is in the heap; the others wait in `parked`, in key order, each
    /// with the key it would have had in the heap. When the guard's turn
    /// comes (see `run`), the first parked timeout still live takes its place,
    /// and those cancelled meanwhile are dropped unseen. Every live timeout so
    /// reaches the heap before its key comes up, with its own key: the world
    /// sees the same actions in the same order, less the pops that did nothing.
    fn park(&mut self, entry: Queued) {
        match self.parked_guard {
            Some(guard) if entry.key > guard => {
                let index = self.parked.partition_point(|parked| parked.key < entry.key);
                self.parked.insert(index, entry);
            }
            // Nothing parked is in the heap, or this one comes first: it is the new guard.
            _ => {
                self.parked_guard = Some(entry.key);
                self.queue.push(Reverse(entry));
            }
        }
    }

    /// The guard's turn: the first parked timeout still live becomes the guard.
    fn unpark(&mut self) {
        self.parked_guard = None;
        while let Some(entry) = self.parked.pop_front() {
            if let Action::Timer { id, epoch } = entry.action
                && let Some(timer) = self.timers.get(id.0)
                && self.timer_epoch(timer) == epoch
            {
                self.parked_guard = Some(entry.key);
                self.queue.push(Reverse(entry));
                return;
            }
            // Cancelled, or queued under a clock reading that has since changed: it would do nothing.
        }
    }

    /// Queues the next arrival of other services' traffic. Arrivals are most
    /// of a run's actions and only one is ever pending, so it waits beside the
    /// heap, and `run` takes it before any of the world's own actions due at
    /// the same time or later. It takes no sequence number, so deferring
    /// arrivals (see `db::background_deferred`) leaves the world's own order as it is.
    pub(crate) fn schedule_background(&mut self, at_ms: u64) {
        assert!(self.next_background.is_none(), "two background arrivals pending");
        self.next_background = Some(at_ms.max(self.now_ms));
    }

    pub(crate) fn record(&mut self, kind: EventKind) {
        self.log.push(Event { at_ms: self.now_ms, kind });
    }

    fn clock_state(&self, party: Party) -> ClockState {
        self.clocks[slot(party)]
    }

    /// The epoch of the clock timer `entry` is read on.
    fn timer_epoch(&self, entry: TimerEntry) -> u32 {
        self.clock_state(entry.party).of(entry.on).1
    }

    /// What `party`'s (wall) clock reads now.
    pub(crate) fn local_now(&self, party: Party) -> i64 {
        self.clock_state(party).clock.local_at(self.now_ms)
    }

    /// What `party`'s monotonic clock reads now.
    pub(crate) fn monotonic_now(&self, party: Party) -> i64 {
        self.clock_state(party).monotonic.local_at(self.now_ms)
    }

    /// Sets a timer that fires when `party`'s clock has advanced `after_ms`.
    pub(crate) fn set_timer(&mut self, party: Party, after_ms: u64, purpose: TimerPurpose) -> TimerId {
        let deadline = self.local_now(party).saturating_add(i64::try_from(after_ms).unwrap_or(i64::MAX / 4));
        self.set_timer_at(party, deadline, purpose)
    }

    /// Sets a timer that fires when `party`'s (wall) clock reads `deadline_local_ms`.
    pub(crate) fn set_timer_at(&mut self, party: Party, deadline_local_ms: i64, purpose: TimerPurpose) -> TimerId {
        self.set_timer_on(party, ClockKind::Wall, deadline_local_ms, purpose)
    }

    /// Sets a timer that fires when `party`'s clock `on` reads `deadline_ms`.
    pub(crate) fn set_timer_on(
        &mut self,
        party: Party,
        on: ClockKind,
        deadline_ms: i64,
        purpose: TimerPurpose,
    ) -> TimerId {
        let entry = TimerEntry { party, on, deadline_local_ms: deadline_ms, purpose };
        let id = TimerId(self.timers.push(entry));
        self.queue_timer_for(id, entry);
        id
    }

    fn queue_timer(&mut self, id: TimerId) {
        if let Some(entry) = self.timers.get(id.0) {
            self.queue_timer_for(id, entry);
        }
    }

    /// Queues timer `id` for when its clock, as it runs now, reads its deadline.
    fn queue_timer_for(&mut self, id: TimerId, entry: TimerEntry) {
        let (clock, epoch) = self.clock_state(entry.party).of(entry.on);
        let at = clock.true_when(entry.deadline_local_ms, self.now_ms);
        if at >= self.horizon_ms {
            return;
        }
        let action = Action::Timer { id, epoch };
        if let TimerPurpose::Instance { timer: InstanceTimer::RequestTimeout { .. }, .. } = entry.purpose
            && self.park_timeouts
        {
            if let Some(entry) = self.queued(at, action) {
                self.park(entry);
            }
        } else {
            self.schedule(at, action);
        }
    }

    /// When a live timer is due, by its party's clock.
    pub(crate) fn timer_deadline(&self, id: TimerId) -> Option<i64> {
        self.timers.get(id.0).map(|entry| entry.deadline_local_ms)
    }

    pub(crate) fn cancel_timer(&mut self, id: TimerId) {
        self.timers.take(id.0);
    }

    /// Drops every timer a party has set (its process died).
    pub(crate) fn cancel_party_timers(&mut self, party: Party) {
        let doomed: Vec<u32> = self.timers.live().filter(|(_, entry)| entry.party == party).map(|(id, _)| id).collect();
        for id in doomed {
            self.timers.take(id);
        }
    }

    /// Changes a party's clocks and re-queues the timers on each clock that
    /// changed under its new reading: a step leaves monotonic timers queued as they were.
    pub(crate) fn change_clock(&mut self, party: Party, change: ClockChange) {
        let now = self.now_ms;
        if !self.exists(party) {
            return; // e.g. redis-3 under a single-Redis strategy: no such node, no clock
        }
        let state = &mut self.clocks[slot(party)];
        change.apply(&mut state.clock, now);
        state.epoch += 1;
        let monotonic_moved = change.moves_monotonic();
        if monotonic_moved {
            change.apply(&mut state.monotonic, now);
            state.monotonic_epoch += 1;
        }
        let (local_ms, drift_ppm) = (state.clock.local_at(now), state.clock.drift_ppm());
        self.record(EventKind::Clock { party, local_ms, drift_ppm });
        let moved = |on: ClockKind| match on {
            ClockKind::Wall => true,
            ClockKind::Monotonic => monotonic_moved,
        };
        let affected: Vec<TimerId> = self
            .timers
            .live()
            .filter(|(_, entry)| entry.party == party && moved(entry.on))
            .map(|(id, _)| TimerId(id))
            .collect();
        for id in affected {
            self.queue_timer(id);
        }
    }

    /// Whether a party exists in this world (a fault may name one that does not).
    fn exists(&self, party: Party) -> bool {
        match party {
            Party::Instance(id) => id.0 < self.world.instances,
            Party::Redis(_) | Party::RedisReplica => self.redis.node(party).is_some(),
            Party::Db | Party::Storage | Party::Slack | Party::Consensus => true,
        }
    }

    fn fire_timer(&mut self, id: TimerId, epoch: u32, strategy: &mut SimStrategy) {
        let Some(entry) = self.timers.get(id.0) else {
            return;
        };
        if self.timer_epoch(entry) != epoch {
            return; // queued under a clock reading that has since changed
        }
        if let Party::Instance(instance) = entry.party
            && self.instances[instance.index()].is_paused()
        {
            // Stop-the-world: the timer is overdue; it fires when the process resumes.
            self.instances[instance.index()].defer(Action::Timer { id, epoch });
            return;
        }
        self.timers.take(id.0);
        match entry.purpose {
            TimerPurpose::KeyExpiry { node } => self.redis_key_expiry(node),
            TimerPurpose::LockTimeout { session } => self.lock_timeout(session),
            TimerPurpose::IdleTimeout { session } => self.idle_timeout(session),
            TimerPurpose::LeaseExpiry { lease } => self.lease_expiry(lease),
            TimerPurpose::Instance { instance, timer } => self.instance_timer(instance, timer, strategy),
        }
    }

    // ----- the network -----

    /// Sends a message; returns whether it is on its way.
    fn send_message(&mut self, from: Party, to: Party, payload: Payload) {
        let what = match &payload {
            Payload::Request { body, .. } => body.kind(),
            Payload::Reply { .. } => MessageKind::Reply,
            Payload::Fin { .. } => MessageKind::Sql,
        };

        let id = MessageId(self.messages.push(Message { from, to, payload }));
        if from.instance().is_some() {
            self.instance_messages_in_flight += 1;
        }
        let now = self.now_ms;
        if self.partitions.iter().any(|window| window.covers(from, to, now)) {
            self.take_message(id);
            self.record(EventKind::Sent { message: id, from, to, what, arrive_at_ms: None });
            return;
        }
        let [low, high] = self.world.network_latency_ms;
        let latency = self.rng_network.between(low, high);
        let extra: u64 =
            self.delays.iter().filter(|window| window.covers(from, to, now)).map(|window| window.extra_ms).sum();
        let mut arrive = now + latency + extra;
        // One TCP connection per link: a later message never overtakes an earlier one.
        let last = &mut self.link_last_arrival[slot(from) * PARTY_SLOTS + slot(to)];
        arrive = arrive.max(*last);
        *last = arrive;
        self.record(EventKind::Sent { message: id, from, to, what, arrive_at_ms: Some(arrive) });
        self.schedule(arrive, Action::Deliver(id));
    }

    fn deliver(&mut self, id: MessageId, strategy: &mut SimStrategy) {
        let Some(message) = self.messages.get(id.0) else {
            return;
        };
        let now = self.now_ms;
        if self.partitions.iter().any(|window| window.covers(message.from, message.to, now)) {
            self.take_message(id);
            self.record(EventKind::Lost { message: id, reason: LossReason::Partition });
            return;
        }
        if let Party::Instance(instance) = message.to {
            let state = &mut self.instances[instance.index()];
            if state.is_paused() {
                // Replies wait in the socket buffer until the process runs again.
                state.defer(Action::Deliver(id));
                return;
            }
            if !state.is_alive() {
                self.take_message(id);
                self.record(EventKind::Lost { message: id, reason: LossReason::ReceiverDown });
                return;
            }
        }
        self.take_message(id);
        match message.payload {
            Payload::Request { request, run, body } => self.serve(message.from, message.to, request, run, body),
            Payload::Reply { request, body } => {
                if let Party::Instance(instance) = message.to {
                    self.instance_reply(instance, request, body, strategy);
                }
            }
            Payload::Fin { session } => self.client_disconnected(session),
        }
    }

    /// Takes a message off the wire (delivered or lost), counting those an instance sent.
    fn take_message(&mut self, id: MessageId) -> Option<Message> {
        let message = self.messages.take(id.0)?;
        if message.from.instance().is_some() {
            self.instance_messages_in_flight -= 1;
        }
        Some(message)
    }

    /// A server answers a request.
    fn serve(&mut self, from: Party, to: Party, request: u32, run: RunId, body: Request) {
        let Some(client) = from.instance() else {
            return;
        };
        // Each request is served by its kind's server; one that went to
        // another party (no strategy sends one) is not served at all.
        match body {
            Request::Redis(command) if matches!(to, Party::Redis(_) | Party::RedisReplica) => {
                if let Some(reply) = self.redis_execute(to, client, run, command) {
                    self.reply(to, from, request, Reply::Redis(reply));
                }
            }
            Request::Sql { session, sql } if to == Party::Db => self.db_receive(from, request, run, session, sql),
            Request::Put { period, report, chunk, own_object, token } if to == Party::Storage => {
                let outcome = self.storage_put(report, token);
                let put = EventKind::Put { instance: client, run, period, report, chunk, own_object, token, outcome };
                self.record(put);
                self.reply(to, from, request, Reply::Put(outcome));
            }
            Request::Post { period } if to == Party::Slack => {
                self.record(EventKind::Post { instance: client, run, period });
                self.reply(to, from, request, Reply::Posted);
            }
            Request::Consensus(op) if to == Party::Consensus => {
                if let Some(reply) = self.consensus_execute(client, run, op) {
                    self.reply(to, from, request, Reply::Consensus(reply));
                }
            }
            Request::Redis(_)
            | Request::Sql { .. }
            | Request::Put { .. }
            | Request::Post { .. }
            | Request::Consensus(_) => {}
        }
    }

    pub(crate) fn reply(&mut self, from: Party, to: Party, request: u32, body: Reply) {
        self.send_message(from, to, Payload::Reply { request, body });
    }

    fn storage_put(&mut self, report: ReportOf, token: Option<Token>) -> PutOutcome {
        let highest = self.storage.highest_token.get(&report).copied();
        let (outcome, highest) = PutOutcome::fence(self.world.storage_checks_tokens, token, highest);
        if let Some(highest) = highest {
            self.storage.highest_token.insert(report, highest);
        }
        outcome
    }

    // ----- faults -----

    /// The parties a target names now.
    fn resolve(&self, target: Target) -> Vec<Party> {
        match target {
            Target::Party(party) => vec![party],
            Target::AllRedis => self.redis.all_parties(),
            Target::Holder => self.holder().map(Party::Instance).into_iter().collect(),
        }
    }

    /// The instance holding the lock now: by the lock service's truth, else
    /// the one that has believed it longest, else (unique-insert) the oldest live job.
    /// Each test takes the live run with the lowest id that passes it. Only
    /// the runtimes' live runs are looked at, not every run of the night with
    /// a lookup each: a run that ended has left its runtime's live list, and
    /// so has every run of a process that died.
    fn holder(&self) -> Option<InstanceId> {
        let (mut granted, mut believer, mut starter) = (None, None, None);
        for runtime in self.runtimes.iter().flatten() {
            for (run, state) in runtime.live_runs() {
                if state.ended() || runtime.generation() != state.generation() {
                    continue;
                }
                if self.runs[run_index(run)].granted {
                    earliest(&mut granted, run);
                }
                if state.believes() {
                    earliest(&mut believer, run);
                }
                if state.started() {
                    earliest(&mut starter, run);
                }
            }
        }
        granted.or(believer).or(starter).map(|run| self.runs[run_index(run)].instance)
    }

    fn apply_fault(&mut self, index: u32, strategy: &mut SimStrategy) {
        let fault = self.faults[usize::try_from(index).unwrap_or(0)].clone();
        let targets = self.fault_targets(&fault);
        self.record(EventKind::Fault { fault: fault.clone(), targets: targets.clone() });
        let now = self.now_ms;
        let instances = || targets.iter().filter_map(|party| party.instance());
        match fault {
            Fault::OomKill { restart_after_ms, .. } => self.kill_all(instances(), false, restart_after_ms, strategy),
            Fault::HostLoss { restart_after_ms, .. } => self.kill_all(instances(), true, restart_after_ms, strategy),
            Fault::GcPause { duration_ms, .. } => instances().for_each(|instance| self.pause(instance, duration_ms)),
            Fault::ClockJump { by_ms, .. } => {
                targets.iter().for_each(|party| self.change_clock(*party, ClockChange::Jump { by_ms }));
            }
            Fault::ClockDrift { ppm, .. } => {
                targets.iter().for_each(|party| self.change_clock(*party, ClockChange::Drift { ppm }));
            }
            Fault::NetworkDelay { from, to, extra_ms, duration_ms, .. } => {
                let (from, to, end_ms) = (self.resolve(from), self.resolve(to), now + duration_ms);
                self.delays.push(Window { from, to, start_ms: now, end_ms, both_ways: false, extra_ms });
            }
            Fault::Partition { between, duration_ms, one_way, .. } => {
                let (from, to, end_ms) = (self.resolve(between[0]), self.resolve(between[1]), now + duration_ms);
                let window = Window { from, to, start_ms: now, end_ms, both_ways: !one_way, extra_ms: 0 };
                self.cut_off_from_db(&window, duration_ms);
                self.partitions.push(window);
            }
            Fault::RedisRestart { down_ms, .. } => {
                targets.iter().for_each(|node| self.redis_down(*node, Some(down_ms)))
            }
            Fault::RedisFailover { .. } => targets.iter().for_each(|node| self.redis_failover(*node)),
            Fault::ConsensusLeaderLoss { .. } => self.leader_lost(),
            Fault::DbSlow { factor, duration_ms, .. } => self.db_slow(factor, duration_ms),
        }
    }

    /// The parties a fault strikes, as its event names them.
    fn fault_targets(&self, fault: &Fault) -> Vec<Party> {
        match fault {
            Fault::OomKill { target, .. }
            | Fault::HostLoss { target, .. }
            | Fault::GcPause { target, .. }
            | Fault::ClockJump { target, .. }
            | Fault::ClockDrift { target, .. }
            | Fault::RedisRestart { target, .. }
            | Fault::RedisFailover { target, .. } => self.resolve(*target),
            Fault::NetworkDelay { from, to, .. } => [self.resolve(*from), self.resolve(*to)].concat(),
            Fault::Partition { between, .. } => [self.resolve(between[0]), self.resolve(between[1])].concat(),
            Fault::ConsensusLeaderLoss { .. } => vec![Party::Consensus],
            Fault::DbSlow { .. } => vec![Party::Db],
        }
    }

    /// Kills each instance (its host lost, or its process alone), queuing
    /// its restart `restart_after_ms` later when that falls inside the run.
    fn kill_all(
        &mut self,
        instances: impl Iterator<Item = InstanceId>,
        host_lost: bool,
        restart_after_ms: Option<u64>,
        strategy: &mut SimStrategy,
    ) {
        let now = self.now_ms;
        for instance in instances {
            self.kill(instance, host_lost, strategy);
            if let Some(after) = restart_after_ms
                && now + after < self.horizon_ms
            {
                self.schedule(now + after, Action::Restart { instance });
                self.instances[instance.index()].restart_queued = true;
            }
        }
    }

    /// A partition between instances and the database that outlasts TCP
    /// keepalive: the server's probes go unanswered, so it ends those
    /// instances' sessions when keepalive gives up, as it does for a lost
    /// host, and their transactions and row locks go with them.
    fn cut_off_from_db(&mut self, window: &Window, duration_ms: u64) {
        if duration_ms < self.world.tcp_keepalive_ms {
            return;
        }
        let sides = [(&window.from, &window.to), (&window.to, &window.from)];
        let cut: Vec<InstanceId> = sides
            .into_iter()
            .filter(|(_, other)| other.contains(&Party::Db))
            .flat_map(|(side, _)| side.iter().filter_map(|party| party.instance()))
            .collect();
        let at = self.now_ms + self.world.tcp_keepalive_ms;
        for instance in cut {
            for session in self.runtime(instance).pool_sessions() {
                self.schedule(at, Action::KeepaliveExpiry { session });
            }
        }
    }
}

/// The Redis nodes a strategy talks to: Redlock's own, else one primary
/// (with its replica when the world has one).
fn redis_for(world: &World, settings: &StrategySettings) -> redis::RedisCluster {
    let (redlock_nodes, restart_delay_ms) = match settings {
        StrategySettings::Redlock(redlock) => {
            (Some(redlock.nodes), if redlock.delayed_restart { redlock.ttl_ms } else { 0 })
        }
        StrategySettings::Naive(_)
        | StrategySettings::Fencing(_)
        | StrategySettings::DbLock(_)
        | StrategySettings::UniqueInsert
        | StrategySettings::Consensus(_) => (None, 0),
    };
    let with_replica = world.redis_replica && redlock_nodes.is_none();
    redis::RedisCluster::new(redlock_nodes, with_replica, restart_delay_ms)
}

/// Keeps in `first` the lower of its run and `run`.
fn earliest(first: &mut Option<RunId>, run: RunId) {
    if first.is_none_or(|first| run < first) {
        *first = Some(run);
    }
}

/// Position of a run in the run table.
pub(crate) fn run_index(run: RunId) -> usize {
    usize::try_from(run.0).unwrap_or(usize::MAX)
}
