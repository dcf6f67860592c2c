#!/bin/sh
# bench/compile/checks_gpu.sh: the input checks between configurations, main against a branch
# (bench/RESULTS.md, "Input checks in one round trip (issue 26)"): two bundles (make bundle) copied
# to build/xfer-checks-base and build/xfer-checks, each with BAT's tree as bat/ (bat/benchmarks/GEMM
# suffices), run from the checkout's root on the GPU machine:  COUNT=50 sh bench/compile/checks_gpu.sh
set -u
COUNT=${COUNT:-60}
export CUDA_CACHE_DISABLE=1
root=$(pwd)
nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
build/xfer-checks/ktlua --devices >/dev/null 2>&1
step() { # LABEL DIR CACHE ARGS...
  label=$1 dir=$2 cache=$3; shift 3
  echo "== $label"
  (cd "$root/build/$dir" && KTLUA_CACHE=$cache timeout 100 ./ktlua bench/compile/t1.lua --label="$label" \
    --file=bat/benchmarks/GEMM/GEMM-CAFF.json --count="$COUNT" "$@")
}
step base-cold xfer-checks-base /tmp/cb
step new-cold xfer-checks /tmp/cn
step base-warm xfer-checks-base /tmp/cb
step new-warm xfer-checks /tmp/cn
step base-warm-always xfer-checks-base /tmp/cb --check_inputs=always
step new-warm-always xfer-checks /tmp/cn --check_inputs=always
step base-warm2 xfer-checks-base /tmp/cb
step new-warm2 xfer-checks /tmp/cn
