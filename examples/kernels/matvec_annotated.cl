// y = A x, A of rows x cols floats, with two annotated loops
// (doc/annotations.md): the rows a work-item computes are unrolled and
// jammed (several rows share each load of x[k]), and the loop over a row
// is unrolled.
__kernel void matvec(__global const float *A, __global const float *x, __global float *y,
                     int rows, int cols) {
  #pragma oclopts unrollandjam 1 4 1 tolerance 5
  for (int r = GENINIT(rows); r < GENLIMIT(rows); r += GENSTEP(rows)) {
    float acc = 0.0f;
    #pragma oclopts unroll 1 4 1 number 2
    for (int k = 0; k < cols; k++)
      acc += A[(long)r * cols + k] * x[k];
    y[r] = acc;
  }
}
