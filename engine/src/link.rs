//! Share links: the whole state of a view (scenario, strategy, cursor, single
//! or compare) in a URL fragment, with no server.
//!
//! A link is `<version>.<payload>`; version `1` is base64url (no padding) of
//! raw DEFLATE of the state's JSON. The scenario itself travels in the link,
//! not a built-in's name, so a link made today opens the same run after the
//! built-ins change. Every version ever issued keeps decoding. A damaged,
//! truncated or hostile link yields a [`LinkError`] that says what is wrong; it
//! is data only (it can never carry script), decompression is capped, and the
//! scenario inside is validated like any other.

use crate::scenario::{Scenario, ScenarioError, StrategyId};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The version this build writes.
pub const LINK_VERSION: u32 = 1;
/// The largest decompressed state accepted (a scenario of 1,000 faults fits easily).
const MAX_STATE_BYTES: usize = 512 * 1024;
/// The longest link accepted before decoding.
const MAX_LINK_CHARS: usize = 64 * 1024;

/// What a link holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkState {
    pub scenario: Scenario,
    pub strategy: StrategyId,
    #[serde(default)]
    pub cursor_ms: u64,
    #[serde(default)]
    pub view: View,
    /// The built-in the scenario started from, for the page's title (informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtin: Option<String>,
}

/// Single timeline or all six side by side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum View {
    #[default]
    Single,
    Compare,
}

crate::by_name::by_name!(View { Single = "single", Compare = "compare" });

/// Why a link could not be opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkError {
    Empty,
    TooLong { chars: usize },
    NoVersion,
    UnknownVersion(String),
    NotBase64,
    Damaged,
    TooLarge,
    NotState(String),
    BadScenario(ScenarioError),
    CursorPastEnd { cursor_ms: u64, duration_ms: u64 },
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::Empty => f.write_str("the link holds no state"),
            LinkError::TooLong { chars } => write!(f, "the link is too long ({chars} characters)"),
            LinkError::NoVersion => f.write_str("the link has no version: it is not a locklab link, or it was cut"),
            LinkError::UnknownVersion(version) => write!(
                f,
                "the link is version {version}, which this locklab does not know (it reads up to {LINK_VERSION}); a newer lab made it"
            ),
            LinkError::NotBase64 => f.write_str("the link is damaged: it has characters a locklab link never has"),
            LinkError::Damaged => f.write_str("the link is truncated or damaged: its data does not unpack"),
            LinkError::TooLarge => f.write_str("the link unpacks to more data than any scenario needs"),
            LinkError::NotState(reason) => write!(f, "the link's data is not a lab state: {reason}"),
            LinkError::BadScenario(error) => write!(f, "the link's scenario is invalid: {error}"),
            LinkError::CursorPastEnd { cursor_ms, duration_ms } => {
                write!(f, "the link's time cursor ({cursor_ms} ms) is past the end of the run ({duration_ms} ms)")
            }
        }
    }
}

impl std::error::Error for LinkError {}

/// Encodes a state as a link fragment (`1.…`).
pub fn encode(state: &LinkState) -> String {
    let json = serde_json::to_vec(state).unwrap_or_default();
    let packed = miniz_oxide::deflate::compress_to_vec(&json, 9);
    format!("{LINK_VERSION}.{}", URL_SAFE_NO_PAD.encode(packed))
}

/// Decodes a link fragment (with or without a leading `#` or `v=`).
pub fn decode(link: &str) -> Result<LinkState, LinkError> {
    let link = link.trim().trim_start_matches('#').trim_start_matches("v=");
    if link.is_empty() {
        return Err(LinkError::Empty);
    }
    if link.len() > MAX_LINK_CHARS {
        return Err(LinkError::TooLong { chars: link.chars().count() });
    }
    let (version, payload) = link.split_once('.').ok_or(LinkError::NoVersion)?;
    match version {
        "1" => decode_v1(payload),
        other => Err(LinkError::UnknownVersion(other.chars().take(12).collect())),
    }
}

fn decode_v1(payload: &str) -> Result<LinkState, LinkError> {
    // base64's own error enum: whatever else it may come to say reads as damage.
    #[allow(clippy::wildcard_enum_match_arm)]
    let packed = URL_SAFE_NO_PAD.decode(payload).map_err(|error| match error {
        base64::DecodeError::InvalidByte(..) => LinkError::NotBase64,
        // A cut-off link ends mid-symbol: that is damage, not a foreign character.
        _ => LinkError::Damaged,
    })?;
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_STATE_BYTES).map_err(|error| {
        if matches!(error.status, miniz_oxide::inflate::TINFLStatus::HasMoreOutput) {
            LinkError::TooLarge
        } else {
            LinkError::Damaged
        }
    })?;
    let text = std::str::from_utf8(&json).map_err(|_| LinkError::Damaged)?;
    parse_state(text)
}

/// The checks a link's unpacked JSON must pass: a lab state, a valid scenario,
/// a cursor inside the run. Public so a page that unpacks links itself (the
/// browser lab uses the platform's DEFLATE to keep its wasm small) checks them
/// exactly as [`decode`] does.
pub fn parse_state(json: &str) -> Result<LinkState, LinkError> {
    let state: LinkState = serde_json::from_str(json).map_err(|error| {
        let (path, message) = crate::scenario::error_path(json, &error, "scenario");
        LinkError::NotState(format!("{path}: {message}"))
    })?;
    crate::scenario::objects_are_objects(json, "scenario").map_err(LinkError::BadScenario)?;
    state.scenario.validate().map_err(LinkError::BadScenario)?;
    let duration_ms = state.scenario.duration_ms();
    if state.cursor_ms > duration_ms {
        return Err(LinkError::CursorPastEnd { cursor_ms: state.cursor_ms, duration_ms });
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin;

    fn state_of(name: &str) -> LinkState {
        let scenario = Scenario::from_json(builtin::find(name).expect("built-in").text).expect("valid");
        LinkState {
            scenario,
            strategy: StrategyId::Redlock,
            cursor_ms: 100_000,
            view: View::Compare,
            builtin: Some(name.to_owned()),
        }
    }

    #[test]
    fn every_builtin_round_trips_compactly() {
        for builtin in builtin::ALL {
            let state = state_of(builtin.name);
            let link = encode(&state);
            assert!(link.starts_with("1."));
            assert!(link.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)), "URL-safe: {link}");
            assert_eq!(decode(&link), Ok(state.clone()), "{}", builtin.name);
            assert_eq!(decode(&format!("#v={link}")), Ok(state), "a fragment with its prefix decodes too");
            assert!(link.len() < 2_500, "{}: {} characters", builtin.name, link.len());
        }
    }

    #[test]
    fn a_link_made_by_version_1_still_opens_the_same_run() {
        // Made with this version on 2026-12-02 from a minimal state; it must keep decoding forever.
        let made_today = encode(&LinkState {
            scenario: Scenario::from_json(r#"{"format": "locklab/1", "seed": 7, "faults": [{"at_ms": 20000, "kind": "gc_pause", "target": "holder", "duration_ms": 100000}]}"#)
                .expect("valid"),
            strategy: StrategyId::Fencing,
            cursor_ms: 120_000,
            view: View::Single,
            builtin: None,
        });
        assert_eq!(made_today, RECORDED_V1_LINK, "version 1's encoding changed: old links would break");
        let state = decode(RECORDED_V1_LINK).expect("an old link opens");
        assert_eq!(state.scenario.seed, 7);
        assert_eq!(state.strategy, StrategyId::Fencing);
        assert_eq!(state.cursor_ms, 120_000);
        assert_eq!(state.scenario.faults.len(), 1);
        assert_eq!(
            state.scenario.output(),
            crate::scenario::Output::PerPeriod,
            "a link issued for a locklab/1 scenario keeps its meaning: every period its own report"
        );
    }

    const RECORDED_V1_LINK: &str = include_str!("../tests/fixtures/link-v1.txt");

    #[test]
    fn garbage_gets_a_message_never_a_panic() {
        let good = encode(&state_of("pause-after-check"));
        let cases: Vec<(String, &str)> = vec![
            (String::new(), "holds no state"),
            ("hello".to_owned(), "no version"),
            ("9.abc".to_owned(), "version 9"),
            ("1.###".to_owned(), "characters a locklab link never has"),
            (good[..good.len() / 2].to_owned(), "truncated or damaged"),
            (
                format!("1.{}", URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(b"[1,2,3]", 6))),
                "not a lab state",
            ),
            (
                format!(
                    "1.{}",
                    URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(b"<script>alert(1)</script>", 6))
                ),
                "not a lab state",
            ),
            (
                format!(
                    "1.{}",
                    URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(&vec![b' '; 2_000_000], 9))
                ),
                "more data",
            ),
            ("1.".to_owned() + &"A".repeat(70_000), "too long"),
        ];
        let packed = |json: &str| {
            format!("1.{}", URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(json.as_bytes(), 6)))
        };
        let cases = cases.into_iter().chain([
            (
                packed(r#"{"scenario": {"format": "locklab/1", "world": {"instances": "3"}}, "strategy": "naive"}"#),
                "scenario.world.instances: invalid type",
            ),
            (
                packed(r#"{"scenario": {"format": "locklab/1", "faults": [{"at_ms": 1, "kind": "gc_pause", "target": "a", "duration_ms": -1}]}, "strategy": "naive"}"#),
                "scenario.faults[0].duration_ms: invalid value",
            ),
            (packed(r#"{"scenario": {"format": "locklab/1"}, "strategy": "nave"}"#), "strategy: unknown strategy `nave`"),
        ]);
        for (link, expected) in cases {
            let error = decode(&link).expect_err(&link[..link.len().min(40)]).to_string();
            assert!(error.contains(expected), "{}: {error}", &link[..link.len().min(40)]);
        }
        let mut bad = state_of("calm-night");
        bad.cursor_ms = 10_000_000;
        assert!(decode(&encode(&bad)).expect_err("past the end").to_string().contains("past the end"));
        let mut invalid = state_of("calm-night");
        invalid.scenario.world.instances = 0;
        assert!(decode(&encode(&invalid)).expect_err("invalid").to_string().contains("world.instances"));
    }
}
