#!/bin/sh
# bench/compile/targets.sh [BAT]: issue 26's targets on one CUDA device, each tuning the first of
# a fresh process (bench/compile/t1.lua), NVIDIA's own compile cache off:
#   - BAT's Xgemm (GEMM-CAFF.json: gemm.cu, gemm_fast), 200 random configurations, 7 timed runs:
#     an empty disk cache with the default compiler processes, then warm (the cache it filled),
#     then an empty cache without compiler processes (compile_workers = 0);
#   - compile throughput against compiler processes, 1 to 16 (bench/compile/compile.lua);
#   - BAT's convolution (15x15 filter), 20 random configurations: compile_workers = 0 and no
#     disk cache (as before issue 26), then the defaults with an empty disk cache, then warm
#     (the programs, and the compiler's refusals, from the cache that filled).
# BAT: BAT's tree (default: bat, as the bundle holds it). KTLUA: the ktlua to run.
#   bench/compile/targets.sh bat          (from the bundle, on the GPU machine)
set -u
cd "$(dirname "$0")/../.."
KTLUA=${KTLUA:-./ktlua}
BAT=${1:-bat}
export CUDA_CACHE_DISABLE=1
tmp=$(mktemp -d)
gemm=$BAT/benchmarks/GEMM/GEMM-CAFF.json
conv=$BAT/benchmarks/convolution/convolution-CAFF.json
step() { # LABEL CACHE ARGS...: one tuning, at most 150 s
  label=$1 cache=$2
  shift 2
  echo "== $label"
  KTLUA_CACHE=$cache timeout 150 "$KTLUA" bench/compile/t1.lua --label="$label" "$@"
}
nproc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
"$KTLUA" --devices >/dev/null 2>&1 # the machine's first CUDA initialisation, paid once here
step gemm-cold-default "$tmp/g1" --file="$gemm"
step gemm-warm-default "$tmp/g1" --file="$gemm"
step gemm-cold-workers0 "$tmp/g0" --file="$gemm" --workers=0
echo "== compile throughput against compiler processes"
KTLUA_CACHE=off timeout 200 "$KTLUA" bench/compile/compile.lua --device=cuda:0 --n="${N:-96}" \
  --threads=1,2,4,8,16 --processes_only
step conv-before "$tmp/c0" --file="$conv" --count=20 --workers=0 --nocache
step conv-default "$tmp/c1" --file="$conv" --count=20
step conv-warm "$tmp/c1" --file="$conv" --count=20
rm -rf "$tmp"
