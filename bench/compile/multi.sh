#!/bin/sh
# bench/compile/multi.sh [N]: issue 26's target for several devices: the 2048^3 GEMM sample
# (bench/multi/multi.lua --only=sample, N random configurations, default 400) on every GPU
# against the first alone, in both orders, with the disk cache off so that neither tuning loads
# what the other compiled. From the bundle on a machine of several GPUs. ORDERS: which runs
# first, each in turn (default "one all"). WARM=1: the disk cache on instead, filled by one
# tuning first, so that no measured tuning compiles (what the devices give where compiles do
# not bound the tuning).
set -u
cd "$(dirname "$0")/../.."
KTLUA=${KTLUA:-./ktlua}
export CUDA_CACHE_DISABLE=1 KTLUA_CACHE=off
if [ "${WARM:-0}" = 1 ]; then
  KTLUA_CACHE=$(mktemp -d)
  echo "warm: the disk cache in $KTLUA_CACHE, filled by the first tuning"
fi
nproc
nvidia-smi --query-gpu=name --format=csv,noheader
"$KTLUA" --devices >/dev/null 2>&1 # the machine's first CUDA initialisation, paid once here
if [ "${WARM:-0}" = 1 ]; then
  echo "fill:"
  timeout 240 "$KTLUA" bench/multi/multi.lua --devices=gpu:all --only=sample --n="${1:-400}" --order=all
fi
for order in ${ORDERS:-one all}; do
  timeout 240 "$KTLUA" bench/multi/multi.lua --devices=gpu:all --only=sample --n="${1:-400}" --order=$order
done
