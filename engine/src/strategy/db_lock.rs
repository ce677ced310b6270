//! `db-lock` (quiz option C): `BEGIN; SELECT … FROM jobs WHERE name =
//! 'daily-report' FOR UPDATE`, held in one transaction on one pooled
//! connection for the whole job; the report row is written in the same
//! transaction and the lock goes at COMMIT (or when the server ends the
//! session). Nothing is renewed, and no token is handed out: storage writes
//! made after the server gave the lock away are not fenced.
//!
//! Its costs show elsewhere: a connection held idle-in-transaction for the
//! whole job, waiters that hold connections too, and other services' queries
//! whose foreign-key checks queue behind `FOR UPDATE`.

use crate::event::{RowWrite, Sql, SqlError, SqlOutcome};
use crate::ids::{Party, RunId, SessionId, Token};
use crate::scenario::DbLockSettings;
use crate::vocab::{Context, DbLockTag, Reply, Request, RunMap, Strategy, Tag, Timer};

pub(crate) const SQL_TIMEOUT_MS: u64 = 30_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Connecting,
    Locking,
    Held,
    Committing,
    Done,
}

#[derive(Clone, Copy, Debug)]
struct Transaction {
    session: Option<SessionId>,
    phase: Phase,
}

#[derive(Debug)]
pub(crate) struct DbLock {
    settings: DbLockSettings,
    runs: RunMap<Transaction>,
}

impl DbLock {
    pub(crate) fn new(settings: DbLockSettings) -> DbLock {
        DbLock { settings, runs: RunMap::new() }
    }

    /// Ends the transaction, gives the connection back and retries later.
    fn back_off<C: Context + ?Sized>(&mut self, cx: &mut C, broken: bool) {
        let retry = cx.world().retry_ms;
        if let Some(transaction) = self.runs.get_mut(&cx.run()) {
            if let Some(session) = transaction.session.take() {
                if !broken {
                    cx.send(
                        Party::Db,
                        Request::Sql { session, sql: Sql::Rollback },
                        Tag::DbLock(DbLockTag::Rollback),
                        Some(SQL_TIMEOUT_MS),
                    );
                }
                cx.checkin(session, broken);
            }
            transaction.phase = Phase::Done;
        }
        cx.busy(retry);
    }
}

impl<C: Context + ?Sized> Strategy<C> for DbLock {
    fn acquire(&mut self, cx: &mut C) {
        self.runs.insert(cx.run(), Transaction { session: None, phase: Phase::Connecting });
        cx.checkout(Tag::DbLock(DbLockTag::Checkout));
    }

    fn on_reply(&mut self, cx: &mut C, tag: Tag, reply: Reply) {
        let (strength, wait) = (self.settings.lock_strength, self.settings.wait);
        let Tag::DbLock(tag) = tag else {
            return;
        };
        let Some(transaction) = self.runs.get_mut(&cx.run()) else {
            // The run is over; a connection that arrives now goes straight back.
            if let Reply::Checkout(Ok(session)) = reply {
                cx.checkin(session, false);
            }
            return;
        };
        match (tag, reply) {
            (DbLockTag::Checkout, Reply::Checkout(Ok(session))) => {
                transaction.session = Some(session);
                transaction.phase = Phase::Locking;
                // Blocking waits as long as the lock is held: only lock_timeout ends it.
                let timeout = if wait == crate::scenario::DbWait::Block { None } else { Some(SQL_TIMEOUT_MS) };
                cx.send(
                    Party::Db,
                    Request::Sql { session, sql: Sql::LockJobRow { strength, wait } },
                    Tag::DbLock(DbLockTag::Lock),
                    timeout,
                );
            }
            (DbLockTag::Checkout, _) => {
                transaction.phase = Phase::Done;
                let retry = cx.world().retry_ms;
                cx.busy(retry);
            }
            (DbLockTag::Lock, Reply::Sql(SqlOutcome::Rows(1))) => {
                transaction.phase = Phase::Held;
                cx.acquired(None);
            }
            (DbLockTag::Lock, Reply::Sql(SqlOutcome::Rows(_))) => self.back_off(cx, false),
            (DbLockTag::Lock, Reply::Sql(SqlOutcome::Error(SqlError::LockNotAvailable | SqlError::LockTimeout))) => {
                self.back_off(cx, false);
            }
            (DbLockTag::Lock, _) => self.back_off(cx, true),
            // A statement's answer is always `Reply::Sql`, a timeout included.
            (DbLockTag::Commit, reply) => {
                let ok = matches!(reply, Reply::Sql(SqlOutcome::Rows(_)));
                transaction.phase = Phase::Done;
                if let Some(session) = transaction.session.take() {
                    cx.checkin(session, !ok);
                }
                cx.committed(ok);
            }
            // A rollback is not awaited: the run is over or retrying.
            (DbLockTag::Rollback, _) => {}
        }
    }

    fn on_timer(&mut self, _cx: &mut C, _timer: Timer) {}

    fn release(&mut self, cx: &mut C) {
        let Some(transaction) = self.runs.remove(&cx.run()) else {
            return;
        };
        if let Some(session) = transaction.session {
            if transaction.phase != Phase::Done {
                cx.send(
                    Party::Db,
                    Request::Sql { session, sql: Sql::Rollback },
                    Tag::DbLock(DbLockTag::Rollback),
                    Some(SQL_TIMEOUT_MS),
                );
            }
            cx.checkin(session, false);
        }
    }

    fn forget(&mut self, run: RunId) {
        self.runs.remove(&run);
    }

    fn token(&self, _run: RunId) -> Option<Token> {
        None
    }

    fn session(&self, run: RunId) -> Option<SessionId> {
        self.runs
            .get(&run)
            .filter(|transaction| matches!(transaction.phase, Phase::Held | Phase::Committing))
            .and_then(|transaction| transaction.session)
    }

    /// Every write goes out: the lock is not looked at again before one.
    fn checks_writes(&self) -> bool {
        false
    }

    fn report_row(&self, _run: RunId) -> RowWrite {
        RowWrite::Upsert
    }

    fn commit_report(&mut self, cx: &mut C) {
        let Some(transaction) = self.runs.get_mut(&cx.run()) else {
            return;
        };
        let Some(session) = transaction.session else {
            return;
        };
        transaction.phase = Phase::Committing;
        cx.send(
            Party::Db,
            Request::Sql { session, sql: Sql::Commit },
            Tag::DbLock(DbLockTag::Commit),
            Some(SQL_TIMEOUT_MS),
        );
    }
}
