//! The recorded-run page's one state and its actions; pure, no browser
//! calls: the document read (its run and the simulated twin), the cursor and
//! the event list's filters.

use crate::ui::event_log::{FilterChange, LogFilters};
use crate::ui::run::{LabRun, RunRef};
use crate::ui::shared::Shared;
use locklab_engine::{LiveRecording, RecordedRun};
use std::rc::Rc;
use yew::prelude::*;

/// A document read and its runs computed.
#[derive(Clone, Debug, PartialEq)]
pub struct Shown {
    pub source: String,
    pub live: Option<LiveRecording>,
    pub run: RunRef,
    pub twin: RunRef,
}

/// Reads a log document, checked against the scenario it carries
/// (`RecordedRun::from_json`), and computes what the page shows; a message
/// names the place that is wrong, and nothing is computed from such a log.
pub fn read(text: &str, source: &str) -> Result<Shown, String> {
    let recorded = RecordedRun::from_json(text).map_err(|error| format!("{source}: {error}."))?;
    let scenario = Rc::new(recorded.scenario);
    let strategy = recorded.strategy;
    let run = LabRun::from_log(Rc::clone(&scenario), strategy, recorded.events);
    let twin = LabRun::compute(scenario, strategy);
    Ok(Shown { source: source.to_owned(), live: recorded.live, run: Shared(Rc::new(run)), twin: Shared(Rc::new(twin)) })
}

#[derive(Clone, Debug, PartialEq)]
pub enum Page {
    Loading,
    Failed(String),
    Shown(Shown),
}

#[derive(Clone, Debug, PartialEq)]
pub struct RecordedState {
    pub page: Page,
    /// Why the last document could not be read, while the page keeps what it showed.
    pub problem: Option<String>,
    pub cursor_ms: u64,
    /// The event list's filters, as the lab's: the quiet kinds hidden at first.
    pub filters: LogFilters,
    pub embed: bool,
    pub narrow: bool,
}

#[derive(Debug)]
pub enum RecordedAction {
    Loaded(Result<Shown, String>),
    Seek(u64),
    /// The arrow keys: to the recorded run's next or previous event.
    Step {
        forward: bool,
    },
    /// Shift and the arrow keys: a hundredth of the run either way.
    Scrub(i64),
    /// A change to the event list's filters.
    Filter(FilterChange),
}

impl Reducible for RecordedState {
    type Action = RecordedAction;
    fn reduce(self: Rc<Self>, action: RecordedAction) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            RecordedAction::Loaded(Ok(shown)) => {
                next.cursor_ms = shown.run.duration_ms();
                next.page = Page::Shown(shown);
                next.problem = None;
            }
            // What the page showed stays; the message says what could not be read.
            RecordedAction::Loaded(Err(problem)) => match &self.page {
                Page::Shown(_) => next.problem = Some(problem),
                Page::Loading | Page::Failed(_) => next.page = Page::Failed(problem),
            },
            RecordedAction::Seek(at_ms) => {
                next.cursor_ms = match &self.page {
                    Page::Shown(shown) => at_ms.min(shown.run.duration_ms()),
                    Page::Loading | Page::Failed(_) => at_ms,
                };
            }
            RecordedAction::Step { forward } => {
                if let Page::Shown(shown) = &self.page {
                    let timeline = &shown.run.timeline;
                    next.cursor_ms = if forward {
                        timeline.next_event_ms(self.cursor_ms).unwrap_or(shown.run.duration_ms())
                    } else {
                        timeline.previous_event_ms(self.cursor_ms).unwrap_or(0)
                    };
                }
            }
            RecordedAction::Scrub(hundredths) => {
                if let Page::Shown(shown) = &self.page {
                    let step = i64::try_from(shown.run.duration_ms() / 100).unwrap_or(i64::MAX / 200);
                    let to = self.cursor_ms.saturating_add_signed(step.saturating_mul(hundredths));
                    next.cursor_ms = to.min(shown.run.duration_ms());
                }
            }
            RecordedAction::Filter(change) => next.filters = self.filters.changed(change),
        }
        Rc::new(next)
    }
}
