//! `naive`: the seed's `SET job:daily-report locked NX EX 300`, value and
//! all: every instance writes the literal `locked`, so nothing tells one
//! holder from another. The TTL is meant to outlast the job, so the lock is
//! never renewed; it is never released (the seed), released with a plain
//! `DEL`, which deletes whatever lock is there, somebody else's included, or
//! released the Redis page's way: the value is the run's own and the unlock
//! script deletes the key only while it still holds that value.

use crate::event::{LockValue, RedisCommand, RedisReply, RowWrite};
use crate::ids::{RunId, Token};
use crate::scenario::{NaiveRelease, NaiveSettings};
use crate::vocab::{Context, NaiveTag, Reply, Request, Strategy, Tag, Timer};

pub(crate) const REDIS_TIMEOUT_MS: u64 = 1_000;

#[derive(Debug)]
pub(crate) struct Naive {
    settings: NaiveSettings,
}

impl Naive {
    pub(crate) fn new(settings: NaiveSettings) -> Naive {
        Naive { settings }
    }
}

impl<C: Context + ?Sized> Strategy<C> for Naive {
    fn acquire(&mut self, cx: &mut C) {
        // Only a lock released by compare-and-delete needs to tell its own
        // value from another's; the seed's lock writes the literal `locked`.
        let value = match self.settings.release {
            NaiveRelease::CompareAndDelete => LockValue::Owner(cx.owner()),
            NaiveRelease::Never | NaiveRelease::Del => LockValue::Locked,
        };
        let ttl_ms = self.settings.ttl_ms;
        let command = if ttl_ms.is_multiple_of(1000) {
            RedisCommand::SetNxEx { value, ttl_s: ttl_ms / 1000 }
        } else {
            RedisCommand::SetNxPx { value, ttl_ms }
        };
        let primary = cx.redis_primary();
        cx.send(primary, Request::Redis(command), Tag::Naive(NaiveTag::Set), Some(REDIS_TIMEOUT_MS));
    }

    fn on_reply(&mut self, cx: &mut C, tag: Tag, reply: Reply) {
        // Only the take's answer decides anything; a DEL's is not awaited.
        if tag != Tag::Naive(NaiveTag::Set) {
            return;
        }
        if reply == Reply::Redis(RedisReply::Ok) {
            cx.acquired(None);
        } else {
            let retry = cx.world().retry_ms;
            cx.busy(retry);
        }
    }

    fn on_timer(&mut self, _cx: &mut C, _timer: Timer) {}

    fn release(&mut self, cx: &mut C) {
        if !cx.believes() {
            return;
        }
        let command = match self.settings.release {
            NaiveRelease::Never => return,
            NaiveRelease::Del => RedisCommand::Del,
            NaiveRelease::CompareAndDelete => RedisCommand::CompareAndDelete { value: cx.owner() },
        };
        let primary = cx.redis_primary();
        cx.send(primary, Request::Redis(command), Tag::Naive(NaiveTag::Delete), Some(REDIS_TIMEOUT_MS));
    }

    fn forget(&mut self, _run: RunId) {}

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
