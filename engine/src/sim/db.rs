//! PostgreSQL, as far as the lab needs it: sessions up to `max_connections`,
//! transactions, the jobs row's lock with a FIFO queue (`FOR UPDATE` or `FOR
//! NO KEY UPDATE`, their `NOWAIT` and `SKIP LOCKED` variants, and the `FOR KEY
//! SHARE` that a foreign key check takes), `lock_timeout`,
//! `idle_in_transaction_session_timeout`, the reports table with its unique key
//! (job, period), and the traffic of other services that share the database.
//!
//! Other services' queries are foreign-key inserts into `job_events`
//! (`world.background_foreign_key_percent` of them) and plain reads, on the
//! services' own pool (`world.background_pool_size`). An insert's check waits
//! while a job holds `FOR UPDATE` on the row; a read never waits for a row
//! lock. Both wait for a connection when the pool is full, so inserts stuck
//! behind the row lock starve the pool and the reads queue behind them. They
//! wait as long as it takes (PostgreSQL's `lock_timeout` and
//! `statement_timeout` are 0 by default), unless the scenario gives them a
//! timeout (`world.background_timeout_ms`).
//!
//! A session ends when its client's socket closes (the FIN arrives), when TCP
//! keepalive gives up on a vanished host (`tcp_keepalive_ms`, the Linux
//! default 2 h 11 min), or when a timeout ends it; its transaction rolls back
//! and its row locks go to the next waiter.
//!
//! A report row written inside a transaction is checked against the committed
//! rows when written and applied at COMMIT; until then another session's write
//! of the same row waits for that transaction to end, as PostgreSQL's unique
//! index makes it wait, and is then decided against what the end left.
//!
//! Other services' queries take a fast path while nobody holds or waits for
//! `FOR UPDATE`: an insert's `FOR KEY SHARE` is then only "held until t + 20
//! ms" (one number that a `FOR UPDATE` must wait out) and they leave no event. Queries
//! that meet the row lock are simulated one by one and logged. The outcome is
//! the same; the cost of a calm night's thousands of queries is not.

use super::table::HotTable;
use super::{Action, Reply, Sim, TimerId, TimerPurpose, run_index};
use crate::event::{
    BackgroundOutcome, BackgroundQuery, ConnectionChange, DbClient, EventKind, RevokeReason, RowLockChange,
    RowLockMode, RowWrite, Sql, SqlError, SqlOutcome, TerminateReason,
};
use crate::ids::{Party, Period, ReportOf, RunId, SessionId, Token};
use crate::scenario::{DbWait, LockStrength, StrategySettings, World};
use crate::table::Table;
use std::collections::VecDeque;

/// How long one statement takes on an idle server.
pub const STATEMENT_MS: u64 = 2;
/// How long one background query takes once it has its lock.
pub const BACKGROUND_QUERY_MS: u64 = 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReportRow {
    /// The period whose run wrote it: under `daily`, the refresh the day's row reflects.
    pub(crate) period: Period,
    pub(crate) run: RunId,
    pub(crate) token: Option<Token>,
}

#[derive(Clone, Copy, Debug)]
struct Session {
    client: DbClient,
    in_transaction: bool,
    /// A report row written in the open transaction, applied at COMMIT.
    pending_row: Option<(Period, ReportOf, RunId, Option<Token>, RowWrite)>,
    /// The run whose `FOR UPDATE` this session holds.
    lock_run: Option<RunId>,
    busy: bool,
    idle_timer: Option<TimerId>,
    /// A write waiting for another session's uncommitted row: that session,
    /// and the waiting statement.
    waits_for_row: Option<(SessionId, u32)>,
}

#[derive(Clone, Copy, Debug)]
struct Caller {
    from: Party,
    request: u32,
    run: RunId,
}

#[derive(Clone, Copy, Debug)]
struct RowWaiter {
    session: SessionId,
    mode: RowLockMode,
    since_ms: u64,
    caller: Option<Caller>,
    background: Option<u32>,
    lock_timer: Option<TimerId>,
}

#[derive(Clone, Copy, Debug)]
struct Statement {
    caller: Caller,
    sql: Sql,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BackgroundState {
    WaitingForConnection,
    WaitingForLock(SessionId),
    Running(SessionId),
}

#[derive(Clone, Copy, Debug)]
struct Waiting {
    what: BackgroundQuery,
    arrived_ms: u64,
    /// When it got a connection.
    connected_ms: Option<u64>,
    /// The jobs row lock held it up (see `EventKind::Background`).
    behind_lock: bool,
    state: BackgroundState,
    /// Whether the log shows this query holding the row: it does once the
    /// query waited in the lock queue (a waiter's grant is logged), so its
    /// release is logged too and the view's holders never outlive it.
    holds_logged: bool,
}

/// Other services' queries still in the database's hands, by number. They
/// are numbered as they arrive and mostly leave in the same order, and
/// behind a long-held row lock thousands wait at once: a window over the
/// numbers, with a slot per number from the oldest one still here, takes and
/// drops each in constant time, where a sorted table shifted them all.
#[derive(Clone, Debug, Default)]
struct Arrivals {
    /// The number of the first slot.
    first: u32,
    slots: VecDeque<Option<Waiting>>,
}

impl Arrivals {
    fn slot(&self, query: u32) -> Option<usize> {
        usize::try_from(query.checked_sub(self.first)?).ok().filter(|slot| *slot < self.slots.len())
    }

    fn insert(&mut self, query: u32, waiting: Waiting) {
        if self.slots.is_empty() {
            self.first = query;
        }
        assert!(query >= self.first, "query {query} arrived after a later one");
        let slot = usize::try_from(query - self.first).unwrap_or(usize::MAX);
        if slot >= self.slots.len() {
            self.slots.resize(slot + 1, None);
        }
        self.slots[slot] = Some(waiting);
    }

    fn get(&self, query: &u32) -> Option<&Waiting> {
        self.slot(*query).and_then(|slot| self.slots[slot].as_ref())
    }

    fn get_mut(&mut self, query: &u32) -> Option<&mut Waiting> {
        self.slot(*query).and_then(|slot| self.slots[slot].as_mut())
    }

    fn contains_key(&self, query: &u32) -> bool {
        self.get(query).is_some()
    }

    fn remove(&mut self, query: &u32) -> Option<Waiting> {
        let taken = self.slot(*query).and_then(|slot| self.slots[slot].take());
        while self.slots.front().is_some_and(Option::is_none) {
            self.slots.pop_front();
            self.first += 1;
        }
        taken
    }

    /// The queries here, oldest first.
    fn iter(&self) -> impl Iterator<Item = (u32, &Waiting)> {
        (self.first..).zip(&self.slots).filter_map(|(query, slot)| slot.as_ref().map(|waiting| (query, waiting)))
    }
}

/// The database server.
#[derive(Clone, Debug)]
pub(crate) struct Database {
    max_connections: u16,
    sessions: HotTable<SessionId, Session>,
    /// Sessions the server ended, with the error the client reads next.
    /// (This table and `reports` are the engine's sorted-vector map, which
    /// the pages' wasm carries anyway, in place of `BTreeMap`s.)
    ended: Table<SessionId, SqlError>,
    next_session: u32,
    holders: Vec<(SessionId, RowLockMode)>,
    queue: VecDeque<RowWaiter>,
    pub(crate) reports: Table<ReportOf, ReportRow>,
    statements: HotTable<u32, Statement>,
    next_statement: u32,
    slow_until_ms: u64,
    slow_factor: f64,
    background_free: Vec<SessionId>,
    background_open: u8,
    /// Until when fast-path queries hold `FOR KEY SHARE` on the jobs row.
    key_share_until_ms: u64,
    /// Fast-path queries in flight: when each ends, and its session.
    quick_queries: VecDeque<(u64, SessionId)>,
    /// A scheduled re-check of the lock queue for when the fast path's share ends.
    recheck_at_ms: Option<u64>,
    background_queue: VecDeque<u32>,
    background: Arrivals,
    next_query: u32,
    /// The bounds of the gap between arrivals: half to one and a half times
    /// the mean the world's rate gives.
    background_gap_ms: (u64, u64),
    /// The percentage of arrivals that are foreign-key inserts.
    foreign_key_percent: u8,
    background_pool_size: u8,
    /// 0: the other services wait for ever.
    background_timeout_ms: u64,
    lock_timeout_ms: u64,
    idle_timeout_ms: u64,
}

impl Database {
    pub(crate) fn new(world: &World) -> Database {
        let mean_gap_ms = 1_000 / u64::from(world.background_queries_per_s.max(1));
        Database {
            max_connections: world.db_max_connections,
            sessions: HotTable::new(),
            ended: Table::new(),
            next_session: 1,
            holders: Vec::new(),
            queue: VecDeque::new(),
            reports: Table::new(),
            statements: HotTable::new(),
            next_statement: 0,
            slow_until_ms: 0,
            slow_factor: 1.0,
            background_free: Vec::new(),
            background_open: 0,
            key_share_until_ms: 0,
            quick_queries: VecDeque::new(),
            recheck_at_ms: None,
            background_queue: VecDeque::new(),
            background: Arrivals::default(),
            next_query: 0,
            background_gap_ms: (mean_gap_ms / 2, mean_gap_ms + mean_gap_ms / 2),
            foreign_key_percent: world.background_foreign_key_percent,
            background_pool_size: world.background_pool_size,
            background_timeout_ms: world.background_timeout_ms,
            lock_timeout_ms: 0,
            idle_timeout_ms: 0,
        }
    }

    /// Applies the db-lock strategy's session settings.
    pub(crate) fn configure(&mut self, settings: &StrategySettings) {
        if let StrategySettings::DbLock(db_lock) = settings {
            self.lock_timeout_ms = db_lock.lock_timeout_ms;
            self.idle_timeout_ms = db_lock.idle_in_transaction_timeout_ms;
        }
    }

    /// Whether `session` may take `mode` now, next to the holders and the fast path's share.
    fn compatible(&self, mode: RowLockMode, session: SessionId, now_ms: u64) -> bool {
        if mode.conflicts(RowLockMode::KeyShare) && self.key_share_until_ms > now_ms {
            return false;
        }
        self.holders.iter().all(|(holder, held)| *holder == session || !held.conflicts(mode))
    }

    /// Whether other services' queries take the fast path: no `FOR UPDATE`
    /// is held or queued, and none of theirs waits for a connection.
    fn fast_path_open(&self) -> bool {
        !self.update_in_play() && self.background_queue.is_empty()
    }

    /// How long a statement that starts at `at_ms` takes.
    fn statement_ms_at(&self, at_ms: u64, base_ms: u64) -> u64 {
        if at_ms < self.slow_until_ms { slowed_ms(base_ms, self.slow_factor) } else { base_ms }
    }

    /// Whether a lock that a foreign-key check waits for (`FOR UPDATE`) is
    /// held or queued: the fast path is closed then.
    fn update_in_play(&self) -> bool {
        let blocks_checks = |mode: RowLockMode| mode.conflicts(RowLockMode::KeyShare);
        self.holders.iter().any(|(_, mode)| blocks_checks(*mode))
            || self.queue.iter().any(|waiter| blocks_checks(waiter.mode))
    }

    /// Whether a foreign-key check waits in the row's queue, holding its connection.
    fn check_waits_for_row(&self) -> bool {
        self.queue.iter().any(|waiter| waiter.mode == RowLockMode::KeyShare)
    }

    /// The sessions in use: the server's connection count.
    pub(crate) fn connections(&self) -> usize {
        self.sessions.len()
    }
}

impl Sim {
    fn statement_ms(&self, base_ms: u64) -> u64 {
        self.db.statement_ms_at(self.now_ms, base_ms)
    }
}

/// The statement a job that waited in the row's queue for `mode` sent: only
/// a blocking lock waits.
fn job_lock_statement(mode: RowLockMode) -> Sql {
    let strength = match mode {
        RowLockMode::NoKeyUpdate => LockStrength::ForNoKeyUpdate,
        RowLockMode::Update | RowLockMode::KeyShare => LockStrength::ForUpdate,
    };
    Sql::LockJobRow { strength, wait: DbWait::Block }
}

/// A statement's time while the database is slowed. Kept out of line: the
/// compiler otherwise worked the product out on every statement and arrival
/// and threw it away unless a `db_slow` fault was in force.
#[cold]
#[inline(never)]
pub fn slowed_ms(base_ms: u64, factor: f64) -> u64 {
    // Deterministic everywhere: one IEEE multiplication, truncated;
    // validation bounds the factor to 1..=1000, so the product fits.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let slowed = (base_ms as f64 * factor) as u64;
    slowed
}

impl Sim {
    pub(crate) fn db_slow(&mut self, factor: f64, duration_ms: u64) {
        self.background_catch_up();
        self.db.slow_factor = factor;
        self.db.slow_until_ms = self.now_ms + duration_ms;
        // The factor is validated to 1..=1000, so a hundred times it fits a u32.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let factor_percent = (factor * 100.0) as u32;
        self.record(EventKind::DbSlow { factor_percent });
    }

    fn db_reply(&mut self, caller: Caller, session: SessionId, sql: Sql, outcome: SqlOutcome, waited_ms: u64) {
        let client = self.db.sessions.get(&session).map_or_else(
            || DbClient::Instance(caller.from.instance().unwrap_or(crate::ids::InstanceId(0))),
            |state| state.client,
        );
        let run = Some(caller.run);
        self.record(EventKind::Sql { session, client, run, statement: sql, outcome, waited_ms });
        self.reply(Party::Db, caller.from, caller.request, Reply::Sql(outcome));
    }

    /// A statement arrives from an instance.
    pub(crate) fn db_receive(&mut self, from: Party, request: u32, run: RunId, session: SessionId, sql: Sql) {
        let caller = Caller { from, request, run };
        let Some(instance) = from.instance() else {
            return;
        };
        if sql == Sql::Connect {
            if self.db.connections() >= usize::from(self.db.max_connections) {
                let client = DbClient::Instance(instance);
                self.record(EventKind::Connection { session: SessionId(0), client, change: ConnectionChange::Refused });
                self.reply(Party::Db, from, request, Reply::Sql(SqlOutcome::Error(SqlError::TooManyClients)));
                return;
            }
            let id = self.open_session(DbClient::Instance(instance));
            self.reply(Party::Db, from, request, Reply::Sql(SqlOutcome::Connected(id)));
            return;
        }
        if let Some(error) = self.db.ended.remove(&session) {
            self.db_reply(caller, session, sql, SqlOutcome::Error(error), 0);
            return;
        }
        let Some(state) = self.db.sessions.get_mut(&session) else {
            self.db_reply(caller, session, sql, SqlOutcome::Error(SqlError::ConnectionClosed), 0);
            return;
        };
        state.busy = true;
        let idle = state.idle_timer.take();
        if let Some(timer) = idle {
            self.cancel_timer(timer);
        }
        let statement = self.db.next_statement;
        self.db.next_statement += 1;
        self.db.statements.insert(statement, Statement { caller, sql });
        let at = self.now_ms + self.statement_ms(STATEMENT_MS);
        self.schedule(at, Action::StatementDone { session, statement });
    }

    fn open_session(&mut self, client: DbClient) -> SessionId {
        let id = SessionId(self.db.next_session);
        self.db.next_session += 1;
        let session = Session {
            client,
            in_transaction: false,
            pending_row: None,
            lock_run: None,
            busy: false,
            idle_timer: None,
            waits_for_row: None,
        };
        self.db.sessions.insert(id, session);
        self.record(EventKind::Connection { session: id, client, change: ConnectionChange::Opened });
        id
    }

    pub(crate) fn statement_done(&mut self, session: SessionId, statement: u32) {
        let Some(Statement { caller, sql }) = self.db.statements.remove(&statement) else {
            return;
        };
        let Some(state) = self.db.sessions.get(&session).copied() else {
            return;
        };
        match sql {
            Sql::Connect => {}
            Sql::ReportExists { period, report } => {
                // The day's row counts when it reflects this period or a later one.
                let rows = u32::from(self.db.reports.get(&report).is_some_and(|row| row.period >= period));
                self.finish_statement(caller, session, sql, SqlOutcome::Rows(rows), 0);
            }
            Sql::LockJobRow { strength, wait } => {
                // A `FOR UPDATE` asks about the key share and ends the steady state.
                self.background_catch_up();
                if let Some(state) = self.db.sessions.get_mut(&session) {
                    state.in_transaction = true;
                }
                let mode = RowLockMode::of(strength);
                if self.db.queue.is_empty() && self.db.compatible(mode, session, self.now_ms) {
                    self.grant_row(session, mode, Some(caller));
                    self.finish_statement(caller, session, sql, SqlOutcome::Rows(1), 0);
                    return;
                }
                match wait {
                    DbWait::Nowait => {
                        let outcome = SqlOutcome::Error(SqlError::LockNotAvailable);
                        self.finish_statement(caller, session, sql, outcome, 0);
                    }
                    DbWait::SkipLocked => self.finish_statement(caller, session, sql, SqlOutcome::Rows(0), 0),
                    DbWait::Block => {
                        let lock_timer = (self.db.lock_timeout_ms > 0).then(|| {
                            self.set_timer(Party::Db, self.db.lock_timeout_ms, TimerPurpose::LockTimeout { session })
                        });
                        self.db.queue.push_back(RowWaiter {
                            session,
                            mode,
                            since_ms: self.now_ms,
                            caller: Some(caller),
                            background: None,
                            lock_timer,
                        });
                        let client = state.client;
                        let change = RowLockChange::Waiting;
                        self.record(EventKind::RowLock { session, client, mode, change });
                    }
                }
            }
            Sql::WriteReport { period, report, run, token, how } => {
                // Another transaction's uncommitted row: wait for it to end.
                let writer =
                    self.db.sessions.entries().iter().find(|(id, other)| {
                        *id != session && other.pending_row.is_some_and(|(_, row, ..)| row == report)
                    });
                if let Some(&(writer, _)) = writer {
                    self.db.statements.insert(statement, Statement { caller, sql });
                    if let Some(state) = self.db.sessions.get_mut(&session) {
                        state.waits_for_row = Some((writer, statement));
                    }
                    return;
                }
                let outcome = self.row_outcome(report, token, how);
                if state.in_transaction {
                    if outcome != SqlOutcome::Rows(0)
                        && !matches!(outcome, SqlOutcome::StaleToken { .. })
                        && let Some(state) = self.db.sessions.get_mut(&session)
                    {
                        state.pending_row = Some((period, report, run, token, how));
                    }
                } else if outcome == SqlOutcome::Rows(1) {
                    self.apply_row(period, report, run, token);
                }
                self.finish_statement(caller, session, sql, outcome, 0);
            }
            Sql::Commit | Sql::Rollback => {
                if let Some((period, report, run, token, how)) = state.pending_row
                    && sql == Sql::Commit
                    && self.row_outcome(report, token, how) == SqlOutcome::Rows(1)
                {
                    self.apply_row(period, report, run, token);
                }
                self.end_transaction(session);
                self.finish_statement(caller, session, sql, SqlOutcome::Rows(0), 0);
            }
        }
    }

    fn finish_statement(&mut self, caller: Caller, session: SessionId, sql: Sql, outcome: SqlOutcome, waited_ms: u64) {
        self.db_reply(caller, session, sql, outcome, waited_ms);
        let idle_timeout = self.db.idle_timeout_ms;
        let Some(state) = self.db.sessions.get_mut(&session) else {
            return;
        };
        state.busy = false;
        if state.in_transaction && idle_timeout > 0 {
            let timer = self.set_timer(Party::Db, idle_timeout, TimerPurpose::IdleTimeout { session });
            if let Some(state) = self.db.sessions.get_mut(&session) {
                state.idle_timer = Some(timer);
            }
        }
    }

    /// What a report-row write would do against the committed rows.
    fn row_outcome(&self, report: ReportOf, token: Option<Token>, how: RowWrite) -> SqlOutcome {
        let existing = self.db.reports.get(&report);
        match (how, existing) {
            (RowWrite::InsertOrNothing, Some(_)) => SqlOutcome::Rows(0),
            (RowWrite::FencedUpsert, Some(ReportRow { token: Some(highest), .. })) if token < Some(*highest) => {
                SqlOutcome::StaleToken { highest: *highest }
            }
            _ => SqlOutcome::Rows(1),
        }
    }

    fn apply_row(&mut self, period: Period, report: ReportOf, run: RunId, token: Option<Token>) {
        self.db.reports.insert(report, ReportRow { period, run, token });
        self.record(EventKind::RowApplied { period, report, run, token });
    }

    fn grant_row(&mut self, session: SessionId, mode: RowLockMode, caller: Option<Caller>) {
        assert!(self.db.compatible(mode, session, self.now_ms), "row lock {mode:?} granted over a conflicting holder");
        self.db.holders.push((session, mode));
        let Some(state) = self.db.sessions.get_mut(&session) else {
            return;
        };
        let client = state.client;
        if mode.is_job_lock() {
            state.lock_run = caller.map(|caller| caller.run);
            self.record(EventKind::RowLock { session, client, mode, change: RowLockChange::Granted });
            if let Some(caller) = caller {
                let record = &mut self.runs[run_index(caller.run)];
                record.granted = true;
                let instance = record.instance;
                self.record(EventKind::Granted { run: caller.run, instance, token: None });
            }
        }
    }

    /// Commit or rollback: the row locks go, the queue moves.
    fn end_transaction(&mut self, session: SessionId) {
        let mut wrote_row = false;
        if let Some(state) = self.db.sessions.get_mut(&session) {
            state.in_transaction = false;
            wrote_row = state.pending_row.take().is_some();
            if let Some(timer) = state.idle_timer.take() {
                self.cancel_timer(timer);
            }
        }
        // Writes that waited for this transaction's row go on now, against
        // what its end left (the row committed, or rolled back).
        if wrote_row {
            let waiting: Vec<(SessionId, u32)> = self
                .db
                .sessions
                .entries()
                .iter()
                .filter_map(|(id, other)| {
                    other.waits_for_row.filter(|(writer, _)| *writer == session).map(|(_, statement)| (*id, statement))
                })
                .collect();
            for (waiter, statement) in waiting {
                if let Some(state) = self.db.sessions.get_mut(&waiter) {
                    state.waits_for_row = None;
                }
                self.schedule(self.now_ms, Action::StatementDone { session: waiter, statement });
            }
        }
        self.release_row(session);
    }

    fn release_row(&mut self, session: SessionId) {
        let before = self.db.holders.len();
        let held_job_lock = self
            .db
            .holders
            .iter()
            .find(|(holder, mode)| *holder == session && mode.is_job_lock())
            .map(|(_, mode)| *mode);
        self.db.holders.retain(|(holder, _)| *holder != session);
        if self.db.holders.len() != before {
            let (client, lock_run) = self
                .db
                .sessions
                .get_mut(&session)
                .map_or((DbClient::Background, None), |state| (state.client, state.lock_run.take()));
            if let Some(mode) = held_job_lock {
                self.record(EventKind::RowLock { session, client, mode, change: RowLockChange::Released });
            }
            if let Some(run) = lock_run {
                let record = &mut self.runs[run_index(run)];
                record.granted = false;
                let instance = record.instance;
                self.record(EventKind::Revoked { run, instance, reason: RevokeReason::TransactionEnded });
            }
        }
        self.grant_waiters();
    }

    /// Grants the queue's head while it fits with the holders.
    fn grant_waiters(&mut self) {
        while let Some(waiter) = self.db.queue.front().copied() {
            if !self.db.compatible(waiter.mode, waiter.session, self.now_ms) {
                // Blocked only by the fast path's share: look again when it ends.
                if self.db.holders.is_empty() && self.db.key_share_until_ms > self.now_ms {
                    self.schedule_recheck(self.db.key_share_until_ms);
                }
                break;
            }
            self.db.queue.pop_front();
            if let Some(timer) = waiter.lock_timer {
                self.cancel_timer(timer);
            }
            let waited = self.now_ms - waiter.since_ms;
            if waiter.mode == RowLockMode::KeyShare {
                let client = DbClient::Background;
                let change = RowLockChange::Granted;
                self.record(EventKind::RowLock { session: waiter.session, client, mode: waiter.mode, change });
            }
            self.grant_row(waiter.session, waiter.mode, waiter.caller);
            if let Some(caller) = waiter.caller {
                let sql = job_lock_statement(waiter.mode);
                self.finish_statement(caller, waiter.session, sql, SqlOutcome::Rows(1), waited);
            }
            if let Some(query) = waiter.background {
                if let Some(state) = self.db.background.get_mut(&query) {
                    state.holds_logged = true;
                }
                self.background_run(query, waiter.session);
            }
        }
    }

    fn remove_waiter(&mut self, session: SessionId) -> Option<RowWaiter> {
        let position = self.db.queue.iter().position(|waiter| waiter.session == session)?;
        let waiter = self.db.queue.remove(position)?;
        if let Some(timer) = waiter.lock_timer {
            self.cancel_timer(timer);
        }
        let client = self.db.sessions.get(&session).map_or(DbClient::Background, |state| state.client);
        self.record(EventKind::RowLock { session, client, mode: waiter.mode, change: RowLockChange::GaveUp });
        // A waiter leaving can unblock those behind it.
        self.grant_waiters();
        Some(waiter)
    }

    pub(crate) fn lock_timeout(&mut self, session: SessionId) {
        let Some(waiter) = self.remove_waiter(session) else {
            return;
        };
        if let Some(caller) = waiter.caller {
            let waited = self.now_ms - waiter.since_ms;
            let sql = job_lock_statement(waiter.mode);
            self.finish_statement(caller, session, sql, SqlOutcome::Error(SqlError::LockTimeout), waited);
        }
    }

    pub(crate) fn idle_timeout(&mut self, session: SessionId) {
        let Some(state) = self.db.sessions.get_mut(&session) else {
            return;
        };
        state.idle_timer = None;
        if state.in_transaction && !state.busy {
            self.terminate(session, TerminateReason::IdleInTransactionTimeout);
            self.db.ended.insert(session, SqlError::IdleInTransactionTimeout);
        }
    }

    pub(crate) fn client_disconnected(&mut self, session: SessionId) {
        self.terminate(session, TerminateReason::ClientDisconnected);
    }

    pub(crate) fn keepalive_expiry(&mut self, session: SessionId) {
        self.terminate(session, TerminateReason::KeepaliveTimeout);
    }

    /// The server ends a session: its transaction rolls back, its locks go.
    fn terminate(&mut self, session: SessionId, reason: TerminateReason) {
        let Some(state) = self.db.sessions.get(&session).copied() else {
            return;
        };
        self.remove_waiter(session);
        self.end_transaction(session);
        self.db.sessions.remove(&session);
        let change = ConnectionChange::Terminated(reason);
        self.record(EventKind::Connection { session, client: state.client, change });
        self.grant_waiters();
    }

    // ----- other services' traffic -----

    pub(crate) fn background_gap_ms(&mut self) -> u64 {
        let (low, high) = self.db.background_gap_ms;
        self.rng_background.between(low, high).max(1)
    }

    /// What the arriving query does, drawn after its gap (the fast path and
    /// the slow one draw alike): a foreign-key insert or a read. A world of
    /// one kind draws nothing.
    fn background_kind(&mut self) -> BackgroundQuery {
        let percent = self.db.foreign_key_percent;
        let insert = match percent {
            0 => false,
            100.. => true,
            _ => self.rng_background.below(100) < u64::from(percent),
        };
        if insert { BackgroundQuery::ForeignKeyInsert } else { BackgroundQuery::Read }
    }

    fn schedule_recheck(&mut self, at_ms: u64) {
        if self.db.recheck_at_ms.is_none_or(|scheduled| scheduled > at_ms || scheduled < self.now_ms) {
            self.db.recheck_at_ms = Some(at_ms);
            self.schedule(at_ms, Action::RowRecheck);
        }
    }

    pub(crate) fn row_recheck(&mut self) {
        if self.db.recheck_at_ms == Some(self.now_ms) {
            self.db.recheck_at_ms = None;
        }
        self.grant_waiters();
    }

    /// Other services' arrivals due no later than `limit_ms` (the queue's
    /// next action), in order. Arrivals are most of a run's actions, so they
    /// are taken here in one loop: between two of the world's own actions
    /// only these arrivals touch the database, and an arrival on the fast
    /// path changes neither the row's lock queue nor the queue for
    /// connections, so whether the fast path is open is settled once for the
    /// whole stretch. Stops after the first arrival that has to wait, since
    /// it queues actions (a fast-path arrival queues none, so `limit_ms`
    /// stays the queue's next).
    pub(crate) fn background_until(&mut self, limit_ms: u64) {
        assert!(
            self.next_background.is_none_or(|at_ms| at_ms >= self.now_ms),
            "deferred arrivals were not caught up before the fast path's steady state ended"
        );
        let fast_path_open = self.db.fast_path_open();
        let queued = self.queue.len();
        while let Some(at_ms) = self.next_background
            && at_ms <= limit_ms
            && at_ms < self.horizon_ms
        {
            if fast_path_open && self.background_steady(limit_ms) {
                continue;
            }
            self.advance_to(at_ms);
            self.next_background = None;
            let gap = self.background_gap_ms();
            self.schedule_background(self.now_ms + gap);
            let what = self.background_kind();
            // Sessions of fast-path queries that have ended go back to the other services' pool.
            while let Some((end, session)) = self.db.quick_queries.front().copied() {
                if end > self.now_ms {
                    break;
                }
                self.db.quick_queries.pop_front();
                self.background_session_free(session);
            }
            if !(fast_path_open && self.background_quick(what)) {
                self.background_wait(what);
                return;
            }
            assert_eq!(self.queue.len(), queued, "a fast-path arrival queued an action");
        }
    }

    /// Whether the pending arrivals can wait, untaken, while the world acts.
    ///
    /// In the fast path's steady state (see `background_steady`) an arrival
    /// changes nothing anybody reads but the key share's end, which only a
    /// `FOR UPDATE` asks about; and only a `FOR UPDATE` request or a
    /// `db_slow` fault can end the steady state. So arrivals are deferred
    /// until one of those comes, which catches them up first
    /// (`background_catch_up`) — under a strategy that never takes the row
    /// lock, for good. Taken late, each arrival has exactly the effect it
    /// would have had on time.
    pub(crate) fn background_deferred(&mut self) -> bool {
        // Once deferred, the arrivals stay deferred until a catch-up: only
        // what catches them up can end the steady state.
        if self.background_deferring {
            return true;
        }
        if !self.defer_background {
            return false;
        }
        let (Some(next_ms), Some(end_ms)) = (self.next_background, self.one_quick_query_end()) else {
            return false;
        };
        // Each query must end before the next arrival, this one and all later:
        // the shortest gap outlasts a query while the database is not slowed.
        self.background_deferring = end_ms <= next_ms
            && self.db.background_gap_ms.0.max(1) >= BACKGROUND_QUERY_MS
            && self.now_ms >= self.db.slow_until_ms
            && self.db.fast_path_open();
        self.background_deferring
    }

    /// Takes the deferred arrivals due by now, before anything reads what
    /// they change or ends the steady state they were deferred in.
    pub(crate) fn background_catch_up(&mut self) {
        if self.background_deferring {
            self.background_deferring = false;
            self.background_steady(self.now_ms);
        }
    }

    /// The fast path's steady state, taken in a tight loop: exactly one
    /// fast-path query is in flight and it has ended by the next arrival. The
    /// general path would then hand its session back to the pool and take
    /// the same session again at once (the pool is a stack), so the only
    /// changes an arrival makes are the in-flight query's end, an insert's
    /// key share's end and the next gap. Takes the arrivals due no later than
    /// `limit_ms` without moving the clock (deferred ones are in the past);
    /// whether it took any.
    fn background_steady(&mut self, limit_ms: u64) -> bool {
        // Between two of the world's own actions no session opens or closes,
        // so the one check holds for the whole stretch.
        let (Some(mut at_ms), Some(mut end_ms)) = (self.next_background, self.one_quick_query_end()) else {
            return false;
        };
        let start_query = self.db.next_query;
        while at_ms <= limit_ms && at_ms < self.horizon_ms && end_ms <= at_ms {
            let gap = self.background_gap_ms();
            let what = self.background_kind();
            end_ms = at_ms + self.db.statement_ms_at(at_ms, BACKGROUND_QUERY_MS);
            if what == BackgroundQuery::ForeignKeyInsert {
                self.db.key_share_until_ms = self.db.key_share_until_ms.max(end_ms);
            }
            self.db.next_query += 1;
            at_ms += gap;
        }
        self.next_background = Some(at_ms);
        self.db.quick_queries[0].0 = end_ms;
        self.db.next_query != start_query
    }

    /// When the one fast-path query in flight ends, if exactly one is and its
    /// session is still open: the steady state's first condition.
    fn one_quick_query_end(&self) -> Option<u64> {
        match self.db.quick_queries.front() {
            Some(&(end_ms, session)) if self.db.quick_queries.len() == 1 && self.db.sessions.contains_key(&session) => {
                Some(end_ms)
            }
            _ => None,
        }
    }

    /// The fast path: with no `FOR UPDATE` in play, an insert's `FOR KEY
    /// SHARE` is granted at once (a read takes none), so the query only needs
    /// a connection; whether it got one.
    fn background_quick(&mut self, what: BackgroundQuery) -> bool {
        let session = match self.db.background_free.pop() {
            Some(session) => session,
            None if self.db.background_open < self.db.background_pool_size
                && self.db.connections() < usize::from(self.db.max_connections) =>
            {
                self.db.background_open += 1;
                self.open_session(DbClient::Background)
            }
            None => return false,
        };
        let end = self.now_ms + self.statement_ms(BACKGROUND_QUERY_MS);
        if what == BackgroundQuery::ForeignKeyInsert {
            self.db.key_share_until_ms = self.db.key_share_until_ms.max(end);
        }
        self.db.quick_queries.push_back((end, session));
        self.db.next_query += 1;
        true
    }

    /// The slow path: the query is tracked until it runs, gives up or is
    /// refused; returns its number.
    pub(crate) fn background_wait(&mut self, what: BackgroundQuery) -> u32 {
        let query = self.db.next_query;
        self.db.next_query += 1;
        let state = BackgroundState::WaitingForConnection;
        let waiting = Waiting {
            what,
            arrived_ms: self.now_ms,
            connected_ms: None,
            behind_lock: false,
            state,
            holds_logged: false,
        };
        self.db.background.insert(query, waiting);
        if self.db.background_timeout_ms > 0 {
            self.schedule(self.now_ms + self.db.background_timeout_ms, Action::BackgroundGiveUp { query });
        }
        if let Some(session) = self.db.background_free.pop() {
            self.background_start(query, session);
        } else if self.db.background_open < self.db.background_pool_size {
            if self.db.connections() >= usize::from(self.db.max_connections) {
                let client = DbClient::Background;
                self.record(EventKind::Connection { session: SessionId(0), client, change: ConnectionChange::Refused });
                self.background_end(query, BackgroundOutcome::Refused);
                return query;
            }
            self.db.background_open += 1;
            let session = self.open_session(DbClient::Background);
            self.background_start(query, session);
        } else {
            // Every connection is taken: if checks waiting for the row hold
            // some of them, the row lock is what this query waits behind.
            let behind_lock = self.db.check_waits_for_row();
            if let Some(state) = self.db.background.get_mut(&query) {
                state.behind_lock = behind_lock;
            }
            self.db.background_queue.push_back(query);
        }
        query
    }

    /// Whether other services' query `query` holds its `FOR KEY SHARE`
    /// (`Some(false)` while it waits, `None` once it has ended).
    pub(crate) fn background_has_key_share(&self, query: u32) -> Option<bool> {
        self.db.background.get(&query).map(|state| matches!(state.state, BackgroundState::Running(_)))
    }

    /// The query has its connection. A read runs; an insert's foreign-key
    /// check takes `FOR KEY SHARE` on the jobs row. A key share that conflicts
    /// with no holder is granted at once, ahead of any `FOR UPDATE` waiting in
    /// the queue: PostgreSQL's heap code only queues a row-lock request that
    /// has to sleep (`heap_lock_tuple`), so a stream of key shares can keep a
    /// `FOR UPDATE` waiting. The conformance suite checks this against a real server.
    fn background_start(&mut self, query: u32, session: SessionId) {
        let now_ms = self.now_ms;
        let Some(state) = self.db.background.get_mut(&query) else {
            return;
        };
        state.connected_ms = Some(now_ms);
        if state.what == BackgroundQuery::Read {
            self.background_run(query, session);
            return;
        }
        if self.db.compatible(RowLockMode::KeyShare, session, now_ms) {
            self.db.holders.push((session, RowLockMode::KeyShare));
            self.background_run(query, session);
            return;
        }
        if let Some(state) = self.db.background.get_mut(&query) {
            state.state = BackgroundState::WaitingForLock(session);
            state.behind_lock = true;
        }
        self.db.queue.push_back(RowWaiter {
            session,
            mode: RowLockMode::KeyShare,
            since_ms: self.now_ms,
            caller: None,
            background: Some(query),
            lock_timer: None,
        });
        let (client, mode, change) = (DbClient::Background, RowLockMode::KeyShare, RowLockChange::Waiting);
        self.record(EventKind::RowLock { session, client, mode, change });
    }

    fn background_run(&mut self, query: u32, session: SessionId) {
        if let Some(state) = self.db.background.get_mut(&query) {
            state.state = BackgroundState::Running(session);
        }
        let at = self.now_ms + self.statement_ms(BACKGROUND_QUERY_MS);
        self.schedule(at, Action::BackgroundDone { query });
    }

    pub(crate) fn background_done(&mut self, query: u32) {
        let Some(state) = self.db.background.get(&query).copied() else {
            return;
        };
        if let BackgroundState::Running(session) = state.state {
            if state.what == BackgroundQuery::ForeignKeyInsert {
                self.db.holders.retain(|(holder, _)| *holder != session);
                if state.holds_logged {
                    let (client, mode, change) = (DbClient::Background, RowLockMode::KeyShare, RowLockChange::Released);
                    self.record(EventKind::RowLock { session, client, mode, change });
                }
            }
            self.background_end(query, BackgroundOutcome::Ok);
            self.background_session_free(session);
            self.grant_waiters();
        }
    }

    pub(crate) fn background_give_up(&mut self, query: u32) {
        let Some(state) = self.db.background.get(&query).copied() else {
            return;
        };
        match state.state {
            BackgroundState::WaitingForConnection => {
                // Queries give up in the order they came (one timeout for all),
                // so the one giving up is at or near the front: it is left
                // where it is and dropped when it reaches the front, instead of
                // searching a queue that heavy traffic makes thousands long.
                self.background_end(query, BackgroundOutcome::Timeout);
                self.drop_given_up_front();
            }
            BackgroundState::WaitingForLock(session) => {
                self.background_end(query, BackgroundOutcome::Timeout);
                self.remove_waiter(session);
                self.background_session_free(session);
            }
            BackgroundState::Running(_) => {}
        }
    }

    fn background_end(&mut self, query: u32, outcome: BackgroundOutcome) {
        let Some(state) = self.db.background.remove(&query) else {
            return;
        };
        let latency_ms = self.now_ms - state.arrived_ms;
        let connection_wait_ms = state.connected_ms.unwrap_or(self.now_ms) - state.arrived_ms;
        let (what, behind_lock) = (state.what, state.behind_lock);
        self.record(EventKind::Background { query, what, latency_ms, connection_wait_ms, behind_lock, outcome });
    }

    /// At the run's end: every query still waiting is logged as such.
    pub(crate) fn background_still_waiting(&mut self) {
        let waiting: Vec<u32> = self
            .db
            .background
            .iter()
            .filter(|(_, state)| !matches!(state.state, BackgroundState::Running(_)))
            .map(|(query, _)| query)
            .collect();
        for query in waiting {
            self.background_end(query, BackgroundOutcome::StillWaiting);
        }
    }

    fn background_session_free(&mut self, session: SessionId) {
        if !self.db.sessions.contains_key(&session) {
            self.db.background_open = self.db.background_open.saturating_sub(1);
            return;
        }
        match self.db.background_queue.pop_front() {
            Some(next) => {
                self.drop_given_up_front();
                self.background_start(next, session);
            }
            None => self.db.background_free.push(session),
        }
    }

    /// Drops the queries at the front of the connection queue that gave up
    /// meanwhile, so that the queue is empty exactly when nobody waits and
    /// its front is always a query still waiting.
    fn drop_given_up_front(&mut self) {
        while let Some(front) = self.db.background_queue.front().copied() {
            let waiting = self
                .db
                .background
                .get(&front)
                .is_some_and(|state| state.state == BackgroundState::WaitingForConnection);
            if waiting {
                break;
            }
            self.db.background_queue.pop_front();
        }
        assert!(
            self.db.background_queue.front().is_none_or(|front| self.db.background.contains_key(front)),
            "a query that gave up heads the connection queue"
        );
    }
}
