//! The learner's quiz progress: per card, the choice they picked and whether
//! it was right. Stored as JSON under a versioned key so a later format can
//! tell an old value from its own; reading it is a pure function of the text,
//! so every way a stored value can be wrong is testable without a browser.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The local-storage key. The version is in the key and in the value: the key
/// keeps other versions' values apart, the value's own `version` catches a
/// value written by hand or by a newer quiz under this key.
pub const PROGRESS_KEY: &str = "locklab.quiz.v1";
/// The value format this build reads and writes.
pub const PROGRESS_VERSION: u64 = 1;

/// One card's outcome: the choice id the learner checked last, and whether
/// it was right.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardProgress {
    pub pick: String,
    pub right: bool,
}

/// Every card's outcome, by card name (the built-in quiz's name).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    pub cards: BTreeMap<String, CardProgress>,
}

/// The stored value, as written.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored {
    version: u64,
    #[serde(default)]
    cards: BTreeMap<String, CardProgress>,
}

/// Only the version, read first so an unknown version is reported as such
/// rather than as whatever its fields look like to this build.
#[derive(Deserialize)]
struct VersionOnly {
    version: u64,
}

/// Where one card stands, for the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    NotTried,
    Right,
    Wrong,
}

impl Status {
    /// The word tests and styles read (`data-status`).
    pub fn word(self) -> &'static str {
        match self {
            Status::NotTried => "not-tried",
            Status::Right => "right",
            Status::Wrong => "wrong",
        }
    }

    /// What the list says: a mark and a word, so the mark is never the only
    /// carrier of meaning (narrow screens show the mark, the word stays readable
    /// to assistive technology).
    pub fn mark_and_word(self) -> (&'static str, &'static str) {
        match self {
            Status::NotTried => ("", "not tried"),
            Status::Right => ("✓", "right"),
            Status::Wrong => ("✗", "wrong"),
        }
    }
}

impl Progress {
    pub fn status(&self, card: &str) -> Status {
        match self.cards.get(card) {
            None => Status::NotTried,
            Some(outcome) if outcome.right => Status::Right,
            Some(_) => Status::Wrong,
        }
    }

    /// (right, tried) over the cards named: a stored card that no longer
    /// exists does not count.
    pub fn score<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> (usize, usize) {
        let mut right = 0;
        let mut tried = 0;
        for name in names {
            if let Some(outcome) = self.cards.get(name) {
                tried += 1;
                right += usize::from(outcome.right);
            }
        }
        (right, tried)
    }

    /// The same progress with one card's outcome recorded.
    pub fn with(&self, card: &str, pick: &str, right: bool) -> Progress {
        let mut next = self.clone();
        next.cards.insert(card.to_owned(), CardProgress { pick: pick.to_owned(), right });
        next
    }

    /// The value to store.
    pub fn to_json(&self) -> String {
        let stored = Stored { version: PROGRESS_VERSION, cards: self.cards.clone() };
        serde_json::to_string(&stored).unwrap_or_default()
    }
}

/// Reads a stored value. The error says, for people, why it could not be
/// read; the caller resets the progress and shows it.
pub fn parse_progress(text: &str) -> Result<Progress, String> {
    if serde_json::from_str::<serde::de::IgnoredAny>(text).is_err() {
        return Err("it is not JSON".to_owned());
    }
    let version = serde_json::from_str::<VersionOnly>(text)
        .map_err(|_| "it is not a quiz progress record: it has no version number".to_owned())?
        .version;
    if version != PROGRESS_VERSION {
        return Err(format!(
            "it is version {version}, which this quiz does not know (it reads version {PROGRESS_VERSION})"
        ));
    }
    let stored = serde_json::from_str::<Stored>(text)
        .map_err(|error| format!("it does not have the shape of quiz progress: {error}"))?;
    Ok(Progress { cards: stored.cards })
}
