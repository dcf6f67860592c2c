#!/bin/sh
# bench/device/modload.sh: builds bench/device/modload.c and 48 small modules with nvcc in a
# temporary folder, and runs it lazy (the default) and eager. On a GPU machine with CUDA:
#   sh bench/device/modload.sh
set -e
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
cd "$dir"
echo 'extern "C" __global__ void spin(long long cycles) { long long t = clock64(); while (clock64() - t < cycles) ; }' > spin.cu
nvcc -cubin -arch=sm_90 -o spin.cubin spin.cu
i=0
while [ $i -lt 48 ]; do
  printf 'extern "C" __global__ void k(int x) { __shared__ float s[256]; s[threadIdx.x] = x * %d.0f; __syncthreads(); if (s[(threadIdx.x + 1) %% 32] < -1.0f) printf("%%d\\n", x); }\n' $i > k$i.cu
  nvcc -cubin -arch=sm_90 -o k$i.cubin k$i.cu &
  i=$((i + 1))
done
wait
nvcc -o modload "$here/modload.c" -lcuda -lpthread
cubins=$(i=0; while [ $i -lt 48 ]; do printf 'k%d.cubin ' $i; i=$((i + 1)); done)
echo "== lazy"; ./modload $cubins
echo "== eager"; CUDA_MODULE_LOADING=EAGER ./modload $cubins
rm -rf "$dir"
