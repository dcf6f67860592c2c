// The CUDA twin of matvec_annotated.cl: y = A x with the same two annotated loops.
extern "C" __global__ void matvec(const float *A, const float *x, float *y, int rows, int cols) {
  #pragma oclopts unrollandjam 1 4 1 tolerance 5
  for (int r = GENINIT(rows); r < GENLIMIT(rows); r += GENSTEP(rows)) {
    float acc = 0.0f;
    #pragma oclopts unroll 1 4 1 number 2
    for (int k = 0; k < cols; k++)
      acc += A[(long)r * cols + k] * x[k];
    y[r] = acc;
  }
}
