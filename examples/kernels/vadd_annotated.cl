// The vector addition of OCLoptimizer's paper, annotated (doc/annotations.md):
// GENINIT/GENLIMIT/GENSTEP share the n iterations among the work-items
// (cyclically on a GPU, in consecutive blocks on a CPU), and the pragma
// makes the loop's unroll factor a tuning parameter, 1 to 8.
__kernel void vadd(__global const float *a, __global const float *b, __global float *c, int n) {
  #pragma oclopts unroll 1 8 1 tolerance 10 number 2
  for (int i = GENINIT(n); i < GENLIMIT(n); i += GENSTEP(n))
    c[i] = a[i] + b[i];
}
