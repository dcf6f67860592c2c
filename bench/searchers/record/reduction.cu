// A sum of n floats, written for bench/searchers/record/spaces.lua, one source
// for CUDA and OpenCL (portable.h, the prelude). A block of block_size_x
// threads sums block_size_x * work_per_thread vectors of vector_width floats:
// a thread's vectors strided by the block (coalesced) or, with contiguous,
// adjacent; its loop unrolled (loop_unroll) or not. The block's threads then
// meet in shared memory (block_reduce 0: a tree of halving steps) or through
// warp shuffles (1, CUDA only: within each warp, then over the warps). The
// blocks' sums meet through an atomic add to the sum (use_atomics) or, in a
// single pass still, through the partial sums: the last block to finish
// (an atomic count) adds them up.

#define NT block_size_x
#if vector_width == 1
#define VEC float
#define VSUM(v) (v)
#elif vector_width == 2
#define VEC float2
#define VSUM(v) ((v).x + (v).y)
#else
#define VEC float4
#define VSUM(v) ((v).x + (v).y + (v).z + (v).w)
#endif

// The block's sum of each thread's s, in thread 0 (part: NT floats of shared memory).
FUNC float block_sum(float s, SPTR float *part) {
#if block_reduce == 1
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if (LX % 32 == 0) part[LX / 32] = s;
  SYNC();
  s = LX < NT / 32 ? part[LX] : 0.0f;
  if (LX < 32)
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  return s;
#else
  part[LX] = s;
  SYNC();
  for (int stride = NT / 2; stride > 0; stride >>= 1) {
    if (LX < stride) part[LX] += part[LX + stride];
    SYNC();
  }
  return part[0];
#endif
}

// sum: 1 float (zero before); partial: a float per block; count: 1 (zero before).
KERNEL void reduction(GMEM float *sum, GMEM float *partial, GMEM unsigned *count, GMEM const float *in) {
  SMEM float part[NT];
  SMEM int last;
  GMEM const VEC *v = (GMEM const VEC *)in + GX * NT * work_per_thread;
  float s = 0.0f;
#if loop_unroll
#pragma unroll
#else
#pragma unroll 1
#endif
  for (int j = 0; j < work_per_thread; j++) {
#if contiguous
    s += VSUM(v[LX * work_per_thread + j]);
#else
    s += VSUM(v[LX + j * NT]);
#endif
  }
  s = block_sum(s, part);
#if use_atomics
  if (LX == 0) atomic_add_f(sum, s);
#else
  if (LX == 0) {
    partial[GX] = s;
    FENCE();
    last = ATOMIC_INC(count) == (unsigned)NGX - 1;
  }
  SYNC();
  if (last) {
    s = 0.0f;
    for (int i = LX; i < NGX; i += NT) s += ((volatile GMEM float *)partial)[i];
    s = block_sum(s, part);
    if (LX == 0) sum[0] = s;
  }
#endif
}
