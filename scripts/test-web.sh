#!/usr/bin/env bash
# Tests the browser lab: builds the release dist/ with Trunk (offline), checks
# the gzip -9 size of the .wasm against its 300 KB budget, runs the component
# tests (wasm-bindgen-test in headless Chromium) and the end-to-end tests
# (playwright-core driving Debian's Chromium against dist/ on localhost).
# Needs what scripts/setup.sh installs; uses no network. Exits non-zero on
# any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.tools/bin:$PWD/node_modules/.bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-0}"
# 300 KB, counted as 300,000 bytes.
WASM_GZIP_BUDGET_BYTES=300000
TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

# The browsers (Chromium, chromedriver) and the end-to-end tests keep their
# profiles and files in a folder of this run's, removed however it ends.
scratch=$(mktemp -d)
export TMPDIR="$scratch"
trap 'rm -rf "$scratch"' EXIT

step() { printf '\n\033[1m-- %s\033[0m\n' "$*"; }
fail() { printf '\033[1;31mtest-web: %s\033[0m\n' "$*" >&2; exit 1; }

for tool in trunk wasm-bindgen wasm-bindgen-test-runner wasm-opt chromium chromedriver node; do
  command -v "$tool" >/dev/null || fail "$tool is missing: run scripts/setup.sh"
done
[ -d node_modules/playwright-core ] || fail "playwright-core is missing: run scripts/setup.sh"

step "release build of the lab's pages (scripts/build-web.sh: trunk, offline)"
bash scripts/build-web.sh

step "size budget of each page's .wasm and the worker's (gzip -9)"
# Every .wasm a page loads first (the lab's, the quiz's, the explorer's) and
# the worker's has the same budget: each is what one visit waits for.
shopt -s nullglob
wasm_files=(dist/*.wasm)
[ "${#wasm_files[@]}" -ge 1 ] || fail "no .wasm in dist/"
for wasm in "${wasm_files[@]}"; do
  raw_bytes=$(wc -c <"$wasm")
  gzip_bytes=$(gzip -9 -c "$wasm" | wc -c)
  printf '%s: %s bytes raw, %s bytes gzip -9 (budget %s)\n' "${wasm#dist/}" "$raw_bytes" "$gzip_bytes" "$WASM_GZIP_BUDGET_BYTES"
  [ "$gzip_bytes" -le "$WASM_GZIP_BUDGET_BYTES" ] || fail "${wasm#dist/} is over its gzip budget"
done

step "component tests (wasm-bindgen-test in headless Chromium)"
# No -q: cargo would pass it on to wasm-bindgen-test-runner, which refuses it.
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  CHROMEDRIVER="$(command -v chromedriver)" \
  WASM_BINDGEN_TEST_WEBDRIVER_JSON="$PWD/tests/webdriver.json" \
  WASM_BINDGEN_TEST_TIMEOUT=120 \
  cargo test -p locklab-frontend --target wasm32-unknown-unknown --test components --test quiz --test story

step "end-to-end tests (headless Chromium against dist/)"
cargo build -q --bin locklab
rm -f tests/screenshots/bench.json
LOCKLAB_BIN="$TARGET_DIR/debug/locklab" node --test --test-concurrency=1 --test-reporter=spec tests/e2e/
printf '\nscreenshots and benchmark figures: tests/screenshots/\n'
[ -f tests/screenshots/bench.json ] && cat tests/screenshots/bench.json
printf '\n\033[1mtest-web: all passed\033[0m\n'
