//! The story page's one state and its actions; pure, no browser calls.
//!
//! The story's runs are computed once, at start: a chapter names a built-in
//! under a strategy, each is a small run (a few thousand events), and every
//! step's moment is found in its run then, so moving between steps is
//! instant and a step whose moment is missing is known before it is shown.

use crate::ui::run::{LabRun, RunRef};
use crate::ui::shared::Shared;
use locklab_engine::Scenario;
use locklab_engine::story::{Found, LookAt, Story};
use std::rc::Rc;
use yew::prelude::*;

/// One step as the page shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Shown {
    pub id: String,
    pub chapter: String,
    /// The chapter's number (from 1) and how many there are.
    pub chapter_number: usize,
    pub text: String,
    pub run: RunRef,
    /// The built-in the run is of, for the lab link's title.
    pub scenario_name: String,
    pub found: Found,
    pub look_at: Vec<LookAt>,
    pub links: Vec<(String, String)>,
}

/// The whole page's state.
#[derive(Clone, Debug, PartialEq)]
pub struct StoryState {
    pub title: String,
    pub chapters: usize,
    pub steps: Rc<Vec<Shown>>,
    pub current: usize,
    /// Where the timeline's cursor is: the step's moment until the reader moves it.
    pub cursor_ms: u64,
    pub playing: bool,
    /// The "Open this moment in the lab" address for a step, once made.
    pub lab_href: Option<(usize, AttrValue)>,
    pub embed: bool,
    pub narrow: bool,
    /// What went wrong making the story, said instead of a step.
    pub problem: Option<String>,
    /// "Copy embed code" was pressed on this step: `None` when the code is
    /// on the clipboard, else the code the browser would not let the page copy.
    pub copied: Option<(usize, Option<String>)>,
}

/// What can happen.
#[derive(Clone, Debug, PartialEq)]
pub enum StoryAction {
    Next,
    Back,
    Go(usize),
    /// Play or pause.
    Toggle,
    Pause,
    Seek(u64),
    LabHref {
        step: usize,
        href: AttrValue,
    },
    Narrow(bool),
    /// The embed code of a step was copied, or (`Some`) could not be.
    Copied {
        step: usize,
        refused: Option<String>,
    },
}

impl StoryState {
    /// The story's steps with their runs, starting at the step named `start`
    /// (the first when none is named or it is not there).
    pub fn new(story: &Story, start: Option<&str>, playing: bool, embed: bool, narrow: bool) -> StoryState {
        let steps = match shown_steps(story) {
            Ok(steps) => steps,
            Err(problem) => return StoryState::failed(problem, embed, narrow),
        };
        let mut state = StoryState {
            title: story.title.clone(),
            chapters: story.chapters.len(),
            steps: Rc::new(steps),
            current: 0,
            cursor_ms: 0,
            playing,
            lab_href: None,
            embed,
            narrow,
            problem: None,
            copied: None,
        };
        let named = start.map(|id| (id, state.steps.iter().position(|step| step.id == id)));
        state.current = match named {
            Some((_, Some(index))) => index,
            Some((id, None)) => {
                state.problem = Some(format!("This story has no step named `{id}`; it starts from the beginning."));
                0
            }
            None => 0,
        };
        state.cursor_ms = state.steps[state.current].found.at_ms;
        state
    }

    /// A page with no story to tell, saying why.
    pub fn failed(problem: String, embed: bool, narrow: bool) -> StoryState {
        StoryState {
            title: "locklab".to_owned(),
            chapters: 0,
            steps: Rc::new(Vec::new()),
            current: 0,
            cursor_ms: 0,
            playing: false,
            lab_href: None,
            embed,
            narrow,
            problem: Some(problem),
            copied: None,
        }
    }

    pub fn step(&self) -> Option<&Shown> {
        self.steps.get(self.current)
    }

    fn go(&self, index: usize) -> StoryState {
        let Some(step) = self.steps.get(index) else {
            return self.clone();
        };
        let last = index + 1 == self.steps.len();
        StoryState { current: index, cursor_ms: step.found.at_ms, playing: self.playing && !last, ..self.clone() }
    }
}

/// Every step with its run and moment; the first step that cannot be shown
/// is the error (the story test keeps the built-in story from ever getting here).
fn shown_steps(story: &Story) -> Result<Vec<Shown>, String> {
    let mut runs: Vec<((String, locklab_engine::StrategyId), RunRef)> = Vec::new();
    let mut steps = Vec::new();
    for (number, chapter) in story.chapters.iter().enumerate() {
        let key = (chapter.scenario.clone(), chapter.strategy);
        let run = match runs.iter().find(|(seen, _)| *seen == key) {
            Some((_, run)) => run.clone(),
            None => {
                let text = locklab_engine::story::scenario_text(&chapter.scenario)
                    .ok_or_else(|| format!("there is no built-in `{}`", chapter.scenario))?;
                let scenario = Scenario::from_json(text).map_err(|error| error.to_string())?;
                let run = Shared(Rc::new(LabRun::compute(Rc::new(scenario), chapter.strategy)));
                runs.push((key, run.clone()));
                run
            }
        };
        for step in &chapter.steps {
            let found = step
                .locate(&run.timeline, &run.report)
                .map_err(|problem| format!("step `{}` cannot be shown: {problem}", step.id))?;
            steps.push(Shown {
                id: step.id.clone(),
                chapter: chapter.title.clone(),
                chapter_number: number + 1,
                text: step.text.clone(),
                run: run.clone(),
                scenario_name: chapter.scenario.clone(),
                found,
                look_at: step.look_at(),
                links: step.links.iter().map(|link| (link.text.clone(), link.page.clone())).collect(),
            });
        }
    }
    if steps.is_empty() {
        return Err("the story has no steps".to_owned());
    }
    Ok(steps)
}

impl Reducible for StoryState {
    type Action = StoryAction;

    fn reduce(self: Rc<Self>, action: StoryAction) -> Rc<Self> {
        let next = match action {
            StoryAction::Next => self.go(self.current + 1),
            StoryAction::Back => self.go(self.current.saturating_sub(1)),
            StoryAction::Go(index) => self.go(index),
            StoryAction::Toggle => {
                // Play from the last step starts again from the first.
                let last = self.current + 1 >= self.steps.len();
                let restarted = if !self.playing && last { self.go(0) } else { (*self).clone() };
                StoryState { playing: !self.playing && !self.steps.is_empty(), ..restarted }
            }
            StoryAction::Pause => StoryState { playing: false, ..(*self).clone() },
            StoryAction::Seek(at_ms) => StoryState { cursor_ms: at_ms, playing: false, ..(*self).clone() },
            StoryAction::LabHref { step, href } => StoryState { lab_href: Some((step, href)), ..(*self).clone() },
            StoryAction::Narrow(narrow) => StoryState { narrow, ..(*self).clone() },
            StoryAction::Copied { step, refused } => StoryState { copied: Some((step, refused)), ..(*self).clone() },
        };
        Rc::new(next)
    }
}

/// How long a step stays when the story plays: time to read its text at an
/// unhurried pace (about 14 characters a second) and look at the figure.
pub fn step_ms(text: &str) -> u32 {
    let characters = u32::try_from(text.chars().count()).unwrap_or(u32::MAX);
    characters.saturating_mul(70).saturating_add(4_000).clamp(7_000, 20_000)
}
