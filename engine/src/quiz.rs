//! Quiz cards: a scenario plus a story, a question, choices, the answer, an
//! explanation and references. The question is a predicate over the engine's
//! report (`asks`), so the right answer is computed, never just asserted: the
//! test suite runs every quiz and fails when the stated answer differs. The
//! card's fields are the document's (`scenario::quiz_card`); what is judged
//! against a run is here.

use crate::report::{StrategyReport, analyze};
pub use crate::scenario::quiz_card::{Asks, Choice, Fix, Quiz, Reference};
use crate::scenario::{Efficiency, Liveness, Safety, Scenario, StrategyId};

impl Asks {
    /// Whether a run answers yes.
    pub fn holds(self, report: &StrategyReport) -> bool {
        let metrics = &report.metrics;
        match self {
            Asks::Survives => {
                report.safety == Safety::Safe
                    && report.efficiency == Efficiency::Ok
                    && !matches!(report.liveness, Liveness::Missed | Liveness::Behind)
            }
            Asks::Safe => report.safety == Safety::Safe,
            Asks::Unsafe => report.safety == Safety::Unsafe,
            Asks::Missed => report.liveness == Liveness::Missed,
            Asks::TwoHolders => metrics.overlap_ms > 0,
            Asks::DuplicatePost => report.findings.iter().any(|finding| finding.kind == "duplicate_post"),
            Asks::BackgroundTimeouts => metrics.background_query_timeouts > 0,
            Asks::BackgroundHeld => metrics.queries_held_behind_lock > 0,
            Asks::DuplicateRuns => metrics.duplicate_runs > 0,
        }
    }
}

impl Quiz {
    /// The card's world with its fix in place, and the strategy the fix plays.
    pub fn fix_scenario(&self, scenario: &Scenario) -> Option<(Scenario, StrategyId)> {
        let fix = self.fix.as_ref()?;
        let fixed = Scenario { strategies: Some(fix.strategies.clone()), quiz: None, ..scenario.clone() };
        let strategy = fixed.strategy_settings().first()?.id();
        Some((fixed, strategy))
    }

    /// Runs every choice's strategy through the scenario and returns the ids
    /// of the choices the engine says are right, with each choice's report.
    pub fn compute(&self, scenario: &Scenario) -> (Vec<String>, Vec<(String, StrategyReport)>) {
        let mut right = Vec::new();
        let mut reports = Vec::new();
        for choice in &self.choices {
            let log = crate::simulate(scenario, choice.strategy);
            let report = analyze(scenario, choice.strategy, &log);
            if self.asks.holds(&report) {
                right.push(choice.id.clone());
            }
            reports.push((choice.id.clone(), report));
        }
        (right, reports)
    }

    /// Whether a learner's picks are exactly the answer.
    pub fn is_right(&self, picks: &[String]) -> bool {
        let mut picks = picks.to_vec();
        let mut answer = self.answer.clone();
        picks.sort();
        picks.dedup();
        answer.sort();
        picks == answer
    }
}
