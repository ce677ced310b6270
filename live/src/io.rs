//! An instance's connections, each served by a thread of its own so that a
//! slow server (a row lock that waits, a node that does not answer) never
//! stops the instance's event loop: the loop hands a connection a request
//! and gets back, on one channel, the reply in the engine's own terms — or
//! what a client library makes of silence, a timeout.

use locklab_clients::{
    EtcdClient, EtcdEndpoint, PostgresEndpoint, PostgresError, PostgresSession, RedisClient, RedisEndpoint,
    SessionSettings,
};
use locklab_engine::event::{ConsensusOp, ConsensusReply, PutOutcome, RedisCommand, RedisReply, Sql, SqlError};
use locklab_engine::ids::{LeaseId, SessionId, Token};
use locklab_engine::strategy::Reply;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

/// How often an idle session looks whether the server has ended it.
const IDLE_LOOK: Duration = Duration::from_millis(10);
/// How long a connection (with its login) may take to open: the servers are
/// a loopback proxy away, so this is only the bound on a server that hangs;
/// a request's own limit times the request out long before.
const CONNECT_LIMIT: Duration = Duration::from_secs(10);

/// What reaches an instance's event loop from outside.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// The answer to request `request`, and how long the server took to
    /// give it, timed on the connection's thread (none for storage and
    /// Slack, which the coordinator plays, or an answer from this side).
    Reply {
        request: u32,
        reply: Reply,
        took: Option<Duration>,
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

/// The line an instance writes, instead of an event, when a server answered
/// what the engine has no word for (a refused login such as `-WRONGPASS`,
/// `28P01`, a permission, a failed TLS handshake): the lab's commands never
/// provoke one on a server that lets the run in, so the run stops, with the
/// server's own words.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct FailedLine {
    pub(crate) failed: String,
}

/// Stops this instance's process with `message` for the coordinator, which
/// stops the run with it.
pub(crate) fn fail_run(message: &str) -> ! {
    let line = serde_json::to_string(&FailedLine { failed: message.to_owned() }).unwrap_or_default();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
    std::process::exit(3);
}

/// The loopback address of a proxy's port.
fn proxy(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
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
pub(crate) struct RedisLink(Sender<Job<RedisCommand>>);

impl RedisLink {
    /// A client of the node `url` names, dialled through the proxy on
    /// `port`, connected at once and again after every failure, as client
    /// libraries reconnect. The lock's keys are named with `key_prefix`
    /// first (a run's own keys on a server of the user's).
    pub(crate) fn start(url: String, port: u16, key_prefix: String, replies: Sender<Incoming>) -> RedisLink {
        let (jobs, inbox) = channel::<Job<RedisCommand>>();
        std::thread::spawn(move || {
            let endpoint = RedisEndpoint::parse(&url).unwrap_or_else(|error| fail_run(&error.to_string()));
            let shown = endpoint.to_string();
            let client = RedisClient::new(endpoint.via(proxy(port))).map(|client| client.with_key_prefix(key_prefix));
            let mut client = client.unwrap_or_else(|error| fail_run(&error.to_string()));
            // Connected at once and right after any failure, as a client
            // library's pool keeps one ready: a request never waits for a
            // connect, which at a short timeout (Redlock's is a few ms of
            // the scenario, well under one on the wall clock) would time it out.
            let _ = client.connect(CONNECT_LIMIT);
            for job in inbox {
                let asked = Instant::now();
                let reply = match client.execute(job.body, job.limit) {
                    Ok(reply) => reply,
                    Err(error) => fail_run(&format!("Redis at {shown} answered `{}`: {error}", job.body)),
                };
                let took = Some(asked.elapsed());
                let failed = matches!(reply, RedisReply::ConnectionRefused | RedisReply::Timeout);
                let reply = Reply::Redis(reply);
                if replies.send(Incoming::Reply { request: job.request, reply, took }).is_err() {
                    return;
                }
                if failed {
                    let _ = client.connect(CONNECT_LIMIT);
                }
            }
        });
        RedisLink(jobs)
    }

    /// Sends `command` as a real client does, its TTLs already on the wall clock's scale.
    pub(crate) fn send(&self, request: u32, command: RedisCommand, limit: Duration) {
        let _ = self.0.send(Job { request, body: command, limit });
    }
}

/// A database session: its number and its connection's thread.
#[derive(Debug)]
pub(crate) struct Session {
    pub(crate) id: SessionId,
    jobs: Sender<Job<Sql>>,
}

impl Session {
    /// Opens a session of the server `url` names, through the proxy on
    /// `port`, on its own thread, with `settings` sent with the login; the
    /// outcome comes back as [`Incoming::Opened`]. A refusal the engine
    /// models (too many clients) is its error; one it does not (a wrong
    /// password, `28P01`) stops the run with the server's words.
    pub(crate) fn open(
        request: u32,
        id: SessionId,
        (url, port): (String, u16),
        settings: SessionSettings,
        replies: Sender<Incoming>,
    ) {
        std::thread::spawn(move || {
            let endpoint = PostgresEndpoint::parse(&url).unwrap_or_else(|error| fail_run(&error.to_string()));
            let shown = endpoint.to_string();
            let session = match PostgresSession::connect(&endpoint.via(proxy(port)), &settings, CONNECT_LIMIT) {
                Ok(session) => session,
                Err(error) => {
                    let Some(refused) = error.sql_error(Sql::Connect) else {
                        fail_run(&format!("{shown} refused the login: {error}"))
                    };
                    let _ = replies.send(Incoming::Opened { request, session: Err(refused) });
                    return;
                }
            };
            let (jobs, inbox) = channel::<Job<Sql>>();
            if replies.send(Incoming::Opened { request, session: Ok(Session { id, jobs }) }).is_ok() {
                serve_session(id, session, &inbox, &replies, &shown);
            }
        });
    }

    pub(crate) fn send(&self, request: u32, sql: Sql, limit: Duration) {
        let _ = self.jobs.send(Job { request, body: sql, limit });
    }
}

/// Runs the session's statements one after another until the session is
/// dropped (its sender gone) or the server ends it.
fn serve_session(
    id: SessionId,
    mut session: PostgresSession,
    inbox: &Receiver<Job<Sql>>,
    replies: &Sender<Incoming>,
    shown: &str,
) {
    loop {
        let job = match inbox.recv_timeout(IDLE_LOOK) {
            Ok(job) => job,
            Err(RecvTimeoutError::Disconnected) => return,
            Err(RecvTimeoutError::Timeout) => {
                // Between statements the server may end the session on its
                // own (idle_in_transaction_session_timeout): the client reads
                // the socket all along, and the instance hears it then.
                if let Some(why) = session.ended() {
                    let error = ended_as(&why);
                    let _ = replies.send(Incoming::SessionEnded { session: id, error });
                    return;
                }
                continue;
            }
        };
        let asked = Instant::now();
        let outcome = match session.execute(job.body, job.limit) {
            Ok(outcome) => outcome,
            Err(error) => fail_run(&format!("PostgreSQL at {shown} answered `{}` with {error}", job.body)),
        };
        let took = Some(asked.elapsed());
        let closed = outcome == locklab_engine::event::SqlOutcome::Error(SqlError::ConnectionClosed);
        let reply = Reply::Sql(outcome);
        if replies.send(Incoming::Reply { request: job.request, reply, took }).is_err() || closed {
            return;
        }
    }
}

/// What a session the server ended gives its next statement: the engine's
/// name for why (`25P03`), or a closed session for any other end.
fn ended_as(why: &PostgresError) -> SqlError {
    why.sql_error(Sql::Rollback).unwrap_or(SqlError::ConnectionClosed)
}

/// The connection to storage and Slack, which the coordinator plays: one
/// line out (`PUT …` or `POST …`), one line back, which the coordinator
/// writes at once. Connected at the start and again right after a failure,
/// as Redis's link is: a first write that waited for its connection (a
/// thread of the proxy's and one of storage's started for it) got no
/// answer within its 10 s of the night at ×15 with both cores busy, and
/// aborted a job that the simulator's finished. Its answers are timed, as
/// a server's (`Host::time_answer`).
#[derive(Debug)]
pub(crate) struct ResourceLink(Sender<Job<String>>);

/// A connection to storage or Slack: what reads its answers, and what writes its requests.
type ResourceStream = (BufReader<TcpStream>, TcpStream);

impl ResourceLink {
    pub(crate) fn start(port: u16, replies: Sender<Incoming>) -> ResourceLink {
        let (jobs, inbox) = channel::<Job<String>>();
        let connect = move || {
            TcpStream::connect(("127.0.0.1", port))
                .and_then(|writer| Ok((BufReader::new(writer.try_clone()?), writer)))
                .ok()
        };
        std::thread::spawn(move || {
            let mut stream: Option<ResourceStream> = connect();
            for job in inbox {
                if stream.is_none() {
                    stream = connect();
                }
                let asked = Instant::now();
                let answer = stream.as_mut().and_then(|(reader, writer)| {
                    writer.set_read_timeout(Some(job.limit.max(Duration::from_millis(1)))).ok()?;
                    writer.write_all(format!("{}\n", job.body).as_bytes()).ok()?;
                    let mut line = String::new();
                    reader.read_line(&mut line).ok().filter(|read| *read > 0)?;
                    Some(line.trim_end().to_owned())
                });
                let took = stream.is_some().then(|| asked.elapsed());
                if answer.is_none() {
                    stream = connect();
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
                if replies.send(Incoming::Reply { request: job.request, reply, took }).is_err() {
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
    /// A client of the member `url` names, through the proxy on `port`,
    /// taking the lease lock on `lease_key`. The scenario's TTLs are scaled
    /// to the wall clock on the way out (`time_scale`) and back.
    pub(crate) fn start(
        (url, port): (String, u16),
        lease_key: String,
        lease_base: u32,
        time_scale: u32,
        replies: Sender<Incoming>,
    ) -> ConsensusLink {
        let (jobs, inbox) = channel::<Job<ConsensusOp>>();
        std::thread::spawn(move || {
            let endpoint = EtcdEndpoint::parse(&url).unwrap_or_else(|error| fail_run(&error.to_string()));
            let shown = endpoint.to_string();
            let endpoint = endpoint.via(proxy(port));
            let scale = u64::from(time_scale.max(1));
            let mut client: Option<EtcdClient> = None;
            for job in inbox {
                // A call that connects first is not timed: the connect is the client's.
                let (asked, connected) = (Instant::now(), client.is_some());
                let reply = match consensus_call(&mut client, &endpoint, (&lease_key, lease_base), &job, scale) {
                    Ok(reply) => reply,
                    Err(error) => fail_run(&format!("etcd at {shown} answered {error}")),
                };
                let took = connected.then(|| asked.elapsed());
                let reply = Reply::Consensus(reply);
                if replies.send(Incoming::Reply { request: job.request, reply, took }).is_err() {
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

/// One operation on etcd, the client connected first if it is not yet (a
/// member that cannot be reached is a call that failed: a timeout), its TTLs
/// divided by `scale` on the way out and multiplied on the way back.
fn consensus_call(
    client: &mut Option<EtcdClient>,
    endpoint: &EtcdEndpoint,
    (lease_key, lease_base): (&str, u32),
    job: &Job<ConsensusOp>,
    scale: u64,
) -> Result<ConsensusReply, locklab_clients::EtcdError> {
    if client.is_none() {
        match EtcdClient::connect(endpoint, LeaseId(lease_base), job.limit) {
            Ok(connected) => *client = Some(connected.with_lease_key(lease_key)),
            Err(locklab_clients::EtcdError::Timeout(_) | locklab_clients::EtcdError::Connection(_)) => {
                return Ok(ConsensusReply::Timeout);
            }
            Err(error) => return Err(error),
        }
    }
    let Some(client) = client.as_mut() else { return Ok(ConsensusReply::Timeout) };
    let op = match job.body {
        ConsensusOp::Acquire { value, ttl_ms } => ConsensusOp::Acquire { value, ttl_ms: ttl_ms / scale },
        op @ (ConsensusOp::KeepAlive { .. } | ConsensusOp::Revoke { .. }) => op,
    };
    Ok(match client.execute(op, job.limit)? {
        ConsensusReply::Alive { ttl_ms } => ConsensusReply::Alive { ttl_ms: ttl_ms * scale },
        reply @ (ConsensusReply::Acquired { .. }
        | ConsensusReply::Taken { .. }
        | ConsensusReply::LeaseNotFound
        | ConsensusReply::Revoked
        | ConsensusReply::NoLeader
        | ConsensusReply::Timeout) => reply,
    })
}
