//! The locking strategies: one trait, one module each, chosen by id.
//!
//! A strategy is a sans-IO state machine: the instance runtime says "take the
//! lock for this run", "the job started", "give it back", hands it replies and
//! fired timers; the strategy answers only through a [`Context`] — requests
//! to send, timers to set, and what it reports ("acquired with token 43",
//! "busy", "lost"). It does no I/O, reads no clock but the context's, and
//! never calls the runtime: what it reports is queued as a [`Notice`] and
//! handled after it returns, so neither side is re-entered. The words a
//! strategy speaks (requests, replies, its typed tags and timers, the
//! context, the trait) are `crate::vocab`'s, so no strategy names the
//! simulator: the simulator's context is its own, and anything that carries
//! requests and timers (a real network, a test's script) can drive the same
//! code, as `locklab-live`'s instance processes do over real sockets
//! (`crate::runtime::strategy_for`).

pub(crate) mod consensus;
pub(crate) mod db_lock;
pub(crate) mod fencing;
mod lease;
pub(crate) mod naive;
pub(crate) mod recipe_lock;
pub(crate) mod redlock;
pub(crate) mod unique_insert;

use crate::scenario::StrategySettings;
pub use crate::vocab::{
    CHUNK_UPLOAD_MS, Context, Notice, Reply, Request, SQL_TIMEOUT_MS, STORAGE_TIMEOUT_MS, Strategy, Tag, Timer,
    TimerId, WriteGate,
};

pub(crate) use lease::LeaseKeeper;

/// How long the modelled database takes over a statement and over another
/// service's query, and a statement's time at a `db_slow` factor, for a runtime
/// that slows a real database as the simulated one is slowed.
pub use crate::scenario::{BACKGROUND_QUERY_MS, STATEMENT_MS, slowed_ms};

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

/// The one list of strategy constructors, boxed as the caller's type asks:
/// a boxed strategy cannot be turned into the simulator's higher-ranked type
/// after the fact, so the simulator's `sim::build` and `runtime::strategy_for` each box
/// from this list.
macro_rules! boxed_strategy {
    ($settings:expr) => {{
        use $crate::scenario::StrategySettings;
        use $crate::strategy::{consensus, db_lock, fencing, naive, redlock, unique_insert};
        match $settings {
            StrategySettings::Naive(naive) => Box::new(naive::Naive::new(naive.clone())),
            StrategySettings::Fencing(lease) => Box::new(fencing::Fencing::new(lease.clone())),
            StrategySettings::Redlock(redlock) => Box::new(redlock::Redlock::new(redlock.clone())),
            StrategySettings::DbLock(db_lock) => Box::new(db_lock::DbLock::new(db_lock.clone())),
            StrategySettings::UniqueInsert => Box::new(unique_insert::UniqueInsert),
            StrategySettings::Consensus(lease) => Box::new(consensus::ConsensusLease::new(lease.clone())),
        }
    }};
}
pub(crate) use boxed_strategy;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{AbortReason, Owner, RedisCommand, RedisReply};
    use crate::ids::{InstanceId, Party, RedisNodeId, RunId, SessionId, Token};
    use crate::scenario::{LeaseSettings, World};
    use crate::vocab::FencingTag;

    /// A context with no simulator behind it, as a live runtime would be:
    /// the test is the network and the clock.
    struct Script {
        now_ms: i64,
        world: World,
        sent: Vec<(Party, Request, Tag)>,
        timers: Vec<(u64, Timer)>,
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
        fn send(&mut self, to: Party, body: Request, tag: Tag, _timeout_ms: Option<u64>) {
            self.sent.push((to, body, tag));
        }
        fn set_timer(&mut self, after_ms: u64, timer: Timer) -> TimerId {
            self.timers.push((after_ms, timer));
            TimerId(u32::try_from(self.timers.len()).unwrap_or(u32::MAX))
        }
        fn cancel_timer(&mut self, _id: TimerId) {
            self.cancelled += 1;
        }
        fn redis_primary(&self) -> Party {
            Party::Redis(RedisNodeId(0))
        }
        fn checkout(&mut self, _tag: Tag) {}
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
        fn write_cleared(&mut self) {
            self.notices.push(Notice::WriteCleared { run: RUN });
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
        let take_tag = Tag::Fencing(FencingTag::Take);
        assert_eq!(cx.sent, [(primary, take, take_tag)], "the lock script, nothing else");
        strategy.on_reply(&mut cx, take_tag, Reply::Redis(RedisReply::Integer(43)));
        assert_eq!(cx.notices, [Notice::Acquired { run: RUN, token: Some(Token(43)) }]);
        assert_eq!(strategy.token(RUN), Some(Token(43)), "every write carries the token");
        assert!(
            cx.timers.iter().any(|(after_ms, timer)| (*after_ms, *timer) == (10_000, Timer::Renew)),
            "{:?}",
            cx.timers
        );
        cx.now_ms = 10_000;
        strategy.on_timer(&mut cx, Timer::Renew);
        let extend = Request::Redis(RedisCommand::CompareAndExtend { value: owner, ttl_ms: 30_000 });
        assert_eq!(cx.sent.last(), Some(&(primary, extend, Tag::Fencing(FencingTag::Extend))));
        strategy.release(&mut cx);
        let delete = Request::Redis(RedisCommand::CompareAndDelete { value: owner });
        assert_eq!(
            cx.sent.last(),
            Some(&(primary, delete, Tag::Fencing(FencingTag::Release))),
            "it gives back only its own lock"
        );
        assert!(cx.cancelled > 0, "and stops renewing");
        // Another instance's take, answered (nil): busy, retry later.
        let mut loser: Box<dyn Strategy<Script>> = Box::new(fencing::Fencing::new(LeaseSettings::default()));
        let mut other = Script { notices: Vec::new(), sent: Vec::new(), ..cx };
        loser.acquire(&mut other);
        loser.on_reply(&mut other, take_tag, Reply::Redis(RedisReply::Nil));
        let retry_after_ms = other.world.retry_ms;
        assert_eq!(other.notices, [Notice::Busy { run: RUN, retry_after_ms }]);
        assert_eq!(loser.token(RUN), None);
    }
}
