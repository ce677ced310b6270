#!/usr/bin/env bash
# Sets up what is missing (scripts/setup.sh), builds the lab's pages into dist/
# (scripts/build-web.sh: Trunk, offline) and serves it on http://127.0.0.1:PORT (default 8080).
# dist/ is a plain static folder: any web server or static host can serve it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/.tools/bin:$PWD/node_modules/.bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-0}"
bash scripts/build-web.sh
exec node tests/e2e/serve.mjs dist "${PORT:-8080}"
