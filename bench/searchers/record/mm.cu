// A tiled matrix product C = A B (n x n, n a multiple of every tile) written
// for bench/searchers/record/spaces.lua, one source for CUDA and OpenCL so
// that the same space is recorded through both. Each thread computes
// tile_size_y x tile_size_x outputs strided by the block; with use_local the
// block stages tile_k columns of A and rows of B in shared (local) memory,
// with a padded row when padding. Stages over 48 KiB do not compile: those
// configurations stay in the space as failed (an invalid region).
// KERNEL, GMEM, SMEM, SYNC, FUNC, LX, LY, GX, GY: portable.h, the prelude.

#define BM (block_size_y * tile_size_y)
#define BN (block_size_x * tile_size_x)
#define NT (block_size_x * block_size_y)

KERNEL void mm(GMEM float *C, GMEM const float *A, GMEM const float *B, int n) {
  int row0 = GY * BM, col0 = GX * BN;
  float acc[tile_size_y][tile_size_x];
  for (int j = 0; j < tile_size_y; j++)
    for (int i = 0; i < tile_size_x; i++) acc[j][i] = 0.0f;
#if use_local
  SMEM float As[BM][tile_k + padding];
  SMEM float Bs[tile_k][BN + padding];
  int t = LY * block_size_x + LX;
  for (int k0 = 0; k0 < n; k0 += tile_k) {
    for (int e = t; e < BM * tile_k; e += NT) As[e / tile_k][e % tile_k] = A[(row0 + e / tile_k) * n + k0 + e % tile_k];
    for (int e = t; e < tile_k * BN; e += NT) Bs[e / BN][e % BN] = B[(k0 + e / BN) * n + col0 + e % BN];
    SYNC();
    for (int k = 0; k < tile_k; k++)
      for (int j = 0; j < tile_size_y; j++) {
        float a = As[LY + j * block_size_y][k];
        for (int i = 0; i < tile_size_x; i++) acc[j][i] += a * Bs[k][LX + i * block_size_x];
      }
    SYNC();
  }
#else
  for (int k = 0; k < n; k++)
    for (int j = 0; j < tile_size_y; j++) {
      float a = A[(row0 + LY + j * block_size_y) * n + k];
      for (int i = 0; i < tile_size_x; i++) acc[j][i] += a * B[k * n + col0 + LX + i * block_size_x];
    }
#endif
  for (int j = 0; j < tile_size_y; j++)
    for (int i = 0; i < tile_size_x; i++)
      C[(row0 + LY + j * block_size_y) * n + col0 + LX + i * block_size_x] = acc[j][i];
}
