// A matrix transpose, out = in^T (n x n), written for
// bench/searchers/record/spaces.lua, one source for CUDA and OpenCL. A block
// moves a (block_size_y tile_size_y) x (block_size_x tile_size_x) tile; each
// thread reads tile_size_y x tile_size_x elements strided by the block.
// Without use_shared it writes them straight to their places (the writes
// strided); with it the block stages the tile in shared (local) memory, with
// a padded row when padding, and writes the transposed tile along its rows.
// Stages over 48 KiB do not compile: those configurations stay in the space
// as failed (an invalid region).
// KERNEL, GMEM, SMEM, SYNC, FUNC, LX, LY, GX, GY: portable.h, the prelude.

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
