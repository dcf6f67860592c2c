// C = A * B for M x K and K x N row-major matrices, in tiles: a work-group
// computes a TS_M x TS_N tile of C, each work-item WPT_M x WPT_N of it,
// with TS_K-deep slices of A and B staged in local memory (PAD columns of
// padding against bank conflicts).
#define RTS_M (TS_M / WPT_M)
#define RTS_N (TS_N / WPT_N)

__kernel __attribute__((reqd_work_group_size(RTS_N, RTS_M, 1)))
void gemm(int M, int N, int K, __global const float *A, __global const float *B, __global float *C) {
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int bm = get_group_id(1) * TS_M, bn = get_group_id(0) * TS_N;
  const int tid = ty * RTS_N + tx, threads = RTS_M * RTS_N;
  __local float As[TS_K][TS_M + PAD];
  __local float Bs[TS_K][TS_N + PAD];
  float acc[WPT_M][WPT_N];
  for (int wm = 0; wm < WPT_M; wm++)
    for (int wn = 0; wn < WPT_N; wn++) acc[wm][wn] = 0.0f;
  for (int t = 0; t < K; t += TS_K) {
    for (int l = tid; l < TS_M * TS_K; l += threads) {
      int r = l / TS_K, c = l % TS_K;
      As[c][r] = A[(bm + r) * K + t + c];
    }
    for (int l = tid; l < TS_K * TS_N; l += threads) {
      int r = l / TS_N, c = l % TS_N;
      Bs[r][c] = B[(t + r) * N + bn + c];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TS_K; k++)
      for (int wm = 0; wm < WPT_M; wm++)
        for (int wn = 0; wn < WPT_N; wn++)
          acc[wm][wn] += As[k][ty + wm * RTS_M] * Bs[k][tx + wn * RTS_N];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int wm = 0; wm < WPT_M; wm++)
    for (int wn = 0; wn < WPT_N; wn++)
      C[(bm + ty + wm * RTS_M) * N + bn + tx + wn * RTS_N] = acc[wm][wn];
}

// The reference: one work-item per element of C.
__kernel void gemm_naive(int M, int N, int K, __global const float *A, __global const float *B,
                         __global float *C) {
  int n = get_global_id(0), m = get_global_id(1);
  float s = 0.0f;
  for (int k = 0; k < K; k++) s += A[m * K + k] * B[k * N + n];
  C[m * N + n] = s;
}
