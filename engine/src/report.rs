//! The report of the contract (`locklab-report/2`), computed from the event
//! log alone: safety, liveness, the metrics and the findings.
//!
//! A run's *epoch* is its place in the order in which the lock service granted
//! runs the lock (its own truth, not the client's belief), or, under
//! unique-insert, the order in which runs started. A run that gives the lock
//! back and takes it again gets a new epoch: a write belongs to its run's latest
//! grant. A redelivered job runs under the grant it was first handed out with,
//! so it has that run's epoch. A write is *stale* when the object already
//! holds a write from a later epoch.
//!
//! Safety has three values. `unsafe`: a stale write landed, or a stored
//! report was damaged (mixed runs when a run marked it complete, went back in
//! time after a newer run completed it, or was left half rewritten). Else
//! `at_risk`: two runs held the lock at once (by the service's truth or their
//! own belief), one wrote where no fence checked while the other held it, and
//! the other wrote unfenced too while it held it; only timing kept the data
//! intact. Else `safe`: every write made during an overlap was fenced.

use crate::event::{
    AbortReason, BackgroundOutcome, ConnectionChange, DbClient, Event, EventKind, PutOutcome, RevokeReason,
    RowLockChange, RunPhase, SqlOutcome, TerminateReason, abort_text,
};
use crate::format::seconds;
use crate::ids::{InstanceId, Party, Period, ReportOf, RunId, SessionId, Token};
use crate::scenario::{Expectation, Fault, Liveness, Output, ReportRule, Safety, Scenario, StrategyId, World};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The report format tag.
pub const REPORT_FORMAT: &str = "locklab-report/2";

/// The report on a whole scenario.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub format: &'static str,
    pub scenario: String,
    pub seed: u64,
    pub results: Vec<StrategyReport>,
}

impl Report {
    pub fn new(scenario: &Scenario, results: Vec<StrategyReport>) -> Report {
        Report { format: REPORT_FORMAT, scenario: scenario.name.clone(), seed: scenario.seed, results }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// The verdict on one strategy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StrategyReport {
    pub strategy: StrategyId,
    pub safety: Safety,
    pub liveness: Liveness,
    pub metrics: Metrics,
    pub findings: Vec<Finding>,
}

/// The contract's metrics.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Metrics {
    pub overlap_ms: u64,
    pub stale_writes_accepted: u32,
    pub stale_writes_rejected: u32,
    pub corrupted_reports: u32,
    pub runs_started: u32,
    pub duplicate_runs: u32,
    pub duplicate_side_effects: u32,
    pub missed_periods: u32,
    pub max_report_delay_ms: u64,
    pub db_lock_wait_ms: u64,
    pub pool_exhausted_ms: u64,
    pub background_query_timeouts: u32,
}

/// Declares the metrics once: the enum, and [`Metric::ALL`] in the order
/// they are declared, so a new metric is shown everywhere without a second
/// list to forget.
macro_rules! metrics {
    ($( $(#[$meta:meta])* $variant:ident ),* $(,)?) => {
        /// One figure of a report. Every table and line that shows the
        /// metrics (the lab's verdict and its comparison of the six
        /// strategies, the command line, the exported figure) lists them from
        /// here, in this order and under these names, so a metric is added or
        /// renamed in one place.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Metric {
            $( $(#[$meta])* $variant ),*
        }

        impl Metric {
            /// Every metric, in the order tables and lines show them.
            pub const ALL: [Metric; [$( stringify!($variant) ),*].len()] = [$( Metric::$variant ),*];
        }
    };
}

metrics! {
    Overlap,
    StaleWritesAccepted,
    StaleWritesRejected,
    CorruptedReports,
    /// Runs started, with the duplicates among them.
    Runs,
    DuplicateSideEffects,
    MissedPeriods,
    MaxReportDelay,
    RowLockWaits,
    PoolExhausted,
    BackgroundFailures,
}

impl Metric {
    /// Its key in the pages' markup (`data-metric`) and tests.
    pub fn key(self) -> &'static str {
        match self {
            Metric::Overlap => "overlap",
            Metric::StaleWritesAccepted => "stale-accepted",
            Metric::StaleWritesRejected => "stale-rejected",
            Metric::CorruptedReports => "corrupted",
            Metric::Runs => "runs",
            Metric::DuplicateSideEffects => "side-effects",
            Metric::MissedPeriods => "missed",
            Metric::MaxReportDelay => "delay",
            Metric::RowLockWaits => "lock-wait",
            Metric::PoolExhausted => "pool",
            Metric::BackgroundFailures => "background",
        }
    }

    /// Its name for people, as a title (the lab's verdict, the comparison's
    /// column's tooltip); a line of text writes [`Metric::name`].
    pub fn title(self) -> &'static str {
        match self {
            Metric::Overlap => "Two believed they held the lock",
            Metric::StaleWritesAccepted => "Stale writes accepted",
            Metric::StaleWritesRejected => "Stale writes rejected",
            Metric::CorruptedReports => "Corrupted reports",
            Metric::Runs => "Runs started (duplicates)",
            Metric::DuplicateSideEffects => "Duplicate side effects",
            Metric::MissedPeriods => "Missed periods",
            Metric::MaxReportDelay => "Longest report delay",
            Metric::RowLockWaits => "Row-lock waits",
            Metric::PoolExhausted => "Pool exhausted",
            Metric::BackgroundFailures => "Background queries failed",
        }
    }

    /// Its name in a line of text: `stale writes accepted 1`.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Overlap => "overlap",
            Metric::StaleWritesAccepted => "stale writes accepted",
            Metric::StaleWritesRejected => "stale writes rejected",
            Metric::CorruptedReports => "corrupted reports",
            Metric::Runs => "runs (duplicates)",
            Metric::DuplicateSideEffects => "duplicate side effects",
            Metric::MissedPeriods => "missed periods",
            Metric::MaxReportDelay => "longest report delay",
            Metric::RowLockWaits => "row-lock waits",
            Metric::PoolExhausted => "pool exhausted",
            Metric::BackgroundFailures => "background queries failed",
        }
    }

    /// Its heading in a table's narrow column (the comparison, the command
    /// line's `compare`).
    pub fn column(self) -> &'static str {
        match self {
            Metric::Overlap => "Overlap",
            Metric::StaleWritesAccepted => "Stale ✓",
            Metric::StaleWritesRejected => "Stale ✗",
            Metric::CorruptedReports => "Corrupt",
            Metric::Runs => "Runs (dup.)",
            Metric::DuplicateSideEffects => "Dup. effects",
            Metric::MissedPeriods => "Missed",
            Metric::MaxReportDelay => "Delay",
            Metric::RowLockWaits => "Lock waits",
            Metric::PoolExhausted => "Pool out",
            Metric::BackgroundFailures => "Bg. failed",
        }
    }

    /// Whether a comparison of the strategies shows it. The waits and the
    /// pool are the database lock's own costs; its run's verdict shows them.
    pub fn compared(self) -> bool {
        match self {
            Metric::MaxReportDelay | Metric::RowLockWaits | Metric::PoolExhausted => false,
            Metric::Overlap
            | Metric::StaleWritesAccepted
            | Metric::StaleWritesRejected
            | Metric::CorruptedReports
            | Metric::Runs
            | Metric::DuplicateSideEffects
            | Metric::MissedPeriods
            | Metric::BackgroundFailures => true,
        }
    }

    /// The number it counts, for markup and sorting: milliseconds for a
    /// duration, runs started for [`Metric::Runs`].
    pub fn count(self, metrics: &Metrics) -> u64 {
        match self {
            Metric::Overlap => metrics.overlap_ms,
            Metric::StaleWritesAccepted => metrics.stale_writes_accepted.into(),
            Metric::StaleWritesRejected => metrics.stale_writes_rejected.into(),
            Metric::CorruptedReports => metrics.corrupted_reports.into(),
            Metric::Runs => metrics.runs_started.into(),
            Metric::DuplicateSideEffects => metrics.duplicate_side_effects.into(),
            Metric::MissedPeriods => metrics.missed_periods.into(),
            Metric::MaxReportDelay => metrics.max_report_delay_ms,
            Metric::RowLockWaits => metrics.db_lock_wait_ms,
            Metric::PoolExhausted => metrics.pool_exhausted_ms,
            Metric::BackgroundFailures => metrics.background_query_timeouts.into(),
        }
    }

    /// Its value for people: a duration through `duration` (the lab rounds,
    /// the command line keeps milliseconds), runs with their duplicates.
    pub fn value(self, metrics: &Metrics, duration: fn(u64) -> String) -> String {
        match self {
            Metric::Overlap | Metric::MaxReportDelay | Metric::RowLockWaits | Metric::PoolExhausted => {
                duration(self.count(metrics))
            }
            Metric::Runs => format!("{} ({})", metrics.runs_started, metrics.duplicate_runs),
            Metric::StaleWritesAccepted
            | Metric::StaleWritesRejected
            | Metric::CorruptedReports
            | Metric::DuplicateSideEffects
            | Metric::MissedPeriods
            | Metric::BackgroundFailures => self.count(metrics).to_string(),
        }
    }

    /// The metrics in one line: `overlap 1.5 s · stale writes accepted 1 · …`,
    /// all of them or the compared ones.
    pub fn line(metrics: &Metrics, duration: fn(u64) -> String, only_compared: bool) -> String {
        let parts: Vec<String> = Metric::ALL
            .iter()
            .filter(|metric| metric.compared() || !only_compared)
            .map(|metric| format!("{} {}", metric.name(), metric.value(metrics, duration)))
            .collect();
        parts.join(" · ")
    }
}

/// One notable event, as a sentence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub at_ms: u64,
    pub kind: &'static str,
    pub text: String,
    /// Index of the event in the log, so a view can jump to it (an extension).
    pub event: u32,
}

impl StrategyReport {
    /// The efficiency half of the verdict (Kleppmann separates locks for
    /// efficiency from locks for correctness): the work done more than once.
    pub fn efficiency(&self) -> String {
        let metrics = &self.metrics;
        if metrics.duplicate_runs == 0 && metrics.duplicate_side_effects == 0 {
            return "no duplicated work".to_owned();
        }
        let (runs, effects) = (metrics.duplicate_runs, metrics.duplicate_side_effects);
        format!(
            "{runs} duplicate {}, {effects} duplicate {}",
            if runs == 1 { "run" } else { "runs" },
            if effects == 1 { "upload/post" } else { "uploads/posts" }
        )
    }

    /// Checks an expectation; the error says what differs.
    pub fn check(&self, expected: &Expectation) -> Result<(), String> {
        let mut problems = Vec::new();
        if self.safety != expected.safety {
            problems.push(format!("safety is {:?}, expected {:?}", self.safety, expected.safety));
        }
        if self.liveness != expected.liveness {
            problems.push(format!("liveness is {:?}, expected {:?}", self.liveness, expected.liveness));
        }
        for kind in &expected.findings {
            if !self.findings.iter().any(|finding| finding.kind == kind) {
                problems.push(format!("no `{kind}` finding"));
            }
        }
        if problems.is_empty() { Ok(()) } else { Err(problems.join("; ")) }
    }
}

/// Which object a write went to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Object {
    Chunk(ReportOf, u8),
    Row(ReportOf),
}

/// What the report knows of one run.
#[derive(Clone, Copy, Debug, Default)]
struct RunFacts {
    instance: Option<InstanceId>,
    /// The run's current epoch: the rank of its latest grant.
    epoch: Option<u32>,
    /// The period it is working on, from its start until it ends.
    working: Option<Period>,
    /// It gave up on its report row (client timeout): the row may still land.
    gave_up_on_row: bool,
    /// A job handed again after its process died (it took no lock itself).
    redelivered: bool,
    /// The report whose chunks it has written to, if any.
    wrote_to: Option<ReportOf>,
    /// Its first write where no fence checked while it held the lock.
    unfenced: Option<UnfencedWrite>,
}

/// A write that no fence checked, made while its run held the lock.
#[derive(Clone, Copy, Debug)]
struct UnfencedWrite {
    at_ms: u64,
    event: u32,
    run: RunId,
    what: WriteKind,
}

#[derive(Clone, Copy, Debug)]
enum WriteKind {
    Chunk { chunk: u8, report: ReportOf, token: Option<Token> },
    Post,
    Row { report: ReportOf },
}

/// The complete version of a report: which run marked it complete, from which epoch.
#[derive(Clone, Copy, Debug)]
struct Version {
    run: RunId,
    epoch: Option<u32>,
    damaged: bool,
}

/// What the report counts of one period.
#[derive(Clone, Copy, Debug, Default)]
struct PeriodFacts {
    runs_started: u32,
    puts: u32,
    posts: u32,
    /// When its report row landed first.
    report_done_ms: Option<u64>,
}

/// The entry for `index` in a table indexed by a dense id, grown as needed.
fn entry<T: Default + Clone>(table: &mut Vec<T>, index: u32) -> &mut T {
    let index = usize::try_from(index).unwrap_or(usize::MAX);
    if index >= table.len() {
        table.resize(index + 1, T::default());
    }
    &mut table[index]
}

struct Analysis {
    /// The world the run happened in, and how long it lasted.
    world: World,
    duration_ms: u64,
    strategy: StrategyId,
    /// Events read so far: the next one's index in the log.
    events: u32,
    metrics: Metrics,
    findings: Vec<Finding>,
    /// Per run and per period, by id: run and period ids are dense from 0,
    /// and the log names a run on every step it takes, so these tables are
    /// vectors rather than maps.
    runs: Vec<RunFacts>,
    periods: Vec<PeriodFacts>,
    /// The run of each epoch, by rank.
    epoch_runs: Vec<RunId>,
    latest_epoch: BTreeMap<Object, u32>,
    /// Who wrote each stored chunk last.
    /// (A short list: a report has a few chunks and a run writes one or two reports.)
    chunk_writer: Vec<(ReportOf, u8, RunId)>,
    /// The complete version of each report (a run writes one or two reports:
    /// a short list, and no map to carry in the browser's wasm).
    versions: Vec<(ReportOf, Version)>,
    /// The runs that hold the lock now: by the service's truth, by their own
    /// belief. Rarely more than two, so a list.
    holders: Vec<(RunId, bool, bool)>,
    /// Unfenced writes made while another run also held the lock, with that run.
    overlapping_writes: Vec<(UnfencedWrite, RunId)>,
    reports: ReportRule,
    token_holder: BTreeMap<Token, (InstanceId, RunId)>,
    believers: BTreeMap<InstanceId, (RunId, Option<Token>)>,
    waits: BTreeMap<SessionId, u64>,
    exhausted: BTreeSet<InstanceId>,
    last_ms: u64,
    said_background: bool,
    said_pool: bool,
}

/// Computes the report of one strategy from its log.
pub fn analyze(scenario: &Scenario, strategy: StrategyId, log: &[Event]) -> StrategyReport {
    let mut report = ReportBuilder::new(scenario, strategy);
    report.feed(log);
    report.finish()
}

/// A report being computed, fed the log a slice at a time (as the lab feeds
/// a long run's; see [`crate::Simulation`]); [`analyze`] is this, fed in one go.
pub struct ReportBuilder(Analysis);

impl std::fmt::Debug for ReportBuilder {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("ReportBuilder").field("events", &self.0.events).finish()
    }
}

impl ReportBuilder {
    pub fn new(scenario: &Scenario, strategy: StrategyId) -> ReportBuilder {
        ReportBuilder(Analysis {
            world: scenario.world.clone(),
            duration_ms: scenario.duration_ms(),
            strategy,
            events: 0,
            metrics: Metrics::default(),
            findings: Vec::with_capacity(16),
            // Room for a typical run's attempts and periods, so they rarely grow.
            runs: Vec::with_capacity(128),
            periods: Vec::with_capacity(
                usize::try_from(scenario.duration_ms().div_ceil(scenario.world.cron_period_ms.max(1)))
                    .unwrap_or(0)
                    .min(1024),
            ),
            epoch_runs: Vec::with_capacity(16),
            latest_epoch: BTreeMap::new(),
            chunk_writer: Vec::new(),
            versions: Vec::new(),
            holders: Vec::new(),
            overlapping_writes: Vec::new(),
            reports: ReportRule::of(scenario),
            token_holder: BTreeMap::new(),
            believers: BTreeMap::new(),
            waits: BTreeMap::new(),
            exhausted: BTreeSet::new(),
            last_ms: 0,
            said_background: false,
            said_pool: false,
        })
    }

    /// Reads the log's next events, in order.
    pub fn feed(&mut self, events: &[Event]) {
        let analysis = &mut self.0;
        for event in events {
            let index = analysis.events;
            analysis.events = analysis.events.saturating_add(1);
            // Most of a log is nothing the report reads: messages on their way
            // (what they carry is logged where it lands) and the commands and
            // statements that went as planned. Skipping them also skips
            // `advance`, which is the same: what it adds up (time with two
            // believers, time with a pool exhausted) only changes at events the
            // report reads, so the time since the last one is added at the next.
            let read = match &event.kind {
                EventKind::Sent { .. }
                | EventKind::Redis { .. }
                | EventKind::Replicated { .. }
                | EventKind::LeaseRefreshed { .. } => false,
                EventKind::Sql { outcome, .. } => matches!(outcome, SqlOutcome::StaleToken { .. }),
                EventKind::Fault { .. }
                | EventKind::Cron { .. }
                | EventKind::Process { .. }
                | EventKind::Clock { .. }
                | EventKind::Lost { .. }
                | EventKind::Run { .. }
                | EventKind::Granted { .. }
                | EventKind::Revoked { .. }
                | EventKind::Belief { .. }
                | EventKind::KeyExpired { .. }
                | EventKind::KeysLost { .. }
                | EventKind::RedisDown { .. }
                | EventKind::RedisUp { .. }
                | EventKind::Connection { .. }
                | EventKind::RowLock { .. }
                | EventKind::Pool { .. }
                | EventKind::Background { .. }
                | EventKind::Put { .. }
                | EventKind::Post { .. }
                | EventKind::Consensus { .. }
                | EventKind::LeaseExpired { .. }
                | EventKind::Leader { .. }
                | EventKind::RowApplied { .. }
                | EventKind::DbSlow { .. } => true,
            };
            if read {
                analysis.advance(event.at_ms);
                analysis.event(index, event);
            }
        }
    }

    /// The report, once the whole log has been fed.
    pub fn finish(self) -> StrategyReport {
        self.0.finish()
    }
}

impl Analysis {
    /// Adds a finding in time order: one decided late (at the end of the run)
    /// goes where it happened, after the findings of the same moment.
    fn say(&mut self, at_ms: u64, event: u32, kind: &'static str, text: String) {
        let position = self.findings.partition_point(|finding| finding.at_ms <= at_ms);
        self.findings.insert(position, Finding { at_ms, kind, text, event });
    }

    fn advance(&mut self, at_ms: u64) {
        let elapsed = at_ms.saturating_sub(self.last_ms);
        if self.believers.len() >= 2 {
            self.metrics.overlap_ms += elapsed;
        }
        if !self.exhausted.is_empty() {
            self.metrics.pool_exhausted_ms += elapsed;
        }
        self.last_ms = at_ms.max(self.last_ms);
    }

    fn run(&self, run: RunId) -> RunFacts {
        usize::try_from(run.0).ok().and_then(|index| self.runs.get(index).copied()).unwrap_or_default()
    }

    fn who(&self, run: RunId) -> String {
        self.run(run).instance.map_or_else(|| run.to_string(), |instance| instance.to_string())
    }

    /// The epoch of a run; a run never granted (it should not write) ranks last-but-unknown.
    fn epoch(&self, run: RunId) -> Option<u32> {
        self.run(run).epoch
    }

    /// Records an applied write; returns the later run whose write it lands on, if stale.
    fn applied(&mut self, object: Object, run: RunId) -> Option<u32> {
        let epoch = self.epoch(run)?;
        let latest = self.latest_epoch.entry(object).or_insert(epoch);
        if epoch < *latest {
            return Some(*latest);
        }
        *latest = epoch;
        None
    }

    fn run_of_epoch(&self, epoch: u32) -> Option<RunId> {
        self.epoch_runs.get(usize::try_from(epoch).ok()?).copied()
    }

    /// A new epoch begins for `run`: the lock service granted it the lock (or, without a lock, it started).
    fn begin_epoch(&mut self, run: RunId) {
        let epoch = u32::try_from(self.epoch_runs.len()).unwrap_or(u32::MAX);
        self.epoch_runs.push(run);
        entry(&mut self.runs, run.0).epoch = Some(epoch);
    }

    /// A run starts or stops holding the lock, by the service's truth or its own belief.
    fn set_holding(&mut self, run: RunId, truth: Option<bool>, belief: Option<bool>) {
        let position = match self.holders.iter().position(|(holder, ..)| *holder == run) {
            Some(position) => position,
            None => {
                self.holders.push((run, false, false));
                self.holders.len() - 1
            }
        };
        let holding = &mut self.holders[position];
        holding.1 = truth.unwrap_or(holding.1);
        holding.2 = belief.unwrap_or(holding.2);
        if !holding.1 && !holding.2 {
            self.holders.swap_remove(position);
        }
    }

    /// `run` no longer holds the lock in any sense (it ended).
    fn stop_holding(&mut self, run: RunId) {
        self.holders.retain(|(holder, ..)| *holder != run);
    }

    /// The complete version of `report`, if a run has completed it.
    fn version(&self, report: ReportOf) -> Option<Version> {
        self.versions.iter().find(|(of, _)| *of == report).map(|(_, version)| *version)
    }

    /// A write that no fence checked. It matters only if its run held the
    /// lock: then it is remembered, and so is every other run holding it too.
    fn unfenced(&mut self, at_ms: u64, event: u32, run: RunId, what: WriteKind) {
        if !self.holders.iter().any(|(holder, ..)| *holder == run) {
            return;
        }
        let write = UnfencedWrite { at_ms, event, run, what };
        entry(&mut self.runs, run.0).unfenced.get_or_insert(write);
        let others: Vec<RunId> =
            self.holders.iter().map(|(holder, ..)| *holder).filter(|other| *other != run).collect();
        for other in others {
            if !self.overlapping_writes.iter().any(|(seen, with)| seen.run == run && *with == other) {
                self.overlapping_writes.push((write, other));
            }
        }
    }

    /// A write for people: whose, what, and why no fence checked it.
    fn describe(&self, write: &UnfencedWrite) -> String {
        let who = self.who(write.run);
        match write.what {
            WriteKind::Chunk { chunk, report, token: None } => {
                format!("{who}'s upload of chunk {chunk} to {report} (it carries no token)")
            }
            WriteKind::Chunk { chunk, report, token: Some(token) } => format!(
                "{who}'s upload of chunk {chunk} to {report} with token {token} (this storage does not check tokens)"
            ),
            WriteKind::Post => format!("{who}'s Slack post (Slack cannot check a token)"),
            WriteKind::Row { report } => format!("{who}'s report row for {report} (it carries no token)"),
        }
    }

    /// The distinct runs whose chunks `report` holds now, in run order.
    fn chunk_runs(&self, report: ReportOf) -> Vec<RunId> {
        let mut runs: Vec<RunId> = Vec::new();
        for (of, _, run) in &self.chunk_writer {
            let at = runs.partition_point(|other| other < run);
            if *of == report && runs.get(at) != Some(run) {
                runs.insert(at, *run);
            }
        }
        runs
    }

    /// Marks the complete version of `report` damaged, once, with a sentence.
    fn damage(&mut self, report: ReportOf, at_ms: u64, event: u32, kind: &'static str, text: String) {
        let Some((_, version)) = self.versions.iter_mut().find(|(of, _)| *of == report) else {
            return;
        };
        if version.damaged {
            return;
        }
        version.damaged = true;
        self.metrics.corrupted_reports += 1;
        self.say(at_ms, event, kind, text);
    }

    /// The complete version of `report` that a write from `run` would take
    /// back in time: one a run of a later grant completed.
    fn goes_back(&self, report: ReportOf, run: RunId) -> Option<Version> {
        let version = self.version(report)?;
        let (epoch, completed) = (self.epoch(run)?, version.epoch?);
        (epoch < completed && version.run != run).then_some(version)
    }

    /// Why `run`'s `what` took `report` back to before `newer`, and why nothing refused it.
    fn went_back(&self, report: ReportOf, run: RunId, newer: Version, what: &str, token: Option<Token>) -> String {
        let why = match token {
            None => " It carries no token, so nothing could refuse it.".to_owned(),
            Some(token) if self.token_of(newer.run) == Some(token) => {
                format!(" Both runs hold token {token}: the counter went back, so the fence cannot tell them apart.")
            }
            Some(_) if !self.world.storage_checks_tokens => " This storage does not check tokens.".to_owned(),
            Some(_) => String::new(),
        };
        format!(
            "{}'s {what} lands on {report} after {} (a later grant) completed it: the stored report goes back in time.{why}",
            self.who(run),
            self.who(newer.run)
        )
    }

    /// `run`'s report row landed: the report is complete. It is damaged if its
    /// stored chunks come from more than one run (under unique-insert
    /// each run writes objects of its own, and none are tracked here), or if
    /// a run of a later grant had completed it before: it went back in time.
    fn completed(&mut self, report: ReportOf, run: RunId, token: Option<Token>, at: u64, index: u32) {
        let back = self.goes_back(report, run);
        let version = Version { run, epoch: self.epoch(run), damaged: false };
        match self.versions.iter_mut().find(|(of, _)| *of == report) {
            Some((_, slot)) => *slot = version,
            None => self.versions.push((report, version)),
        }
        if let Some(newer) = back {
            // The new version is the one damaged: the row now says the older run's.
            let text = self.went_back(report, run, newer, "report row", token);
            self.damage(report, at, index, "report_went_back", text);
            return;
        }
        let writers = self.chunk_runs(report);
        if writers.len() > 1 {
            let names: Vec<String> = writers.iter().map(|writer| self.who(*writer)).collect();
            let text = format!(
                "{} marks {report} complete, but its stored chunks come from {}: the report mixes two runs",
                self.who(run),
                names.join(" and ")
            );
            self.damage(report, at, index, "corrupted_report", text);
        }
    }

    /// `run` stopped before finishing. If it had rewritten part of a report
    /// another run had completed, and its chunks are still there, the stored
    /// report is left mixed.
    fn left_half_rewritten(&mut self, run: RunId, at: u64, index: u32) {
        let Some(report) = self.run(run).wrote_to else {
            return;
        };
        let Some(version) = self.version(report) else {
            return;
        };
        let writers = self.chunk_runs(report);
        if version.damaged || version.run == run || !writers.contains(&run) || writers.len() < 2 {
            return;
        }
        // Another run still rewriting the report will overwrite what this one left.
        let rules = self.reports;
        let rewriting = (0u32..).zip(&self.runs).any(|(other, facts)| {
            other != run.0 && facts.working.is_some_and(|period| rules.report_of(period) == report)
        });
        if rewriting {
            return;
        }
        let names: Vec<String> = writers.iter().map(|writer| self.who(*writer)).collect();
        let fenced =
            self.world.storage_checks_tokens && matches!(self.strategy, StrategyId::Fencing | StrategyId::Consensus);
        let note = if fenced {
            " Each chunk write was fenced; a fence checks one write, and the report is several."
        } else {
            ""
        };
        let text = format!(
            "{} stopped halfway through rewriting {report} after {} had completed it, so the stored report mixes chunks from {}: a report made of several objects is not written atomically.{note}",
            self.who(run),
            self.who(version.run),
            names.join(" and ")
        );
        self.damage(report, at, index, "partial_rewrite", text);
    }

    /// The token a run was seen to hold, if any.
    fn token_of(&self, run: RunId) -> Option<Token> {
        self.token_holder.iter().find(|(_, (_, holder))| *holder == run).map(|(token, _)| *token)
    }

    fn event(&mut self, index: u32, event: &Event) {
        let at = event.at_ms;
        self.track_epochs(event);
        match &event.kind {
            EventKind::Fault { fault, targets } => self.on_fault(at, index, fault, targets),
            EventKind::Run { run, instance, period, phase } => self.on_run(at, index, run, instance, period, phase),
            EventKind::Granted { run, instance, token } => self.on_granted(at, index, run, instance, token),
            EventKind::Revoked { run, instance, reason } => self.on_revoked(at, index, run, instance, reason),
            EventKind::Belief { instance, run, holds, token } => self.on_belief(at, index, instance, run, holds, token),
            EventKind::Put { .. } => self.on_put(at, index, &event.kind),
            EventKind::Post { instance, run, period } => self.on_post(at, index, *instance, *run, *period),
            EventKind::RowApplied { period, report, run, token } => {
                self.on_row_applied(at, index, period, report, run, token)
            }
            EventKind::Sql { client, outcome: SqlOutcome::StaleToken { highest }, .. } => {
                self.metrics.stale_writes_rejected += 1;
                let text = format!("the database refused {client}'s report row: the row already has token {highest}");
                self.say(at, index, "stale_write_rejected", text);
            }
            EventKind::RowLock { session, change, client, .. } => {
                self.on_row_lock(at, index, *session, *change, *client)
            }
            EventKind::Connection { client, change: ConnectionChange::Terminated(reason), .. } => {
                self.on_terminated(at, index, *client, *reason);
            }
            EventKind::Pool { instance, busy, .. } => self.on_pool(at, index, *instance, *busy),
            EventKind::Background { outcome, .. } if *outcome != BackgroundOutcome::Ok => {
                self.metrics.background_query_timeouts += 1;
                if !self.said_background {
                    self.said_background = true;
                    let text =
                        "other services' queries start failing: their foreign-key checks wait behind the jobs row lock";
                    self.say(at, index, "background_timeouts", text.to_owned());
                }
            }
            EventKind::KeysLost { node, keys } => {
                let text = format!("{node} lost {keys} key(s): what it had not persisted or replicated is gone");
                self.say(at, index, "keys_lost", text);
            }
            EventKind::Cron { .. }
            | EventKind::Process { .. }
            | EventKind::Clock { .. }
            | EventKind::Sent { .. }
            | EventKind::Lost { .. }
            | EventKind::Redis { .. }
            | EventKind::KeyExpired { .. }
            | EventKind::RedisDown { .. }
            | EventKind::RedisUp { .. }
            | EventKind::Sql { .. }
            | EventKind::Connection { .. }
            | EventKind::Background { .. }
            | EventKind::Consensus { .. }
            | EventKind::LeaseExpired { .. }
            | EventKind::Leader { .. }
            | EventKind::LeaseRefreshed { .. }
            | EventKind::Replicated { .. }
            | EventKind::DbSlow { .. } => {}
        }
    }

    /// Which grant each run works under: a grant begins an epoch (under
    /// unique-insert, which grants nothing, a run's start does), and a
    /// redelivered job runs under the grant it was first handed out with.
    fn track_epochs(&mut self, event: &Event) {
        match event.kind {
            EventKind::Granted { run, .. } if self.strategy != StrategyId::UniqueInsert => self.begin_epoch(run),
            EventKind::Run { run, phase: RunPhase::Started, .. }
                if self.strategy == StrategyId::UniqueInsert && !self.run(run).redelivered =>
            {
                self.begin_epoch(run);
            }
            EventKind::Run { run, phase: RunPhase::Redelivered(from), .. } => {
                let epoch = self.epoch(from);
                let facts = entry(&mut self.runs, run.0);
                facts.epoch = epoch;
                facts.redelivered = true;
            }
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
            | EventKind::Redis { .. }
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
            | EventKind::Put { .. }
            | EventKind::Post { .. }
            | EventKind::Consensus { .. }
            | EventKind::LeaseExpired { .. }
            | EventKind::Leader { .. }
            | EventKind::LeaseRefreshed { .. }
            | EventKind::RowApplied { .. }
            | EventKind::DbSlow { .. } => {}
        }
    }

    fn on_fault(&mut self, at: u64, index: u32, fault: &Fault, targets: &[Party]) {
        let names: Vec<String> = targets.iter().map(ToString::to_string).collect();
        let text = if targets.is_empty() {
            format!("{fault}: there was nothing to strike, so the fault did nothing")
        } else if fault.targets_holder() {
            format!("{fault} — it strikes {}", names.join(", "))
        } else {
            format!("{fault}")
        };
        self.say(at, index, "fault", text);
    }

    /// A Slack post: Slack cannot check a token, so a second post of a period is a duplicate side effect.
    fn on_post(&mut self, at: u64, index: u32, instance: InstanceId, run: RunId, period: Period) {
        self.unfenced(at, index, run, WriteKind::Post);
        let count = {
            let facts = entry(&mut self.periods, period.0);
            facts.posts += 1;
            facts.posts
        };
        if count > 1 {
            let text = format!(
                "{instance} posts period {}'s report to Slack again (post {count}); Slack cannot check a token",
                period.0
            );
            self.say(at, index, "duplicate_post", text);
        }
    }

    /// Time spent waiting for the jobs row lock, and an instance's long wait.
    fn on_row_lock(&mut self, at: u64, index: u32, session: SessionId, change: RowLockChange, client: DbClient) {
        match change {
            RowLockChange::Waiting => {
                self.waits.insert(session, at);
            }
            RowLockChange::Granted | RowLockChange::GaveUp => {
                if let Some(since) = self.waits.remove(&session) {
                    self.metrics.db_lock_wait_ms += at - since;
                    if at - since >= 60_000 && matches!(client, DbClient::Instance(_)) {
                        let text = format!("{client} waited {} for the jobs row lock", seconds(at - since));
                        self.say(at, index, "long_lock_wait", text);
                    }
                }
            }
            RowLockChange::Released => {}
        }
    }

    fn on_terminated(&mut self, at: u64, index: u32, client: DbClient, reason: TerminateReason) {
        let how = match reason {
            TerminateReason::ClientDisconnected => "its socket closed",
            TerminateReason::KeepaliveTimeout => "TCP keepalive gave up on the vanished host",
            TerminateReason::IdleInTransactionTimeout => "idle_in_transaction_session_timeout fired",
        };
        let text = format!("the database ended {client}'s session ({how}); its transaction rolled back");
        self.say(at, index, "session_ended", text);
    }

    /// A pool is exhausted when every connection it may open is busy
    /// (waiting for one to open is not); the first exhaustion is a finding.
    fn on_pool(&mut self, at: u64, index: u32, instance: InstanceId, busy: u8) {
        let size = self.world.db_pool_size;
        if busy >= size {
            if self.exhausted.insert(instance) && !self.said_pool {
                self.said_pool = true;
                let text = format!("{instance}'s connection pool is exhausted: all {size} connections are busy");
                self.say(at, index, "pool_exhausted", text);
            }
        } else {
            self.exhausted.remove(&instance);
        }
    }

    /// A run started or ended: duplicates and reruns, and a run that stopped.
    fn on_run(&mut self, at: u64, index: u32, run: &RunId, instance: &InstanceId, period: &Period, phase: &RunPhase) {
        entry(&mut self.runs, run.0).instance = Some(*instance);
        match phase {
            RunPhase::Started => {
                self.metrics.runs_started += 1;
                let count = {
                    let facts = entry(&mut self.periods, period.0);
                    facts.runs_started += 1;
                    facts.runs_started
                };
                let others: Vec<String> = (0u32..)
                    .zip(&self.runs)
                    .filter(|(other, facts)| facts.working == Some(*period) && *other != run.0)
                    .map(|(other, _)| self.who(RunId(other)))
                    .collect();
                if !others.is_empty() {
                    let verb = if others.len() > 1 { "are" } else { "is" };
                    let text = format!(
                        "{instance} starts period {}'s job while {} {verb} still running it",
                        period.0,
                        others.join(" and ")
                    );
                    self.say(at, index, "duplicate_run", text);
                } else if count > 1 {
                    let text =
                        format!("{instance} runs period {}'s job again: the earlier run did not finish", period.0);
                    self.say(at, index, "rerun", text);
                }
                let facts = entry(&mut self.runs, run.0);
                facts.working = Some(*period);
            }
            RunPhase::Finished | RunPhase::Aborted(_) | RunPhase::Skipped | RunPhase::GaveUp => {
                // A run that ended writes no more: it no longer counts as a holder.
                self.stop_holding(*run);
                if matches!(phase, RunPhase::Aborted(_)) {
                    self.left_half_rewritten(*run, at, index);
                }
                let facts = entry(&mut self.runs, run.0);
                facts.working = None;
                if *phase == RunPhase::Aborted(AbortReason::RowWriteFailed) {
                    facts.gave_up_on_row = true;
                }
                if let RunPhase::Aborted(reason) = phase
                    && *reason != AbortReason::ProcessDied
                {
                    let text = format!("{instance} stops its job: {}", abort_text(*reason));
                    self.say(at, index, "run_aborted", text);
                }
            }
            RunPhase::Trying | RunPhase::Busy | RunPhase::Acquired | RunPhase::Redelivered(_) => {}
        }
    }

    /// The lock service granted the lock: to another while one still believed?
    fn on_granted(&mut self, at: u64, index: u32, run: &RunId, instance: &InstanceId, token: &Option<Token>) {
        self.set_holding(*run, Some(true), None);
        if let Some((other, (_, other_token))) =
            self.believers.iter().find(|(believer, (other_run, _))| *believer != instance && other_run != run)
        {
            let other_token = other_token.map(|token| format!(" (token {token})")).unwrap_or_default();
            let text = format!(
                "the lock service grants the lock to {instance} while {other} still believes it holds it{other_token}"
            );
            self.say(at, index, "lock_granted_to_another", text);
        }
        if let Some(token) = token {
            self.token_holder.insert(*token, (*instance, *run));
        }
    }

    /// The lock service took the lock back: under a holder that still believes?
    fn on_revoked(&mut self, at: u64, index: u32, run: &RunId, instance: &InstanceId, reason: &RevokeReason) {
        self.set_holding(*run, Some(false), None);
        let still_believes = self.believers.get(instance).is_some_and(|(believed, _)| believed == run);
        match reason {
            RevokeReason::DeletedByOther => {
                let text = format!("a plain DEL from another run deleted {instance}'s lock while it was working");
                self.say(at, index, "lock_deleted_by_other", text);
            }
            RevokeReason::Expired if still_believes => {
                let text = format!("{instance}'s lock expired while {instance} still believes it holds it");
                self.say(at, index, "lease_expired_under_holder", text);
            }
            RevokeReason::Forgotten if still_believes => {
                let text = format!("the lock service forgot {instance}'s lock (keys lost) while {instance} holds it");
                self.say(at, index, "lock_forgotten", text);
            }
            RevokeReason::Released
            | RevokeReason::Expired
            | RevokeReason::Forgotten
            | RevokeReason::TransactionEnded => {}
        }
    }

    /// An instance came to believe it holds the lock, or stopped: overlaps and reused tokens.
    fn on_belief(
        &mut self,
        at: u64,
        index: u32,
        instance: &InstanceId,
        run: &RunId,
        holds: &bool,
        token: &Option<Token>,
    ) {
        self.set_holding(*run, None, Some(*holds));
        if *holds {
            if let Some(token) = token
                && !self.run(*run).redelivered
            {
                match self.token_holder.get(token) {
                    Some((other, other_run)) if other_run != run => {
                        let text = format!(
                            "token {token} is handed out twice: to {other} and now to {instance}; the counter went back"
                        );
                        self.say(at, index, "token_reused", text);
                    }
                    _ => {}
                }
                self.token_holder.insert(*token, (*instance, *run));
            }
            self.believers.insert(*instance, (*run, *token));
            if self.believers.len() == 2 {
                let names: Vec<String> = self.believers.keys().map(ToString::to_string).collect();
                let text = format!("{} both believe they hold the lock", names.join(" and "));
                self.say(at, index, "overlap", text);
            }
        } else if self.believers.get(instance).is_some_and(|(believed, _)| believed == run) {
            self.believers.remove(instance);
        }
    }

    /// A chunk upload: accepted (stale, unfenced, going back in time) or refused by its token.
    fn on_put(&mut self, at: u64, index: u32, put: &EventKind) {
        let EventKind::Put { instance, run, period, report, chunk, own_object, token, outcome } = put else {
            return;
        };
        match outcome {
            PutOutcome::Accepted => {
                entry(&mut self.periods, period.0).puts += 1;
                if *own_object {
                    return;
                }
                match self.chunk_writer.iter_mut().find(|(of, at, _)| of == report && at == chunk) {
                    Some(written) => written.2 = *run,
                    None => self.chunk_writer.push((*report, *chunk, *run)),
                }
                entry(&mut self.runs, run.0).wrote_to = Some(*report);
                if token.is_none() || !self.world.storage_checks_tokens {
                    let what = WriteKind::Chunk { chunk: *chunk, report: *report, token: *token };
                    self.unfenced(at, index, *run, what);
                }
                if let Some(newer) = self.goes_back(*report, *run) {
                    let text = self.went_back(*report, *run, newer, &format!("chunk {chunk}"), *token);
                    self.damage(*report, at, index, "report_went_back", text);
                }
                if let Some(later) = self.applied(Object::Chunk(*report, *chunk), *run) {
                    self.metrics.stale_writes_accepted += 1;
                    let later_who = self.run_of_epoch(later).map(|later| self.who(later)).unwrap_or_default();
                    let token = token.map(|token| format!(" with token {token}")).unwrap_or_default();
                    let text = format!(
                        "storage accepted a stale write: {instance}'s chunk {chunk}{token} overwrote {later_who}'s newer one"
                    );
                    self.say(at, index, "stale_write_accepted", text);
                }
            }
            PutOutcome::Rejected(highest) => {
                self.metrics.stale_writes_rejected += 1;
                let from =
                    self.token_holder.get(highest).map(|(holder, _)| format!(" from {holder}")).unwrap_or_default();
                let token = token.map_or_else(|| "none".to_owned(), |token| token.to_string());
                let text = format!(
                    "storage refused {instance}'s chunk {chunk} with token {token}: it has seen {highest}{from}"
                );
                self.say(at, index, "stale_write_rejected", text);
            }
        }
    }

    /// A report row took effect: completion, unfenced or stale, or an in-doubt commit.
    fn on_row_applied(
        &mut self,
        at: u64,
        index: u32,
        period: &Period,
        report: &ReportOf,
        run: &RunId,
        token: &Option<Token>,
    ) {
        entry(&mut self.periods, period.0).report_done_ms.get_or_insert(at);
        // A row is fenced by its token, by the unique key it is inserted
        // under, or by being committed in the transaction that holds the row lock.
        let fenced = token.is_some()
            || self.strategy == StrategyId::UniqueInsert
            || (self.strategy == StrategyId::DbLock && !self.run(*run).redelivered);
        if !fenced {
            self.unfenced(at, index, *run, WriteKind::Row { report: *report });
        }
        self.completed(*report, *run, *token, at, index);
        if self.run(*run).gave_up_on_row {
            let text = format!(
                "{}'s report row for period {} lands after {} gave up on it: an in-doubt commit; another run may already be redoing the report",
                self.who(*run),
                period.0,
                self.who(*run)
            );
            self.say(at, index, "in_doubt_commit", text);
        }
        if let Some(later) = self.applied(Object::Row(*report), *run) {
            self.metrics.stale_writes_accepted += 1;
            let later_who = self.run_of_epoch(later).map(|later| self.who(later)).unwrap_or_default();
            let token = token.map(|token| format!(" with token {token}")).unwrap_or_default();
            let text = format!(
                "the database accepted a stale report row from {}{token} over {later_who}'s newer one",
                self.who(*run)
            );
            self.say(at, index, "stale_write_accepted", text);
        }
    }

    /// Whether two runs held the lock at once and both wrote where no fence
    /// checked: one while the other held it, the other while it held it. Says
    /// so once per pair of runs, naming the writes.
    fn two_holders_unfenced(&mut self) -> bool {
        // One sentence per pair of instances; two runs of one instance (a
        // redelivered job beside a new one) are told apart by run.
        let mut said: Vec<(String, String)> = Vec::new();
        for (write, other) in std::mem::take(&mut self.overlapping_writes) {
            let Some(theirs) = self.run(other).unfenced else {
                continue;
            };
            let same_instance = self.run(write.run).instance == self.run(other).instance;
            let name = |run: RunId| if same_instance { format!("{} ({run})", self.who(run)) } else { self.who(run) };
            let (mine, yours) = (name(write.run), name(other));
            let pair = if mine < yours { (mine, yours) } else { (yours, mine) };
            if said.contains(&pair) {
                continue;
            }
            said.push(pair);
            let (first, second) = if theirs.at_ms < write.at_ms { (theirs, write) } else { (write, theirs) };
            let text = format!(
                "{} and {} held the lock at once and both wrote where no fence checks: {}, and {}; only timing kept them from damaging each other",
                name(write.run),
                name(other),
                self.describe(&first),
                self.describe(&second)
            );
            self.say(second.at_ms, second.event, "unfenced_overlap", text);
        }
        !said.is_empty()
    }

    fn finish(mut self) -> StrategyReport {
        let duration = self.duration_ms;
        self.advance(duration);
        for (_, since) in std::mem::take(&mut self.waits) {
            self.metrics.db_lock_wait_ms += duration - since;
        }
        // A period's own report (`per_period`) is never rewritten in the normal
        // course, so one still mixed at the end is damaged even if a rewrite is
        // under way; the day's report is mixed during every refresh, so only
        // what the rules above caught counts.
        if self.reports.output == Output::PerPeriod {
            let reports: Vec<ReportOf> = self.versions.iter().map(|(report, _)| *report).collect();
            for report in reports {
                let writers = self.chunk_runs(report);
                if writers.len() > 1 {
                    let names: Vec<String> = writers.iter().map(|writer| self.who(*writer)).collect();
                    let text = format!("{report}'s stored report mixes chunks from {}", names.join(" and "));
                    self.damage(report, duration, u32::MAX, "corrupted_report", text);
                }
            }
        }
        let at_risk = self.two_holders_unfenced();
        let chunks = u32::from(self.world.report_chunks);
        for facts in &self.periods {
            self.metrics.duplicate_runs += facts.runs_started.saturating_sub(1);
            self.metrics.duplicate_side_effects += facts.puts.saturating_sub(chunks) + facts.posts.saturating_sub(1);
        }
        let period_ms = self.world.cron_period_ms;
        let periods = u32::try_from(duration.div_ceil(period_ms)).unwrap_or(u32::MAX);
        let mut late = false;
        for period in 0..periods {
            let due = u64::from(period) * period_ms;
            let done_ms = usize::try_from(period).ok().and_then(|index| self.periods.get(index)?.report_done_ms);
            match done_ms {
                Some(done) => {
                    let delay = done.saturating_sub(due);
                    self.metrics.max_report_delay_ms = self.metrics.max_report_delay_ms.max(delay);
                    late |= delay > period_ms;
                }
                None => {
                    self.metrics.missed_periods += 1;
                    let text = format!("period {period} (due t={}) has no report by the end", seconds(due));
                    self.say(duration, u32::MAX, "missed_period", text);
                }
            }
        }
        let safety = if self.metrics.stale_writes_accepted > 0 || self.metrics.corrupted_reports > 0 {
            Safety::Unsafe
        } else if at_risk {
            Safety::AtRisk
        } else {
            Safety::Safe
        };
        let liveness = if self.metrics.missed_periods > 0 {
            Liveness::Missed
        } else if late {
            Liveness::Late
        } else {
            Liveness::Ok
        };
        StrategyReport { strategy: self.strategy, safety, liveness, metrics: self.metrics, findings: self.findings }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_has_its_own_key_and_the_line_names_each_once() {
        let mut keys: Vec<&str> = Metric::ALL.iter().map(|metric| metric.key()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), Metric::ALL.len(), "a key per metric");
        let metrics = Metrics { overlap_ms: 1_500, runs_started: 4, duplicate_runs: 1, ..Metrics::default() };
        let line = Metric::line(&metrics, seconds, false);
        for metric in Metric::ALL {
            assert_eq!(line.matches(metric.name()).count(), 1, "{line}");
        }
        assert!(line.starts_with("overlap 1.5 s · "), "{line}");
        assert!(line.contains("runs (duplicates) 4 (1)"), "{line}");
        let compared = Metric::line(&metrics, seconds, true);
        assert!(!compared.contains("pool exhausted") && compared.contains("background queries failed"), "{compared}");
    }
}
