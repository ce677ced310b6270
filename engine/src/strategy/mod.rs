//! The locking strategies: one trait, one module each, chosen by id.
//!
//! A strategy is a state machine driven by the instance runtime (`sim::runtime`):
//! the runtime says "take the lock for this run", "the job started", "give it
//! back"; the strategy sends Redis commands, SQL or consensus requests through
//! [`Cx`] and reports back through it ("acquired with token 43", "busy",
//! "lost"). It never calls the runtime directly: what it reports is queued as a
//! [`Notice`] and handled after it returns, so neither side is re-entered.

mod consensus;
mod db_lock;
mod fencing;
mod lease;
mod naive;
mod redlock;
mod unique_insert;

use crate::event::AbortReason;
use crate::ids::{RunId, SessionId, Token};
use crate::scenario::StrategySettings;
use crate::sim::{Cx, Reply};

pub(crate) use lease::LeaseKeeper;

/// What a strategy does to protect the job.
pub(crate) trait Strategy {
    /// Start (or retry) taking the lock for `run`; answer with
    /// [`Cx::acquired`] or [`Cx::busy`], now or after replies come.
    fn acquire(&mut self, cx: &mut Cx<'_>);

    /// A reply to a request this strategy sent with `tag`, or a connection it asked for.
    fn on_reply(&mut self, cx: &mut Cx<'_>, tag: u32, reply: Reply);

    /// A timer this strategy set with `tag` fired.
    fn on_timer(&mut self, cx: &mut Cx<'_>, tag: u32);

    /// The job's work begins (start renewing, for leases).
    fn job_started(&mut self, _cx: &mut Cx<'_>) {}

    /// The run is over: give the lock back as the strategy does, and forget the run.
    fn release(&mut self, cx: &mut Cx<'_>);

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
    fn commit_report(&mut self, _cx: &mut Cx<'_>) {}
}

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

/// Builds the strategy for a setting.
pub(crate) fn build(settings: &StrategySettings) -> Box<dyn Strategy> {
    match settings {
        StrategySettings::Naive(naive) => Box::new(naive::Naive::new(naive.clone())),
        StrategySettings::Fencing(lease) => Box::new(fencing::Fencing::new(lease.clone())),
        StrategySettings::Redlock(redlock) => Box::new(redlock::Redlock::new(redlock.clone())),
        StrategySettings::DbLock(db_lock) => Box::new(db_lock::DbLock::new(db_lock.clone())),
        StrategySettings::UniqueInsert => Box::new(unique_insert::UniqueInsert),
        StrategySettings::Consensus(lease) => Box::new(consensus::ConsensusLease::new(lease.clone())),
    }
}
