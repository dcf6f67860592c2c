// portable.h: what lets one kernel source of bench/searchers/record build
// through CUDA (NVRTC) and through OpenCL alike; the families of record/
// written for this give it as their kernels' prelude (record/lib.lua).
#define PRAGMA_(x) _Pragma(#x)
#define UNROLL(n) PRAGMA_(unroll n) /* #pragma unroll n, n a macro expanded first */
#ifdef __OPENCL_VERSION__
#define KERNEL __kernel
#define GMEM __global
#define SMEM __local
#define SPTR __local /* a pointer parameter to shared (local) memory */
#define CMEM __constant
#define SYNC() barrier(CLK_LOCAL_MEM_FENCE)
#define FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#define FUNC static inline
#define LX ((int)get_local_id(0))
#define LY ((int)get_local_id(1))
#define LZ ((int)get_local_id(2))
#define GX ((int)get_group_id(0))
#define GY ((int)get_group_id(1))
#define GZ ((int)get_group_id(2))
#define NGX ((int)get_num_groups(0))
#define ATOMIC_INC(p) atomic_inc(p)
#define ATOMIC_ADD(p, v) atomic_add((p), (v))
#define RSQRT(x) rsqrt(x)
FUNC void atomic_add_f(volatile GMEM float *p, float v) {
  volatile GMEM unsigned *u = (volatile GMEM unsigned *)p;
  unsigned old = *u, seen;
  while ((seen = atomic_cmpxchg(u, old, as_uint(as_float(old) + v))) != old) old = seen;
}
#else
#define KERNEL extern "C" __global__
#define GMEM
#define SMEM __shared__
#define SPTR
#define CMEM __constant__
#define SYNC() __syncthreads()
#define FENCE() __threadfence()
#define FUNC static __device__ inline
#define LX ((int)threadIdx.x)
#define LY ((int)threadIdx.y)
#define LZ ((int)threadIdx.z)
#define GX ((int)blockIdx.x)
#define GY ((int)blockIdx.y)
#define GZ ((int)blockIdx.z)
#define NGX ((int)gridDim.x)
#define ATOMIC_INC(p) atomicAdd((p), 1u)
#define ATOMIC_ADD(p, v) atomicAdd((p), (v))
#define RSQRT(x) rsqrtf(x)
FUNC void atomic_add_f(volatile float *p, float v) { atomicAdd((float *)p, v); }
#endif
