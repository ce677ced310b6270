//! Lists the built-in scenarios (`scenarios/*.json`), quizzes
//! (`quizzes/*.json`) and stories (`stories/*.json`) at build time, so adding
//! one is adding a file: no code
//! changes. Files are taken in name order; a leading `NN-` sets the order and
//! is not part of the name (`01-two-am-saturday.json` is `two-am-saturday`).
//! For the scenarios it also writes the catalog (name, file, title) and the
//! first one on its own, for a page that embeds only that one and fetches the
//! others from their files.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let folders =
        [("scenarios", "builtin_scenarios.rs"), ("quizzes", "builtin_quizzes.rs"), ("stories", "builtin_stories.rs")];
    for (folder, generated) in folders {
        let directory = Path::new(&manifest).join(folder);
        println!("cargo:rerun-if-changed={}", directory.display());
        let mut files: Vec<_> = std::fs::read_dir(&directory)
            .map(|entries| entries.filter_map(Result::ok).map(|entry| entry.path()).collect())
            .unwrap_or_default();
        files.retain(|path| path.extension().is_some_and(|extension| extension == "json"));
        files.sort();
        let mut code = String::from("&[\n");
        let mut catalog = String::from("&[\n");
        let mut first = None;
        for path in files {
            let stem = path.file_stem().and_then(|stem| stem.to_str()).unwrap_or_default();
            let name = match stem.split_once('-') {
                Some((number, rest)) if number.chars().all(|c| c.is_ascii_digit()) => rest,
                _ => stem,
            };
            // Embedded without the files' indentation: every page that lists
            // the built-ins carries their text in its wasm.
            let text = std::fs::read_to_string(&path).expect("a built-in is readable");
            let compact = Path::new(&out).join(format!("{folder}-{stem}.json"));
            std::fs::write(&compact, minify(&text)).expect("OUT_DIR is writable");
            let entry =
                format!("Builtin {{ name: {name:?}, text: include_str!({:?}) }}", compact.display().to_string());
            let _ = writeln!(code, "    {entry},");
            let file = path.file_name().and_then(|file| file.to_str()).unwrap_or_default();
            let document: serde_json::Value = serde_json::from_str(&text).expect("a built-in is JSON");
            let title = document.get("name").and_then(serde_json::Value::as_str).unwrap_or_default();
            let _ = writeln!(catalog, "    Listed {{ name: {name:?}, file: {file:?}, title: {title:?} }},");
            first.get_or_insert(entry);
        }
        code.push(']');
        catalog.push(']');
        std::fs::write(Path::new(&out).join(generated), code).expect("OUT_DIR is writable");
        if folder == "scenarios" {
            std::fs::write(Path::new(&out).join("builtin_catalog.rs"), catalog).expect("OUT_DIR is writable");
            let first = first.expect("at least one built-in scenario");
            std::fs::write(Path::new(&out).join("builtin_story.rs"), first).expect("OUT_DIR is writable");
        }
    }
}

/// JSON without the white space between tokens (strings are kept as they are).
fn minify(text: &str) -> String {
    let mut compact = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for character in text.chars() {
        if in_string {
            compact.push(character);
            match (escaped, character) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                (false, _) => {}
            }
        } else if character == '"' {
            in_string = true;
            compact.push(character);
        } else if !character.is_whitespace() {
            compact.push(character);
        }
    }
    compact
}
