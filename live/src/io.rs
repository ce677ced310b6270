//! An instance's connections, each served by a thread of its own so that a
//! slow server (a row lock that waits, a node that does not answer) never
//! stops the instance's event loop: the loop hands a connection a request
//! and gets back, on one channel, the reply in the engine's own terms — or
//! what a client library makes of silence, a timeout.

use locklab_conformance::etcd::{self, EtcdClient};
use locklab_conformance::pg::{PgConnection, PgLogin, PgReply};
use locklab_conformance::resp::Connection;
use locklab_engine::event::{
    ConsensusOp, ConsensusReply, LOCK_KEY, LockValue, Owner, PutOutcome, RedisCommand, RedisReply, RowWrite, Sql,
    SqlError, SqlOutcome, TOKEN_KEY,
};
use locklab_engine::ids::{LeaseId, ReportOf, SessionId, Token};
use locklab_engine::strategy::Reply;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::net::TcpStream;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

/// How often an idle session looks whether the server has ended it.
const IDLE_LOOK: Duration = Duration::from_millis(10);

/// What reaches an instance's event loop from outside.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// The answer to request `request`.
    Reply {
        request: u32,
        reply: Reply,
    },
    /// A database session opened (or could not) for request `request`.
    Opened {
        request: u32,
        session: Result<Session, SqlError>,
    },
    /// The server ended a session between its statements; its next statement gets `error`.
    SessionEnded {
        session: SessionId,
        error: SqlError,
    },
    /// A clock fault: the instance's clock steps by `by_ms`, or drifts `ppm` from now on.
    ClockJump {
        by_ms: i64,
    },
    ClockDrift {
        ppm: i64,
    },
    /// The coordinator closed the instance's input: the run is over.
    Stop,
}

/// A request to one connection: its number, what to send, how long to wait.
#[derive(Debug)]
struct Job<T> {
    request: u32,
    body: T,
    limit: Duration,
}

/// A Redis node's connection.
#[derive(Debug)]
pub(crate) struct RedisLink(Sender<Job<Vec<String>>>);

impl RedisLink {
    /// A connection to the node on `port`, opened lazily and again after
    /// every failure, as client libraries reconnect. The lock's keys are
    /// named with `key_prefix` first (a run's own keys on a server of the user's).
    pub(crate) fn start(port: u16, key_prefix: String, replies: Sender<Incoming>) -> RedisLink {
        let (jobs, inbox) = channel::<Job<Vec<String>>>();
        std::thread::spawn(move || {
            // The connection is opened at once and again right after any
            // failure, as a client library's pool keeps one ready: a request
            // never waits for a connect, which at a short timeout (Redlock's
            // is a few ms of the scenario, well under one on the wall clock)
            // would time it out.
            let mut connection: Option<Connection> = Connection::open(port).ok();
            for mut job in inbox {
                if !key_prefix.is_empty() {
                    for word in &mut job.body {
                        if word == LOCK_KEY || word == TOKEN_KEY {
                            *word = format!("{key_prefix}{word}");
                        }
                    }
                }
                // A connection the server has closed since (a restart, a
                // failover) is replaced before it is used, as a pool does.
                if connection.as_ref().is_none_or(Connection::peer_closed) {
                    connection = Connection::open(port).ok();
                }
                let reply = match connection.as_mut() {
                    None => RedisReply::ConnectionRefused,
                    Some(open) => match open.call_within(&job.body, job.limit) {
                        Ok(text) => redis_reply(&text),
                        Err(error) => {
                            connection = None;
                            if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) {
                                RedisReply::Timeout
                            } else {
                                RedisReply::ConnectionRefused
                            }
                        }
                    },
                };
                let reply = Reply::Redis(reply);
                if replies.send(Incoming::Reply { request: job.request, reply }).is_err() {
                    return;
                }
                if connection.is_none() {
                    connection = Connection::open(port).ok();
                }
            }
        });
        RedisLink(jobs)
    }

    /// Sends `command` as a real client does, its TTLs already on the wall clock's scale.
    pub(crate) fn send(&self, request: u32, command: RedisCommand, limit: Duration) {
        let _ = self.0.send(Job { request, body: command.wire(), limit });
    }
}

/// A reply in the lab's notation, as the engine's value.
pub(crate) fn redis_reply(text: &str) -> RedisReply {
    if text == "OK" {
        return RedisReply::Ok;
    }
    if text == "(nil)" {
        return RedisReply::Nil;
    }
    if let Some(number) = text.strip_prefix("(integer) ").and_then(|number| number.parse().ok()) {
        return RedisReply::Integer(number);
    }
    let value = text.strip_prefix('"').and_then(|text| text.strip_suffix('"'));
    match value {
        Some("locked") => RedisReply::Value(LockValue::Locked),
        Some(value) => Owner::parse(value).map_or(RedisReply::Nil, |owner| RedisReply::Value(LockValue::Owner(owner))),
        // An error reply: the lab's strategies never provoke one; a client treats it as a failed call.
        None => RedisReply::ConnectionRefused,
    }
}

/// A database session: its number and its connection's thread.
#[derive(Debug)]
pub(crate) struct Session {
    pub(crate) id: SessionId,
    jobs: Sender<Job<Sql>>,
}

impl Session {
    /// Opens a session on its own thread; the outcome comes back as [`Incoming::Opened`].
    pub(crate) fn open(
        request: u32,
        id: SessionId,
        port: u16,
        login: PgLogin,
        init: Option<String>,
        replies: Sender<Incoming>,
    ) {
        std::thread::spawn(move || {
            let connection = match PgConnection::open_as(port, &login) {
                Ok(Ok(mut connection)) => {
                    if let Some(init) = init.as_deref()
                        && !matches!(connection.query(init), Ok(PgReply::Done { .. }))
                    {
                        let _ = replies.send(Incoming::Opened { request, session: Err(SqlError::ConnectionClosed) });
                        return;
                    }
                    connection
                }
                Ok(Err(refused)) => {
                    let error = match refused {
                        PgReply::Error { code, .. } if code == "53300" => SqlError::TooManyClients,
                        PgReply::Error { .. } | PgReply::Done { .. } | PgReply::Closed => SqlError::ConnectionClosed,
                    };
                    let _ = replies.send(Incoming::Opened { request, session: Err(error) });
                    return;
                }
                Err(_) => {
                    let _ = replies.send(Incoming::Opened { request, session: Err(SqlError::ConnectionClosed) });
                    return;
                }
            };
            let (jobs, inbox) = channel::<Job<Sql>>();
            if replies.send(Incoming::Opened { request, session: Ok(Session { id, jobs }) }).is_ok() {
                serve_session(id, connection, &inbox, &replies);
            }
        });
    }

    pub(crate) fn send(&self, request: u32, sql: Sql, limit: Duration) {
        let _ = self.jobs.send(Job { request, body: sql, limit });
    }
}

/// Runs the session's statements one after another until the session is
/// dropped (its sender gone) or the server ends it.
fn serve_session(id: SessionId, mut connection: PgConnection, inbox: &Receiver<Job<Sql>>, replies: &Sender<Incoming>) {
    loop {
        let job = match inbox.recv_timeout(IDLE_LOOK) {
            Ok(job) => job,
            Err(RecvTimeoutError::Disconnected) => return,
            Err(RecvTimeoutError::Timeout) => {
                // Between statements the server may end the session on its
                // own (idle_in_transaction_session_timeout): it says so on the
                // socket, and the instance hears it when the server says it.
                if let Ok(Some(said)) = connection.poll(Duration::from_millis(1)) {
                    let error = match said {
                        PgReply::Error { code, .. } if code == "25P03" => SqlError::IdleInTransactionTimeout,
                        PgReply::Error { .. } | PgReply::Done { .. } | PgReply::Closed => SqlError::ConnectionClosed,
                    };
                    let _ = replies.send(Incoming::SessionEnded { session: id, error });
                    return;
                }
                continue;
            }
        };
        connection.send(&server_sql(job.body));
        let outcome = match connection.wait(job.limit) {
            Ok(reply) => outcome(&mut connection, job.body, &reply),
            Err(_) => SqlOutcome::Error(SqlError::Timeout),
        };
        let closed = outcome == SqlOutcome::Error(SqlError::ConnectionClosed);
        let reply = Reply::Sql(outcome);
        if replies.send(Incoming::Reply { request: job.request, reply }).is_err() || closed {
            return;
        }
    }
}

/// The statement as the server is sent it: the lab's text, with the column
/// list it elides written out (as the conformance suite sends it).
fn server_sql(sql: Sql) -> String {
    sql.to_string().replace('…', "name")
}

/// What the server's reply to `sql` means in the engine's terms.
fn outcome(connection: &mut PgConnection, sql: Sql, reply: &PgReply) -> SqlOutcome {
    match reply {
        PgReply::Done { tag, rows } => {
            let affected = tag.rsplit(' ').next().and_then(|count| count.parse::<u32>().ok()).unwrap_or(0);
            match sql {
                Sql::WriteReport { how: RowWrite::FencedUpsert, report, .. } if affected == 0 => {
                    SqlOutcome::StaleToken { highest: highest_token(connection, report) }
                }
                Sql::WriteReport { .. } => SqlOutcome::Rows(affected),
                Sql::ReportExists { .. } | Sql::LockJobRow { .. } => {
                    SqlOutcome::Rows(u32::try_from(rows.len()).unwrap_or(u32::MAX))
                }
                Sql::Connect | Sql::Commit | Sql::Rollback => SqlOutcome::Rows(0),
            }
        }
        PgReply::Error { code, message, .. } => SqlOutcome::Error(match code.as_str() {
            "53300" => SqlError::TooManyClients,
            "55P03" if message.contains("lock timeout") => SqlError::LockTimeout,
            "55P03" => SqlError::LockNotAvailable,
            "25P03" => SqlError::IdleInTransactionTimeout,
            _ => SqlError::ConnectionClosed,
        }),
        PgReply::Closed => SqlOutcome::Error(SqlError::ConnectionClosed),
    }
}

/// The token the report row holds, which refused a fenced write.
fn highest_token(connection: &mut PgConnection, report: ReportOf) -> Token {
    let key = match report {
        ReportOf::Period(period) => format!("period = {}", period.0),
        ReportOf::Day(day) => format!("day = {day}"),
    };
    let sql = format!("SELECT token FROM reports WHERE job = 'daily-report' AND {key}");
    let token = connection.query(&sql).ok().and_then(|reply| reply.first_value().and_then(|value| value.parse().ok()));
    Token(token.unwrap_or(0))
}

/// The connection to storage and Slack, which the coordinator plays: one
/// line out (`PUT …` or `POST …`), one line back.
#[derive(Debug)]
pub(crate) struct ResourceLink(Sender<Job<String>>);

impl ResourceLink {
    pub(crate) fn start(port: u16, replies: Sender<Incoming>) -> ResourceLink {
        let (jobs, inbox) = channel::<Job<String>>();
        std::thread::spawn(move || {
            let mut stream: Option<(BufReader<TcpStream>, TcpStream)> = None;
            for job in inbox {
                if stream.is_none() {
                    stream = TcpStream::connect(("127.0.0.1", port))
                        .and_then(|writer| Ok((BufReader::new(writer.try_clone()?), writer)))
                        .ok();
                }
                let answer = stream.as_mut().and_then(|(reader, writer)| {
                    writer.set_read_timeout(Some(job.limit.max(Duration::from_millis(1)))).ok()?;
                    writer.write_all(format!("{}\n", job.body).as_bytes()).ok()?;
                    let mut line = String::new();
                    reader.read_line(&mut line).ok().filter(|read| *read > 0)?;
                    Some(line.trim_end().to_owned())
                });
                if answer.is_none() {
                    stream = None;
                }
                let reply = match answer.as_deref() {
                    Some("posted") => Reply::Posted,
                    Some("accepted") => Reply::Put(PutOutcome::Accepted),
                    Some(line) => match line.strip_prefix("rejected ").and_then(|highest| highest.parse().ok()) {
                        Some(highest) => Reply::Put(PutOutcome::Rejected(Token(highest))),
                        None => Reply::Timeout,
                    },
                    None => Reply::Timeout,
                };
                if replies.send(Incoming::Reply { request: job.request, reply }).is_err() {
                    return;
                }
            }
        });
        ResourceLink(jobs)
    }

    pub(crate) fn send(&self, request: u32, line: String, limit: Duration) {
        let _ = self.0.send(Job { request, body: line, limit });
    }
}

/// The connection to etcd, for the consensus lease: each of the engine's
/// operations as the etcd calls a client makes for it. The engine's lease
/// numbers are this instance's own (from `lease_base`), mapped to etcd's.
#[derive(Debug)]
pub(crate) struct ConsensusLink(Sender<Job<ConsensusOp>>);

impl ConsensusLink {
    pub(crate) fn start(
        port: u16,
        lease_key: String,
        lease_base: u32,
        time_scale: u32,
        replies: Sender<Incoming>,
    ) -> ConsensusLink {
        let (jobs, inbox) = channel::<Job<ConsensusOp>>();
        std::thread::spawn(move || {
            let mut client = EtcdClient::new(port);
            let mut leases: BTreeMap<LeaseId, String> = BTreeMap::new();
            let mut next = lease_base;
            for job in inbox {
                let reply = match etcd::consensus_call_on(
                    &lease_key,
                    &mut client,
                    job.body,
                    job.limit,
                    time_scale,
                    &mut leases,
                    &mut next,
                ) {
                    Ok(reply) => reply,
                    Err(error) if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                        ConsensusReply::Timeout
                    }
                    // Refused or cut off: the client library reports the call failed, as on a timeout.
                    Err(_) => ConsensusReply::Timeout,
                };
                let reply = Reply::Consensus(reply);
                if replies.send(Incoming::Reply { request: job.request, reply }).is_err() {
                    return;
                }
            }
        });
        ConsensusLink(jobs)
    }

    pub(crate) fn send(&self, request: u32, op: ConsensusOp, limit: Duration) {
        let _ = self.0.send(Job { request, body: op, limit });
    }
}
