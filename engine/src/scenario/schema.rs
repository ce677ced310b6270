//! The scenario document itself: the format tags, the `Scenario` it reads
//! into, what the engine reads off it (its length, its strategies, the report
//! a period writes), and the limits every document keeps.

use super::faults::{Fault, deserialize_faults};
use super::quiz_card::Quiz;
use super::strategies::{Strategies, StrategyId, StrategySettings};
use super::verdicts::Expectation;
use super::world::{Output, World};
use crate::ids::{Period, ReportOf};
use crate::table::Table;
use serde::{Deserialize, Serialize};

/// The format tag new scenarios carry.
pub const FORMAT: &str = "locklab/2";

/// The largest scenario document read (a file in the CLI or the lab): a
/// thousand faults fit many times over, and a larger file is refused before
/// it is read.
pub const MAX_DOCUMENT_BYTES: u64 = 4 * 1024 * 1024;

/// The first version of the format, still read with its own defaults: every
/// period writes its own report (`world.output: "per_period"`).
pub const FORMAT_V1: &str = "locklab/1";
/// Longest simulated run accepted: 24 hours.
pub const MAX_DURATION_MS: u64 = 24 * 60 * 60 * 1000;
/// Most faults one scenario may hold.
pub const MAX_FAULTS: usize = 1000;

/// A whole scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub format: String,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub seed: u64,
    /// Simulated time to run; absent means three cron periods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(default = "default_clock_origin")]
    pub clock_origin: String,
    #[serde(default)]
    pub world: World,
    /// Which strategies to run; absent means all six with defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategies: Option<Strategies>,
    #[serde(default, deserialize_with = "deserialize_faults")]
    pub faults: Vec<Fault>,
    /// The outcome each strategy is expected to reach (an extension), in
    /// strategy order: the engine's small map, which every page carries
    /// anyway, where a `BTreeMap` brought a B-tree of its own.
    #[serde(default, skip_serializing_if = "Table::is_empty")]
    pub expect: Table<StrategyId, Expectation>,
    /// What `description` says about the run under each strategy named, in
    /// the claims of `crate::claim`: `{"naive": ["grant#1@b", …]}` (an
    /// extension). Only the built-ins' texts test reads them, from the
    /// document itself, holding the text to its claims and the claims to the
    /// runs; the engine accepts and drops them, so no page carries them.
    #[serde(default, skip_serializing)]
    pub claims: serde::de::IgnoredAny,
    /// The quiz card built on this scenario (an extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiz: Option<Quiz>,
}

fn default_clock_origin() -> String {
    "02:00:00".to_owned()
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            format: FORMAT.to_owned(),
            name: String::new(),
            description: None,
            seed: 0,
            duration_ms: None,
            clock_origin: default_clock_origin(),
            world: World::default(),
            strategies: None,
            faults: Vec::new(),
            expect: Table::new(),
            claims: serde::de::IgnoredAny,
            quiz: None,
        }
    }
}

impl Scenario {
    /// The document as pretty JSON, in the format's field order.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|error| format!("{{\"error\": \"{error}\"}}"))
    }

    /// What every period writes: the document's `world.output`, or its
    /// format version's default (`daily` in `locklab/2`, `per_period` in
    /// `locklab/1`, whose meaning a document keeps).
    pub fn output(&self) -> Output {
        self.world.output.unwrap_or(if self.format == FORMAT_V1 { Output::PerPeriod } else { Output::Daily })
    }

    /// The same scenario as a document of the current format, for the lab to
    /// write a changed or saved scenario in. A `locklab/1` document keeps
    /// its meaning: the output its version gave it becomes explicit.
    pub fn in_current_format(mut self) -> Scenario {
        if self.format != FORMAT {
            self.world.output = Some(self.output());
            self.format = FORMAT.to_owned();
        }
        self
    }

    /// Which store the writes meet, in a sentence for wherever a verdict is
    /// shown: a fencing token protects only a resource that checks it.
    pub fn storage_text(&self) -> &'static str {
        if self.world.storage_checks_tokens {
            "storage checks fencing tokens: it refuses a write whose token is lower than one it has seen"
        } else {
            "storage is a plain object store, like S3: the last PUT wins and no token is checked"
        }
    }

    /// The wall-clock time of t = 0, in milliseconds since midnight, if
    /// `clock_origin` reads as `HH:MM:SS`.
    pub fn clock_origin_ms(&self) -> Option<u64> {
        let mut parts = self.clock_origin.split(':');
        let mut field = |limit: u64| -> Option<u64> {
            let text = parts.next()?;
            if text.len() != 2 || !text.bytes().all(|byte| byte.is_ascii_digit()) {
                return None;
            }
            text.parse::<u64>().ok().filter(|value| *value < limit)
        };
        let (hours, minutes, seconds) = (field(24)?, field(60)?, field(60)?);
        if parts.next().is_some() {
            return None;
        }
        Some(((hours * 60 + minutes) * 60 + seconds) * 1_000)
    }

    /// The report a period's run writes: its own, or the day's.
    pub fn report_of(&self, period: Period) -> ReportOf {
        ReportRule::of(self).report_of(period)
    }

    /// Simulated time to run: the window in which cron fires. Runs still
    /// in flight at its end go on ([`Scenario::drain_ms`]).
    pub fn duration_ms(&self) -> u64 {
        self.duration_ms.unwrap_or(3 * self.world.cron_period_ms)
    }

    /// How long, at most, the runs in flight at the window's end go on
    /// after it: two cron periods or two jobs, whichever is longer, and never
    /// more than a day. No cron tick fires after the end; a run that started
    /// before it finishes, so a period is judged on what its runs did, not on
    /// where the window cut them. A run still in flight this long after the
    /// end (a lock that a lost host keeps until TCP keepalive gives up) is
    /// reported unfinished, never missed.
    pub fn drain_ms(&self) -> u64 {
        (2 * self.world.cron_period_ms.max(self.world.job_ms)).min(MAX_DURATION_MS)
    }

    /// The latest a run can end: the window plus its drain.
    pub fn horizon_ms(&self) -> u64 {
        self.duration_ms().saturating_add(self.drain_ms())
    }

    /// The strategies to run, in the fixed order, with settings resolved.
    pub fn strategy_settings(&self) -> Vec<StrategySettings> {
        let Some(chosen) = &self.strategies else {
            return StrategyId::ALL.into_iter().map(StrategySettings::default_for).collect();
        };
        let mut settings = Vec::new();
        if let Some(naive) = &chosen.naive {
            settings.push(StrategySettings::Naive(naive.clone()));
        }
        if let Some(fencing) = &chosen.fencing {
            settings.push(StrategySettings::Fencing(fencing.clone()));
        }
        if let Some(redlock) = &chosen.redlock {
            settings.push(StrategySettings::Redlock(redlock.clone()));
        }
        if let Some(db_lock) = &chosen.db_lock {
            settings.push(StrategySettings::DbLock(db_lock.clone()));
        }
        if chosen.unique_insert.is_some() {
            settings.push(StrategySettings::UniqueInsert);
        }
        if let Some(consensus) = &chosen.consensus {
            settings.push(StrategySettings::Consensus(consensus.clone()));
        }
        settings
    }

    /// The settings for one strategy: the scenario's own if it names it, else the defaults.
    pub fn settings_for(&self, id: StrategyId) -> StrategySettings {
        self.strategy_settings()
            .into_iter()
            .find(|settings| settings.id() == id)
            .unwrap_or_else(|| StrategySettings::default_for(id))
    }
}

/// How a period maps to the report it writes: everything
/// [`Scenario::report_of`] needs, small enough for the simulator to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportRule {
    pub output: Output,
    pub clock_origin_ms: u64,
    pub cron_period_ms: u64,
}

impl ReportRule {
    pub fn of(scenario: &Scenario) -> ReportRule {
        ReportRule {
            output: scenario.output(),
            clock_origin_ms: scenario.clock_origin_ms().unwrap_or(0),
            cron_period_ms: scenario.world.cron_period_ms,
        }
    }

    /// The report `period`'s run writes: under `daily`, the day its tick falls on.
    pub fn report_of(self, period: Period) -> ReportOf {
        const DAY_MS: u64 = 24 * 60 * 60 * 1_000;
        match self.output {
            Output::PerPeriod => ReportOf::Period(period),
            Output::Daily => {
                let tick_ms = self.clock_origin_ms + u64::from(period.0) * self.cron_period_ms;
                ReportOf::Day(u32::try_from(tick_ms / DAY_MS).unwrap_or(u32::MAX))
            }
        }
    }
}
