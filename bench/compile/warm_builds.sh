#!/bin/sh
# bench/compile/warm_builds.sh: issue 26's warm target for several builds, in turn, each tuning the
# first of a fresh process: BAT's Xgemm (GEMM-CAFF.json), 200 random configurations, 7 timed runs,
# every program from the disk cache that a cold tuning of the same build filled first. Bundles
# (make bundle) at build/NAME for each NAME in BUILDS, each with BAT's tree as bat/
# (bat/benchmarks/GEMM suffices); from the checkout's root on the GPU machine:
#   BUILDS="xfer-base xfer" ROUNDS=3 sh bench/compile/warm_builds.sh
set -u
: "${BUILDS:?the builds' folders under build/}"
ROUNDS=${ROUNDS:-3}
export CUDA_CACHE_DISABLE=1
root=$(pwd)
tmp=$(mktemp -d)
nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
first=${BUILDS%% *}
"build/$first/ktlua" --devices >/dev/null 2>&1 # the machine's first CUDA initialisation
step() { # LABEL BUILD
  echo "== $1"
  (cd "$root/build/$2" && KTLUA_CACHE="$tmp/$2" timeout 150 ./ktlua bench/compile/t1.lua \
    --label="$1" --file=bat/benchmarks/GEMM/GEMM-CAFF.json)
}
for b in $BUILDS; do step "$b cold" "$b"; done
i=1
while [ "$i" -le "$ROUNDS" ]; do
  for b in $BUILDS; do step "$b warm $i" "$b"; done
  i=$((i + 1))
done
rm -rf "$tmp"
