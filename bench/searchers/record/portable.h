// portable.h: what lets one kernel source of bench/searchers/record build
// through CUDA (NVRTC) and through OpenCL alike; record/spaces.lua gives it
// as the prelude of mm.cu, stencil.cu and transpose.cu.
#ifdef __OPENCL_VERSION__
#define KERNEL __kernel
#define GMEM __global
#define SMEM __local
#define SYNC() barrier(CLK_LOCAL_MEM_FENCE)
#define FUNC static inline
#define LX ((int)get_local_id(0))
#define LY ((int)get_local_id(1))
#define GX ((int)get_group_id(0))
#define GY ((int)get_group_id(1))
#else
#define KERNEL extern "C" __global__
#define GMEM
#define SMEM __shared__
#define SYNC() __syncthreads()
#define FUNC static __device__ inline
#define LX ((int)threadIdx.x)
#define LY ((int)threadIdx.y)
#define GX ((int)blockIdx.x)
#define GY ((int)blockIdx.y)
#endif
