// A 2-D five-point stencil, one Jacobi step out = 0.2 (centre + four
// neighbours) on an n x n grid (outside it: zero), written for
// bench/searchers/record/spaces.lua, one source for CUDA and OpenCL. Each
// thread computes tile_size_y x tile_size_x points: strided by the block in
// x (coalesced), and in y strided too or, with tile_contig_y, adjacent rows
// (whose neighbours it then shares between them). With use_shared the block
// first stages its tile and a halo of one point in shared (local) memory,
// with a padded row when padding. Stages over 48 KiB do not compile: those
// configurations stay in the space as failed (an invalid region).
// KERNEL, GMEM, SMEM, SYNC, FUNC, LX, LY, GX, GY: portable.h, the prelude.

#define BH (block_size_y * tile_size_y)
#define BW (block_size_x * tile_size_x)
#define NT (block_size_x * block_size_y)
#if tile_contig_y
#define ROW(j) (LY * tile_size_y + (j))
#else
#define ROW(j) (LY + (j) * block_size_y)
#endif

#if !use_shared
FUNC float at(GMEM const float *in, int n, int y, int x) {
  return y >= 0 && y < n && x >= 0 && x < n ? in[y * n + x] : 0.0f;
}
#endif

KERNEL void stencil(GMEM float *out, GMEM const float *in, int n) {
  int y0 = GY * BH, x0 = GX * BW;
#if use_shared
  SMEM float s[BH + 2][BW + 2 + padding];
  for (int e = LY * block_size_x + LX; e < (BH + 2) * (BW + 2); e += NT) {
    int r = e / (BW + 2), c = e % (BW + 2), y = y0 + r - 1, x = x0 + c - 1;
    s[r][c] = y >= 0 && y < n && x >= 0 && x < n ? in[y * n + x] : 0.0f;
  }
  SYNC();
#endif
  for (int j = 0; j < tile_size_y; j++)
    for (int i = 0; i < tile_size_x; i++) {
      int ly = ROW(j), lx = LX + i * block_size_x, y = y0 + ly, x = x0 + lx;
#if use_shared
      float v = s[ly + 1][lx + 1] + s[ly][lx + 1] + s[ly + 2][lx + 1] + s[ly + 1][lx] + s[ly + 1][lx + 2];
#else
      float v = at(in, n, y, x) + at(in, n, y - 1, x) + at(in, n, y + 1, x) + at(in, n, y, x - 1) +
                at(in, n, y, x + 1);
#endif
      out[y * n + x] = 0.2f * v;
    }
}
