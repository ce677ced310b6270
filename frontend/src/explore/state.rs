//! The explorer's one state and its actions; pure, no browser calls: the
//! search's inputs as the form holds them (the request the worker is sent),
//! where a search stands, and the speed measured.

use crate::worker::protocol::{ExploreRequest, Response};
use locklab_engine::explore::{ExploreOptions, Goal};
use locklab_engine::scenario::FAULT_KINDS;
use locklab_engine::{Scenario, StrategyId};
use std::rc::Rc;
use yew::prelude::*;

/// Where a search stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Idle,
    Running { runs: u32, budget: u32, elapsed_ms: f64 },
    Done { runs: u32, elapsed_ms: f64, outcome: Outcome },
}

/// How a search ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The minimal counterexample and, once made, the lab link that opens it.
    Found {
        scenario: Rc<Scenario>,
        lab_href: Option<String>,
    },
    NotFound,
    Cancelled,
}

/// The page's one state.
#[derive(Clone, Debug, PartialEq)]
pub struct ExploreState {
    pub request: ExploreRequest,
    pub status: Status,
    /// Runs of the seed's story per second in this browser, once measured.
    pub bench: Option<(StrategyId, f64, u32)>,
    pub benching: bool,
    pub error: Option<String>,
}

impl Default for ExploreState {
    /// The engine's default search (`ExploreOptions::new`), for Redlock.
    fn default() -> Self {
        let strategy = StrategyId::Redlock;
        let options = ExploreOptions::new(strategy, Goal::Unsafe);
        ExploreState {
            request: ExploreRequest {
                strategy,
                goal: "unsafe".to_owned(),
                kinds: options.kinds,
                max_faults: options.max_faults,
                window_ms: options.window_ms,
                runs: options.runs,
                seed: options.seed,
                world: None,
            },
            status: Status::Idle,
            bench: None,
            benching: false,
            error: None,
        }
    }
}

/// Everything that can happen to the page.
#[derive(Clone, Debug, PartialEq)]
pub enum ExploreAction {
    SetStrategy(StrategyId),
    SetGoal(String),
    ToggleKind(String),
    SetMaxFaults(u8),
    SetWindowEndS(u64),
    SetRuns(u32),
    SetSeed(u64),
    /// Search this scenario's world (its own faults set aside), or the seed's (`None`).
    SetWorld(Option<Box<Scenario>>),
    /// The search was sent to the worker.
    Started,
    /// The inputs cannot make a search; why, in the page's words.
    Refuse(String),
    Bench,
    Worker(Response),
    LabHref(String),
}

impl ExploreState {
    pub fn running(&self) -> bool {
        matches!(self.status, Status::Running { .. })
    }

    /// The same page searching `world` (its faults set aside), with the
    /// fault window the engine gives that world by default.
    pub fn with_world(mut self, world: Option<Box<Scenario>>) -> ExploreState {
        self.request.window_ms =
            ExploreOptions::for_world(self.request.strategy, Goal::Unsafe, world.as_deref()).window_ms;
        self.request.world = world;
        self
    }

    /// The longest run a fault window may cover, in whole seconds.
    pub fn world_duration_s(&self) -> u64 {
        match &self.request.world {
            Some(world) => world.duration_ms() / 1_000,
            None => ExploreOptions::new(self.request.strategy, Goal::Unsafe).base.duration_ms() / 1_000,
        }
    }
}

impl Reducible for ExploreState {
    type Action = ExploreAction;

    fn reduce(self: Rc<Self>, action: ExploreAction) -> Rc<Self> {
        let mut next = (*self).clone();
        let request = &mut next.request;
        match action {
            ExploreAction::SetStrategy(strategy) => request.strategy = strategy,
            ExploreAction::SetGoal(goal) => request.goal = goal,
            ExploreAction::ToggleKind(kind) => match request.kinds.iter().position(|known| *known == kind) {
                Some(index) => {
                    request.kinds.remove(index);
                }
                // Kept in the engine's order, so the same choice is the same search.
                None => {
                    request.kinds.push(kind);
                    request.kinds.sort_by_key(|kind| FAULT_KINDS.iter().position(|known| known == kind));
                }
            },
            ExploreAction::SetMaxFaults(max_faults) => request.max_faults = max_faults,
            ExploreAction::SetWindowEndS(end_s) => request.window_ms.1 = end_s.saturating_mul(1_000),
            ExploreAction::SetRuns(runs) => request.runs = runs,
            ExploreAction::SetSeed(seed) => request.seed = seed,
            ExploreAction::SetWorld(world) => next = next.with_world(world),
            ExploreAction::Started => {
                next.error = None;
                next.status = Status::Running { runs: 0, budget: next.request.runs, elapsed_ms: 0.0 };
            }
            ExploreAction::Refuse(problem) => next.error = Some(problem),
            ExploreAction::Bench => next.benching = true,
            ExploreAction::Worker(response) => match response {
                Response::Progress { runs, budget, elapsed_ms } => {
                    if next.running() {
                        next.status = Status::Running { runs, budget, elapsed_ms };
                    }
                }
                Response::Explored { runs, elapsed_ms, scenario, cancelled, .. } => {
                    let outcome = match (cancelled, scenario.map(|text| Scenario::from_json(&text))) {
                        (true, _) => Outcome::Cancelled,
                        (false, Some(Ok(scenario))) => Outcome::Found { scenario: Rc::new(scenario), lab_href: None },
                        (false, Some(Err(error))) => {
                            next.error = Some(format!("The worker's counterexample did not read back: {error}"));
                            Outcome::NotFound
                        }
                        (false, None) => Outcome::NotFound,
                    };
                    next.status = Status::Done { runs, elapsed_ms, outcome };
                }
                Response::Bench { strategy, runs, elapsed_ms, .. } => {
                    next.benching = false;
                    next.bench = Some((strategy, f64::from(runs) * 1_000.0 / elapsed_ms.max(0.001), runs));
                }
                Response::Refused(problem) => {
                    next.error = Some(problem);
                    next.benching = false;
                    if next.running() {
                        next.status = Status::Idle;
                    }
                }
            },
            ExploreAction::LabHref(href) => {
                if let Status::Done { outcome: Outcome::Found { lab_href, .. }, .. } = &mut next.status {
                    *lab_href = Some(href);
                }
            }
        }
        if next == *self { self } else { Rc::new(next) }
    }
}
