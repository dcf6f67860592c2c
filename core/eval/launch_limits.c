/*
** launch_limits.c: launches the device refuses, from the sizes alone.
*/
#include "launch_limits.h"

#include <stdint.h>
#include <stdio.h>

static void list_sizes(char *text, size_t n, int dims, const size_t *v) {
  size_t at = 0;
  text[0] = '\0';
  for (int d = 0; d < dims && at < n; d++)
    at += (size_t)snprintf(text + at, n - at, "%s%zu", d ? " x " : "", v[d]);
}

/* OpenCL: CL_INVALID_GLOBAL_WORK_SIZE; PoCL ran 2^62 x 2^62 as something else. */
static bool too_many_items(const kt_device_info *dev, const char *kernel, const kt_sizes *s,
                           char *why, size_t n) {
  int64_t bits = kt_device_int(dev, "address_bits", 64);
  uint64_t most = bits > 0 && bits < 64 ? ((uint64_t)1 << bits) - 1 : UINT64_MAX, total = 1;
  bool over = false;
  for (int d = 0; d < 3; d++) over |= __builtin_mul_overflow(total, (uint64_t)s->items[d], &total);
  if (!over && total <= most) return false;
  char text[96];
  list_sizes(text, sizeof text, s->dims, s->items);
  snprintf(why, n, "kernel %s: %s work-items are more than the device launches (2^%d - 1 in "
           "all: its address bits)", kernel, text, bits > 0 && bits < 64 ? (int)bits : 64);
  return true;
}

/* CUDA's grid: cuLaunchKernel says only CUDA_ERROR_INVALID_VALUE. */
static bool grid_too_large(const kt_device_info *dev, const char *kernel, const kt_sizes *s,
                           char *why, size_t n) {
  const kt_prop *most = kt_device_prop(dev, "max_grid_dims");
  if (!most || most->type != KT_PROP_SIZES || !s->local[0]) return false;
  size_t grid[3] = {1, 1, 1};
  bool over = false;
  for (int d = 0; d < 3; d++) {
    size_t b = s->local[d] ? s->local[d] : 1;
    grid[d] = s->items[d] / b + (s->items[d] % b != 0);
    over |= d < most->nsizes && most->sizes[d] > 0 && grid[d] > (uint64_t)most->sizes[d];
  }
  if (!over) return false;
  char text[96], limit[96];
  size_t lim[3] = {0, 0, 0};
  for (int d = 0; d < most->nsizes && d < 3; d++) lim[d] = (size_t)most->sizes[d];
  list_sizes(text, sizeof text, 3, grid);
  list_sizes(limit, sizeof limit, most->nsizes < 3 ? most->nsizes : 3, lim);
  snprintf(why, n, "kernel %s: a grid of %s blocks exceeds the device's limit of %s", kernel,
           text, limit);
  return true;
}

kt_status kt_launch_limits(const kt_device_info *dev, const char *kernel, const kt_sizes *s,
                           char *why, size_t n) {
  if (too_many_items(dev, kernel, s, why, n)) return KT_LAUNCH_FAILED;
  if (grid_too_large(dev, kernel, s, why, n)) return KT_TOO_MANY_THREADS;
  return KT_OK;
}
