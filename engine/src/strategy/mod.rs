//! The locking strategies: one trait, one module each, chosen by id.
//!
//! A strategy is a sans-IO state machine: the instance runtime says "take the
//! lock for this run", "the job started", "give it back", hands it replies and
//! fired timers; the strategy answers only through a [`Context`] — requests
//! to send, timers to set, and what it reports ("acquired with token 43",
//! "busy", "lost"). It does no I/O, reads no clock but the context's, and
//! never calls the runtime: what it reports is queued as a [`Notice`] and
//! handled after it returns, so neither side is re-entered. The simulator's
//! context is `sim::Cx`; anything that carries requests and timers (a real
//! network, a test's script) can drive the same code, as `locklab-live`'s
//! instance processes do over real sockets ([`build_for`]).

mod consensus;
mod db_lock;
mod fencing;
mod lease;
mod naive;
mod redlock;
mod unique_insert;

use crate::event::{AbortReason, Owner};
use crate::ids::{Party, RunId, SessionId, Token};
use crate::scenario::{StrategySettings, World};
pub use crate::sim::{Reply, Request, TimerId};

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
    fn send(&mut self, to: Party, body: Request, tag: u32, timeout_ms: Option<u64>);
    /// A timer that fires [`Strategy::on_timer`] with `tag` once the
    /// instance's clock has moved on by `after_ms`.
    fn set_timer(&mut self, after_ms: u64, tag: u32) -> TimerId;
    fn cancel_timer(&mut self, id: TimerId);
    /// The Redis node a single-Redis strategy talks to now (a failover moves it).
    fn redis_primary(&self) -> Party;
    /// Asks the instance's pool for a connection to hold; it comes as
    /// `Reply::Checkout` with `tag`.
    fn checkout(&mut self, tag: u32);
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
}

pub(crate) use lease::LeaseKeeper;

/// The instance runtime's own client timeouts and an upload's time, for a
/// runtime of another kind that runs the same job.
pub use crate::sim::runtime::{CHUNK_UPLOAD_MS, SQL_TIMEOUT_MS, STORAGE_TIMEOUT_MS};

/// How long the simulated database takes over a statement and over another
/// service's query, and a statement's time at a `db_slow` factor, for a runtime
/// that slows a real database as the simulated one is slowed.
pub use crate::sim::db::{BACKGROUND_QUERY_MS, STATEMENT_MS, slowed_ms};

/// The shortest timeout the strategy's client sets on a request, in ms:
/// Redlock's per-node timeout is the Redis page's "few ms"; the others wait a
/// second or more. A runtime that runs faster than the scenario's time must
/// keep this longer than its real network's round trips.
pub fn shortest_timeout_ms(settings: &StrategySettings) -> u64 {
    match settings {
        StrategySettings::Naive(_) => naive::REDIS_TIMEOUT_MS,
        StrategySettings::Fencing(_) => fencing::REDIS_TIMEOUT_MS,
        StrategySettings::Redlock(_) => redlock::NODE_TIMEOUT_MS,
        StrategySettings::DbLock(_) => db_lock::SQL_TIMEOUT_MS,
        StrategySettings::UniqueInsert => SQL_TIMEOUT_MS,
        StrategySettings::Consensus(_) => consensus::TIMEOUT_MS,
    }
}

/// What a strategy does to protect the job.
pub trait Strategy<C: Context + ?Sized> {
    /// Start (or retry) taking the lock for `run`; answer with
    /// [`Context::acquired`] or [`Context::busy`], now or after replies come.
    fn acquire(&mut self, cx: &mut C);

    /// A reply to a request this strategy sent with `tag`, or a connection it asked for.
    fn on_reply(&mut self, cx: &mut C, tag: u32, reply: Reply);

    /// A timer this strategy set with `tag` fired.
    fn on_timer(&mut self, cx: &mut C, tag: u32);

    /// The job's work begins (start renewing, for leases).
    fn job_started(&mut self, _cx: &mut C) {}

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
    fn report_row(&self, run: RunId) -> crate::event::RowWrite;

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

/// A strategy as the simulator holds it: driven through its own context,
/// `sim::Cx`, so the simulation's calls are direct (and inlined) while the
/// same strategy code can be driven by any other [`Context`].
pub(crate) type SimStrategy = dyn for<'a> Strategy<crate::sim::Cx<'a>>;

/// What a strategy reports back to the runtime, handled after it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Notice {
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
    /// The pool has a connection for the strategy (or cannot give one).
    Checkout {
        run: RunId,
        tag: u32,
        result: Result<SessionId, crate::event::SqlError>,
    },
}

/// The one list of strategy constructors, boxed as the caller's type asks:
/// a boxed strategy cannot be turned into the simulator's higher-ranked type
/// after the fact, so [`build`] and [`build_for`] each box from this list.
macro_rules! boxed_strategy {
    ($settings:expr) => {
        match $settings {
            StrategySettings::Naive(naive) => Box::new(naive::Naive::new(naive.clone())),
            StrategySettings::Fencing(lease) => Box::new(fencing::Fencing::new(lease.clone())),
            StrategySettings::Redlock(redlock) => Box::new(redlock::Redlock::new(redlock.clone())),
            StrategySettings::DbLock(db_lock) => Box::new(db_lock::DbLock::new(db_lock.clone())),
            StrategySettings::UniqueInsert => Box::new(unique_insert::UniqueInsert),
            StrategySettings::Consensus(lease) => Box::new(consensus::ConsensusLease::new(lease.clone())),
        }
    };
}

/// Builds the strategy for a setting, to be driven by any context: the
/// same code the simulator runs, for a runtime of another kind.
pub fn build_for<C: Context + ?Sized>(settings: &StrategySettings) -> Box<dyn Strategy<C>> {
    boxed_strategy!(settings)
}

/// Builds the strategy for a setting, as the simulator holds it.
pub(crate) fn build(settings: &StrategySettings) -> Box<SimStrategy> {
    boxed_strategy!(settings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{RedisCommand, RedisReply};
    use crate::ids::{InstanceId, RedisNodeId};
    use crate::scenario::LeaseSettings;

    /// A context with no simulator behind it, as a live runtime would be:
    /// the test is the network and the clock.
    struct Script {
        now_ms: i64,
        world: World,
        sent: Vec<(Party, Request, u32)>,
        timers: Vec<(u64, u32)>,
        cancelled: u32,
        notices: Vec<Notice>,
    }

    const RUN: RunId = RunId(7);

    impl Context for Script {
        fn run(&self) -> RunId {
            RUN
        }
        fn owner(&self) -> Owner {
            Owner { instance: InstanceId(1), nonce: 7 }
        }
        fn world(&self) -> &World {
            &self.world
        }
        fn believes(&self) -> bool {
            self.notices.iter().any(|notice| matches!(notice, Notice::Acquired { .. }))
        }
        fn local_now(&self) -> i64 {
            self.now_ms
        }
        fn send(&mut self, to: Party, body: Request, tag: u32, _timeout_ms: Option<u64>) {
            self.sent.push((to, body, tag));
        }
        fn set_timer(&mut self, after_ms: u64, tag: u32) -> TimerId {
            self.timers.push((after_ms, tag));
            TimerId(u32::try_from(self.timers.len()).unwrap_or(u32::MAX))
        }
        fn cancel_timer(&mut self, _id: TimerId) {
            self.cancelled += 1;
        }
        fn redis_primary(&self) -> Party {
            Party::Redis(RedisNodeId(0))
        }
        fn checkout(&mut self, _tag: u32) {}
        fn checkin(&mut self, _session: SessionId, _broken: bool) {}
        fn random_between(&mut self, low: u64, _high: u64) -> u64 {
            low
        }
        fn acquired(&mut self, token: Option<Token>) {
            self.notices.push(Notice::Acquired { run: RUN, token });
        }
        fn busy(&mut self, retry_after_ms: u64) {
            self.notices.push(Notice::Busy { run: RUN, retry_after_ms });
        }
        fn lost(&mut self, reason: AbortReason) {
            self.notices.push(Notice::Lost { run: RUN, reason });
        }
        fn committed(&mut self, ok: bool) {
            self.notices.push(Notice::Committed { run: RUN, ok });
        }
    }

    #[test]
    fn a_strategy_runs_on_a_script_with_no_simulator_behind_it() {
        let settings = LeaseSettings { ttl_ms: 30_000, renew_every_ms: 10_000 };
        // Built for this context, not the simulator's: the same code.
        let mut strategy: Box<dyn Strategy<Script>> = Box::new(fencing::Fencing::new(settings));
        let mut cx = Script {
            now_ms: 0,
            world: World::default(),
            sent: Vec::new(),
            timers: Vec::new(),
            cancelled: 0,
            notices: Vec::new(),
        };
        let owner = cx.owner();
        let primary = Party::Redis(RedisNodeId(0));
        strategy.acquire(&mut cx);
        let take = Request::Redis(RedisCommand::SetNxPxIncr { value: owner, ttl_ms: 30_000 });
        assert_eq!(cx.sent, [(primary, take, 0)], "the lock script, nothing else");
        strategy.on_reply(&mut cx, 0, Reply::Redis(RedisReply::Integer(43)));
        assert_eq!(cx.notices, [Notice::Acquired { run: RUN, token: Some(Token(43)) }]);
        assert_eq!(strategy.token(RUN), Some(Token(43)), "every write carries the token");
        assert!(
            cx.timers.iter().any(|(after_ms, tag)| (*after_ms, *tag) == (10_000, lease::TAG_RENEW)),
            "{:?}",
            cx.timers
        );
        cx.now_ms = 10_000;
        strategy.on_timer(&mut cx, lease::TAG_RENEW);
        let extend = Request::Redis(RedisCommand::CompareAndExtend { value: owner, ttl_ms: 30_000 });
        assert_eq!(cx.sent.last(), Some(&(primary, extend, 2)));
        strategy.release(&mut cx);
        let delete = Request::Redis(RedisCommand::CompareAndDelete { value: owner });
        assert_eq!(cx.sent.last(), Some(&(primary, delete, 3)), "it gives back only its own lock");
        assert!(cx.cancelled > 0, "and stops renewing");
        // Another instance's take, answered (nil): busy, retry later.
        let mut loser: Box<dyn Strategy<Script>> = Box::new(fencing::Fencing::new(LeaseSettings::default()));
        let mut other = Script { notices: Vec::new(), sent: Vec::new(), ..cx };
        loser.acquire(&mut other);
        loser.on_reply(&mut other, 0, Reply::Redis(RedisReply::Nil));
        let retry_after_ms = other.world.retry_ms;
        assert_eq!(other.notices, [Notice::Busy { run: RUN, retry_after_ms }]);
        assert_eq!(loser.token(RUN), None);
    }
}
