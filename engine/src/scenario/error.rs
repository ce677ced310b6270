//! A scenario refused: the field's path and the reason, printed safely.

use std::fmt;

/// A scenario refused, with the field and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// Where in the document, e.g. `faults[2].duration_ms`; empty for the whole document.
    pub path: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    /// The path and the message, with any control character a document put
    /// in them (a key, a value quoted back) written as an escape: an error
    /// goes to a terminal or a page as it is, and must not steer either.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !(self.path.is_empty() || self.path == ".") {
            write!(f, "{}: ", Printable(&self.path))?;
        }
        write!(f, "{}", Printable(&self.message))
    }
}

/// Text with its control characters written as `\u{1b}`.
#[derive(Clone, Copy, Debug)]
pub struct Printable<'a>(pub &'a str);

/// A key from the document, made safe to stand before [`FIELD_MARK`]: a
/// mark of its own would move where the error's path seems to end.
pub(super) fn unmarked(key: &str) -> String {
    key.replace(FIELD_MARK, "\\u{1f}")
}

impl fmt::Display for Printable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for character in self.0.chars() {
            if character.is_control() && character != '\n' {
                write!(f, "\\u{{{:x}}}", u32::from(character))?;
            } else {
                write!(f, "{character}")?;
            }
        }
        Ok(())
    }
}

/// Separates a field path from its message inside a custom error, so that
/// [`Scenario::from_json`] can report it. serde_json places an error raised
/// after a fault was read (a fault is read whole, then dispatched on its
/// `kind`) wherever its reader had got to, so a fault's errors carry their
/// own path, `faults[i].field`, ahead of this mark.
pub(crate) const FIELD_MARK: char = '\u{1f}';

impl std::error::Error for ScenarioError {}

pub(super) fn refuse(path: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError { path: path.into(), message: message.into() }
}
