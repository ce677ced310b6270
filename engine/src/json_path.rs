//! Where in a JSON document a parse error happened, as a field path
//! (`faults[2].duration_ms`), found from the error's line and column.
//!
//! serde_json reports the position of an error but not the field; a
//! path-tracking deserializer wrapper would report the field, but it is
//! instantiated for every type of the document and cost the browser lab about
//! 8 KB of compressed wasm. The position is enough: the path is the chain of
//! open objects' keys and arrays' indices at that point of the text, which a
//! small scanner finds.

/// The path of the value at a serde_json error's position (`line` and
/// `column` as serde_json counts them: both from 1; column 0 means the start
/// of the line). An empty string is the document itself.
pub fn at(text: &str, line: usize, column: usize) -> String {
    path(&text[..offset(text, line, column)])
}

/// The byte offset of a (line, column) position, clamped to the text.
fn offset(text: &str, line: usize, column: usize) -> usize {
    let mut line_start = 0;
    for _ in 1..line.max(1) {
        match text[line_start..].find('\n') {
            Some(newline) => line_start += newline + 1,
            None => return text.len(),
        }
    }
    let line_text = text[line_start..].split('\n').next().unwrap_or("");
    // serde_json counts columns in bytes; stay on a character boundary.
    let mut end = column.min(line_text.len());
    while !line_text.is_char_boundary(end) {
        end -= 1;
    }
    line_start + end
}

/// One open container while scanning.
enum Open {
    /// An object, with the key of the member being read (if one was read).
    Object(Option<String>),
    /// An array, with the index of the element being read.
    Array(u32),
}

/// The path of the first array in `text` where `may_be_array` says no, if
/// any. serde reads a struct from an array of its fields in order as well as
/// from an object (`"world": [3, 300000]`); no document means that, so the
/// scenario refuses an array anywhere but at its list fields.
pub fn array_not_allowed(text: &str, may_be_array: &dyn Fn(&str) -> bool) -> Option<String> {
    let mut found = None;
    scan(text, &mut |open| {
        if found.is_none() {
            let path = render(open);
            if !may_be_array(&path) {
                found = Some(path);
            }
        }
    });
    found
}

/// The path of the innermost value open at the end of `prefix`.
fn path(prefix: &str) -> String {
    render(&scan(prefix, &mut |_| {}))
}

/// Reads `prefix`, calling `on_array` with the open containers whenever an
/// array opens (before it is open), and returns the containers still open.
/// One scanner for both uses (`dyn`, so the browser build has one copy).
fn scan(prefix: &str, on_array: &mut dyn FnMut(&[Open])) -> Vec<Open> {
    let mut open: Vec<Open> = Vec::new();
    // In an object, whether the next string is a key (true) or a value.
    let mut expecting_key = false;
    let mut chars = prefix.chars();
    while let Some(character) = chars.next() {
        match character {
            '"' => {
                let mut string = String::new();
                while let Some(inner) = chars.next() {
                    match inner {
                        '"' => break,
                        '\\' => match chars.next() {
                            // `\u001b` is one character of the key, as serde reads it.
                            Some('u') => {
                                let digits: String = chars.by_ref().take(4).collect();
                                let decoded = u32::from_str_radix(&digits, 16).ok().and_then(char::from_u32);
                                string.push(decoded.unwrap_or(char::REPLACEMENT_CHARACTER));
                            }
                            Some('n') => string.push('\n'),
                            Some('t') => string.push('\t'),
                            Some('r') => string.push('\r'),
                            Some('b') => string.push('\u{8}'),
                            Some('f') => string.push('\u{c}'),
                            Some(escaped) => string.push(escaped),
                            None => {}
                        },
                        other => string.push(other),
                    }
                }
                if expecting_key && let Some(Open::Object(key)) = open.last_mut() {
                    *key = Some(string);
                    expecting_key = false;
                }
            }
            '{' => {
                open.push(Open::Object(None));
                expecting_key = true;
            }
            '[' => {
                on_array(&open);
                open.push(Open::Array(0));
            }
            '}' | ']' => {
                open.pop();
                expecting_key = false;
            }
            ',' => match open.last_mut() {
                Some(Open::Array(index)) => *index += 1,
                Some(Open::Object(key)) => {
                    *key = None;
                    expecting_key = true;
                }
                None => {}
            },
            _ => {}
        }
    }
    open
}

/// A path as the scenario's errors write it: `faults[2].duration_ms`.
fn render(open: &[Open]) -> String {
    let mut path = String::new();
    for container in open {
        match container {
            Open::Object(Some(key)) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Open::Object(None) => {}
            Open::Array(index) => path.push_str(&format!("[{index}]")),
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path_of_error<T: serde::de::DeserializeOwned + std::fmt::Debug>(text: &str) -> String {
        let error = serde_json::from_str::<T>(text).expect_err("the text is invalid");
        at(text, error.line(), error.column())
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        at_ms: u64,
        #[serde(default)]
        name: String,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        faults: Vec<Inner>,
        #[serde(default)]
        world: Option<Inner>,
    }

    #[test]
    fn a_wrong_type_is_placed_at_its_field() {
        let text = "{\n  \"faults\": [\n    {\"at_ms\": 1},\n    {\"name\": \"a, [b]\", \"at_ms\": -5}\n  ]\n}";
        assert_eq!(path_of_error::<Outer>(text), "faults[1].at_ms");
    }

    #[test]
    fn an_unknown_field_is_named_in_its_object() {
        assert_eq!(path_of_error::<Outer>(r#"{"faults": [], "world": {"at_ms": 1, "instance": 3}}"#), "world.instance");
    }

    #[test]
    fn a_missing_field_is_placed_at_its_object() {
        assert_eq!(path_of_error::<Outer>(r#"{"faults": [{"at_ms": 1}, {"name": "x"}]}"#), "faults[1]");
        assert_eq!(path_of_error::<Outer>(r#"{"world": {"at_ms": 1}}"#), "");
    }

    #[test]
    fn escaped_quotes_do_not_end_a_key() {
        assert_eq!(
            path_of_error::<Outer>(r#"{"faults": [{"name": "say \"hi\", [ok]", "at_ms": "x"}]}"#),
            "faults[0].at_ms"
        );
    }

    #[test]
    fn escapes_in_keys_are_decoded() {
        let text = "{\"w\\u00e9rld\": {\"at_ms\": \"3\"}}";
        assert_eq!(path_of_error::<std::collections::BTreeMap<String, Inner>>(text), "w\u{e9}rld.at_ms");
    }

    #[test]
    fn positions_out_of_range_are_clamped() {
        assert_eq!(at("{\"a\": [1, 2", 99, 99), "a[1]");
        assert_eq!(at("é", 1, 1), "");
    }
}
