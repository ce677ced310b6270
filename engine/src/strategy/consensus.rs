//! `consensus`: an etcd/ZooKeeper-style lease lock. A lease with a TTL, a
//! transaction that creates the key only if absent, keep-alives while the job
//! runs; the key's revision is the fencing token. Because the store is
//! replicated by consensus, a leader's loss loses no committed write and the
//! revision never goes back: the answer the literature gives when correctness
//! matters — still only for resources that check the token.

use super::{Context, LeaseKeeper, Strategy, lease};
use crate::event::{ConsensusOp, ConsensusReply, RowWrite};
use crate::ids::{LeaseId, Party, RunId, Token};
use crate::scenario::LeaseSettings;
use crate::sim::table::RunMap;
use crate::sim::{Reply, Request};

const TAG_ACQUIRE: u32 = 0;
const TAG_KEEPALIVE: u32 = 1;
const TAG_REVOKE: u32 = 2;
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
        cx.send(Party::Consensus, Request::Consensus(op), TAG_ACQUIRE, Some(TIMEOUT_MS));
    }

    fn on_reply(&mut self, cx: &mut C, tag: u32, reply: Reply) {
        let retry = cx.world().retry_ms;
        let ttl = i64::try_from(self.settings.ttl_ms).unwrap_or(i64::MAX / 4);
        let Some(held) = self.runs.get_mut(&cx.run()) else {
            return;
        };
        let Reply::Consensus(reply) = reply else {
            return;
        };
        match (tag, reply) {
            (TAG_ACQUIRE, ConsensusReply::Acquired { lease, revision }) => {
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
            (TAG_ACQUIRE, _) => cx.busy(retry),
            (TAG_KEEPALIVE, ConsensusReply::Alive { .. }) => {
                let valid_until = held.sent_local_ms + ttl;
                if let Some(keeper) = held.keeper.as_mut() {
                    keeper.secured(cx, valid_until);
                }
            }
            (TAG_KEEPALIVE, ConsensusReply::LeaseNotFound) => {
                held.lease = None;
                if let Some(keeper) = held.keeper.as_mut() {
                    keeper.lost(cx);
                }
            }
            (TAG_KEEPALIVE, _) => {
                if let Some(keeper) = held.keeper.as_mut() {
                    keeper.unanswered(cx);
                }
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, cx: &mut C, tag: u32) {
        let now = cx.local_now();
        let Some(held) = self.runs.get_mut(&cx.run()) else {
            return;
        };
        match tag {
            lease::TAG_RENEW => {
                let Some(lease) = held.lease else { return };
                held.sent_local_ms = now;
                let op = ConsensusOp::KeepAlive { lease };
                cx.send(Party::Consensus, Request::Consensus(op), TAG_KEEPALIVE, Some(TIMEOUT_MS));
            }
            lease::TAG_DEADLINE => {
                if let Some(keeper) = held.keeper.as_mut() {
                    keeper.expired(cx);
                }
            }
            _ => {}
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
            cx.send(Party::Consensus, Request::Consensus(op), TAG_REVOKE, Some(TIMEOUT_MS));
        }
    }

    fn forget(&mut self, run: RunId) {
        self.runs.remove(&run);
    }

    fn token(&self, run: RunId) -> Option<Token> {
        self.runs.get(&run).and_then(|held| held.token)
    }

    fn report_row(&self, _run: RunId) -> RowWrite {
        RowWrite::FencedUpsert
    }
}
