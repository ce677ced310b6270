//! The PostgreSQL checks: short scripted exchanges, each run against the
//! engine's database model ([`DbProbe`]) and against a throwaway PostgreSQL
//! cluster, and compared as transcripts: who sent what, who was answered
//! what, and who was left waiting, in order. Where timing is the point (a
//! timeout, a killed client), the time to the answer is compared too, within
//! [`TIMING_TOLERANCE_MS`].
//!
//! Both sides are driven step by step. After each step the engine's world
//! runs on for [`SETTLE_MS`] of simulated time; the server is polled until
//! every client still owed an answer has it or is waiting on a lock that
//! somebody holds (`pg_stat_activity`, `pg_blocking_pids`), so "waits" means
//! the same on both sides and no step races the next.

use crate::pg::{PgConnection, PgReply, ProcessClient};
use crate::server::PgServer;
use crate::{Outcome, Row};
use locklab_engine::event::{RowWrite, Sql, SqlOutcome};
use locklab_engine::ids::{Period, ReportOf, Token};
use locklab_engine::scenario::{DbLockSettings, DbWait, LockStrength};
use locklab_engine::{DbAnswer, DbProbe};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// The cluster's `max_connections`, and the engine's `db_max_connections`.
const MAX_CONNECTIONS: u16 = 6;

/// How far a timed answer on the server may be from the engine's.
pub const TIMING_TOLERANCE_MS: u64 = 100;

/// How long the engine's world runs on after a step: longer than a
/// statement, its round trip and one of other services' queries (20 ms);
/// shorter than any timeout a check sets.
const SETTLE_MS: u64 = 40;

/// How long the server may take to settle after a step, or to answer a `Wait`.
const SERVER_LIMIT: Duration = Duration::from_secs(10);

/// The cluster's settings: see the generated document for why each.
pub fn server_settings() -> Vec<String> {
    vec![format!("max_connections={MAX_CONNECTIONS}"), "superuser_reserved_connections=0".to_owned()]
}

use crate::pg::SCHEMA;

/// Who acts in an exchange.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Who {
    /// An instance, `1..`: a, b, c …
    Client(u8),
    /// One of other services' queries, `1..`: k1, k2 …
    Other(u8),
}

impl Who {
    fn name(self) -> String {
        match self {
            Who::Client(client) => char::from(b'a' + client - 1).to_string(),
            Who::Other(query) => format!("k{query}"),
        }
    }
}

#[derive(Clone, Copy)]
enum Step {
    /// The client opens its session.
    Connect(u8),
    /// The client sends one of the lab's statements.
    Send(u8, Sql),
    /// The client sends a statement the lab's instances never send: only the server runs it.
    ServerOnly(u8, &'static str),
    /// One of other services' queries inserts into job_events; a held one
    /// keeps its transaction (and its key share) open until `OtherEnds`.
    Other {
        query: u8,
        held: bool,
    },
    OtherEnds(u8),
    /// One of other services' queries is a plain read, with no row lock.
    Read(u8),
    /// The client's process is killed (SIGKILL), stopped (SIGSTOP), resumed (SIGCONT).
    Kill(u8),
    Stop(u8),
    Continue(u8),
    /// Time passes until the client is answered; the time from the step
    /// before to the answer is compared.
    Wait(u8),
}

struct Exchange {
    name: &'static str,
    relies: &'static str,
    /// Instances `1..=clients`; they connect before the steps unless the steps do.
    clients: u8,
    connect_first: bool,
    /// The client that is its own process (it can be killed or stopped).
    process: Option<u8>,
    settings: DbLockSettings,
    steps: Vec<Step>,
    /// A difference the lab keeps on purpose, and why.
    expected: Option<&'static str>,
}

/// The statement as the server is sent it: the lab's own text, with the
/// column list it elides written out.
fn server_sql(sql: Sql) -> String {
    sql.to_string().replace('…', "name")
}

/// Other services' plain read: no row lock.
const READ_SQL: &str = "SELECT count(*) FROM job_events";

/// What another service's query is answered with once it runs: a read has
/// run; an insert's foreign-key check has its key share.
fn other_answer(exchange: &Exchange, query: u8) -> &'static str {
    if exchange.steps.iter().any(|step| matches!(step, Step::Read(read) if *read == query)) {
        "ran"
    } else {
        "has its key share"
    }
}

fn other_sql(held: bool) -> &'static str {
    if held {
        "BEGIN; INSERT INTO job_events (job) VALUES ('daily-report')"
    } else {
        "INSERT INTO job_events (job) VALUES ('daily-report')"
    }
}

/// The lab's text for an engine answer to `sql`.
fn engine_text(sql: Option<Sql>, outcome: SqlOutcome) -> String {
    match outcome {
        SqlOutcome::Connected(_) => "connected".to_owned(),
        SqlOutcome::Rows(_) if matches!(sql, Some(Sql::Commit | Sql::Rollback)) => "ok".to_owned(),
        SqlOutcome::Rows(rows) => format!("{rows} row{}", if rows == 1 { "" } else { "s" }),
        // The fenced upsert's WHERE leaves the row alone: the server says 0 rows.
        SqlOutcome::StaleToken { .. } => "0 rows".to_owned(),
        SqlOutcome::Error(error) => match error.sqlstate() {
            Some(code) => format!("{code} {error}"),
            None => "connection closed".to_owned(),
        },
    }
}

fn exchanges() -> Vec<Exchange> {
    use Step::{Connect, Continue, Kill, Other, OtherEnds, Send, ServerOnly, Stop, Wait};
    let lock = |client| Send(client, Sql::LockJobRow { strength: LockStrength::ForUpdate, wait: DbWait::Block });
    let commit = |client| Send(client, Sql::Commit);
    let write = |client: u8, token: Option<u64>, how| {
        Send(
            client,
            Sql::WriteReport {
                period: Period(1),
                report: ReportOf::Day(0),
                run: locklab_engine::ids::RunId(u32::from(client)),
                token: token.map(Token),
                how,
            },
        )
    };
    let exchange = |name, relies, clients, steps| Exchange {
        name,
        relies,
        clients,
        connect_first: true,
        process: None,
        settings: DbLockSettings::default(),
        steps,
        expected: None,
    };
    vec![
        Exchange {
            connect_first: false,
            ..exchange(
                "max_connections refuses the next session (53300)",
                "C's starved pool: with every slot taken, the next connection is refused with the message the lab prints (the suite's own monitoring session holds one of the six slots, in the engine as on the server)",
                6,
                (1..=6).map(Connect).collect(),
            )
        },
        exchange(
            "FOR UPDATE waiters get the row first come, first served",
            "db-lock's queue: three sessions wait for the jobs row and get it in the order they asked",
            4,
            vec![lock(1), lock(2), lock(3), lock(4), commit(1), commit(2), commit(3), commit(4)],
        ),
        exchange(
            "FOR UPDATE NOWAIT fails at once (55P03)",
            "db-lock with \"wait\": \"nowait\": a second instance gets the error, with the lab's text",
            2,
            vec![
                lock(1),
                Send(2, Sql::LockJobRow { strength: LockStrength::ForUpdate, wait: DbWait::Nowait }),
                Send(2, Sql::Rollback),
                commit(1),
            ],
        ),
        exchange(
            "FOR UPDATE SKIP LOCKED returns no row",
            "db-lock with \"wait\": \"skip_locked\": a second instance gets zero rows and knows it lost",
            2,
            vec![
                lock(1),
                Send(2, Sql::LockJobRow { strength: LockStrength::ForUpdate, wait: DbWait::SkipLocked }),
                Send(2, Sql::Rollback),
                commit(1),
            ],
        ),
        Exchange {
            settings: DbLockSettings { lock_timeout_ms: 300, ..DbLockSettings::default() },
            ..exchange(
                "lock_timeout cancels a waiting FOR UPDATE (55P03)",
                "db-lock's lock_timeout_ms: the waiter gives up after the timeout with the lab's text, and its transaction is left to roll back",
                2,
                vec![lock(1), lock(2), Wait(2), Send(2, Sql::Rollback), commit(1)],
            )
        },
        Exchange {
            settings: DbLockSettings { idle_in_transaction_timeout_ms: 500, ..DbLockSettings::default() },
            ..exchange(
                "idle_in_transaction_session_timeout ends the holder's session (25P03)",
                "db-lock's idle_in_transaction_timeout_ms: a holder that sends nothing loses its session and its lock, the next waiter gets the row, and the holder learns it on its next statement",
                2,
                vec![lock(1), lock(2), Wait(2), commit(1), commit(2)],
            )
        },
        exchange(
            "A foreign-key check waits for a held FOR UPDATE",
            "C's other services: an insert whose foreign key points at the locked jobs row waits for FOR KEY SHARE until the holder commits",
            1,
            vec![lock(1), Other { query: 1, held: false }, commit(1)],
        ),
        exchange(
            "A foreign-key check does not wait for a held FOR NO KEY UPDATE",
            "db-lock's \"lock_strength\": \"for_no_key_update\" (quiz 8's fix): the job's lock keeps other jobs out, but the foreign-key check's FOR KEY SHARE does not conflict with it, so other services' inserts go through while a job holds the row",
            2,
            vec![
                Send(1, Sql::LockJobRow { strength: LockStrength::ForNoKeyUpdate, wait: DbWait::Block }),
                Other { query: 1, held: false },
                Send(2, Sql::LockJobRow { strength: LockStrength::ForNoKeyUpdate, wait: DbWait::Block }),
                commit(1),
                commit(2),
            ],
        ),
        exchange(
            "A plain read does not wait for a held FOR UPDATE",
            "C's other services' reads: a SELECT takes no row lock, so it runs while a job holds the row; what makes reads wait behind C is their pool, filled by inserts that wait",
            1,
            vec![lock(1), Step::Read(1), commit(1)],
        ),
        exchange(
            "A foreign-key check passes a FOR UPDATE that only waits",
            "C's other services while an instance waits for the row: FOR KEY SHARE does not conflict with the key shares held, so it is granted without joining the queue, ahead of the waiting FOR UPDATE",
            1,
            vec![Other { query: 1, held: true }, lock(1), Other { query: 2, held: false }, OtherEnds(1), commit(1)],
        ),
        exchange(
            "A waiting FOR UPDATE gets the row before a foreign-key check that came after it",
            "C's other services behind an instance that waits for the row: a holds FOR UPDATE, b waits for it, then another service's insert needs FOR KEY SHARE on the same row; when a commits b gets the row first, and the key share, which conflicts with b's FOR UPDATE, is answered only when b commits (PostgreSQL's `README.tuplock`: a waiter takes the tuple's heavyweight lock, `LockTuple`, before it waits for the holder's transaction, so waiters are served in the lock manager's queue order, not all at once)",
            2,
            vec![lock(1), lock(2), Other { query: 1, held: false }, commit(1), commit(2)],
        ),
        Exchange {
            process: Some(1),
            ..exchange(
                "A killed client's lock goes at once",
                "oom_kill under db-lock: the kernel closes the dead process's socket, the server rolls its transaction back and the next waiter gets the row, with no timeout",
                2,
                vec![lock(1), lock(2), Kill(1), Wait(2), commit(2)],
            )
        },
        Exchange {
            process: Some(1),
            ..exchange(
                "A stopped client keeps its lock",
                "gc_pause under db-lock: nothing tells the server that a process is stopped, so its lock is held until it runs again and commits",
                2,
                vec![lock(1), lock(2), Stop(1), Continue(1), commit(1), commit(2)],
            )
        },
        exchange(
            "ON CONFLICT DO NOTHING: zero rows means another run wrote first",
            "unique-insert: the first insert of the day's row returns a row, the second none, and that is how the second run learns it lost",
            2,
            vec![write(1, None, RowWrite::InsertOrNothing), write(2, None, RowWrite::InsertOrNothing)],
        ),
        exchange(
            "The fenced upsert refuses a lower token",
            "a database that checks the fencing token: a write with a lower token than the row's changes nothing",
            2,
            vec![
                write(1, Some(43), RowWrite::FencedUpsert),
                write(2, Some(42), RowWrite::FencedUpsert),
                write(2, Some(44), RowWrite::FencedUpsert),
            ],
        ),
        Exchange {
            ..exchange(
                "A second insert waits for an uncommitted row, then gets nothing when it commits",
                "what a unique key does while the first writer's transaction is open",
                2,
                vec![
                    lock(1),
                    write(1, None, RowWrite::InsertOrNothing),
                    write(2, None, RowWrite::InsertOrNothing),
                    commit(1),
                ],
            )
        },
        Exchange {
            ..exchange(
                "A second insert waits for an uncommitted row, then inserts when it rolls back",
                "what a unique key does while the first writer's transaction is open",
                2,
                vec![
                    lock(1),
                    write(1, None, RowWrite::InsertOrNothing),
                    write(2, None, RowWrite::InsertOrNothing),
                    Send(1, Sql::Rollback),
                ],
            )
        },
        Exchange {
            settings: DbLockSettings { lock_timeout_ms: 300, ..DbLockSettings::default() },
            expected: Some(
                "the lab applies lock_timeout to a waiting FOR UPDATE only, not to a write waiting for an uncommitted row (said in its simplifications panel); such a write happens in the lab only when a job restarted without the lock writes while a db-lock holder is between its row and its COMMIT",
            ),
            ..exchange(
                "lock_timeout also cancels an insert waiting for an uncommitted row (55P03)",
                "that a write waiting for another transaction's row is a lock wait like any other",
                2,
                vec![
                    lock(1),
                    write(1, None, RowWrite::InsertOrNothing),
                    write(2, None, RowWrite::InsertOrNothing),
                    Wait(2),
                    Send(1, Sql::Rollback),
                ],
            )
        },
        Exchange {
            expected: Some(
                "the lab's instances never send a plain INSERT: unique-insert writes with ON CONFLICT DO NOTHING (checked above), which returns zero rows instead of this error",
            ),
            ..exchange(
                "A plain INSERT of a second row fails (23505)",
                "nothing in the lab: this is what the unique key does to an insert without ON CONFLICT",
                2,
                vec![
                    ServerOnly(1, "INSERT INTO reports (job, day, period, run) VALUES ('daily-report', 0, 1, 1)"),
                    ServerOnly(2, "INSERT INTO reports (job, day, period, run) VALUES ('daily-report', 0, 1, 2)"),
                ],
            )
        },
    ]
}

/// What a side did: the transcript, and the time to each `Wait`'s answer.
struct Transcript {
    lines: Vec<String>,
    /// Who was waited for, and how long after the step before the `Wait`
    /// their answer came (`None`: it did not come).
    waits_ms: Vec<(Who, Option<u64>)>,
}

/// Collects a side's lines: what each step sent, then, after the step has
/// settled, who was answered (the step's own actor first) and who was left waiting.
#[derive(Default)]
struct Writer {
    lines: Vec<String>,
    /// Who is owed an answer, and what they sent.
    owed: BTreeMap<Who, Option<Sql>>,
    /// Who was last written as waiting, so a wait is said once.
    waiting: BTreeSet<Who>,
}

impl Writer {
    fn said(&mut self, who: Who, text: &str) {
        self.lines.push(format!("{}: {text}", who.name()));
    }

    fn sent(&mut self, who: Who, sql: Option<Sql>, text: &str) {
        self.said(who, text);
        self.owed.insert(who, sql);
    }

    /// The step's answers and the waits it left.
    fn settled(&mut self, actor: Option<Who>, mut answers: Vec<(Who, String)>) {
        answers.sort_by_key(|(who, _)| (Some(*who) != actor, *who));
        for (who, text) in answers {
            self.owed.remove(&who);
            self.waiting.remove(&who);
            self.said(who, &format!("→ {text}"));
        }
        let newly: Vec<Who> = self.owed.keys().filter(|who| !self.waiting.contains(who)).copied().collect();
        for who in newly {
            self.waiting.insert(who);
            self.said(who, "… waits");
        }
    }

    fn forget(&mut self, who: Who) {
        self.owed.remove(&who);
        self.waiting.remove(&who);
    }
}

fn actor(step: Step) -> Option<Who> {
    match step {
        Step::Connect(client)
        | Step::Send(client, _)
        | Step::ServerOnly(client, _)
        | Step::Kill(client)
        | Step::Stop(client)
        | Step::Continue(client)
        | Step::Wait(client) => Some(Who::Client(client)),
        Step::Other { query, .. } | Step::OtherEnds(query) | Step::Read(query) => Some(Who::Other(query)),
    }
}

/// The step's line, the same on both sides.
fn step_text(step: Step) -> Option<String> {
    match step {
        Step::Connect(_) => Some("connect".to_owned()),
        Step::Send(_, sql) => Some(server_sql(sql)),
        Step::ServerOnly(_, sql) => Some(sql.to_owned()),
        Step::Other { held, .. } => Some(other_sql(held).to_owned()),
        Step::OtherEnds(_) => Some("COMMIT".to_owned()),
        Step::Read(_) => Some(READ_SQL.to_owned()),
        Step::Kill(_) => Some("its process is killed (SIGKILL)".to_owned()),
        Step::Stop(_) => Some("its process is stopped (SIGSTOP)".to_owned()),
        Step::Continue(_) => Some("its process runs again (SIGCONT)".to_owned()),
        Step::Wait(_) => None,
    }
}

fn on_engine(exchange: &Exchange) -> Transcript {
    let mut probe = DbProbe::new(exchange.clients + 1, MAX_CONNECTIONS, exchange.settings.clone());
    // Client 0 is the suite's monitoring session, which the server has too.
    probe.send(0, Sql::Connect);
    if exchange.connect_first {
        for client in 1..=exchange.clients {
            probe.send(client, Sql::Connect);
        }
    }
    probe.at(probe.now_ms() + SETTLE_MS);
    probe.take_answers();
    let mut writer = Writer::default();
    let mut queries: BTreeMap<u8, u32> = BTreeMap::new();
    let mut answered_ms: BTreeMap<Who, u64> = BTreeMap::new();
    let mut waits_ms = Vec::new();
    let mut step_started_ms = probe.now_ms();
    for &step in &exchange.steps {
        let previous_started_ms = step_started_ms;
        step_started_ms = probe.now_ms();
        let text = step_text(step);
        let mut answers = Vec::new();
        match step {
            Step::Connect(client) => {
                writer.sent(Who::Client(client), Some(Sql::Connect), &text.unwrap_or_default());
                probe.send(client, Sql::Connect);
            }
            Step::Send(client, sql) => {
                writer.sent(Who::Client(client), Some(sql), &text.unwrap_or_default());
                probe.send(client, sql);
            }
            Step::ServerOnly(client, _) => {
                writer.said(Who::Client(client), &text.unwrap_or_default());
                answers.push((Who::Client(client), "(the lab's instances never send this)".to_owned()));
            }
            Step::Other { query, held } => {
                writer.sent(Who::Other(query), None, &text.unwrap_or_default());
                queries.insert(query, probe.other_service_arrives(held));
            }
            Step::OtherEnds(query) => {
                writer.said(Who::Other(query), &text.unwrap_or_default());
                if let Some(&number) = queries.get(&query) {
                    probe.other_service_ends(number);
                }
            }
            Step::Read(query) => {
                writer.sent(Who::Other(query), None, &text.unwrap_or_default());
                queries.insert(query, probe.other_service_reads());
            }
            Step::Kill(client) => {
                writer.said(Who::Client(client), &text.unwrap_or_default());
                writer.forget(Who::Client(client));
                probe.kill(client);
            }
            // Nothing reaches the server when a process stops or resumes.
            Step::Stop(client) | Step::Continue(client) => writer.said(Who::Client(client), &text.unwrap_or_default()),
            Step::Wait(client) => {
                if writer.owed.contains_key(&Who::Client(client)) {
                    probe.wait_for(client, probe.now_ms() + 60_000);
                }
            }
        }
        probe.at(probe.now_ms() + SETTLE_MS);
        for (at_ms, answer) in probe.take_answers() {
            let (who, text) = match answer {
                DbAnswer::Sql { client, outcome } => {
                    let who = Who::Client(client);
                    (who, engine_text(writer.owed.get(&who).copied().flatten(), outcome))
                }
                DbAnswer::KeyShare { query } => {
                    let Some((&name, _)) = queries.iter().find(|(_, number)| **number == query) else {
                        continue;
                    };
                    (Who::Other(name), other_answer(exchange, name).to_owned())
                }
            };
            answered_ms.insert(who, at_ms);
            answers.push((who, text));
        }
        if let Step::Wait(client) = step {
            let answered = answered_ms.get(&Who::Client(client)).copied().filter(|at_ms| *at_ms >= previous_started_ms);
            waits_ms.push((Who::Client(client), answered.map(|at_ms| at_ms - previous_started_ms)));
        }
        writer.settled(actor(step), answers);
    }
    Transcript { lines: writer.lines, waits_ms }
}

/// A client of the real server: a session in this process, or a process of its own.
enum RealClient {
    Session(PgConnection),
    Process(ProcessClient),
}

impl RealClient {
    fn send(&mut self, sql: &str) {
        match self {
            RealClient::Session(connection) => connection.send(sql),
            RealClient::Process(process) => process.send(sql),
        }
    }

    fn poll(&mut self, within: Duration) -> Result<Option<PgReply>, String> {
        match self {
            RealClient::Session(connection) => connection.poll(within),
            RealClient::Process(process) => process.poll(within),
        }
    }

    fn backend_pid(&self) -> i32 {
        match self {
            RealClient::Session(connection) => connection.backend_pid,
            RealClient::Process(process) => process.backend_pid,
        }
    }
}

/// The server's side of one exchange.
struct Real<'a> {
    port: u16,
    monitor: &'a mut PgConnection,
    clients: BTreeMap<Who, RealClient>,
}

impl Real<'_> {
    fn connect(&self, exchange: &Exchange, client: u8) -> Result<Result<RealClient, PgReply>, String> {
        let mut real = if exchange.process == Some(client) {
            RealClient::Process(ProcessClient::start(self.port)?)
        } else {
            match PgConnection::open(self.port, "postgres")? {
                Ok(connection) => RealClient::Session(connection),
                Err(refused) => return Ok(Err(refused)),
            }
        };
        // The db-lock strategy's session settings, as its instances set them.
        let DbLockSettings { lock_timeout_ms, idle_in_transaction_timeout_ms, .. } = &exchange.settings;
        real.send(&format!(
            "SET lock_timeout = {lock_timeout_ms}; SET idle_in_transaction_session_timeout = {idle_in_transaction_timeout_ms}"
        ));
        match wait_reply(&mut real)? {
            PgReply::Done { .. } => Ok(Ok(real)),
            other => Err(format!("setting the session's timeouts: {}", other.text())),
        }
    }

    /// Polls until everyone owed an answer has it or waits on a lock held
    /// by another session; the answers, with when each came.
    fn settle(&mut self, mut owed: BTreeSet<Who>) -> Result<Vec<(Who, PgReply, Instant)>, String> {
        let started = Instant::now();
        let mut answers = Vec::new();
        loop {
            for who in owed.clone() {
                let Some(client) = self.clients.get_mut(&who) else {
                    owed.remove(&who);
                    continue;
                };
                if let Some(reply) = client.poll(Duration::from_millis(2))? {
                    answers.push((who, reply, Instant::now()));
                    owed.remove(&who);
                }
            }
            if owed.is_empty() {
                return Ok(answers);
            }
            let pids: Vec<String> = owed
                .iter()
                .filter_map(|who| self.clients.get(who))
                .map(|client| client.backend_pid().to_string())
                .collect();
            let blocked = self.monitor.query(&format!(
                "SELECT count(*) FROM pg_stat_activity WHERE pid IN ({}) AND wait_event_type = 'Lock' AND cardinality(pg_blocking_pids(pid)) > 0",
                pids.join(", ")
            ))?;
            if blocked.first_value() == Some(&pids.len().to_string()) {
                return Ok(answers);
            }
            if started.elapsed() > SERVER_LIMIT {
                return Err(format!("the server did not settle within {SERVER_LIMIT:?}"));
            }
        }
    }

    /// Waits until the server has no session of `pid`'s left.
    fn gone(&mut self, pid: i32) -> Result<(), String> {
        self.until(&format!("SELECT count(*) FROM pg_stat_activity WHERE pid = {pid}"), "0")
    }

    /// Runs `sql` on the monitor until its value is `want`.
    fn until(&mut self, sql: &str, want: &str) -> Result<(), String> {
        let started = Instant::now();
        while self.monitor.query(sql)?.first_value() != Some(want) {
            if started.elapsed() > SERVER_LIMIT {
                return Err(format!("{sql} did not reach {want} within {SERVER_LIMIT:?}"));
            }
        }
        Ok(())
    }
}

/// The client's reply, waiting at most [`SERVER_LIMIT`] for it.
fn wait_reply(client: &mut RealClient) -> Result<PgReply, String> {
    match client {
        RealClient::Session(connection) => connection.wait(SERVER_LIMIT),
        RealClient::Process(process) => process
            .poll(SERVER_LIMIT)?
            .ok_or_else(|| format!("no reply from the client process within {SERVER_LIMIT:?}")),
    }
}

fn on_server(exchange: &Exchange, port: u16, monitor: &mut PgConnection) -> Result<Transcript, String> {
    let mut real = Real { port, monitor, clients: BTreeMap::new() };
    // Each exchange starts from empty tables and no other session than the monitor's.
    real.until(
        "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
        "0",
    )?;
    real.monitor.query("DELETE FROM reports; DELETE FROM job_events")?;
    if exchange.connect_first {
        for client in 1..=exchange.clients {
            let connected = real.connect(exchange, client)?.map_err(|refused| refused.text())?;
            real.clients.insert(Who::Client(client), connected);
        }
    }
    let mut writer = Writer::default();
    let mut answered: BTreeMap<Who, Instant> = BTreeMap::new();
    let mut waits_ms = Vec::new();
    let mut step_started = Instant::now();
    for &step in &exchange.steps {
        let previous_started = step_started;
        step_started = Instant::now();
        let text = step_text(step).unwrap_or_default();
        let mut answers = Vec::new();
        match step {
            Step::Connect(client) => {
                writer.said(Who::Client(client), &text);
                let reply = match real.connect(exchange, client)? {
                    Ok(connected) => {
                        real.clients.insert(Who::Client(client), connected);
                        "connected".to_owned()
                    }
                    Err(refused) => refused.text(),
                };
                answers.push((Who::Client(client), reply));
            }
            Step::Send(client, sql) => {
                writer.sent(Who::Client(client), Some(sql), &text);
                client_of(&mut real, Who::Client(client))?.send(&text);
            }
            Step::ServerOnly(client, sql) => {
                writer.sent(Who::Client(client), None, &text);
                client_of(&mut real, Who::Client(client))?.send(sql);
            }
            Step::Other { query, .. } | Step::Read(query) => {
                let connection = PgConnection::open(port, "postgres")?.map_err(|refused| refused.text())?;
                let mut other = RealClient::Session(connection);
                other.send(&text);
                real.clients.insert(Who::Other(query), other);
                writer.sent(Who::Other(query), None, &text);
            }
            Step::OtherEnds(query) => {
                writer.said(Who::Other(query), &text);
                let other = client_of(&mut real, Who::Other(query))?;
                other.send("COMMIT");
                wait_reply(other)?;
            }
            Step::Kill(client) => {
                writer.said(Who::Client(client), &text);
                writer.forget(Who::Client(client));
                let who = Who::Client(client);
                let pid = client_of(&mut real, who)?.backend_pid();
                match real.clients.remove(&who) {
                    Some(RealClient::Process(mut process)) => process.kill()?,
                    Some(RealClient::Session(_)) | None => return Err("only a client process can be killed".into()),
                }
                real.gone(pid)?;
            }
            Step::Stop(client) | Step::Continue(client) => {
                writer.said(Who::Client(client), &text);
                let signal = if matches!(step, Step::Stop(_)) { "STOP" } else { "CONT" };
                match client_of(&mut real, Who::Client(client))? {
                    RealClient::Process(process) => process.signal(signal)?,
                    RealClient::Session(_) => return Err("only a client process can be stopped".into()),
                }
            }
            Step::Wait(client) => {
                let who = Who::Client(client);
                if writer.owed.contains_key(&who) {
                    let reply = wait_reply(client_of(&mut real, who)?)?;
                    answers.push((who, reply.text()));
                    answered.insert(who, Instant::now());
                }
            }
        }
        let owed =
            writer.owed.keys().filter(|who| answers.iter().all(|(answered, _)| answered != *who)).copied().collect();
        for (who, reply, at) in real.settle(owed)? {
            answered.insert(who, at);
            let text = match (who, reply) {
                (Who::Other(query), PgReply::Done { .. }) => other_answer(exchange, query).to_owned(),
                (_, reply) => reply.text(),
            };
            answers.push((who, text));
        }
        if let Step::Wait(client) = step {
            let waited = answered
                .get(&Who::Client(client))
                .filter(|at| **at >= previous_started)
                .map(|at| u64::try_from(at.duration_since(previous_started).as_millis()).unwrap_or(u64::MAX));
            waits_ms.push((Who::Client(client), waited));
        }
        writer.settled(actor(step), answers);
    }
    Ok(Transcript { lines: writer.lines, waits_ms })
}

fn client_of<'a>(real: &'a mut Real<'_>, who: Who) -> Result<&'a mut RealClient, String> {
    real.clients.get_mut(&who).ok_or_else(|| format!("{} has no session", who.name()))
}

/// Runs every exchange on both sides; the server's version and a row per exchange.
pub fn check() -> Result<(String, Vec<Row>), String> {
    let server = PgServer::start(&server_settings())?;
    let version = format!("PostgreSQL {} (Debian's postgresql)", server.version());
    let mut monitor = PgConnection::open(server.port, "postgres")?.map_err(|refused| refused.text())?;
    match monitor.query(SCHEMA)? {
        PgReply::Done { .. } => {}
        other => return Err(format!("the suite's tables: {}", other.text())),
    }
    let mut rows = Vec::new();
    for exchange in exchanges() {
        let engine = on_engine(&exchange);
        let actual = on_server(&exchange, server.port, &mut monitor)
            .map_err(|problem| format!("{}: {problem}", exchange.name))?;
        let mut engine_text = engine.lines.join("\n");
        let mut server_text = actual.lines.join("\n");
        let mut timing_same = true;
        for ((who, engine_ms), (_, server_ms)) in engine.waits_ms.iter().zip(&actual.waits_ms) {
            let close = matches!((engine_ms, server_ms), (Some(engine_ms), Some(server_ms)) if engine_ms.abs_diff(*server_ms) <= TIMING_TOLERANCE_MS);
            timing_same &= close;
            let who = who.name();
            // The server's time varies from run to run; the document says
            // whether it was within the tolerance, or else rounds it to a
            // tenth of a second, so it stays the same from run to run.
            engine_text.push_str(&match engine_ms {
                Some(engine_ms) => format!("\n({who} was answered {engine_ms} ms after the step before)"),
                None => format!("\n({who} was not answered while it was waited for)"),
            });
            server_text.push_str(&match server_ms {
                Some(_) if close => format!("\n({who} was answered within {TIMING_TOLERANCE_MS} ms of the engine's time)"),
                Some(server_ms) => format!(
                    "\n({who} was answered about {} ms after the step before: more than {TIMING_TOLERANCE_MS} ms from the engine's time)",
                    (server_ms + 50) / 100 * 100
                ),
                None => format!("\n({who} was not answered while it was waited for)"),
            });
        }
        let outcome = match (engine.lines == actual.lines && timing_same, exchange.expected) {
            (true, _) => Outcome::Same,
            (false, Some(why)) => Outcome::Expected(why.to_owned()),
            (false, None) => Outcome::Different,
        };
        rows.push(Row {
            name: exchange.name.to_owned(),
            relies: exchange.relies.to_owned(),
            engine: engine_text,
            server: server_text,
            outcome,
        });
    }
    drop(monitor);
    drop(server);
    Ok((version, rows))
}
