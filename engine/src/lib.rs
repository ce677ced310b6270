//! locklab's engine: a deterministic discrete-event simulation of a job
//! scheduler on several instances fighting over one lock, with Redis,
//! PostgreSQL, a consensus store, object storage, Slack, a network and clocks,
//! and six strategies for keeping the job from running twice.
//!
//! The engine is a pure function: scenario + strategy → event log → report. It
//! never reads the wall clock, never does I/O, never uses OS randomness.
//!
//! No match over one of the engine's own enums ends in `_ =>`: a new variant
//! (a fault kind, a strategy, an event) must fail to compile everywhere it
//! matters, so the lint below is on for the whole crate.

#![warn(clippy::wildcard_enum_match_arm)]

pub mod builtin;
mod by_name;
pub mod claim;
pub mod clock;
pub mod event;
pub mod explore;
pub mod format;
pub mod ids;
mod json_path;
pub mod link;
pub mod quiz;
pub mod races;
pub mod recipe;
pub mod recorded;
pub mod report;
pub mod rng;
pub mod runtime;
pub mod scenario;
pub use scenario::budget;
mod sim;
pub mod story;
pub mod strategy;
pub mod svg;
pub mod table;
pub mod view;
pub mod vocab;

pub use event::{Event, EventKind};
pub use recorded::{LiveRecording, LogDocument, RecordedRun, Stall, log_document, recorded_log_document};
pub use report::{Report, StrategyReport};
pub use scenario::{Fault, Scenario, ScenarioError, StrategyId};
pub use sim::probe::{ConsensusProbe, DbAnswer, DbProbe, RedisProbe};

/// Runs one strategy through a scenario and returns its event log.
pub fn simulate(scenario: &Scenario, strategy: StrategyId) -> Vec<Event> {
    simulate_with(scenario, strategy, Shortcuts { defer_background: true, park_timeouts: true })
}

/// The same run with other services' arrivals each taken when due, never
/// deferred: the reference that deferring them (see `sim::db`) is tested
/// against, byte for byte. Not for anything else; it is only slower.
#[doc(hidden)]
pub fn simulate_undeferred(scenario: &Scenario, strategy: StrategyId) -> Vec<Event> {
    simulate_with(scenario, strategy, Shortcuts { defer_background: false, park_timeouts: true })
}

/// The same run with every request timeout in the heap, none parked: the
/// reference that parking them (see `sim::Sim::park`) is tested against,
/// byte for byte. Not for anything else; it is only slower.
#[doc(hidden)]
pub fn simulate_unparked(scenario: &Scenario, strategy: StrategyId) -> Vec<Event> {
    simulate_with(scenario, strategy, Shortcuts { defer_background: true, park_timeouts: false })
}

/// Runs `strategy`'s world through a scenario with its lock played from
/// `recipe` instead (`custom`, `strategy::recipe_lock`): a lock on one Redis
/// node step by step, one elsewhere by the built-in whose recipe it is.
/// The world is set up as for `strategy` (its Redis nodes, its database's
/// settings), or for that built-in. Not yet reachable from a scenario
/// document; the test that every built-in's recipe plays as the built-in
/// does, event for event, runs through here. The error names the recipe's
/// field that is refused, or that the interpreter does not play yet.
#[doc(hidden)]
pub fn simulate_recipe(
    scenario: &Scenario,
    strategy: StrategyId,
    recipe: &recipe::Recipe,
) -> Result<Vec<Event>, String> {
    recipe.validate().map_err(|error| error.to_string())?;
    let (settings, implementation): (_, Box<sim::SimStrategy>) = match strategy::recipe_lock::built_in_for(recipe) {
        Some(built_in) => (built_in.clone(), sim::build(&built_in)),
        None => (scenario.settings_for(strategy), Box::new(strategy::recipe_lock::RecipeLock::new(recipe)?)),
    };
    let mut simulation = Simulation { sim: sim::Sim::new(scenario, settings), strategy: implementation, ended: false };
    while !simulation.advance(u32::MAX) {}
    Ok(simulation.into_log())
}

/// The engine's two shortcuts, each of which must leave the log as it is.
struct Shortcuts {
    defer_background: bool,
    park_timeouts: bool,
}

fn simulate_with(scenario: &Scenario, strategy: StrategyId, shortcuts: Shortcuts) -> Vec<Event> {
    let mut simulation = Simulation::with_shortcuts(scenario, strategy, shortcuts);
    while !simulation.advance(u32::MAX) {}
    simulation.into_log()
}

/// One strategy's run through a scenario, advanced a slice at a time: what
/// a page does with a long run, so the page keeps drawing between slices and
/// can drop the run half way. Sliced or whole, the log is the same, event for
/// event ([`simulate`] is this, advanced in one go).
pub struct Simulation {
    sim: sim::Sim,
    strategy: Box<sim::SimStrategy>,
    ended: bool,
}

impl std::fmt::Debug for Simulation {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Simulation").field("sim", &self.sim).field("ended", &self.ended).finish()
    }
}

impl Simulation {
    pub fn new(scenario: &Scenario, strategy: StrategyId) -> Simulation {
        Simulation::with_shortcuts(scenario, strategy, Shortcuts { defer_background: true, park_timeouts: true })
    }

    fn with_shortcuts(scenario: &Scenario, strategy: StrategyId, shortcuts: Shortcuts) -> Simulation {
        let settings = scenario.settings_for(strategy);
        let implementation = sim::build(&settings);
        let mut sim = sim::Sim::new(scenario, settings);
        sim.defer_background = shortcuts.defer_background;
        sim.park_timeouts = shortcuts.park_timeouts;
        Simulation { sim, strategy: implementation, ended: false }
    }

    /// Runs until about `events` more events are logged (a step that logs
    /// several finishes first) or the run ends; says whether it has ended.
    pub fn advance(&mut self, events: u32) -> bool {
        if !self.ended {
            let log_until = self.sim.log.len().saturating_add(usize::try_from(events).unwrap_or(usize::MAX));
            self.ended = self.sim.run_until(self.strategy.as_mut(), log_until);
        }
        self.ended
    }

    /// The simulated time reached, in ms of the run.
    pub fn now_ms(&self) -> u64 {
        self.sim.now_ms
    }

    /// The events logged so far.
    pub fn log(&self) -> &[Event] {
        &self.sim.log
    }

    /// The log, whole once [`Simulation::advance`] said the run ended.
    pub fn into_log(self) -> Vec<Event> {
        self.sim.log
    }
}

/// Whether a log stopped at the engine's hard cap
/// ([`budget::MAX_LOGGED_EVENTS`]) rather than at the run's end: the work
/// budget let through a scenario it should not have, and nothing derived
/// from the log tells the whole run.
pub fn log_was_cut(log: &[Event]) -> bool {
    u64::try_from(log.len()).unwrap_or(u64::MAX) >= budget::MAX_LOGGED_EVENTS
}

/// [`simulate`], refusing a log cut at the engine's hard cap
/// ([`log_was_cut`]) with the message that says so.
pub fn simulate_whole(scenario: &Scenario, strategy: StrategyId) -> Result<Vec<Event>, String> {
    let log = simulate(scenario, strategy);
    if log_was_cut(&log) { Err(budget::cut_message(strategy)) } else { Ok(log) }
}

/// Runs every strategy the scenario names and reports on each; refuses a
/// scenario whose run reached the hard cap.
pub fn run(scenario: &Scenario) -> Result<Report, String> {
    let mut results = Vec::new();
    for settings in scenario.strategy_settings() {
        let log = simulate_whole(scenario, settings.id())?;
        results.push(report::analyze(scenario, settings.id(), &log));
    }
    Ok(Report::new(scenario, results))
}

/// A fingerprint of an event log: FNV-1a (64-bit) over its JSON. Equal logs
/// give equal digests on every platform; the determinism tests compare them
/// natively and in wasm, and a view can show it so people can compare runs.
pub fn log_digest(log: &[Event]) -> String {
    digest(&serde_json::to_vec(log).unwrap_or_default())
}

/// FNV-1a (64-bit) of some bytes, as 16 hex digits: the hash behind
/// `log_digest`, for tools that fold many digests into one.
pub fn digest(bytes: &[u8]) -> String {
    let mut hash = Fnv1a::default();
    hash.eat(bytes);
    format!("{:016x}", hash.0)
}

/// FNV-1a (64-bit), fed a piece at a time (text through `fmt::Write`): the
/// hash of [`digest`], and of the lab's fingerprint of a run as its log grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fnv1a(pub u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    pub fn eat(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

impl std::fmt::Write for Fnv1a {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.eat(text.as_bytes());
        Ok(())
    }
}
