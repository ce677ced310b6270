//! `fencing` (quiz option A): `SET … NX PX <short TTL>` and `INCR` for a
//! fencing token, in one Lua script so the token is tied to the lock; the lease is renewed with a compare-and-extend script while
//! the job runs, and every write carries the token, which storage (when it
//! checks) and the report row refuse if a higher one was already seen.
//!
//! What it does not fix, and the lab shows: a resource that cannot check (Slack)
//! is not protected, and the counter lives in the same single Redis, so a
//! failover that loses the last `INCR` hands the same token out twice.

use super::LeaseKeeper;
use crate::event::{RedisCommand, RedisReply, RowWrite};
use crate::ids::{RunId, Token};
use crate::scenario::LeaseSettings;
use crate::vocab::{Context, FencingTag, Reply, Request, RunMap, Strategy, Tag, Timer};

pub(crate) const REDIS_TIMEOUT_MS: u64 = 1_000;

#[derive(Debug)]
struct Held {
    sent_local_ms: i64,
    token: Option<Token>,
    keeper: Option<LeaseKeeper>,
    holds: bool,
}

#[derive(Debug)]
pub(crate) struct Fencing {
    settings: LeaseSettings,
    runs: RunMap<Held>,
}

impl Fencing {
    pub(crate) fn new(settings: LeaseSettings) -> Fencing {
        Fencing { settings, runs: RunMap::new() }
    }

    fn send<C: Context + ?Sized>(cx: &mut C, command: RedisCommand, tag: FencingTag) {
        let primary = cx.redis_primary();
        cx.send(primary, Request::Redis(command), Tag::Fencing(tag), Some(REDIS_TIMEOUT_MS));
    }
}

impl<C: Context + ?Sized> Strategy<C> for Fencing {
    fn acquire(&mut self, cx: &mut C) {
        let sent = cx.local_now();
        self.runs.insert(cx.run(), Held { sent_local_ms: sent, token: None, keeper: None, holds: false });
        let command = RedisCommand::SetNxPxIncr { value: cx.owner(), ttl_ms: self.settings.ttl_ms };
        Fencing::send(cx, command, FencingTag::Take);
    }

    fn on_reply(&mut self, cx: &mut C, tag: Tag, reply: Reply) {
        let retry = cx.world().retry_ms;
        let (Tag::Fencing(tag), Some(held)) = (tag, self.runs.get_mut(&cx.run())) else {
            return;
        };
        match (tag, reply) {
            (FencingTag::Take, Reply::Redis(RedisReply::Integer(value))) => {
                // A run is granted at most once, and INCR counts from 1 (from
                // 1 again after a restart that lost the counter: the token
                // may repeat, but it is never 0 or negative).
                debug_assert!(held.token.is_none(), "run {} granted twice", cx.run());
                debug_assert!(value > 0, "INCR gave {value}");
                held.holds = true;
                let token = Token(value.unsigned_abs());
                held.token = Some(token);
                let valid_until = held.sent_local_ms + i64::try_from(self.settings.ttl_ms).unwrap_or(i64::MAX / 4);
                held.keeper = Some(LeaseKeeper::start(cx, self.settings.renew_every_ms, valid_until));
                cx.acquired(Some(token));
            }
            (FencingTag::Take, _) => cx.busy(retry),
            (FencingTag::Extend, Reply::Redis(RedisReply::Integer(1))) => {
                let valid_until = held.sent_local_ms + i64::try_from(self.settings.ttl_ms).unwrap_or(i64::MAX / 4);
                if let Some(keeper) = held.keeper.as_mut() {
                    keeper.secured(cx, valid_until);
                }
            }
            (FencingTag::Extend, Reply::Redis(RedisReply::Integer(_))) => {
                held.holds = false;
                if let Some(keeper) = held.keeper.as_mut() {
                    keeper.lost(cx);
                }
            }
            (FencingTag::Extend, _) => {
                if let Some(keeper) = held.keeper.as_mut() {
                    keeper.unanswered(cx);
                }
            }
            // The release is not awaited: the run is over.
            (FencingTag::Release, _) => {}
        }
    }

    fn on_timer(&mut self, cx: &mut C, timer: Timer) {
        let now = cx.local_now();
        let owner = cx.owner();
        let Some(held) = self.runs.get_mut(&cx.run()) else {
            return;
        };
        match timer {
            Timer::Renew => {
                held.sent_local_ms = now;
                let command = RedisCommand::CompareAndExtend { value: owner, ttl_ms: self.settings.ttl_ms };
                Fencing::send(cx, command, FencingTag::Extend);
            }
            Timer::Deadline => {
                held.holds = false;
                if let Some(keeper) = held.keeper.as_mut() {
                    keeper.expired(cx);
                }
            }
        }
    }

    fn release(&mut self, cx: &mut C) {
        if let Some(mut held) = self.runs.remove(&cx.run()) {
            if let Some(keeper) = held.keeper.as_mut() {
                keeper.stop(cx);
            }
            if held.holds {
                let command = RedisCommand::CompareAndDelete { value: cx.owner() };
                Fencing::send(cx, command, FencingTag::Release);
            }
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
