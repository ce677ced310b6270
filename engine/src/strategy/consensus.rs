//! `consensus`: an etcd/ZooKeeper-style lease lock. A lease with a TTL, a
//! transaction that creates the key only if absent, keep-alives while the job
//! runs; the key's revision is the fencing token. Because the store is
//! replicated by consensus, a leader's loss loses no committed write and the
//! revision never goes back: the answer the literature gives when correctness
//! matters — still only for resources that check the token.

use super::LeaseKeeper;
use crate::event::{ConsensusOp, ConsensusReply, RowWrite};
use crate::ids::{LeaseId, Party, RunId, Token};
use crate::scenario::LeaseSettings;
use crate::vocab::{ConsensusTag, Context, Reply, Request, RunMap, Strategy, Tag, Timer};

pub(crate) const TIMEOUT_MS: u64 = 1_000;

#[derive(Debug)]
struct Held {
    sent_local_ms: i64,
    lease: Option<LeaseId>,
    token: Option<Token>,
    keeper: Option<LeaseKeeper>,
}

#[derive(Debug)]
pub(crate) struct ConsensusLease {
    settings: LeaseSettings,
    runs: RunMap<Held>,
}

impl ConsensusLease {
    pub(crate) fn new(settings: LeaseSettings) -> ConsensusLease {
        ConsensusLease { settings, runs: RunMap::new() }
    }
}

impl<C: Context + ?Sized> Strategy<C> for ConsensusLease {
    fn acquire(&mut self, cx: &mut C) {
        let sent = cx.local_now();
        self.runs.insert(cx.run(), Held { sent_local_ms: sent, lease: None, token: None, keeper: None });
        let op = ConsensusOp::Acquire { value: cx.owner(), ttl_ms: self.settings.ttl_ms };
        cx.send(Party::Consensus, Request::Consensus(op), Tag::Consensus(ConsensusTag::Acquire), Some(TIMEOUT_MS));
    }

    fn on_reply(&mut self, cx: &mut C, tag: Tag, reply: Reply) {
        let retry = cx.world().retry_ms;
        let ttl = i64::try_from(self.settings.ttl_ms).unwrap_or(i64::MAX / 4);
        let (Tag::Consensus(tag), Some(held), Reply::Consensus(reply)) = (tag, self.runs.get_mut(&cx.run()), reply)
        else {
            return;
        };
        match (tag, reply) {
            (ConsensusTag::Acquire, ConsensusReply::Acquired { lease, revision }) => {
                // A run is granted at most once, and its token is the key's
                // creation revision, which the store numbers from 1 up.
                debug_assert!(held.token.is_none(), "run {} granted twice", cx.run());
                debug_assert!(revision.0 > 0, "a revision counts from 1");
                held.lease = Some(lease);
                held.token = Some(revision);
                let valid_until = held.sent_local_ms + ttl;
                held.keeper = Some(LeaseKeeper::start(cx, self.settings.renew_every_ms, valid_until));
                cx.acquired(Some(revision));
            }
            (ConsensusTag::Acquire, _) => cx.busy(retry),
            (ConsensusTag::KeepAlive, ConsensusReply::Alive { .. }) => {
                let valid_until = held.sent_local_ms + ttl;
                if let Some(keeper) = held.keeper.as_mut() {
                    keeper.secured(cx, valid_until);
                }
            }
            (ConsensusTag::KeepAlive, ConsensusReply::LeaseNotFound) => {
                held.lease = None;
                if let Some(keeper) = held.keeper.as_mut() {
                    keeper.lost(cx);
                }
            }
            (ConsensusTag::KeepAlive, _) => {
                if let Some(keeper) = held.keeper.as_mut() {
                    keeper.unanswered(cx);
                }
            }
            // The revoke is not awaited: the run is over.
            (ConsensusTag::Revoke, _) => {}
        }
    }

    fn on_timer(&mut self, cx: &mut C, timer: Timer) {
        let now = cx.local_now();
        let Some(held) = self.runs.get_mut(&cx.run()) else {
            return;
        };
        match timer {
            Timer::Renew => {
                let Some(lease) = held.lease else { return };
                held.sent_local_ms = now;
                let op = ConsensusOp::KeepAlive { lease };
                let tag = Tag::Consensus(ConsensusTag::KeepAlive);
                cx.send(Party::Consensus, Request::Consensus(op), tag, Some(TIMEOUT_MS));
            }
            Timer::Deadline => {
                if let Some(keeper) = held.keeper.as_mut() {
                    keeper.expired(cx);
                }
            }
        }
    }

    fn release(&mut self, cx: &mut C) {
        let Some(mut held) = self.runs.remove(&cx.run()) else {
            return;
        };
        if let Some(keeper) = held.keeper.as_mut() {
            keeper.stop(cx);
        }
        if let Some(lease) = held.lease {
            let op = ConsensusOp::Revoke { lease };
            cx.send(Party::Consensus, Request::Consensus(op), Tag::Consensus(ConsensusTag::Revoke), Some(TIMEOUT_MS));
        }
    }

    fn forget(&mut self, run: RunId) {
        self.runs.remove(&run);
    }

    fn token(&self, run: RunId) -> Option<Token> {
        self.runs.get(&run).and_then(|held| held.token)
    }

    /// Every write goes out: the lock is not looked at again before one.
    fn checks_writes(&self) -> bool {
        false
    }

    fn report_row(&self, _run: RunId) -> RowWrite {
        RowWrite::FencedUpsert
    }
}
