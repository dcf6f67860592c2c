// The CUDA twin of matvec_paper.cl: the same loops, pragmas and macros
// (GENINIT/GENLIMIT/GENSTEP are written for CUDA's thread indices).
extern "C" __global__ void matvec(const float *A, const float *x, float *y, int N) {
  #pragma oclopts unrollandjam 1 4 1
  for (int i = GENINIT(N, g, 0); i < GENLIMIT(N, g, 0); i += GENSTEP(N, g, 0)) {
    float sum = 0.0f;
    #pragma oclopts unroll 1 8 1
    for (int j = 0; j < N; j++)
      sum += A[i * N + j] * x[j];
    y[i] = sum;
  }
}
