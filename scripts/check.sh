#!/usr/bin/env bash
# Runs the busted specs with build/ktlua, then again with the build under
# AddressSanitizer and UndefinedBehaviorSanitizer (unless --quick), and ends
# with one line: "N passed, N failed".
set -u -o pipefail
cd "$(dirname "$0")/.."
busted=$(command -v busted || echo /usr/bin/busted)
handler=spec/support/output.lua
export KTLUA_DEVICE="${KTLUA_DEVICE:-}"

# $1: label, $2: executable. Prints the suite's output; sets passed/failed.
run_suite() {
  log=$(mktemp)
  "$2" "$busted" -o "$handler" spec 2>&1 | tee "$log"
  status=$?
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
  if [ -z "$line" ]; then
    echo "$1: the suite did not finish (see the output above)"
    p=0; f=1
  else
    p=${line%% passed*}
    f=${line#*, }; f=${f%% failed}
    # A clean count with a failing exit is a sanitizer report at exit.
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
      echo "$1: exited with status $status after the suite (see the output above)"
      f=1
    fi
  fi
  rm -f "$log"
  passed=$((passed + p)); failed=$((failed + f))
}

passed=0; failed=0
echo "== specs (build/ktlua)"
run_suite "specs" build/ktlua
if [ "${1:-}" != "--quick" ]; then
  echo "== specs under AddressSanitizer and UndefinedBehaviorSanitizer (build/asan/ktlua)"
  . scripts/sanitizers.sh
  run_suite "sanitized specs" build/asan/ktlua
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
