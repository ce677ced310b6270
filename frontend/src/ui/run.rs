//! A run as every page shows it: the event log, the timeline derived from it
//! and the engine's report, all pure functions of (scenario, strategy). They
//! are computed once per change of either and shared by [`RunRef`]; the
//! lab computes a long one in slices (`lab::run::RunJob`) through the same
//! `Reading`.

use crate::ui::shared::Shared;
use locklab_engine::report::{ReportBuilder, StrategyReport};
use locklab_engine::view::{Timeline, TimelineBuilder};
use locklab_engine::{Event, Fnv1a, Scenario, StrategyId};
use std::rc::Rc;

/// One strategy's run through one scenario.
#[derive(Debug)]
pub struct LabRun {
    pub scenario: Rc<Scenario>,
    pub strategy: StrategyId,
    pub log: Vec<Event>,
    pub timeline: Timeline,
    pub report: StrategyReport,
    /// A fingerprint of the log, so tests can tell two runs apart or equal.
    pub digest: u64,
}

impl LabRun {
    /// The whole run at once: for what is known to be small (a quiz card).
    pub fn compute(scenario: Rc<Scenario>, strategy: StrategyId) -> LabRun {
        let log = locklab_engine::simulate(&scenario, strategy);
        let mut reading = Reading::new(&scenario, strategy);
        reading.feed(&log);
        reading.finish(scenario, strategy, log)
    }

    /// A run read from its log, not simulated here: a recorded run (a log
    /// document, perhaps recorded live) read as the lab reads its own.
    pub fn from_log(scenario: Rc<Scenario>, strategy: StrategyId, log: Vec<Event>) -> LabRun {
        let mut reading = Reading::new(&scenario, strategy);
        reading.feed(&log);
        reading.finish(scenario, strategy, log)
    }

    pub fn duration_ms(&self) -> u64 {
        self.timeline.duration_ms
    }

    /// The log's event `index`, if it exists.
    pub fn event(&self, index: u32) -> Option<&Event> {
        self.log.get(usize::try_from(index).ok()?)
    }
}

/// What is read off a run's log as it grows: the timeline, the report and
/// the digest, each fed the same slices, so a long run is never read whole
/// in one go.
pub(crate) struct Reading {
    timeline: TimelineBuilder,
    report: ReportBuilder,
    digest: Fnv1a,
}

impl Reading {
    pub(crate) fn new(scenario: &Scenario, strategy: StrategyId) -> Reading {
        Reading {
            timeline: TimelineBuilder::new(scenario, strategy),
            report: ReportBuilder::new(scenario, strategy),
            digest: Fnv1a::default(),
        }
    }

    pub(crate) fn feed(&mut self, events: &[Event]) {
        self.timeline.feed(events);
        self.report.feed(events);
        fingerprint(&mut self.digest, events);
    }

    pub(crate) fn finish(self, scenario: Rc<Scenario>, strategy: StrategyId, log: Vec<Event>) -> LabRun {
        let (timeline, report, digest) = (self.timeline.finish(), self.report.finish(), self.digest.0);
        LabRun { scenario, strategy, log, timeline, report, digest }
    }
}

/// A run, shared: components re-render only when it was recomputed.
pub type RunRef = Shared<LabRun>;

/// Feeds the lab's fingerprint of a run: each event's time, kind and parties.
/// Cheap, stable across platforms, and different whenever the timeline is.
fn fingerprint(hash: &mut Fnv1a, events: &[Event]) {
    use std::fmt::Write;
    for event in events {
        hash.eat(&event.at_ms.to_le_bytes());
        hash.eat(event.kind_name().as_bytes());
        for party in event.parties() {
            // Written straight into the hash: no string per party.
            let _ = write!(hash, "{party}");
        }
    }
}

/// "A · Fencing token", "Naive baseline", … as the picker and compare grid say it.
pub fn strategy_label(strategy: StrategyId) -> String {
    strategy.labelled(strategy.title())
}

/// The same label with the title a scenario's settings give the strategy
/// ("Baseline · SET NX EX 100" where the naive lock was shortened), for what
/// shows one run: a verdict, a compare row, an embed's title.
pub fn strategy_label_in(scenario: &Scenario, strategy: StrategyId) -> String {
    strategy.labelled(&scenario.settings_for(strategy).title())
}
