//! The workspace's shape, checked: the source of every crate is read as
//! text, and what ARCHITECTURE.md promises about its structure fails here,
//! with the file and line, when a change breaks it.
//!
//! - no function outside tests is longer than [`LONGEST_FUNCTION_LINES`];
//! - no module of the engine imports another that imports it back;
//! - the instance's job loop is written once, in `engine/src/runtime/`: no
//!   file of live mode defines one of its steps, and live mode's instance
//!   process drives that runtime;
//! - live mode does not depend on the conformance suite's hand-written protocols.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const LONGEST_FUNCTION_LINES: usize = 70;
const CRATES: [&str; 7] = ["engine", "live", "cli", "conformance", "frontend", "clients", "servers"];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the engine sits in the workspace").to_path_buf()
}

fn sources(directory: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(directory) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(Result::ok).map(|entry| entry.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            found.push(path);
        }
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// How far the braces of `line` take the depth (braces in strings and
/// comments are rare enough in this code base to count as code).
fn brace_change(line: &str) -> i64 {
    let code = line.split("//").next().unwrap_or_default();
    let opened = i64::try_from(code.matches('{').count()).unwrap_or(0);
    let closed = i64::try_from(code.matches('}').count()).unwrap_or(0);
    opened - closed
}

/// The index of the line that closes the item starting at `start`.
fn item_end(lines: &[&str], start: usize) -> usize {
    let (mut depth, mut opened) = (0, false);
    for (index, line) in lines.iter().enumerate().skip(start) {
        depth += brace_change(line);
        opened |= line.contains('{');
        if opened && depth <= 0 {
            return index;
        }
    }
    lines.len().saturating_sub(1)
}

/// The name of the function a line declares, if it declares one with a body.
fn declared_function(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    let after = ["pub(crate) ", "pub(super) ", "pub "].iter().find_map(|visibility| trimmed.strip_prefix(visibility));
    let rest = after.unwrap_or(trimmed);
    let rest = rest.strip_prefix("const ").unwrap_or(rest);
    let rest = rest.strip_prefix("async ").unwrap_or(rest);
    let name = rest.strip_prefix("fn ")?;
    if line.trim_end().ends_with(';') {
        return None;
    }
    name.split(|character: char| !(character.is_alphanumeric() || character == '_')).next()
}

/// Functions over the limit in `text`, outside `#[cfg(test)]` items: (line, name, length).
fn long_functions(text: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        if lines[index].trim_start().starts_with("#[cfg(test)]") {
            index = item_end(&lines, index + 1) + 1;
            continue;
        }
        if let Some(name) = declared_function(lines[index]) {
            let length = item_end(&lines, index) - index + 1;
            if length > LONGEST_FUNCTION_LINES {
                found.push((index + 1, name.to_owned(), length));
            }
        }
        index += 1;
    }
    found
}

#[test]
fn no_function_outside_tests_is_longer_than_the_limit() {
    let root = workspace();
    let mut long = Vec::new();
    for krate in CRATES {
        let mut files = Vec::new();
        sources(&root.join(krate).join("src"), &mut files);
        // A module of tests in a file of its own is test code throughout.
        for path in files.into_iter().filter(|path| !path.ends_with("tests.rs")) {
            for (line, name, length) in long_functions(&read(&path)) {
                let shown = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
                long.push(format!("{shown}:{line}: `{name}` is {length} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {LONGEST_FUNCTION_LINES} lines (split them by what each part does):\n{}",
        long.join("\n")
    );
}

#[test]
fn the_length_check_sees_what_it_looks_for() {
    let body = "    let x = 1;\n".repeat(LONGEST_FUNCTION_LINES);
    let text = format!(
        "pub fn long() {{\n{body}}}\nfn short() {{}}\n#[cfg(test)]\nmod tests {{\nfn long_test() {{\n{body}}}\n}}\n"
    );
    let found = long_functions(&text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0, found[0].1.as_str()), (1, "long"));
}

/// The engine's modules (the top-level files and folders of `engine/src`)
/// that each one names through `crate::`.
fn engine_imports() -> BTreeMap<String, BTreeSet<String>> {
    let source = workspace().join("engine").join("src");
    let mut files = Vec::new();
    sources(&source, &mut files);
    let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in files {
        let relative = path.strip_prefix(&source).unwrap_or(&path);
        let first = relative.components().next().map(|part| part.as_os_str().to_string_lossy().into_owned());
        let Some(module) = first.map(|name| name.trim_end_matches(".rs").to_owned()) else { continue };
        if module == "lib" {
            continue;
        }
        let text = read(&path);
        let named = imports.entry(module.clone()).or_default();
        for line in text.lines().map(|line| line.split("//").next().unwrap_or_default()) {
            named.extend(crate_paths(line).filter(|other| *other != module));
        }
    }
    imports
}

/// The top-level modules a line names as `crate::name`, or inside a `use crate::{…}` group.
fn crate_paths(line: &str) -> impl Iterator<Item = String> + '_ {
    let word = |text: &str| {
        text.split(|character: char| !(character.is_alphanumeric() || character == '_')).next().map(str::to_owned)
    };
    let direct = line.split("crate::").skip(1).filter_map(word).filter(|name| !name.is_empty());
    let grouped = line
        .split_once("use crate::{")
        .map(|(_, group)| group.split(',').filter_map(|part| word(part.trim())).collect::<Vec<_>>())
        .unwrap_or_default();
    direct.chain(grouped).filter(|name| !name.is_empty() && name != "{")
}

/// A cycle through `start` in `imports`, if there is one: the modules in order.
fn cycle_through(imports: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_owned(), vec![start.to_owned()])];
    let mut seen = BTreeSet::new();
    while let Some((module, path)) = stack.pop() {
        for next in imports.get(&module).into_iter().flatten() {
            if next == start {
                return Some([path.clone(), vec![start.to_owned()]].concat());
            }
            if seen.insert(next.clone()) {
                stack.push((next.clone(), [path.clone(), vec![next.clone()]].concat()));
            }
        }
    }
    None
}

#[test]
fn no_module_of_the_engine_imports_another_that_imports_it_back() {
    let imports = engine_imports();
    assert!(imports.contains_key("runtime") && imports.contains_key("sim"), "the engine's modules were not found");
    let cycles: Vec<String> =
        imports.keys().filter_map(|module| cycle_through(&imports, module)).map(|cycle| cycle.join(" → ")).collect();
    assert!(cycles.is_empty(), "import cycles in the engine:\n{}", cycles.join("\n"));
}

#[test]
fn the_cycle_check_sees_what_it_looks_for() {
    let imports: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_owned(), BTreeSet::from(["b".to_owned()])),
        ("b".to_owned(), BTreeSet::from(["c".to_owned()])),
        ("c".to_owned(), BTreeSet::from(["a".to_owned()])),
        ("d".to_owned(), BTreeSet::from(["a".to_owned()])),
    ]
    .into();
    assert_eq!(cycle_through(&imports, "a"), Some(vec!["a", "b", "c", "a"].into_iter().map(str::to_owned).collect()));
    assert_eq!(cycle_through(&imports, "d"), None);
    let line = "use crate::{event::Sql, ids::RunId}; let x = crate::sim::Sim::new();";
    assert_eq!(crate_paths(line).collect::<BTreeSet<_>>(), ["event", "ids", "sim"].map(str::to_owned).into());
}

/// The functions of `impl Runtime` blocks in `text`: the job loop's steps
/// (a trait's methods, which a host implements too, are not among them).
fn runtime_steps(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut steps = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        if lines[index].starts_with("impl Runtime {") {
            let end = item_end(&lines, index);
            // The runtime's public entry points (`start`, `on_reply`, …) are
            // names a shell may well use for its own; its steps are the rest.
            let inner = lines[index + 1..end].iter().filter(|line| !line.trim_start().starts_with("pub fn"));
            steps.extend(inner.filter_map(|line| declared_function(line)).map(str::to_owned));
            index = end;
        }
        index += 1;
    }
    steps
}

#[test]
fn the_job_loop_is_written_once_and_live_mode_drives_it() {
    let root = workspace();
    let mut runtime_files = Vec::new();
    sources(&root.join("engine").join("src").join("runtime"), &mut runtime_files);
    let steps: BTreeSet<String> = runtime_files.iter().flat_map(|path| runtime_steps(&read(path))).collect();
    assert!(steps.contains("work_step") && steps.contains("cron_fired"), "the runtime's steps were not found");
    let mut live_files = Vec::new();
    sources(&root.join("live").join("src"), &mut live_files);
    let mut copies = Vec::new();
    let mut drives = false;
    for path in &live_files {
        let text = read(path);
        drives |= text.contains("locklab_engine::runtime");
        for (line, name) in
            text.lines().enumerate().filter_map(|(index, line)| Some((index + 1, declared_function(line)?)))
        {
            if steps.contains(name) {
                copies.push(format!("{}:{line}: `{name}`", path.strip_prefix(&root).unwrap_or(path).display()));
            }
        }
    }
    assert!(copies.is_empty(), "live mode defines steps of the runtime's job loop again:\n{}", copies.join("\n"));
    assert!(drives, "no file of live mode uses locklab_engine::runtime");
    let manifest = read(&root.join("live").join("Cargo.toml"));
    assert!(!manifest.contains("locklab-conformance"), "live mode depends on the conformance suite");
}
