//! A message to the reader: the lab's above its panels, the quiz's notice.

/// How a message to the user reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    Info,
    Error,
}

/// A message shown above a page until dismissed or replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub tone: Tone,
    pub text: String,
}
