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
//! report was damaged (mixed runs when a run marked it complete, or went back
//! in time after a newer run completed it). A rewrite a run abandoned is not
//! damage: the row still declares the version an earlier run completed, and
//! readers meet two runs' chunks until a later run completes the report, as
//! during any refresh; it costs the period its report (liveness), the same
//! whoever runs next and whenever. Else
//! `at_risk`: two runs held the lock at once (by the service's truth or their
//! own belief), one wrote where no fence checked while the other held it, and
//! the other wrote unfenced too while it held it; only timing kept the data
//! intact; or a write from a run that no longer held the lock landed,
//! unfenced, while another run held it. Else `safe`: every write made during
//! an overlap was fenced.
//!
//! Liveness is judged per period once the runs in flight at the window's end
//! have finished (the simulation drains them, see `Scenario::drain_ms`): a
//! period is missed only when every run of it ended without its report, and
//! one still in flight at the drain's limit is unfinished, never missed. A
//! system that cannot keep up (each job needs more than a period, and the
//! lock queues the runs) falls behind, whatever the window's length.
//!
//! Efficiency is the third axis: a run that did work another run of the same
//! period was already doing, when no fault forced it (no lock at all, or a
//! lock that let it in on its own: a TTL shorter than the job, another's
//! plain DEL, a timeout that ended the holder's transaction), is wasted; so
//! is other services' work held up behind the job's row lock.
//!
//! Every unsafe or at-risk finding names its cause: which run wrote, what it
//! held then (the lock, only its belief, nothing, or no longer anything),
//! what checked the write, and what would have stopped it.

use crate::event::{
    AbortReason, BackgroundOutcome, ConnectionChange, DbClient, Event, EventKind, PutOutcome, RevokeReason,
    RowLockChange, RunPhase, Sql, SqlOutcome, TerminateReason, abort_text,
};
use crate::format::seconds;
use crate::ids::{InstanceId, Party, Period, ReportOf, RunId, SessionId, Token};
use crate::scenario::{
    Efficiency, Expectation, Fault, Liveness, Output, ReportRule, Safety, Scenario, StrategyId, World,
};
use crate::table::Table;
use serde::Serialize;

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
    pub efficiency: Efficiency,
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
    /// Periods whose runs were still in flight when the drain after the
    /// window reached its limit: neither done nor missed (an extension).
    pub unfinished_periods: u32,
    pub max_report_delay_ms: u64,
    pub db_lock_wait_ms: u64,
    pub pool_exhausted_ms: u64,
    pub background_query_timeouts: u32,
    /// Runs that did work another run of their period was already doing
    /// with no fault to force it (an extension; efficiency rests on it).
    pub wasted_runs: u32,
    /// Storage PUTs and Slack posts those runs made.
    pub wasted_side_effects: u32,
    /// Other services' queries that failed while waiting behind the jobs
    /// row lock a job held (an extension).
    pub queries_failed_behind_lock: u32,
    /// Other services' queries the jobs row lock held up: foreign-key checks
    /// that waited for the row, and queries that waited for a connection
    /// while such checks held the services' pool (an extension; efficiency
    /// rests on it).
    pub queries_held_behind_lock: u32,
    /// The longest any of other services' queries took, waits included (an extension).
    pub longest_background_wait_ms: u64,
    /// Time during which other services' queries waited for a connection of
    /// their own pool: every connection was taken (an extension).
    pub background_pool_starved_ms: u64,
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
    /// Runs no fault forced, with their uploads and posts.
    WastedRuns,
    MissedPeriods,
    UnfinishedPeriods,
    MaxReportDelay,
    RowLockWaits,
    PoolExhausted,
    BackgroundFailures,
    QueriesFailedBehindLock,
    QueriesHeldBehindLock,
    LongestBackgroundWait,
    BackgroundPoolStarved,
}

impl Metric {
    /// Whether it counts time (shown as a duration, claimed in `seconds:`).
    pub fn is_duration(self) -> bool {
        match self {
            Metric::Overlap
            | Metric::MaxReportDelay
            | Metric::RowLockWaits
            | Metric::PoolExhausted
            | Metric::LongestBackgroundWait
            | Metric::BackgroundPoolStarved => true,
            Metric::StaleWritesAccepted
            | Metric::StaleWritesRejected
            | Metric::CorruptedReports
            | Metric::Runs
            | Metric::DuplicateSideEffects
            | Metric::WastedRuns
            | Metric::MissedPeriods
            | Metric::UnfinishedPeriods
            | Metric::BackgroundFailures
            | Metric::QueriesFailedBehindLock
            | Metric::QueriesHeldBehindLock => false,
        }
    }

    /// Its key in the pages' markup (`data-metric`) and tests.
    pub fn key(self) -> &'static str {
        match self {
            Metric::Overlap => "overlap",
            Metric::StaleWritesAccepted => "stale-accepted",
            Metric::StaleWritesRejected => "stale-rejected",
            Metric::CorruptedReports => "corrupted",
            Metric::Runs => "runs",
            Metric::DuplicateSideEffects => "side-effects",
            Metric::WastedRuns => "wasted",
            Metric::MissedPeriods => "missed",
            Metric::UnfinishedPeriods => "unfinished",
            Metric::MaxReportDelay => "delay",
            Metric::RowLockWaits => "lock-wait",
            Metric::PoolExhausted => "pool",
            Metric::BackgroundFailures => "background",
            Metric::QueriesFailedBehindLock => "failed-behind-lock",
            Metric::QueriesHeldBehindLock => "behind-lock",
            Metric::LongestBackgroundWait => "background-wait",
            Metric::BackgroundPoolStarved => "services-pool",
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
            Metric::WastedRuns => "Runs no fault forced (their uploads and posts)",
            Metric::MissedPeriods => "Missed periods",
            Metric::UnfinishedPeriods => "Periods still running at the drain's limit",
            Metric::MaxReportDelay => "Longest report delay",
            Metric::RowLockWaits => "Row-lock waits",
            Metric::PoolExhausted => "Pool exhausted",
            Metric::BackgroundFailures => "Background queries failed",
            Metric::QueriesFailedBehindLock => "Queries failed behind the row lock",
            Metric::QueriesHeldBehindLock => "Other services' queries held up by the row lock",
            Metric::LongestBackgroundWait => "Longest wait of other services' queries",
            Metric::BackgroundPoolStarved => "Other services' pool starved",
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
            Metric::WastedRuns => "runs no fault forced (their uploads and posts)",
            Metric::MissedPeriods => "missed periods",
            Metric::UnfinishedPeriods => "unfinished periods",
            Metric::MaxReportDelay => "longest report delay",
            Metric::RowLockWaits => "row-lock waits",
            Metric::PoolExhausted => "pool exhausted",
            Metric::BackgroundFailures => "background queries failed",
            Metric::QueriesFailedBehindLock => "queries failed behind the row lock",
            Metric::QueriesHeldBehindLock => "queries held up by the row lock",
            Metric::LongestBackgroundWait => "longest wait of other services' queries",
            Metric::BackgroundPoolStarved => "other services' pool starved",
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
            Metric::WastedRuns => "Wasted",
            Metric::MissedPeriods => "Missed",
            Metric::UnfinishedPeriods => "Unfinished",
            Metric::MaxReportDelay => "Delay",
            Metric::RowLockWaits => "Lock waits",
            Metric::PoolExhausted => "Pool out",
            Metric::BackgroundFailures => "Bg. failed",
            Metric::QueriesFailedBehindLock => "Failed behind lock",
            Metric::QueriesHeldBehindLock => "Behind lock",
            Metric::LongestBackgroundWait => "Bg. wait",
            Metric::BackgroundPoolStarved => "Bg. pool out",
        }
    }

    /// Whether a comparison of the strategies shows it. The waits and the
    /// pool are the database lock's own costs, and the duplicates and the
    /// failed queries are summed up by the efficiency verdict's own column;
    /// its run's verdict shows them.
    pub fn compared(self) -> bool {
        match self {
            Metric::MaxReportDelay
            | Metric::RowLockWaits
            | Metric::PoolExhausted
            | Metric::UnfinishedPeriods
            | Metric::DuplicateSideEffects
            | Metric::BackgroundFailures
            | Metric::QueriesFailedBehindLock
            | Metric::LongestBackgroundWait
            | Metric::BackgroundPoolStarved => false,
            Metric::Overlap
            | Metric::StaleWritesAccepted
            | Metric::StaleWritesRejected
            | Metric::CorruptedReports
            | Metric::Runs
            | Metric::WastedRuns
            | Metric::MissedPeriods
            | Metric::QueriesHeldBehindLock => true,
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
            Metric::WastedRuns => metrics.wasted_runs.into(),
            Metric::MissedPeriods => metrics.missed_periods.into(),
            Metric::UnfinishedPeriods => metrics.unfinished_periods.into(),
            Metric::MaxReportDelay => metrics.max_report_delay_ms,
            Metric::RowLockWaits => metrics.db_lock_wait_ms,
            Metric::PoolExhausted => metrics.pool_exhausted_ms,
            Metric::BackgroundFailures => metrics.background_query_timeouts.into(),
            Metric::QueriesFailedBehindLock => metrics.queries_failed_behind_lock.into(),
            Metric::QueriesHeldBehindLock => metrics.queries_held_behind_lock.into(),
            Metric::LongestBackgroundWait => metrics.longest_background_wait_ms,
            Metric::BackgroundPoolStarved => metrics.background_pool_starved_ms,
        }
    }

    /// Its value for people: a duration through `duration` (the lab rounds,
    /// the command line keeps milliseconds), runs with their duplicates.
    pub fn value(self, metrics: &Metrics, duration: fn(u64) -> String) -> String {
        match self {
            Metric::Overlap
            | Metric::MaxReportDelay
            | Metric::RowLockWaits
            | Metric::PoolExhausted
            | Metric::LongestBackgroundWait
            | Metric::BackgroundPoolStarved => duration(self.count(metrics)),
            Metric::Runs => format!("{} ({})", metrics.runs_started, metrics.duplicate_runs),
            Metric::WastedRuns => format!("{} ({})", metrics.wasted_runs, metrics.wasted_side_effects),
            Metric::StaleWritesAccepted
            | Metric::StaleWritesRejected
            | Metric::CorruptedReports
            | Metric::DuplicateSideEffects
            | Metric::MissedPeriods
            | Metric::UnfinishedPeriods
            | Metric::BackgroundFailures
            | Metric::QueriesFailedBehindLock
            | Metric::QueriesHeldBehindLock => self.count(metrics).to_string(),
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
    /// What caused it, for a finding that makes a run unsafe or at risk (an extension).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
}

/// Why a write did damage, or could have: which run wrote, what it held at
/// that moment, what checked the write, and what would have stopped it.
/// Every page and the command line show it under its finding (`Cause::sentence`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cause {
    pub run: RunId,
    pub instance: InstanceId,
    pub held: Held,
    /// What checked the write, in words: `nothing: it carries no token`.
    pub checked: String,
    /// What would have stopped it, in words; for a write a fence refused,
    /// what the write lacked.
    pub fix: String,
    /// The write was refused: the cause says who tried it, not who did damage.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
}

impl Cause {
    /// The cause in two sentences: who wrote holding what and checked by
    /// what; then what would have stopped it (for a refused write, what it lacked).
    pub fn sentence(&self) -> String {
        let (instance, run, held) = (self.instance, self.run, self.held.words());
        if self.refused {
            return format!(
                "Cause: {instance} ({run}) tried to write {held}; refused by {}. It lacked {}.",
                self.checked, self.fix
            );
        }
        format!(
            "Cause: {instance} ({run}) wrote {held}; checked by {}. What would have stopped it: {}.",
            self.checked, self.fix
        )
    }
}

/// What a run held when its write landed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Held {
    /// The lock, by the lock service's own truth.
    Lock,
    /// Only its belief: the lock service had given the lock away.
    Belief,
    /// Nothing: a job the job runner handed again after a crash, which never
    /// asked for the lock (it runs under the grant its dead run had).
    Nothing,
    /// Nothing any more: its run had stopped, or had lost the lock, before
    /// the write landed.
    Former,
    /// The strategy takes no lock (unique-insert).
    NoLock,
}

impl Held {
    /// Every holding, in the order above.
    pub const ALL: [Held; 5] = [Held::Lock, Held::Belief, Held::Nothing, Held::Former, Held::NoLock];

    /// The contract's word for it (as the report's JSON writes it).
    pub fn name(self) -> &'static str {
        match self {
            Held::Lock => "lock",
            Held::Belief => "belief",
            Held::Nothing => "nothing",
            Held::Former => "former",
            Held::NoLock => "no_lock",
        }
    }

    /// The holding in words, for a finding's text and the pages.
    pub fn words(self) -> &'static str {
        match self {
            Held::Lock => "holding the lock",
            Held::Belief => "believing it held the lock, which the lock service had given away",
            Held::Nothing => {
                "holding nothing: a job the runner handed again after a crash, which never asked for the lock"
            }
            Held::Former => "no longer holding the lock: its run had stopped or lost it",
            Held::NoLock => "with no lock to hold",
        }
    }
}

impl StrategyReport {
    /// The safety verdict in words, with the cause of the first write that
    /// did (or risked) the damage: what every page, the command line and the
    /// figure say beside the badge.
    pub fn safety_summary(&self) -> String {
        let metrics = &self.metrics;
        let mut parts: Vec<String> = Vec::new();
        match self.safety {
            Safety::Safe if metrics.overlap_ms > 0 => parts.push(
                "Two instances believed they held the lock at once, but every write either made then was fenced; the stored report is intact.".to_owned(),
            ),
            Safety::Safe => parts.push("The stored report is intact and came from one run at a time.".to_owned()),
            Safety::AtRisk => parts.push(
                "Two runs held the lock at once (or a former holder's write landed under the new one) and wrote where no fence checked; the data survived only by timing.".to_owned(),
            ),
            Safety::Unsafe => {
                if metrics.stale_writes_accepted > 0 {
                    parts.push(format!(
                        "{} stale {} accepted over newer data.",
                        metrics.stale_writes_accepted,
                        if metrics.stale_writes_accepted == 1 { "write was" } else { "writes were" }
                    ));
                }
                if metrics.corrupted_reports > 0 {
                    parts.push(format!(
                        "{} stored {} damaged: mixed from two runs when marked complete, or gone back in time.",
                        metrics.corrupted_reports,
                        if metrics.corrupted_reports == 1 { "report was" } else { "reports were" }
                    ));
                }
            }
        }
        if metrics.stale_writes_rejected > 0 {
            parts.push(format!(
                "The fence refused {} stale {}.",
                metrics.stale_writes_rejected,
                if metrics.stale_writes_rejected == 1 { "write" } else { "writes" }
            ));
        }
        // The first write that did (or risked) damage; a refused write's cause
        // is said under its own finding.
        if let Some(cause) =
            self.findings.iter().filter_map(|finding| finding.cause.as_ref()).find(|cause| !cause.refused)
        {
            parts.push(cause.sentence());
        }
        parts.join(" ")
    }

    /// The liveness verdict in words, with why a report was late or missed.
    pub fn liveness_summary(&self) -> String {
        let metrics = &self.metrics;
        let said =
            |kind: &str| self.findings.iter().find(|finding| finding.kind == kind).map(|finding| finding.text.clone());
        match self.liveness {
            Liveness::Ok => format!(
                "Every period's report came within a cron period of its tick (the longest after {}).",
                seconds(metrics.max_report_delay_ms)
            ),
            Liveness::Late => {
                let why = said("late_period").or_else(|| said("unfinished_period")).unwrap_or_default();
                format!("Late: {why}.")
            }
            Liveness::Missed => format!(
                "{} {} no report: {}.",
                metrics.missed_periods,
                if metrics.missed_periods == 1 { "period got" } else { "periods got" },
                said("missed_period").unwrap_or_default()
            ),
            Liveness::Behind => format!("Falls behind: {}.", said("falls_behind").unwrap_or_default()),
        }
    }

    /// The efficiency verdict in words: what was wasted, or that nothing was
    /// beyond what faults forced.
    pub fn efficiency_summary(&self) -> String {
        let metrics = &self.metrics;
        let mut parts: Vec<String> = Vec::new();
        if metrics.wasted_runs > 0 {
            parts.push(format!(
                "{} {} did work another run was already doing, with no fault to force it ({} {})",
                metrics.wasted_runs,
                if metrics.wasted_runs == 1 { "run" } else { "runs" },
                metrics.wasted_side_effects,
                if metrics.wasted_side_effects == 1 { "upload or post" } else { "uploads and posts" }
            ));
        }
        if metrics.queries_held_behind_lock > 0 {
            let failed = match metrics.queries_failed_behind_lock {
                0 => String::new(),
                failed => format!(", {failed} of them failed"),
            };
            parts.push(format!(
                "{} of other services' queries waited behind the jobs row lock, the longest {}{failed}",
                metrics.queries_held_behind_lock,
                seconds(metrics.longest_background_wait_ms)
            ));
        }
        if parts.is_empty() {
            let forced = metrics.duplicate_runs;
            return match forced {
                0 => "no work done twice".to_owned(),
                1 => "no work wasted but what a fault forced (1 run redone)".to_owned(),
                _ => format!("no work wasted but what faults forced ({forced} runs redone)"),
            };
        }
        parts.join("; ")
    }

    /// How the post weighs this verdict against the other answer it could
    /// be mistaken for, in one line: why it picks A (late here) over D (on
    /// time here). Lateness a fault forced is paid on the night of the fault;
    /// D's waste is paid on every night, faults or not. Said only where the
    /// run bears it out: A safe, efficient, and late after a fault struck; D
    /// wasteful with runs no fault forced.
    pub fn weighing(&self) -> Option<String> {
        let said_at =
            |kind: &str| self.findings.iter().find(|finding| finding.kind == kind).map(|finding| finding.at_ms);
        match self.strategy {
            StrategyId::Fencing
                if self.safety == Safety::Safe
                    && self.efficiency == Efficiency::Ok
                    && self.liveness == Liveness::Late
                    && said_at("fault").zip(said_at("late_period")).is_some_and(|(fault, late)| fault < late) =>
            {
                Some("Why the post still picks A: it is late only because a fault struck, a cost paid on the night of the fault; D's waste is paid on every night, faults or not.".to_owned())
            }
            StrategyId::UniqueInsert if self.metrics.wasted_runs > 0 => Some(format!(
                "Why the post rejects D{}: its waste ({} runs doing work another run was doing) is paid on every night, faults or not, where A pays only on a night a fault strikes.",
                if self.liveness == Liveness::Ok { " although it is on time" } else { "" },
                self.metrics.wasted_runs
            )),
            StrategyId::Naive
            | StrategyId::Fencing
            | StrategyId::Redlock
            | StrategyId::DbLock
            | StrategyId::UniqueInsert
            | StrategyId::Consensus => None,
        }
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
        if let Some(efficiency) = expected.efficiency
            && self.efficiency != efficiency
        {
            problems.push(format!("efficiency is {:?}, expected {efficiency:?}", self.efficiency));
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
    /// The period it is for, from its first event on.
    period: Option<Period>,
    /// It has begun (trying for the lock, or handed a job) and not ended.
    live: bool,
    /// When its job's work began.
    started_ms: Option<u64>,
    /// How it ended, and when.
    ended: Option<(u64, RunPhase)>,
    /// The run's current epoch: the rank of its latest grant.
    epoch: Option<u32>,
    /// The period it is working on, from its start until it ends.
    working: Option<Period>,
    /// It gave up on its report row (client timeout): the row may still land.
    gave_up_on_row: bool,
    /// A job handed again after its process died (it took no lock itself).
    redelivered: bool,
    /// Why the lock service last stopped counting it as the holder, and when.
    revoked: Option<RevokeReason>,
    revoked_ms: Option<u64>,
    /// It did work another run of its period was already doing, with no
    /// fault to force it.
    wasted: bool,
    /// The report whose chunks it has written to, if any.
    wrote_to: Option<ReportOf>,
    /// The token its last write carried.
    token: Option<Token>,
}

/// A write that no fence checked, made while its run held the lock.
#[derive(Clone, Copy, Debug)]
struct UnfencedWrite {
    at_ms: u64,
    event: u32,
    run: RunId,
    what: WriteKind,
    /// What the writer held when it landed.
    held: Held,
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

/// What let a duplicate run in, and whether a fault forced it.
struct DuplicateCause {
    forced: bool,
    text: String,
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

/// What closes a fence's one gap, a report of several objects on two
/// resources: the fix the findings name.
const MULTI_RESOURCE_FIX: &str = "publish each run's objects under names of their own, then switch the report to them with one fenced write of its row, so a reader never sees two runs' objects as one report (as option D's own objects are)";

/// What makes a rewrite of a report of several objects safe to abandon: the fix
/// a `rewrite_abandoned` finding and a period it left late name.
const ATOMIC_REWRITE_FIX: &str =
    "write each run's chunks as a new version under names of their own, then switch the row to it in one write";

/// The length of the union of `spans` (sorted in place).
fn union_ms(spans: &mut [(u64, u64)]) -> u64 {
    spans.sort_unstable();
    let mut total = 0;
    let mut covered_until = 0;
    for &(from, to) in spans.iter() {
        let from = from.max(covered_until);
        if to > from {
            total += to - from;
            covered_until = to;
        }
    }
    total
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
    /// When the last event read happened: past the window's end when runs
    /// in flight drained after it.
    last_event_ms: u64,
    metrics: Metrics,
    findings: Vec<Finding>,
    /// Per run and per period, by id: run and period ids are dense from 0,
    /// and the log names a run on every step it takes, so these tables are
    /// vectors rather than maps.
    runs: Vec<RunFacts>,
    periods: Vec<PeriodFacts>,
    /// The run of each epoch, by rank.
    epoch_runs: Vec<RunId>,
    latest_epoch: Table<Object, u32>,
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
    /// Pairs of runs already said to have both written unfenced, and runs
    /// whose late unfenced write was already said to have landed under
    /// another holder: each is one finding.
    said_pairs: Vec<(RunId, RunId)>,
    /// Whether some write landed unfenced from a run that no longer held the
    /// lock while another run held it.
    former_wrote: bool,
    /// The faults that struck, when and whom: what may have
    /// forced a duplicate run.
    struck: Vec<(u64, Vec<Party>, Fault)>,
    /// The parties the strategy's lock lives on (a fault that strikes one
    /// strikes the lock).
    lock_parties: Vec<Party>,
    /// The session of the job whose transaction holds the jobs row lock.
    row_lock_job: Option<SessionId>,
    /// The database is slowed until then (`db_slow`).
    db_slow_until_ms: u64,
    reports: ReportRule,
    // Small ordered maps on the engine's `Table`, not `BTreeMap`s: the same
    // key order, and no B-tree (its removals above all) for every key and
    // value type in each page's wasm.
    token_holder: Table<Token, (InstanceId, RunId)>,
    /// Every run that believes it holds the lock, by instance: one process
    /// can have two (a job the runner handed back after a crash, and a run
    /// its own cron granted), and one of them ending leaves the other's.
    believers: Table<(InstanceId, RunId), Option<Token>>,
    waits: Table<SessionId, u64>,
    /// The instances whose pool is exhausted now.
    exhausted: Table<InstanceId, ()>,
    last_ms: u64,
    said_background: bool,
    said_held: bool,
    said_pool: bool,
    /// The first run that waited for the lock past its next period's tick,
    /// with when it got it (or `None`, still waiting when the run ended).
    queued_past_tick: Option<(RunId, Option<u64>)>,
    /// When other services' queries waited for a connection, as spans: their
    /// union is the time their pool was starved.
    starved: Vec<(u64, u64)>,
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
            last_event_ms: 0,
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
            latest_epoch: Table::new(),
            chunk_writer: Vec::new(),
            versions: Vec::new(),
            holders: Vec::new(),
            overlapping_writes: Vec::new(),
            said_pairs: Vec::new(),
            former_wrote: false,
            struck: Vec::new(),
            lock_parties: {
                // The jobs row lock lives in the database.
                let mut parties = scenario.settings_for(strategy).lock_parties(&scenario.world);
                if strategy == StrategyId::DbLock {
                    parties.push(Party::Db);
                }
                parties
            },
            row_lock_job: None,
            db_slow_until_ms: 0,
            reports: ReportRule::of(scenario),
            token_holder: Table::new(),
            believers: Table::new(),
            waits: Table::new(),
            exhausted: Table::new(),
            last_ms: 0,
            said_background: false,
            said_held: false,
            said_pool: false,
            queued_past_tick: None,
            starved: Vec::new(),
        })
    }

    /// Reads the log's next events, in order.
    pub fn feed(&mut self, events: &[Event]) {
        let analysis = &mut self.0;
        for event in events {
            let index = analysis.events;
            analysis.events = analysis.events.saturating_add(1);
            analysis.last_event_ms = event.at_ms;
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
        self.findings.insert(position, Finding { at_ms, kind, text, event, cause: None });
    }

    /// [`Analysis::say`], with what caused it.
    fn say_caused(&mut self, at_ms: u64, event: u32, kind: &'static str, text: String, cause: Cause) {
        let position = self.findings.partition_point(|finding| finding.at_ms <= at_ms);
        self.findings.insert(position, Finding { at_ms, kind, text, event, cause: Some(cause) });
    }

    /// The first and the last instance with a run that believes it holds
    /// the lock (the table is in instance order): two believe at once
    /// exactly when they differ.
    fn believing_ends(&self) -> Option<(InstanceId, InstanceId)> {
        let entries = self.believers.entries();
        Some((entries.first()?.0.0, entries.last()?.0.0))
    }

    fn advance(&mut self, at_ms: u64) {
        let elapsed = at_ms.saturating_sub(self.last_ms);
        if self.believing_ends().is_some_and(|(first, last)| first != last) {
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
        let latest = self.latest_epoch.get_or_insert(object, epoch);
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

    /// What `run` holds at this moment, as a write of it lands.
    fn held(&self, run: RunId) -> Held {
        let facts = self.run(run);
        if self.strategy == StrategyId::UniqueInsert {
            return Held::NoLock;
        }
        if facts.redelivered && facts.live {
            return Held::Nothing;
        }
        match self.holders.iter().find(|(holder, ..)| *holder == run) {
            Some((_, true, _)) => Held::Lock,
            Some((_, false, _)) => Held::Belief,
            None => Held::Former,
        }
    }

    /// A write that no fence checked. If its run holds the lock, it is
    /// remembered with every other run holding it too (two holders writing
    /// where nothing checks: at risk). If its run no longer holds the lock
    /// and another run does, it landed under that holder: at risk as well,
    /// since only the order of the two runs' writes decides whose data stays.
    fn unfenced(&mut self, at_ms: u64, event: u32, run: RunId, what: WriteKind, may_land_under: bool) {
        let held = self.held(run);
        let write = UnfencedWrite { at_ms, event, run, what, held };
        let others: Vec<RunId> =
            self.holders.iter().map(|(holder, ..)| *holder).filter(|other| *other != run).collect();
        if !self.holders.iter().any(|(holder, ..)| *holder == run) {
            // A stale write says so itself: it did the damage this would risk.
            if let Some(holder) = others.first()
                && may_land_under
            {
                self.landed_under(write, *holder);
            }
            return;
        }
        for other in others {
            if !self.overlapping_writes.iter().any(|(seen, with)| seen.run == run && *with == other) {
                self.overlapping_writes.push((write, other));
            }
        }
    }

    /// A former holder's unfenced write landed while `holder` holds the lock:
    /// said once per writer.
    fn landed_under(&mut self, write: UnfencedWrite, holder: RunId) {
        self.former_wrote = true;
        if self.said_pairs.contains(&(write.run, write.run)) {
            return;
        }
        self.said_pairs.push((write.run, write.run));
        let text = format!(
            "{} lands after {} stopped holding the lock, while {} holds it; nothing refused it, so only the order of the two runs' writes decides whose data stays",
            self.describe(&write),
            self.name(write.run, holder),
            self.name(holder, write.run)
        );
        let cause = self.cause(&write);
        self.say_caused(write.at_ms, write.event, "former_holder_write", text, cause);
    }

    /// A run's instance, with the run's number when another run of the same
    /// instance is named beside it.
    fn name(&self, run: RunId, beside: RunId) -> String {
        if self.run(run).instance == self.run(beside).instance && run != beside {
            format!("{} ({run})", self.who(run))
        } else {
            self.who(run)
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

    /// The cause of an unfenced write's damage, or risk.
    fn cause(&self, write: &UnfencedWrite) -> Cause {
        let (checked, fix) = match write.what {
            WriteKind::Post => (
                "nothing: Slack cannot check a token".to_owned(),
                "nothing on the lock's side: a post is a side effect no fence reaches; make it once, after the fenced report row commits, and let readers ignore a repeat".to_owned(),
            ),
            WriteKind::Chunk { token: Some(_), .. } => (
                "nothing: this storage does not check tokens".to_owned(),
                "a store that remembers the highest token it has seen and refuses lower ones (a conditional write)".to_owned(),
            ),
            WriteKind::Chunk { token: None, .. } => self.tokenless(write.run, true),
            WriteKind::Row { .. } => self.tokenless(write.run, false),
        };
        Cause {
            run: write.run,
            instance: self.run(write.run).instance.unwrap_or(InstanceId(0)),
            held: write.held,
            checked,
            fix,
            refused: false,
        }
    }

    /// What checked a write that carried no token (to storage or to the
    /// report row) and what would have stopped it, in the words of the lock
    /// that let it through: what that lock lacked.
    fn tokenless(&self, run: RunId, to_storage: bool) -> (String, String) {
        let redelivered = self.run(run).redelivered;
        let (lacked, fix) = match self.strategy {
            StrategyId::Naive => {
                ("SET NX EX hands out none", "a fencing token the store checks on every write (answer A)")
            }
            StrategyId::Redlock => (
                "Redlock hands out none",
                "a fencing token the store checks on every write (answer A), which Redlock cannot give (Kleppmann 2016)",
            ),
            StrategyId::DbLock if to_storage => {
                ("the row lock guards the jobs row, not storage", "a token the store checks on every write (answer A)")
            }
            StrategyId::DbLock => (
                "it was written outside the transaction that holds the row lock",
                "writing the report row only inside the transaction that holds the row lock",
            ),
            StrategyId::UniqueInsert => (
                "option D takes no lock",
                "objects of the run's own, published by the row's unique key (as D's uploads are)",
            ),
            StrategyId::Fencing | StrategyId::Consensus if to_storage && !self.world.storage_checks_tokens => (
                "this storage does not check tokens",
                "a store that remembers the highest token it has seen and refuses lower ones (a conditional write)",
            ),
            StrategyId::Fencing | StrategyId::Consensus => {
                ("the resource had not fenced the report yet", "a store that fences the report from its first write")
            }
        };
        let (checked, fix) = (format!("nothing: it carries no token; {lacked}"), fix.to_owned());
        if redelivered {
            let runner = "a job runner that takes the lock again before it runs a job handed back after a crash";
            return (checked, format!("{runner}; and {fix}"));
        }
        (checked, fix)
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

    /// Marks the complete version of `report` damaged, once, with a sentence
    /// and its cause.
    fn damage(&mut self, report: ReportOf, at_ms: u64, event: u32, kind: &'static str, text: String, cause: Cause) {
        let Some((_, version)) = self.versions.iter_mut().find(|(of, _)| *of == report) else {
            return;
        };
        if version.damaged {
            return;
        }
        version.damaged = true;
        self.metrics.corrupted_reports += 1;
        self.say_caused(at_ms, event, kind, text, cause);
    }

    /// The complete version of `report` that a write from `run` would take
    /// back in time: one a run of a later grant completed.
    fn goes_back(&self, report: ReportOf, run: RunId) -> Option<Version> {
        let version = self.version(report)?;
        let (epoch, completed) = (self.epoch(run)?, version.epoch?);
        (epoch < completed && version.run != run).then_some(version)
    }

    /// Why a stale write of `run` (with `token`, to storage or to the
    /// database's row) landed over `newer`'s: what it held, what checked it,
    /// and what would have refused it.
    fn stale_cause(&self, run: RunId, token: Option<Token>, newer: Option<RunId>, to_storage: bool) -> Cause {
        let (checked, fix) = match token {
            None => self.tokenless(run, to_storage),
            Some(token) if newer.is_some_and(|newer| self.token_of(newer) == Some(token)) => (
                format!("a fence that cannot tell two holders of token {token} apart: the token counter went back"),
                "a token counter that never goes back: a consensus store's revision; on Redis, WAIT for the replica before using the token makes the loss less likely, not impossible".to_owned(),
            ),
            Some(_) if to_storage && !self.world.storage_checks_tokens => (
                "nothing: this storage does not check tokens".to_owned(),
                "a store that remembers the highest token it has seen and refuses lower ones (a conditional write)".to_owned(),
            ),
            Some(token) => (
                format!("the fence of its own resource only, which had seen nothing above token {token}"),
                MULTI_RESOURCE_FIX.to_owned(),
            ),
        };
        Cause {
            run,
            instance: self.run(run).instance.unwrap_or(InstanceId(0)),
            held: self.held(run),
            checked,
            fix,
            refused: false,
        }
    }

    /// Why a report that mixes runs' chunks was not refused: each chunk was
    /// fenced on its own (the limit of a fence over several objects), or no
    /// fence checked them.
    fn mixed_cause(&self, run: RunId) -> Cause {
        let token = self.run(run).token;
        let fenced = self.world.storage_checks_tokens && token.is_some();
        if fenced {
            let held = self.held(run);
            return Cause {
                run,
                instance: self.run(run).instance.unwrap_or(InstanceId(0)),
                held,
                checked: "a fence per resource: storage refused lower tokens for the chunks and the database for the row, but the report spans several objects and both resources, and no fence checks them together".to_owned(),
                fix: MULTI_RESOURCE_FIX.to_owned(),
                refused: false,
            };
        }
        self.stale_cause(run, token, None, true)
    }

    /// Why `run`'s `what` took `report` back to before `newer`.
    fn went_back(&self, report: ReportOf, run: RunId, newer: Version, what: &str) -> String {
        format!(
            "{}'s {what} lands on {report} after {} (a later grant) completed it: the stored report goes back in time",
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
            let text = self.went_back(report, run, newer, "report row");
            let cause = self.stale_cause(run, token, Some(newer.run), false);
            self.damage(report, at, index, "report_went_back", text, cause);
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
            let cause = self.mixed_cause(run);
            self.damage(report, at, index, "corrupted_report", text, cause);
        }
    }

    /// `run` stopped before finishing, having rewritten part of a report and
    /// not its row. Nothing is damaged by that alone: the row still declares
    /// the version an earlier run completed (or none), and a reader meets a
    /// report of two runs' chunks until a later run completes it, as it does
    /// while any refresh is under way. What it costs is the period, late or
    /// missed until a later run completes the report; the finding names why
    /// (the rewrite is not atomic) and the fix. The rule is the same whoever
    /// runs next and whenever they start, and never counts against a holder
    /// that stops when it should.
    fn abandoned_rewrite(&mut self, run: RunId, at: u64, index: u32) {
        let Some(report) = self.run(run).wrote_to else {
            return;
        };
        // A report no run has completed yet is not rewritten: readers wait for
        // its first version, and the period's lateness says what that costs.
        let Some(version) = self.version(report).filter(|version| version.run != run) else {
            return;
        };
        let chunks = self.chunk_writer.iter().filter(|(of, _, writer)| *of == report && *writer == run).count();
        if chunks == 0 {
            // Every chunk it wrote has been rewritten since: nothing of it is left to read.
            return;
        }
        let text = format!(
            "{} stopped with {chunks} of {} chunks of {report} rewritten: until a later run completes it, readers find two runs' chunks under a row that says {}'s report is complete. The rewrite is not atomic: {ATOMIC_REWRITE_FIX}",
            self.who(run),
            self.world.report_chunks,
            self.name(version.run, run)
        );
        self.say(at, index, "rewrite_abandoned", text);
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
            EventKind::Sql { client, run, statement, outcome: SqlOutcome::StaleToken { highest }, .. } => {
                self.metrics.stale_writes_rejected += 1;
                // Only a report row is ever refused for its token.
                let tokenless = matches!(statement, Sql::WriteReport { token: None, .. });
                match run {
                    Some(run) if tokenless => {
                        let text = format!(
                            "the database refused {client}'s report row: it carries no token, and the row is fenced at token {highest}"
                        );
                        let cause = self.refused_cause(*run, "the report row's fence in the database");
                        self.say_caused(at, index, "tokenless_write_rejected", text, cause);
                    }
                    Some(_) | None => {
                        let text =
                            format!("the database refused {client}'s report row: the row already has token {highest}");
                        self.say(at, index, "stale_write_rejected", text);
                    }
                }
            }
            EventKind::RowLock { session, change, client, .. } => {
                self.on_row_lock(at, index, *session, *change, *client)
            }
            EventKind::Connection { client, change: ConnectionChange::Terminated(reason), .. } => {
                self.on_terminated(at, index, *client, *reason);
            }
            EventKind::Pool { instance, busy, .. } => self.on_pool(at, index, *instance, *busy),
            EventKind::Background { latency_ms, connection_wait_ms, behind_lock, outcome, .. } => {
                self.on_background(at, index, *latency_ms, *connection_wait_ms, *behind_lock, *outcome);
            }
            EventKind::RedisUp { node, .. } => self.on_redis_up(at, *node),
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
            | EventKind::Sql { .. }
            | EventKind::Connection { .. }
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
        self.struck.push((at, targets.to_vec(), fault.clone()));
        if let Fault::DbSlow { duration_ms, .. } = fault {
            self.db_slow_until_ms = self.db_slow_until_ms.max(at + duration_ms);
        }
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

    /// A Redis node is back: if a restart kept it out longer than the fault
    /// said (Redlock's delayed restart), the fault's finding says how long.
    fn on_redis_up(&mut self, at: u64, node: Party) {
        let restarted = self
            .struck
            .iter()
            .rev()
            .find(|(_, targets, fault)| matches!(fault, Fault::RedisRestart { .. }) && targets.contains(&node));
        let Some((struck_at, _, fault)) = restarted else {
            return;
        };
        let (struck_at, words) = (*struck_at, fault.words_with_effect(Some(at - struck_at)));
        let said = self.findings.iter_mut().find(|finding| finding.kind == "fault" && finding.at_ms == struck_at);
        if let Some(finding) = said
            && !finding.text.starts_with(&words)
        {
            finding.text = finding.text.replacen(&fault.to_string(), &words, 1);
        }
    }

    /// A Slack post: Slack cannot check a token, so a second post of a period is a duplicate side effect.
    fn on_post(&mut self, at: u64, index: u32, instance: InstanceId, run: RunId, period: Period) {
        self.unfenced(at, index, run, WriteKind::Post, true);
        if self.run(run).wasted {
            self.metrics.wasted_side_effects += 1;
        }
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
        // Only a job's FOR UPDATE holds the row against other services' checks.
        match change {
            RowLockChange::Granted if matches!(client, DbClient::Instance(_)) => self.row_lock_job = Some(session),
            RowLockChange::Released | RowLockChange::GaveUp if self.row_lock_job == Some(session) => {
                self.row_lock_job = None;
            }
            RowLockChange::Granted | RowLockChange::Waiting | RowLockChange::Released | RowLockChange::GaveUp => {}
        }
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

    /// One of the other services' queries had to wait: behind the job's row
    /// lock (the lock's own cost, which the efficiency verdict counts), or
    /// because the database is slowed or its connections are full (not the
    /// lock's). A failure, the first wait behind the lock and the first
    /// starved pool are findings.
    fn on_background(
        &mut self,
        at: u64,
        index: u32,
        latency_ms: u64,
        connection_wait_ms: u64,
        behind_lock: bool,
        outcome: BackgroundOutcome,
    ) {
        self.metrics.longest_background_wait_ms = self.metrics.longest_background_wait_ms.max(latency_ms);
        if connection_wait_ms > 0 {
            let arrived = at.saturating_sub(latency_ms);
            self.starved.push((arrived, arrived + connection_wait_ms));
        }
        if behind_lock {
            self.metrics.queries_held_behind_lock += 1;
            if !self.said_held {
                self.said_held = true;
                let text = format!(
                    "other services' queries wait behind the jobs row lock: {}",
                    if connection_wait_ms > 0 {
                        "their pool's connections are all held by inserts whose foreign-key checks wait for the row, so every query queues for a connection"
                    } else {
                        "their inserts' foreign-key checks (FOR KEY SHARE) wait for the job's FOR UPDATE, holding their connections"
                    }
                );
                // Said where the wait began: the event that logs it comes at its end.
                self.say(at.saturating_sub(latency_ms), index, "background_held", text);
            }
        }
        if !outcome.failed() {
            return;
        }
        self.metrics.background_query_timeouts += 1;
        if behind_lock {
            self.metrics.queries_failed_behind_lock += 1;
        }
        if self.said_background {
            return;
        }
        self.said_background = true;
        let why = if behind_lock {
            "they give up waiting behind the jobs row lock, which a job's transaction holds for the whole job"
        } else if at < self.db_slow_until_ms {
            "the database is slowed, and they give up"
        } else {
            "they give up waiting for the database (the jobs row lock is not what holds them)"
        };
        self.say(at, index, "background_timeouts", format!("other services' queries start failing: {why}"));
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
            if self.exhausted.insert(instance, ()).is_none() && !self.said_pool {
                self.said_pool = true;
                let text = format!("{instance}'s connection pool is exhausted: all {size} connections are busy");
                self.say(at, index, "pool_exhausted", text);
            }
        } else {
            self.exhausted.remove(&instance);
        }
    }

    /// A run began, started its job or ended: duplicates and reruns (and
    /// what forced a duplicate, if anything), and a run that stopped.
    fn on_run(&mut self, at: u64, index: u32, run: &RunId, instance: &InstanceId, period: &Period, phase: &RunPhase) {
        let facts = entry(&mut self.runs, run.0);
        facts.instance = Some(*instance);
        facts.period = Some(*period);
        match phase {
            RunPhase::Trying | RunPhase::Redelivered(_) => facts.live = true,
            RunPhase::Started => self.on_run_started(at, index, *run, *instance, *period),
            RunPhase::Finished | RunPhase::Aborted(_) | RunPhase::Skipped | RunPhase::GaveUp => {
                self.on_run_ended(at, index, *run, *instance, *phase);
            }
            RunPhase::Acquired => {
                // A lock that queues its waiters (a blocking `FOR UPDATE`)
                // rather than letting them give up at the next tick.
                let next_tick_ms = (u64::from(period.0) + 1) * self.world.cron_period_ms;
                if at > next_tick_ms && self.queued_past_tick.is_none() {
                    self.queued_past_tick = Some((*run, Some(at)));
                }
            }
            RunPhase::Busy => {}
        }
    }

    /// A run started its period's job: a duplicate if other runs are still
    /// working on that period (wasted unless a fault forced it), a rerun if
    /// an earlier run of the period started and did not finish.
    fn on_run_started(&mut self, at: u64, index: u32, run: RunId, instance: InstanceId, period: Period) {
        entry(&mut self.runs, run.0).started_ms = Some(at);
        self.metrics.runs_started += 1;
        let count = {
            let facts = entry(&mut self.periods, period.0);
            facts.runs_started += 1;
            facts.runs_started
        };
        let others: Vec<RunId> = (0u32..)
            .zip(&self.runs)
            .filter(|(other, facts)| facts.working == Some(period) && *other != run.0)
            .map(|(other, _)| RunId(other))
            .collect();
        if !others.is_empty() {
            let names: Vec<String> = others.iter().map(|other| self.who(*other)).collect();
            let verb = if others.len() > 1 { "are" } else { "is" };
            let why = self.duplicate_cause(run, &others);
            let text = format!(
                "{instance} starts period {}'s job while {} {verb} still running it: {}",
                period.0,
                names.join(" and "),
                why.text
            );
            if !why.forced {
                self.metrics.wasted_runs += 1;
                entry(&mut self.runs, run.0).wasted = true;
            }
            self.say(at, index, "duplicate_run", text);
        } else if count > 1 {
            let text = format!("{instance} runs period {}'s job again: the earlier run did not finish", period.0);
            self.say(at, index, "rerun", text);
        }
        entry(&mut self.runs, run.0).working = Some(period);
    }

    /// A run ended, finished or not: it holds nothing more, and a job it
    /// stopped (other than by dying, which the crash already says) is a finding.
    fn on_run_ended(&mut self, at: u64, index: u32, run: RunId, instance: InstanceId, phase: RunPhase) {
        let facts = entry(&mut self.runs, run.0);
        facts.live = false;
        facts.ended = Some((at, phase));
        // A run that ended writes no more: it no longer counts as a holder.
        self.stop_holding(run);
        if matches!(phase, RunPhase::Aborted(_)) {
            self.abandoned_rewrite(run, at, index);
        }
        let facts = entry(&mut self.runs, run.0);
        facts.working = None;
        if phase == RunPhase::Aborted(AbortReason::RowWriteFailed) {
            facts.gave_up_on_row = true;
        }
        if let RunPhase::Aborted(reason) = phase
            && reason != AbortReason::ProcessDied
        {
            let text = format!("{instance} stops its job: {}", abort_text(reason));
            self.say(at, index, "run_aborted", text);
        }
    }

    /// Why `run` could start a period's job that `others` were running: what
    /// let it in, and whether a fault forced it (a job handed again after a
    /// crash, a fault that struck a running holder or the lock) or nothing
    /// did (no lock at all, or the lock let it in on its own).
    fn duplicate_cause(&self, run: RunId, others: &[RunId]) -> DuplicateCause {
        let forced = |text: String| DuplicateCause { forced: true, text };
        let wasted = |text: String| DuplicateCause { forced: false, text };
        if self.run(run).redelivered {
            return forced(
                "the job runner handed it the job its process died in, and it runs without asking for the lock"
                    .to_owned(),
            );
        }
        if let Some(zombie) = others.iter().find(|other| self.run(**other).redelivered) {
            return forced(format!(
                "{} runs a job the runner handed back after a crash, without the lock, so the lock could not keep this run out",
                self.who(*zombie)
            ));
        }
        if self.strategy == StrategyId::UniqueInsert {
            return wasted("option D takes no lock, so every instance does the whole job".to_owned());
        }
        if let Some((at_ms, targets, fault)) = self.takeover_fault(others) {
            let names: Vec<String> = targets.iter().map(ToString::to_string).collect();
            return forced(format!(
                "a fault forced it: {fault} struck {} at t={}, while it held the job",
                names.join(", "),
                seconds(*at_ms)
            ));
        }
        let how = others.iter().find_map(|other| self.run(*other).revoked).map_or(
            "the lock let it in while the other run still worked",
            |reason| match reason {
                RevokeReason::Expired => {
                    "the other run's lock expired while it still worked: the TTL is shorter than the job"
                }
                RevokeReason::DeletedByOther => "a plain DEL from another run deleted the working run's lock",
                RevokeReason::Overwritten => "a plain SET from another run replaced the working run's lock",
                RevokeReason::TransactionEnded => "the working run's transaction ended while its job went on",
                RevokeReason::Forgotten => "the lock service forgot the working run's lock",
                RevokeReason::Released => "the working run's lock was released while its job went on",
            },
        );
        wasted(format!("{how}, with no fault to force it"))
    }

    /// The fault that let another run take over from `others` while they
    /// still worked: of the faults that struck them or the lock since they
    /// started, the one in force when the lock service let one of them go
    /// (a pause that outlasted its lease, a failover that forgot its key),
    /// one with an end before one without (a drift never ends); else the
    /// latest that struck one of them; else the first.
    fn takeover_fault(&self, others: &[RunId]) -> Option<&(u64, Vec<Party>, Fault)> {
        let since = others.iter().filter_map(|other| self.run(*other).started_ms).min().unwrap_or(0);
        let holders: Vec<Party> =
            others.iter().filter_map(|other| self.run(*other).instance.map(Party::Instance)).collect();
        let strikes_holder = |targets: &[Party]| targets.iter().any(|target| holders.contains(target));
        let candidates: Vec<&(u64, Vec<Party>, Fault)> = self
            .struck
            .iter()
            .filter(|(at_ms, targets, _)| {
                *at_ms >= since
                    && (strikes_holder(targets) || targets.iter().any(|target| self.lock_parties.contains(target)))
            })
            .collect();
        let let_go: Vec<u64> = others.iter().filter_map(|other| self.run(*other).revoked_ms).collect();
        let in_force = |(at_ms, _, fault): &&(u64, Vec<Party>, Fault), bounded: bool| {
            let until = fault.lasts_ms(&self.world).map(|lasts| at_ms + lasts);
            bounded == until.is_some()
                && let_go.iter().any(|moment| *at_ms <= *moment && until.is_none_or(|until| *moment <= until))
        };
        candidates
            .iter()
            .rev()
            .find(|candidate| in_force(candidate, true))
            .or_else(|| candidates.iter().rev().find(|candidate| in_force(candidate, false)))
            .or_else(|| candidates.iter().rev().find(|(_, targets, _)| strikes_holder(targets)))
            .or_else(|| candidates.first())
            .copied()
    }

    /// The lock service granted the lock: to another while one still believed?
    fn on_granted(&mut self, at: u64, index: u32, run: &RunId, instance: &InstanceId, token: &Option<Token>) {
        self.set_holding(*run, Some(true), None);
        let other = self.believers.entries().iter().find(|((believer, _), _)| believer != instance);
        if let Some(&((other, _), other_token)) = other {
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
        let facts = entry(&mut self.runs, run.0);
        facts.revoked = Some(*reason);
        facts.revoked_ms = Some(at);
        let still_believes = self.believers.contains_key(&(*instance, *run));
        match reason {
            RevokeReason::DeletedByOther => {
                let text = format!("a plain DEL from another run deleted {instance}'s lock while it was working");
                self.say(at, index, "lock_deleted_by_other", text);
            }
            RevokeReason::Overwritten => {
                let text = format!("a plain SET from another run replaced {instance}'s lock while it was working");
                self.say(at, index, "lock_overwritten_by_other", text);
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
            let newly = !self.believers.entries().iter().any(|((believer, _), _)| believer == instance);
            self.believers.insert((*instance, *run), *token);
            if let Some((first, last)) = self.believing_ends()
                && newly
                && first != last
                && self.believers.entries().iter().all(|((believer, _), _)| [first, last].contains(believer))
            {
                self.say(at, index, "overlap", format!("{first} and {last} both believe they hold the lock"));
            }
        } else {
            self.believers.remove(&(*instance, *run));
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
                if self.run(*run).wasted {
                    self.metrics.wasted_side_effects += 1;
                }
                if *own_object {
                    return;
                }
                match self.chunk_writer.iter_mut().find(|(of, at, _)| of == report && at == chunk) {
                    Some(written) => written.2 = *run,
                    None => self.chunk_writer.push((*report, *chunk, *run)),
                }
                let stale = self.applied(Object::Chunk(*report, *chunk), *run);
                let facts = entry(&mut self.runs, run.0);
                facts.wrote_to = Some(*report);
                facts.token = *token;
                if token.is_none() || !self.world.storage_checks_tokens {
                    let what = WriteKind::Chunk { chunk: *chunk, report: *report, token: *token };
                    self.unfenced(at, index, *run, what, stale.is_none());
                }
                if let Some(newer) = self.goes_back(*report, *run) {
                    let text = self.went_back(*report, *run, newer, &format!("chunk {chunk}"));
                    let cause = self.stale_cause(*run, *token, Some(newer.run), true);
                    self.damage(*report, at, index, "report_went_back", text, cause);
                }
                if let Some(later) = stale {
                    self.metrics.stale_writes_accepted += 1;
                    let later = self.run_of_epoch(later);
                    let later_who = later.map(|later| self.who(later)).unwrap_or_default();
                    let with = token.map(|token| format!(" with token {token}")).unwrap_or_default();
                    let text = format!(
                        "storage accepted a stale write: {instance}'s chunk {chunk}{with} overwrote {later_who}'s newer one"
                    );
                    let cause = self.stale_cause(*run, *token, later, true);
                    self.say_caused(at, index, "stale_write_accepted", text, cause);
                }
            }
            PutOutcome::Rejected(highest) => {
                self.metrics.stale_writes_rejected += 1;
                let from =
                    self.token_holder.get(highest).map(|(holder, _)| format!(" from {holder}")).unwrap_or_default();
                match token {
                    Some(token) => {
                        let text = format!(
                            "storage refused {instance}'s chunk {chunk} with token {token}: it has seen {highest}{from}"
                        );
                        self.say(at, index, "stale_write_rejected", text);
                    }
                    None => {
                        let text = format!(
                            "storage refused {instance}'s chunk {chunk}: it carries no token, and storage fences {report} (it has seen token {highest}{from})"
                        );
                        let cause = self.refused_cause(*run, "storage's fence");
                        self.say_caused(at, index, "tokenless_write_rejected", text, cause);
                    }
                }
            }
        }
    }

    /// Who sent a write that a fence refused for carrying no token, and
    /// what that write lacked: the finding's cause, although nothing was damaged.
    fn refused_cause(&self, run: RunId, fence: &str) -> Cause {
        let lacked = if self.run(run).redelivered {
            "a token: the job was handed back after a crash, and a restarted process remembers none"
        } else {
            "a token: the lock it holds hands out none"
        };
        Cause {
            run,
            instance: self.run(run).instance.unwrap_or(InstanceId(0)),
            held: self.held(run),
            checked: format!("{fence}, which refuses a write that carries no token once it fences the report"),
            fix: lacked.to_owned(),
            refused: true,
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
        entry(&mut self.runs, run.0).token = *token;
        let stale = self.applied(Object::Row(*report), *run);
        // A row is fenced by its token, by the unique key it is inserted
        // under, or by being committed in the transaction that holds the row lock.
        let fenced = token.is_some()
            || self.strategy == StrategyId::UniqueInsert
            || (self.strategy == StrategyId::DbLock && !self.run(*run).redelivered);
        if !fenced {
            self.unfenced(at, index, *run, WriteKind::Row { report: *report }, stale.is_none());
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
        if let Some(later) = stale {
            self.metrics.stale_writes_accepted += 1;
            let later = self.run_of_epoch(later);
            let later_who = later.map(|later| self.who(later)).unwrap_or_default();
            let with = token.map(|token| format!(" with token {token}")).unwrap_or_default();
            let text = format!(
                "the database accepted a stale report row from {}{with} over {later_who}'s newer one",
                self.who(*run)
            );
            let cause = self.stale_cause(*run, *token, later, false);
            self.say_caused(at, index, "stale_write_accepted", text, cause);
        }
    }

    /// Whether two runs held the lock at once and both wrote where no fence
    /// checked while both held it: each write made inside the overlap. Says
    /// so once per pair of runs, naming the two writes and the later one's cause.
    fn two_holders_unfenced(&mut self) -> bool {
        let mut any = false;
        let writes = std::mem::take(&mut self.overlapping_writes);
        for (write, other) in &writes {
            let (write, other) = (*write, *other);
            // The other run's own write while this one held the lock too.
            let Some(theirs) = writes
                .iter()
                .find(|(theirs, with)| theirs.run == other && *with == write.run)
                .map(|(theirs, _)| *theirs)
            else {
                continue;
            };
            any = true;
            let pair = if write.run < other { (write.run, other) } else { (other, write.run) };
            if self.said_pairs.contains(&pair) {
                continue;
            }
            self.said_pairs.push(pair);
            let (first, second) = if theirs.at_ms < write.at_ms { (theirs, write) } else { (write, theirs) };
            let text = format!(
                "{} and {} held the lock at once and both wrote where no fence checks: {}, and {}; only timing kept them from damaging each other",
                self.name(first.run, second.run),
                self.name(second.run, first.run),
                self.describe(&first),
                self.describe(&second)
            );
            let cause = self.cause(&second);
            self.say_caused(second.at_ms, second.event, "unfenced_overlap", text, cause);
        }
        any
    }

    fn finish(mut self) -> StrategyReport {
        // The run ends with the window, or later when runs in flight drained after it.
        let duration = self.duration_ms.max(self.last_event_ms);
        self.advance(duration);
        for (_, since) in self.waits.take() {
            self.metrics.db_lock_wait_ms += duration - since;
        }
        self.metrics.background_pool_starved_ms = union_ms(&mut self.starved);
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
                    let cause = self.mixed_cause(writers[writers.len() - 1]);
                    self.damage(report, duration, u32::MAX, "corrupted_report", text, cause);
                }
            }
        }
        let at_risk = self.two_holders_unfenced();
        let chunks = u32::from(self.world.report_chunks);
        for facts in &self.periods {
            self.metrics.duplicate_runs += facts.runs_started.saturating_sub(1);
            self.metrics.duplicate_side_effects += facts.puts.saturating_sub(chunks) + facts.posts.saturating_sub(1);
        }
        let late = self.judge_periods(duration);
        let safety = if self.metrics.stale_writes_accepted > 0 || self.metrics.corrupted_reports > 0 {
            Safety::Unsafe
        } else if at_risk || self.former_wrote {
            Safety::AtRisk
        } else {
            Safety::Safe
        };
        let liveness = if self.falls_behind(duration) {
            Liveness::Behind
        } else if self.metrics.missed_periods > 0 {
            Liveness::Missed
        } else if late {
            Liveness::Late
        } else {
            Liveness::Ok
        };
        let efficiency = if self.metrics.wasted_runs > 0 || self.metrics.queries_held_behind_lock > 0 {
            Efficiency::Wasteful
        } else {
            Efficiency::Ok
        };
        StrategyReport {
            strategy: self.strategy,
            safety,
            liveness,
            efficiency,
            metrics: self.metrics,
            findings: self.findings,
        }
    }

    /// Judges every period whose tick fell in the window, once its runs have
    /// drained: done (and how late), missed (every run of it ended without
    /// its report), or unfinished (a run of it still going when the drain
    /// reached its limit, `end_ms`; older than a period by then, so late).
    /// Says why for each missed and unfinished period and for the latest
    /// report; returns whether any report was late.
    fn judge_periods(&mut self, end_ms: u64) -> bool {
        let period_ms = self.world.cron_period_ms;
        let periods = u32::try_from(self.duration_ms.div_ceil(period_ms)).unwrap_or(u32::MAX);
        let mut latest: Option<(u64, u32, u64)> = None;
        for period in 0..periods {
            let due = u64::from(period) * period_ms;
            let done_ms = usize::try_from(period).ok().and_then(|index| self.periods.get(index)?.report_done_ms);
            let in_flight = self.runs.iter().any(|facts| facts.live && facts.period == Some(Period(period)));
            match done_ms {
                Some(done) => {
                    let delay = done.saturating_sub(due);
                    if delay > period_ms && latest.is_none_or(|(worst, ..)| delay > worst) {
                        latest = Some((delay, period, done));
                    }
                    self.metrics.max_report_delay_ms = self.metrics.max_report_delay_ms.max(delay);
                }
                None if in_flight => {
                    self.metrics.unfinished_periods += 1;
                    let delay = end_ms.saturating_sub(due);
                    self.metrics.max_report_delay_ms = self.metrics.max_report_delay_ms.max(delay);
                    latest = latest.filter(|(worst, ..)| *worst >= delay).or(Some((delay, period, end_ms)));
                    let text = format!(
                        "period {period} (due t={}) is still running at t={}, where the drain after the window stops: {}",
                        seconds(due),
                        seconds(end_ms),
                        self.period_runs(Period(period))
                    );
                    self.say(end_ms, u32::MAX, "unfinished_period", text);
                }
                None => {
                    self.metrics.missed_periods += 1;
                    let text = format!(
                        "period {period} (due t={}) got no report: {}",
                        seconds(due),
                        self.period_runs(Period(period))
                    );
                    self.say(end_ms, u32::MAX, "missed_period", text);
                }
            }
        }
        let Some((delay, period, done)) = latest else {
            return false;
        };
        if done < end_ms || self.metrics.unfinished_periods == 0 {
            let text = format!(
                "period {period}'s report came {} after its tick, more than a cron period (due t={}, done t={}): {}",
                seconds(delay),
                seconds(u64::from(period) * period_ms),
                seconds(done),
                self.period_runs(Period(period))
            );
            self.say(done, u32::MAX, "late_period", text);
        }
        true
    }

    /// Whether the system falls behind: each job needs more than a cron
    /// period of work (the world's `job_ms`), and the lock queues the runs
    /// one behind another (a run waited for it past its next period's
    /// tick), so every period's report comes later than the last. Both are
    /// plain from the first period on, so a longer window never changes it.
    /// Says why when it does.
    fn falls_behind(&mut self, end_ms: u64) -> bool {
        let period_ms = self.world.cron_period_ms;
        if self.world.job_ms <= period_ms {
            return false;
        }
        if self.queued_past_tick.is_none() {
            // A run still waiting for the lock at the end waited past its tick too.
            let waiting = (0u32..).zip(&self.runs).find(|(_, facts)| {
                facts.live
                    && facts.started_ms.is_none()
                    && facts.period.is_some_and(|period| (u64::from(period.0) + 1) * period_ms < end_ms)
            });
            self.queued_past_tick = waiting.map(|(run, _)| (RunId(run), None));
        }
        let Some((run, got_ms)) = self.queued_past_tick else {
            return false;
        };
        let facts = self.run(run);
        let period = facts.period.map_or(0, |period| period.0);
        let waited = match got_ms {
            Some(at) => format!("got it only at t={}", seconds(at)),
            None => "was still waiting when the run ended".to_owned(),
        };
        let text = format!(
            "the job needs {} of work and a period starts every {}, and the lock queues the runs one behind another ({}'s run for period {period} waited for it past the next tick and {waited}): every period's report comes later than the last, without bound",
            seconds(self.world.job_ms),
            seconds(period_ms),
            self.who(run)
        );
        self.say(end_ms, u32::MAX, "falls_behind", text);
        true
    }

    /// How a period's runs went, for the sentence that says why it was late
    /// or missed: each run that started the job, how and when it ended.
    fn period_runs(&self, period: Period) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut waited = 0;
        for facts in &self.runs {
            if facts.period != Some(period) {
                continue;
            }
            let who = facts.instance.map_or_else(String::new, |instance| instance.to_string());
            let Some(started) = facts.started_ms else {
                waited += 1;
                continue;
            };
            let handed = if facts.redelivered { " (handed back after a crash)" } else { "" };
            parts.push(match facts.ended {
                Some((at, RunPhase::Finished)) => {
                    format!("{who}{handed} started at t={} and finished at t={}", seconds(started), seconds(at))
                }
                Some((at, RunPhase::Aborted(AbortReason::ProcessDied))) => {
                    format!("{who}{handed} started at t={} and its process died at t={}", seconds(started), seconds(at))
                }
                Some((at, RunPhase::Aborted(reason))) => format!(
                    "{who}{handed} started at t={} and stopped at t={}: {}",
                    seconds(started),
                    seconds(at),
                    abort_text(reason)
                ),
                Some((at, _)) => {
                    format!("{who}{handed} started at t={} and ended at t={}", seconds(started), seconds(at))
                }
                None => format!("{who}{handed} started at t={} and is still at it", seconds(started)),
            });
        }
        if parts.is_empty() {
            return "no run of it got the lock and started the job".to_owned();
        }
        if waited > 0 {
            parts.push(format!("{waited} other {} never started it", if waited == 1 { "run" } else { "runs" }));
        }
        parts.join("; ")
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
        assert!(
            !compared.contains("pool exhausted") && compared.contains("queries held up by the row lock"),
            "{compared}"
        );
    }
}
