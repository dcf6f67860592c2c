// Sum of n floats: the CUDA twin of reduce.cl, with the same parameters
// (WG, VEC, UNBOUNDED_WG, WG_NUM, USE_ATOMICS) and the same launcher.

// Elements [j*VEC, j*VEC + VEC) of in, of which those below n count.
__device__ __forceinline__ float chunk(const float *__restrict__ in, unsigned j, unsigned n) {
  unsigned first = j * VEC;
  float s = 0.0f;
  if (first + VEC <= n) {
#pragma unroll
    for (int v = 0; v < VEC; v++) s += in[first + v];
  } else {
    for (unsigned e = first; e < n; e++) s += in[e];
  }
  return s;
}

extern "C" __global__ void __launch_bounds__(WG)
reduce(const float *__restrict__ in, float *out, unsigned n) {
  __shared__ float part[WG];
  unsigned lid = threadIdx.x, gid = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned chunks = (n + VEC - 1) / VEC;
  float s = 0.0f;
#if UNBOUNDED_WG == 1
  if (gid < chunks) s = chunk(in, gid, n);
#else
  for (unsigned j = gid; j < chunks; j += gridDim.x * blockDim.x) s += chunk(in, j, n);
#endif
  part[lid] = s;
  __syncthreads();
  for (unsigned stride = WG / 2; stride > 0; stride /= 2) {
    if (lid < stride) part[lid] += part[lid + stride];
    __syncthreads();
  }
  if (lid == 0) {
#if USE_ATOMICS == 1
    atomicAdd(out, part[0]);
#else
    out[blockIdx.x] = part[0];
#endif
  }
}
