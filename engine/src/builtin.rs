//! The built-in scenarios and quizzes, shipped as files in `engine/scenarios/`
//! and `engine/quizzes/` and compiled in (the build script lists the folders,
//! so adding a story is adding a file). Each scenario carries the outcome per
//! strategy it is expected to produce; each quiz, its answer.

/// A built-in document: its short name and its JSON text.
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    pub name: &'static str,
    pub text: &'static str,
}

/// Every built-in scenario, in the order people meet them.
pub const ALL: &[Builtin] = include!(concat!(env!("OUT_DIR"), "/builtin_scenarios.rs"));

/// Every built-in quiz, in order.
pub const QUIZZES: &[Builtin] = include!(concat!(env!("OUT_DIR"), "/builtin_quizzes.rs"));

/// A built-in scenario by name.
pub fn find(name: &str) -> Option<&'static Builtin> {
    ALL.iter().find(|builtin| builtin.name == name)
}

/// A built-in quiz by name.
pub fn find_quiz(name: &str) -> Option<&'static Builtin> {
    QUIZZES.iter().find(|builtin| builtin.name == name)
}
