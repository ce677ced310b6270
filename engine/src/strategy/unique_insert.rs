//! `unique-insert` (quiz option D): no lock at all. Every instance that sees no
//! report yet does the whole job, writes its own objects, posts to Slack, and
//! ends with `INSERT … ON CONFLICT … DO NOTHING RETURNING run`; the first row
//! wins and names the report. The data stays consistent; the cost is the
//! duplicated work and side effects (a Slack post per run).

use crate::event::RowWrite;
use crate::ids::{RunId, Token};
use crate::vocab::{Context, Reply, Strategy, Tag, Timer};

#[derive(Debug)]
pub(crate) struct UniqueInsert;

impl<C: Context + ?Sized> Strategy<C> for UniqueInsert {
    fn acquire(&mut self, cx: &mut C) {
        // Nothing to take: go straight to the existence check and the job.
        cx.acquired(None);
    }

    fn on_reply(&mut self, _cx: &mut C, _tag: Tag, _reply: Reply) {}

    fn on_timer(&mut self, _cx: &mut C, _timer: Timer) {}

    fn release(&mut self, _cx: &mut C) {}

    fn forget(&mut self, _run: RunId) {}

    fn token(&self, _run: RunId) -> Option<Token> {
        None
    }

    /// Every write goes out: the lock is not looked at again before one.
    fn checks_writes(&self) -> bool {
        false
    }

    fn report_row(&self, _run: RunId) -> RowWrite {
        RowWrite::InsertOrNothing
    }

    fn own_objects(&self) -> bool {
        true
    }

    fn takes_lock(&self) -> bool {
        false
    }
}
