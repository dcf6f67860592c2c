// A 2-D convolution (15x15 filter unless FW and FH say) of the newer benchmark_hub kind, written
// for bench/searchers/record/conv2d.lua: each thread computes a tile of
// tile_size_x by tile_size_y outputs; the input comes through shared memory
// (use_shmem, with a padded row when use_padding) or straight from global
// memory (through the read-only cache when read_only); the filter is read
// from constant memory (use_cmem; its values are baked into the source as
// CFILTER) or from global memory. Large tiles of shared memory do not
// compile (over 48 KiB): those configurations stay in the space as failed.
#ifndef FW /* the filter's size: the recording script may say */
#define FW 15
#define FH 15
#endif
#define TILE_W (block_size_x * tile_size_x)
#define TILE_H (block_size_y * tile_size_y)
#define SH_W (TILE_W + FW - 1)
#define SH_H (TILE_H + FH - 1)
#if use_padding
#define SH_PITCH (SH_W | 1) /* an odd pitch: columns fall in different banks */
#else
#define SH_PITCH SH_W
#endif

#if read_only
#define LOAD(p) __ldg(p)
#else
#define LOAD(p) (*(p))
#endif

#if use_cmem
__constant__ float cfilter[FW * FH] = {CFILTER};
#define FILT(i) cfilter[i]
#else
#define FILT(i) LOAD(filter + (i))
#endif

// out: w x h; in: (w + FW - 1) x (h + FH - 1), row pitch w + FW - 1.
extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y)
conv2d(float *out, const float *__restrict__ in, const float *__restrict__ filter, int w, int h) {
  int tx = threadIdx.x, ty = threadIdx.y, iw = w + FW - 1;
  int x0 = blockIdx.x * TILE_W, y0 = blockIdx.y * TILE_H;
  float sum[tile_size_y][tile_size_x];
#pragma unroll
  for (int i = 0; i < tile_size_y; i++)
#pragma unroll
    for (int j = 0; j < tile_size_x; j++) sum[i][j] = 0.0f;
#if use_shmem
  __shared__ float sh[SH_H * SH_PITCH];
  for (int i = ty; i < SH_H; i += block_size_y)
    for (int j = tx; j < SH_W; j += block_size_x) {
      int gy = y0 + i, gx = x0 + j;
      sh[i * SH_PITCH + j] = gy < h + FH - 1 && gx < iw ? LOAD(in + gy * iw + gx) : 0.0f;
    }
  __syncthreads();
  for (int fy = 0; fy < FH; fy++)
    for (int fx = 0; fx < FW; fx++) {
      float f = FILT(fy * FW + fx);
#pragma unroll
      for (int i = 0; i < tile_size_y; i++)
#pragma unroll
        for (int j = 0; j < tile_size_x; j++)
          sum[i][j] += sh[(ty + i * block_size_y + fy) * SH_PITCH + tx + j * block_size_x + fx] * f;
    }
#else
  for (int fy = 0; fy < FH; fy++)
    for (int fx = 0; fx < FW; fx++) {
      float f = FILT(fy * FW + fx);
#pragma unroll
      for (int i = 0; i < tile_size_y; i++) {
        int y = min(y0 + ty + i * block_size_y, h - 1);
#pragma unroll
        for (int j = 0; j < tile_size_x; j++) {
          int x = min(x0 + tx + j * block_size_x, w - 1);
          sum[i][j] += LOAD(in + (y + fy) * iw + x + fx) * f;
        }
      }
    }
#endif
#pragma unroll
  for (int i = 0; i < tile_size_y; i++)
#pragma unroll
    for (int j = 0; j < tile_size_x; j++) {
      int y = y0 + ty + i * block_size_y, x = x0 + tx + j * block_size_x;
      if (y < h && x < w) out[y * w + x] = sum[i][j];
    }
}
