#!/usr/bin/env bash
# Installs everything locklab needs on a fresh machine of the project's kind, and
# nothing twice: each step checks whether its tool is already there at the pinned
# version. Only the package registries are used (the Rust, Debian and npm registries); nothing
# is downloaded from anywhere else, so it also works with no other network.
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.22.1
WASM_BINDGEN_VERSION=0.2.130

# Installed tools live in one cache per machine (LOCKLAB_TOOLS, default
# ~/.cache/locklab/tools) and .tools points at it, so a fresh clone on the same
# machine (CI's case) reuses them instead of building Trunk again.
TOOLS="${LOCKLAB_TOOLS:-$HOME/.cache/locklab/tools}"
mkdir -p "$TOOLS"
if [ -d .tools ] && [ ! -L .tools ]; then
  # An older checkout kept its tools in a plain folder: move them to the cache.
  cp -a .tools/. "$TOOLS"/ && rm -rf .tools
fi
[ -L .tools ] || ln -s "$TOOLS" .tools

say() { printf '\033[1msetup:\033[0m %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
if ! rustup component list --installed | grep -q '^clippy'; then rustup component add clippy; fi
if ! rustup component list --installed | grep -q '^rustfmt'; then rustup component add rustfmt; fi

if [ "${LOCKLAB_SKIP_WEB:-0}" != 1 ]; then
  if ! .tools/bin/trunk --version 2>/dev/null | grep -q "$TRUNK_VERSION"; then
    say "installing trunk $TRUNK_VERSION into .tools (about 7 minutes on 2 cores)"
    cargo install trunk --version "$TRUNK_VERSION" --locked --ignore-rust-version --root .tools
  fi
  if ! .tools/bin/wasm-bindgen --version 2>/dev/null | grep -q "$WASM_BINDGEN_VERSION"; then
    say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION into .tools"
    # Without --locked: its own lock file wants a webpki-roots the registry lacks.
    cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --root .tools
  fi
  if ! { [ -x node_modules/.bin/wasm-opt ] && [ -d node_modules/playwright-core ] && [ -d node_modules/axe-core ] \
    && [ -d node_modules/lighthouse ]; }; then
    say "installing npm packages (binaryen's wasm-opt, playwright-core, axe-core, lighthouse)"
    npm ci --no-audit --no-fund
  fi
  if ! { command -v chromium >/dev/null && command -v chromedriver >/dev/null; }; then
    say "installing Debian's chromium and chromium-driver"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  fi
  # Trunk builds offline (Trunk.toml): every crate the lab needs must already be here.
  cargo fetch --locked --quiet
fi
# The conformance suite (conformance/) and live mode (live/) start their own
# throwaway servers on loopback ports; they need the binaries, never the
# system services (Debian's etcd-server enables one under systemd, which
# these machines do not run).
missing_packages=()
command -v redis-server >/dev/null || missing_packages+=(redis-server)
[ -x /usr/lib/postgresql/15/bin/postgres ] || missing_packages+=(postgresql)
command -v etcd >/dev/null || missing_packages+=(etcd-server)
# The clients crate's etcd client (etcd-client) compiles etcd's gRPC protos
# when it builds: Debian's protoc, and the well-known protos it imports.
command -v protoc >/dev/null || missing_packages+=(protobuf-compiler)
[ -f /usr/include/google/protobuf/descriptor.proto ] || missing_packages+=(libprotobuf-dev)
if [ "${#missing_packages[@]}" -gt 0 ]; then
  say "installing Debian's ${missing_packages[*]} (for the conformance suite, live mode and the clients crate)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing_packages[@]}" >/dev/null
fi
say "ready"
