//! One instance's process (`locklab live-instance`, its plan the first line
//! of its input): the engine's instance runtime
//! ([`locklab_engine::runtime::Runtime`], the job loop the simulator runs)
//! and the engine's own strategy code, driven over real connections by a
//! host of real time, real timers and real sockets ([`host::LiveHost`]).
//!
//! The event loop waits for the next timer or the next message (a reply, a
//! session opened or ended by the server, a clock fault from the
//! coordinator), hands each to the runtime, and fires the timers that came
//! due. What the process does is written to standard output as the engine's
//! events, one JSON line each, stamped with the scenario's time
//! ([`ScaledClock`]); its run ids are its own, and the coordinator numbers
//! them across instances. A process restarted after a crash is handed back
//! the jobs it died in, when the world's job runner redelivers.
//!
//! A GC pause is a real SIGSTOP, so this process cannot see it coming; it
//! sees it afterwards, as a gap in its own clock, and tells the runtime,
//! which moves its jobs' remaining steps by the gap: the work left still
//! takes the time it had left, as in the simulator. Its lease timers are not
//! moved: a lease's clock runs on while the process is stopped, which is the point.

mod host;

use crate::io::Incoming;
use host::LiveHost;
use locklab_clients::{EtcdEndpoint, PostgresEndpoint, RedisEndpoint};
use locklab_engine::ids::{InstanceId, Period, RunId};
use locklab_engine::rng::SimRng;
use locklab_engine::runtime::{Driven, Host, Runtime, strategy_for};
use locklab_engine::scenario::{ReportRule, Scenario, StrategyId};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::process::ExitCode;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError, channel};
use std::time::{Duration, Instant};

/// The longest the event loop sleeps, on the wall clock, before it looks at
/// its clock again: short enough to see a pause as a gap.
const LOOP_TICK: Duration = Duration::from_millis(10);
/// A gap in the loop's wall clock longer than this was a stop, not scheduling noise.
const PAUSE_GAP: Duration = Duration::from_millis(60);

/// A job the job runner hands a restarted process: the run it died in, with
/// its period. No token: the one the dead run held died with its process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Redelivery {
    pub run: u32,
    pub period: u32,
}

/// Everything an instance process is told when it starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstancePlan {
    pub instance: InstanceId,
    pub scenario_json: String,
    pub strategy: StrategyId,
    pub clock: (u64, u32),
    /// Each Redis node the strategy locks.
    pub redis: Vec<Dial>,
    /// The PostgreSQL server (its URL says who logs in, with what password),
    /// and the schema the sessions' names resolve in.
    pub postgres: Dial,
    pub postgres_schema: Option<String>,
    /// The etcd member, for the consensus lease.
    pub etcd: Option<Dial>,
    /// Storage's and Slack's ports (the coordinator plays both).
    pub storage_port: u16,
    pub slack_port: u16,
    /// The first run id this process may use (its earlier processes used the ones before).
    pub first_run: u32,
    pub redeliver: Vec<Redelivery>,
    /// Whether this process is a restart after a crash.
    pub restarted: bool,
    /// When the process is due to be working, in scenario ms: time 0 for
    /// the first ones, the restart's moment for a restart.
    pub due_ms: u64,
    /// What the names of the lock's keys begin with on the servers (a run
    /// on servers of the user's has keys of its own; empty on live mode's).
    pub key_prefix: String,
    /// The watchdog's tick, and the lag it always reports (µs): see `stall.rs`.
    pub lag_tick_us: u64,
    pub lag_report_over_us: u64,
    /// A request with a timeout shorter than this (scenario ms) is reported
    /// as a flight (`stall::FlightLine`); 0 when none need be.
    pub flights_under_ms: u64,
}

/// A server as an instance reaches it: its URL, with the credentials (the
/// plan goes on the instance's standard input, never its command line,
/// where any user of the machine could read it), and the port of the
/// loopback proxy the instance dials, which forwards to the server.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Dial {
    pub url: String,
    pub proxy_port: u16,
}

impl std::fmt::Debug for Dial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let url = locklab_clients::endpoint::redacted(&self.url);
        f.debug_struct("Dial").field("url", &url).field("proxy_port", &self.proxy_port).finish()
    }
}

impl Dial {
    /// The URL and the proxy's port, as the connections take them.
    fn url_and_port(&self) -> (String, u16) {
        (self.url.clone(), self.proxy_port)
    }
}

/// The process's entry point: reads the plan (the first line of its
/// input), runs until the coordinator closes standard input. A plan that
/// does not parse, or names a server by a URL its client cannot use, is a
/// usage error.
pub fn main() -> ExitCode {
    crate::keep_in_memory();
    let (plan, scenario) = match read_plan() {
        Ok(Some(read)) => read,
        // A process started ahead of a restart that never came (the coordinator's standby).
        Ok(None) => return ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("locklab live-instance: {message}");
            return ExitCode::from(2);
        }
    };
    // How late this process runs, for the coordinator to judge the run by.
    let _watchdog = crate::stall::Watchdog::start(
        Duration::from_micros(plan.lag_tick_us.max(1_000)),
        Duration::from_micros(plan.lag_report_over_us),
        tell_lag,
    );
    let (replies, inbox) = channel();
    listen_to_the_coordinator(replies.clone());
    let mut instance = Instance::new(&plan, &scenario, replies);
    instance.begin(&plan);
    let clock = crate::ScaledClock { start_unix_us: plan.clock.0, time_scale: plan.clock.1 };
    report_a_late_start(clock.start_unix_us + u64::try_from(clock.real(plan.due_ms).as_micros()).unwrap_or(0));
    instance.serve(&inbox);
    ExitCode::SUCCESS
}

/// A process that is still starting when it is due (its pool not yet
/// warm) is late by that much, which its watchdog does not see: it was
/// working, not kept waiting. The coordinator counts it as this process's
/// lag at the moment it was due. A first process is due at time 0, and a
/// lag in the lead-in no longer counts by itself (`stall::judge`): what it
/// can move is whether the processes are ready at time 0, and this says
/// that. A restarted one is due at the restart, where the simulator has
/// it working at once: its start moves its redelivered job and its first
/// requests by that much, and a busy machine can make that seconds of the
/// scenario's time (a restart that came back after another instance was
/// granted the lock it believes it holds).
fn report_a_late_start(due_unix_us: u64) {
    let now = crate::unix_us();
    if now > due_unix_us {
        tell_lag(crate::stall::Lag { from_unix_us: due_unix_us, lag_us: now - due_unix_us });
    }
}

/// Tells the coordinator of a lag, on the output beside the events.
fn tell_lag(lag: crate::stall::Lag) {
    tell(&crate::stall::LagLine { lag });
}

/// Writes a line for the coordinator on the output: an event, a lag, a flight.
fn tell(line: &impl Serialize) {
    let line = serde_json::to_string(line).unwrap_or_default();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// The plan, the first line of standard input (a pipe from the
/// coordinator: the passwords in its URLs are on no command line), and the
/// scenario it carries, with every URL checked to be one its client can use
/// before any connection is opened, so that a bad one is a usage error.
/// `None` when the input closed before a plan came.
fn read_plan() -> Result<Option<(InstancePlan, Scenario)>, String> {
    let mut line = String::new();
    let read = std::io::stdin()
        .read_line(&mut line)
        .map_err(|error| format!("cannot read the plan on standard input: {error}"))?;
    if read == 0 {
        return Ok(None);
    }
    let plan: InstancePlan =
        serde_json::from_str(&line).map_err(|error| format!("the plan does not parse: {error}"))?;
    check_urls(&plan)?;
    let scenario = Scenario::from_json(&plan.scenario_json).map_err(|error| error.to_string())?;
    Ok(Some((plan, scenario)))
}

/// Whether every URL of the plan is one its client can use.
fn check_urls(plan: &InstancePlan) -> Result<(), String> {
    for redis in &plan.redis {
        RedisEndpoint::parse(&redis.url).map_err(|error| error.to_string())?;
    }
    PostgresEndpoint::parse(&plan.postgres.url).map_err(|error| error.to_string())?;
    if let Some(etcd) = &plan.etcd {
        EtcdEndpoint::parse(&etcd.url).map_err(|error| error.to_string())?;
    }
    Ok(())
}

/// The coordinator steps or skews this instance's clock with a line
/// (`jump MS`, `drift PPM`), and ends the run by closing the input.
fn listen_to_the_coordinator(inbox: Sender<Incoming>) {
    std::thread::spawn(move || {
        for line in std::io::stdin().lines().map_while(Result::ok) {
            let mut words = line.split(' ');
            let (what, number) = (words.next(), words.next().and_then(|number| number.parse::<i64>().ok()));
            let change = match (what, number) {
                (Some("jump"), Some(by_ms)) => Incoming::ClockJump { by_ms },
                (Some("drift"), Some(ppm)) => Incoming::ClockDrift { ppm },
                _ => continue,
            };
            if inbox.send(change).is_err() {
                return;
            }
        }
        let _ = inbox.send(Incoming::Stop);
    });
}

/// The process: the engine's runtime and strategy, and the host they act through.
struct Instance {
    host: LiveHost,
    runtime: Runtime,
    strategy: Box<Driven<LiveHost>>,
}

impl Instance {
    fn new(plan: &InstancePlan, scenario: &Scenario, replies: Sender<Incoming>) -> Instance {
        // The instance's stream is the scenario's seed forked once per
        // instance before it; a restart forks one more, so it draws anew.
        let mut root = SimRng::from_seed(scenario.seed);
        let mut rng = root.fork();
        for _ in 0..u32::from(plan.instance.0) + u32::from(plan.restarted) * 16 {
            rng = root.fork();
        }
        let settings = scenario.settings_for(plan.strategy);
        let reports = ReportRule::of(scenario);
        Instance {
            host: LiveHost::new(plan, scenario, &settings, replies),
            runtime: Runtime::new(plan.instance, rng, &scenario.world, reports, scenario.duration_ms()),
            strategy: strategy_for(&settings),
        }
    }

    /// The first things the process does. The pool's first connection is
    /// opened before the night starts, as a pool warms up at start:
    /// PostgreSQL's connection handshake takes a few ms of wall time, which
    /// the time scale would turn into most of a second before the first
    /// job, where the simulator's connect is a round trip. Then its cron
    /// starts; a restarted process runs the period it missed and is handed
    /// back the jobs it died in.
    fn begin(&mut self, plan: &InstancePlan) {
        let Instance { host, runtime, strategy } = self;
        runtime.warm_pool(host);
        if plan.restarted {
            runtime.hand_back(plan.redeliver.iter().map(|job| (RunId(job.run), Period(job.period))).collect());
            runtime.restart(host, strategy.as_mut());
        } else {
            runtime.start(host);
        }
    }

    /// The event loop, until the coordinator ends the run.
    fn serve(&mut self, inbox: &Receiver<Incoming>) {
        let mut last_wake = Instant::now();
        loop {
            self.host.turn_ms = None;
            let wait = self.host.next_deadline_ms().map_or(LOOP_TICK, |deadline| {
                let left = u64::try_from(deadline - self.host.local_ms()).unwrap_or(0);
                self.host.clock.real(left).min(LOOP_TICK)
            });
            let mut received = inbox.recv_timeout(wait);
            let gap = last_wake.elapsed().saturating_sub(wait);
            last_wake = Instant::now();
            self.host.turn_ms = Some(self.host.clock.now_ms());
            if gap > PAUSE_GAP {
                let scale = u64::from(self.host.clock.time_scale);
                let paused_ms = u64::try_from(gap.as_millis()).unwrap_or(0).saturating_mul(scale);
                self.runtime.resume_work(&mut self.host, paused_ms);
            }
            // Every message already here is handled before any timer fires:
            // after a pause, a reply waiting in the socket beats the timeout
            // that came due while the process was stopped, as it does in a
            // client library.
            loop {
                match received {
                    Ok(Incoming::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                    Ok(incoming) => self.handle(incoming),
                    Err(RecvTimeoutError::Timeout) => break,
                }
                received = inbox.try_recv().map_err(|error| match error {
                    TryRecvError::Empty => RecvTimeoutError::Timeout,
                    TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
                });
            }
            self.fire_due();
        }
    }

    /// One message from outside the process.
    fn handle(&mut self, incoming: Incoming) {
        let Instance { host, runtime, strategy } = self;
        match incoming {
            Incoming::Reply { request, reply, took } => {
                host.time_answer(request, took);
                // A reply no one awaits any more (its request timed out) is dropped unlogged.
                if let Some(sent) = host.take_sent(request) {
                    host.log_reply(&sent, reply);
                    runtime.on_reply(host, strategy.as_mut(), request, reply);
                }
            }
            Incoming::Opened { request, session } => {
                if host.take_sent(request).is_some() {
                    let reply = host.opened(session);
                    runtime.on_reply(host, strategy.as_mut(), request, reply);
                }
            }
            Incoming::SessionEnded { session, error } => host.session_ended(session, error),
            Incoming::ClockJump { by_ms } => host.change_clock(|clock, now| clock.jump(now, by_ms)),
            Incoming::ClockDrift { ppm } => host.change_clock(|clock, now| clock.set_drift(now, ppm)),
            Incoming::Stop => {}
        }
    }

    /// Fires every timer that is due by the instance's clock, earliest first.
    fn fire_due(&mut self) {
        let Instance { host, runtime, strategy } = self;
        while let Some(timer) = host.take_due() {
            runtime.on_timer(host, strategy.as_mut(), timer);
        }
    }
}
