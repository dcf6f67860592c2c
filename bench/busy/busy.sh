#!/bin/sh
# bench/busy/busy.sh [ARGS...]: issue 45's item 3, examples/tune_reduction.lua on a CPU device
# (PoCL) idle and on a busy machine: beside four busy loops and a compile loop (cc -O2 of
# core/eval/measure.c again and again), all at the tuning's priority and on any processor. ARGS
# go to the example (default: --search=random --seed=1 --count=30, the same 30 configurations in
# every run). Each run prints its wall time, the load average at its end and summary.lua's line
# (configurations, timed runs, those cut at 10 by a busy machine, the best), and the line that says
# the machine is busy, if any (with the threads PoCL was given).
# KTLUA: the ktlua that tunes (default build/ktlua; another build is the "before");
# SUMMARY_KTLUA: the one that reads the results (default build/ktlua). LOADS: "idle busy"
# (default), the runs to make, in order. KEEP: a folder that keeps each run's results and output
# (LOAD.json, LOAD.out). A run of its own first warms PoCL's kernel cache.
set -u
cd "$(dirname "$0")/../.."
KTLUA=${KTLUA:-build/ktlua}
SUMMARY_KTLUA=${SUMMARY_KTLUA:-build/ktlua}
LOADS=${LOADS:-idle busy}
[ $# -gt 0 ] || set -- --search=random --seed=1 --count=30
tmp=$(mktemp -d)
pids=
stop_load() { [ -n "$pids" ] && kill $pids 2>/dev/null; wait 2>/dev/null; pids=; }
trap 'stop_load; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
start_load() {
  for i in 1 2 3 4; do sh -c 'while :; do :; done' & pids="$pids $!"; done
  sh -c "while :; do cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Icore/base -Icore/device \
    -Icore/eval -Icore/results -Icore/space -Icore/search -Icore/models -Icore/db -Icore/multi \
    -Icore/probes -c core/eval/measure.c -o $tmp/m.o 2>/dev/null; done" & pids="$pids $!"
  sleep 20 # the load average's first minute climbs towards it
}
KTLUA_CACHE=$tmp/warm "$KTLUA" examples/tune_reduction.lua "$@" >/dev/null 2>&1
for load in $LOADS; do
  [ "$load" = busy ] && start_load
  t0=$(date +%s.%N)
  KTLUA_CACHE=$tmp/$load "$KTLUA" examples/tune_reduction.lua --progress \
    --output="$tmp/$load.json" "$@" > "$tmp/$load.out" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  loadavg=$(cut -d' ' -f1 /proc/loadavg)
  stop_load
  printf '%s: exit %d, wall %.1f s, load average %s; ' "$load" "$rc" \
    "$(echo "$t1 - $t0" | bc)" "$loadavg"
  "$SUMMARY_KTLUA" bench/busy/summary.lua "$tmp/$load.json"
  grep -m1 "machine is busy" "$tmp/$load.out"
  [ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$tmp/$load.json" "$tmp/$load.out" "$KEEP/"
done
