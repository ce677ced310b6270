//! Stories: the story page's narrated runs (`engine/stories/*.json`,
//! `locklab-story/1`, documented in `docs/formats.md`). A story is chapters
//! of steps; a chapter names a built-in scenario and a strategy, and each
//! step is a sentence or two, the moment of that run it is about, what to
//! look at there, and what it claims about the run.
//!
//! A step names its moment by what happens in the run (`finding:overlap`, the
//! first stretch of two believed holders; `write:refused#2`, the second write
//! a fence refused), never by a time, so a story follows the engine when the
//! engine changes, and the story test fails when a moment no longer occurs
//! or a claim (`unsafe`, `finding:stale_write_rejected`) no longer holds.

use crate::claim::{ActorMoment, Claim};
pub use crate::claim::{Found, Moment};
use crate::report::StrategyReport;
use crate::scenario::{Scenario, StrategyId};
use crate::view::{Resource, Timeline};
use serde::Deserialize;
use std::fmt;

/// The format a story document declares.
pub const STORY_FORMAT: &str = "locklab-story/1";

/// The pages a step may link to (an ending's links); nothing else, so a story
/// can never send a reader off the site.
pub const LINKABLE_PAGES: [&str; 3] = ["index.html", "quiz.html", "explore.html"];

/// A story document.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Story {
    pub format: String,
    /// The name used in the page's address (`story.html?story=the-night`).
    pub id: String,
    pub title: String,
    /// One sentence for the page's description.
    pub summary: String,
    pub chapters: Vec<Chapter>,
}

/// Steps over one run: a built-in scenario under one strategy.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chapter {
    pub title: String,
    /// A built-in scenario's name (`locklab scenarios` lists them) or a quiz
    /// card's (`engine/quizzes/`, without its number).
    pub scenario: String,
    pub strategy: StrategyId,
    pub steps: Vec<Step>,
}

/// One step of a story.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Unique in the story; names the step in addresses (`&step=two-holders`).
    pub id: String,
    /// One or two sentences.
    pub text: String,
    /// When in the run: see [`Moment`].
    pub moment: String,
    /// What to look at: see [`LookAt`].
    #[serde(default)]
    pub look_at: Vec<String>,
    /// What the text claims about the run: see [`crate::claim`].
    #[serde(default)]
    pub claims: Vec<String>,
    /// Links shown under the text (an ending's way on).
    #[serde(default)]
    pub links: Vec<StoryLink>,
}

/// A link from a step to another page of the site.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoryLink {
    pub text: String,
    /// One of [`LINKABLE_PAGES`].
    pub page: String,
}

/// What is wrong with a story, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoryError {
    /// A path into the document: `chapters[1].steps[2].moment`.
    pub path: String,
    pub message: String,
}

impl fmt::Display for StoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() { f.write_str(&self.message) } else { write!(f, "{}: {}", self.path, self.message) }
    }
}

impl std::error::Error for StoryError {}

fn error(path: impl Into<String>, message: impl Into<String>) -> StoryError {
    StoryError { path: path.into(), message: message.into() }
}

/// What a step points the reader at, highlighted on the timeline:
/// `lane:a` (an instance's lane), `resource:redis-1|row_lock|lease` (who held
/// that lock), `storage`, `rows`, `slack`, `faults`, `overlap` (the stretches
/// of two believed holders), `mark` (the moment's own write, post or fault
/// mark), `token:N` (every write with that token) or `wire` (the moment's
/// event as the lab's event log prints it, the line that went over the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LookAt {
    Lane(crate::ids::InstanceId),
    Resource(Resource),
    Storage,
    Rows,
    Slack,
    Faults,
    Overlap,
    Mark,
    Token(crate::ids::Token),
    Wire,
}

impl LookAt {
    pub fn parse(text: &str) -> Result<LookAt, String> {
        match text.split_once(':') {
            None => match text {
                "storage" => Ok(LookAt::Storage),
                "rows" => Ok(LookAt::Rows),
                "slack" => Ok(LookAt::Slack),
                "faults" => Ok(LookAt::Faults),
                "overlap" => Ok(LookAt::Overlap),
                "mark" => Ok(LookAt::Mark),
                "wire" => Ok(LookAt::Wire),
                other => Err(format!(
                    "`{other}` is not something to look at: lane:X, resource:X, storage, rows, slack, faults, overlap, mark, token:N or wire"
                )),
            },
            Some(("lane", name)) => match name.as_bytes() {
                [letter @ b'a'..=b'h'] => Ok(LookAt::Lane(crate::ids::InstanceId(letter - b'a'))),
                _ => Err(format!("`lane:{name}`: an instance is a letter, a to h")),
            },
            Some(("resource", name)) => match name {
                "row_lock" => Ok(LookAt::Resource(Resource::RowLock)),
                "lease" => Ok(LookAt::Resource(Resource::Lease)),
                "redis-replica" => Ok(LookAt::Resource(Resource::Redis(crate::ids::Party::RedisReplica))),
                _ => match name.strip_prefix("redis-").and_then(|number| number.parse::<u8>().ok()) {
                    Some(number @ 1..=9) => Ok(LookAt::Resource(Resource::Redis(crate::ids::Party::Redis(
                        crate::ids::RedisNodeId(number - 1),
                    )))),
                    _ => Err(format!("`resource:{name}`: a resource is redis-N, redis-replica, row_lock or lease")),
                },
            },
            Some(("token", number)) => number
                .parse::<u64>()
                .map(|token| LookAt::Token(crate::ids::Token(token)))
                .map_err(|_| format!("`token:{number}` is not a token number")),
            Some((other, _)) => Err(format!("`{other}:` is not something to look at")),
        }
    }
}

impl Story {
    /// Reads and checks a story document: its format, its ids, its
    /// chapters' scenarios, and every step's moment, look-ats, claims and
    /// links. Whether the moments occur is the story test's business (it
    /// needs the runs).
    pub fn parse(json: &str) -> Result<Story, StoryError> {
        let story: Story = serde_json::from_str(json).map_err(|problem| error("", problem.to_string()))?;
        if story.format != STORY_FORMAT {
            return Err(error("format", format!("`{}` is not `{STORY_FORMAT}`", story.format)));
        }
        check_id("id", &story.id)?;
        if story.chapters.is_empty() {
            return Err(error("chapters", "a story has at least one chapter"));
        }
        let mut ids: Vec<&str> = Vec::new();
        for (chapter_index, chapter) in story.chapters.iter().enumerate() {
            let chapter_path = format!("chapters[{chapter_index}]");
            if scenario_text(&chapter.scenario).is_none() {
                return Err(error(
                    format!("{chapter_path}.scenario"),
                    format!("`{}` is neither a built-in scenario nor a quiz card", chapter.scenario),
                ));
            }
            if chapter.steps.is_empty() {
                return Err(error(format!("{chapter_path}.steps"), "a chapter has at least one step"));
            }
            for (step_index, step) in chapter.steps.iter().enumerate() {
                let path = format!("{chapter_path}.steps[{step_index}]");
                check_id(&format!("{path}.id"), &step.id)?;
                if ids.contains(&step.id.as_str()) {
                    return Err(error(format!("{path}.id"), format!("`{}` is the id of an earlier step", step.id)));
                }
                ids.push(&step.id);
                if step.text.trim().is_empty() {
                    return Err(error(format!("{path}.text"), "a step says something"));
                }
                ActorMoment::parse(&step.moment).map_err(|message| error(format!("{path}.moment"), message))?;
                for (index, look_at) in step.look_at.iter().enumerate() {
                    LookAt::parse(look_at).map_err(|message| error(format!("{path}.look_at[{index}]"), message))?;
                }
                for (index, claim) in step.claims.iter().enumerate() {
                    Claim::parse(claim).map_err(|message| error(format!("{path}.claims[{index}]"), message))?;
                }
                for (index, link) in step.links.iter().enumerate() {
                    if !LINKABLE_PAGES.contains(&link.page.as_str()) {
                        return Err(error(
                            format!("{path}.links[{index}].page"),
                            format!("`{}` is not one of the site's pages ({})", link.page, LINKABLE_PAGES.join(", ")),
                        ));
                    }
                }
            }
        }
        Ok(story)
    }

    /// The steps in reading order, each with its chapter.
    pub fn steps(&self) -> impl Iterator<Item = (&Chapter, &Step)> {
        self.chapters.iter().flat_map(|chapter| chapter.steps.iter().map(move |step| (chapter, step)))
    }
}

impl Step {
    /// The parsed moment, with its actor if it names one (checked by
    /// [`Story::parse`]; the run's end if it was not).
    pub fn moment(&self) -> ActorMoment {
        ActorMoment::parse(&self.moment).unwrap_or_else(|_| ActorMoment::parse("end").expect("`end` is a moment"))
    }

    /// The parsed look-ats (checked by [`Story::parse`]).
    pub fn look_at(&self) -> Vec<LookAt> {
        self.look_at.iter().filter_map(|text| LookAt::parse(text).ok()).collect()
    }

    /// Where the step falls in its chapter's run: its moment, if it occurs.
    /// The page needs no more; [`Step::check`] is what the story test asks.
    pub fn locate(&self, timeline: &Timeline, report: &StrategyReport) -> Result<Found, String> {
        self.moment()
            .find(timeline, report)
            .ok_or_else(|| format!("its moment `{}` does not occur in the run", self.moment))
    }
}

impl Step {
    /// Where the step falls in its chapter's run, after checking everything
    /// the step says against that run: its moment occurs; every claim holds;
    /// every claim its words make is listed; what it looks at is drawn (the
    /// moment's own mark for `mark`, a write or belief with the token for
    /// `token:N`, an instance that exists, a resource the run uses); and it
    /// is one or two sentences. The error says which of these failed.
    pub fn check(&self, scenario: &Scenario, timeline: &Timeline, report: &StrategyReport) -> Result<Found, String> {
        let found = self.locate(timeline, report)?;
        crate::claim::check(&self.text, &self.claims, scenario, timeline, report)?;
        for look_at in self.look_at() {
            let drawn = match look_at {
                LookAt::Lane(instance) => instance.0 < timeline.instances,
                LookAt::Resource(Resource::Redis(party)) => timeline.redis_nodes.contains(&party),
                LookAt::Resource(resource) => timeline.holders.iter().any(|span| span.resource == resource),
                LookAt::Overlap => !timeline.overlaps.is_empty(),
                LookAt::Faults => !timeline.faults.is_empty(),
                LookAt::Mark => found.event.is_some_and(|event| {
                    timeline.writes.iter().any(|write| write.event == event)
                        || timeline.posts.iter().any(|post| post.event == event)
                        || timeline.faults.iter().any(|mark| mark.event == event)
                }),
                LookAt::Token(token) => {
                    timeline.writes.iter().any(|write| write.token == Some(token))
                        || timeline.beliefs.iter().any(|span| span.token == Some(token))
                }
                LookAt::Wire => found.event.is_some(),
                LookAt::Storage | LookAt::Rows | LookAt::Slack => true,
            };
            if !drawn {
                return Err(format!("it looks at {look_at:?}, which the run does not draw"));
            }
        }
        let sentences = self.text.split_terminator(['.', '!', '?']).filter(|part| !part.trim().is_empty()).count();
        if sentences > 2 {
            return Err(format!("it is {sentences} sentences; a step is one or two"));
        }
        Ok(found)
    }
}

/// An id: lower-case letters, digits and `-`, as addresses carry them.
fn check_id(path: &str, id: &str) -> Result<(), StoryError> {
    let fine =
        !id.is_empty() && id.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-');
    if fine { Ok(()) } else { Err(error(path, format!("`{id}` is not an id (a-z, 0-9 and -)"))) }
}

/// The document of a chapter's scenario: a built-in's, or a quiz card's.
pub fn scenario_text(name: &str) -> Option<&'static str> {
    crate::builtin::find(name).or_else(|| crate::builtin::find_quiz(name)).map(|builtin| builtin.text)
}

/// The built-in story named `id`.
pub fn find(id: &str) -> Option<Story> {
    crate::builtin::STORIES.iter().filter_map(|builtin| Story::parse(builtin.text).ok()).find(|story| story.id == id)
}

/// The strategies a story's chapters run, each once, in order.
pub fn strategies(story: &Story) -> Vec<(String, StrategyId)> {
    let mut runs: Vec<(String, StrategyId)> = Vec::new();
    for chapter in &story.chapters {
        let run = (chapter.scenario.clone(), chapter.strategy);
        if !runs.contains(&run) {
            runs.push(run);
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_and_look_ats_read_their_grammar() {
        assert_eq!(Moment::parse("finding:overlap"), Ok(Moment::Finding("overlap".into(), 1)));
        assert_eq!(Moment::parse("end"), Ok(Moment::End));
        assert!(Moment::parse("fault").unwrap_err().contains("needs a fault kind"));
        assert!(Moment::parse("post#0").is_err());
        assert_eq!(ActorMoment::parse("grant#2@c").map(|moment| moment.actor), Ok(Some(crate::ids::InstanceId(2))));
        assert_eq!(LookAt::parse("lane:b"), Ok(LookAt::Lane(crate::ids::InstanceId(1))));
        assert_eq!(LookAt::parse("token:42"), Ok(LookAt::Token(crate::ids::Token(42))));
        assert!(LookAt::parse("lane:z").is_err());
    }

    #[test]
    fn a_bad_story_is_named_by_path() {
        let story = r#"{"format": "locklab-story/1", "id": "x", "title": "t", "summary": "s", "chapters": [
            {"title": "c", "scenario": "two-am-saturday", "strategy": "naive",
             "steps": [{"id": "a", "text": "t", "moment": "sometime"}]}]}"#;
        let problem = Story::parse(story).unwrap_err();
        assert_eq!(problem.path, "chapters[0].steps[0].moment");
        let elsewhere = story.replace("two-am-saturday", "nowhere").replace("sometime", "end");
        assert_eq!(Story::parse(&elsewhere).unwrap_err().path, "chapters[0].scenario");
        let offsite = story.replace(
            r#""moment": "sometime""#,
            r#""moment": "end", "links": [{"text": "x", "page": "https://example.com"}]"#,
        );
        assert_eq!(Story::parse(&offsite).unwrap_err().path, "chapters[0].steps[0].links[0].page");
    }
}
