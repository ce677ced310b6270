//! A run as the lab shows it: the event log, the timeline derived from it and
//! the engine's report, all pure functions of (scenario, strategy). They are
//! computed once per change of either and shared by `Rc`.

use locklab_engine::report::{ReportBuilder, StrategyReport};
use locklab_engine::view::{Timeline, TimelineBuilder};
use locklab_engine::{Event, Fnv1a, Scenario, Simulation, StrategyId};
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

/// The built-in the lab opens with: the post's night.
pub fn default_scenario() -> Scenario {
    Scenario::from_json(locklab_engine::builtin::STORY.text).unwrap_or_default()
}

/// Events simulated (and fed to the timeline) per slice of a [`RunJob`]:
/// a few milliseconds of wasm, so a page that runs one slice per frame keeps
/// drawing.
pub const SLICE_EVENTS: u32 = 20_000;

/// What is read off a run's log as it grows: the timeline, the report and
/// the digest, each fed the same slices, so a long run is never read whole
/// in one go.
struct Reading {
    timeline: TimelineBuilder,
    report: ReportBuilder,
    digest: Fnv1a,
}

impl Reading {
    fn new(scenario: &Scenario, strategy: StrategyId) -> Reading {
        Reading {
            timeline: TimelineBuilder::new(scenario, strategy),
            report: ReportBuilder::new(scenario, strategy),
            digest: Fnv1a::default(),
        }
    }

    fn feed(&mut self, events: &[Event]) {
        self.timeline.feed(events);
        self.report.feed(events);
        fingerprint(&mut self.digest, events);
    }

    fn finish(self, scenario: Rc<Scenario>, strategy: StrategyId, log: Vec<Event>) -> LabRun {
        let (timeline, report, digest) = (self.timeline.finish(), self.report.finish(), self.digest.0);
        LabRun { scenario, strategy, log, timeline, report, digest }
    }
}

/// Runs of one scenario being computed a slice at a time, strategy after
/// strategy: the same logs as [`locklab_engine::simulate`], event for event.
pub struct RunJob {
    scenario: Rc<Scenario>,
    strategies: Vec<StrategyId>,
    done: Vec<LabRun>,
    current: Option<(Simulation, Reading)>,
    /// The engine's hard cap stopped a run: which strategy's.
    cut: Option<StrategyId>,
}

impl std::fmt::Debug for RunJob {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("RunJob").field("strategies", &self.strategies).field("done", &self.done.len()).finish()
    }
}

impl RunJob {
    pub fn new(scenario: Rc<Scenario>, strategies: Vec<StrategyId>) -> RunJob {
        RunJob { scenario, strategies, done: Vec::new(), current: None, cut: None }
    }

    /// Simulates about `events` more events, reading each as it comes; says
    /// whether every run is done.
    pub fn step(&mut self, events: u32) -> bool {
        let mut left = events;
        while self.cut.is_none() {
            let Some(&strategy) = self.strategies.get(self.done.len()) else {
                return true;
            };
            if left == 0 {
                return false;
            }
            let (simulation, reading) = self.current.get_or_insert_with(|| {
                (Simulation::new(&self.scenario, strategy), Reading::new(&self.scenario, strategy))
            });
            let before = simulation.log().len();
            let ended = simulation.advance(left.min(SLICE_EVENTS));
            reading.feed(&simulation.log()[before..]);
            let logged = u32::try_from(simulation.log().len() - before).unwrap_or(u32::MAX);
            left = left.saturating_sub(logged.max(1));
            if ended && let Some((simulation, reading)) = self.current.take() {
                let log = simulation.into_log();
                if locklab_engine::log_was_cut(&log) {
                    self.cut = Some(strategy);
                } else {
                    self.done.push(reading.finish(self.scenario.clone(), strategy, log));
                }
            }
        }
        true
    }

    /// How far along the job is, in thousandths: by runs done, and by
    /// simulated time within the current one.
    pub fn progress_permille(&self) -> u32 {
        let runs = u64::try_from(self.strategies.len()).unwrap_or(1).max(1);
        let duration_ms = self.scenario.duration_ms().max(1);
        let within = self.current.as_ref().map_or(0, |(simulation, _)| simulation.now_ms().min(duration_ms));
        let done = u64::try_from(self.done.len()).unwrap_or(0);
        let permille = (done * duration_ms + within) * 1000 / (runs * duration_ms);
        u32::try_from(permille).unwrap_or(1000)
    }

    pub fn scenario(&self) -> &Rc<Scenario> {
        &self.scenario
    }

    /// The runs, in the order asked, once [`RunJob::step`] said done; or
    /// why there are none.
    pub fn finish(self) -> Result<Vec<LabRun>, String> {
        match self.cut {
            Some(strategy) => Err(locklab_engine::budget::cut_message(strategy)),
            None => Ok(self.done),
        }
    }
}

/// A shared value whose equality is identity: a state or a component's
/// props compare it by pointer, so a page re-renders only when the value was
/// made again (a recomputed run, a changed scenario), and comparing costs a
/// pointer on every animation frame. States and props derive `PartialEq`
/// over it.
#[derive(Debug)]
pub struct Shared<T>(pub Rc<T>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Rc::clone(&self.0))
    }
}

impl<T> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl<T> std::ops::Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// A run, shared: components re-render only when it was recomputed.
pub type RunRef = Shared<LabRun>;

/// The same scenario under all six strategies, for compare mode.
pub type CompareRuns = Shared<Vec<RunRef>>;

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
