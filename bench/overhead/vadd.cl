// Vector addition with VEC elements per work-item, unrolled UNROLL times
// in a loop over the work-item's elements (UNROLL does not change the
// result: it multiplies the configurations, as a real space does).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vadd(__global const float *a, __global const float *b, __global float *c, int n) {
  int first = get_global_id(0) * VEC;
#pragma unroll UNROLL
  for (int v = 0; v < VEC; v++)
    if (first + v < n) c[first + v] = a[first + v] + b[first + v];
}
