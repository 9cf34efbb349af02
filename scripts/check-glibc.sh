#!/usr/bin/env bash
# Fails when a Linux binary needs a newer C or C++ runtime than glibc 2.28
# systems ship. Node 24's own Linux builds need glibc 2.28, so an addon that
# needs more would not load on hosts that run Node 24 (RHEL 8 and its
# rebuilds, Debian 10). Their libstdc++ comes from GCC 8 (GLIBCXX_3.4.25,
# CXXABI_1.3.11), and so does their libgcc_s (GCC_7.0.0).
#
#   scripts/check-glibc.sh target/cross/ale.linux-x64-gnu.node ...
#
# Reads each file's version references (what the dynamic loader must find,
# per library) with llvm-objdump from rustup's llvm-tools, as
# scripts/cross-build.sh does, or with llvm-objdump or binutils' objdump from
# PATH (OBJDUMP=... chooses). A musl binary has no such references and passes.
set -euo pipefail

[ $# -gt 0 ] || { echo "usage: $0 <file>..." >&2; exit 2; }

# The highest version each prefix may reach.
floor() {
  case $1 in
    GLIBC) echo 2.28 ;;
    GLIBCXX) echo 3.4.25 ;;
    CXXABI) echo 1.3.11 ;;
    GCC) echo 7.0.0 ;;
  esac
}

objdump=${OBJDUMP:-}
if [ -z "$objdump" ]; then
  if command -v rustc >/dev/null; then
    candidate="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-objdump"
    [ -x "$candidate" ] && objdump=$candidate
  fi
  [ -n "$objdump" ] || objdump=$(command -v llvm-objdump || command -v objdump || true)
  [ -n "$objdump" ] || { echo "check-glibc: no llvm-objdump or objdump (rustup component add llvm-tools)" >&2; exit 2; }
fi

# Whether version $1 is above version $2.
above() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n 1)" = "$1" ]; }

status=0
for file in "$@"; do
  headers=$("$objdump" -p "$file") || { echo "$file: $objdump cannot read it" >&2; status=1; continue; }
  needed=$(awk '$1 == "NEEDED" {print $2}' <<<"$headers" | paste -sd ' ' -)
  # Lines such as "    0x069691b4 0x00 06 GLIBC_2.34" under "Version References:".
  versions=$(awk '/^Version References:/ {on = 1; next} on && /^[^ ]/ {on = 0} on && NF == 4 {print $4}' <<<"$headers")
  problems=''
  highest=''
  for prefix in GLIBC GLIBCXX CXXABI GCC; do
    top=$(grep -E "^${prefix}_[0-9]" <<<"$versions" | sed "s/^${prefix}_//" | sort -V | tail -n 1 || true)
    [ -n "$top" ] || continue
    highest="$highest ${prefix}_$top"
    if above "$top" "$(floor "$prefix")"; then
      problems="$problems ${prefix}_$top (at most ${prefix}_$(floor "$prefix"))"
    fi
  done
  # A private interface is tied to one glibc build.
  for private in $(grep -E '_PRIVATE$' <<<"$versions" | sort -u || true); do
    problems="$problems $private"
  done
  cxx='libstdc++ not needed'
  case " $needed " in *" libstdc++.so"*) cxx='needs libstdc++' ;; esac
  summary="NEEDED: ${needed:-none}; highest:${highest:- none}; $cxx"
  if [ -n "$problems" ]; then
    echo "$file: FAIL: needs$problems. $summary" >&2
    status=1
  else
    echo "$file: ok. $summary"
  fi
done
exit $status
