//! Quiz cards: a scenario plus a story, a question, choices, the answer, an
//! explanation and references. The question is a predicate over the engine's
//! report (`asks`), so the right answer is computed, never just asserted: the
//! test suite runs every quiz and fails when the stated answer differs.

use crate::report::{StrategyReport, analyze};
use crate::scenario::{Efficiency, Liveness, Safety, Scenario, ScenarioError, StrategyId};
use serde::{Deserialize, Serialize};

/// The quiz fields a scenario may carry (an extension of `locklab/1`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quiz {
    /// The situation, in the voice of the engineer on call.
    pub story: String,
    pub question: String,
    /// What the question asks of each choice's run.
    pub asks: Asks,
    pub choices: Vec<Choice>,
    /// The ids of the right choices (one or more).
    pub answer: Vec<String>,
    /// The wrong choice a right pick is shown beside when it is the only
    /// right one, where the card's explanation names one (the post names D
    /// beside A: the right data at triple the work); absent, the page shows
    /// the wrong choice whose run is closest to the pick's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closest_wrong: Option<String>,
    pub explanation: String,
    /// The fix the explanation names, to play in the lab (optional): the same
    /// world with one strategy's settings changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<Fix>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<Reference>,
    /// What the story and the explanation say about the runs, per strategy,
    /// in the claims of `crate::claim` (read by the texts test from the
    /// document; see [`crate::scenario::Scenario::claims`]).
    #[serde(default, skip_serializing)]
    pub claims: serde::de::IgnoredAny,
}

/// One choice: a strategy under a letter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Choice {
    /// `A`, `B`, … as shown to the learner.
    pub id: String,
    pub strategy: StrategyId,
    pub text: String,
}

/// A fix a card's explanation names, played on the card's own world: its
/// `strategies` hold exactly one strategy, with the settings the fix
/// changes (`{"db-lock": {"lock_strength": "for_no_key_update"}}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fix {
    /// What the fix changes, as the link names it.
    pub text: String,
    pub strategies: crate::scenario::Strategies,
    /// What `text` says about the fix's run, in the claims of `crate::claim`
    /// (read by the texts test from the document, as the card's own are).
    #[serde(default, skip_serializing)]
    pub claims: serde::de::IgnoredAny,
}

/// A source to read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    pub title: String,
    pub url: String,
}

/// What a question asks of a strategy's run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Asks {
    /// What the post asks of its four answers: the stored report stays
    /// correct (safe), no work is done twice that no fault forced
    /// (efficient), and every period's report gets done, late if the night's
    /// faults cost time (no period missed, and the system keeps up).
    Survives,
    /// Safe: no stale write, no damaged report, and no two holders writing
    /// where nothing checks (neither unsafe nor at risk), whatever the timing.
    Safe,
    /// A stale write was accepted or a report corrupted.
    Unsafe,
    /// Some period got no report.
    Missed,
    /// Two instances believed they held the lock at once.
    TwoHolders,
    /// Slack got the same report more than once.
    DuplicatePost,
    /// Other services' queries failed.
    BackgroundTimeouts,
    /// Other services' queries waited behind the jobs row lock.
    BackgroundHeld,
    /// The job ran more than once for a period.
    DuplicateRuns,
}

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

    /// The predicate in words, for explanations.
    pub fn describe(self) -> &'static str {
        match self {
            Asks::Survives => {
                "keeps the stored report correct, does no work twice that a fault did not force, misses no period and keeps up"
            }
            Asks::Safe => "keeps the stored report correct, not by luck of timing",
            Asks::Unsafe => "lets a stale write through or corrupts a report",
            Asks::Missed => "leaves a period without its report",
            Asks::TwoHolders => "lets two instances believe they hold the lock at once",
            Asks::DuplicatePost => "posts the same report to Slack twice",
            Asks::BackgroundTimeouts => "makes other services' queries fail",
            Asks::BackgroundHeld => "holds up other services' queries behind its row lock",
            Asks::DuplicateRuns => "runs the job more than once for a period",
        }
    }
}

impl Quiz {
    /// Checks what the types cannot: choices, ids and the answer fit together.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let refuse = |path: &str, message: String| Err(ScenarioError { path: format!("quiz.{path}"), message });
        if self.choices.len() < 2 {
            return refuse("choices", "a quiz needs at least two choices".to_owned());
        }
        for (index, choice) in self.choices.iter().enumerate() {
            if self.choices[..index].iter().any(|earlier| earlier.id == choice.id) {
                return refuse(&format!("choices[{index}].id"), format!("`{}` is used twice", choice.id));
            }
        }
        if self.answer.is_empty() {
            return refuse("answer", "name at least one right choice".to_owned());
        }
        for (index, id) in self.answer.iter().enumerate() {
            if !self.choices.iter().any(|choice| &choice.id == id) {
                return refuse(&format!("answer[{index}]"), format!("`{id}` is not one of the choices"));
            }
        }
        if let Some(id) = &self.closest_wrong {
            if !self.choices.iter().any(|choice| &choice.id == id) {
                return refuse("closest_wrong", format!("`{id}` is not one of the choices"));
            }
            if self.answer.contains(id) {
                return refuse("closest_wrong", format!("`{id}` is a right answer, not a wrong one"));
            }
        }
        if let Some(fix) = &self.fix {
            let probe = Scenario { strategies: Some(fix.strategies.clone()), ..Scenario::default() };
            if probe.strategy_settings().len() != 1 {
                return refuse(
                    "fix.strategies",
                    "name exactly one strategy, with the settings the fix changes".to_owned(),
                );
            }
        }
        for (index, reference) in self.references.iter().enumerate() {
            if !reference.url.starts_with("https://") && !reference.url.starts_with("http://") {
                return refuse(&format!("references[{index}].url"), "must be an http(s) address".to_owned());
            }
        }
        Ok(())
    }

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
