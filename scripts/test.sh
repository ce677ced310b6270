#!/usr/bin/env bash
# Runs every test of locklab, installing whatever is missing first (see
# scripts/setup.sh): formatting, lints, the engine's and the CLI's tests, the
# clients crate on servers with passwords and TLS (clients/tests/), the
# engine's Redis, PostgreSQL and etcd models against real servers (conformance/), live
# mode playing the built-ins on real servers (cli/tests/live.rs), the engine
# compiled to wasm reproducing the native event logs byte for byte, and the
# browser lab's component and end-to-end tests in headless Chromium. It
# prints how long each step took.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says how long the one before it took, and the last prints them
# all: the figures docs/bench.md records.
STEP_NAME="" STEP_START=$SECONDS TEST_START=$SECONDS TIMES=()
step_done() {
  if [ -n "$STEP_NAME" ]; then
    local took=$((SECONDS - STEP_START))
    printf '\033[2m-- %s: %d min %02d s\033[0m\n' "$STEP_NAME" $((took / 60)) $((took % 60))
    TIMES+=("$(printf '%4d min %02d s  %s' $((took / 60)) $((took % 60)) "$STEP_NAME")")
  fi
}
step() {
  step_done
  STEP_NAME="${1%% (*}" STEP_START=$SECONDS
  STEP_NAME="${STEP_NAME%%:*}"
  printf '\n\033[1m== %s\033[0m\n' "$*"
}

step "setup (scripts/setup.sh)"
bash scripts/setup.sh
export PATH="$PWD/.tools/bin:$PWD/node_modules/.bin:$PATH"
export CARGO_PROFILE_DEV_DEBUG=0 TRUNK_SKIP_VERSION_CHECK=true

step "formatting (cargo fmt --check)"
cargo fmt --all -- --check

step "lints (clippy, warnings are errors)"
cargo clippy -p locklab-engine -p locklab -p locklab-conformance -p locklab-live -p locklab-clients -p locklab-servers --all-targets -- -D warnings
cargo clippy -p locklab-frontend --target wasm32-unknown-unknown --all-targets -- -D warnings

step "engine, clients and CLI tests (native)"
cargo test -p locklab-engine -p locklab-conformance -p locklab-live -p locklab-clients -p locklab-servers
cargo test -p locklab --bins --test cli

# Alone: it mostly waits on the wall clock, but the steps below run beside
# it, even at idle priority (SCHED_IDLE), doubled its time (16 min 47 s
# against 8 min 10 s): its runs were stalled past their scales' allowances
# more often and played again slower (docs/bench.md). Each case's line
# (its scale, its time, and what stalled it) is printed.
step "live mode: every built-in and fixture it plays, side by side on real servers, gives its simulated verdict or is inconclusive and does slower (cli/tests/live.rs)"
cargo test -p locklab --test live -- --nocapture

step "conformance: the engine's Redis, PostgreSQL and etcd models against real servers (writes docs/conformance.md)"
cargo run -q -p locklab-conformance

step "fuzzing: a minute of mutated scenarios and links (engine/examples/fuzz.rs)"
# A fixed seed, so a failure here replays with the command the fuzzer prints.
cargo run -q --release --example fuzz -p locklab-engine -- --seed 1 --seconds 60

step "engine in wasm32: the same event logs, byte for byte"
# No -q here: cargo passes it to wasm-bindgen-test-runner, which refuses it.
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test -p locklab-engine --target wasm32-unknown-unknown --test wasm_determinism

if [ -f scripts/test-web.sh ]; then
  step "the lab in the browser (size budget, component and end-to-end tests)"
  bash scripts/test-web.sh
fi

step_done
total=$((SECONDS - TEST_START))
printf '\n\033[1m== all tests passed in %d min %02d s\033[0m\n' $((total / 60)) $((total % 60))
printf '%s\n' "${TIMES[@]}"
