//! The engine compiled to wasm32 reproduces the native event logs byte for
//! byte: every built-in's digest must equal the one recorded natively in
//! `fixtures/log-digests.json` (see `tests/determinism.rs`). Runs under
//! `wasm-bindgen-test-runner` (node), from `scripts/test.sh`.
#![cfg(target_arch = "wasm32")]

use locklab_engine::{Scenario, builtin, log_digest};
use std::collections::BTreeMap;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn wasm_logs_match_the_native_digests() {
    let recorded: BTreeMap<String, String> =
        serde_json::from_str(include_str!("fixtures/log-digests.json")).expect("valid JSON");
    let mut compared = 0;
    for builtin in builtin::ALL {
        let scenario = Scenario::from_json(builtin.text).expect("built-ins are valid");
        for settings in scenario.strategy_settings() {
            let key = format!("{}/{}", builtin.name, settings.id());
            let digest = log_digest(&locklab_engine::simulate(&scenario, settings.id()));
            assert_eq!(recorded.get(&key), Some(&digest), "{key}: the wasm log differs from the native one");
            compared += 1;
        }
    }
    assert_eq!(compared, recorded.len());
}
