#!/usr/bin/env bash
# Builds every page of the browser lab into dist/ with Trunk (release, offline):
#   index.html   the lab (and its ?embed view)     -> dist/index.html
#   quiz.html    the quiz                          -> dist/quiz.html
#   explore.html the counterexample explorer       -> dist/explore.html
#   story.html   the post's night, step by step    -> dist/story.html
#   recorded.html a run recorded live, read-only   -> dist/recorded.html
# Each page is its own small wasm app over the same library, so the lab's
# first load stays inside its size budget; the heavy, on-demand work (the
# explorer's search, figure exports) runs in a Web Worker (locklab-worker),
# loaded only when asked for. Trunk builds one page per run and empties its
# dist folder first, so the other pages are built into their own folders and
# copied beside the lab (hashed names never collide; the worker and the
# shared scripts are the same files).
# Needs what scripts/setup.sh installs; uses no network.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.tools/bin:$PWD/node_modules/.bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-0}"
TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

trunk build index.html --release
for page in quiz explore story recorded; do
  [ -f "$page.html" ] || continue
  staging="$TARGET_DIR/pages/$page"
  trunk build "$page.html" --release --dist "$staging"
  mv "$staging/index.html" "dist/$page.html"
  cp -R "$staging/." dist/
done
# Each page's first screen into its HTML, drawn by its own wasm (the first
# paint needs no WebAssembly).
node scripts/prerender.mjs dist
