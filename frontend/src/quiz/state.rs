//! The quiz's one piece of state and the actions that change it.
//!
//! The cards are read once from the engine's built-in quizzes; what changes is
//! the card shown, the learner's pick, the two runs shown side by side once
//! they check, the shared cursor and playback, the progress and the notice.
//! The runs are computed by the reducer when the learner checks (or opens a
//! card they already answered), never before: nothing about a choice's
//! outcome exists until they have picked. The reducer is pure: no browser
//! calls, so it behaves the same in tests.

use crate::quiz::progress::{Progress, Status};
use crate::ui::message::{Message, Tone};
use crate::ui::run::{LabRun, RunRef};
use crate::ui::shared::Shared;
use locklab_engine::quiz::{Choice, Quiz};
use locklab_engine::report::{StrategyReport, analyze};
use locklab_engine::scenario::{Efficiency, Liveness, Safety};
use locklab_engine::{Scenario, builtin, simulate};
use std::rc::Rc;
use yew::Reducible;

/// Playback speeds the quiz offers, as ratios of simulated to real time: the
/// cards' runs last 5 to 20 simulated minutes.
pub const SPEEDS: [f64; 5] = [4.0, 8.0, 16.0, 32.0, 64.0];
/// A five-minute run plays in about ten seconds.
pub const DEFAULT_SPEED_RATIO: f64 = 32.0;

/// One quiz card: a built-in quiz's name, its scenario and its quiz block.
#[derive(Debug)]
pub struct Card {
    /// The built-in's name (`two-am`): the key of its progress.
    pub name: &'static str,
    /// The scenario without its quiz block, as the lab would run it (and as a
    /// share link carries it: a link must not carry the answer).
    pub scenario: Rc<Scenario>,
    pub quiz: Quiz,
}

impl Card {
    pub fn title(&self) -> &str {
        if self.scenario.name.is_empty() { self.name } else { &self.scenario.name }
    }

    pub fn choice(&self, id: &str) -> Option<&Choice> {
        self.quiz.choices.iter().find(|choice| choice.id == id)
    }

    /// A single pick is right when it is one of the right choices (a card may
    /// have several; the learner names one).
    pub fn is_right(&self, id: &str) -> bool {
        self.quiz.answer.iter().any(|answer| answer == id)
    }
}

/// Reads the built-in quizzes, in order. A card that does not read is left
/// out and named in the returned problems (the engine's tests make that
/// unlikely; the quiz says so rather than hide it).
pub fn load_cards() -> (Vec<Card>, Vec<String>) {
    let mut cards = Vec::new();
    let mut problems = Vec::new();
    for builtin in builtin::QUIZZES {
        match Scenario::from_json(builtin.text) {
            Ok(mut scenario) => match scenario.quiz.take() {
                Some(quiz) => cards.push(Card { name: builtin.name, scenario: Rc::new(scenario), quiz }),
                None => problems.push(format!("{}: it has no quiz block", builtin.name)),
            },
            Err(error) => problems.push(format!("{}: {error}", builtin.name)),
        }
    }
    (cards, problems)
}

/// Why the second column shows the run it shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairing {
    /// The pick was wrong: beside it, a right answer.
    RightAnswer,
    /// The pick was right and so is another choice: two ways that pass.
    AnotherRightAnswer,
    /// The pick was the only right choice: beside it, the wrong choice whose
    /// run comes closest to the pick's, so what still differs is the point.
    ClosestWrong,
}

/// One column of the side-by-side.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub choice: Choice,
    pub right: bool,
    pub run: RunRef,
}

/// A checked card: the verdict on the pick and the two runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Answered {
    pub right: bool,
    pub pick: Column,
    pub other: Column,
    pub pairing: Pairing,
    /// "Open in the lab" addresses of the two columns (`index.html#v=1.…`),
    /// made asynchronously by the browser after the check.
    pub lab_hrefs: Option<(String, String)>,
    /// The lab address of the fix the card names, when it names one.
    pub fix_href: Option<String>,
}

impl Answered {
    pub fn duration_ms(&self) -> u64 {
        self.pick.run.duration_ms().max(self.other.run.duration_ms())
    }
}

/// A report, coarsely: the three verdicts and which kinds of trouble happened
/// at all (not how often), so two runs can be compared feature by feature.
fn outcome(report: &StrategyReport) -> [u8; 11] {
    let metrics = &report.metrics;
    // Three values each: a run at risk differs from a safe one and from an unsafe one.
    let safety = match report.safety {
        Safety::Safe => 0,
        Safety::AtRisk => 1,
        Safety::Unsafe => 2,
    };
    let liveness = match report.liveness {
        Liveness::Ok => 0,
        Liveness::Late => 1,
        Liveness::Missed => 2,
        Liveness::Behind => 3,
    };
    [
        safety,
        liveness,
        u8::from(report.efficiency == Efficiency::Wasteful),
        u8::from(metrics.overlap_ms > 0),
        u8::from(metrics.stale_writes_accepted > 0),
        u8::from(metrics.stale_writes_rejected > 0),
        u8::from(metrics.corrupted_reports > 0),
        u8::from(metrics.duplicate_runs > 0),
        u8::from(metrics.duplicate_side_effects > 0),
        u8::from(metrics.background_query_timeouts > 0),
        u8::from(metrics.pool_exhausted_ms > 0),
    ]
}

/// How many of those features differ between two reports.
pub fn distance(first: &StrategyReport, second: &StrategyReport) -> usize {
    outcome(first).iter().zip(outcome(second)).filter(|(one, other)| **one != *other).count()
}

/// The choice shown beside the pick, and why. A wrong pick is shown beside
/// the card's first right answer; a right pick beside another right answer,
/// or, when it is the only one, beside the wrong choice the card names as
/// closest (`closest_wrong`), else the one whose run is closest to the pick's
/// (fewest differing features; the card's order breaks ties): a minimal
/// pair, so what still differs is what the question is about.
fn partner(card: &Card, pick: &str, pick_report: &StrategyReport) -> Option<(Choice, Pairing)> {
    if !card.is_right(pick) {
        let id = card.quiz.answer.first()?;
        return card.choice(id).map(|choice| (choice.clone(), Pairing::RightAnswer));
    }
    if let Some(choice) = card.quiz.answer.iter().filter(|id| *id != pick).find_map(|id| card.choice(id)) {
        return Some((choice.clone(), Pairing::AnotherRightAnswer));
    }
    // The card names its closest wrong choice where its explanation does.
    if let Some(choice) = card.quiz.closest_wrong.as_deref().and_then(|id| card.choice(id)) {
        return Some((choice.clone(), Pairing::ClosestWrong));
    }
    // Only the wrong choices' reports are needed to rank them; the timeline
    // is built for the one shown.
    card.quiz
        .choices
        .iter()
        .filter(|choice| !card.is_right(&choice.id))
        .min_by_key(|choice| {
            let log = simulate(&card.scenario, choice.strategy);
            distance(pick_report, &analyze(&card.scenario, choice.strategy, &log))
        })
        .map(|choice| (choice.clone(), Pairing::ClosestWrong))
}

/// Runs the pick and its partner; `None` if the pick is not one of the card's choices.
pub fn answer(card: &Card, pick: &str) -> Option<Answered> {
    let column = |choice: Choice| Column {
        right: card.is_right(&choice.id),
        run: Shared(Rc::new(LabRun::compute(card.scenario.clone(), choice.strategy))),
        choice,
    };
    let pick_column = column(card.choice(pick)?.clone());
    let (other_choice, pairing) = partner(card, pick, &pick_column.run.report)?;
    Some(Answered {
        right: pick_column.right,
        pick: pick_column,
        other: column(other_choice),
        pairing,
        lab_hrefs: None,
        fix_href: None,
    })
}

/// Everything that can happen to the quiz.
#[derive(Clone, Debug, PartialEq)]
pub enum QuizAction {
    /// Show the card at this index.
    Open(usize),
    Pick(String),
    Check,
    /// Put the current card back to unanswered, to pick again.
    TryAgain,
    Seek(u64),
    /// Playback moved the cursor on; stops at the end.
    Advance(u64),
    TogglePlay,
    SetSpeed(f64),
    /// The narrow-screen media query changed: the timelines use their narrow drawing.
    SetNarrow(bool),
    ResetProgress,
    Dismiss,
    Notify(Message),
    /// The lab addresses of the card's columns are ready.
    LabHrefs {
        card: usize,
        pick: String,
        hrefs: (String, String),
        fix: Option<String>,
    },
}

/// The quiz's state.
#[derive(Clone, Debug)]
pub struct QuizState {
    pub cards: Rc<Vec<Card>>,
    pub current: usize,
    /// The choice selected on the current card (before or after checking).
    pub pick: Option<String>,
    pub answered: Option<Answered>,
    pub cursor_ms: u64,
    pub playing: bool,
    pub speed_ratio: f64,
    pub progress: Rc<Progress>,
    pub notice: Option<Message>,
    /// A narrow screen: each timeline gets the column's whole width, so it
    /// is drawn in the lab's narrow layout instead of the compact one.
    pub narrow: bool,
}

/// Equal when nothing shown could differ; the cards never change, so they
/// are compared by identity.
impl PartialEq for QuizState {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.cards, &other.cards)
            && self.current == other.current
            && self.pick == other.pick
            && self.answered == other.answered
            && self.cursor_ms == other.cursor_ms
            && self.playing == other.playing
            && self.speed_ratio == other.speed_ratio
            && self.progress == other.progress
            && self.notice == other.notice
            && self.narrow == other.narrow
    }
}

impl QuizState {
    /// The quiz on card `current` (or the first not tried, if `None`).
    pub fn new(cards: Rc<Vec<Card>>, progress: Progress, current: Option<usize>, notice: Option<Message>) -> QuizState {
        let first_untried = cards.iter().position(|card| progress.status(card.name) == Status::NotTried);
        let current = current.or(first_untried).unwrap_or(0).min(cards.len().saturating_sub(1));
        let state = QuizState {
            cards,
            current: 0,
            pick: None,
            answered: None,
            cursor_ms: 0,
            playing: false,
            speed_ratio: DEFAULT_SPEED_RATIO,
            progress: Rc::new(progress),
            notice,
            narrow: false,
        };
        state.open(current)
    }

    pub fn card(&self) -> Option<&Card> {
        self.cards.get(self.current)
    }

    pub fn duration_ms(&self) -> u64 {
        self.answered.as_ref().map_or(0, Answered::duration_ms)
    }

    /// (right, tried) over the quiz's cards.
    pub fn score(&self) -> (usize, usize) {
        self.progress.score(self.cards.iter().map(|card| card.name))
    }

    /// Shows a card; one the learner already answered opens answered, with
    /// the pick they checked.
    fn open(mut self, index: usize) -> QuizState {
        let Some(card) = self.cards.get(index) else {
            return self;
        };
        let stored = self.progress.cards.get(card.name).map(|outcome| outcome.pick.clone());
        self.answered = stored.as_deref().and_then(|pick| answer(card, pick));
        self.pick = if self.answered.is_some() { stored } else { None };
        self.current = index;
        self.cursor_ms = 0;
        self.playing = false;
        self
    }

    fn check(mut self) -> QuizState {
        let (Some(card), Some(pick)) = (self.cards.get(self.current), self.pick.clone()) else {
            return self;
        };
        let Some(answered) = answer(card, &pick) else {
            return self;
        };
        self.progress = Rc::new(self.progress.with(card.name, &pick, answered.right));
        self.answered = Some(answered);
        self.cursor_ms = 0;
        self.playing = false;
        self
    }
}

impl Reducible for QuizState {
    type Action = QuizAction;

    fn reduce(self: Rc<Self>, action: QuizAction) -> Rc<Self> {
        let state = (*self).clone();
        let next = match action {
            QuizAction::Open(index) => {
                if index >= state.cards.len() {
                    return self;
                }
                state.open(index)
            }
            QuizAction::Pick(id) => {
                // The pick is fixed once checked; "Try again" frees it.
                if state.answered.is_some() || state.card().and_then(|card| card.choice(&id)).is_none() {
                    return self;
                }
                QuizState { pick: Some(id), ..state }
            }
            QuizAction::Check => {
                if state.answered.is_some() {
                    return self;
                }
                state.check()
            }
            QuizAction::TryAgain => QuizState { pick: None, answered: None, cursor_ms: 0, playing: false, ..state },
            QuizAction::Seek(at_ms) => QuizState { cursor_ms: at_ms.min(state.duration_ms()), ..state },
            QuizAction::Advance(at_ms) => {
                if !state.playing {
                    return self; // a frame that arrived after a pause
                }
                let cursor_ms = at_ms.min(state.duration_ms());
                QuizState { cursor_ms, playing: cursor_ms < state.duration_ms(), ..state }
            }
            QuizAction::TogglePlay => {
                if state.answered.is_none() {
                    return self;
                }
                let mut state = state;
                if !state.playing && state.cursor_ms >= state.duration_ms() {
                    state.cursor_ms = 0; // play again from the start
                }
                state.playing = !state.playing;
                state
            }
            QuizAction::SetSpeed(speed_ratio) => {
                if !speed_ratio.is_finite() || speed_ratio <= 0.0 {
                    return self;
                }
                QuizState { speed_ratio: speed_ratio.clamp(SPEEDS[0], SPEEDS[SPEEDS.len() - 1]), ..state }
            }
            QuizAction::SetNarrow(narrow) => QuizState { narrow, ..state },
            QuizAction::ResetProgress => QuizState {
                progress: Rc::new(Progress::default()),
                pick: None,
                answered: None,
                cursor_ms: 0,
                playing: false,
                notice: Some(Message {
                    tone: Tone::Info,
                    text: "Your quiz progress was reset: every card is untried again.".to_owned(),
                }),
                ..state
            },
            QuizAction::Dismiss => QuizState { notice: None, ..state },
            QuizAction::Notify(message) => QuizState { notice: Some(message), ..state },
            QuizAction::LabHrefs { card, pick, hrefs, fix } => {
                let mut state = state;
                // Only if the answer it was made for is still the one shown.
                match &mut state.answered {
                    Some(answered) if card == state.current && answered.pick.choice.id == pick => {
                        answered.lab_hrefs = Some(hrefs);
                        answered.fix_href = fix;
                    }
                    _ => return self,
                }
                state
            }
        };
        if next == *self { self } else { Rc::new(next) }
    }
}
