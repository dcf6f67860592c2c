// The CUDA twin of vadd_annotated.cl: the same loop and annotation
// (GENINIT/GENLIMIT/GENSTEP are written for CUDA's thread indices).
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n) {
  #pragma oclopts unroll 1 8 1 tolerance 10 number 2
  for (int i = GENINIT(n); i < GENLIMIT(n); i += GENSTEP(n))
    c[i] = a[i] + b[i];
}
