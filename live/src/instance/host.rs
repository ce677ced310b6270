//! The instance process's side of the engine's [`Host`]: real time on the
//! scenario's scale, events written to standard output, timers in a sorted
//! table the event loop fires, and requests handed to the connections'
//! threads (`io.rs`). The job loop itself is the engine's
//! ([`locklab_engine::runtime::Runtime`]); nothing here decides what a run does.
//!
//! What the simulator's servers log about a request (the command and its
//! answer, a row lock taken or waited for, the report row applied), a real
//! server does not tell: the host logs it from the client's side when the
//! reply comes, which is why it remembers what it sent ([`Sent`]).
//!
//! Invariants, each backed by an `assert!`: a request id goes on the wire
//! once; every timer is in both of its tables (by deadline and by id) or in
//! neither; a run id is handed out once.

use crate::ScaledClock;
use crate::io::{ConsensusLink, Incoming, RedisLink, ResourceLink, Session};
use locklab_clients::SessionSettings;
use locklab_engine::clock::LocalClock;
use locklab_engine::event::{
    ConnectionChange, DbClient, RedisCommand, RedisReply, RowLockChange, RowLockMode, Sql, SqlError, SqlOutcome,
    TerminateReason,
};
use locklab_engine::ids::{InstanceId, Party, Period, RedisNodeId, ReportOf, RunId, SessionId, Token};
use locklab_engine::runtime::{Host, InstanceTimer};
use locklab_engine::scenario::{Fault, Scenario, StrategySettings, World};
use locklab_engine::strategy::{Reply, Request, TimerId};
use locklab_engine::{Event, EventKind};
use std::collections::BTreeMap;
use std::sync::mpsc::Sender;
use std::time::Duration;

use super::InstancePlan;

/// A statement that took at least this long (scenario ms) waited for a lock:
/// well above a loopback round trip at any time scale the tool is run at.
const LOCK_WAIT_SEEN_MS: u64 = 500;
/// How long a request with no client timeout may wait on its thread: as long
/// as a run lasts (a statement queued behind a row lock waits that long).
const NO_TIMEOUT: Duration = Duration::from_secs(24 * 3_600);
/// How long after a fault that slows or cuts the way to a server its
/// answers are still not timed (scenario ms): a connection the fault broke
/// reconnects within a loopback round trip, well inside a second at any scale.
const AFTER_A_SERVER_FAULT_MS: u64 = 1_000;

/// A request on the wire: what the host logs when its reply comes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sent {
    run: RunId,
    to: Party,
    body: Request,
    /// When it was sent, by the scenario's clock (not the turn's).
    sent_ms: i64,
}

/// One instance process's I/O: its clocks, its log, its timers and its connections.
pub(super) struct LiveHost {
    me: InstanceId,
    world: World,
    pub(super) clock: ScaledClock,
    /// When the event loop's current turn began, on the scenario's clock.
    pub(super) turn_ms: Option<i64>,
    /// What this instance's clock reads: the scenario's time, stepped and skewed by faults.
    local: LocalClock,
    next_run: u32,
    next_request: u32,
    timers: BTreeMap<(i64, u32), InstanceTimer>,
    timer_keys: BTreeMap<u32, (i64, u32)>,
    next_timer: u32,
    sent: BTreeMap<u32, Sent>,
    redis: Vec<RedisLink>,
    consensus: Option<ConsensusLink>,
    storage: ResourceLink,
    slack: ResourceLink,
    /// The PostgreSQL server's URL and the proxy's port.
    postgres: (String, u16),
    replies: Sender<Incoming>,
    sessions: BTreeMap<SessionId, Session>,
    next_session: u32,
    /// What every session sets with its login: its name, its schema, and
    /// the db-lock strategy's server timeouts, scaled.
    session_settings: SessionSettings,
    /// Sessions the server ended between statements, and what their next statement gets.
    ended_sessions: BTreeMap<SessionId, SqlError>,
    /// The sessions holding the jobs row's lock, in the mode they took it.
    row_lock_sessions: Vec<(SessionId, RowLockMode)>,
    /// A request whose timeout is shorter than this (scenario ms) is
    /// reported as a flight: the coordinator's lag is held to the tight
    /// margin only while one is out (`stall::judge`).
    flights_under_ms: u64,
    /// Requests a server answers at once (see [`answers_at_once`]), with the
    /// server: their answers are timed. Kept past a request's timeout, for
    /// the timeout its connection then gives.
    timed: BTreeMap<u32, Party>,
    /// When a fault of the scenario slows or cuts the way to a server
    /// (scenario ms, from and until): an answer then is not timed.
    server_faults: Vec<(u64, u64)>,
    /// A server's answer slower than this is reported (the plan's `lag_report_over_us`).
    lag_report_over: Duration,
}

impl std::fmt::Debug for LiveHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveHost").field("instance", &self.me).field("timers", &self.timers.len()).finish()
    }
}

impl LiveHost {
    pub(super) fn new(
        plan: &InstancePlan,
        scenario: &Scenario,
        settings: &StrategySettings,
        replies: Sender<Incoming>,
    ) -> Self {
        let world = &scenario.world;
        let redis = plan
            .redis
            .iter()
            .map(|node| RedisLink::start(node.url.clone(), node.proxy_port, plan.key_prefix.clone(), replies.clone()))
            .collect();
        LiveHost {
            me: plan.instance,
            world: world.clone(),
            clock: ScaledClock { start_unix_us: plan.clock.0, time_scale: plan.clock.1 },
            turn_ms: None,
            local: LocalClock::default(),
            next_run: plan.first_run,
            next_request: 0,
            timers: BTreeMap::new(),
            timer_keys: BTreeMap::new(),
            next_timer: 0,
            sent: BTreeMap::new(),
            redis,
            consensus: plan.etcd.as_ref().map(|etcd| {
                let lease_base = u32::from(plan.instance.0) * 10_000 + plan.first_run * 100 + 1;
                let lease_key = format!("{}{}", plan.key_prefix, locklab_engine::event::LEASE_KEY);
                ConsensusLink::start(etcd.url_and_port(), lease_key, lease_base, plan.clock.1, replies.clone())
            }),
            storage: ResourceLink::start(plan.storage_port, replies.clone()),
            slack: ResourceLink::start(plan.slack_port, replies.clone()),
            postgres: plan.postgres.url_and_port(),
            replies,
            sessions: BTreeMap::new(),
            next_session: u32::from(plan.instance.0) * 1_000 + plan.first_run * 10,
            session_settings: session_settings(settings, plan.clock.1, plan.postgres_schema.clone()),
            ended_sessions: BTreeMap::new(),
            row_lock_sessions: Vec::new(),
            flights_under_ms: plan.flights_under_ms,
            timed: BTreeMap::new(),
            server_faults: server_faults(scenario),
            lag_report_over: Duration::from_micros(plan.lag_report_over_us),
        }
    }

    /// How long a server took to answer `request`, timed on its
    /// connection's thread: a slow answer (or a timeout) at a moment no
    /// fault slowed or cut the way to it is the machine keeping the server
    /// from running, and is reported as the server's lag.
    pub(super) fn time_answer(&mut self, request: u32, took: Option<Duration>) {
        let (Some(server), Some(took)) = (self.timed.remove(&request), took) else { return };
        if took <= self.lag_report_over {
            return;
        }
        let answered_ms = u64::try_from(self.clock.now_ms()).unwrap_or(0);
        let took_us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        let asked_ms = answered_ms.saturating_sub(took_us.saturating_mul(u64::from(self.clock.time_scale)) / 1_000);
        if self.server_faults.iter().any(|(from, until)| asked_ms <= *until && *from <= answered_ms) {
            return;
        }
        let lag = crate::stall::Lag { from_unix_us: crate::unix_us().saturating_sub(took_us), lag_us: took_us };
        self.tell(&crate::stall::ServerLagLine { server_lag: lag, server });
    }

    /// A clock fault: the clock changes now, and says what it reads.
    pub(super) fn change_clock(&mut self, change: impl FnOnce(&mut LocalClock, u64)) {
        let now = self.true_ms();
        change(&mut self.local, now);
        let (local_ms, drift_ppm) = (self.local_ms(), self.local.drift_ppm());
        self.record(EventKind::Clock { party: Party::Instance(self.me), local_ms, drift_ppm });
    }

    /// Records an event at a time already past (the coordinator sorts by time).
    fn record_at(&mut self, at_ms: u64, kind: EventKind) {
        self.tell(&Event { at_ms, kind });
    }

    /// Writes a line for the coordinator on the output.
    fn tell(&self, line: &impl serde::Serialize) {
        super::tell(line);
    }

    // ----- timers -----

    /// When the next timer is due, by the instance's clock.
    pub(super) fn next_deadline_ms(&self) -> Option<i64> {
        self.timers.keys().next().map(|(deadline, _)| *deadline)
    }

    /// Takes the earliest timer that is due now, if one is. A request's
    /// timeout also ends what the host remembers of the request: a reply
    /// that comes after it is no one's.
    pub(super) fn take_due(&mut self) -> Option<InstanceTimer> {
        let (&key, &timer) = self.timers.iter().next()?;
        if key.0 > self.local_ms() {
            return None;
        }
        self.timers.remove(&key);
        assert!(self.timer_keys.remove(&key.1).is_some(), "timer {} was due but had no key", key.1);
        if let InstanceTimer::RequestTimeout { request } = timer {
            self.sent.remove(&request);
        }
        Some(timer)
    }

    // ----- replies -----

    /// What was sent as request `request`, if its reply is still awaited.
    pub(super) fn take_sent(&mut self, request: u32) -> Option<Sent> {
        self.sent.remove(&request)
    }

    /// A session the pool asked for opened (or could not): kept, and told to
    /// the runtime as the server's answer to its `Connect`.
    pub(super) fn opened(&mut self, session: Result<Session, SqlError>) -> Reply {
        match session {
            Ok(session) => {
                let id = session.id;
                self.sessions.insert(id, session);
                Reply::Sql(SqlOutcome::Connected(id))
            }
            Err(error) => Reply::Sql(SqlOutcome::Error(error)),
        }
    }

    /// The server ended `session` on its own: recorded now, with the row lock it held.
    pub(super) fn session_ended(&mut self, session: SessionId, error: SqlError) {
        self.sessions.remove(&session);
        self.ended_sessions.insert(session, error);
        let client = DbClient::Instance(self.me);
        if error == SqlError::IdleInTransactionTimeout {
            let change = ConnectionChange::Terminated(TerminateReason::IdleInTransactionTimeout);
            self.record(EventKind::Connection { session, client, change });
        }
        self.release_row_lock(session);
    }

    /// The session's transaction ended: the row lock it held (in its mode) goes.
    fn release_row_lock(&mut self, session: SessionId) {
        let Some(position) = self.row_lock_sessions.iter().position(|(held, _)| *held == session) else { return };
        let (_, mode) = self.row_lock_sessions.remove(position);
        let client = DbClient::Instance(self.me);
        self.record(EventKind::RowLock { session, client, mode, change: RowLockChange::Released });
    }

    /// The events a reply makes: the command and its answer, as the server
    /// gave it, and a report row that took effect.
    pub(super) fn log_reply(&mut self, sent: &Sent, reply: Reply) {
        let run = sent.run;
        match (sent.body, reply) {
            (Request::Redis(command), Reply::Redis(reply)) => {
                self.record(EventKind::Redis { node: sent.to, client: self.me, run, command, reply });
            }
            (Request::Sql { session, sql }, Reply::Sql(outcome)) => self.log_statement(sent, session, sql, outcome),
            (Request::Consensus(op), Reply::Consensus(reply)) => {
                self.record(EventKind::Consensus { client: self.me, run, op, reply });
            }
            (
                Request::Redis(_)
                | Request::Sql { .. }
                | Request::Put { .. }
                | Request::Post { .. }
                | Request::Consensus(_),
                Reply::Redis(_)
                | Reply::Sql(_)
                | Reply::Put(_)
                | Reply::Posted
                | Reply::Consensus(_)
                | Reply::Checkout(_)
                | Reply::Timeout,
            ) => {}
        }
    }

    /// A statement's events: the row lock it took or gave up waiting for
    /// (a statement that took longer than a round trip waited for it), the
    /// statement with its outcome, the report row it applied, and the row
    /// lock its transaction's end let go.
    fn log_statement(&mut self, sent: &Sent, session: SessionId, sql: Sql, outcome: SqlOutcome) {
        let (client, run) = (DbClient::Instance(self.me), sent.run);
        let took_ms = u64::try_from(self.clock.now_ms() - sent.sent_ms).unwrap_or(0);
        let waited_ms = if took_ms >= LOCK_WAIT_SEEN_MS { took_ms } else { 0 };
        match sql {
            Sql::Connect => return,
            Sql::LockJobRow { strength, .. } => {
                let mode = RowLockMode::of(strength);
                let row_lock = |change| EventKind::RowLock { session, client, mode, change };
                let change = match outcome {
                    SqlOutcome::Rows(1..) => Some(RowLockChange::Granted),
                    SqlOutcome::Error(SqlError::LockTimeout | SqlError::Timeout) => Some(RowLockChange::GaveUp),
                    SqlOutcome::Rows(0)
                    | SqlOutcome::Connected(_)
                    | SqlOutcome::StaleToken { .. }
                    | SqlOutcome::Error(_) => None,
                };
                if waited_ms > 0 && change.is_some() {
                    let at_ms = u64::try_from(sent.sent_ms).unwrap_or(0);
                    self.record_at(at_ms, row_lock(RowLockChange::Waiting));
                }
                if let Some(change) = change {
                    self.record(row_lock(change));
                }
                if change == Some(RowLockChange::Granted) {
                    self.row_lock_sessions.push((session, mode));
                }
            }
            Sql::Commit | Sql::Rollback | Sql::ReportExists { .. } | Sql::WriteReport { .. } => {}
        }
        self.record(EventKind::Sql { session, client, run: Some(run), statement: sql, outcome, waited_ms });
        if let (Sql::WriteReport { period, report, token, .. }, SqlOutcome::Rows(1..)) = (sql, outcome) {
            self.record(EventKind::RowApplied { period, report, run, token });
        }
        let ended = matches!(sql, Sql::Commit | Sql::Rollback)
            || matches!(outcome, SqlOutcome::Error(SqlError::ConnectionClosed | SqlError::IdleInTransactionTimeout));
        if ended {
            self.release_row_lock(session);
        }
    }

    // ----- the wire -----

    /// Answers request `request` at once, from this side: what a client
    /// library says of a server it has no connection to.
    fn answer_here(&self, request: u32, reply: Reply) {
        let _ = self.replies.send(Incoming::Reply { request, reply, took: None });
    }

    /// Hands a statement to its session's thread; a session the server ended
    /// answers with the error its end left (as the server's next reply would).
    fn dispatch_sql(&mut self, request: u32, session: SessionId, sql: Sql, limit: Duration) {
        if sql == Sql::Connect {
            self.next_session += 1;
            let (server, settings) = (self.postgres.clone(), self.session_settings.clone());
            Session::open(request, SessionId(self.next_session), server, settings, self.replies.clone());
            return;
        }
        let error = match (self.ended_sessions.get(&session), self.sessions.get(&session)) {
            (Some(error), _) => *error,
            (None, Some(open)) => return open.send(request, sql, limit),
            (None, None) => SqlError::ConnectionClosed,
        };
        self.answer_here(request, Reply::Sql(SqlOutcome::Error(error)));
    }
}

impl Host for LiveHost {
    fn world(&self) -> &World {
        &self.world
    }
    /// The scenario's time now: within a turn of the event loop, the
    /// turn's start, so that what one turn does happens at one instant, as
    /// in the simulator (a paused holder's overdue upload and the lease
    /// check that ends its belief are one instant, not a few ms apart).
    fn true_ms(&self) -> u64 {
        u64::try_from(self.turn_ms.unwrap_or_else(|| self.clock.now_ms())).unwrap_or(0)
    }
    fn local_ms(&self) -> i64 {
        self.local.local_at(self.true_ms())
    }
    fn record(&mut self, kind: EventKind) {
        let at_ms = self.true_ms();
        self.record_at(at_ms, kind);
    }
    fn set_timer_at(&mut self, deadline_local_ms: i64, timer: InstanceTimer) -> TimerId {
        let id = self.next_timer;
        self.next_timer += 1;
        let fresh = self.timers.insert((deadline_local_ms, id), timer).is_none()
            && self.timer_keys.insert(id, (deadline_local_ms, id)).is_none();
        assert!(fresh, "timer {id} was set twice");
        TimerId(id)
    }
    fn cancel_timer(&mut self, id: TimerId) {
        if let Some(key) = self.timer_keys.remove(&id.0) {
            self.timers.remove(&key);
        }
    }
    fn timer_is_set(&self, id: TimerId) -> bool {
        self.timer_keys.contains_key(&id.0)
    }
    fn next_run_id(&mut self) -> RunId {
        let run = RunId(self.next_run);
        self.next_run = self.next_run.checked_add(1).expect("run ids never wrap");
        run
    }
    fn next_request_id(&mut self) -> u32 {
        let request = self.next_request;
        self.next_request += 1;
        request
    }
    fn transmit(&mut self, request: u32, run: RunId, to: Party, body: Request, timeout_ms: Option<u64>) {
        let sent = Sent { run, to, body, sent_ms: self.clock.now_ms() };
        assert!(self.sent.insert(request, sent).is_none(), "request {request} went on the wire twice");
        if answers_at_once(&body) {
            self.timed.insert(request, to);
        }
        let limit = timeout_ms.map_or(NO_TIMEOUT, |timeout_ms| self.clock.real(timeout_ms));
        if timeout_ms.is_some_and(|timeout_ms| timeout_ms < self.flights_under_ms) {
            // From now until the timeout, a lag of the network's (the
            // coordinator's) can turn this request's reply into a timeout.
            let from_unix_us = crate::unix_us();
            let until_unix_us = from_unix_us.saturating_add(u64::try_from(limit.as_micros()).unwrap_or(u64::MAX));
            self.tell(&crate::stall::FlightLine { flight: (from_unix_us, until_unix_us) });
        }
        match (to, body) {
            (Party::Redis(node), Request::Redis(command)) => match self.redis.get(usize::from(node.0)) {
                Some(link) => link.send(request, scaled(command, self.clock.time_scale), limit),
                None => self.answer_here(request, Reply::Redis(RedisReply::ConnectionRefused)),
            },
            (_, Request::Sql { session, sql }) => self.dispatch_sql(request, session, sql, limit),
            (_, Request::Put { period, report, chunk, own_object, token }) => {
                let line = put_line(self.me, run, period, report, chunk, own_object, token);
                self.storage.send(request, line, limit);
            }
            (_, Request::Post { period }) => {
                self.slack.send(request, format!("POST {} {} {}", self.me, run.0, period.0), limit);
            }
            (_, Request::Consensus(op)) => match self.consensus.as_ref() {
                Some(link) => link.send(request, op, limit),
                // Not played live without etcd: the coordinator refuses such runs before they start.
                None => self.answer_here(request, Reply::timeout_for(&body)),
            },
            (
                Party::Instance(_) | Party::RedisReplica | Party::Db | Party::Storage | Party::Slack | Party::Consensus,
                Request::Redis(_),
            ) => self.answer_here(request, Reply::timeout_for(&body)),
        }
    }
    fn redis_primary(&self) -> Party {
        Party::Redis(RedisNodeId(0))
    }
    fn drop_session(&mut self, session: SessionId) {
        // Dropping the session ends its thread, which closes the connection.
        self.sessions.remove(&session);
    }
}

/// Whether a server answers `body` at once, whatever other clients do:
/// every Redis command (none blocks), etcd's calls, and the SQL that waits
/// for no lock. A statement that takes the jobs row, or writes the report
/// row (which waits for another transaction's insert of the same key),
/// may wait as long as a job. Storage and Slack, which the coordinator
/// plays, answer every line at once.
fn answers_at_once(body: &Request) -> bool {
    match body {
        Request::Redis(_) | Request::Consensus(_) => true,
        Request::Sql { sql, .. } => match sql {
            Sql::ReportExists { .. } | Sql::Commit | Sql::Rollback => true,
            Sql::Connect | Sql::LockJobRow { .. } | Sql::WriteReport { .. } => false,
        },
        // Storage and Slack are the coordinator's, which answers a line at once.
        Request::Put { .. } | Request::Post { .. } => true,
    }
}

/// When a fault of the scenario slows or cuts the way to a server, from its
/// strike until it has lasted, and [`AFTER_A_SERVER_FAULT_MS`] more.
fn server_faults(scenario: &Scenario) -> Vec<(u64, u64)> {
    let slows_a_server = |fault: &Fault| match fault {
        Fault::NetworkDelay { .. }
        | Fault::Partition { .. }
        | Fault::DbSlow { .. }
        | Fault::RedisRestart { .. }
        | Fault::RedisFailover { .. }
        | Fault::ConsensusLeaderLoss { .. }
        | Fault::HostLoss { .. } => true,
        Fault::OomKill { .. } | Fault::GcPause { .. } | Fault::ClockJump { .. } | Fault::ClockDrift { .. } => false,
    };
    let lasts = |fault: &Fault| fault.lasts_ms(&scenario.world).unwrap_or(u64::MAX / 2);
    scenario
        .faults
        .iter()
        .filter(|fault| slows_a_server(fault))
        .map(|fault| {
            (fault.at_ms(), fault.at_ms().saturating_add(lasts(fault)).saturating_add(AFTER_A_SERVER_FAULT_MS))
        })
        .collect()
}

/// A chunk's PUT as the storage line protocol carries it.
fn put_line(
    me: InstanceId,
    run: RunId,
    period: Period,
    report: ReportOf,
    chunk: u8,
    own_object: bool,
    token: Option<Token>,
) -> String {
    let report = serde_json::to_string(&report).unwrap_or_default();
    let token = token.map_or_else(|| "-".to_owned(), |token| token.0.to_string());
    format!("PUT {me} {} {} {report} {chunk} {own_object} {token}", run.0, period.0)
}

/// The command with its TTL on the wall clock's scale: what the real server
/// must count down. `EX` in whole seconds becomes `PX` when the scaled TTL is
/// not a whole second.
fn scaled(command: RedisCommand, time_scale: u32) -> RedisCommand {
    let scale = u64::from(time_scale.max(1));
    let ms = |ttl_ms: u64| (ttl_ms / scale).max(1);
    match command {
        RedisCommand::SetNxEx { value, ttl_s } => RedisCommand::SetNxPx { value, ttl_ms: ms(ttl_s * 1_000) },
        RedisCommand::SetNxPx { value, ttl_ms } => RedisCommand::SetNxPx { value, ttl_ms: ms(ttl_ms) },
        RedisCommand::SetNxPxIncr { value, ttl_ms } => RedisCommand::SetNxPxIncr { value, ttl_ms: ms(ttl_ms) },
        RedisCommand::Pexpire { ttl_ms } => RedisCommand::Pexpire { ttl_ms: ms(ttl_ms) },
        RedisCommand::SetPx { value, ttl_ms } => RedisCommand::SetPx { value, ttl_ms: ms(ttl_ms) },
        // EXPIRE counts whole seconds: a scaled TTL that is not one becomes PEXPIRE.
        RedisCommand::Expire { ttl_s } => RedisCommand::Pexpire { ttl_ms: ms(ttl_s * 1_000) },
        RedisCommand::CompareAndExtend { value, ttl_ms } => {
            RedisCommand::CompareAndExtend { value, ttl_ms: ms(ttl_ms) }
        }
        RedisCommand::Get
        | RedisCommand::Del
        | RedisCommand::Incr
        | RedisCommand::SetNx { .. }
        | RedisCommand::CompareAndDelete { .. } => command,
    }
}

/// What every session of the instance sets with its login: live mode's
/// application name (the coordinator counts its sessions by it), the run's
/// schema on a server of the user's, and the db-lock strategy's
/// `lock_timeout` and `idle_in_transaction_session_timeout` on the wall
/// clock's scale (as the simulator applies them to instances' sessions).
fn session_settings(settings: &StrategySettings, time_scale: u32, schema: Option<String>) -> SessionSettings {
    let scaled = |ms: u64| Duration::from_millis((ms / u64::from(time_scale.max(1))).max(1));
    let mut session = SessionSettings {
        application_name: Some(crate::servers::APPLICATION_NAME.to_owned()),
        search_path: schema,
        ..SessionSettings::default()
    };
    if let StrategySettings::DbLock(db_lock) = settings {
        session.lock_timeout = (db_lock.lock_timeout_ms > 0).then(|| scaled(db_lock.lock_timeout_ms));
        session.idle_in_transaction_session_timeout =
            (db_lock.idle_in_transaction_timeout_ms > 0).then(|| scaled(db_lock.idle_in_transaction_timeout_ms));
    }
    session
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin(name: &str) -> Scenario {
        Scenario::from_json(locklab_engine::builtin::find(name).expect("a built-in").text).expect("valid")
    }

    #[test]
    fn answers_are_timed_outside_the_faults_that_slow_or_cut_the_way_to_a_server() {
        // A failover at 0.5 s, lasting the world's failover time; the gc_pause that follows slows no server.
        let failover = builtin("redis-failover");
        let failover_ms = failover.world.failover_ms;
        assert_eq!(server_faults(&failover), vec![(500, 500 + failover_ms + AFTER_A_SERVER_FAULT_MS)]);
        // Partitions from time 0 for two minutes: no answer is timed in them.
        let partitions = builtin("redlock-clock-jump");
        assert!(!server_faults(&partitions).is_empty());
        assert!(server_faults(&partitions).iter().all(|(from, until)| *from == 0 && *until == 121_000));
        assert_eq!(server_faults(&builtin("pause-after-check")), vec![]);
    }

    #[test]
    fn what_a_server_answers_at_once_is_timed_and_what_may_wait_for_a_lock_is_not() {
        let session = SessionId(1);
        let sql = |sql| Request::Sql { session, sql };
        assert!(answers_at_once(&Request::Redis(RedisCommand::Get)));
        assert!(answers_at_once(&sql(Sql::Commit)));
        assert!(answers_at_once(&sql(Sql::ReportExists { period: Period(0), report: ReportOf::Period(Period(0)) })));
        let lock = Sql::LockJobRow {
            strength: locklab_engine::scenario::LockStrength::ForUpdate,
            wait: locklab_engine::scenario::DbWait::Block,
        };
        assert!(!answers_at_once(&sql(lock)));
        assert!(!answers_at_once(&sql(Sql::Connect)));
        assert!(answers_at_once(&Request::Post { period: Period(0) }));
    }
}
