//! A run as the lab shows it: the event log, the timeline derived from it and
//! the engine's report, all pure functions of (scenario, strategy). They are
//! computed once per change of either and shared by `Rc`.

use locklab_engine::report::{self, StrategyReport};
use locklab_engine::view::Timeline;
use locklab_engine::{Event, Scenario, StrategyId, simulate};
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
    pub fn compute(scenario: Rc<Scenario>, strategy: StrategyId) -> LabRun {
        let log = simulate(&scenario, strategy);
        let timeline = Timeline::build(&scenario, strategy, &log);
        let report = report::analyze(&scenario, strategy, &log);
        let digest = digest(&log);
        LabRun { scenario, strategy, log, timeline, report, digest }
    }

    pub fn duration_ms(&self) -> u64 {
        self.timeline.duration_ms
    }

    /// The log's event `index`, if it exists.
    pub fn event(&self, index: u32) -> Option<&Event> {
        self.log.get(usize::try_from(index).ok()?)
    }
}

/// A shared run whose equality is identity: components re-render only when
/// the run itself was recomputed.
#[derive(Clone, Debug)]
pub struct RunRef(pub Rc<LabRun>);

impl PartialEq for RunRef {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl std::ops::Deref for RunRef {
    type Target = LabRun;
    fn deref(&self) -> &LabRun {
        &self.0
    }
}

/// The same scenario under all six strategies, for compare mode.
#[derive(Clone, Debug)]
pub struct CompareRuns(pub Rc<Vec<RunRef>>);

impl PartialEq for CompareRuns {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl CompareRuns {
    pub fn compute(scenario: &Rc<Scenario>) -> CompareRuns {
        CompareRuns(Rc::new(
            StrategyId::ALL
                .into_iter()
                .map(|strategy| RunRef(Rc::new(LabRun::compute(scenario.clone(), strategy))))
                .collect(),
        ))
    }
}

/// FNV-1a over each event's time, kind and parties: cheap, stable across
/// platforms, and different whenever the timeline is.
fn digest(log: &[Event]) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for byte in bytes {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(PRIME);
        }
    };
    for event in log {
        eat(&event.at_ms.to_le_bytes());
        eat(event.kind_name().as_bytes());
        for party in event.parties() {
            eat(party.to_string().as_bytes());
        }
    }
    hash
}

/// The strategies in the order the picker shows them: the quiz options A–D,
/// then the naive baseline and the consensus lease.
pub const PICKER_ORDER: [StrategyId; 6] = [
    StrategyId::Fencing,
    StrategyId::Redlock,
    StrategyId::DbLock,
    StrategyId::UniqueInsert,
    StrategyId::Naive,
    StrategyId::Consensus,
];

/// "A · Fencing token", "Naive baseline", … as the picker and compare grid say it.
pub fn strategy_label(strategy: StrategyId) -> String {
    labelled(strategy, strategy.title())
}

/// The same label with the title a scenario's settings give the strategy
/// ("Baseline · SET NX EX 100" where the naive lock was shortened), for what
/// shows one run: a verdict, a compare row, an embed's title.
pub fn strategy_label_in(scenario: &Scenario, strategy: StrategyId) -> String {
    labelled(strategy, &scenario.settings_for(strategy).title())
}

fn labelled(strategy: StrategyId, title: &str) -> String {
    match strategy.quiz_letter() {
        Some(letter) => format!("{letter} · {title}"),
        None if strategy == StrategyId::Naive => format!("Baseline · {title}"),
        None => title.to_owned(),
    }
}

/// A short name: "Option A", "Baseline", "Consensus".
pub fn strategy_short(strategy: StrategyId) -> String {
    match strategy.quiz_letter() {
        Some(letter) => format!("Option {letter}"),
        None if strategy == StrategyId::Naive => "Baseline".to_owned(),
        None => "Consensus".to_owned(),
    }
}
