//! The coordinator: `locklab live`'s own process. It starts the servers the
//! strategy needs (one `redis-server`, or one per Redlock node, and a
//! PostgreSQL cluster, and a replica behind a lagging link when the world
//! has one), one process per instance, and plays storage and
//! Slack itself on a loopback port (a line per request: it is the resource,
//! so it records what it accepted). It strikes the scenario's faults as
//! signals at their scaled times, collects every process's events, and at
//! the end closes the instances' input, waits for them, and stops the
//! servers; every server and process is owned by a guard, so an error or a
//! panic on the way stops them too, and the supervisor
//! (`supervisor.rs`) stops them if this process is killed. It measures its
//! own lag and gathers the instances' (`stall.rs`): a run the machine
//! stalled beyond what its time scale allows is recorded as inconclusive.

use crate::instance::Dial;
use crate::instance::{InstancePlan, Redelivery};
use crate::proxy::{Direction, Effect, Proxy, Rule, loopback};
use crate::record::Truth;
use crate::servers::{ServerUrls, Servers};
use crate::{ScaledClock, record, stall, unix_us};
use locklab_clients::redis::Value;
use locklab_clients::{EtcdClient, EtcdEndpoint, PostgresSession, RedisClient, RedisEndpoint};
use locklab_engine::clock::LocalClock;
use locklab_engine::event::{
    AbortReason, ProcessState, PutOutcome, RedisCommand, RedisReply, RunPhase, TerminateReason,
};
use locklab_engine::ids::{InstanceId, Party, Period, ReportOf, RunId, Token};
use locklab_engine::scenario::{Fault, Scenario, StrategyId, StrategySettings, Target};
use locklab_engine::{Event, EventKind, LiveRecording};
use locklab_servers::server::{EtcdServer, PgServer, RedisServer};
use nix::sys::signal::Signal;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long the coordinator's own calls to a server may take (its admin
/// session's queries, a look at a node it started): every server is on
/// this machine, so this only bounds one that hangs.
const SERVER_LIMIT: Duration = Duration::from_secs(10);

/// How long the processes get to start before the scenario's time 0, on the wall clock.
const START_LEAD: Duration = Duration::from_millis(700);
/// How long a stopped instance may take to exit once its input is closed.
const EXIT_GRACE: Duration = Duration::from_secs(3);
/// How often the progress hook hears where the run is, on the wall clock.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// Set by Ctrl-C (SIGINT) or SIGTERM: the run stops, and stops everything it started.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// What to run live.
#[derive(Clone, Debug)]
pub struct LiveOptions {
    pub scenario: Scenario,
    pub strategy: StrategyId,
    /// Scenario ms per wall-clock ms.
    pub time_scale: u32,
    /// The program that runs an instance (`locklab`, run as `locklab
    /// live-instance`) and the supervisor (`locklab live-supervisor`).
    pub program: PathBuf,
    /// Servers the user runs, to play on instead of live mode's own.
    pub servers: ServerUrls,
    /// Told how the run goes while it goes: where the scenario's time is,
    /// and each fault as it strikes.
    pub progress: Option<fn(&Progress)>,
}

/// How a run is going, for a progress line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The scenario's time now, and where its window ends (a drain may go past it).
    pub at_ms: u64,
    pub window_ms: u64,
    /// What just happened, in words (a fault struck, a process back), if anything.
    pub happened: Option<String>,
}

/// A finished live run: its log, in the engine's terms, and what it ran on.
#[derive(Clone, Debug)]
pub struct LiveRun {
    pub log: Vec<Event>,
    pub recording: LiveRecording,
}

/// Why live mode cannot play a scenario yet, if it cannot: a sentence per
/// reason, naming the strategy, the fault or the setting.
pub fn unsupported(scenario: &Scenario, strategy: StrategyId) -> Vec<String> {
    let mut reasons = Vec::new();
    match strategy {
        StrategyId::Naive
        | StrategyId::Fencing
        | StrategyId::Redlock
        | StrategyId::UniqueInsert
        | StrategyId::DbLock
        | StrategyId::Consensus => {}
    }
    for fault in &scenario.faults {
        let kind = fault.kind_name();
        match fault {
            Fault::NetworkDelay { from, to, extra_ms, .. }
                if [from, to].contains(&&Target::Party(Party::Db))
                    && *extra_ms >= locklab_engine::strategy::SQL_TIMEOUT_MS =>
            {
                reasons.push(format!(
                    "the `{kind}` fault at t={} holds statements to the database longer than the client waits for them: a report row can then commit after its client gave up, and live mode records a row only from its client's answer, so it cannot see that in-doubt commit",
                    locklab_engine::format::seconds(fault.at_ms())
                ));
            }
            Fault::OomKill { .. }
            | Fault::GcPause { .. }
            | Fault::HostLoss { .. }
            | Fault::NetworkDelay { .. }
            | Fault::Partition { .. }
            | Fault::RedisRestart { .. }
            | Fault::RedisFailover { .. } => {}
            Fault::ClockJump { target, .. } | Fault::ClockDrift { target, .. } => {
                let playable = match target {
                    Target::Holder
                    | Target::Party(Party::Instance(_))
                    | Target::AllRedis
                    | Target::Party(Party::Redis(_)) => true,
                    Target::Party(
                        Party::RedisReplica | Party::Db | Party::Storage | Party::Slack | Party::Consensus,
                    ) => false,
                };
                if !playable {
                    reasons.push(format!(
                        "the `{kind}` fault on {target} at t={} is not played live: an instance's clock is its own process's and a Redis node's is moved by a preloaded shim, but no other server's clock is reachable",
                        locklab_engine::format::seconds(fault.at_ms())
                    ));
                }
            }
            Fault::DbSlow { .. } | Fault::ConsensusLeaderLoss { .. } => {}
        }
    }
    reasons
}

/// Whether the run has a replica: the world has one and the lock lives on one
/// node (Redlock's nodes are independent, as in the simulator).
pub(crate) fn has_replica(scenario: &Scenario, strategy: StrategyId) -> bool {
    scenario.world.redis_replica && scenario.settings_for(strategy).redis_nodes() == 1
}

/// The time scale a run plays at when none is given: the fastest at which
/// live mode can play the strategy faithfully ([`faithful_limit`]; etcd's
/// leases count whole seconds, so under `consensus` the lease's TTL must
/// come out a whole number of seconds on the wall clock), and slower where
/// that would leave every process less than [`LEAST_ALLOWED_LAG_MS`] of
/// wall time before a lag counts as a stall. A faster scale is not
/// unfaithful, only likely to come out inconclusive: the tool takes one a
/// user gives.
pub fn default_time_scale(scenario: &Scenario, strategy: StrategyId) -> u32 {
    let fastest = faithful_limit(scenario, strategy, MOST_TIME_SCALE).0;
    let roomy = lag_margins(scenario, strategy).process_ms / LEAST_ALLOWED_LAG_MS;
    let most = fastest.min(u32::try_from(roomy).unwrap_or(u32::MAX)).max(1);
    (1..=most).rev().find(|scale| whole_lease_seconds(scenario, strategy, *scale)).unwrap_or(fastest)
}

/// The fastest time scale, at most `most`, at which live mode can play the
/// strategy faithfully, with why it is no faster, in words.
fn faithful_limit(scenario: &Scenario, strategy: StrategyId, most: u32) -> (u32, String) {
    let mut limit = (most.max(1), format!("live mode plays at ×{most} at most"));
    let mut cap = |scale: u32, why: String| {
        if scale < limit.0 {
            limit = (scale.max(1), why);
        }
    };
    // A fault's window (a delay, a partition) must last long enough on the
    // wall clock for the loopback network's own round trips not to decide
    // what falls inside it.
    if let Some(window_ms) = shortest_window_ms(scenario, strategy) {
        cap(
            u32::try_from(window_ms / SHORTEST_REAL_WINDOW_MS).unwrap_or(u32::MAX),
            format!(
                "a fault's window (or the replica's lag) of {} must last {SHORTEST_REAL_WINDOW_MS} ms on the wall clock",
                locklab_engine::format::seconds(window_ms)
            ),
        );
    }
    // And the client's shortest timeout must outlast a round trip through
    // the proxy on a busy machine (Redlock's 50 ms per node plays at ×10).
    let timeout_ms = locklab_engine::strategy::shortest_timeout_ms(&scenario.settings_for(strategy));
    cap(
        u32::try_from(timeout_ms / SHORTEST_REAL_TIMEOUT_MS).unwrap_or(u32::MAX),
        format!(
            "{strategy}'s shortest client timeout, {}, must last {SHORTEST_REAL_TIMEOUT_MS} ms on the wall clock",
            locklab_engine::format::seconds(timeout_ms)
        ),
    );
    // A pause or a kill aimed at a job's step needs the first jobs to start
    // when the simulator's do; the first round trips, scaled, are the lag.
    // `pause-after-check` leaves 0.4 s of the scenario between the holder's
    // step and the pause: 13 ms of wall time at ×30, which a loaded machine
    // took once (a matrix run lost the step to the pause); 27 ms at ×15.
    if aims_at_a_step(scenario) {
        cap(AIMED_FAULT_MOST_SCALE, "a pause or a kill aimed at a job's step needs the first jobs on time".to_owned());
    }
    // Taking etcd's lease is two HTTP round trips through its gateway, a few
    // ms each: at ×30 they put the first job up to 0.4 s of the scenario
    // behind the simulator's, the margin the pause scenarios leave between a
    // job's step and the pause; at ×15 it is half that.
    if uses_consensus(scenario, strategy) {
        cap(CONSENSUS_MOST_SCALE, "taking etcd's lease is two round trips through its gateway".to_owned());
    }
    let (most, why) = limit;
    match (1..=most).rev().find(|scale| whole_lease_seconds(scenario, strategy, *scale)) {
        Some(scale) if scale == most => (scale, why),
        Some(scale) => (scale, "etcd's leases count whole seconds on the wall clock".to_owned()),
        None => (1, why),
    }
}

/// The shortest fault window of the run, or the replica's lag where a failover decides by it.
fn shortest_window_ms(scenario: &Scenario, strategy: StrategyId) -> Option<u64> {
    scenario
        .faults
        .iter()
        .filter_map(|fault| fault.window_ms().map(|(duration_ms, _)| duration_ms))
        // The replica's lag decides which writes a failover loses.
        .chain(
            has_replica(scenario, strategy).then_some(scenario.world.replication_lag_ms).filter(|lag_ms| *lag_ms > 0),
        )
        .min()
}

/// Whether the scenario pauses or kills an instance (aimed at a job's step).
fn aims_at_a_step(scenario: &Scenario) -> bool {
    scenario.faults.iter().any(|fault| matches!(fault, Fault::GcPause { .. } | Fault::OomKill { .. }))
}

fn uses_consensus(scenario: &Scenario, strategy: StrategyId) -> bool {
    match scenario.settings_for(strategy) {
        StrategySettings::Consensus(_) => true,
        StrategySettings::Naive(_)
        | StrategySettings::Fencing(_)
        | StrategySettings::Redlock(_)
        | StrategySettings::DbLock(_)
        | StrategySettings::UniqueInsert => false,
    }
}

/// The shortest a fault's window may be on the wall clock, in ms: many
/// loopback round trips and a scheduler tick.
const SHORTEST_REAL_WINDOW_MS: u64 = 100;
/// The fastest a scenario with a pause or a kill plays (see [`faithful_limit`]).
const AIMED_FAULT_MOST_SCALE: u32 = 15;
/// The fastest the consensus lease plays (see [`faithful_limit`]).
const CONSENSUS_MOST_SCALE: u32 = 15;
/// The shortest a client's timeout may be on the wall clock, in ms: a few
/// round trips through a proxy with every process of the run awake.
const SHORTEST_REAL_TIMEOUT_MS: u64 = 5;
/// The least lag of a process's, in ms of wall time, that the default
/// scale allows ([`default_time_scale`]): with eight runs at once on a quiet
/// two-core machine (the live tests), a run's start (its instances' exec,
/// a dozen PostgreSQL backends forking) holds the other runs' processes
/// back 10–17 ms now and then (`perf sched`), and at ×10 a one-second
/// window's 100 ms margin allowed 10 ms: ten of the eleven such cases came
/// out inconclusive at ×10 and agreed at ×5.
const LEAST_ALLOWED_LAG_MS: u64 = 20;
/// The scenario's time between a job's step and a fault aimed at it that
/// the pause scenarios leave (`pause-after-check`: 0.4 s).
const AIMED_FAULT_MARGIN_MS: u64 = 400;
/// The part of a fault's window a lag may move its edges by.
const WINDOW_SHARE_A_LAG_MAY_MOVE: u64 = 10;

/// The tightest margins of the scenario's time the run's verdict depends
/// on: how far (scaled lag) the machine may move what a process does
/// before it can land on the other side of something that decides the
/// verdict. `process_ms` holds for every process: the margin a pause or a
/// kill aimed at a job's step leaves, a tenth of a fault's window, other
/// services' query timeout where they have one (read on the wall clock), and a
/// retry period (a lag shorter than that moves an instance's attempts by
/// less than one attempt). `network_ms` holds for the coordinator, which carries
/// the network: a lag there holds every reply back, so it is also at most
/// the strategy's shortest client timeout (a lag that long times a request
/// out on its own). An instance that lags reads the replies that came
/// meanwhile before its timers fire, as a client library does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LagMargins {
    pub process_ms: u64,
    pub network_ms: u64,
}

/// `margin_ms` of the scenario's time, on the wall clock at the run's scale.
fn scaled_down(margin_ms: u64, clock: ScaledClock) -> Duration {
    Duration::from_micros(margin_ms.saturating_mul(1_000) / u64::from(clock.time_scale.max(1)))
}

impl LagMargins {
    /// The longest the coordinator may lag on the wall clock, at the run's
    /// scale, while a request with a tight timeout is out.
    fn network_lag(self, clock: ScaledClock) -> Duration {
        scaled_down(self.network_ms, clock)
    }

    /// The longest any process may lag on the wall clock, at the run's scale.
    fn process_lag(self, clock: ScaledClock) -> Duration {
        scaled_down(self.process_ms, clock)
    }

    /// Requests with a timeout shorter than this (scenario ms) are reported
    /// as flights, which hold the coordinator to the tighter margin; 0 when
    /// the margins are the same.
    fn flights_under_ms(self) -> u64 {
        if self.network_ms < self.process_ms { self.process_ms } else { 0 }
    }
}

/// The [`LagMargins`] of a run.
pub fn lag_margins(scenario: &Scenario, strategy: StrategyId) -> LagMargins {
    let mut process_ms = scenario.world.retry_ms.max(1);
    // A stall longer than other services' timeout fails their query on the
    // wall clock. (One that makes a query slow makes it no more than slow:
    // whether a row lock held it is read off the instances' own account of
    // the row, `background::RowHolds`.)
    if scenario.world.background_queries_per_s > 0 && scenario.world.background_timeout_ms > 0 {
        process_ms = process_ms.min(scenario.world.background_timeout_ms);
    }
    if aims_at_a_step(scenario) {
        process_ms = process_ms.min(AIMED_FAULT_MARGIN_MS);
    }
    if let Some(window_ms) = shortest_window_ms(scenario, strategy) {
        process_ms = process_ms.min((window_ms / WINDOW_SHARE_A_LAG_MAY_MOVE).max(1));
    }
    let timeout_ms = locklab_engine::strategy::shortest_timeout_ms(&scenario.settings_for(strategy));
    LagMargins { process_ms, network_ms: process_ms.min(timeout_ms) }
}

/// Whether the strategy's lease (if it counts whole seconds) is whole seconds at `time_scale`.
fn whole_lease_seconds(scenario: &Scenario, strategy: StrategyId, time_scale: u32) -> bool {
    match scenario.settings_for(strategy) {
        StrategySettings::Consensus(lease) => lease.ttl_ms % (u64::from(time_scale) * 1_000) == 0,
        StrategySettings::Naive(_)
        | StrategySettings::Fencing(_)
        | StrategySettings::Redlock(_)
        | StrategySettings::DbLock(_)
        | StrategySettings::UniqueInsert => true,
    }
}

/// The fastest any run is played at, unless it must be slower: a night of
/// twenty minutes in twenty seconds.
pub const MOST_TIME_SCALE: u32 = 60;

/// Whether live mode can play the strategy faithfully at `time_scale`; if
/// not, why, and the scale that does.
pub fn time_scale_fits(scenario: &Scenario, strategy: StrategyId, time_scale: u32) -> Result<(), String> {
    if time_scale == 0 {
        return Err("--time-scale must be at least 1".to_owned());
    }
    let (fastest, why) = faithful_limit(scenario, strategy, MOST_TIME_SCALE);
    if !whole_lease_seconds(scenario, strategy, time_scale) {
        return Err(format!(
            "at --time-scale {time_scale} the consensus lease's TTL is not a whole number of seconds on the wall clock, and etcd's leases count whole seconds; --time-scale {fastest} plays it"
        ));
    }
    if time_scale > fastest {
        return Err(format!(
            "--time-scale {time_scale} is faster than live mode can play this run faithfully: {why}, so ×{fastest} is the fastest (leave --time-scale out to get it, or give a slower one)"
        ));
    }
    Ok(())
}

/// Sends `signal` to a child process: a system call, so a GC pause lands
/// when the coordinator strikes it, not when a `kill` process it spawned
/// gets to run.
fn send_signal(child: &Child, signal: Signal) -> Result<(), String> {
    let pid = i32::try_from(child.id()).map_err(|_| format!("process id {} is out of range", child.id()))?;
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal).map_err(|error| error.to_string())
}

/// An instance's process, and the guard that ends it.
struct Process {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Drop for Process {
    fn drop(&mut self) {
        // SIGCONT first: a stopped process cannot act on SIGKILL until it runs.
        let _ = send_signal(&self.child, Signal::SIGCONT);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An instance process started ahead of need, waiting for its plan on its
/// input: a restart after a crash takes it, so the restart's exec and
/// loading are done before the moment the simulator has the restarted
/// instance working. Restarted instances on a machine with both cores busy
/// reported starting 0.8–1.1 s of wall time late (12–16 s of the night at
/// ×15), exec included. An unused one is killed with the run (it never began).
struct Standby {
    process: Process,
    output: ChildStdout,
}

/// What the coordinator knows of a run from the events it has seen.
#[derive(Clone, Copy, Debug, Default)]
struct Seen {
    /// When the run began to believe it holds the lock, in the order events arrived.
    believed_since: Option<u64>,
    period: u32,
    started: bool,
    ended: bool,
    believes: bool,
    token: Option<Token>,
}

/// A fault's effect still to come: a restart, or the end of a pause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Later {
    Restart(InstanceId),
    Resume(InstanceId),
    /// The servers' TCP keepalive gives up on a lost host's connections.
    KeepaliveGaveUp(InstanceId),
    /// A restarted Redis node is back, empty.
    RedisUp(u8),
    /// The failover's replica is promoted.
    Promote,
    /// A killed etcd member is started again.
    MemberBack(u8),
}

/// The single node's replica: its server, the lagging link it replicates
/// over, and what the primary held when it died (the lock key and the
/// counter, as `GET` printed them), to count what the promotion lost.
struct Replica {
    server: RedisServer,
    /// The replication stream goes through it.
    link: Proxy,
    primary_held: Option<[Option<String>; 2]>,
}

impl Replica {
    /// A replica of `primary`, whose stream reaches it `lag_ms` of the
    /// scenario late (the proxy's delay, on the wall clock at `time_scale`);
    /// returns once it has synchronised.
    fn start(primary: &RedisServer, lag_ms: u64, time_scale: u32) -> Result<Replica, String> {
        let server = RedisServer::start()?;
        // A primary waits five seconds for more replicas before a full sync by default.
        local_call(&mut local_redis(primary.port)?, &["CONFIG", "SET", "repl-diskless-sync-delay", "0"])?;
        let clock = ScaledClock { start_unix_us: unix_us(), time_scale };
        let link = Proxy::start(loopback(primary.port), clock)?;
        link.add(Rule {
            direction: Direction::Back,
            from_ms: 0,
            until_ms: u64::MAX,
            effect: Effect::Delay { extra_ms: lag_ms },
        });
        local_call(&mut local_redis(server.port)?, &["REPLICAOF", "127.0.0.1", &link.port.to_string()])?;
        let synchronised = |info: &str| info.contains("master_link_status:up");
        server.wait_for(&["INFO", "replication"], synchronised, "the Redis replica's synchronisation")?;
        Ok(Replica { server, link, primary_held: None })
    }
}

/// A client of a Redis node live mode started on `port` (no password, database 0).
fn local_redis(port: u16) -> Result<RedisClient, String> {
    let endpoint = RedisEndpoint::parse(&format!("redis://127.0.0.1:{port}")).map_err(|error| error.to_string())?;
    RedisClient::new(endpoint).map_err(|error| error.to_string())
}

/// One command to a node live mode started; any error is said with the node's words.
fn local_call(client: &mut RedisClient, words: &[&str]) -> Result<Value, String> {
    client.call(words, SERVER_LIMIT).map_err(|error| format!("`{}` on live mode's Redis: {error}", words.join(" ")))
}

/// The lock key and the counter on a node, as text (`None` where there is none).
fn held_keys(port: u16) -> Result<[Option<String>; 2], String> {
    let mut client = local_redis(port)?;
    let mut get = |key: &str| match local_call(&mut client, &["GET", key])? {
        Value::BulkString(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Value::Nil => Ok(None),
        other => Err(format!("live mode's Redis answered GET {key} with {other:?}")),
    };
    Ok([get(locklab_engine::event::LOCK_KEY)?, get(locklab_engine::event::TOKEN_KEY)?])
}

struct Coordinator {
    options: LiveOptions,
    clock: ScaledClock,
    /// The network: a proxy per (instance, server).
    proxies: BTreeMap<(InstanceId, Party), Proxy>,
    /// Other services' way to the database.
    services_link: Proxy,
    /// When instances held the jobs row so that other services' inserts wait.
    row_holds: Arc<crate::background::RowHolds>,
    /// The coordinator's own way to etcd, for its watch on the lease key.
    watch_link: Option<Proxy>,
    /// The servers: live mode's own (node by node, to step their clocks and
    /// restart them), or where the user's are.
    servers: Servers,
    /// The single node's replica, when the world has one.
    replica: Option<Replica>,
    /// What each promotion of the replica found, for the record.
    promotions: Vec<record::Promotion>,
    /// Each Redis node's clock as its faults have moved it, on the scenario's time.
    redis_clocks: BTreeMap<u8, LocalClock>,
    events: Sender<(Option<InstanceId>, Event)>,
    inbox: Receiver<(Option<InstanceId>, Event)>,
    collected: Vec<(Option<InstanceId>, Event)>,
    processes: BTreeMap<InstanceId, Process>,
    /// The next restart's process, already started, while a fault may still restart one.
    standby: Option<Standby>,
    /// Whether the run's processes are real-time yet ([`Coordinator::schedule_promptly`]).
    prompt: bool,
    runs: BTreeMap<(InstanceId, u32), Seen>,
    /// Who the lock service counts as holder, as the replies so far show it (run ids are the instances' own).
    truth: Truth,
    /// The database sessions each instance has used, for when it dies.
    sessions: BTreeMap<InstanceId, std::collections::BTreeSet<locklab_engine::ids::SessionId>>,
    /// The coordinator's own database session, to watch the server.
    admin: PostgresSession,
    /// What an instance said stopped the run (a server's answer the engine has no word for).
    failure: Arc<Mutex<Option<String>>>,
    arrived: u64,
    next_run: BTreeMap<InstanceId, u32>,
    redeliver: BTreeMap<InstanceId, Vec<Redelivery>>,
    /// The process group the instances join: the supervisor's.
    group: u32,
    /// Every lag of the run's processes, and when a fault stopped each instance.
    lags: Arc<Mutex<stall::Lags>>,
    /// Since when (wall µs) each instance's process has been stopped by a fault.
    stopped_since: BTreeMap<InstanceId, u64>,
    /// How far the machine may move what the run's processes do.
    margins: LagMargins,
}

/// How a run ended: when, and whether Ctrl-C ended it early.
#[derive(Clone, Copy, Debug)]
struct Ended {
    at_ms: u64,
    interrupted: bool,
}

/// The message of a run interrupted before anything was recorded.
const INTERRUPTED_BEFORE_START: &str =
    "interrupted: the run was stopped before it began, and every server and instance it started with it";

/// Runs the scenario live and returns its log; an error says what could not
/// be started or played. Nothing it started is left running either way.
/// Interrupted (Ctrl-C) once it has begun, it returns what was recorded up
/// to then, marked so (`LiveRecording::interrupted_at_ms`).
pub fn run(options: LiveOptions) -> Result<LiveRun, String> {
    check_playable(&options)?;
    catch_interrupts();
    let _ordinary_after = raise_priority();
    let supervision = crate::supervisor::ensure(&options.program)?;
    let servers =
        Servers::start(&options.scenario, options.strategy, options.time_scale, &options.servers, supervision)?;
    if INTERRUPTED.load(Ordering::SeqCst) {
        return Err(INTERRUPTED_BEFORE_START.to_owned());
    }
    schedule_this_thread_promptly();
    let world = &options.scenario.world;
    let replica = start_replica(&servers, &options)?;
    let admin = admin_session(&servers)?;
    let (events, inbox) = channel();
    let clock = ScaledClock {
        start_unix_us: unix_us() + u64::try_from(START_LEAD.as_micros()).unwrap_or(0),
        time_scale: options.time_scale,
    };
    // From time 0 on the coordinator's lag counts: it carries the network.
    // Before it, a lag moves nothing but whether the instances are ready at
    // time 0, which each first process reports itself.
    let margins = lag_margins(&options.scenario, options.strategy);
    let (lags, watchdog) = watch_own_lag(margins.network_lag(clock));
    let resource_ports = serve_storage_and_slack(clock, world.storage_checks_tokens, &events)?;
    let proxies = network(&servers, world.instances, resource_ports, clock)?;
    let (services_link, traffic) = start_other_services(&servers, &options.scenario, clock, &events)?;
    let (watch_link, watching) = start_lease_watch(&servers, clock, &events)?;
    let mut coordinator = Coordinator {
        clock,
        proxies,
        services_link,
        watch_link,
        servers,
        replica,
        promotions: Vec::new(),
        redis_clocks: BTreeMap::new(),
        events,
        row_holds: traffic.holds(),
        inbox,
        collected: Vec::new(),
        processes: BTreeMap::new(),
        standby: None,
        prompt: false,
        runs: BTreeMap::new(),
        truth: Truth::new(record::lock_nodes(&options.scenario.settings_for(options.strategy))),
        sessions: BTreeMap::new(),
        admin,
        failure: Arc::new(Mutex::new(None)),
        arrived: 0,
        next_run: BTreeMap::new(),
        redeliver: BTreeMap::new(),
        group: supervision.group,
        lags,
        stopped_since: BTreeMap::new(),
        margins,
        options,
    };
    let played = coordinator.play();
    let ended_unix_us = unix_us();
    drop(traffic);
    drop(watchdog);
    // On an error the run is thrown away; what stop keeps does not matter then.
    let stopped = coordinator.stop(played.as_ref().map_or(0, |ended| ended.at_ms));
    let ended = played?;
    stopped?;
    // The lease watch ends before the servers it watches.
    drop(watching);
    Ok(coordinator.recorded(ended, margins, (clock.start_unix_us, ended_unix_us)))
}

/// Ctrl-C (or SIGTERM) from now on stops the run, keeping what was
/// recorded. A second run in the same process keeps the first handler,
/// which sets the same flag.
fn catch_interrupts() {
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
    INTERRUPTED.store(false, Ordering::SeqCst);
}

/// Whether live mode can play the run at all, at its scale, with the programs it needs.
fn check_playable(options: &LiveOptions) -> Result<(), String> {
    let mut reasons = unsupported(&options.scenario, options.strategy);
    reasons.extend(crate::servers::refused_on_theirs(&options.scenario, options.strategy, &options.servers));
    reasons.extend(crate::servers::unused_servers(&options.scenario, options.strategy, &options.servers));
    if !reasons.is_empty() {
        return Err(format!("live mode cannot play this run:\n  - {}", reasons.join("\n  - ")));
    }
    time_scale_fits(&options.scenario, options.strategy, options.time_scale)?;
    if options.servers.redis.is_empty() {
        for program in ["redis-server", "cc"] {
            if !on_path(program) {
                return Err(format!(
                    "`{program}` is not installed (not on PATH); scripts/setup.sh installs it from Debian's packages"
                ));
            }
        }
    }
    Ok(())
}

/// Storage and Slack, one service on two loopback ports (so that the
/// network can treat the way to each on its own): their port numbers.
fn serve_storage_and_slack(
    clock: ScaledClock,
    checks_tokens: bool,
    events: &Sender<(Option<InstanceId>, Event)>,
) -> Result<(u16, u16), String> {
    let open = || -> Result<(TcpListener, u16), String> {
        let listener =
            TcpListener::bind("127.0.0.1:0").map_err(|error| format!("cannot open the storage port: {error}"))?;
        let port = listener.local_addr().map_err(|error| error.to_string())?.port();
        Ok((listener, port))
    };
    let ((storage, storage_port), (slack, slack_port)) = (open()?, open()?);
    let highest = Arc::new(Mutex::new(BTreeMap::new()));
    serve_resources(storage, clock, checks_tokens, Arc::clone(&highest), events.clone());
    serve_resources(slack, clock, checks_tokens, highest, events.clone());
    Ok((storage_port, slack_port))
}

/// The Redis replica, when the world has one and the strategy locks on Redis.
fn start_replica(servers: &Servers, options: &LiveOptions) -> Result<Option<Replica>, String> {
    match servers.redis.first() {
        Some(primary) if has_replica(&options.scenario, options.strategy) => {
            let lag_ms = options.scenario.world.replication_lag_ms;
            Ok(Some(Replica::start(primary, lag_ms, options.time_scale)?))
        }
        Some(_) | None => Ok(None),
    }
}

/// Other services' traffic, and the proxy it reaches the database through:
/// its own, so a slowed database slows them too.
fn start_other_services(
    servers: &Servers,
    scenario: &Scenario,
    clock: ScaledClock,
    events: &Sender<(Option<InstanceId>, Event)>,
) -> Result<(Proxy, crate::background::Background), String> {
    let services_link = Proxy::start(servers.postgres_address, clock)?;
    let traffic = crate::background::start(
        (servers.postgres_via(loopback(services_link.port))?, servers.session_settings()),
        &scenario.world,
        scenario.seed,
        clock,
        scenario.horizon_ms(),
        events.clone(),
    );
    Ok((services_link, traffic))
}

/// The coordinator's watch on etcd's lease key (through a proxy of its
/// own), when the run has etcd.
fn start_lease_watch(
    servers: &Servers,
    clock: ScaledClock,
    events: &Sender<(Option<InstanceId>, Event)>,
) -> Result<(Option<Proxy>, Option<Watching>), String> {
    let Some(address) = servers.etcd_address else { return Ok((None, None)) };
    let link = Proxy::start(address, clock)?;
    let lease_key = format!("{}{}", servers.key_prefix, locklab_engine::event::LEASE_KEY);
    let watching = watch_lease_key(servers, &link, lease_key, clock, events)?;
    Ok((Some(link), Some(watching)))
}

/// The coordinator's watchdog on its own lag, and where it keeps what it saw.
fn watch_own_lag(allowed_lag: Duration) -> (Arc<Mutex<stall::Lags>>, stall::Watchdog) {
    let lags = Arc::new(Mutex::new(stall::Lags::default()));
    let coordinator_lags = Arc::clone(&lags);
    let watchdog = stall::Watchdog::start(stall::tick_for(allowed_lag), allowed_lag, move |lag| {
        if let Ok(mut lags) = coordinator_lags.lock() {
            lags.seen.push((None, lag));
        }
    });
    (lags, watchdog)
}

/// The network: every instance reaches every server (and storage and
/// Slack, on their ports) through a proxy of its own.
fn network(
    servers: &Servers,
    instances: u8,
    (storage_port, slack_port): (u16, u16),
    clock: ScaledClock,
) -> Result<BTreeMap<(InstanceId, Party), Proxy>, String> {
    let mut upstreams: Vec<(Party, SocketAddr)> = servers
        .redis_addresses
        .iter()
        .zip(0_u8..)
        .map(|(address, node)| (Party::Redis(locklab_engine::ids::RedisNodeId(node)), *address))
        .collect();
    upstreams.push((Party::Db, servers.postgres_address));
    upstreams.push((Party::Storage, loopback(storage_port)));
    upstreams.push((Party::Slack, loopback(slack_port)));
    if let Some(address) = servers.etcd_address {
        upstreams.push((Party::Consensus, address));
    }
    let mut proxies = BTreeMap::new();
    for instance in (0..instances).map(InstanceId) {
        for (party, address) in &upstreams {
            proxies.insert((instance, *party), Proxy::start(*address, clock)?);
        }
    }
    Ok(proxies)
}

impl Coordinator {
    /// The run as recorded, once it has stopped: its log, assembled from
    /// what every party reported, and how faithful the machine let it be
    /// (the lags over `run_window`, wall-clock µs, judged by `margins`).
    fn recorded(self, ended: Ended, margins: LagMargins, run_window: (u64, u64)) -> LiveRun {
        let mut recording = LiveRecording::new(self.servers.names.clone(), self.options.time_scale);
        recording.interrupted_at_ms = ended.interrupted.then_some(ended.at_ms);
        let lags = self.lags.lock().map(|lags| lags.clone()).unwrap_or_default();
        let (scenario, strategy) = (&self.options.scenario, self.options.strategy);
        stall::judge(&mut recording, &lags, margins, run_window, |scale| {
            whole_lease_seconds(scenario, strategy, scale)
        });
        let settings = scenario.settings_for(strategy);
        let log = record::assemble(self.collected, record::lock_nodes(&settings), self.promotions);
        drop(self.replica);
        drop(self.servers);
        LiveRun { log, recording }
    }
}

/// The members of etcd still running after its leader died, each with a
/// client, to see when they have elected a leader among them.
struct Survivors {
    clients: Vec<EtcdClient>,
    ids: Vec<u64>,
}

impl Survivors {
    /// How long one look at a member's status may take.
    const LOOK: Duration = Duration::from_millis(200);

    /// Clients of `members` (client ports and ids, as `EtcdServer::running` gives them).
    fn of(members: &[(u16, String)]) -> Survivors {
        let clients = members
            .iter()
            .filter_map(|(port, _)| {
                let endpoint = EtcdEndpoint::parse(&format!("http://127.0.0.1:{port}")).ok()?;
                EtcdClient::connect(&endpoint, locklab_engine::ids::LeaseId(0), Survivors::LOOK).ok()
            })
            .collect();
        Survivors { clients, ids: members.iter().filter_map(|(_, id)| id.parse().ok()).collect() }
    }

    /// Whether a survivor's status names a survivor as leader: a follower
    /// keeps naming the dead leader until it has elected another, and a
    /// member without a leader refuses the call.
    fn elected(&mut self) -> bool {
        let ids = &self.ids;
        self.clients
            .iter_mut()
            .any(|client| client.status(Survivors::LOOK).is_ok_and(|(_, leader)| ids.contains(&leader)))
    }
}

/// The coordinator's own session on the run's PostgreSQL, the lab's tables made.
fn admin_session(servers: &Servers) -> Result<PostgresSession, String> {
    let endpoint = servers.postgres_via(servers.postgres_address)?;
    let mut admin = PostgresSession::connect(&endpoint, &servers.session_settings(), SERVER_LIMIT)
        .map_err(|error| format!("cannot connect to {endpoint}: {error}"))?;
    admin
        .batch(locklab_clients::postgres::LAB_TABLES, SERVER_LIMIT)
        .map_err(|error| format!("cannot make the lab's tables on {endpoint}: {error}"))?;
    Ok(admin)
}

/// A `db_slow` factor in hundredths, as the simulator records it (validation bounds it to 1..=1000).
fn factor_percent(factor: f64) -> u32 {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let percent = (factor * 100.0) as u32;
    percent
}

/// How much higher than the machine's other work a run's processes ask to
/// be scheduled (a nice value): enough that a busy machine's compiler or a
/// spinning process rarely keeps them from running when they wake, little
/// enough to leave the machine usable.
const RUN_NICENESS: &str = "-5";

/// Asks for the run's processes to be scheduled ahead of the machine's
/// other work, where the system lets it (as root): the thread that runs the
/// run gets [`RUN_NICENESS`], and everything it starts from then on (the
/// supervisor, the servers, the instances, the proxies' threads) inherits
/// it. A run mostly sleeps, so this costs the machine little, and it makes
/// a stall (`stall.rs`) rarer; where it is refused the run plays as it is,
/// and its stalls are still measured and named. Its guard puts the thread
/// back among ordinary work when the run ends ([`schedule_this_thread_promptly`]
/// makes it real-time in between).
/// The process's pages are kept in memory too (`keep_in_memory`), for the same reason.
fn raise_priority() -> OrdinaryAfter {
    crate::keep_in_memory();
    let Some(id) = this_thread() else { return OrdinaryAfter };
    let _ = Command::new("renice")
        .args(["-n", RUN_NICENESS, "-p", &id])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    OrdinaryAfter
}

/// Asks for the thread that plays the run to be scheduled ahead of any
/// ordinary process, once the servers are up, where the system lets it (as
/// root), so that the proxies, the watchdog and the readers it starts
/// inherit it: `SCHED_RR` at the lowest real-time priority. A nice value
/// was not enough: with both cores kept busy by two spinning processes,
/// PostgreSQL's backends waited up to 0.54 s for a core (each begins a
/// session of its own, `setsid`, and where the kernel groups scheduling by
/// session, autogroup, Debian's default, a backend is a group of its own at
/// the default weight, whatever its nice value), and the run's own
/// processes at nice −5 up to 60 ms, against margins of 10–27 ms of wall
/// time (`perf sched`; docs/live.md). The servers and the instances follow
/// just before time 0 ([`Coordinator::schedule_promptly`]). A run's
/// processes mostly wait on a socket or a timer, and the kernel keeps a
/// share of each second for ordinary processes, so the machine stays usable.
fn schedule_this_thread_promptly() {
    if let Some(thread) = this_thread() {
        chrt(["--rr", "--pid", "1", &thread]);
    }
}

/// How long before time 0, on the wall clock, the run's processes become
/// real-time: the instances have had [`START_LEAD`] less this to start.
const PROMPT_LEAD: Duration = Duration::from_millis(250);

/// Every thread of each process given, made real-time (`chrt` takes one
/// process at a time).
const PROMPT_EACH: &str = "for pid; do chrt --all-tasks --rr --pid 1 \"$pid\"; done";
/// Every thread of each process given, made ordinary work again.
const ORDINARY_EACH: &str = "for pid; do chrt --all-tasks --other --pid 0 \"$pid\"; done";

/// The processes `pid` started that are still running (PostgreSQL's
/// backends, of its postmaster), as the kernel lists them.
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .map(|listed| listed.split_whitespace().filter_map(|child| child.parse().ok()).collect())
        .unwrap_or_default()
}

/// Puts the thread that plays runs back among ordinary work when a run
/// ends, however it ends: the next run on the same thread (the live tests
/// play several) starts its servers as ordinary work.
struct OrdinaryAfter;

impl Drop for OrdinaryAfter {
    fn drop(&mut self) {
        schedule_this_thread_ordinarily();
    }
}

/// Puts the calling thread back among ordinary work.
fn schedule_this_thread_ordinarily() {
    if let Some(thread) = this_thread() {
        chrt(["--other", "--pid", "0", &thread]);
    }
}

/// The calling thread's id, as the kernel numbers it.
fn this_thread() -> Option<String> {
    let thread = std::fs::read_link("/proc/thread-self").ok()?;
    thread.file_name().and_then(|id| id.to_str()).map(str::to_owned)
}

/// Runs `chrt` with `arguments`; where it is refused or missing, nothing changes.
fn chrt<Argument: AsRef<std::ffi::OsStr>>(arguments: impl IntoIterator<Item = Argument>) {
    let _ = Command::new("chrt").args(arguments).stdout(Stdio::null()).stderr(Stdio::null()).status();
}

/// Whether a program of that name is on `PATH`.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

impl Coordinator {
    /// Starts the instances, strikes the faults on time, and collects until
    /// the scenario's end and then, as the simulator does, until the runs in
    /// flight have drained (or the drain's limit), or until Ctrl-C; returns
    /// when the run ended, and how.
    fn play(&mut self) -> Result<Ended, String> {
        for index in 0..self.options.scenario.world.instances {
            self.spawn(InstanceId(index), None)?;
        }
        // An interruption here is seen again by the loop's first collect.
        let lead_ms = i64::try_from(PROMPT_LEAD.as_millis()).unwrap_or(0) * i64::from(self.clock.time_scale);
        let _ = self.collect_until(-lead_ms);
        self.schedule_promptly();
        let mut faults: Vec<Fault> = self.options.scenario.faults.clone();
        faults.sort_by_key(Fault::at_ms);
        let mut later: Vec<(u64, Later)> = Vec::new();
        let mut next_fault = 0;
        let end_ms = self.options.scenario.duration_ms();
        let horizon_ms = self.options.scenario.horizon_ms();
        // How often the drain looks whether the runs are done: 20 ms of wall time.
        let poll_ms = u64::from(self.options.time_scale) * 20;
        loop {
            later.sort();
            let now = u64::try_from(self.clock.now_ms()).unwrap_or(0);
            if now >= end_ms && self.drained(&later, now) {
                return Ok(Ended { at_ms: now, interrupted: false });
            }
            let fault_at = faults.get(next_fault).map(Fault::at_ms);
            let later_at = later.first().map(|(at, _)| *at);
            let look_at = if now < end_ms { end_ms } else { now + poll_ms };
            let next_at =
                [fault_at, later_at, Some(look_at), Some(horizon_ms)].into_iter().flatten().min().unwrap_or(end_ms);
            if !self.collect_until(i64::try_from(next_at).unwrap_or(i64::MAX)) {
                if let Some(failed) = self.failure.lock().ok().and_then(|failure| failure.clone()) {
                    return Err(failed);
                }
                let at_ms = u64::try_from(self.clock.now_ms()).unwrap_or(0);
                return Ok(Ended { at_ms, interrupted: true });
            }
            if next_at >= horizon_ms {
                return Ok(Ended { at_ms: horizon_ms, interrupted: false });
            }
            if fault_at == Some(next_at) || later_at == Some(next_at) {
                self.late_by(next_at);
            }
            if later_at == Some(next_at) {
                let (_, what) = later.remove(0);
                self.later(what, next_at)?;
            } else if fault_at == Some(next_at) {
                let fault = faults[next_fault].clone();
                next_fault += 1;
                later.extend(self.strike(&fault)?);
            }
        }
    }

    /// Whether nothing of the job is in flight (the simulator's `drained`):
    /// every run has ended, no job waits for a queued restart to be handed
    /// out again, and no write an instance sent can still be held back by
    /// a delayed link.
    fn drained(&self, later: &[(u64, Later)], now_ms: u64) -> bool {
        let delayed_until_ms = self
            .options
            .scenario
            .faults
            .iter()
            .filter_map(|fault| match fault {
                Fault::NetworkDelay { at_ms, duration_ms, extra_ms, .. } => Some(at_ms + duration_ms + extra_ms),
                Fault::OomKill { .. }
                | Fault::HostLoss { .. }
                | Fault::GcPause { .. }
                | Fault::ClockJump { .. }
                | Fault::ClockDrift { .. }
                | Fault::Partition { .. }
                | Fault::RedisRestart { .. }
                | Fault::RedisFailover { .. }
                | Fault::ConsensusLeaderLoss { .. }
                | Fault::DbSlow { .. } => None,
            })
            .max()
            .unwrap_or(0);
        let handed_back_later = later.iter().any(|(_, what)| {
            matches!(what, Later::Restart(instance) if self.redeliver.get(instance).is_some_and(|jobs| !jobs.is_empty()))
        });
        now_ms >= delayed_until_ms && !handed_back_later && self.runs.values().all(|seen| seen.ended)
    }

    /// Takes in every event reported until the scenario's time `at_ms`, and
    /// says how the run goes; false when an interruption (Ctrl-C) ends the run.
    fn collect_until(&mut self, at_ms: i64) -> bool {
        let mut told = std::time::Instant::now();
        self.tell(None);
        loop {
            if INTERRUPTED.load(Ordering::SeqCst) || self.failure.lock().is_ok_and(|failure| failure.is_some()) {
                return false;
            }
            if told.elapsed() >= PROGRESS_EVERY {
                told = std::time::Instant::now();
                self.tell(None);
            }
            let now = self.clock.now_ms();
            let left = u64::try_from(at_ms.saturating_sub(now)).unwrap_or(0);
            if left == 0 {
                break;
            }
            // Wake at least every 50 ms of wall time to notice an interruption.
            let wait = self.clock.real(left).min(Duration::from_millis(50));
            if let Ok((source, event)) = self.inbox.recv_timeout(wait) {
                self.take(source, event);
            }
        }
        while let Ok((source, event)) = self.inbox.try_recv() {
            self.take(source, event);
        }
        true
    }

    /// Tells the progress hook where the run is, and what happened if anything.
    fn tell(&self, happened: Option<String>) {
        if let Some(progress) = self.options.progress {
            let at_ms = u64::try_from(self.clock.now_ms()).unwrap_or(0);
            progress(&Progress { at_ms, window_ms: self.options.scenario.duration_ms(), happened });
        }
    }

    /// Something due at `due_ms` is done only now: the coordinator ran late
    /// (its own work, or the machine), which moves the fault as a lag would.
    fn late_by(&self, due_ms: u64) {
        let now = u64::try_from(self.clock.now_ms()).unwrap_or(0);
        let late = self.clock.real(now.saturating_sub(due_ms));
        if late > self.margins.network_lag(self.clock) / 2 {
            let lag_us = u64::try_from(late.as_micros()).unwrap_or(u64::MAX);
            let from_unix_us = unix_us().saturating_sub(lag_us);
            if let Ok(mut lags) = self.lags.lock() {
                lags.seen.push((None, stall::Lag { from_unix_us, lag_us }));
            }
        }
    }

    /// A fault stopped `instance`'s process now (SIGSTOP): its lag from now
    /// until it runs again is the fault's, not the machine's.
    fn stopped(&mut self, instance: InstanceId) {
        self.stopped_since.insert(instance, unix_us());
    }

    /// `instance`'s process runs again, or is gone: the stop is over.
    fn resumed(&mut self, instance: InstanceId) {
        if let Some(since) = self.stopped_since.remove(&instance)
            && let Ok(mut lags) = self.lags.lock()
        {
            lags.stopped.push((instance, (since, unix_us())));
        }
    }

    /// Keeps an event, and what it says of its run.
    fn take(&mut self, source: Option<InstanceId>, event: Event) {
        if let Some(instance) = source {
            if let EventKind::Run { run, period, phase, .. } = &event.kind {
                let seen = self.runs.entry((instance, run.0)).or_default();
                seen.period = period.0;
                match phase {
                    RunPhase::Started => seen.started = true,
                    RunPhase::Finished | RunPhase::Aborted(_) | RunPhase::GaveUp | RunPhase::Skipped => {
                        seen.ended = true;
                    }
                    RunPhase::Trying | RunPhase::Busy | RunPhase::Acquired | RunPhase::Redelivered(_) => {}
                }
                let next = self.next_run.entry(instance).or_default();
                *next = (*next).max(run.0 + 1);
            } else if let EventKind::Belief { run, holds, token, .. } = &event.kind {
                self.arrived += 1;
                let seen = self.runs.entry((instance, run.0)).or_default();
                seen.believes = *holds;
                seen.believed_since = holds.then_some(self.arrived);
                if *holds {
                    seen.token = *token;
                }
            } else if let EventKind::Sql { session, .. } = &event.kind {
                self.sessions.entry(instance).or_default().insert(*session);
            }
        }
        self.row_holds.note(&event);
        self.truth.feed(event.clone());
        self.collected.push((source, event));
    }

    fn record(&mut self, kind: EventKind) {
        let at_ms = u64::try_from(self.clock.now_ms()).unwrap_or(0);
        self.record_at(None, at_ms, kind);
    }

    /// Starts `instance`'s process (again, after a crash, when `restarted_at_ms`
    /// says when). Its plan goes on its input, first line, however long the
    /// scenario: a command line has a limit. It joins the supervisor's process group.
    fn spawn(&mut self, instance: InstanceId, restarted_at_ms: Option<u64>) -> Result<(), String> {
        let instance_lag = self.margins.process_lag(self.clock);
        let plan = InstancePlan {
            instance,
            scenario_json: self.options.scenario.to_json(),
            strategy: self.options.strategy,
            clock: (self.clock.start_unix_us, self.clock.time_scale),
            redis: self.redis_dials(instance),
            postgres: Dial {
                url: self.servers.postgres_url.clone(),
                proxy_port: self.port_of(instance, Party::Db).unwrap_or(0),
            },
            postgres_schema: self.servers.postgres_schema.clone(),
            etcd: self.etcd_dial(instance),
            storage_port: self.port_of(instance, Party::Storage).unwrap_or(0),
            slack_port: self.port_of(instance, Party::Slack).unwrap_or(0),
            first_run: self.next_run.get(&instance).copied().unwrap_or(0),
            redeliver: self.redeliver.remove(&instance).unwrap_or_default(),
            restarted: restarted_at_ms.is_some(),
            due_ms: restarted_at_ms.unwrap_or(0),
            key_prefix: self.servers.key_prefix.clone(),
            lag_tick_us: u64::try_from(stall::tick_for(instance_lag).as_micros()).unwrap_or(u64::MAX),
            lag_report_over_us: u64::try_from(instance_lag.as_micros()).unwrap_or(u64::MAX),
            flights_under_ms: self.margins.flights_under_ms(),
        };
        let plan = serde_json::to_string(&plan).map_err(|error| error.to_string())?;
        // Only a restart takes the waiting process: a first one starts before time 0.
        let standby = if restarted_at_ms.is_some() { self.standby.take() } else { None };
        let Standby { mut process, output } = match standby {
            Some(standby) => standby,
            None => self.start_process()?,
        };
        if let Some(input) = process.stdin.as_mut() {
            writeln!(input, "{plan}").map_err(|error| format!("cannot hand {instance} its plan: {error}"))?;
        }
        let (events, lags, failure) = (self.events.clone(), Arc::clone(&self.lags), Arc::clone(&self.failure));
        std::thread::spawn(move || read_instance(instance, output, &events, &lags, &failure));
        self.processes.insert(instance, process);
        if self.standby.is_none() && self.restarts_to_come(restarted_at_ms.unwrap_or(0)) {
            self.standby = Some(self.start_process()?);
        }
        Ok(())
    }

    /// Starts an instance process, which waits for its plan on its input.
    /// Out of the terminal's process group: a Ctrl-C at the terminal
    /// reaches the coordinator, which stops the instances itself, in order.
    fn start_process(&self) -> Result<Standby, String> {
        let group = i32::try_from(self.group).unwrap_or(0);
        // Before time 0 an instance starts as ordinary work (see
        // [`Coordinator::schedule_promptly`]); from then on it is the run's
        // own work, real-time as the thread that starts it.
        let mut command = if !self.prompt && on_path("chrt") {
            let mut ordinary = Command::new("chrt");
            ordinary.args(["--other", "0"]).arg(&self.options.program);
            ordinary
        } else {
            Command::new(&self.options.program)
        };
        let mut child = command
            .process_group(group)
            .arg("live-instance")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|error| format!("cannot start an instance ({}): {error}", self.options.program.display()))?;
        let stdin = child.stdin.take();
        let output = child.stdout.take().ok_or("an instance has no output")?;
        Ok(Standby { process: Process { child, stdin }, output })
    }

    /// Makes the run's processes real-time, just before time 0, where the
    /// system lets it: the servers (every thread, and PostgreSQL's backends
    /// with them, so that one forked later inherits it), the instances and
    /// the one waiting for a restart. Until then they start as ordinary
    /// work: with eight runs at once (the live tests), a run's start (its
    /// instances' exec, a dozen backends forking, 1–3 ms each) otherwise
    /// went ahead of the other runs' real-time processes and held them back
    /// 10–17 ms (`perf sched`), against margins of 5–10 ms of wall time.
    fn schedule_promptly(&mut self) {
        self.schedule_processes(PROMPT_EACH);
        self.prompt = true;
    }

    /// Makes the run's processes and this thread ordinary work again as the
    /// run stops: their ends (instances exiting, backends closing, a
    /// server's shutdown) are no longer the run's, and five runs ending at
    /// once held a sixth's real-time coordinator back 20–25 ms.
    fn schedule_ordinarily(&mut self) {
        self.schedule_processes(ORDINARY_EACH);
        schedule_this_thread_ordinarily();
        self.prompt = false;
    }

    /// Runs `script` over the run's processes (see [`PROMPT_EACH`]), as one
    /// ordinary process, so that its work goes behind the other runs'.
    fn schedule_processes(&self, script: &str) {
        let postgres = self.servers.postgres.iter().filter_map(PgServer::pid);
        let backends = postgres.clone().flat_map(children);
        let redis = self.servers.redis.iter().filter_map(RedisServer::pid);
        let etcd = self.servers.etcd.iter().flat_map(EtcdServer::pids);
        let instances = self.processes.values().chain(self.standby.iter().map(|standby| &standby.process));
        let pids: Vec<String> = postgres
            .chain(backends)
            .chain(redis)
            .chain(etcd)
            .chain(instances.map(|process| process.child.id()))
            .map(|pid| pid.to_string())
            .collect();
        chrt(["--other", "0", "sh", "-c", script, "sh"].into_iter().map(str::to_owned).chain(pids));
    }

    /// Whether a fault restarts an instance after `from_ms`, so that a
    /// process should be waiting for it ([`Standby`]): after the last
    /// restart, none is started (a start is work the restarted instance
    /// would share the machine with).
    fn restarts_to_come(&self, from_ms: u64) -> bool {
        self.options.scenario.faults.iter().any(|fault| match fault {
            Fault::OomKill { at_ms, restart_after_ms, .. } | Fault::HostLoss { at_ms, restart_after_ms, .. } => {
                restart_after_ms.is_some_and(|after| at_ms.saturating_add(after) > from_ms)
            }
            Fault::GcPause { .. }
            | Fault::Partition { .. }
            | Fault::DbSlow { .. }
            | Fault::NetworkDelay { .. }
            | Fault::RedisRestart { .. }
            | Fault::RedisFailover { .. }
            | Fault::ConsensusLeaderLoss { .. }
            | Fault::ClockJump { .. }
            | Fault::ClockDrift { .. } => false,
        })
    }

    /// How `instance` reaches each Redis node: the node's URL, and its own proxy's port.
    fn redis_dials(&self, instance: InstanceId) -> Vec<Dial> {
        self.proxies
            .range((instance, Party::Redis(locklab_engine::ids::RedisNodeId(0)))..)
            .take_while(|((owner, party), _)| *owner == instance && matches!(party, Party::Redis(_)))
            .zip(&self.servers.redis_urls)
            .map(|((_, proxy), url)| Dial { url: url.clone(), proxy_port: proxy.port })
            .collect()
    }

    /// How `instance` reaches etcd, under consensus.
    fn etcd_dial(&self, instance: InstanceId) -> Option<Dial> {
        let url = self.servers.etcd_url.clone()?;
        Some(Dial { url, proxy_port: self.port_of(instance, Party::Consensus)? })
    }

    /// Redlock's delayed restart keeps a node out one TTL more (the Redis page's advice).
    fn restart_delay_ms(&self) -> u64 {
        match self.options.scenario.settings_for(self.options.strategy) {
            StrategySettings::Redlock(redlock) if redlock.delayed_restart => redlock.ttl_ms,
            StrategySettings::Redlock(_)
            | StrategySettings::Naive(_)
            | StrategySettings::Fencing(_)
            | StrategySettings::DbLock(_)
            | StrategySettings::UniqueInsert
            | StrategySettings::Consensus(_) => 0,
        }
    }

    /// A clock fault on one party: an instance is told on its input (its
    /// clock is its own); a Redis node's wall clock is stepped through its
    /// shim, in the wall clock's ms.
    fn change_clock(&mut self, party: Party, fault: &Fault) -> Result<(), String> {
        let line = match fault {
            Fault::ClockJump { by_ms, .. } => format!("jump {by_ms}"),
            Fault::ClockDrift { ppm, .. } => format!("drift {ppm}"),
            Fault::OomKill { .. }
            | Fault::HostLoss { .. }
            | Fault::GcPause { .. }
            | Fault::NetworkDelay { .. }
            | Fault::Partition { .. }
            | Fault::RedisRestart { .. }
            | Fault::RedisFailover { .. }
            | Fault::ConsensusLeaderLoss { .. }
            | Fault::DbSlow { .. } => return Ok(()),
        };
        match party {
            Party::Instance(instance) => {
                if let Some(stdin) = self.processes.get_mut(&instance).and_then(|process| process.stdin.as_mut()) {
                    writeln!(stdin, "{line}").map_err(|error| format!("cannot reach {instance}: {error}"))?;
                }
                Ok(())
            }
            Party::Redis(node) => {
                // The shim moves the wall clock: a step is scaled to it, a
                // drift's rate is the same on either clock.
                let now = u64::try_from(self.clock.now_ms()).unwrap_or(0);
                let scale = i64::from(self.clock.time_scale);
                let clock = self.redis_clocks.entry(node.0).or_default();
                let server = self.servers.redis.get_mut(usize::from(node.0));
                if let Fault::ClockJump { by_ms, .. } = fault {
                    clock.jump(now, *by_ms);
                    server.map(|server| server.step_clock(by_ms / scale)).transpose()?;
                } else if let Fault::ClockDrift { ppm, .. } = fault {
                    clock.set_drift(now, *ppm);
                    server.map(|server| server.set_drift(*ppm)).transpose()?;
                }
                let (local_ms, drift_ppm) = (clock.local_at(now), clock.drift_ppm());
                self.record(EventKind::Clock { party, local_ms, drift_ppm });
                Ok(())
            }
            Party::RedisReplica | Party::Db | Party::Storage | Party::Slack | Party::Consensus => Ok(()),
        }
    }

    /// The port `instance` reaches `party` on: its proxy's.
    fn port_of(&self, instance: InstanceId, party: Party) -> Option<u16> {
        self.proxies.get(&(instance, party)).map(|proxy| proxy.port)
    }

    /// The parties a target names now.
    fn parties(&self, target: Target) -> Vec<Party> {
        match target {
            Target::Party(party) => vec![party],
            Target::AllRedis => self
                .proxies
                .keys()
                .map(|(_, party)| *party)
                .filter(|party| matches!(party, Party::Redis(_)))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
            Target::Holder => self.resolve(Target::Holder).map(Party::Instance).into_iter().collect(),
        }
    }

    /// Rules on the links between two sets of parties: bytes from `from` to
    /// `to` (and back, when `both_ways`) meet `effect` from now for `duration_ms`.
    fn cut(&self, from: &[Party], to: &[Party], both_ways: bool, effect: Effect, duration_ms: u64) {
        let now = u64::try_from(self.clock.now_ms()).unwrap_or(0);
        let rule = |direction| Rule { direction, from_ms: now, until_ms: now + duration_ms, effect };
        for a in from {
            for b in to {
                let (instance, server, direction) = match (a.instance(), b.instance()) {
                    (Some(instance), None) => (instance, *b, Direction::Out),
                    (None, Some(instance)) => (instance, *a, Direction::Back),
                    (Some(_), Some(_)) | (None, None) => continue,
                };
                if let Some(proxy) = self.proxies.get(&(instance, server)) {
                    proxy.add(rule(direction));
                    if both_ways {
                        let back = match direction {
                            Direction::Out => Direction::Back,
                            Direction::Back => Direction::Out,
                        };
                        proxy.add(rule(back));
                    }
                }
            }
        }
    }

    /// The instance a target names now: by the lock's holder as its own
    /// reports show it (the one that has believed longest), else the oldest live job.
    fn resolve(&self, target: Target) -> Option<InstanceId> {
        match target {
            Target::Party(Party::Instance(instance)) => Some(instance),
            Target::Party(
                Party::Redis(_) | Party::RedisReplica | Party::Db | Party::Storage | Party::Slack | Party::Consensus,
            )
            | Target::AllRedis => None,
            Target::Holder => {
                // By the lock service's truth, else the run that has believed
                // longest, else the oldest job still running (as the simulator resolves it).
                let live = |instance: InstanceId, run: u32| {
                    self.processes.contains_key(&instance)
                        && self.runs.get(&(instance, run)).is_some_and(|seen| !seen.ended)
                };
                if let Some((_, instance)) = self.truth.holder.filter(|(run, instance)| live(*instance, run.0)) {
                    return Some(instance);
                }
                let running = || self.runs.iter().filter(|((instance, run), _)| live(*instance, *run));
                let believer = running()
                    .filter_map(|((instance, _), seen)| seen.believed_since.map(|since| (since, *instance)))
                    .min()
                    .map(|(_, instance)| instance);
                believer.or_else(|| running().find(|(_, seen)| seen.started).map(|((instance, _), _)| *instance))
            }
        }
    }

    fn signal(&self, instance: InstanceId, signal: Signal) -> Result<(), String> {
        let process = self.processes.get(&instance).ok_or_else(|| format!("{instance} has no process"))?;
        send_signal(&process.child, signal).map_err(|error| format!("{signal} to {instance} failed: {error}"))
    }

    /// Strikes a fault; returns what it sets in motion for later.
    fn strike(&mut self, fault: &Fault) -> Result<Vec<(u64, Later)>, String> {
        self.tell(Some(fault.to_string()));
        let now = u64::try_from(self.clock.now_ms()).unwrap_or(0);
        match fault {
            Fault::NetworkDelay { from, to, extra_ms, duration_ms, .. } => {
                self.strike_links(fault, (*from, *to), false, Effect::Delay { extra_ms: *extra_ms }, *duration_ms);
                Ok(Vec::new())
            }
            Fault::Partition { between, duration_ms, one_way, .. } => {
                self.strike_links(fault, (between[0], between[1]), !one_way, Effect::Drop, *duration_ms);
                Ok(Vec::new())
            }
            Fault::ClockJump { target, .. } | Fault::ClockDrift { target, .. } => {
                let targets = self.parties(*target);
                self.record(EventKind::Fault { fault: fault.clone(), targets: targets.clone() });
                for party in targets {
                    self.change_clock(party, fault)?;
                }
                Ok(Vec::new())
            }
            Fault::RedisRestart { target, down_ms, .. } => {
                let targets = self.parties(*target);
                self.record(EventKind::Fault { fault: fault.clone(), targets: targets.clone() });
                let mut later = Vec::new();
                for party in targets {
                    later.extend(self.restart_redis(party, *down_ms, now)?);
                }
                Ok(later)
            }
            Fault::RedisFailover { target, .. } => self.fail_over(fault, *target, now),
            Fault::DbSlow { factor, duration_ms, .. } => {
                self.slow_database(fault, *factor, *duration_ms, now);
                Ok(Vec::new())
            }
            Fault::ConsensusLeaderLoss { .. } => {
                self.record(EventKind::Fault { fault: fault.clone(), targets: vec![Party::Consensus] });
                self.lose_leader(now)
            }
            Fault::OomKill { target, restart_after_ms, .. } => {
                let Some(instance) = self.struck_instance(fault, *target) else { return Ok(Vec::new()) };
                self.kill(instance)?;
                Ok(restart_after_ms.map(|after| (now + after, Later::Restart(instance))).into_iter().collect())
            }
            Fault::HostLoss { target, restart_after_ms, .. } => {
                let Some(instance) = self.struck_instance(fault, *target) else { return Ok(Vec::new()) };
                self.lose_host(instance, *restart_after_ms, now)
            }
            Fault::GcPause { target, duration_ms, .. } => {
                let Some(instance) = self.struck_instance(fault, *target) else { return Ok(Vec::new()) };
                self.stopped(instance);
                self.signal(instance, Signal::SIGSTOP)?;
                let until_ms = now + duration_ms;
                self.record(EventKind::Process { instance, state: ProcessState::Paused { until_ms } });
                Ok(vec![(until_ms, Later::Resume(instance))])
            }
        }
    }

    /// A network fault on every link between two sides, both ways or one.
    fn strike_links(
        &mut self,
        fault: &Fault,
        sides: (Target, Target),
        both_ways: bool,
        effect: Effect,
        duration_ms: u64,
    ) {
        let (from, to) = (self.parties(sides.0), self.parties(sides.1));
        let mut targets = from.clone();
        targets.extend(to.iter().copied());
        self.record(EventKind::Fault { fault: fault.clone(), targets });
        self.cut(&from, &to, both_ways, effect, duration_ms);
    }

    /// The instance a fault on `target` strikes, if it names a running one;
    /// the fault is recorded with it, or with nothing to strike.
    fn struck_instance(&mut self, fault: &Fault, target: Target) -> Option<InstanceId> {
        let instance = self.resolve(target).filter(|instance| self.processes.contains_key(instance));
        let targets = instance.map(Party::Instance).into_iter().collect();
        self.record(EventKind::Fault { fault: fault.clone(), targets });
        instance
    }

    /// The primary dies; its replica is promoted `failover_ms` later with
    /// whatever had reached it. A node with no replica (or one already
    /// promoted) is down that long and comes back empty.
    fn fail_over(&mut self, fault: &Fault, target: Target, now: u64) -> Result<Vec<(u64, Later)>, String> {
        let targets = self.parties(target);
        self.record(EventKind::Fault { fault: fault.clone(), targets: targets.clone() });
        let failover_ms = self.options.scenario.world.failover_ms;
        let mut later = Vec::new();
        for party in targets {
            let promotes = self.replica.as_ref().map(|replica| replica.primary_held.is_none());
            match (party == record::PRIMARY, promotes) {
                (true, Some(true)) => later.push(self.fail_primary(now)?),
                (true, Some(false)) => {}
                (false, _) | (true, None) => later.extend(self.restart_redis(party, failover_ms, now)?),
            }
        }
        Ok(later)
    }

    /// The server answers `factor` times slower: each answer is held back
    /// by what the simulator adds to its statement's time.
    fn slow_database(&mut self, fault: &Fault, factor: f64, duration_ms: u64, now: u64) {
        self.record(EventKind::Fault { fault: fault.clone(), targets: vec![Party::Db] });
        self.record(EventKind::DbSlow { factor_percent: factor_percent(factor) });
        let extra = |base_ms: u64| Effect::Delay {
            extra_ms: locklab_engine::strategy::slowed_ms(base_ms, factor).saturating_sub(base_ms),
        };
        let rule = |effect| Rule { direction: Direction::Back, from_ms: now, until_ms: now + duration_ms, effect };
        for ((_, party), proxy) in &self.proxies {
            if *party == Party::Db {
                proxy.add(rule(extra(locklab_engine::strategy::STATEMENT_MS)));
            }
        }
        self.services_link.add(rule(extra(locklab_engine::strategy::BACKGROUND_QUERY_MS)));
    }

    /// The machine is gone: its process stops where it is, and its
    /// connections go silent with no FIN; the servers find out when their
    /// TCP keepalive gives up.
    fn lose_host(
        &mut self,
        instance: InstanceId,
        restart_after_ms: Option<u64>,
        now: u64,
    ) -> Result<Vec<(u64, Later)>, String> {
        self.stopped(instance);
        self.signal(instance, Signal::SIGSTOP)?;
        let keepalive_ms = self.options.scenario.world.tcp_keepalive_ms;
        for ((owner, _), proxy) in &self.proxies {
            if *owner == instance {
                proxy.silence(now + keepalive_ms);
            }
        }
        self.end_runs(instance, now);
        self.record_at(None, now, EventKind::Process { instance, state: ProcessState::HostLost });
        let mut later = vec![(now + keepalive_ms, Later::KeepaliveGaveUp(instance))];
        later.extend(restart_after_ms.map(|after| (now + after, Later::Restart(instance))));
        Ok(later)
    }

    /// A restart without persistence: the node goes down now, forgetting
    /// its keys, and is back (empty) `down_ms` later, plus Redlock's delay.
    fn restart_redis(&mut self, party: Party, down_ms: u64, now: u64) -> Result<Option<(u64, Later)>, String> {
        let Party::Redis(node) = party else { return Ok(None) };
        let back_ms = now + down_ms + self.restart_delay_ms();
        let Some(server) = self.servers.redis.get_mut(usize::from(node.0)) else { return Ok(None) };
        let keys = match local_redis(server.port).and_then(|mut client| local_call(&mut client, &["DBSIZE"])) {
            Ok(Value::Int(keys)) => u32::try_from(keys).unwrap_or(u32::MAX),
            Ok(_) | Err(_) => 0,
        };
        server.shut_down()?;
        self.record(EventKind::RedisDown { node: party });
        if keys > 0 {
            self.record(EventKind::KeysLost { node: party, keys });
        }
        Ok(Some((back_ms, Later::RedisUp(node.0))))
    }

    /// The primary dies as a crash kills it (SIGKILL: what its replica had
    /// not received is gone); the promotion is due `failover_ms` later.
    fn fail_primary(&mut self, now: u64) -> Result<(u64, Later), String> {
        let primary = self.servers.redis.first_mut().ok_or("no Redis node to fail over")?;
        let held = held_keys(primary.port)?;
        primary.kill()?;
        if let Some(replica) = self.replica.as_mut() {
            replica.link.sever();
            replica.primary_held = Some(held);
        }
        self.record(EventKind::RedisDown { node: record::PRIMARY });
        Ok((now + self.options.scenario.world.failover_ms, Later::Promote))
    }

    /// etcd's leader dies (SIGKILL). Every client's way to etcd leads to a
    /// member still running from now on, as an etcd client with the
    /// cluster's endpoints fails over; the store is leaderless until the
    /// others elect one, which a thread watches for and records. The dead
    /// member is started again after twice the failover time, as a follower.
    /// Without a cluster (etcd is not in use) only the fault is recorded.
    fn lose_leader(&mut self, now: u64) -> Result<Vec<(u64, Later)>, String> {
        let Some(etcd) = self.servers.etcd.as_mut() else { return Ok(Vec::new()) };
        if etcd.size() < 3 || etcd.running().len() < etcd.size() {
            return Ok(Vec::new()); // a leader already lost is not lost again
        }
        let Some(leader) = etcd.leader() else { return Ok(Vec::new()) };
        etcd.kill(leader)?;
        let survivors = etcd.running();
        let survivor = loopback(etcd.port());
        for ((_, party), proxy) in &self.proxies {
            if *party == Party::Consensus {
                proxy.repoint(survivor);
            }
        }
        if let Some(link) = &self.watch_link {
            link.repoint(survivor);
        }
        self.record(EventKind::Leader { up: false });
        let (events, clock) = (self.events.clone(), self.clock);
        std::thread::spawn(move || {
            let asked = std::time::Instant::now();
            let mut survivors = Survivors::of(&survivors);
            while !survivors.elected() {
                if asked.elapsed() > Duration::from_secs(60) {
                    return;
                }
                // Waiting for the condition: the survivors have elected a leader.
                std::thread::sleep(Duration::from_millis(2));
            }
            let at_ms = u64::try_from(clock.now_ms()).unwrap_or(0);
            let _ = events.send((None, Event { at_ms, kind: EventKind::Leader { up: true } }));
        });
        let back_ms = now + 2 * self.options.scenario.world.failover_ms;
        Ok(vec![(back_ms, Later::MemberBack(u8::try_from(leader).unwrap_or(u8::MAX)))])
    }

    /// The failover's end: the replica is made a primary (`REPLICAOF NO
    /// ONE`) with whatever it had, and every instance's way to the primary
    /// leads to it. What it lacks of the dead primary's lock key and
    /// counter is recorded as lost.
    fn promote(&mut self) -> Result<(), String> {
        let Some(replica) = self.replica.as_ref() else { return Ok(()) };
        let mut client = local_redis(replica.server.port)?;
        local_call(&mut client, &["REPLICAOF", "NO", "ONE"])?;
        let kept = held_keys(replica.server.port)?;
        let ttl_ms = match local_call(&mut client, &["PTTL", locklab_engine::event::LOCK_KEY])? {
            Value::Int(ttl_ms) => ttl_ms,
            other => return Err(format!("live mode's Redis answered PTTL with {other:?}")),
        };
        for ((_, party), proxy) in &self.proxies {
            if *party == record::PRIMARY {
                proxy.repoint(loopback(replica.server.port));
            }
        }
        let lost = replica
            .primary_held
            .as_ref()
            .map_or(0, |held| u32::from(held[0].is_some() && held[0] != kept[0]) + u32::from(held[1] != kept[1]));
        let now = u64::try_from(self.clock.now_ms()).unwrap_or(0);
        // PTTL counts the wall clock's ms; -1 is a key with no expiry.
        let expires_ms = match u64::try_from(ttl_ms) {
            Ok(ttl_ms) => now + ttl_ms * u64::from(self.clock.time_scale),
            Err(_) => u64::MAX / 2,
        };
        let lock = client.execute(RedisCommand::Get, SERVER_LIMIT).map_err(|error| error.to_string())?;
        let key = match lock {
            RedisReply::Value(value) => Some((value, expires_ms)),
            RedisReply::Ok
            | RedisReply::Nil
            | RedisReply::Integer(_)
            | RedisReply::ConnectionRefused
            | RedisReply::Timeout => None,
        };
        let counter = kept[1].as_deref().and_then(|counter| counter.parse().ok()).unwrap_or(0);
        let promotion = record::Promotion { key, counter };
        self.promotions.push(promotion);
        self.truth.promotions.push(promotion);
        self.record(EventKind::RedisUp { node: Party::RedisReplica, promoted: true });
        if lost > 0 {
            self.record(EventKind::KeysLost { node: Party::RedisReplica, keys: lost });
        }
        Ok(())
    }

    /// SIGKILL: the process's runs end where they were; the job runner
    /// remembers the jobs that had started, to hand them back on restart.
    fn kill(&mut self, instance: InstanceId) -> Result<(), String> {
        let before = self.client_sessions();
        // Everything the death ends happens at the signal, whenever it is written down.
        let died_ms = u64::try_from(self.clock.now_ms()).unwrap_or(0);
        if let Some(mut process) = self.processes.remove(&instance) {
            process.child.kill().map_err(|error| format!("cannot kill {instance}: {error}"))?;
            let _ = process.child.wait();
        }
        self.resumed(instance);
        self.end_runs(instance, died_ms);
        self.record_at(None, died_ms, EventKind::Process { instance, state: ProcessState::Dead });
        self.sessions_closed(instance, before);
        Ok(())
    }

    /// The runs `instance`'s process had going end with it; the job runner
    /// remembers the jobs that had started, to hand them back on restart.
    fn end_runs(&mut self, instance: InstanceId, died_ms: u64) {
        // What it said before it died still counts.
        while let Ok((source, event)) = self.inbox.try_recv() {
            self.take(source, event);
        }
        let redeliver = self.options.scenario.world.redeliver_after_crash;
        let live: Vec<(u32, Seen)> = self
            .runs
            .iter()
            .filter(|((owner, _), seen)| *owner == instance && !seen.ended)
            .map(|((_, run), seen)| (*run, *seen))
            .collect();
        for (run, seen) in live {
            if redeliver && seen.started {
                let job = Redelivery { run, period: seen.period };
                self.redeliver.entry(instance).or_default().push(job);
            }
            let (id, period) = (RunId(run), Period(seen.period));
            let phase = RunPhase::Aborted(AbortReason::ProcessDied);
            self.record_at(Some(instance), died_ms, EventKind::Run { run: id, instance, period, phase });
            if seen.believes {
                let belief = EventKind::Belief { instance, run: id, holds: false, token: None };
                self.record_at(Some(instance), died_ms, belief);
            }
            if let Some(seen) = self.runs.get_mut(&(instance, run)) {
                seen.ended = true;
                seen.believes = false;
            }
        }
    }

    /// How many client sessions the server has open now (the coordinator's own aside).
    fn client_sessions(&mut self) -> Option<u64> {
        let sql =
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'locklab-live' AND pid <> pg_backend_pid()";
        self.admin.batch(sql, SERVER_LIMIT).ok()?.first_value()?.parse().ok()
    }

    /// The kernel closed a killed process's sockets: waits until the server
    /// has ended its sessions (or [`EXIT_GRACE`] passes) and records each.
    fn sessions_closed(&mut self, instance: InstanceId, before: Option<u64>) {
        let sessions = self.sessions.remove(&instance).unwrap_or_default();
        let Some(before) = before else { return };
        let gone = u64::try_from(sessions.len()).unwrap_or(0);
        let asked = std::time::Instant::now();
        while self.client_sessions().is_some_and(|open| open + gone > before) && asked.elapsed() < EXIT_GRACE {
            // Waiting for the condition: the server has noticed the closed sockets.
            std::thread::sleep(Duration::from_millis(2));
        }
        self.record_sessions_ended(instance, sessions, TerminateReason::ClientDisconnected);
    }

    /// The server ended `instance`'s sessions, for `reason`.
    fn record_sessions_ended(
        &mut self,
        instance: InstanceId,
        sessions: std::collections::BTreeSet<locklab_engine::ids::SessionId>,
        reason: TerminateReason,
    ) {
        let client = locklab_engine::event::DbClient::Instance(instance);
        let change = locklab_engine::event::ConnectionChange::Terminated(reason);
        for session in sessions {
            self.record(EventKind::Connection { session, client, change });
        }
    }

    /// An event the coordinator writes, at a time that may be already past
    /// (for a process that died then, its events are tagged as its own).
    /// The lock service's truth the faults resolve `holder` by sees it too.
    fn record_at(&mut self, source: Option<InstanceId>, at_ms: u64, kind: EventKind) {
        let event = Event { at_ms, kind };
        self.truth.feed(event.clone());
        self.collected.push((source, event));
    }

    /// Does `what`, due at `at_ms`.
    fn later(&mut self, what: Later, at_ms: u64) -> Result<(), String> {
        match what {
            Later::Resume(instance) => {
                if self.processes.contains_key(&instance) {
                    self.signal(instance, Signal::SIGCONT)?;
                    self.resumed(instance);
                    self.record(EventKind::Process { instance, state: ProcessState::Running });
                    self.tell(Some(format!("{instance} resumes")));
                }
                Ok(())
            }
            Later::Restart(instance) => {
                // A lost host's stopped process is gone for good; its sockets
                // close into the silence (their connections stay silent: no
                // FIN reaches a server), and the host comes back: its new
                // connections pass.
                self.processes.remove(&instance);
                self.resumed(instance);
                for ((owner, _), proxy) in &self.proxies {
                    if *owner == instance {
                        proxy.restore();
                    }
                }
                self.record(EventKind::Process { instance, state: ProcessState::Restarted });
                self.tell(Some(format!("{instance} restarts")));
                self.spawn(instance, Some(at_ms))
            }
            Later::RedisUp(node) => {
                if let Some(server) = self.servers.redis.get_mut(usize::from(node)) {
                    server.start_again()?;
                }
                let node = Party::Redis(locklab_engine::ids::RedisNodeId(node));
                self.record(EventKind::RedisUp { node, promoted: false });
                Ok(())
            }
            Later::Promote => self.promote(),
            Later::MemberBack(member) => match self.servers.etcd.as_mut() {
                Some(etcd) => etcd.start_again(usize::from(member)),
                None => Ok(()),
            },
            Later::KeepaliveGaveUp(instance) => {
                let sessions = self.sessions.remove(&instance).unwrap_or_default();
                self.record_sessions_ended(instance, sessions, TerminateReason::KeepaliveTimeout);
                Ok(())
            }
        }
    }

    /// Ends the run: every instance's input is closed, so it exits; one that
    /// does not within [`EXIT_GRACE`] is killed. Their last words are kept.
    fn stop(&mut self, end_ms: u64) -> Result<(), String> {
        self.schedule_ordinarily();
        self.standby = None;
        let stopped: Vec<InstanceId> = self.stopped_since.keys().copied().collect();
        for instance in stopped {
            self.resumed(instance);
        }
        let mut processes = std::mem::take(&mut self.processes);
        for process in processes.values_mut() {
            let _ = send_signal(&process.child, Signal::SIGCONT);
            process.stdin.take();
        }
        for (instance, mut process) in processes {
            let asked = std::time::Instant::now();
            while !matches!(process.child.try_wait(), Ok(Some(_)) | Err(_)) {
                if asked.elapsed() > EXIT_GRACE {
                    eprintln!("locklab live: {instance} did not exit when asked; killed");
                    break;
                }
                // Waiting for the condition: the process has exited.
                let _ =
                    self.inbox.recv_timeout(Duration::from_millis(5)).map(|(source, event)| self.take(source, event));
            }
        }
        while let Ok((source, event)) = self.inbox.recv_timeout(Duration::from_millis(50)) {
            self.take(source, event);
        }
        // Only what happened before the run ended (the window and its drain) is the run.
        self.collected.retain(|(_, event)| event.at_ms <= end_ms);
        Ok(())
    }
}

/// Reads what `instance` writes, a line at a time: its lags, the message it
/// stopped the run with if a server answered what the engine has no word
/// for, and its events.
fn read_instance(
    instance: InstanceId,
    stdout: ChildStdout,
    events: &Sender<(Option<InstanceId>, Event)>,
    lags: &Mutex<stall::Lags>,
    failure: &Mutex<Option<String>>,
) {
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { return };
        if let Ok(stall::LagLine { lag }) = serde_json::from_str(&line) {
            if let Ok(mut lags) = lags.lock() {
                lags.seen.push((Some(instance), lag));
            }
            continue;
        }
        if let Ok(stall::ServerLagLine { server_lag, server }) = serde_json::from_str(&line) {
            if let Ok(mut lags) = lags.lock() {
                lags.servers.push((instance, server, server_lag));
            }
            continue;
        }
        if let Ok(stall::FlightLine { flight }) = serde_json::from_str(&line) {
            if let Ok(mut lags) = lags.lock() {
                lags.flights.push(flight);
            }
            continue;
        }
        if let Ok(crate::io::FailedLine { failed }) = serde_json::from_str(&line) {
            if let Ok(mut failure) = failure.lock() {
                failure.get_or_insert(format!("{instance} stopped the run: {failed}"));
            }
            continue;
        }
        match serde_json::from_str::<Event>(&line) {
            Ok(event) => {
                if events.send((Some(instance), event)).is_err() {
                    return;
                }
            }
            Err(error) => eprintln!("locklab live: {instance} wrote a line that is not an event ({error}): {line}"),
        }
    }
}

/// Plays storage and Slack on `listener`: each connection is an instance's
/// client, a line per request. Storage refuses a chunk whose token is lower
/// than the highest it has seen for that report, when the world says it
/// checks tokens; what it accepted or refused, and every post, is recorded.
fn serve_resources(
    listener: TcpListener,
    clock: ScaledClock,
    checks: bool,
    highest: Arc<Mutex<BTreeMap<ReportOf, Token>>>,
    events: Sender<(Option<InstanceId>, Event)>,
) {
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (highest, events) = (Arc::clone(&highest), events.clone());
            std::thread::spawn(move || serve_client(stream, clock, checks, &highest, &events));
        }
    });
}

fn serve_client(
    stream: TcpStream,
    clock: ScaledClock,
    checks: bool,
    highest: &Mutex<BTreeMap<ReportOf, Token>>,
    events: &Sender<(Option<InstanceId>, Event)>,
) {
    let Ok(mut writer) = stream.try_clone() else { return };
    for line in BufReader::new(stream).lines() {
        let Ok(line) = line else { return };
        let Some((source, kind, answer)) = resource_request(&line, checks, highest) else {
            eprintln!("locklab live: storage got a line it cannot read: {line}");
            return;
        };
        let at_ms = u64::try_from(clock.now_ms()).unwrap_or(0);
        if events.send((Some(source), Event { at_ms, kind })).is_err() || writeln!(writer, "{answer}").is_err() {
            return;
        }
    }
}

/// One request line: `PUT a 3 7 {"day":0} 2 false 12` or `POST a 3 7`.
fn resource_request(
    line: &str,
    checks: bool,
    highest: &Mutex<BTreeMap<ReportOf, Token>>,
) -> Option<(InstanceId, EventKind, String)> {
    let words: Vec<&str> = line.split(' ').collect();
    let instance = match Party::parse(words.get(1)?)? {
        Party::Instance(instance) => instance,
        Party::Redis(_) | Party::RedisReplica | Party::Db | Party::Storage | Party::Slack | Party::Consensus => {
            return None;
        }
    };
    let run = RunId(words.get(2)?.parse().ok()?);
    let period = Period(words.get(3)?.parse().ok()?);
    match *words.first()? {
        "POST" => Some((instance, EventKind::Post { instance, run, period }, "posted".to_owned())),
        "PUT" => {
            let report: ReportOf = serde_json::from_str(words.get(4)?).ok()?;
            let chunk: u8 = words.get(5)?.parse().ok()?;
            let own_object: bool = words.get(6)?.parse().ok()?;
            let token = match *words.get(7)? {
                "-" => None,
                token => Some(Token(token.parse().ok()?)),
            };
            let mut highest = highest.lock().ok()?;
            // The engine's fence, the one the simulator applies.
            let (outcome, after) = PutOutcome::fence(checks, token, highest.get(&report).copied());
            if let Some(after) = after {
                highest.insert(report, after);
            }
            let answer = match outcome {
                PutOutcome::Accepted => "accepted".to_owned(),
                PutOutcome::Rejected(seen) => format!("rejected {}", seen.0),
            };
            let kind = EventKind::Put { instance, run, period, report, chunk, own_object, token, outcome };
            Some((instance, kind, answer))
        }
        _ => None,
    }
}

/// Watches the lease key on etcd: each deletion (a revoke or an expired
/// lease; the record tells which) is written down as the key's value
/// leaving, the moment etcd reports it.
/// The watch is opened again whenever its stream ends (its member died)
/// until the guard it returns is dropped.
fn watch_lease_key(
    servers: &Servers,
    link: &Proxy,
    key: String,
    clock: ScaledClock,
    events: &Sender<(Option<InstanceId>, Event)>,
) -> Result<Watching, String> {
    let url = servers.etcd_url.as_deref().ok_or("etcd has no URL")?;
    let endpoint = EtcdEndpoint::parse(url).map_err(|error| error.to_string())?.via(loopback(link.port));
    let events = events.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    std::thread::spawn(move || {
        while !stopped.load(Ordering::SeqCst) {
            watch_once(&endpoint, &key, clock, &events, &stopped);
            // Waiting for the member the link leads to now to take the watch.
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    Ok(Watching { stop })
}

/// The lease key's watch; dropping it stops the watch from being opened again.
struct Watching {
    stop: Arc<AtomicBool>,
}

impl Drop for Watching {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// One watch stream, until it ends or the run does.
fn watch_once(
    endpoint: &EtcdEndpoint,
    key: &str,
    clock: ScaledClock,
    events: &Sender<(Option<InstanceId>, Event)>,
    stopped: &AtomicBool,
) {
    let Ok(mut client) = EtcdClient::connect(endpoint, locklab_engine::ids::LeaseId(0), SERVER_LIMIT) else { return };
    let _ = client.watch_deletions(key, |value| {
        let Some(value) = std::str::from_utf8(value).ok().and_then(locklab_engine::event::Owner::parse) else {
            return true;
        };
        let at_ms = u64::try_from(clock.now_ms()).unwrap_or(0);
        let kind = EventKind::LeaseExpired { lease: record::KEY_GONE, value };
        if events.send((None, Event { at_ms, kind })).is_err() {
            stopped.store(true, Ordering::SeqCst);
            return false;
        }
        true
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin(name: &str) -> Scenario {
        let found = locklab_engine::builtin::ALL.iter().find(|builtin| builtin.name == name).expect("a built-in");
        Scenario::from_json(found.text).expect("built-ins are valid")
    }

    #[test]
    fn the_default_scale_leaves_every_process_twenty_ms_yet_a_faster_faithful_one_is_played() {
        // Kleppmann's delayed packet: a one-second window, whose tenth is
        // 100 ms of the scenario's time. ×10 keeps the window 100 ms long on
        // the wall clock, so it is faithful, but allows a lag of 10 ms: the
        // default goes at ×5, which allows 20.
        let packet = builtin("delayed-packet");
        assert_eq!(lag_margins(&packet, StrategyId::Naive).process_ms, 100);
        assert_eq!(faithful_limit(&packet, StrategyId::Naive, MOST_TIME_SCALE).0, 10);
        assert_eq!(default_time_scale(&packet, StrategyId::Naive), 5);
        assert_eq!(time_scale_fits(&packet, StrategyId::Naive, 10), Ok(()));
        // A quiet night's margin is a retry period, ten seconds: ×60 allows 166 ms.
        let calm = builtin("calm-night");
        assert_eq!(lag_margins(&calm, StrategyId::Fencing).process_ms, 10_000);
        assert_eq!(default_time_scale(&calm, StrategyId::Fencing), 60);
        // The post's night: a pause aimed at a step caps it at ×15, which
        // allows 26 ms of its 400 ms margin; the consensus lease plays there too.
        let night = builtin("two-am-saturday");
        for strategy in [StrategyId::Fencing, StrategyId::Consensus] {
            assert_eq!(default_time_scale(&night, strategy), 15, "{strategy}");
        }
    }
}
