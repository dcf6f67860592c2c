// Vector addition: each thread adds N consecutive elements.
// WG (block size) and VEC (elements per thread) come from the tuner as
// macros. The tuning script names the kernel "vadd<VEC>", so NVRTC
// instantiates the template with the VEC of each configuration.

// N floats loaded and stored at once (16-byte accesses for N >= 4).
template <int N> struct alignas(4 * N) floats {
  float v[N];
};

template <int N>
__global__ void __launch_bounds__(WG)
vadd(const floats<N> *__restrict__ a, const floats<N> *__restrict__ b,
     floats<N> *__restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i * N < n) {
    floats<N> x = a[i], y = b[i], z;
#pragma unroll
    for (int k = 0; k < N; k++) z.v[k] = x.v[k] + y.v[k];
    c[i] = z;
  }
}
