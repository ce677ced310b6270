//! Same scenario + seed = byte-identical event log. Every built-in's log per
//! strategy is reduced to a digest and compared with `fixtures/log-digests.json`,
//! which `tests/wasm_determinism.rs` checks in wasm too: together they show the
//! native and the wasm engine agree byte for byte.
//!
//! When the engine changes on purpose, regenerate the file:
//! `LOCKLAB_BLESS=1 cargo test -p locklab-engine --test determinism`.
#![cfg(not(target_arch = "wasm32"))]

use locklab_engine::{Scenario, builtin, log_digest};
use std::collections::BTreeMap;

const GOLDEN: &str = "tests/fixtures/log-digests.json";

fn digests() -> BTreeMap<String, String> {
    let mut digests = BTreeMap::new();
    for builtin in builtin::ALL {
        let scenario = Scenario::from_json(builtin.text).expect("built-ins are valid");
        for settings in scenario.strategy_settings() {
            let log = locklab_engine::simulate(&scenario, settings.id());
            digests.insert(format!("{}/{}", builtin.name, settings.id()), log_digest(&log));
        }
    }
    digests
}

#[test]
fn the_same_scenario_twice_gives_the_same_log() {
    let scenario = Scenario::from_json(builtin::ALL[0].text).expect("valid");
    for settings in scenario.strategy_settings() {
        let first = serde_json::to_string(&locklab_engine::simulate(&scenario, settings.id())).expect("serializes");
        let second = serde_json::to_string(&locklab_engine::simulate(&scenario, settings.id())).expect("serializes");
        assert!(first == second, "{} gave two different logs", settings.id());
    }
}

#[test]
fn logs_match_the_recorded_digests() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(GOLDEN);
    let now = digests();
    if std::env::var_os("LOCKLAB_BLESS").is_some() {
        let text = serde_json::to_string_pretty(&now).expect("serializes") + "\n";
        std::fs::write(&path, text).expect("writes the golden file");
        return;
    }
    let recorded: BTreeMap<String, String> =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("golden file exists")).expect("valid JSON");
    let changed: Vec<&String> = now.keys().filter(|key| recorded.get(*key) != now.get(*key)).collect();
    assert!(
        changed.is_empty() && recorded.len() == now.len(),
        "event logs changed for {changed:?}.\nIf the engine changed on purpose, rerun with LOCKLAB_BLESS=1 \
         cargo test -p locklab-engine --test determinism and commit {GOLDEN}"
    );
}

#[test]
fn a_run_advanced_in_slices_gives_the_same_log_timeline_and_report() {
    // The lab advances long runs a slice at a time between frames; what it
    // shows must be the run `simulate` gives, whatever the slice.
    use locklab_engine::Simulation;
    use locklab_engine::report::{ReportBuilder, analyze};
    use locklab_engine::view::{Timeline, TimelineBuilder};
    for builtin in builtin::ALL {
        let scenario = Scenario::from_json(builtin.text).expect("built-ins are valid");
        for settings in scenario.strategy_settings() {
            let strategy = settings.id();
            let whole = locklab_engine::simulate(&scenario, strategy);
            let slice = if builtin.name.len() % 2 == 0 { 1 } else { 97 };
            let mut simulation = Simulation::new(&scenario, strategy);
            let mut builder = TimelineBuilder::new(&scenario, strategy);
            let mut report = ReportBuilder::new(&scenario, strategy);
            let mut fed = 0;
            let mut last_ms = 0;
            loop {
                let ended = simulation.advance(slice);
                assert!(simulation.now_ms() >= last_ms, "{}/{strategy}: time went back", builtin.name);
                last_ms = simulation.now_ms();
                builder.feed(&simulation.log()[fed..]);
                report.feed(&simulation.log()[fed..]);
                fed = simulation.log().len();
                if ended {
                    break;
                }
            }
            let sliced = simulation.into_log();
            assert!(sliced == whole, "{}/{strategy}: slices of {slice} changed the log", builtin.name);
            assert_eq!(
                format!("{:?}", builder.finish()),
                format!("{:?}", Timeline::build(&scenario, strategy, &whole)),
                "{}/{strategy}: slices of {slice} changed the timeline",
                builtin.name
            );
            assert_eq!(
                format!("{:?}", report.finish()),
                format!("{:?}", analyze(&scenario, strategy, &whole)),
                "{}/{strategy}: slices of {slice} changed the report",
                builtin.name
            );
        }
    }
}
