#!/bin/sh
# Installs valgrind from Debian's packages when it is missing (needs root,
# as scripts/services.sh does for the database servers). `npm run
# bench:footprint` counts what a cold call touches with its callgrind tool.
set -eu
if command -v valgrind >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "[valgrind] valgrind is missing, and installing it needs root: sudo apt-get install valgrind" >&2
  exit 1
fi
echo "[valgrind] installing valgrind from Debian's packages" >&2
apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >&2
