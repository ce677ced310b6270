//! Habits that check themselves: the engine's source is read as text and the
//! things a deterministic engine must never use are refused by name, so a
//! change that reaches for one fails here, with the file and line, before any
//! digest drifts.
//!
//! - no `HashMap` or `HashSet` (their iteration order is random per process);
//! - no wall clock: `Instant`, `SystemTime`, `std::time`;
//! - no OS randomness: `thread_rng`, `rand::random`, `getrandom`, `OsRng`;
//! - no `usize` in the seeded random stream (`rng.rs`), which must draw the
//!   same numbers on 32-bit wasm as on 64-bit machines.

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
