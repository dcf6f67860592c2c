#!/bin/sh
# bench/compile/outliers.sh [BAT]: issue 41's item 4 (compile outliers) on one CUDA device, each
# tuning the first of a fresh process with an empty disk cache and NVIDIA's compile cache off
# (bench/compile/t1.lua), BAT's convolution (15x15 filter), random search:
#   - 20 configurations (seed 1) as before item 4: no outlier rule, static shared memory not
#     pruned (--outlier=false --noprune), so ptxas's refusals compile;
#   - the same with the defaults (compile_outlier = 10, shared memory past 48 KiB pruned);
#   - stop = {count = 10}, the defaults, seeds 1 to 3.
# The targets, on each run's "outliers:" line: 20 configurations, wall / longest <= 1.2; count =
# 10, the tuning over (the wall) soon after the last result, whatever compiles were still
# running (abandoned) or set aside (deferred).
# BAT: BAT's tree (default: bat, as the bundle holds it). KTLUA: the ktlua to run. DEVICE: the
# device (default cuda:0).
#   bench/compile/outliers.sh bat          (from the bundle, on the GPU machine)
set -u
cd "$(dirname "$0")/../.."
KTLUA=${KTLUA:-./ktlua}
BAT=${1:-bat}
DEVICE=${DEVICE:-cuda:0}
export CUDA_CACHE_DISABLE=1
tmp=$(mktemp -d)
conv=$BAT/benchmarks/convolution/convolution-CAFF.json
step() { # LABEL ARGS...: one tuning, at most 300 s, with a disk cache of its own
  label=$1
  shift
  echo "== $label"
  KTLUA_CACHE=$tmp/$label timeout 300 "$KTLUA" bench/compile/t1.lua --device="$DEVICE" \
    --label="$label" --file="$conv" --each "$@"
}
nproc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
"$KTLUA" --devices >/dev/null 2>&1 # the machine's first CUDA initialisation, paid once here
step conv20-before --count=20 --outlier=false --noprune
step conv20 --count=20
for seed in 1 2 3; do step conv10-seed$seed --count=10 --seed=$seed; done
rm -rf "$tmp"
