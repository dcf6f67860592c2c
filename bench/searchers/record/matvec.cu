// A matrix-vector product y = A x (A: rows x ncols floats, row-major),
// written for bench/searchers/record/spaces.lua after the idea of
// examples/kernels/matvec_annotated.*, one source for CUDA and OpenCL
// (portable.h, the prelude). A team of block_size_x threads computes a row
// (one thread a row when 1), reading vector_width floats at a time along it;
// a block holds block_size_y teams, each computing tile_size_y rows strided
// by the block. The column loop is unrolled loop_unroll times. x is read from
// global memory or, with use_shared, staged whole in shared memory first. A
// team's partial sums meet in shared memory (team_reduce 0) or through warp
// shuffles (1, CUDA only).

#define NT (block_size_x * block_size_y)
#if vector_width == 1
#define VEC float
#define DOT(a, b) ((a) * (b))
#elif vector_width == 2
#define VEC float2
#define DOT(a, b) ((a).x * (b).x + (a).y * (b).y)
#else
#define VEC float4
#define DOT(a, b) ((a).x * (b).x + (a).y * (b).y + (a).z * (b).z + (a).w * (b).w)
#endif

KERNEL void matvec(GMEM float *y, GMEM const float *A, GMEM const float *x) {
  int row0 = GY * block_size_y * tile_size_y + LY;
#if use_shared
  SMEM VEC xs[ncols / vector_width];
  for (int i = LY * block_size_x + LX; i < ncols / vector_width; i += NT) xs[i] = ((GMEM const VEC *)x)[i];
  SYNC();
#define XV(i) xs[i]
#else
#define XV(i) ((GMEM const VEC *)x)[i]
#endif
  float acc[tile_size_y];
  for (int t = 0; t < tile_size_y; t++) acc[t] = 0.0f;
UNROLL(loop_unroll)
  for (int c = LX; c < ncols / vector_width; c += block_size_x) {
    VEC xv = XV(c);
    for (int t = 0; t < tile_size_y; t++)
      acc[t] += DOT(((GMEM const VEC *)(A + (size_t)(row0 + t * block_size_y) * ncols))[c], xv);
  }
#if block_size_x == 1
  for (int t = 0; t < tile_size_y; t++) y[row0 + t * block_size_y] = acc[t];
#elif team_reduce == 1
  for (int t = 0; t < tile_size_y; t++) {
    float s = acc[t];
    for (int o = block_size_x / 2; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o, block_size_x);
    if (LX == 0) y[row0 + t * block_size_y] = s;
  }
#else
  SMEM float part[NT];
  int me = LY * block_size_x + LX;
  for (int t = 0; t < tile_size_y; t++) {
    part[me] = acc[t];
    SYNC();
    for (int s = block_size_x / 2; s > 0; s >>= 1) {
      if (LX < s) part[me] += part[me + s];
      SYNC();
    }
    if (LX == 0) y[row0 + t * block_size_y] = part[me];
    SYNC();
  }
#endif
}
