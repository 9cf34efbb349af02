#!/usr/bin/env bash
# Fuzzes the envelope parser + decryption and the encrypt → decrypt round
# trip with cargo-fuzz (libFuzzer). New inputs go to fuzz/corpus/<target>
# (git-ignored); the committed seeds are in fuzz/seeds/<target>.
#
#   scripts/fuzz.sh 60                # 60 seconds per target (CI uses a short run)
#   scripts/fuzz.sh runs 10000000     # a fixed number of executions per target
#
# The stable toolchain is the only one here, so RUSTC_BOOTSTRAP=1 lets it
# accept the sanitizer flags cargo-fuzz passes.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
export RUSTC_BOOTSTRAP=1
if [ "${1:-}" = runs ]; then limit=(-runs="${2:?count}"); else limit=(-max_total_time="${1:-30}"); fi
for target in parse_decrypt roundtrip range_nodes; do
  mkdir -p "fuzz/corpus/$target"
  log="fuzz/corpus/$target.log"
  # A crash makes cargo fuzz exit non-zero; so does a build or sanitizer-flag
  # failure. Either fails this script (set -e via the `if !`).
  if ! cargo fuzz run --release "$target" "fuzz/corpus/$target" "fuzz/seeds/$target" -- "${limit[@]}" -print_final_stats=1 >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "fuzz target $target FAILED; see $log and fuzz/artifacts/$target" >&2
    exit 1
  fi
  grep -E '^(#[0-9]+ *DONE|stat::number_of_executed_units|stat::peak_rss)' "$log" || true
  # A run that executed nothing did not fuzz, whatever its exit status.
  units=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
  if [ -z "$units" ] || [ "$units" -eq 0 ]; then
    echo "fuzz target $target executed no input (number_of_executed_units: ${units:-missing}); see $log" >&2
    exit 1
  fi
done
