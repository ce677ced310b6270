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
pub(crate) const MAX_CONNECTIONS: u16 = 6;

/// How far a timed answer on the server may be from the engine's.
pub const TIMING_TOLERANCE_MS: u64 = 100;

/// How long the engine's world runs on after a step: longer than a
/// statement, its round trip and one of other services' queries (20 ms);
/// shorter than any timeout a check sets.
pub(crate) const SETTLE_MS: u64 = 40;

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

impl Exchange {
    /// An exchange as most are: its clients connect before the steps, each
    /// as a session in this process, with db-lock's default settings, and
    /// the engine is expected to agree with the server.
    fn new(name: &'static str, relies: &'static str, clients: u8, steps: Vec<Step>) -> Exchange {
        Exchange {
            name,
            relies,
            clients,
            connect_first: true,
            process: None,
            settings: DbLockSettings::default(),
            steps,
            expected: None,
        }
    }
}

/// The client asks for the jobs row with the given strength and way of waiting.
fn lock_row_with(client: u8, strength: LockStrength, wait: DbWait) -> Step {
    Step::Send(client, Sql::LockJobRow { strength, wait })
}

/// The client asks for the jobs row as db-lock does by default: FOR UPDATE, waiting for it.
fn lock_row(client: u8) -> Step {
    lock_row_with(client, LockStrength::ForUpdate, DbWait::Block)
}

fn commit(client: u8) -> Step {
    Step::Send(client, Sql::Commit)
}

fn rollback(client: u8) -> Step {
    Step::Send(client, Sql::Rollback)
}

/// The client writes the day's report row, as run `client` of period 1,
/// with its fencing token if it has one.
fn write_report(client: u8, token: Option<u64>, how: RowWrite) -> Step {
    Step::Send(
        client,
        Sql::WriteReport {
            period: Period(1),
            report: ReportOf::Day(0),
            run: locklab_engine::ids::RunId(u32::from(client)),
            token: token.map(Token),
            how,
        },
    )
}

/// Every exchange, in the order the document lists them.
fn exchanges() -> Vec<Exchange> {
    let all: Vec<Exchange> = [
        session_limit_exchanges(),
        row_lock_exchanges(),
        timeout_exchanges(),
        other_service_exchanges(),
        process_fault_exchanges(),
        report_write_exchanges(),
        unique_key_exchanges(),
    ]
    .into_iter()
    .flatten()
    .collect();
    for exchange in &all {
        assert_well_formed(exchange);
    }
    all
}

/// What running an exchange relies on. The list is written by hand, so a
/// slip in it is the suite's bug, not a difference between the engine and
/// the server.
fn assert_well_formed(exchange: &Exchange) {
    let name = exchange.name;
    assert!(!exchange.steps.is_empty(), "the PostgreSQL exchange {name:?} has no steps, so it would check nothing");
    for &step in &exchange.steps {
        match step {
            Step::Connect(client) | Step::Send(client, _) | Step::Wait(client) => assert_has_client(exchange, client),
            Step::ServerOnly(client, _) => {
                assert_has_client(exchange, client);
                // The engine's side answers such a statement with a note,
                // never as the server does, so the difference must be
                // recorded with its reason.
                assert!(
                    exchange.expected.is_some(),
                    "the PostgreSQL exchange {name:?} sends a statement only the server runs, but records no reason for the difference"
                );
            }
            Step::Kill(client) | Step::Stop(client) | Step::Continue(client) => {
                assert_has_client(exchange, client);
                // Only a client in a process of its own can be sent a signal.
                assert!(
                    exchange.process == Some(client),
                    "the PostgreSQL exchange {name:?} signals client {client}, which is not its client process"
                );
            }
            Step::Other { .. } | Step::OtherEnds(_) | Step::Read(_) => {}
        }
    }
}

/// The engine's database is made with room for the exchange's clients
/// only, and a client's name is a letter from `a`, so a step's client is
/// one of `1..=clients`.
fn assert_has_client(exchange: &Exchange, client: u8) {
    assert!(
        (1..=exchange.clients).contains(&client),
        "the PostgreSQL exchange {:?} has a step for client {client}, outside its clients 1..={}",
        exchange.name,
        exchange.clients
    );
}

/// How many sessions the server lets in.
fn session_limit_exchanges() -> Vec<Exchange> {
    vec![Exchange {
        connect_first: false,
        ..Exchange::new(
            "max_connections refuses the next session (53300)",
            "C's starved pool: with every slot taken, the next connection is refused with the message the lab prints (the suite's own monitoring session holds one of the six slots, in the engine as on the server)",
            6,
            (1..=6).map(Step::Connect).collect(),
        )
    }]
}

/// How a FOR UPDATE on a held jobs row waits, fails or skips it.
fn row_lock_exchanges() -> Vec<Exchange> {
    vec![
        Exchange::new(
            "FOR UPDATE waiters get the row first come, first served",
            "db-lock's queue: three sessions wait for the jobs row and get it in the order they asked",
            4,
            vec![lock_row(1), lock_row(2), lock_row(3), lock_row(4), commit(1), commit(2), commit(3), commit(4)],
        ),
        Exchange::new(
            "FOR UPDATE NOWAIT fails at once (55P03)",
            "db-lock with \"wait\": \"nowait\": a second instance gets the error, with the lab's text",
            2,
            vec![lock_row(1), lock_row_with(2, LockStrength::ForUpdate, DbWait::Nowait), rollback(2), commit(1)],
        ),
        Exchange::new(
            "FOR UPDATE SKIP LOCKED returns no row",
            "db-lock with \"wait\": \"skip_locked\": a second instance gets zero rows and knows it lost",
            2,
            vec![lock_row(1), lock_row_with(2, LockStrength::ForUpdate, DbWait::SkipLocked), rollback(2), commit(1)],
        ),
    ]
}

/// db-lock's two session timeouts, each ending a wait or a session.
fn timeout_exchanges() -> Vec<Exchange> {
    use Step::Wait;
    vec![
        Exchange {
            settings: DbLockSettings { lock_timeout_ms: 300, ..DbLockSettings::default() },
            ..Exchange::new(
                "lock_timeout cancels a waiting FOR UPDATE (55P03)",
                "db-lock's lock_timeout_ms: the waiter gives up after the timeout with the lab's text, and its transaction is left to roll back",
                2,
                vec![lock_row(1), lock_row(2), Wait(2), rollback(2), commit(1)],
            )
        },
        Exchange {
            settings: DbLockSettings { idle_in_transaction_timeout_ms: 500, ..DbLockSettings::default() },
            ..Exchange::new(
                "idle_in_transaction_session_timeout ends the holder's session (25P03)",
                "db-lock's idle_in_transaction_timeout_ms: a holder that sends nothing loses its session and its lock, the next waiter gets the row, and the holder learns it on its next statement",
                2,
                vec![lock_row(1), lock_row(2), Wait(2), commit(1), commit(2)],
            )
        },
    ]
}

/// Other services' queries on the locked jobs row: which row locks a
/// foreign-key check or a plain read waits for, and where it queues.
fn other_service_exchanges() -> Vec<Exchange> {
    use Step::{Other, OtherEnds, Read};
    vec![
        Exchange::new(
            "A foreign-key check waits for a held FOR UPDATE",
            "C's other services: an insert whose foreign key points at the locked jobs row waits for FOR KEY SHARE until the holder commits",
            1,
            vec![lock_row(1), Other { query: 1, held: false }, commit(1)],
        ),
        Exchange::new(
            "A foreign-key check does not wait for a held FOR NO KEY UPDATE",
            "db-lock's \"lock_strength\": \"for_no_key_update\" (quiz 8's fix): the job's lock keeps other jobs out, but the foreign-key check's FOR KEY SHARE does not conflict with it, so other services' inserts go through while a job holds the row",
            2,
            vec![
                lock_row_with(1, LockStrength::ForNoKeyUpdate, DbWait::Block),
                Other { query: 1, held: false },
                lock_row_with(2, LockStrength::ForNoKeyUpdate, DbWait::Block),
                commit(1),
                commit(2),
            ],
        ),
        Exchange::new(
            "A plain read does not wait for a held FOR UPDATE",
            "C's other services' reads: a SELECT takes no row lock, so it runs while a job holds the row; what makes reads wait behind C is their pool, filled by inserts that wait",
            1,
            vec![lock_row(1), Read(1), commit(1)],
        ),
        Exchange::new(
            "A foreign-key check passes a FOR UPDATE that only waits",
            "C's other services while an instance waits for the row: FOR KEY SHARE does not conflict with the key shares held, so it is granted without joining the queue, ahead of the waiting FOR UPDATE",
            1,
            vec![Other { query: 1, held: true }, lock_row(1), Other { query: 2, held: false }, OtherEnds(1), commit(1)],
        ),
        Exchange::new(
            "A waiting FOR UPDATE gets the row before a foreign-key check that came after it",
            "C's other services behind an instance that waits for the row: a holds FOR UPDATE, b waits for it, then another service's insert needs FOR KEY SHARE on the same row; when a commits b gets the row first, and the key share, which conflicts with b's FOR UPDATE, is answered only when b commits (PostgreSQL's `README.tuplock`: a waiter takes the tuple's heavyweight lock, `LockTuple`, before it waits for the holder's transaction, so waiters are served in the lock manager's queue order, not all at once)",
            2,
            vec![lock_row(1), lock_row(2), Other { query: 1, held: false }, commit(1), commit(2)],
        ),
    ]
}

/// What becomes of a holder's lock when its process is killed or stopped.
fn process_fault_exchanges() -> Vec<Exchange> {
    use Step::{Continue, Kill, Stop, Wait};
    vec![
        Exchange {
            process: Some(1),
            ..Exchange::new(
                "A killed client's lock goes at once",
                "oom_kill under db-lock: the kernel closes the dead process's socket, the server rolls its transaction back and the next waiter gets the row, with no timeout",
                2,
                vec![lock_row(1), lock_row(2), Kill(1), Wait(2), commit(2)],
            )
        },
        Exchange {
            process: Some(1),
            ..Exchange::new(
                "A stopped client keeps its lock",
                "gc_pause under db-lock: nothing tells the server that a process is stopped, so its lock is held until it runs again and commits",
                2,
                vec![lock_row(1), lock_row(2), Stop(1), Continue(1), commit(1), commit(2)],
            )
        },
    ]
}

/// The report row's two writes, each telling a run whether its write counted.
fn report_write_exchanges() -> Vec<Exchange> {
    vec![
        Exchange::new(
            "ON CONFLICT DO NOTHING: zero rows means another run wrote first",
            "unique-insert: the first insert of the day's row returns a row, the second none, and that is how the second run learns it lost",
            2,
            vec![write_report(1, None, RowWrite::InsertOrNothing), write_report(2, None, RowWrite::InsertOrNothing)],
        ),
        Exchange::new(
            "The fenced upsert refuses a lower token",
            "a database that checks the fencing token: a write with a lower token than the row's changes nothing",
            2,
            vec![
                write_report(1, Some(43), RowWrite::FencedUpsert),
                write_report(2, Some(42), RowWrite::FencedUpsert),
                write_report(2, Some(44), RowWrite::FencedUpsert),
            ],
        ),
    ]
}

/// What the report row's unique key does to a second insert: while the
/// first writer's transaction is open, and without ON CONFLICT.
fn unique_key_exchanges() -> Vec<Exchange> {
    use Step::{ServerOnly, Wait};
    vec![
        Exchange::new(
            "A second insert waits for an uncommitted row, then gets nothing when it commits",
            "what a unique key does while the first writer's transaction is open",
            2,
            vec![
                lock_row(1),
                write_report(1, None, RowWrite::InsertOrNothing),
                write_report(2, None, RowWrite::InsertOrNothing),
                commit(1),
            ],
        ),
        Exchange::new(
            "A second insert waits for an uncommitted row, then inserts when it rolls back",
            "what a unique key does while the first writer's transaction is open",
            2,
            vec![
                lock_row(1),
                write_report(1, None, RowWrite::InsertOrNothing),
                write_report(2, None, RowWrite::InsertOrNothing),
                rollback(1),
            ],
        ),
        Exchange {
            settings: DbLockSettings { lock_timeout_ms: 300, ..DbLockSettings::default() },
            expected: Some(
                "the lab applies lock_timeout to a waiting FOR UPDATE only, not to a write waiting for an uncommitted row (said in its simplifications panel); such a write happens in the lab only when a job restarted without the lock writes while a db-lock holder is between its row and its COMMIT",
            ),
            ..Exchange::new(
                "lock_timeout also cancels an insert waiting for an uncommitted row (55P03)",
                "that a write waiting for another transaction's row is a lock wait like any other",
                2,
                vec![
                    lock_row(1),
                    write_report(1, None, RowWrite::InsertOrNothing),
                    write_report(2, None, RowWrite::InsertOrNothing),
                    Wait(2),
                    rollback(1),
                ],
            )
        },
        Exchange {
            expected: Some(
                "the lab's instances never send a plain INSERT: unique-insert writes with ON CONFLICT DO NOTHING (checked above), which returns zero rows instead of this error",
            ),
            ..Exchange::new(
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

/// The engine's side of one exchange: its database, and what the steps
/// have left for the ones after them.
struct Engine<'a> {
    exchange: &'a Exchange,
    probe: DbProbe,
    writer: Writer,
    /// Other services' queries: the exchange's number for each, and the probe's.
    queries: BTreeMap<u8, u32>,
    /// When each was last answered, in the engine's simulated ms.
    answered_ms: BTreeMap<Who, u64>,
}

impl<'a> Engine<'a> {
    /// The engine's database with the suite's monitoring session open, and
    /// the exchange's clients too where they connect before the steps.
    fn start(exchange: &'a Exchange) -> Engine<'a> {
        let mut probe = DbProbe::new(exchange.clients + 1, MAX_CONNECTIONS, exchange.settings.clone());
        // Client 0 is the suite's monitoring session, which the server has too.
        probe.send(0, Sql::Connect);
        if exchange.connect_first {
            for client in 1..=exchange.clients {
                probe.send(client, Sql::Connect);
            }
        }
        probe.at(probe.now_ms() + SETTLE_MS);
        // The sessions' openings are not part of the transcript.
        probe.take_answers();
        Engine { exchange, probe, writer: Writer::default(), queries: BTreeMap::new(), answered_ms: BTreeMap::new() }
    }

    /// Does the step in the engine's world; the answers it gets at once,
    /// which only a statement the engine never runs has.
    fn act(&mut self, step: Step) -> Vec<(Who, String)> {
        let text = step_text(step).unwrap_or_default();
        match step {
            Step::Connect(client) => {
                self.writer.sent(Who::Client(client), Some(Sql::Connect), &text);
                self.probe.send(client, Sql::Connect);
            }
            Step::Send(client, sql) => {
                self.writer.sent(Who::Client(client), Some(sql), &text);
                self.probe.send(client, sql);
            }
            Step::ServerOnly(client, _) => {
                self.writer.said(Who::Client(client), &text);
                return vec![(Who::Client(client), "(the lab's instances never send this)".to_owned())];
            }
            Step::Other { query, held } => {
                self.writer.sent(Who::Other(query), None, &text);
                self.queries.insert(query, self.probe.other_service_arrives(held));
            }
            Step::OtherEnds(query) => {
                self.writer.said(Who::Other(query), &text);
                if let Some(&number) = self.queries.get(&query) {
                    self.probe.other_service_ends(number);
                }
            }
            Step::Read(query) => {
                self.writer.sent(Who::Other(query), None, &text);
                self.queries.insert(query, self.probe.other_service_reads());
            }
            Step::Kill(client) => {
                self.writer.said(Who::Client(client), &text);
                self.writer.forget(Who::Client(client));
                self.probe.kill(client);
            }
            // Nothing reaches the server when a process stops or resumes.
            Step::Stop(client) | Step::Continue(client) => self.writer.said(Who::Client(client), &text),
            Step::Wait(client) => {
                if self.writer.owed.contains_key(&Who::Client(client)) {
                    self.probe.wait_for(client, self.probe.now_ms() + 60_000);
                }
            }
        }
        Vec::new()
    }

    /// Runs the world on for [`SETTLE_MS`]; the answers that came meanwhile.
    fn settle(&mut self) -> Vec<(Who, String)> {
        self.probe.at(self.probe.now_ms() + SETTLE_MS);
        let mut answers = Vec::new();
        for (at_ms, answer) in self.probe.take_answers() {
            let Some((who, text)) = self.answer_text(answer) else {
                continue;
            };
            self.answered_ms.insert(who, at_ms);
            answers.push((who, text));
        }
        answers
    }

    /// Who an answer of the engine's is for, and its text as the transcript
    /// says it; none for a key share of a query the exchange did not send.
    fn answer_text(&self, answer: DbAnswer) -> Option<(Who, String)> {
        match answer {
            DbAnswer::Sql { client, outcome } => {
                let who = Who::Client(client);
                Some((who, engine_text(self.writer.owed.get(&who).copied().flatten(), outcome)))
            }
            DbAnswer::KeyShare { query } => {
                let (&name, _) = self.queries.iter().find(|(_, number)| **number == query)?;
                Some((Who::Other(name), other_answer(self.exchange, name).to_owned()))
            }
        }
    }

    /// How long after `since_ms` the client was answered, if it was.
    fn waited_ms(&self, client: u8, since_ms: u64) -> (Who, Option<u64>) {
        let answered = self.answered_ms.get(&Who::Client(client)).copied().filter(|at_ms| *at_ms >= since_ms);
        (Who::Client(client), answered.map(|at_ms| at_ms - since_ms))
    }
}

fn on_engine(exchange: &Exchange) -> Transcript {
    let mut engine = Engine::start(exchange);
    let mut waits_ms = Vec::new();
    let mut step_started_ms = engine.probe.now_ms();
    for &step in &exchange.steps {
        let previous_started_ms = step_started_ms;
        step_started_ms = engine.probe.now_ms();
        let mut answers = engine.act(step);
        answers.extend(engine.settle());
        if let Step::Wait(client) = step {
            waits_ms.push(engine.waited_ms(client, previous_started_ms));
        }
        engine.writer.settled(actor(step), answers);
    }
    Transcript { lines: engine.writer.lines, waits_ms }
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

/// The server's side of one exchange: its clients' sessions, and what the
/// steps have left for the ones after them.
struct Real<'a> {
    exchange: &'a Exchange,
    port: u16,
    monitor: &'a mut PgConnection,
    clients: BTreeMap<Who, RealClient>,
    writer: Writer,
    /// When each was last answered.
    answered: BTreeMap<Who, Instant>,
}

impl<'a> Real<'a> {
    /// The server as an exchange finds it: empty tables, no session but the
    /// monitor's, then the exchange's clients connected where they connect
    /// before the steps.
    fn start(exchange: &'a Exchange, port: u16, monitor: &'a mut PgConnection) -> Result<Real<'a>, String> {
        let mut real = Real {
            exchange,
            port,
            monitor,
            clients: BTreeMap::new(),
            writer: Writer::default(),
            answered: BTreeMap::new(),
        };
        // Each exchange starts from empty tables and no other session than the monitor's.
        real.until(
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
            "0",
        )?;
        real.monitor.query("DELETE FROM reports; DELETE FROM job_events")?;
        if exchange.connect_first {
            for client in 1..=exchange.clients {
                let connected = real.connect(client)?.map_err(|refused| refused.text())?;
                real.clients.insert(Who::Client(client), connected);
            }
        }
        Ok(real)
    }
}

impl Real<'_> {
    fn connect(&self, client: u8) -> Result<Result<RealClient, PgReply>, String> {
        let mut real = if self.exchange.process == Some(client) {
            RealClient::Process(ProcessClient::start(self.port)?)
        } else {
            match PgConnection::open(self.port, "postgres")? {
                Ok(connection) => RealClient::Session(connection),
                Err(refused) => return Ok(Err(refused)),
            }
        };
        // The db-lock strategy's session settings, as its instances set them.
        let DbLockSettings { lock_timeout_ms, idle_in_transaction_timeout_ms, .. } = &self.exchange.settings;
        real.send(&format!(
            "SET lock_timeout = {lock_timeout_ms}; SET idle_in_transaction_session_timeout = {idle_in_transaction_timeout_ms}"
        ));
        match wait_reply(&mut real)? {
            PgReply::Done { .. } => Ok(Ok(real)),
            refused @ (PgReply::Error { .. } | PgReply::Closed) => {
                Err(format!("setting the session's timeouts: {}", refused.text()))
            }
        }
    }

    fn client(&mut self, who: Who) -> Result<&mut RealClient, String> {
        self.clients.get_mut(&who).ok_or_else(|| format!("{} has no session", who.name()))
    }

    /// Does the step on the server; the answers it gets at once: a
    /// connection's, or the reply a `Wait` waited for.
    fn act(&mut self, step: Step) -> Result<Vec<(Who, String)>, String> {
        let text = step_text(step).unwrap_or_default();
        match step {
            Step::Connect(client) => return self.open_session(client, &text),
            Step::Send(client, sql) => {
                self.writer.sent(Who::Client(client), Some(sql), &text);
                self.client(Who::Client(client))?.send(&text);
            }
            Step::ServerOnly(client, sql) => {
                self.writer.sent(Who::Client(client), None, &text);
                self.client(Who::Client(client))?.send(sql);
            }
            Step::Other { query, .. } | Step::Read(query) => self.other_service_sends(query, &text)?,
            Step::OtherEnds(query) => {
                self.writer.said(Who::Other(query), &text);
                let other = self.client(Who::Other(query))?;
                other.send("COMMIT");
                wait_reply(other)?;
            }
            Step::Kill(client) => self.kill(client, &text)?,
            Step::Stop(client) => self.signal(client, "STOP", &text)?,
            Step::Continue(client) => self.signal(client, "CONT", &text)?,
            Step::Wait(client) => return self.wait(client),
        }
        Ok(Vec::new())
    }

    /// The client opens its session; being connected or refused is its answer.
    fn open_session(&mut self, client: u8, text: &str) -> Result<Vec<(Who, String)>, String> {
        let who = Who::Client(client);
        self.writer.said(who, text);
        let reply = match self.connect(client)? {
            Ok(connected) => {
                self.clients.insert(who, connected);
                "connected".to_owned()
            }
            Err(refused) => refused.text(),
        };
        Ok(vec![(who, reply)])
    }

    /// One of other services' queries opens a session of its own and sends its statement.
    fn other_service_sends(&mut self, query: u8, text: &str) -> Result<(), String> {
        let connection = PgConnection::open(self.port, "postgres")?.map_err(|refused| refused.text())?;
        let mut other = RealClient::Session(connection);
        other.send(text);
        self.clients.insert(Who::Other(query), other);
        self.writer.sent(Who::Other(query), None, text);
        Ok(())
    }

    /// The client's process is killed; done when the server has ended its session.
    fn kill(&mut self, client: u8, text: &str) -> Result<(), String> {
        let who = Who::Client(client);
        self.writer.said(who, text);
        self.writer.forget(who);
        let pid = self.client(who)?.backend_pid();
        match self.clients.remove(&who) {
            Some(RealClient::Process(mut process)) => process.kill()?,
            Some(RealClient::Session(_)) | None => return Err("only a client process can be killed".into()),
        }
        self.gone(pid)
    }

    /// The client's process is sent `signal` (`STOP` or `CONT`).
    fn signal(&mut self, client: u8, signal: &str, text: &str) -> Result<(), String> {
        self.writer.said(Who::Client(client), text);
        match self.client(Who::Client(client))? {
            RealClient::Process(process) => process.signal(signal),
            RealClient::Session(_) => Err("only a client process can be stopped".into()),
        }
    }

    /// Waits for the client's answer, if it is owed one.
    fn wait(&mut self, client: u8) -> Result<Vec<(Who, String)>, String> {
        let who = Who::Client(client);
        if !self.writer.owed.contains_key(&who) {
            return Ok(Vec::new());
        }
        let reply = wait_reply(self.client(who)?)?;
        self.answered.insert(who, Instant::now());
        Ok(vec![(who, reply.text())])
    }

    /// Lets the server settle after a step; the answers that came meanwhile
    /// to everyone owed one that the step itself did not answer.
    fn settle(&mut self, answered_by_step: &[(Who, String)]) -> Result<Vec<(Who, String)>, String> {
        let owed = self
            .writer
            .owed
            .keys()
            .filter(|who| answered_by_step.iter().all(|(answered, _)| answered != *who))
            .copied()
            .collect();
        let mut answers = Vec::new();
        for (who, reply, at) in self.poll_until_settled(owed)? {
            self.answered.insert(who, at);
            answers.push((who, self.answer_text(who, &reply)));
        }
        Ok(answers)
    }

    /// A reply as the transcript says it: a query of other services' that
    /// is done has run, or has its key share.
    fn answer_text(&self, who: Who, reply: &PgReply) -> String {
        match (who, reply) {
            (Who::Other(query), PgReply::Done { .. }) => other_answer(self.exchange, query).to_owned(),
            (Who::Client(_), PgReply::Done { .. } | PgReply::Error { .. } | PgReply::Closed)
            | (Who::Other(_), PgReply::Error { .. } | PgReply::Closed) => reply.text(),
        }
    }

    /// How long after `since` the client was answered, in ms, if it was.
    fn waited_ms(&self, client: u8, since: Instant) -> (Who, Option<u64>) {
        let waited = self
            .answered
            .get(&Who::Client(client))
            .filter(|at| **at >= since)
            .map(|at| u64::try_from(at.duration_since(since).as_millis()).unwrap_or(u64::MAX));
        (Who::Client(client), waited)
    }

    /// Polls until everyone owed an answer has it or waits on a lock held
    /// by another session; the answers, with when each came.
    fn poll_until_settled(&mut self, mut owed: BTreeSet<Who>) -> Result<Vec<(Who, PgReply, Instant)>, String> {
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
            // The loop above dropped whoever has no session, so the query
            // names a pid for each one still owed (and never an empty list),
            // and all of them blocked is the count it must return.
            assert_eq!(pids.len(), owed.len(), "a client still owed an answer on the server has no session");
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
    let mut real = Real::start(exchange, port, monitor)?;
    let mut waits_ms = Vec::new();
    let mut step_started = Instant::now();
    for &step in &exchange.steps {
        let previous_started = step_started;
        step_started = Instant::now();
        let mut answers = real.act(step)?;
        let settled = real.settle(&answers)?;
        answers.extend(settled);
        if let Step::Wait(client) = step {
            waits_ms.push(real.waited_ms(client, previous_started));
        }
        real.writer.settled(actor(step), answers);
    }
    Ok(Transcript { lines: real.writer.lines, waits_ms })
}

/// Runs every exchange on both sides; the server's version and a row per exchange.
pub fn check() -> Result<(String, Vec<Row>), String> {
    let server = PgServer::start(&server_settings())?;
    let version = format!("PostgreSQL {} (Debian's postgresql)", server.version());
    let mut monitor = PgConnection::open(server.port, "postgres")?.map_err(|refused| refused.text())?;
    match monitor.query(SCHEMA)? {
        PgReply::Done { .. } => {}
        refused @ (PgReply::Error { .. } | PgReply::Closed) => {
            return Err(format!("the suite's tables: {}", refused.text()));
        }
    }
    let mut rows = Vec::new();
    for exchange in exchanges() {
        let engine = on_engine(&exchange);
        let actual = on_server(&exchange, server.port, &mut monitor)
            .map_err(|problem| format!("{}: {problem}", exchange.name))?;
        rows.push(compared(&exchange, &engine, &actual));
    }
    drop(monitor);
    drop(server);
    Ok((version, rows))
}

/// The exchange's row: each side's transcript followed by its waits, and
/// whether the two agree, in the lines and in the time to each answer.
fn compared(exchange: &Exchange, engine: &Transcript, actual: &Transcript) -> Row {
    // The waits are compared pair by pair: each side records one per `Wait`
    // step, for the same client, in the steps' order.
    assert!(
        engine.waits_ms.iter().map(|(who, _)| who).eq(actual.waits_ms.iter().map(|(who, _)| who)),
        "the PostgreSQL exchange {:?}: the engine's side and the server's recorded different waits",
        exchange.name
    );
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
    Row {
        name: exchange.name.to_owned(),
        relies: exchange.relies.to_owned(),
        engine: engine_text,
        server: server_text,
        outcome,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Building the list runs its assertions, and the engine's side of every
    /// exchange runs to its end, without a server.
    #[test]
    fn every_exchange_is_well_formed_and_runs_on_the_engine() {
        for exchange in exchanges() {
            let engine = on_engine(&exchange);
            let waits = exchange.steps.iter().filter(|step| matches!(step, Step::Wait(_))).count();
            assert_eq!(engine.waits_ms.len(), waits, "{}: one wait time per Wait step", exchange.name);
            assert!(engine.lines.len() >= exchange.steps.len(), "{}: a line at least per step", exchange.name);
        }
    }
}
