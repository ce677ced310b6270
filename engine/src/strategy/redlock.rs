//! `redlock` (quiz option B): the algorithm of the Redis documentation's
//! "Distributed locks with Redis" page, over `nodes` independent nodes.
//!
//! 1. Read the clock, send `SET key value NX PX ttl` to every node with a small
//!    per-node timeout (here all at once; the page allows either).
//! 2. The lock is acquired if a majority (`nodes/2+1`) said OK and the time
//!    spent is below the TTL: validity = TTL − elapsed − drift. The page
//!    allows "a few milliseconds" of drift; `drift_factor × TTL + 2 ms` is
//!    the allowance of its reference implementations (redlock-rb, redlock-py).
//! 3. Otherwise unlock every node and retry after a random delay.
//! 4. Extension: the compare-and-extend script on every node; it holds if a
//!    majority extended within the validity time.
//!
//! Redlock hands out no fencing token (Kleppmann 2016: nothing increases
//! monotonically), so storage cannot tell a stale holder from the current one.

use super::LeaseKeeper;
use crate::event::{LockValue, RedisCommand, RedisReply, RowWrite};
use crate::ids::{Party, RedisNodeId, RunId, Token};
use crate::scenario::RedlockSettings;
use crate::vocab::{Context, RedlockTag, Reply, Request, RunMap, Strategy, Tag, Timer};
/// The page: "a timeout which is small compared to the total lock auto-release time".
pub(crate) const NODE_TIMEOUT_MS: u64 = 50;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Vote {
    Waiting,
    Yes,
    /// The node answered: not ours.
    No,
    /// No answer, or an error.
    Unknown,
}

#[derive(Debug)]
struct Attempt {
    start_local_ms: i64,
    votes: Vec<Vote>,
    extending: bool,
    keeper: Option<LeaseKeeper>,
}

#[derive(Debug)]
pub(crate) struct Redlock {
    settings: RedlockSettings,
    runs: RunMap<Attempt>,
}

impl Redlock {
    pub(crate) fn new(settings: RedlockSettings) -> Redlock {
        Redlock { settings, runs: RunMap::new() }
    }

    /// A majority of the nodes: two majorities always share a node, which is
    /// all that keeps two clients from both counting a quorum at one moment.
    fn quorum(&self) -> usize {
        let nodes = usize::from(self.settings.nodes);
        let quorum = nodes / 2 + 1;
        debug_assert!(2 * quorum > nodes && quorum <= nodes, "{quorum} of {nodes} is not a majority");
        quorum
    }

    /// `drift_factor × TTL + 2 ms`: the reference implementations' allowance
    /// for clock drift (the page itself says "a few milliseconds").
    fn drift_ms(&self) -> i64 {
        // The page's arithmetic in floating point, truncated: the same on every platform.
        #[allow(clippy::cast_possible_truncation)]
        let drift = (self.settings.ttl_ms as f64 * self.settings.drift_factor) as i64;
        drift + 2
    }

    /// Sends `command` to every node, each reply tagged with its node: a
    /// lock's (`extending` false) or an extension's.
    fn broadcast<C: Context + ?Sized>(&self, cx: &mut C, command: RedisCommand, extending: bool) {
        for node in 0..self.settings.nodes {
            let tag = if extending { RedlockTag::Extend { node } } else { RedlockTag::Lock { node } };
            cx.send(Party::Redis(RedisNodeId(node)), Request::Redis(command), Tag::Redlock(tag), Some(NODE_TIMEOUT_MS));
        }
    }

    fn unlock_all<C: Context + ?Sized>(&self, cx: &mut C) {
        let value = cx.owner();
        for index in 0..self.settings.nodes {
            let command = RedisCommand::CompareAndDelete { value };
            let tag = Tag::Redlock(RedlockTag::Unlock);
            cx.send(Party::Redis(RedisNodeId(index)), Request::Redis(command), tag, Some(NODE_TIMEOUT_MS));
        }
    }

    fn retry_delay<C: Context + ?Sized>(&self, cx: &mut C) -> u64 {
        // "Retry after a random delay" to desynchronize clients racing for the majority.
        let retry = cx.world().retry_ms;
        cx.random_between(retry / 2, retry + retry / 2)
    }

    fn tally<C: Context + ?Sized>(&mut self, cx: &mut C) {
        let quorum = self.quorum();
        let ttl = i64::try_from(self.settings.ttl_ms).unwrap_or(i64::MAX / 4);
        let drift = self.drift_ms();
        let renew_every = self.settings.renew_every_ms;
        let now = cx.local_now();
        let Some(attempt) = self.runs.get_mut(&cx.run()) else {
            return;
        };
        debug_assert_eq!(attempt.votes.len(), usize::from(self.settings.nodes), "one vote per node");
        if attempt.votes.contains(&Vote::Waiting) {
            return;
        }
        let yes = attempt.votes.iter().filter(|vote| **vote == Vote::Yes).count();
        let no = attempt.votes.iter().filter(|vote| **vote == Vote::No).count();
        let elapsed = now - attempt.start_local_ms;
        let validity = ttl - elapsed - drift;
        let valid_until = now + validity;
        if attempt.extending {
            attempt.extending = false;
            let Some(keeper) = attempt.keeper.as_mut() else {
                return;
            };
            if yes >= quorum && validity > 0 {
                keeper.secured(cx, valid_until);
            } else if no >= quorum {
                keeper.lost(cx);
            } else {
                keeper.unanswered(cx);
            }
            return;
        }
        if yes >= quorum && validity > 0 {
            attempt.keeper = Some(LeaseKeeper::start(cx, renew_every, valid_until));
            cx.acquired(None);
        } else {
            self.unlock_all(cx);
            let delay = self.retry_delay(cx);
            cx.busy(delay);
        }
    }
}

impl<C: Context + ?Sized> Strategy<C> for Redlock {
    fn acquire(&mut self, cx: &mut C) {
        let attempt = Attempt {
            start_local_ms: cx.local_now(),
            votes: vec![Vote::Waiting; usize::from(self.settings.nodes)],
            extending: false,
            keeper: None,
        };
        self.runs.insert(cx.run(), attempt);
        let command = RedisCommand::SetNxPx { value: LockValue::Owner(cx.owner()), ttl_ms: self.settings.ttl_ms };
        self.broadcast(cx, command, false);
    }

    fn on_reply(&mut self, cx: &mut C, tag: Tag, reply: Reply) {
        let (node, extending) = match tag {
            Tag::Redlock(RedlockTag::Lock { node }) => (node, false),
            Tag::Redlock(RedlockTag::Extend { node }) => (node, true),
            // An unlock is not awaited; another strategy's tag is no reply of ours.
            Tag::Redlock(RedlockTag::Unlock)
            | Tag::Naive(_)
            | Tag::Fencing(_)
            | Tag::DbLock(_)
            | Tag::Consensus(_)
            | Tag::Recipe(_) => {
                return;
            }
        };
        let Some(attempt) = self.runs.get_mut(&cx.run()) else {
            return;
        };
        if extending != attempt.extending {
            return; // a late reply from an earlier round
        }
        let Some(vote) = attempt.votes.get_mut(usize::from(node)) else {
            return;
        };
        *vote = match reply {
            Reply::Redis(RedisReply::Ok | RedisReply::Integer(1)) => Vote::Yes,
            Reply::Redis(RedisReply::Nil | RedisReply::Integer(_)) => Vote::No,
            Reply::Redis(_)
            | Reply::Sql(_)
            | Reply::Put(_)
            | Reply::Posted
            | Reply::Consensus(_)
            | Reply::Checkout(_)
            | Reply::Timeout => Vote::Unknown,
        };
        self.tally(cx);
    }

    fn on_timer(&mut self, cx: &mut C, timer: Timer) {
        let now = cx.local_now();
        let nodes = usize::from(self.settings.nodes);
        let Some(attempt) = self.runs.get_mut(&cx.run()) else {
            return;
        };
        match timer {
            Timer::Renew => {
                attempt.start_local_ms = now;
                attempt.extending = true;
                attempt.votes = vec![Vote::Waiting; nodes];
                let command = RedisCommand::CompareAndExtend { value: cx.owner(), ttl_ms: self.settings.ttl_ms };
                self.broadcast(cx, command, true);
            }
            Timer::Deadline => {
                if let Some(keeper) = attempt.keeper.as_mut() {
                    keeper.expired(cx);
                }
            }
        }
    }

    fn release(&mut self, cx: &mut C) {
        if let Some(mut attempt) = self.runs.remove(&cx.run()) {
            if let Some(keeper) = attempt.keeper.as_mut() {
                keeper.stop(cx);
            }
            self.unlock_all(cx);
        }
    }

    fn forget(&mut self, run: RunId) {
        self.runs.remove(&run);
    }

    fn token(&self, _run: RunId) -> Option<Token> {
        None
    }

    /// Every write goes out: the lock is not looked at again before one.
    fn checks_writes(&self) -> bool {
        false
    }

    fn report_row(&self, _run: RunId) -> RowWrite {
        RowWrite::Upsert
    }
}
