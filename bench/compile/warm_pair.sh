#!/bin/sh
# bench/compile/warm_pair.sh: issue 26's warm target for two builds, alternately, each tuning the
# first of a fresh process: BAT's Xgemm (GEMM-CAFF.json), 200 random configurations, 7 timed runs,
# every program from the disk cache that a cold tuning of the same build filled first. Two bundles
# (make bundle) at build/$A and build/$B, each with BAT's tree as bat/ (bat/benchmarks/GEMM
# suffices); from the checkout's root on the GPU machine:
#   A=xfer-base B=xfer ROUNDS=3 sh bench/compile/warm_pair.sh
set -u
: "${A:?the first build's folder under build/}" "${B:?the second's}"
ROUNDS=${ROUNDS:-3}
export CUDA_CACHE_DISABLE=1
root=$(pwd)
tmp=$(mktemp -d)
nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
"build/$A/ktlua" --devices >/dev/null 2>&1 # the machine's first CUDA initialisation
step() { # LABEL BUILD
  echo "== $1"
  (cd "$root/build/$2" && KTLUA_CACHE="$tmp/$2" timeout 150 ./ktlua bench/compile/t1.lua \
    --label="$1" --file=bat/benchmarks/GEMM/GEMM-CAFF.json)
}
step "$A cold" "$A"
step "$B cold" "$B"
i=1
while [ "$i" -le "$ROUNDS" ]; do
  step "$A warm $i" "$A"
  step "$B warm $i" "$B"
  i=$((i + 1))
done
rm -rf "$tmp"
