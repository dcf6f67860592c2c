// cub_block_reduce.h: the little of CUB's cub::BlockReduce that BAT's expdist
// kernel uses (Sum, in thread 0 of the block), written for
// bench/searchers/record/expdist.lua so that the kernel compiles under NVRTC
// without the CUDA toolkit's headers: a sum within each warp by shuffles,
// then over the warps' sums, as CUB's BLOCK_REDUCE_WARP_REDUCTIONS does.
namespace cub {
enum BlockReduceAlgorithm { BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY, BLOCK_REDUCE_RAKING, BLOCK_REDUCE_WARP_REDUCTIONS };

template <typename T, int BLOCK_DIM_X, BlockReduceAlgorithm ALGORITHM = BLOCK_REDUCE_WARP_REDUCTIONS,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1>
struct BlockReduce {
  enum { THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z, WARPS = (THREADS + 31) / 32 };
  struct TempStorage { T warp[WARPS]; };
  TempStorage &storage;
  __device__ BlockReduce(TempStorage &s) : storage(s) {}
  __device__ T Sum(T v) {
    int t = threadIdx.x + BLOCK_DIM_X * (threadIdx.y + BLOCK_DIM_Y * threadIdx.z);
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (t % 32 == 0) storage.warp[t / 32] = v;
    __syncthreads();
    if (t < 32) {
      v = t < WARPS ? storage.warp[t] : T(0);
      for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    }
    return v;
  }
};
}
