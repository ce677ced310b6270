//! The etcd checks: short scripted exchanges, each run against the engine's
//! consensus store ([`ConsensusProbe`]) and against a throwaway etcd cluster
//! (one member, or three where a leader is lost), transcripts compared in
//! order. The server is spoken to as live mode speaks to it
//! ([`etcd::consensus_call`]: a lease grant and a create-if-absent
//! transaction, keep-alive, revoke), so these checks hold live mode's
//! mapping of etcd's answers to the engine's too.
//!
//! Where time is the point (a lease running out), the server's must be
//! within [`LEASE_TOLERANCE_MS`] after the engine's, never before it.

use crate::{Outcome, Row, owner};
use locklab_conformance::etcd::{self, EtcdClient};
use locklab_conformance::server::{EtcdServer, leader_among};
use locklab_engine::ConsensusProbe;
use locklab_engine::event::{ConsensusOp, ConsensusReply, LEASE_KEY};
use locklab_engine::ids::{InstanceId, LeaseId};
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant, SystemTime};

/// How long after the engine's a lease may run out on the server: etcd's
/// lessor looks for expired leases every 500 ms (`lessor.runLoop`), and the
/// revoke is then committed through Raft.
pub const LEASE_TOLERANCE_MS: u64 = 1_000;

/// How long a request may take while the cluster has a leader.
const REQUEST_LIMIT: Duration = Duration::from_secs(5);

/// The lab's consensus client's timeout (`strategy::consensus::TIMEOUT_MS`):
/// a request the cluster does not answer within it has failed, for the lab.
pub(crate) const CLIENT_TIMEOUT: Duration = Duration::from_secs(1);

/// How long the cluster may take to elect a leader, or a key to go.
const SERVER_LIMIT: Duration = Duration::from_secs(15);

/// The three-member cluster's election timeout: long enough that a request
/// sent right after the leader's death meets a cluster without a leader,
/// and the margin the new leader adds to every lease (`Promote`) is a second.
pub(crate) const ELECTION_TIMEOUT_MS: u64 = 1_000;
/// The single member's election timeout (wall ms), where no leader is lost.
pub(crate) const SINGLE_ELECTION_TIMEOUT_MS: u64 = 100;

/// A step of an exchange.
#[derive(Clone, Copy)]
enum Step {
    /// Client `0..3` (instances a, b, c) sends an operation.
    Send(u8, ConsensusOp),
    /// Client `0..3` reads the lock key: its value and the revision that created it.
    Get(u8),
    /// Time passes until the lease has at most this many whole seconds left.
    LeaseDownTo(LeaseId, u64),
    /// Client `0..3` asks how long the lease (of TTL `ttl_s`) has left: all
    /// of its TTL again, give or take a second, or less.
    TimeToLive { client: u8, lease: LeaseId, ttl_s: u64 },
    /// Time passes until the lock key is gone, which is the lease of TTL
    /// `ttl_s` granted in the step before running out.
    KeyRunsOut { ttl_s: u64 },
    /// The member's wall clock is stepped by this many ms.
    ClockJump(i64),
    /// The leader is killed (SIGKILL), and the cluster has no leader.
    KillLeader,
    /// Client `0..3` sends an operation while the cluster has no leader.
    SendLeaderless(u8, ConsensusOp),
    /// The surviving members elect a leader.
    LeaderElected,
}

/// A consensus exchange's steps (the suite's `Exchange`, with its own kind of step).
type Exchange = crate::Exchange<Step>;

fn acquire(client: u8, ttl_s: u64) -> ConsensusOp {
    ConsensusOp::Acquire { value: owner(client), ttl_ms: ttl_s * 1_000 }
}

/// The revision-fence exchange, on one member.
fn fence() -> Exchange {
    use Step::{KeyRunsOut, Send};
    Exchange {
        name: "etcd: the lock key's revision rises with every holder",
        relies: "consensus's fencing token: each acquisition, after a revoke or after the lease ran out, gets a higher revision of the key than any before (the revoke and the expiry each delete the key, a revision of their own), and a client that finds the key taken gets the holder's value",
        steps: vec![
            Send(0, acquire(0, 10)),
            Send(1, acquire(1, 2)),
            Send(0, ConsensusOp::Revoke { lease: LeaseId(1) }),
            Send(1, acquire(1, 2)),
            KeyRunsOut { ttl_s: 2 },
            Send(2, acquire(2, 10)),
        ],
    }
}

/// The clock-step exchange, on one member with the clock shim preloaded.
fn clock_step() -> Exchange {
    use Step::{ClockJump, Get, Send};
    Exchange {
        name: "etcd: a lease outlives a step of its member's wall clock",
        relies: "clock_jump on consensus: etcd's lessor measures a lease on Go's monotonic clock (`lease/lessor.go`: `Lease.expired()` is `time.Until(expiry) <= 0`, and `time.Now()` carries a monotonic reading that `Until` uses), so a step of the wall clock past the TTL ends no lease",
        steps: vec![
            Send(0, acquire(0, 10)),
            ClockJump(60_000),
            Get(1),
            Send(1, acquire(1, 10)),
            Send(0, ConsensusOp::KeepAlive { lease: LeaseId(1) }),
        ],
    }
}

/// The leader-change exchange, on three members.
fn leader_change() -> Exchange {
    use Step::{Get, KillLeader, LeaderElected, LeaseDownTo, Send, SendLeaderless, TimeToLive};
    let lease = LeaseId(1);
    Exchange {
        name: "etcd: a lease survives a leader change, refreshed, and the revision goes on rising",
        relies: "consensus_leader_loss: while the cluster has no leader a request fails; the new leader gives every lease its whole TTL again (`lessor.Promote`, which adds one election timeout), so the holder keeps its key and its keep-alives work again; the next holder's revision is higher than any before the change",
        steps: vec![
            Send(0, acquire(0, 10)),
            LeaseDownTo(lease, 7),
            KillLeader,
            SendLeaderless(1, acquire(1, 10)),
            LeaderElected,
            Get(0),
            TimeToLive { client: 0, lease, ttl_s: 10 },
            Send(0, ConsensusOp::KeepAlive { lease }),
            Send(0, ConsensusOp::Revoke { lease }),
            Send(1, acquire(1, 10)),
        ],
    }
}

/// Somewhere the exchanges can run.
trait Store {
    fn send(&mut self, client: u8, op: ConsensusOp) -> Result<ConsensusReply, String>;
    /// Sends while the cluster has no leader: the lab's client gives up after its timeout.
    fn send_leaderless(&mut self, client: u8, op: ConsensusOp) -> Result<ConsensusReply, String>;
    /// The lock key's value and creation revision, if it exists.
    fn get(&mut self, client: u8) -> Result<Option<(String, u64)>, String>;
    /// The lease's whole seconds left, if it exists.
    fn time_to_live_s(&mut self, client: u8, lease: LeaseId) -> Result<Option<u64>, String>;
    fn lease_down_to(&mut self, lease: LeaseId, left_s: u64) -> Result<(), String>;
    /// Waits until the key is gone; how long after the step before it went.
    fn key_runs_out(&mut self, ttl_s: u64) -> Result<Option<u64>, String>;
    /// Steps the wall clock; `Err` with why not, if it cannot be stepped.
    fn step_clock(&mut self, by_ms: i64) -> Result<Result<(), String>, String>;
    fn kill_leader(&mut self) -> Result<(), String>;
    fn leader_elected(&mut self) -> Result<(), String>;
}

/// The engine's side: the store of the engine's world.
struct Engine {
    probe: ConsensusProbe,
    /// When the step before began, for `KeyRunsOut`.
    step_started_ms: u64,
}

impl Store for Engine {
    fn send(&mut self, client: u8, op: ConsensusOp) -> Result<ConsensusReply, String> {
        self.step_started_ms = self.probe.now_ms();
        Ok(self.probe.execute(client, op))
    }
    fn send_leaderless(&mut self, client: u8, op: ConsensusOp) -> Result<ConsensusReply, String> {
        self.send(client, op)
    }
    fn get(&mut self, _client: u8) -> Result<Option<(String, u64)>, String> {
        Ok(self.probe.key().map(|(value, revision)| (value.to_string(), revision.0)))
    }
    fn time_to_live_s(&mut self, _client: u8, lease: LeaseId) -> Result<Option<u64>, String> {
        // etcd answers whole seconds, cut down (`int64(Remaining().Seconds())`).
        Ok(self.probe.lease_remaining_ms(lease).map(|left_ms| u64::try_from(left_ms.max(0) / 1_000).unwrap_or(0)))
    }
    fn lease_down_to(&mut self, lease: LeaseId, left_s: u64) -> Result<(), String> {
        let left_ms = self.probe.lease_remaining_ms(lease).ok_or("no such lease")?;
        let wait_ms = u64::try_from(left_ms).unwrap_or(0).saturating_sub((left_s + 1) * 1_000 - 1);
        self.probe.at(self.probe.now_ms() + wait_ms);
        Ok(())
    }
    fn key_runs_out(&mut self, ttl_s: u64) -> Result<Option<u64>, String> {
        // The store's own timer ends the lease: run the world on until the key is gone.
        let limit_ms = self.step_started_ms + ttl_s * 1_000 + LEASE_TOLERANCE_MS;
        while self.probe.key().is_some() && self.probe.now_ms() < limit_ms {
            self.probe.at(self.probe.now_ms() + 1);
        }
        Ok(self.probe.key().is_none().then(|| self.probe.now_ms() - self.step_started_ms))
    }
    fn step_clock(&mut self, by_ms: i64) -> Result<Result<(), String>, String> {
        self.probe.step_clock(by_ms);
        Ok(Ok(()))
    }
    fn kill_leader(&mut self) -> Result<(), String> {
        self.probe.lose_leader();
        Ok(())
    }
    fn leader_elected(&mut self) -> Result<(), String> {
        self.probe.at(self.probe.now_ms() + self.probe.failover_ms());
        if self.probe.has_leader() { Ok(()) } else { Err("the engine's store elected no leader".to_owned()) }
    }
}

/// The server's side: a cluster, one gateway client per instance, and the
/// leases as live mode numbers them.
struct Real<'a> {
    server: &'a mut EtcdServer,
    clients: BTreeMap<u8, EtcdClient>,
    leases: BTreeMap<LeaseId, String>,
    next_lease: u32,
    step_started: Instant,
}

impl Real<'_> {
    fn client(&mut self, client: u8) -> &mut EtcdClient {
        let port = self.server.port();
        self.clients.entry(client).or_insert_with(|| EtcdClient::new(port))
    }

    fn call(&mut self, client: u8, op: ConsensusOp, limit: Duration) -> Result<ConsensusReply, String> {
        self.step_started = Instant::now();
        let port = self.server.port();
        let connection = self.clients.entry(client).or_insert_with(|| EtcdClient::new(port));
        match etcd::consensus_call(connection, op, limit, 1, &mut self.leases, &mut self.next_lease) {
            Ok(reply) => Ok(reply),
            Err(error) if matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                Ok(ConsensusReply::Timeout)
            }
            Err(error) => Err(format!("{op}: {error}")),
        }
    }

    fn lease_id(&self, lease: LeaseId) -> Result<String, String> {
        self.leases.get(&lease).cloned().ok_or_else(|| format!("no lease {} was granted", lease.0))
    }
}

impl Store for Real<'_> {
    fn send(&mut self, client: u8, op: ConsensusOp) -> Result<ConsensusReply, String> {
        self.call(client, op, REQUEST_LIMIT)
    }
    fn send_leaderless(&mut self, client: u8, op: ConsensusOp) -> Result<ConsensusReply, String> {
        self.call(client, op, CLIENT_TIMEOUT)
    }
    fn get(&mut self, client: u8) -> Result<Option<(String, u64)>, String> {
        let body = serde_json::json!({"key": etcd::encode(LEASE_KEY)});
        let answer =
            self.client(client).post("/v3/kv/range", &body, REQUEST_LIMIT).map_err(|error| error.to_string())?;
        let kv = &answer["kvs"][0];
        Ok(kv["value"].as_str().and_then(etcd::decode).map(|value| (value, etcd::number(&kv["create_revision"]))))
    }
    fn time_to_live_s(&mut self, client: u8, lease: LeaseId) -> Result<Option<u64>, String> {
        let body = serde_json::json!({"ID": self.lease_id(lease)?});
        let answer = self
            .client(client)
            .post("/v3/lease/timetolive", &body, REQUEST_LIMIT)
            .map_err(|error| error.to_string())?;
        // A lease that is gone answers a TTL of -1.
        Ok(answer["TTL"].as_str().and_then(|ttl| ttl.parse::<i64>().ok()).and_then(|ttl| u64::try_from(ttl).ok()))
    }
    fn lease_down_to(&mut self, lease: LeaseId, left_s: u64) -> Result<(), String> {
        let asked = Instant::now();
        // Polling is the wait: the condition is the lease's time left.
        while self.time_to_live_s(0, lease)?.is_some_and(|left| left > left_s) {
            if asked.elapsed() > SERVER_LIMIT {
                return Err(format!("the lease did not come down to {left_s} s within {SERVER_LIMIT:?}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }
    fn key_runs_out(&mut self, ttl_s: u64) -> Result<Option<u64>, String> {
        let limit = Duration::from_millis(ttl_s * 1_000 + LEASE_TOLERANCE_MS) * 2;
        // Polling is the wait: the condition is the key's absence.
        while self.get(0)?.is_some() {
            if self.step_started.elapsed() > limit {
                return Ok(None);
            }
        }
        Ok(Some(u64::try_from(self.step_started.elapsed().as_millis()).unwrap_or(u64::MAX)))
    }
    fn step_clock(&mut self, by_ms: i64) -> Result<Result<(), String>, String> {
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, self.server.port()));
        let skew_s = || -> Result<i64, String> {
            let date = etcd::server_date(address).ok_or("the member sent no Date header")?;
            let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_err(|error| error.to_string())?;
            Ok(date - i64::try_from(now.as_secs()).unwrap_or(i64::MAX))
        };
        let before_s = skew_s()?;
        self.server.step_clock(by_ms)?;
        let after_s = skew_s()?;
        // The Date header has whole seconds: a step is seen within two.
        let moved_s = after_s - before_s;
        if (moved_s - by_ms / 1_000).abs() <= 2 {
            return Ok(Ok(()));
        }
        // Said the same way every run unless the clock moved, so the
        // generated document changes only when the behaviour does.
        let moved = if moved_s.abs() <= 2 {
            "did not move (to the header's whole second)".to_owned()
        } else {
            format!("moved {moved_s:+} s")
        };
        Ok(Err(format!(
            "the clock shim was preloaded into etcd and told to step its wall clock {by_ms:+} ms, and the member's own clock, as the Date header of its answers reads it, {moved}: the shim replaces libc's clock_gettime, gettimeofday and time, and etcd, a Go program, does not call them (Go's runtime reads the clock through the kernel's vDSO, `__vdso_clock_gettime`, found by `src/runtime/vdso_linux_amd64.go`, or a raw system call). A wall-clock step of one process cannot be made otherwise without stepping the machine's clock for every process on it, which the suite does not do (a time namespace offsets only the monotonic and boot clocks). What backs the engine instead is etcd 3.4's code: `lease/lessor.go` sets a lease's expiry with `time.Now().Add(…)` (`Lease.refresh`) and revokes only a lease whose `expired()` is true, `time.Until(expiry) <= 0`, and Go's `Until` subtracts the monotonic readings when both times carry one; the lessor's queue is ordered by `expiry.UnixNano()`, a wall reading, so a step forward makes it look at the lease at once, and `findExpiredLeases` leaves it, since `expired()` is false"
        )))
    }
    fn kill_leader(&mut self) -> Result<(), String> {
        let leader = self.server.leader().ok_or("the cluster has no leader to kill")?;
        self.server.kill(leader)?;
        // Every client now speaks to a member still running, as an etcd
        // client with the cluster's endpoints fails over.
        self.clients.clear();
        Ok(())
    }
    fn leader_elected(&mut self) -> Result<(), String> {
        let asked = Instant::now();
        let survivors = self.server.running();
        // Polling is the wait: the condition is a leader among the survivors.
        while leader_among(&survivors).is_none() {
            if asked.elapsed() > SERVER_LIMIT {
                return Err(format!("the survivors elected no leader within {SERVER_LIMIT:?}"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }
}

/// A side's transcript: one line per step, and what the server said in its
/// own words where the line says only what it means (not compared).
struct Transcript {
    lines: Vec<String>,
    notes: Vec<String>,
    /// Why the side could not go on (the server's clock cannot be stepped).
    stopped: Option<String>,
}

/// The instance a client is, as the transcript names it (`a`, `b`, `c`).
fn instance(client: u8) -> String {
    InstanceId(client).to_string()
}

/// Runs the steps on `target`.
fn transcript(target: &mut dyn Store, steps: &[Step]) -> Result<Transcript, String> {
    let mut transcript = Transcript { lines: Vec::new(), notes: Vec::new(), stopped: None };
    for step in steps {
        let line = match *step {
            Step::Send(client, op) => format!("{}: {op} → {}", instance(client), target.send(client, op)?),
            Step::SendLeaderless(client, op) => {
                let (line, note) = send_leaderless(target, client, op)?;
                transcript.notes.push(note);
                line
            }
            Step::Get(client) => get_key(target, client)?,
            Step::LeaseDownTo(lease, left_s) => {
                target.lease_down_to(lease, left_s)?;
                format!("time passes until lease {} has {left_s} s or less left", lease.0)
            }
            Step::TimeToLive { client, lease, ttl_s } => ask_time_to_live(target, client, lease, ttl_s)?,
            Step::KeyRunsOut { ttl_s } => wait_for_key_to_run_out(target, ttl_s)?,
            Step::ClockJump(by_ms) => match target.step_clock(by_ms)? {
                Ok(()) => format!("the member's wall clock steps {by_ms:+} ms"),
                // The steps after this one assume the step was made, so the side stops here.
                Err(why) => {
                    transcript.lines.push(format!("the member's wall clock cannot be stepped {by_ms:+} ms"));
                    transcript.stopped = Some(why);
                    return Ok(transcript);
                }
            },
            Step::KillLeader => {
                target.kill_leader()?;
                "the leader is killed (SIGKILL): the cluster has no leader".to_owned()
            }
            Step::LeaderElected => {
                target.leader_elected()?;
                "the surviving members elect a leader".to_owned()
            }
        };
        transcript.lines.push(line);
    }
    Ok(transcript)
}

/// A send while the cluster has no leader: the step's line, which says only
/// that it failed, and a note of how (answered, or not within the lab
/// client's timeout).
fn send_leaderless(target: &mut dyn Store, client: u8, op: ConsensusOp) -> Result<(String, String), String> {
    let reply = target.send_leaderless(client, op)?;
    let said = match reply {
        ConsensusReply::NoLeader | ConsensusReply::Timeout => "fails: the cluster has no leader".to_owned(),
        ConsensusReply::Acquired { .. }
        | ConsensusReply::Taken { .. }
        | ConsensusReply::Alive { .. }
        | ConsensusReply::LeaseNotFound
        | ConsensusReply::Revoked => reply.to_string(),
    };
    let note = match reply {
        ConsensusReply::Timeout => format!(
            "{} was not answered within the lab client's {} ms: a member holds a request the dead leader never committed until its request timeout, 5 s plus two election timeouts (`ServerConfig.ReqTimeout`), and then fails it",
            instance(client),
            CLIENT_TIMEOUT.as_millis()
        ),
        ConsensusReply::NoLeader
        | ConsensusReply::Acquired { .. }
        | ConsensusReply::Taken { .. }
        | ConsensusReply::Alive { .. }
        | ConsensusReply::LeaseNotFound
        | ConsensusReply::Revoked => format!("{} was answered: {reply}", instance(client)),
    };
    Ok((format!("{}: {op} → {said}", instance(client)), note))
}

/// The client reads the lock key; the step's line, with the value and the
/// revision that created it.
fn get_key(target: &mut dyn Store, client: u8) -> Result<String, String> {
    let value = match target.get(client)? {
        Some((value, revision)) => format!("\"{value}\" (create_revision {revision})"),
        None => "(no key)".to_owned(),
    };
    Ok(format!("{}: get {LEASE_KEY} → {value}", instance(client)))
}

/// The client asks how long the lease of TTL `ttl_s` has left; the step's
/// line, which says "its whole TTL again" for any answer within a second of it.
fn ask_time_to_live(target: &mut dyn Store, client: u8, lease: LeaseId, ttl_s: u64) -> Result<String, String> {
    let said = match target.time_to_live_s(client, lease)? {
        // Whole seconds, cut down, a moment after the refresh, and
        // etcd's new leader adds one election timeout (1 s) to the TTL.
        Some(left_s) if (ttl_s - 1..=ttl_s + 1).contains(&left_s) => {
            format!("its whole TTL again ({} to {} s)", ttl_s - 1, ttl_s + 1)
        }
        Some(left_s) => format!("{left_s} s left"),
        None => "lease not found".to_owned(),
    };
    Ok(format!("{}: lease timetolive {} → {said}", instance(client), lease.0))
}

/// Time passes until the lock key is gone; the step's line, the same on
/// every run while the key goes within [`LEASE_TOLERANCE_MS`] after the TTL.
fn wait_for_key_to_run_out(target: &mut dyn Store, ttl_s: u64) -> Result<String, String> {
    let limit_ms = ttl_s * 1_000 + LEASE_TOLERANCE_MS;
    Ok(match target.key_runs_out(ttl_s)? {
        Some(after_ms) if (ttl_s * 1_000..=limit_ms).contains(&after_ms) => {
            format!("the lease runs out: the key is gone between {} and {limit_ms} ms after the grant", ttl_s * 1_000)
        }
        Some(after_ms) => format!("the key is gone {after_ms} ms after the grant"),
        None => format!("the key is still there {} ms after the grant", limit_ms * 2),
    })
}

/// Runs one exchange on the engine and on `server`.
fn run(exchange: &Exchange, server: &mut EtcdServer) -> Result<Row, String> {
    exchange.assert_has_steps();
    let mut engine = Engine { probe: ConsensusProbe::new(), step_started_ms: 0 };
    let engine = transcript(&mut engine, &exchange.steps)?;
    // The engine's store can always step its clock, so its side runs every
    // step, and the row's verdict needs to look only at the server's.
    assert!(engine.stopped.is_none(), "the engine's side of {:?} stopped before its last step", exchange.name);
    let mut real =
        Real { server, clients: BTreeMap::new(), leases: BTreeMap::new(), next_lease: 1, step_started: Instant::now() };
    let actual = transcript(&mut real, &exchange.steps).map_err(|problem| format!("{}: {problem}", exchange.name))?;
    let outcome = match &actual.stopped {
        Some(why) => Outcome::Unchecked(why.clone()),
        None if engine.lines == actual.lines => Outcome::Same,
        None => Outcome::Different,
    };
    let mut server_text = actual.lines.join("\n");
    for note in &actual.notes {
        server_text.push_str(&format!("\n({note})"));
    }
    Ok(Row {
        name: exchange.name.to_owned(),
        relies: exchange.relies.to_owned(),
        engine: engine.lines.join("\n"),
        server: server_text,
        outcome,
    })
}

/// Runs every etcd check, each on a cluster of its own, stopped when the
/// check ends, whether it passes, fails or cannot run.
pub fn check() -> Result<(String, Vec<Row>), String> {
    let mut rows = Vec::new();
    let mut single = EtcdServer::start()?;
    let version = format!("etcd {} (Debian's etcd-server)", single.version());
    rows.push(run(&fence(), &mut single)?);
    drop(single);
    let mut shimmed = EtcdServer::start_with_clock_shim()?;
    rows.push(run(&clock_step(), &mut shimmed)?);
    drop(shimmed);
    let mut cluster = EtcdServer::start_cluster(3, ELECTION_TIMEOUT_MS)?;
    rows.push(run(&leader_change(), &mut cluster)?);
    drop(cluster);
    Ok((version, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The engine's side of every exchange runs every step, without a server.
    #[test]
    fn every_exchange_has_steps_and_runs_on_the_engine() {
        for exchange in [fence(), clock_step(), leader_change()] {
            exchange.assert_has_steps();
            let mut engine = Engine { probe: ConsensusProbe::new(), step_started_ms: 0 };
            let transcript = transcript(&mut engine, &exchange.steps).expect("the engine's side never fails");
            assert!(transcript.stopped.is_none(), "{}", exchange.name);
            assert_eq!(transcript.lines.len(), exchange.steps.len(), "{}", exchange.name);
        }
    }
}
