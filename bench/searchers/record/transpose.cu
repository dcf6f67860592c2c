// A matrix transpose, out = in^T (n x n), written for
// bench/searchers/record/spaces.lua, one source for CUDA and OpenCL. A block
// moves a (block_size_y tile_size_y) x (block_size_x tile_size_x) tile; each
// thread reads tile_size_y x tile_size_x elements strided by the block.
// Without use_shared it writes them straight to their places (the writes
// strided); with it the block stages the tile in shared (local) memory, with
// a padded row when padding, and writes the transposed tile along its rows.
// Stages over 48 KiB do not compile: those configurations stay in the space
// as failed (an invalid region).
#ifdef __OPENCL_VERSION__
#define KERNEL __kernel
#define GMEM __global
#define SMEM __local
#define SYNC() barrier(CLK_LOCAL_MEM_FENCE)
#define LX ((int)get_local_id(0))
#define LY ((int)get_local_id(1))
#define GX ((int)get_group_id(0))
#define GY ((int)get_group_id(1))
#else
#define KERNEL extern "C" __global__
#define GMEM
#define SMEM __shared__
#define SYNC() __syncthreads()
#define LX ((int)threadIdx.x)
#define LY ((int)threadIdx.y)
#define GX ((int)blockIdx.x)
#define GY ((int)blockIdx.y)
#endif

#define BH (block_size_y * tile_size_y)
#define BW (block_size_x * tile_size_x)
#define NT (block_size_x * block_size_y)

KERNEL void transpose(GMEM float *out, GMEM const float *in, int n) {
  int y0 = GY * BH, x0 = GX * BW;
#if use_shared
  SMEM float s[BH][BW + padding];
  for (int j = 0; j < tile_size_y; j++)
    for (int i = 0; i < tile_size_x; i++) {
      int ly = LY + j * block_size_y, lx = LX + i * block_size_x;
      s[ly][lx] = in[(y0 + ly) * n + x0 + lx];
    }
  SYNC();
  for (int e = LY * block_size_x + LX; e < BH * BW; e += NT) {
    int r = e / BH, c = e % BH; /* out's row x0 + r, column y0 + c */
    out[(x0 + r) * n + y0 + c] = s[c][r];
  }
#else
  for (int j = 0; j < tile_size_y; j++)
    for (int i = 0; i < tile_size_x; i++) {
      int y = y0 + LY + j * block_size_y, x = x0 + LX + i * block_size_x;
      out[x * n + y] = in[y * n + x];
    }
#endif
}
