//! The words a strategy and its runtime share, and nothing else: the
//! requests a strategy sends and the replies it gets, its typed tags and
//! timers, the [`Context`] it acts through, the [`Strategy`] trait itself,
//! the [`Notice`]s it reports, and the per-run map it keeps its state in.
//! The simulator (`crate::sim`) and live mode's instance processes both
//! speak this, so a strategy never names either of them.

use crate::event::{
    AbortReason, ConsensusOp, ConsensusReply, MessageKind, Owner, PutOutcome, RedisCommand, RedisReply, RowWrite, Sql,
    SqlError, SqlOutcome,
};
use crate::ids::{Party, Period, ReportOf, RunId, SessionId, Token};
use crate::scenario::World;

/// Client timeouts of the instance runtime's own requests.
pub const STORAGE_TIMEOUT_MS: u64 = 10_000;
/// How long a report chunk takes to stream to storage from the instance.
/// The lease is checked when the upload starts (the chunk's step), so a
/// pause during this second is Kleppmann's "pause after the check".
pub const CHUNK_UPLOAD_MS: u64 = 1_000;
pub const SQL_TIMEOUT_MS: u64 = 30_000;

/// A request an instance sends to a server.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Request {
    Redis(RedisCommand),
    Sql { session: SessionId, sql: Sql },
    Put { period: Period, report: ReportOf, chunk: u8, own_object: bool, token: Option<Token> },
    Post { period: Period },
    Consensus(ConsensusOp),
}

impl Request {
    pub(crate) fn kind(&self) -> MessageKind {
        match self {
            Request::Redis(_) => MessageKind::Redis,
            Request::Sql { .. } => MessageKind::Sql,
            Request::Put { .. } => MessageKind::Put,
            Request::Post { .. } => MessageKind::Post,
            Request::Consensus(_) => MessageKind::Consensus,
        }
    }
}

/// A server's answer, or what the client library makes of its absence.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reply {
    Redis(RedisReply),
    Sql(SqlOutcome),
    Put(PutOutcome),
    Posted,
    Consensus(ConsensusReply),
    /// A connection from the instance's pool, or why none could be had.
    Checkout(Result<SessionId, SqlError>),
    /// No reply from storage or Slack within the client's timeout.
    Timeout,
}

impl Reply {
    /// What the client library reports when no reply came in time.
    pub fn timeout_for(request: &Request) -> Reply {
        match request {
            Request::Redis(_) => Reply::Redis(RedisReply::Timeout),
            Request::Sql { .. } => Reply::Sql(SqlOutcome::Error(SqlError::Timeout)),
            Request::Put { .. } | Request::Post { .. } => Reply::Timeout,
            Request::Consensus(_) => Reply::Consensus(ConsensusReply::Timeout),
        }
    }
}

/// A timer's handle: its place in the timer table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TimerId(pub u32);

/// What a strategy's request was for: the reply comes back to it with this
/// tag. Each strategy names its own requests; a runtime hands the tag back
/// untouched and never looks inside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    Naive(NaiveTag),
    Fencing(FencingTag),
    Redlock(RedlockTag),
    DbLock(DbLockTag),
    Consensus(ConsensusTag),
    Recipe(RecipeTag),
}

/// The naive lock's requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NaiveTag {
    Set,
    Delete,
}

/// The fencing lock's requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FencingTag {
    /// The lock and its token in one script.
    Take,
    Extend,
    Release,
}

/// Redlock's requests, each to one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedlockTag {
    Lock { node: u8 },
    Extend { node: u8 },
    Unlock,
}

/// db-lock's requests: a pooled connection, then statements on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbLockTag {
    Checkout,
    Lock,
    Rollback,
    Commit,
}

/// The consensus lease's requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConsensusTag {
    Acquire,
    KeepAlive,
    Revoke,
}

/// A recipe's requests (`custom`, one Redis node): each step's command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecipeTag {
    /// The take's first command (`SET … NX`, `SETNX`, `GET`, the lock script).
    Take,
    /// `EXPIRE` after `SETNX`.
    Expire,
    /// The plain `SET … PX` after a `GET` that found nothing.
    Set,
    /// The token's own `INCR`.
    Count,
    /// `GET` before a write, to compare the key with the run's own value.
    Check,
    Extend,
    Release,
}

/// A strategy's own timers: only a lease has any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// Time to renew the lease.
    Renew,
    /// The lease the holder secured has run out by its own clock.
    Deadline,
}

/// Everything a strategy can see and do for the run it is called about.
pub trait Context {
    /// The run the call is about.
    fn run(&self) -> RunId;
    /// The run's lock value: its instance and a nonce unique to the run.
    fn owner(&self) -> Owner;
    fn world(&self) -> &World;
    /// Whether the run believes it holds the lock now.
    fn believes(&self) -> bool;
    /// What the run's instance's clock reads now, in ms.
    fn local_now(&self) -> i64;
    /// Sends `body` to `to`; the reply (or a timeout after `timeout_ms`)
    /// comes back to [`Strategy::on_reply`] with `tag`.
    fn send(&mut self, to: Party, body: Request, tag: Tag, timeout_ms: Option<u64>);
    /// A timer that fires [`Strategy::on_timer`] with `timer` once the
    /// instance's clock has moved on by `after_ms`.
    fn set_timer(&mut self, after_ms: u64, timer: Timer) -> TimerId;
    fn cancel_timer(&mut self, id: TimerId);
    /// The Redis node a single-Redis strategy talks to now (a failover moves it).
    fn redis_primary(&self) -> Party;
    /// Asks the instance's pool for a connection to hold; it comes as
    /// `Reply::Checkout` with `tag`.
    fn checkout(&mut self, tag: Tag);
    /// Gives a held connection back; `broken` drops it from the pool.
    fn checkin(&mut self, session: SessionId, broken: bool);
    /// A number in `low..=high` from the instance's own random stream.
    fn random_between(&mut self, low: u64, high: u64) -> u64;
    /// Reports: the lock is the run's, with the token its writes carry.
    fn acquired(&mut self, token: Option<Token>);
    /// Reports: somebody else holds it; try again after `retry_after_ms`.
    fn busy(&mut self, retry_after_ms: u64);
    /// Reports: the lock is gone while the run held it.
    fn lost(&mut self, reason: AbortReason);
    /// Reports whether the report row's transaction committed.
    fn committed(&mut self, ok: bool);
    /// Reports: the check a write waited for (`WriteGate::WhenCleared`)
    /// found the lock the run's own; the write goes out.
    fn write_cleared(&mut self);
}

/// What a strategy does to protect the job.
pub trait Strategy<C: Context + ?Sized> {
    /// Start (or retry) taking the lock for `run`; answer with
    /// [`Context::acquired`] or [`Context::busy`], now or after replies come.
    fn acquire(&mut self, cx: &mut C);

    /// A reply to a request this strategy sent with `tag`, or a connection it asked for.
    fn on_reply(&mut self, cx: &mut C, tag: Tag, reply: Reply);

    /// A timer this strategy set fired.
    fn on_timer(&mut self, cx: &mut C, timer: Timer);

    /// The job's work begins (start renewing, for leases).
    fn job_started(&mut self, _cx: &mut C) {}

    /// Before each write of the job (a chunk, the Slack post, the report
    /// row): whether it goes out now, never (the strategy found the lock
    /// gone and reported the loss through the context), or once the
    /// strategy's own question is answered (it asked a server, and reports
    /// [`Context::write_cleared`] or the loss then). The built-ins check
    /// nothing here (see [`Strategy::checks_writes`]).
    fn may_write(&mut self, _cx: &mut C) -> WriteGate {
        WriteGate::Now
    }

    /// Whether [`Strategy::may_write`] may ever answer anything but `Now`.
    /// The runtime asks the gate before every write of the job, which costs
    /// a call and a look at the run's state each time; a strategy that lets
    /// every write go says `false` here, once, and its writes go out without
    /// the gate being asked. The default is `true`, so that a strategy which
    /// checks its writes is asked whether or not it remembers to say so.
    fn checks_writes(&self) -> bool {
        true
    }

    /// The run is over: give the lock back as the strategy does, and forget the run.
    fn release(&mut self, cx: &mut C);

    /// The process died: forget the run without sending anything.
    fn forget(&mut self, run: RunId);

    /// The token every write of `run` carries.
    fn token(&self, run: RunId) -> Option<Token>;

    /// The session the job's own statements must use (the locking transaction's).
    fn session(&self, _run: RunId) -> Option<SessionId> {
        None
    }

    /// How the report row is written, and whether it must be committed after.
    fn report_row(&self, run: RunId) -> RowWrite;

    /// Whether the strategy takes a lock at all (unique-insert does not).
    fn takes_lock(&self) -> bool {
        true
    }

    /// Whether each run writes its own objects (the unique-insert pattern).
    fn own_objects(&self) -> bool {
        false
    }

    /// Called after the report row was written in the strategy's own session:
    /// commit it. Strategies without a session never get this call.
    fn commit_report(&mut self, _cx: &mut C) {}
}

/// Whether a write of the job goes out ([`Strategy::may_write`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteGate {
    Now,
    /// The strategy reported the lock lost: the run stops.
    Never,
    /// The strategy asked a server first; the write waits for its
    /// [`Context::write_cleared`] (or the loss).
    WhenCleared,
}

/// What a strategy reports back to the runtime, handled after it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notice {
    Acquired {
        run: RunId,
        token: Option<Token>,
    },
    Busy {
        run: RunId,
        retry_after_ms: u64,
    },
    Lost {
        run: RunId,
        reason: AbortReason,
    },
    /// The strategy finished committing the report row (db-lock only).
    Committed {
        run: RunId,
        ok: bool,
    },
    /// The check before the run's held write found the lock its own: the write goes out.
    WriteCleared {
        run: RunId,
    },
    /// The pool has a connection for the strategy (or cannot give one).
    Checkout {
        run: RunId,
        tag: Tag,
        result: Result<SessionId, SqlError>,
    },
}

/// A map from run ids to values: a vector indexed by the id. Run ids are
/// handed out densely from 0, one per attempt, and strategies look theirs up
/// on every reply and timer, so an index beats a tree; iteration (were it
/// needed) would be in id order, as the `BTreeMap`s it replaces gave.
#[derive(Clone, Debug)]
pub struct RunMap<V> {
    slots: Vec<Option<V>>,
}

impl<V> Default for RunMap<V> {
    fn default() -> Self {
        RunMap { slots: Vec::new() }
    }
}

impl<V> RunMap<V> {
    /// Room for a typical run's attempts (as `Sim::runs`), so it rarely grows mid-run.
    pub fn new() -> RunMap<V> {
        RunMap { slots: Vec::with_capacity(128) }
    }

    fn index(run: &RunId) -> usize {
        usize::try_from(run.0).unwrap_or(usize::MAX)
    }

    /// Inserts or replaces `run`'s value, returning the old one.
    pub fn insert(&mut self, run: RunId, value: V) -> Option<V> {
        let index = RunMap::<V>::index(&run);
        if index >= self.slots.len() {
            self.slots.resize_with(index + 1, || None);
        }
        self.slots[index].replace(value)
    }

    pub fn get(&self, run: &RunId) -> Option<&V> {
        self.slots.get(RunMap::<V>::index(run))?.as_ref()
    }

    pub fn get_mut(&mut self, run: &RunId) -> Option<&mut V> {
        self.slots.get_mut(RunMap::<V>::index(run))?.as_mut()
    }

    pub fn remove(&mut self, run: &RunId) -> Option<V> {
        self.slots.get_mut(RunMap::<V>::index(run))?.take()
    }
}

#[cfg(test)]
mod tests {
    use super::{RunId, RunMap};
    use std::collections::BTreeMap;

    /// The next value of a fixed xorshift walk, for the tables' reference tests.
    fn next(state: &mut u32) -> u32 {
        *state ^= *state << 13;
        *state ^= *state >> 17;
        *state ^= *state << 5;
        *state
    }

    #[test]
    fn run_map_behaves_as_a_map() {
        let mut map = RunMap::new();
        let mut reference = BTreeMap::new();
        let mut state = 0x9e37_79b9_u32;
        for _ in 0..2_000u32 {
            let draw = next(&mut state);
            let run = RunId(draw % 64);
            match draw % 3 {
                0 => assert_eq!(map.insert(run, draw), reference.insert(run, draw)),
                1 => assert_eq!(map.remove(&run), reference.remove(&run)),
                _ => assert_eq!(map.get(&run), reference.get(&run)),
            }
            if let Some(value) = map.get_mut(&run) {
                *value += 1;
                *reference.get_mut(&run).expect("both hold the run") += 1;
            }
        }
    }

    #[test]
    fn behaves_as_an_ordered_map() {
        walk::<true>();
        walk::<false>();
    }

    /// A fixed pseudo-random walk of inserts and removes, mirrored in a BTreeMap.
    fn walk<const ENDS_FIRST: bool>() {
        let mut table: crate::table::Table<u32, u32, ENDS_FIRST> = crate::table::Table::new();
        let mut reference = BTreeMap::new();
        let mut state = 0x2545_f491_u32;
        for step in 0..5_000u32 {
            let draw = next(&mut state);
            let key = draw % 64;
            if draw.is_multiple_of(3) {
                assert_eq!(table.remove(&key), reference.remove(&key), "step {step}");
            } else {
                assert_eq!(table.insert(key, step), reference.insert(key, step), "step {step}");
            }
            assert_eq!(table.len(), reference.len());
            assert_eq!(table.get(&key), reference.get(&key));
            assert_eq!(table.contains_key(&(key + 1)), reference.contains_key(&(key + 1)));
        }
        if let Some(value) = table.get_mut(&0) {
            *value = 7;
        }
        assert_eq!(table.take_values(), {
            if let Some(value) = reference.get_mut(&0) {
                *value = 7;
            }
            reference.into_values().collect::<Vec<_>>()
        });
        assert_eq!(table.len(), 0);
    }
}
