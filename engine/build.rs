//! Lists the built-in scenarios (`scenarios/*.json`) and quizzes
//! (`quizzes/*.json`) at build time, so adding one is adding a file: no code
//! changes. Files are taken in name order; a leading `NN-` sets the order and
//! is not part of the name (`01-two-am-saturday.json` is `two-am-saturday`).

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    for (folder, generated) in [("scenarios", "builtin_scenarios.rs"), ("quizzes", "builtin_quizzes.rs")] {
        let directory = Path::new(&manifest).join(folder);
        println!("cargo:rerun-if-changed={}", directory.display());
        let mut files: Vec<_> = std::fs::read_dir(&directory)
            .map(|entries| entries.filter_map(Result::ok).map(|entry| entry.path()).collect())
            .unwrap_or_default();
        files.retain(|path| path.extension().is_some_and(|extension| extension == "json"));
        files.sort();
        let mut code = String::from("&[\n");
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
            let _ = writeln!(
                code,
                "    Builtin {{ name: {name:?}, text: include_str!({:?}) }},",
                compact.display().to_string()
            );
        }
        code.push(']');
        std::fs::write(Path::new(&out).join(generated), code).expect("OUT_DIR is writable");
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
