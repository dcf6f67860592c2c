// y = A x for an N x N matrix, in the form of OCLoptimizer's paper
// (doc/annotations.md): GENINIT(N, g, 0) .. GENLIMIT(N, g, 0) by
// GENSTEP(N, g, 0) shares the rows among all the work-items of dimension
// 0, however many the tuning runs (cyclically on a GPU, in blocks of
// consecutive rows elsewhere); the rows a work-item computes are unrolled
// and jammed, and the loop along a row is unrolled.
__kernel void matvec(__global const float *A, __global const float *x, __global float *y, int N) {
  #pragma oclopts unrollandjam 1 4 1
  for (int i = GENINIT(N, g, 0); i < GENLIMIT(N, g, 0); i += GENSTEP(N, g, 0)) {
    float sum = 0.0f;
    #pragma oclopts unroll 1 8 1
    for (int j = 0; j < N; j++)
      sum += A[i * N + j] * x[j];
    y[i] = sum;
  }
}
