//! The instance's client-side connection pool (HikariCP-like): connections
//! open lazily up to its size, and requests wait in order for a free one.

use super::{Drives, Host, PooledQuery, Purpose, Runtime, SQL_TIMEOUT_MS};
use crate::event::{Sql, SqlError, SqlOutcome};
use crate::ids::{Party, RunId, SessionId};
use crate::vocab::{Notice, Reply, Request, Tag};
use std::collections::VecDeque;

/// What a pool waiter wants: a statement to run, or a connection to hold.
#[derive(Clone, Copy, Debug)]
pub(crate) enum PoolJob {
    Query { sql: Sql, query: PooledQuery },
    Hold { tag: Tag },
}

#[derive(Clone, Copy, Debug)]
struct PoolConnection {
    session: SessionId,
    busy: bool,
}

/// The pool's connections, those being opened, and who waits for one.
#[derive(Clone, Debug)]
pub(crate) struct Pool {
    size: u8,
    connections: Vec<PoolConnection>,
    connecting: u8,
    waiters: VecDeque<(RunId, PoolJob)>,
    /// Busy, open and waiting, as last logged.
    last_logged: (u8, u8, u16),
}

impl Pool {
    pub(crate) fn new(size: u8) -> Pool {
        // Sized up front: every instance opens connections and queues for them in every run.
        Pool {
            size,
            connections: Vec::with_capacity(usize::from(size)),
            connecting: 0,
            waiters: VecDeque::with_capacity(4),
            last_logged: (0, 0, 0),
        }
    }

    pub(crate) fn size(&self) -> u8 {
        self.size
    }

    pub(crate) fn sessions(&self) -> Vec<SessionId> {
        self.connections.iter().map(|connection| connection.session).collect()
    }

    /// Busy, open and waiting now, if that differs from what was last logged.
    pub(crate) fn changed(&mut self) -> Option<(u8, u8, u16)> {
        let busy =
            u8::try_from(self.connections.iter().filter(|connection| connection.busy).count()).unwrap_or(u8::MAX);
        let open = u8::try_from(self.connections.len()).unwrap_or(u8::MAX);
        let waiting = u16::try_from(self.waiters.len()).unwrap_or(u16::MAX);
        let now = (busy, open, waiting);
        (self.last_logged != now).then(|| {
            self.last_logged = now;
            now
        })
    }

    /// Connections open or being opened.
    fn held(&self) -> usize {
        self.connections.len() + usize::from(self.connecting)
    }
}

impl Runtime {
    pub(crate) fn pool_request<H: Host>(&mut self, host: &mut H, run: RunId, job: PoolJob) {
        self.pool.waiters.push_back((run, job));
        self.pool_pump(host);
    }

    pub(crate) fn pool_checkin<H: Host>(&mut self, host: &mut H, session: SessionId, broken: bool) {
        let pool = &mut self.pool;
        if let Some(position) = pool.connections.iter().position(|connection| connection.session == session) {
            if broken {
                pool.connections.remove(position);
                host.drop_session(session);
            } else {
                pool.connections[position].busy = false;
            }
        }
        self.pool_pump(host);
    }

    /// Hands free connections to waiters in order, then opens as many new
    /// ones as waiters still want and the pool's size allows.
    fn pool_pump<H: Host>(&mut self, host: &mut H) {
        loop {
            // Waiters first: a check-in with nobody waiting (the common case)
            // then skips the search for a free connection.
            let pool = &mut self.pool;
            if pool.waiters.is_empty() {
                break;
            }
            let Some(free) = pool.connections.iter().position(|connection| !connection.busy) else {
                break;
            };
            let Some((run, job)) = pool.waiters.pop_front() else {
                break;
            };
            pool.connections[free].busy = true;
            let session = pool.connections[free].session;
            match job {
                PoolJob::Query { sql, query } => {
                    let body = Request::Sql { session, sql };
                    let purpose = Purpose::Pooled { session, query };
                    self.send_request(host, run, Party::Db, body, purpose, Some(SQL_TIMEOUT_MS));
                }
                PoolJob::Hold { tag } => {
                    self.notices.push_back(Notice::Checkout { run, tag, result: Ok(session) });
                }
            }
        }
        assert!(
            self.pool.held() <= usize::from(self.pool.size),
            "{}'s pool holds more connections than its size",
            self.me
        );
        let room = usize::from(self.pool.size).saturating_sub(self.pool.held());
        let wanted = self.pool.waiters.len().saturating_sub(usize::from(self.pool.connecting));
        for _ in 0..room.min(wanted) {
            let run = self.pool.waiters.front().map_or(RunId(0), |(run, _)| *run);
            self.pool_connect(host, run);
        }
        self.log_pool(host);
    }

    /// Opens one connection for the pool, on behalf of `run`'s request.
    fn pool_connect<H: Host>(&mut self, host: &mut H, run: RunId) {
        self.pool.connecting += 1;
        let body = Request::Sql { session: SessionId(0), sql: Sql::Connect };
        self.send_request(host, run, Party::Db, body, Purpose::PoolConnect, Some(SQL_TIMEOUT_MS));
    }

    /// Opens the pool's first connection ahead of any request.
    pub(crate) fn pool_warm_up<H: Host>(&mut self, host: &mut H) {
        if self.pool.size > 0 && self.pool.held() == 0 {
            self.pool_connect(host, RunId(0));
        }
    }

    pub(crate) fn pool_connected<H: Host, S: Drives<H> + ?Sized>(
        &mut self,
        host: &mut H,
        strategy: &mut S,
        body: Reply,
    ) {
        let pool = &mut self.pool;
        pool.connecting = pool.connecting.saturating_sub(1);
        if let Reply::Sql(SqlOutcome::Connected(session)) = body {
            pool.connections.push(PoolConnection { session, busy: false });
        } else if let Some((run, job)) = pool.waiters.pop_front() {
            // No connection could be had: the request that asked for it fails, as the server said.
            let error = match body {
                Reply::Sql(SqlOutcome::Error(error)) => error,
                Reply::Redis(_)
                | Reply::Sql(_)
                | Reply::Put(_)
                | Reply::Posted
                | Reply::Consensus(_)
                | Reply::Checkout(_)
                | Reply::Timeout => SqlError::TooManyClients,
            };
            let failure = Reply::Sql(SqlOutcome::Error(error));
            match job {
                PoolJob::Query { query: PooledQuery::Exists { after_acquire }, .. } => {
                    self.report_checked(host, strategy, run, after_acquire, failure);
                }
                PoolJob::Query { query: PooledQuery::Row, .. } => self.row_written(host, strategy, run, failure),
                PoolJob::Hold { tag } => {
                    self.notices.push_back(Notice::Checkout { run, tag, result: Err(error) });
                }
            }
        }
        self.pool_pump(host);
    }
}
