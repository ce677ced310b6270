//! Habits that check themselves: the engine's source is read as text and the
//! things a deterministic engine must never use are refused by name, so a
//! change that reaches for one fails here, with the file and line, before any
//! digest drifts.
//!
//! - no `HashMap` or `HashSet` (their iteration order is random per process);
//! - no wall clock: `Instant`, `SystemTime`, `std::time`;
//! - no OS randomness: `thread_rng`, `rand::random`, `getrandom`, `OsRng`;
//! - no `usize` in the seeded random stream (`rng.rs`), which must draw the
//!   same numbers on 32-bit wasm as on 64-bit machines;
//! - no public item that nothing outside the tests uses (a dead item is
//!   removed, or made private to the tests that need it).

use std::path::{Path, PathBuf};

const FORBIDDEN: [(&str, &str); 9] = [
    ("HashMap", "iteration order differs between runs: use a BTreeMap or a sorted Vec"),
    ("HashSet", "iteration order differs between runs: use a BTreeSet or a sorted Vec"),
    ("Instant", "the engine never reads the wall clock: time is simulated milliseconds"),
    ("SystemTime", "the engine never reads the wall clock: time is simulated milliseconds"),
    ("std::time", "the engine never reads the wall clock: time is simulated milliseconds"),
    ("thread_rng", "all randomness flows from the scenario's seed (rng.rs)"),
    ("rand::random", "all randomness flows from the scenario's seed (rng.rs)"),
    ("getrandom", "all randomness flows from the scenario's seed (rng.rs)"),
    ("OsRng", "all randomness flows from the scenario's seed (rng.rs)"),
];

fn sources(directory: &Path, found: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(directory)
        .unwrap_or_else(|error| panic!("{}: {error}", directory.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            found.push(path);
        }
    }
}

/// The code of a line: what comes before a `//` comment.
fn code(line: &str) -> &str {
    line.split("//").next().unwrap_or_default()
}

#[test]
fn the_engine_uses_nothing_that_would_make_a_run_differ_from_its_replay() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(files.len() > 10, "the engine's sources are under {}", root.display());
    let mut problems = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for (number, line) in text.lines().enumerate() {
            for (name, why) in FORBIDDEN {
                if code(line).contains(name) {
                    problems.push(format!("{}:{}: `{name}`: {why}", file.display(), number + 1));
                }
            }
        }
        if file.ends_with("rng.rs") {
            for (number, line) in text.lines().enumerate() {
                if code(line).contains("usize") {
                    problems.push(format!("{}:{}: `usize` in the seeded stream", file.display(), number + 1));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_tidy_check_sees_what_it_looks_for() {
    assert_eq!(code("let map: HashMap<u8, u8> = x; // not a HashSet"), "let map: HashMap<u8, u8> = x; ");
    assert!(FORBIDDEN.iter().any(|(name, _)| code("use std::collections::HashMap;").contains(name)));
    assert!(!FORBIDDEN.iter().any(|(name, _)| code("// a HashMap would not do").contains(name)));
}

/// Where the engine's public items are used: the workspace's code, tests left out.
const USERS: [&str; 7] =
    ["engine/src", "engine/examples", "engine/benches", "cli/src", "live/src", "conformance/src", "frontend/src"];

/// A file's code without its unit tests: the `#[cfg(test)]` module ends a file that has one.
fn without_tests(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod ").map_or(text, |start| &text[..start])
}

/// The names a file makes public (`pub fn`, `pub const`, `pub struct`, …)
/// with their lines; an item marked `#[doc(hidden)]` is a hook for the
/// tests and is left out.
fn public_items(text: &str) -> Vec<(String, usize)> {
    const KINDS: [&str; 8] = [
        "pub const fn ",
        "pub fn ",
        "pub const ",
        "pub struct ",
        "pub enum ",
        "pub static ",
        "pub type ",
        "pub trait ",
    ];
    let lines: Vec<&str> = text.lines().collect();
    let mut items = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let Some(rest) = KINDS.iter().find_map(|kind| trimmed.strip_prefix(kind)) else { continue };
        let hidden = index
            .checked_sub(1)
            .and_then(|before| lines.get(before))
            .is_some_and(|before| before.contains("#[doc(hidden)]"));
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !hidden && !name.is_empty() {
            items.push((name, index + 1));
        }
    }
    items
}

/// How many times `name` stands as a whole word in `text`.
fn mentions(text: &str, name: &str) -> usize {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name)
        .filter(|(at, _)| {
            let before = text[..*at].chars().next_back();
            let after = text[at + name.len()..].chars().next();
            !before.is_some_and(word) && !after.is_some_and(word)
        })
        .count()
}

#[test]
fn every_public_item_of_the_engine_is_used_outside_its_tests() {
    // A name another item shares counts as used: the check finds the names nothing else mentions.
    let engine_crate = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = engine_crate.parent().unwrap_or(engine_crate);
    let mut files = Vec::new();
    for user in USERS {
        sources(&workspace.join(user), &mut files);
    }
    let texts: Vec<(PathBuf, String)> = files
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            (file, without_tests(&text).to_owned())
        })
        .collect();
    let engine = workspace.join("engine/src");
    let mut dead = Vec::new();
    for (file, text) in texts.iter().filter(|(file, _)| file.starts_with(&engine)) {
        for (name, line) in public_items(text) {
            let uses: usize = texts.iter().map(|(_, other)| mentions(other, &name)).sum();
            if uses <= 1 {
                dead.push(format!(
                    "{}:{line}: `{name}` is public, and nothing outside the tests uses it",
                    file.display()
                ));
            }
        }
    }
    assert!(dead.is_empty(), "{}", dead.join("\n"));
}

#[test]
fn the_public_item_check_sees_what_it_looks_for() {
    let text =
        "pub fn used() {}\n#[doc(hidden)]\npub fn hook() {}\npub(crate) fn inner() {}\n    pub const LIMIT: u8 = 1;";
    let names: Vec<String> = public_items(text).into_iter().map(|(name, _)| name).collect();
    assert_eq!(names, ["used", "LIMIT"]);
    assert_eq!(mentions("used(); unused(); used_twice(); (used)", "used"), 2);
    assert_eq!(without_tests("fn a() {}\n#[cfg(test)]\nmod tests {}"), "fn a() {}\n");
    assert_eq!(without_tests("#[cfg(test)]\nconst A: u8 = 1;\n"), "#[cfg(test)]\nconst A: u8 = 1;\n");
}
