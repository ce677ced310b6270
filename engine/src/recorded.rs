//! A run's log document (`locklab-log/1`): written for a simulated run or
//! one recorded live, and read back with the checks a scenario gets. A log
//! document comes from anywhere (a file a reader opens, a `?log=` beside a
//! page), and every view of it (the timeline, the world at a cursor, the
//! report) trusts its log: run and period ids index tables, times are
//! subtracted. So a document is refused, with the place named, unless its
//! events are in time order, every id is in range of the world it carries,
//! and every event agrees with that scenario and with the events before it.
//!
//! A live run's recording also says how faithful it was: the longest the
//! machine kept one of its processes from running, what its time scale
//! allows, and the stalls beyond that, which make the run *inconclusive*
//! (docs/live.md).

use crate::event::{ConsensusReply, Event, EventKind, LockValue, ProcessState, RedisCommand, RedisReply, RunPhase};
use crate::ids::{InstanceId, Party, Period, RunId};
use crate::scenario::{Fault, Scenario, ScenarioError, StrategyId};
use serde::{Deserialize, Serialize};

/// Where a recorded run came from when it was not simulated: the real
/// servers it ran against, as they named their versions, and how much faster
/// than the scenario's time it ran (`locklab live`); how faithful it was to
/// that time; and whether it was stopped before its end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveRecording {
    pub servers: Vec<String>,
    pub time_scale: u32,
    /// The longest any process of the run was kept from running when it
    /// asked to, on the wall clock, in µs (0 in recordings made before live
    /// mode measured it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub longest_lag_us: u64,
    /// The longest lag its time scale allows the coordinator (the tightest;
    /// an instance may be allowed more), in wall µs: scaled, a lag this
    /// long moves the run's events by its tightest margin.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub allowed_lag_us: u64,
    /// The lags longer than that, in time order: with one, the run is
    /// inconclusive, whatever its verdict says.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stalls: Vec<Stall>,
    /// The time scale at which the longest stall would have been within
    /// what the scale allows (with stalls only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faithful_time_scale: Option<u32>,
    /// When the run was stopped before its end (Ctrl-C): the log is what was
    /// recorded up to then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted_at_ms: Option<u64>,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// A moment the machine kept a process of a live run from running for
/// longer than the run's time scale allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stall {
    /// When it began, on the scenario's clock.
    pub at_ms: u64,
    /// How long, on the wall clock, in µs.
    pub lag_us: u64,
    /// The longest the time scale allowed that process, in wall µs.
    pub allowed_us: u64,
    /// The instance whose process stalled; none for the coordinator (the
    /// process that strikes the faults and carries the network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<InstanceId>,
    /// A server that was this late to answer `instance` (a Redis node,
    /// PostgreSQL, etcd) at a moment no fault of the scenario slowed it:
    /// the machine kept the server's process from running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<Party>,
}

/// The most stalls a recording keeps: the first ones say when the machine
/// went wrong; a thousand more say nothing new.
pub const MAX_STALLS_KEPT: usize = 100;

impl LiveRecording {
    /// A recording of a run on `servers` at `time_scale`, with no lag measured yet.
    pub fn new(servers: Vec<String>, time_scale: u32) -> LiveRecording {
        LiveRecording {
            servers,
            time_scale,
            longest_lag_us: 0,
            allowed_lag_us: 0,
            stalls: Vec::new(),
            faithful_time_scale: None,
            interrupted_at_ms: None,
        }
    }

    /// Whether the machine stalled longer than the time scale allows: the
    /// run then says nothing about the lock, neither that it agrees with its
    /// twin nor that it differs.
    pub fn inconclusive(&self) -> bool {
        !self.stalls.is_empty()
    }

    /// What made the run inconclusive, in a sentence: when, how long, which
    /// process, against what the scale allows, and the scale that would be
    /// faithful; `None` for a conclusive run.
    pub fn stall_sentence(&self) -> Option<String> {
        let longest = self.stalls.iter().max_by_key(|stall| stall.lag_us)?;
        let process = match (longest.server, longest.instance) {
            (Some(server), Some(instance)) => format!("{server}'s answer to {instance}"),
            (Some(server), None) => format!("{server}'s answer"),
            (None, Some(instance)) => format!("instance {instance}'s process"),
            (None, None) => "the coordinator".to_owned(),
        };
        let others = match self.stalls.len() {
            1 => String::new(),
            2 => " (and once more)".to_owned(),
            count => format!(" (and {} times more)", count - 1),
        };
        let faithful = match self.faithful_time_scale {
            Some(scale) => format!("; at --time-scale {scale} it would have been within what the scale allows"),
            None => "; not even ×1 allows a stall that long: play it again on a quieter machine".to_owned(),
        };
        Some(format!(
            "the machine stalled {process} at t={} for {} of wall time{others}, longer than the {} that ×{} allows (a stall of that length moves the run's events by {} of its time){faithful}",
            crate::format::seconds(longest.at_ms),
            wall(longest.lag_us),
            wall(longest.allowed_us),
            self.time_scale,
            crate::format::seconds(longest.lag_us.saturating_mul(u64::from(self.time_scale)) / 1_000),
        ))
    }
}

/// A wall-clock duration in µs, as people read it: tenths of a ms under 10 ms.
/// (In integers: a float's fixed-precision printer would be the only one in
/// the recorded page's wasm.)
fn wall(micros: u64) -> String {
    let tenths = (micros + 50) / 100;
    if micros < 9_950 {
        format!("{}.{} ms", tenths / 10, tenths % 10)
    } else {
        format!("{} ms", micros.max(10_000) / 1_000)
    }
}

/// A `locklab-log/1` document, read back: what ran, whether it ran live, and
/// its events, checked for what needs no scenario (time order, dense run
/// ids). [`RecordedRun::from_json`] checks it against the scenario it carries.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct LogDocument {
    pub scenario: String,
    pub seed: u64,
    pub strategy: StrategyId,
    #[serde(default)]
    pub live: Option<LiveRecording>,
    /// The scenario the run played, whole, so a reader can judge the run
    /// and replay its simulated twin (documents before this field lack it).
    #[serde(default)]
    pub scenario_document: Option<serde_json::Value>,
    pub events: Vec<Event>,
}

impl LogDocument {
    /// Reads a log document; a document of another format, one that does
    /// not parse, or one whose events are out of time order or name runs
    /// out of order, is refused with a message that says where.
    pub fn from_json(text: &str) -> Result<LogDocument, String> {
        LogDocument::read(text).map_err(|error| error.to_string())
    }

    fn read(text: &str) -> Result<LogDocument, ScenarioError> {
        #[derive(Deserialize)]
        struct Format {
            format: String,
        }
        let format: Format = serde_json::from_str(text)
            .map_err(|error| refuse(path_of(text, &error), format!("not a locklab log document: {error}")))?;
        if format.format != "locklab-log/1" {
            return Err(refuse("", format!("format `{}` is not locklab-log/1", format.format)));
        }
        let document: LogDocument = serde_json::from_str(text)
            .map_err(|error| refuse(path_of(text, &error), format!("the log document does not parse: {error}")))?;
        check_order(&document.events)?;
        Ok(document)
    }
}

/// A recorded run read from its log document and checked against the
/// scenario it carries: what the recorded-run page and `locklab recorded`
/// show, and nothing they show is computed from a log that failed a check.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedRun {
    pub scenario: Scenario,
    pub strategy: StrategyId,
    pub live: Option<LiveRecording>,
    pub events: Vec<Event>,
}

impl RecordedRun {
    /// Reads and checks a log document; the error names the place
    /// (`events[12].run`, `scenario_document.world.instances`) and what is wrong.
    pub fn from_json(text: &str) -> Result<RecordedRun, ScenarioError> {
        let document = LogDocument::read(text)?;
        let carried = document.scenario_document.as_ref().ok_or_else(|| {
            refuse(
                "scenario_document",
                "the document does not carry its scenario, so its events cannot be checked nor its verdict computed",
            )
        })?;
        let scenario = Scenario::from_json(&carried.to_string())
            .map_err(|error| ScenarioError { path: join("scenario_document", &error.path), message: error.message })?;
        if document.scenario != scenario.name {
            return Err(refuse(
                "scenario",
                format!(
                    "`{}` is not the name of the scenario the document carries (`{}`)",
                    document.scenario, scenario.name
                ),
            ));
        }
        if document.seed != scenario.seed {
            return Err(refuse(
                "seed",
                format!("{} is not the seed of the scenario the document carries ({})", document.seed, scenario.seed),
            ));
        }
        if let Some(live) = &document.live {
            check_recording(live, &scenario, &document.events)?;
        }
        check_events(&scenario, document.strategy, &document.events)?;
        Ok(RecordedRun { scenario, strategy: document.strategy, live: document.live, events: document.events })
    }

    /// Whether a live run's machine stalled beyond what its time scale allows.
    pub fn inconclusive(&self) -> bool {
        self.live.as_ref().is_some_and(LiveRecording::inconclusive)
    }
}

fn refuse(path: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError { path: path.into(), message: message.into() }
}

fn join(outer: &str, inner: &str) -> String {
    if inner.is_empty() || inner == "." { outer.to_owned() } else { format!("{outer}.{inner}") }
}

/// The field a serde_json error is at.
fn path_of(text: &str, error: &serde_json::Error) -> String {
    crate::json_path::at(text, error.line(), error.column())
}

/// What needs no scenario: the events in time order, and every run named
/// first by its own `run` event, in the order of their numbers (runs are
/// numbered from 0 in the order they begin), so a run id is never more
/// than the log's count of runs.
fn check_order(events: &[Event]) -> Result<(), ScenarioError> {
    // Time first, over the whole log: a shuffled log is named as such, not
    // by the first run it happens to name early.
    let mut previous_ms = 0;
    for (index, event) in events.iter().enumerate() {
        if event.at_ms < previous_ms {
            return Err(refuse(
                format!("events[{index}].at_ms"),
                format!(
                    "{} comes before the event ahead of it, at {}: a log is in time order",
                    event.at_ms, previous_ms
                ),
            ));
        }
        previous_ms = event.at_ms;
    }
    let mut runs_begun: u32 = 0;
    for (index, event) in events.iter().enumerate() {
        for run in runs_named(&event.kind) {
            if run.0 < runs_begun {
                continue;
            }
            let place = format!("events[{index}].run");
            if run.0 > runs_begun {
                return Err(refuse(
                    place,
                    format!(
                        "{run} is named before it begins: runs are numbered from 0 in the order they begin, and the next to begin here is run {runs_begun}"
                    ),
                ));
            }
            if !matches!(event.kind, EventKind::Run { run: begun, .. } if begun == run) {
                return Err(refuse(place, format!("{run} is named before its own `run` event begins it")));
            }
            runs_begun += 1;
        }
    }
    Ok(())
}

/// The runs an event names.
fn runs_named(kind: &EventKind) -> Vec<RunId> {
    match kind {
        EventKind::Run { run, phase, .. } => {
            let mut runs = vec![*run];
            if let RunPhase::Redelivered(first) = phase {
                runs.push(*first);
            }
            runs
        }
        EventKind::Granted { run, .. }
        | EventKind::Revoked { run, .. }
        | EventKind::Belief { run, .. }
        | EventKind::Redis { run, .. }
        | EventKind::Put { run, .. }
        | EventKind::Post { run, .. }
        | EventKind::Consensus { run, .. }
        | EventKind::RowApplied { run, .. } => vec![*run],
        EventKind::Sql { run, statement, .. } => {
            let mut runs: Vec<RunId> = run.iter().copied().collect();
            if let crate::event::Sql::WriteReport { run: writer, .. } = statement {
                runs.push(*writer);
            }
            runs
        }
        EventKind::Fault { .. }
        | EventKind::Cron { .. }
        | EventKind::Process { .. }
        | EventKind::Clock { .. }
        | EventKind::Sent { .. }
        | EventKind::Lost { .. }
        | EventKind::KeyExpired { .. }
        | EventKind::KeysLost { .. }
        | EventKind::Replicated { .. }
        | EventKind::RedisDown { .. }
        | EventKind::RedisUp { .. }
        | EventKind::Connection { .. }
        | EventKind::RowLock { .. }
        | EventKind::Pool { .. }
        | EventKind::Background { .. }
        | EventKind::LeaseExpired { .. }
        | EventKind::Leader { .. }
        | EventKind::LeaseRefreshed { .. }
        | EventKind::DbSlow { .. } => Vec::new(),
    }
}

/// A live recording's own fields: a time scale, stalls inside the run, and
/// an interruption after every event it kept.
fn check_recording(live: &LiveRecording, scenario: &Scenario, events: &[Event]) -> Result<(), ScenarioError> {
    if live.time_scale == 0 {
        return Err(refuse(
            "live.time_scale",
            "0 is not a time scale: the scenario's ms per wall-clock ms is at least 1",
        ));
    }
    let horizon_ms = scenario.horizon_ms();
    for (index, stall) in live.stalls.iter().enumerate() {
        if stall.at_ms > horizon_ms {
            return Err(refuse(
                format!("live.stalls[{index}].at_ms"),
                format!("{} is after the run's end ({horizon_ms})", stall.at_ms),
            ));
        }
        if let Some(instance) = stall.instance
            && instance.0 >= scenario.world.instances
        {
            return Err(refuse(
                format!("live.stalls[{index}].instance"),
                format!("instance {instance} is not in a world of {} instances", scenario.world.instances),
            ));
        }
        if let Some(server) = stall.server
            && !matches!(
                server,
                Party::Redis(_) | Party::RedisReplica | Party::Db | Party::Consensus | Party::Storage | Party::Slack
            )
        {
            return Err(refuse(
                format!("live.stalls[{index}].server"),
                format!("{server} is not a server live mode runs (a Redis node, db, consensus, storage or slack)"),
            ));
        }
    }
    if let Some(scale) = live.faithful_time_scale
        && (scale == 0 || scale >= live.time_scale)
    {
        return Err(refuse(
            "live.faithful_time_scale",
            format!("{scale} is not a slower time scale than the run's ×{}", live.time_scale),
        ));
    }
    if let Some(stopped_ms) = live.interrupted_at_ms
        && let Some((index, late)) = events.iter().enumerate().find(|(_, event)| event.at_ms > stopped_ms)
    {
        return Err(refuse(
            format!("events[{index}].at_ms"),
            format!("{} is after the run was interrupted, at {stopped_ms}", late.at_ms),
        ));
    }
    Ok(())
}

/// What a run knows of itself from the events so far: whose it is, and its period.
#[derive(Clone, Copy)]
struct Owned {
    instance: InstanceId,
    period: Period,
}

/// Every event against the scenario: inside the run, its parties and
/// periods in the world, its faults the scenario's, and its runs each one
/// instance's, for one period.
fn check_events(scenario: &Scenario, strategy: StrategyId, events: &[Event]) -> Result<(), ScenarioError> {
    let world = Bounds::of(scenario, strategy);
    let mut runs: Vec<Owned> = Vec::new();
    for (index, event) in events.iter().enumerate() {
        let place = |field: &str| format!("events[{index}].{field}");
        if event.at_ms > world.horizon_ms {
            return Err(refuse(
                place("at_ms"),
                format!(
                    "{} is after the run's end: its window and the drain after it end at {}",
                    event.at_ms, world.horizon_ms
                ),
            ));
        }
        check_names(&world, event).map_err(|(field, message)| refuse(place(field), message))?;
        check_kind(scenario, strategy, &world, event).map_err(|(field, message)| refuse(place(field), message))?;
        check_run(&mut runs, event).map_err(|(field, message)| refuse(place(field), message))?;
    }
    Ok(())
}

/// A refusal's field within its event, and what is wrong there.
type Misplaced = (&'static str, String);

/// The parties, instances and period an event names are the world's.
fn check_names(world: &Bounds, event: &Event) -> Result<(), Misplaced> {
    for party in event.parties() {
        world.party(party).map_err(|message| ("parties", message))?;
    }
    for instance in instances_named(&event.kind) {
        world.instance(instance).map_err(|message| ("instance", message))?;
    }
    if let Some(period) = period_named(&event.kind) {
        world.period(period).map_err(|message| ("period", message))?;
    }
    Ok(())
}

/// What an event of its kind must agree with: a fault is the scenario's
/// and strikes at or after its time, a pause ends after it begins, and the
/// strategy talks to the servers it uses.
fn check_kind(scenario: &Scenario, strategy: StrategyId, world: &Bounds, event: &Event) -> Result<(), Misplaced> {
    if let EventKind::Fault { fault, .. } = &event.kind {
        if !scenario.faults.contains(fault) {
            return Err(("fault", "a fault the scenario it carries does not have".to_owned()));
        }
        if event.at_ms < fault.at_ms() {
            return Err((
                "at_ms",
                format!("the fault struck at {}, before its own time, {}", event.at_ms, fault.at_ms()),
            ));
        }
    } else if let EventKind::Process { state: ProcessState::Paused { until_ms }, .. } = &event.kind
        && *until_ms < event.at_ms
    {
        return Err(("state.until_ms", format!("a pause until {until_ms} cannot begin later, at {}", event.at_ms)));
    } else if matches!(event.kind, EventKind::Redis { .. }) && world.redis_nodes == 0 {
        return Err(("type", format!("{strategy} sends no Redis command")));
    } else if matches!(event.kind, EventKind::Consensus { .. }) && strategy != StrategyId::Consensus {
        return Err(("type", format!("{strategy} does not use the consensus store")));
    }
    Ok(())
}

/// A run is named first by its own `run` event, and is one instance's, for one period.
fn check_run(runs: &mut Vec<Owned>, event: &Event) -> Result<(), Misplaced> {
    let Some((run, instance)) = run_and_instance(&event.kind) else { return Ok(()) };
    // `check_order` has made sure a run is named first by its own `run` event.
    let index_of = usize::try_from(run.0).unwrap_or(usize::MAX);
    match (runs.get(index_of).copied(), &event.kind) {
        (None, EventKind::Run { period, .. }) => runs.push(Owned { instance, period: *period }),
        (None, _) => return Err(("run", format!("{run} is named before it begins"))),
        (Some(owned), _) if owned.instance != instance => {
            return Err((
                "instance",
                format!("{run} is {}'s, not {instance}'s: a run is one instance's", owned.instance),
            ));
        }
        (Some(owned), EventKind::Run { period, .. }) if *period != owned.period => {
            return Err((
                "period",
                format!("{run} is period {}'s, not period {}'s: a run does one period's job", owned.period.0, period.0),
            ));
        }
        (Some(_), _) => {}
    }
    Ok(())
}

/// The run an event is about and the instance it says the run is on.
fn run_and_instance(kind: &EventKind) -> Option<(RunId, InstanceId)> {
    match kind {
        EventKind::Run { run, instance, .. }
        | EventKind::Granted { run, instance, .. }
        | EventKind::Revoked { run, instance, .. }
        | EventKind::Belief { run, instance, .. }
        | EventKind::Put { run, instance, .. }
        | EventKind::Post { run, instance, .. } => Some((*run, *instance)),
        EventKind::Redis { run, client, .. } | EventKind::Consensus { run, client, .. } => Some((*run, *client)),
        EventKind::Fault { .. }
        | EventKind::Cron { .. }
        | EventKind::Process { .. }
        | EventKind::Clock { .. }
        | EventKind::Sent { .. }
        | EventKind::Lost { .. }
        | EventKind::KeyExpired { .. }
        | EventKind::KeysLost { .. }
        | EventKind::Replicated { .. }
        | EventKind::RedisDown { .. }
        | EventKind::RedisUp { .. }
        | EventKind::Sql { .. }
        | EventKind::Connection { .. }
        | EventKind::RowLock { .. }
        | EventKind::Pool { .. }
        | EventKind::Background { .. }
        | EventKind::LeaseExpired { .. }
        | EventKind::Leader { .. }
        | EventKind::LeaseRefreshed { .. }
        | EventKind::RowApplied { .. }
        | EventKind::DbSlow { .. } => None,
    }
}

/// The instances an event names beyond its parties: in lock values, a
/// key's setter, a holder the consensus store names.
fn instances_named(kind: &EventKind) -> Vec<InstanceId> {
    let value = value_instance;
    match kind {
        EventKind::Redis { command, reply, .. } => redis_instances(command, reply),
        EventKind::KeyExpired { value: held, .. } => value(held).into_iter().collect(),
        EventKind::Replicated { key, .. } => {
            key.iter().flat_map(|key| [Some(key.setter), value(&key.value)]).flatten().collect()
        }
        EventKind::Consensus { op, reply, .. } => consensus_instances(op, reply),
        EventKind::LeaseExpired { value: owner, .. } => vec![owner.instance],
        EventKind::Fault { .. }
        | EventKind::Cron { .. }
        | EventKind::Process { .. }
        | EventKind::Clock { .. }
        | EventKind::Sent { .. }
        | EventKind::Lost { .. }
        | EventKind::Run { .. }
        | EventKind::Granted { .. }
        | EventKind::Revoked { .. }
        | EventKind::Belief { .. }
        | EventKind::KeysLost { .. }
        | EventKind::RedisDown { .. }
        | EventKind::RedisUp { .. }
        | EventKind::Sql { .. }
        | EventKind::Connection { .. }
        | EventKind::RowLock { .. }
        | EventKind::Pool { .. }
        | EventKind::Background { .. }
        | EventKind::Put { .. }
        | EventKind::Post { .. }
        | EventKind::Leader { .. }
        | EventKind::LeaseRefreshed { .. }
        | EventKind::RowApplied { .. }
        | EventKind::DbSlow { .. } => Vec::new(),
    }
}

/// The instance a lock value names, if it names one.
fn value_instance(value: &LockValue) -> Option<InstanceId> {
    match value {
        LockValue::Owner(owner) => Some(owner.instance),
        LockValue::Locked => None,
    }
}

/// The instances a Redis command and its reply name in their lock values.
fn redis_instances(command: &RedisCommand, reply: &RedisReply) -> Vec<InstanceId> {
    let commanded = match command {
        RedisCommand::SetNxEx { value: held, .. }
        | RedisCommand::SetNxPx { value: held, .. }
        | RedisCommand::SetNx { value: held }
        | RedisCommand::SetPx { value: held, .. } => value_instance(held),
        RedisCommand::SetNxPxIncr { value: owner, .. }
        | RedisCommand::CompareAndDelete { value: owner }
        | RedisCommand::CompareAndExtend { value: owner, .. } => Some(owner.instance),
        RedisCommand::Get
        | RedisCommand::Del
        | RedisCommand::Pexpire { .. }
        | RedisCommand::Expire { .. }
        | RedisCommand::Incr => None,
    };
    let replied = match reply {
        RedisReply::Value(held) => value_instance(held),
        RedisReply::Ok
        | RedisReply::Nil
        | RedisReply::Integer(_)
        | RedisReply::ConnectionRefused
        | RedisReply::Timeout => None,
    };
    commanded.into_iter().chain(replied).collect()
}

/// The instances a consensus operation and its reply name: who asks, and who holds.
fn consensus_instances(op: &crate::event::ConsensusOp, reply: &ConsensusReply) -> Vec<InstanceId> {
    let asked = match op {
        crate::event::ConsensusOp::Acquire { value: owner, .. } => Some(owner.instance),
        crate::event::ConsensusOp::KeepAlive { .. } | crate::event::ConsensusOp::Revoke { .. } => None,
    };
    let held = match reply {
        ConsensusReply::Taken { holder } => Some(holder.instance),
        ConsensusReply::Acquired { .. }
        | ConsensusReply::Alive { .. }
        | ConsensusReply::LeaseNotFound
        | ConsensusReply::Revoked
        | ConsensusReply::NoLeader
        | ConsensusReply::Timeout => None,
    };
    asked.into_iter().chain(held).collect()
}

/// The period an event names: its own, or its report's when that is a period's.
fn period_named(kind: &EventKind) -> Option<Period> {
    use crate::event::Sql;
    use crate::ids::ReportOf;
    let report = |report: &ReportOf| match report {
        ReportOf::Period(period) => *period,
        ReportOf::Day(_) => Period(0),
    };
    match kind {
        EventKind::Cron { period, .. } | EventKind::Run { period, .. } | EventKind::Post { period, .. } => {
            Some(*period)
        }
        EventKind::Put { period, report: of, .. } | EventKind::RowApplied { period, report: of, .. } => {
            Some((*period).max(report(of)))
        }
        EventKind::Sql {
            statement: Sql::ReportExists { period, report: of } | Sql::WriteReport { period, report: of, .. },
            ..
        } => Some((*period).max(report(of))),
        EventKind::Sql { .. }
        | EventKind::Fault { .. }
        | EventKind::Process { .. }
        | EventKind::Clock { .. }
        | EventKind::Sent { .. }
        | EventKind::Lost { .. }
        | EventKind::Granted { .. }
        | EventKind::Revoked { .. }
        | EventKind::Belief { .. }
        | EventKind::Redis { .. }
        | EventKind::KeyExpired { .. }
        | EventKind::KeysLost { .. }
        | EventKind::Replicated { .. }
        | EventKind::RedisDown { .. }
        | EventKind::RedisUp { .. }
        | EventKind::Connection { .. }
        | EventKind::RowLock { .. }
        | EventKind::Pool { .. }
        | EventKind::Background { .. }
        | EventKind::Consensus { .. }
        | EventKind::LeaseExpired { .. }
        | EventKind::Leader { .. }
        | EventKind::LeaseRefreshed { .. }
        | EventKind::DbSlow { .. } => None,
    }
}

/// What the world of a scenario allows an event to name.
struct Bounds {
    instances: u8,
    /// The Redis nodes the strategy locks on (0 when it locks on none).
    redis_nodes: u8,
    replica: bool,
    horizon_ms: u64,
    /// The highest period any instance's clock can reach before the run's
    /// end: its clock may have been stepped forward or run fast.
    last_period: u32,
}

impl Bounds {
    fn of(scenario: &Scenario, strategy: StrategyId) -> Bounds {
        let settings = scenario.settings_for(strategy);
        let redis_nodes = match strategy {
            StrategyId::Naive | StrategyId::Fencing | StrategyId::Redlock => settings.redis_nodes().max(1),
            StrategyId::DbLock | StrategyId::UniqueInsert | StrategyId::Consensus => 0,
        };
        let horizon_ms = scenario.horizon_ms();
        let stepped_ms: u64 = scenario
            .faults
            .iter()
            .map(|fault| match fault {
                Fault::ClockJump { by_ms, .. } => by_ms.unsigned_abs(),
                Fault::ClockDrift { ppm, .. } => horizon_ms.saturating_mul(ppm.unsigned_abs()) / 1_000_000,
                Fault::OomKill { .. }
                | Fault::HostLoss { .. }
                | Fault::GcPause { .. }
                | Fault::NetworkDelay { .. }
                | Fault::Partition { .. }
                | Fault::RedisRestart { .. }
                | Fault::RedisFailover { .. }
                | Fault::ConsensusLeaderLoss { .. }
                | Fault::DbSlow { .. } => 0,
            })
            .fold(0, u64::saturating_add);
        let furthest_ms = horizon_ms.saturating_add(stepped_ms);
        let last_period = furthest_ms / scenario.world.cron_period_ms.max(1) + 1;
        Bounds {
            instances: scenario.world.instances,
            redis_nodes,
            replica: scenario.world.redis_replica,
            horizon_ms,
            last_period: u32::try_from(last_period).unwrap_or(u32::MAX),
        }
    }

    fn instance(&self, instance: InstanceId) -> Result<(), String> {
        if instance.0 < self.instances {
            Ok(())
        } else {
            Err(format!("instance {instance} is not in a world of {} instances", self.instances))
        }
    }

    fn party(&self, party: Party) -> Result<(), String> {
        match party {
            Party::Instance(instance) => self.instance(instance),
            // A fault may strike a Redis node the strategy does not lock on
            // (the names go to `redis-5` and no further).
            Party::Redis(_) => Ok(()),
            Party::RedisReplica if self.replica => Ok(()),
            Party::RedisReplica => Err(format!("{party}: the world has no Redis replica")),
            Party::Db | Party::Storage | Party::Slack | Party::Consensus => Ok(()),
        }
    }

    fn period(&self, period: Period) -> Result<(), String> {
        if period.0 <= self.last_period {
            Ok(())
        } else {
            Err(format!(
                "period {} is past the last one an instance's clock can reach in this run ({})",
                period.0, self.last_period
            ))
        }
    }
}

/// The event log of one run as a JSON document (`locklab-log/1`), the export
/// a reader can load anywhere: what ran (scenario name, seed, strategy), the
/// log's digest, and every event as the engine records it plus its wire text.
pub fn log_document(scenario: &Scenario, strategy: StrategyId, log: &[Event]) -> String {
    recorded_log_document(scenario, strategy, log, None)
}

/// [`log_document`] for a run that may have been recorded live: a live run
/// says so (`"live"`: its servers and time scale), a simulated one has no such field.
pub fn recorded_log_document(
    scenario: &Scenario,
    strategy: StrategyId,
    log: &[Event],
    live: Option<&LiveRecording>,
) -> String {
    #[derive(Serialize)]
    struct Document<'a> {
        format: &'static str,
        scenario: &'a str,
        seed: u64,
        strategy: StrategyId,
        digest: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        live: Option<&'a LiveRecording>,
        scenario_document: serde_json::Value,
        events: Vec<Described<'a>>,
    }
    #[derive(Serialize)]
    struct Described<'a> {
        #[serde(flatten)]
        event: &'a Event,
        text: String,
    }
    let document = Document {
        format: "locklab-log/1",
        scenario: &scenario.name,
        seed: scenario.seed,
        strategy,
        digest: crate::log_digest(log),
        live,
        scenario_document: serde_json::from_str(&scenario.to_json()).unwrap_or_default(),
        events: log.iter().map(|event| Described { event, text: event.to_string() }).collect(),
    };
    serde_json::to_string_pretty(&document).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wall_clock_lag_reads_in_tenths_of_a_ms_under_ten_and_whole_ms_above() {
        let read: Vec<String> = [0, 49, 6_433, 6_450, 9_949, 9_950, 10_999, 26_666].map(wall).into();
        assert_eq!(read, ["0.0 ms", "0.0 ms", "6.4 ms", "6.5 ms", "9.9 ms", "10 ms", "10 ms", "26 ms"]);
    }

    fn scenario(name: &str) -> Scenario {
        Scenario::from_json(crate::builtin::find(name).expect("a built-in").text).expect("built-ins are valid")
    }

    /// A document of `name` under `strategy`, as JSON to edit.
    fn document(name: &str, strategy: StrategyId) -> serde_json::Value {
        let scenario = scenario(name);
        let log = crate::simulate(&scenario, strategy);
        serde_json::from_str(&log_document(&scenario, strategy, &log)).expect("a document parses")
    }

    fn refused(document: &serde_json::Value) -> String {
        RecordedRun::from_json(&document.to_string()).expect_err("the document is refused").to_string()
    }

    #[test]
    fn every_simulated_run_reads_back_as_itself() {
        for builtin in crate::builtin::ALL {
            let scenario = Scenario::from_json(builtin.text).expect("built-ins are valid");
            for settings in scenario.strategy_settings() {
                let strategy = settings.id();
                let log = crate::simulate(&scenario, strategy);
                let read = RecordedRun::from_json(&log_document(&scenario, strategy, &log))
                    .unwrap_or_else(|error| panic!("{} / {strategy}: {error}", builtin.name));
                assert_eq!((read.events, read.strategy), (log, strategy), "{} / {strategy}", builtin.name);
            }
        }
    }

    #[test]
    fn the_shipped_live_recording_reads_back() {
        let text = include_str!("../../static/recorded/two-am-saturday-fencing.live.json");
        let read = RecordedRun::from_json(text).expect("the shipped recording is valid");
        assert!(read.live.is_some_and(|live| !live.inconclusive()), "recorded before stalls were measured");
    }

    #[test]
    fn events_out_of_time_order_are_refused_with_their_place() {
        let mut shuffled = document("calm-night", StrategyId::Fencing);
        let events = shuffled["events"].as_array_mut().expect("events");
        let (early, late) = (3, events.len() - 1);
        let (early_ms, late_ms) = (events[early]["at_ms"].clone(), events[late]["at_ms"].clone());
        events[early]["at_ms"] = late_ms;
        events[late]["at_ms"] = early_ms;
        // The first event after the moved one is then earlier than it.
        let message = refused(&shuffled);
        assert!(message.starts_with(&format!("events[{}].at_ms: ", early + 1)), "{message}");
        assert!(message.contains("a log is in time order"), "{message}");
    }

    #[test]
    fn ids_out_of_range_are_refused_before_any_view_allocates_for_them() {
        let fencing = document("calm-night", StrategyId::Fencing);
        let first_run = |document: &serde_json::Value| {
            document["events"]
                .as_array()
                .expect("events")
                .iter()
                .position(|event| event["type"] == "run")
                .expect("a run")
        };
        // A run numbered near 4·10⁹: the report's per-run table would be that long.
        let mut far = fencing.clone();
        let at = first_run(&far);
        far["events"][at]["run"] = serde_json::json!(4_000_000_000_u32);
        let message = refused(&far);
        assert!(
            message.starts_with(&format!("events[{at}].run: run 4000000000 is named before it begins")),
            "{message}"
        );
        // An instance the world does not have (calm-night has three).
        let mut stranger = fencing.clone();
        stranger["events"][at]["instance"] = serde_json::json!("h");
        let message = refused(&stranger);
        assert!(
            message.contains(&format!("events[{at}]")) && message.contains("instance h is not in a world of 3"),
            "{message}"
        );
        // A period no clock of the run reaches.
        let mut late = fencing.clone();
        late["events"][at]["period"] = serde_json::json!(4_000_000_000_u32);
        assert!(refused(&late).contains("period 4000000000 is past the last one"), "{}", refused(&late));
    }

    #[test]
    fn events_that_contradict_the_scenario_or_each_other_are_refused() {
        let fencing = document("pause-after-check", StrategyId::Fencing);
        // A fault the scenario does not have.
        let mut foreign = fencing.clone();
        let at = foreign["events"]
            .as_array()
            .expect("events")
            .iter()
            .position(|event| event["type"] == "fault")
            .expect("a fault");
        foreign["events"][at]["fault"]["duration_ms"] = serde_json::json!(1);
        assert!(
            refused(&foreign).contains(&format!("events[{at}].fault: a fault the scenario it carries does not have"))
        );
        // A run said to be on another instance than the one it began on.
        let mut moved = fencing.clone();
        let events = moved["events"].as_array().expect("events");
        let begun = events.iter().position(|event| event["type"] == "run").expect("a run");
        let run = events[begun]["run"].clone();
        let owner = events[begun]["instance"].as_str().expect("an instance").to_owned();
        let later = events
            .iter()
            .enumerate()
            .skip(begun + 1)
            .find(|(_, event)| event["type"] == "run" && event["run"] == run)
            .map(|(index, _)| index)
            .expect("the run's next step");
        let other = if owner == "a" { "b" } else { "a" };
        moved["events"][later]["instance"] = serde_json::json!(other);
        let message = refused(&moved);
        assert!(
            message.contains(&format!("events[{later}].instance")) && message.contains("a run is one instance's"),
            "{message}"
        );
        // A Redis command under a strategy that sends none, right after the first run begins.
        let mut db_lock = document("calm-night", StrategyId::DbLock);
        let begins = db_lock["events"]
            .as_array()
            .expect("events")
            .iter()
            .position(|event| event["type"] == "run")
            .expect("a run");
        let mut command = fencing["events"]
            .as_array()
            .expect("events")
            .iter()
            .find(|event| event["type"] == "redis")
            .expect("a command")
            .clone();
        for field in ["at_ms", "run"] {
            command[field] = db_lock["events"][begins][field].clone();
        }
        command["client"] = db_lock["events"][begins]["instance"].clone();
        db_lock["events"].as_array_mut().expect("events").insert(begins + 1, command);
        let message = refused(&db_lock);
        assert!(
            message.starts_with(&format!("events[{}].type: db-lock sends no Redis command", begins + 1)),
            "{message}"
        );
    }

    #[test]
    fn a_document_must_carry_the_scenario_it_names() {
        let mut bare = document("calm-night", StrategyId::Fencing);
        bare.as_object_mut().expect("an object").remove("scenario_document");
        assert!(refused(&bare).starts_with("scenario_document: the document does not carry its scenario"));
        let mut reseeded = document("calm-night", StrategyId::Fencing);
        reseeded["seed"] = serde_json::json!(12_345);
        assert!(
            refused(&reseeded).starts_with("seed: 12345 is not the seed of the scenario"),
            "{}",
            refused(&reseeded)
        );
        let mut broken = document("calm-night", StrategyId::Fencing);
        broken["scenario_document"]["world"]["instances"] = serde_json::json!(99);
        assert!(refused(&broken).starts_with("scenario_document.world.instances: "), "{}", refused(&broken));
    }

    #[test]
    fn a_stalled_recording_is_inconclusive_and_says_when_how_long_and_what_would_do() {
        let mut live = LiveRecording::new(vec!["Redis 7".to_owned()], 60);
        assert_eq!((live.inconclusive(), live.stall_sentence()), (false, None));
        live.allowed_lag_us = 16_000;
        live.longest_lag_us = 250_000;
        live.stalls = vec![
            Stall { at_ms: 61_000, lag_us: 250_000, allowed_us: 16_000, instance: None, server: None },
            Stall { at_ms: 90_000, lag_us: 20_000, allowed_us: 16_000, instance: Some(InstanceId(1)), server: None },
        ];
        live.faithful_time_scale = Some(3);
        assert!(live.inconclusive());
        let sentence = live.stall_sentence().expect("a stall");
        for part in ["the coordinator", "t=61 s", "250 ms", "(and once more)", "16 ms", "×60", "15 s", "--time-scale 3"]
        {
            assert!(sentence.contains(part), "{part}: {sentence}");
        }
        // A server late to answer an instance is named with the instance it kept waiting.
        live.stalls[0].server = Some(Party::Redis(crate::ids::RedisNodeId(2)));
        live.stalls[0].instance = Some(InstanceId(0));
        let sentence = live.stall_sentence().expect("a stall");
        assert!(sentence.contains("the machine stalled redis-3's answer to a at t=61 s"), "{sentence}");
    }

    #[test]
    fn a_stall_of_any_server_live_mode_runs_reads_back_and_an_instance_is_no_server() {
        let scenario =
            Scenario::from_json(crate::builtin::find("calm-night").expect("a built-in").text).expect("valid");
        let mut live = LiveRecording::new(vec!["Redis 7".to_owned()], 15);
        live.allowed_lag_us = 16_000;
        live.longest_lag_us = 40_000;
        live.faithful_time_scale = Some(3);
        let stall =
            |server| Stall { at_ms: 1_000, lag_us: 40_000, allowed_us: 16_000, instance: Some(InstanceId(0)), server };
        for server in [Party::Storage, Party::Slack, Party::Db, Party::Consensus, Party::RedisReplica] {
            live.stalls = vec![stall(Some(server))];
            assert_eq!(check_recording(&live, &scenario, &[]).map_err(|error| error.to_string()), Ok(()), "{server}");
        }
        live.stalls = vec![stall(Some(Party::Instance(InstanceId(1))))];
        let refused = check_recording(&live, &scenario, &[]).expect_err("an instance is no server").to_string();
        assert!(refused.starts_with("live.stalls[0].server: b is not a server"), "{refused}");
    }
}
