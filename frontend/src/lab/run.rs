//! The lab's runs: the scenario a fresh lab opens with, a run too long for
//! one frame simulated and read a slice at a time ([`RunJob`]), and compare
//! mode's six.

use crate::ui::run::{LabRun, Reading, RunRef};
use crate::ui::shared::Shared;
use locklab_engine::report::{ReportBuilder, StrategyReport};
use locklab_engine::{Scenario, Simulation, StrategyId};
use std::rc::Rc;

/// The built-in the lab opens with: the post's night.
pub fn default_scenario() -> Scenario {
    Scenario::from_json(locklab_engine::builtin::STORY.text).unwrap_or_default()
}

/// Events simulated (and fed to the timeline) per slice of a [`RunJob`]:
/// a few milliseconds of wasm, so a page that runs one slice per frame keeps
/// drawing.
pub const SLICE_EVENTS: u32 = 20_000;

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

/// The verdicts of the strategies a view does not show, computed after the
/// one it does, a slice at a time: the simulation and the report only (no
/// timeline, and each log dropped once read), so the picker can show all
/// six verdicts of the night without the memory of six runs.
pub struct VerdictJob {
    scenario: Rc<Scenario>,
    strategies: Vec<StrategyId>,
    done: Vec<StrategyReport>,
    current: Option<(Simulation, ReportBuilder)>,
}

impl std::fmt::Debug for VerdictJob {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("VerdictJob").field("strategies", &self.strategies).finish()
    }
}

impl VerdictJob {
    pub fn new(scenario: Rc<Scenario>, strategies: Vec<StrategyId>) -> VerdictJob {
        VerdictJob { scenario, strategies, done: Vec::new(), current: None }
    }

    pub fn scenario(&self) -> &Rc<Scenario> {
        &self.scenario
    }

    /// Simulates and reads about `events` more events; says whether every
    /// verdict is known. A run the engine's hard cap stopped gives none.
    pub fn step(&mut self, events: u32) -> bool {
        let mut left = events;
        while let Some(&strategy) = self.strategies.get(self.done.len()) {
            if left == 0 {
                return false;
            }
            let (simulation, report) = self.current.get_or_insert_with(|| {
                (Simulation::new(&self.scenario, strategy), ReportBuilder::new(&self.scenario, strategy))
            });
            let before = simulation.log().len();
            let ended = simulation.advance(left.min(SLICE_EVENTS));
            report.feed(&simulation.log()[before..]);
            let logged = u32::try_from(simulation.log().len() - before).unwrap_or(u32::MAX);
            left = left.saturating_sub(logged.max(1));
            if ended && let Some((simulation, report)) = self.current.take() {
                if locklab_engine::log_was_cut(simulation.log()) {
                    self.strategies.retain(|wanted| *wanted != strategy);
                } else {
                    self.done.push(report.finish());
                }
            }
        }
        true
    }

    /// The verdicts, once [`VerdictJob::step`] said done.
    pub fn finish(self) -> Vec<StrategyReport> {
        self.done
    }
}

/// The same scenario under all six strategies, for compare mode.
pub type CompareRuns = Shared<Vec<RunRef>>;
