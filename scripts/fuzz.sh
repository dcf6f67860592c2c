#!/usr/bin/env bash
# Long fuzzing: spec/fuzz_spec.lua under AddressSanitizer and UBSan with
# FUZZ_CASES cases per fuzzer (default 5000) from seed FUZZ_SEED (default:
# the time, printed). A case that fails or crashes is named by its seed
# and number; its files stay in build/fuzz (see spec/support/fuzz.lua).
# Rerun it alone with FUZZ_SEED=S FUZZ_CASE=N make fuzz. FUZZ_ONLY=NAME
# runs only the fuzzers whose names hold NAME (busted's --filter):
# FUZZ_ONLY=online the online fuzzer, FUZZ_ONLY=API the API fuzzer.
set -u -o pipefail
cd "$(dirname "$0")/.."
busted=$(command -v busted || echo /usr/bin/busted)
. scripts/sanitizers.sh
export KTLUA_FUZZ_SEED="${FUZZ_SEED:-$(date +%s)}"
export KTLUA_FUZZ_CASES="${FUZZ_CASES:-5000}"
if [ -n "${FUZZ_CASE:-}" ]; then export KTLUA_FUZZ_CASE="$FUZZ_CASE"; fi
filter=()
if [ -n "${FUZZ_ONLY:-}" ]; then filter=(--filter "$FUZZ_ONLY"); fi
export KTLUA_FUZZ_DIR="$(pwd)/build/fuzz"
rm -rf "$KTLUA_FUZZ_DIR"
mkdir -p "$KTLUA_FUZZ_DIR"
if [ -n "${FUZZ_CASE:-}" ]; then
  echo "== fuzzing: case $FUZZ_CASE of seed $KTLUA_FUZZ_SEED (build/asan/ktlua)"
else
  echo "== fuzzing with seed $KTLUA_FUZZ_SEED, $KTLUA_FUZZ_CASES cases per fuzzer (build/asan/ktlua)${FUZZ_ONLY:+, the fuzzers named *$FUZZ_ONLY*}"
fi
# (less the count of errors that the OpenCL compiler prints for the kernels
# made not to compile)
build/asan/ktlua "$busted" -o spec/support/output.lua "${filter[@]}" spec/fuzz_spec.lua 2>&1 |
  sed -u 's/[0-9]* errors\{0,1\} generated\.//'
status=$?
if [ "$status" -ne 0 ]; then
  echo "the case in flight (its seed and number, its files) is in $KTLUA_FUZZ_DIR:"
  head -n 2 "$KTLUA_FUZZ_DIR"/*.case
fi
exit "$status"
