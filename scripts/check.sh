#!/usr/bin/env bash
# Runs the busted specs: every spec/*_spec.lua with build/ktlua and again
# with the build under AddressSanitizer and UndefinedBehaviorSanitizer
# (unless --quick), each file a job of its own, CHECK_JOBS at a time
# (default: processors + 1, as some jobs mostly wait), the longest first
# (by the last run's times, build/check-times, else those of a run kept
# in spec/support/check-times). Each file's output is
# printed whole once it has finished; then the ten slowest files; then
# what failed, named again; then one line: "N passed, N failed". The exit
# fails where a spec failed, a file did not finish or a sanitizer reported
# at exit. CHECK_SPECS="FILE ..."
# runs only those files.
#
# The plain and the sanitized runs compile the same kernels: they share
# PoCL's cache (POCL_CACHE_DIR, by default ~/.cache/pocl), so the second
# compile of a kernel is a lookup.
set -u -o pipefail
cd "$(dirname "$0")/.."
busted=$(command -v busted || echo /usr/bin/busted)
handler=spec/support/output.lua
times=build/check-times
export KTLUA_DEVICE="${KTLUA_DEVICE:-}"
count_line='^[0-9]+ passed, [0-9]+ failed$'

quick=false
[ "${1:-}" = "--quick" ] && quick=true
njobs=${CHECK_JOBS:-$(( $(nproc 2>/dev/null || echo 1) + 1 ))}

# What spec files build with make, made once here rather than by several
# files at once (bundle_spec, mpi_spec, cli_spec and install_spec run make).
env -u MAKEFLAGS -u MAKELEVEL make -s --no-print-directory all build/ktlua-nompi build/ktlua.pc ||
  { echo "the build failed"; echo "0 passed, 1 failed"; exit 1; }
$quick || [ -x build/asan/ktlua ] ||
  { echo "build/asan/ktlua is missing (make asan)"; echo "0 passed, 1 failed"; exit 1; }

work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
# ktlua's program cache on disk: the suite's own, shared by its jobs (the
# plain and the sanitized run load each other's programs), never the user's;
# CHECK_PROGRAM_CACHE=off runs the suite without it (bench/RESULTS.md compares).
export KTLUA_CACHE="${CHECK_PROGRAM_CACHE:-$work/program-cache}"

# The jobs, "estimate kind file" a line, longest first: a file's time in the
# last run (or the kept one), else its size in bytes / 300 (seconds, about),
# the sanitized run counted three times as long.
list_jobs() {
  local kind file est
  for kind in plain sanitized; do
    { [ "$kind" = sanitized ] && $quick; } && continue
    for file in ${CHECK_SPECS:-spec/*_spec.lua}; do
      est=$(cat "$times" spec/support/check-times 2>/dev/null |
            awk -v k="$kind" -v f="$file" '$2 == k && $3 == f { print $1; exit }')
      if [ -z "$est" ]; then
        est=$(( $(wc -c < "$file") / 300 ))
        [ "$kind" = sanitized ] && est=$(( est * 3 ))
      fi
      echo "$est $kind $file"
    done
  done | sort -k1,1 -g -r
}

# $1: job number, $2: kind, $3: file. Writes $work/$1.log, then $work/$1.done
# ("status seconds").
run_job() {
  local t0=$EPOCHREALTIME status
  # A file that hangs fails after CHECK_JOB_LIMIT seconds (default 1200)
  # instead of holding the suite (and CI) until its own limit.
  local limit="timeout --kill-after=10 ${CHECK_JOB_LIMIT:-1200}"
  if [ "$2" = sanitized ]; then
    (. scripts/sanitizers.sh && exec $limit build/asan/ktlua "$busted" -o "$handler" "$3") \
      > "$work/$1.log" 2>&1
  else
    $limit build/ktlua "$busted" -o "$handler" "$3" > "$work/$1.log" 2>&1
  fi
  status=$?
  echo "$status $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')" \
    > "$work/$1.tmp" && mv "$work/$1.tmp" "$work/$1.done"
}

passed=0; failed=0
declare -a kinds files reported
report() { # $1: job number; prints its output, counts it
  local i=$1 status secs line p f label tail=false
  read -r status secs < "$work/$i.done"
  label="${files[$i]} (${kinds[$i]})"
  line=$(grep -E "$count_line" "$work/$i.log" | tail -n 1)
  if [ -z "$line" ]; then
    p=0; f=1; tail=true
  else
    p=${line%% passed*}
    f=${line#*, }; f=${f%% failed}
  fi
  echo "== $label: ${line:-did not finish (exit status $status)}, $secs s"
  grep -v -E "$count_line" "$work/$i.log"
  # A clean count with a failing exit is a sanitizer report at exit.
  if [ -n "$line" ] && [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "$label: exited with status $status after its specs (see above)"
    f=1; tail=true
  fi
  passed=$((passed + p)); failed=$((failed + f))
  # CI keeps only the output's tail: the failures are named again there,
  # each with the start of its message.
  [ "$f" -gt 0 ] && { echo "$label: $f failed"
    awk '/^(Failure|Error) (→|->) / { n = 12 } /^[0-9]+ passed, [0-9]+ failed$/ { n = 0 } n > 0 && n-- { print substr($0, 1, 300) }' \
      "$work/$i.log"
    # one that did not finish, or a sanitizer's report at exit: its last lines
    if $tail; then tail -n 15 "$work/$i.log" | cut -c 1-300; fi
  } >> "$work/failures"
  echo "$secs ${kinds[$i]} ${files[$i]}" >> "$work/times"
  reported[$i]=1
}

report_finished() {
  local i
  for i in "${!kinds[@]}"; do
    [ -z "${reported[$i]:-}" ] && [ -e "$work/$i.done" ] && report "$i"
  done
}

mapfile -t queue < <(list_jobs)
for n in "${!queue[@]}"; do
  while [ "$(jobs -pr | wc -l)" -ge "$njobs" ]; do
    wait -n
    report_finished
  done
  read -r _ kind file <<< "${queue[$n]}"
  kinds[$n]=$kind; files[$n]=$file
  run_job "$n" "$kind" "$file" < /dev/null &
done
wait
report_finished

# This run's times first; a file not run this time (--quick) keeps its last.
cat "$work/times" "$times" 2>/dev/null > "$work/all-times"
mkdir -p build && awk '!seen[$2 " " $3]++' "$work/all-times" > "$times"
echo "== the ten slowest spec files (seconds)"
sort -k1,1 -g -r "$work/times" | head -n 10
[ -s "$work/failures" ] && { echo "== what failed"; cat "$work/failures"; }
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
