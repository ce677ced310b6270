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

/// A built-in scenario as a page lists it, without its text: its short name,
/// its file in `engine/scenarios/` (where a page that does not embed it
/// fetches it from) and its title, the scenario's `name`.
#[derive(Clone, Copy, Debug)]
pub struct Listed {
    pub name: &'static str,
    pub file: &'static str,
    pub title: &'static str,
}

/// Every built-in scenario, listed: the same order as [`ALL`]. Using this
/// instead of `ALL` keeps the texts out of a binary.
pub const CATALOG: &[Listed] = include!(concat!(env!("OUT_DIR"), "/builtin_catalog.rs"));

/// The first built-in, the post's night, on its own: what a fresh lab shows,
/// embedded in a page that fetches the other built-ins.
pub const STORY: Builtin = include!(concat!(env!("OUT_DIR"), "/builtin_story.rs"));

/// Every built-in quiz, in order.
pub const QUIZZES: &[Builtin] = include!(concat!(env!("OUT_DIR"), "/builtin_quizzes.rs"));

/// The stories (`engine/stories/*.json`), in file-name order.
pub const STORIES: &[Builtin] = include!(concat!(env!("OUT_DIR"), "/builtin_stories.rs"));

/// A built-in scenario by name.
pub fn find(name: &str) -> Option<&'static Builtin> {
    ALL.iter().find(|builtin| builtin.name == name)
}

/// A built-in quiz by name.
pub fn find_quiz(name: &str) -> Option<&'static Builtin> {
    QUIZZES.iter().find(|builtin| builtin.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_and_the_story_say_what_the_texts_say() {
        assert_eq!(CATALOG.len(), ALL.len());
        for (listed, builtin) in CATALOG.iter().zip(ALL) {
            assert_eq!(listed.name, builtin.name);
            assert!(listed.file.ends_with(&format!("{}.json", builtin.name)), "{}", listed.file);
            let scenario = crate::Scenario::from_json(builtin.text).expect("built-ins are valid");
            assert_eq!(listed.title, scenario.name);
            let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(listed.file);
            assert!(file.is_file(), "{} is where a page fetches it", file.display());
        }
        assert_eq!((STORY.name, STORY.text), (ALL[0].name, ALL[0].text));
    }
}
