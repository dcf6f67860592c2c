// The CUDA twin of vadd.cl.
extern "C" __global__ void __launch_bounds__(WG)
vadd(const float *__restrict__ a, const float *__restrict__ b, float *c, int n) {
  int first = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
#pragma unroll UNROLL
  for (int v = 0; v < VEC; v++)
    if (first + v < n) c[first + v] = a[first + v] + b[first + v];
}
