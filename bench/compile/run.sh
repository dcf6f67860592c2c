#!/bin/sh
# bench/compile/run.sh DEVICE...: for each device, compile throughput against compile threads in
# one process and against compiler processes (bench/compile/compile.lua), then the GEMM-200
# tuning (bench/pipeline/gemm.lua) without compiler processes and with the default pool, each
# cold (an empty disk cache) and again with the cache it filled (warm). The drivers' own caches
# are turned off (PoCL's, NVIDIA's), so that cold is cold.
#   K: most threads (default: the cores); N: programs per measurement (default 256);
#   GEMM: more arguments for bench/pipeline/gemm.lua (e.g. "--size=512 --n=50" on a CPU).
# Example (the GPU machine): bench/compile/run.sh cuda:0 opencl:0
set -e
cd "$(dirname "$0")/../.."
KTLUA=${KTLUA:-build/ktlua}
export POCL_KERNEL_CACHE=0 CUDA_CACHE_DISABLE=1
for dev in "$@"; do
  KTLUA_CACHE=off "$KTLUA" bench/compile/compile.lua --device="$dev" --n="${N:-256}" \
    --k="${K:-$(nproc)}"
  for workers in 0 -1; do
    dir=$(mktemp -d)
    echo "== GEMM-200 on $dev, compile_workers $workers (-1: the default), cold"
    KTLUA_CACHE=$dir "$KTLUA" bench/pipeline/gemm.lua --device="$dev" --workers=$workers $GEMM
    echo "== the same, warm"
    KTLUA_CACHE=$dir "$KTLUA" bench/pipeline/gemm.lua --device="$dev" --workers=$workers $GEMM
    rm -rf "$dir"
  done
done
