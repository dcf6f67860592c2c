// The CUDA twin of gemm.cl.
#define RTS_M (TS_M / WPT_M)
#define RTS_N (TS_N / WPT_N)

extern "C" __global__ void __launch_bounds__(RTS_M * RTS_N)
gemm(int M, int N, int K, const float *__restrict__ A, const float *__restrict__ B, float *C) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int bm = blockIdx.y * TS_M, bn = blockIdx.x * TS_N;
  const int tid = ty * RTS_N + tx, threads = RTS_M * RTS_N;
  __shared__ float As[TS_K][TS_M + PAD];
  __shared__ float Bs[TS_K][TS_N + PAD];
  float acc[WPT_M][WPT_N];
#pragma unroll
  for (int wm = 0; wm < WPT_M; wm++)
#pragma unroll
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
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TS_K; k++)
#pragma unroll
      for (int wm = 0; wm < WPT_M; wm++)
#pragma unroll
        for (int wn = 0; wn < WPT_N; wn++)
          acc[wm][wn] += As[k][ty + wm * RTS_M] * Bs[k][tx + wn * RTS_N];
    __syncthreads();
  }
#pragma unroll
  for (int wm = 0; wm < WPT_M; wm++)
#pragma unroll
    for (int wn = 0; wn < WPT_N; wn++)
      C[(bm + ty + wm * RTS_M) * N + bn + tx + wn * RTS_N] = acc[wm][wn];
}

extern "C" __global__ void gemm_naive(int M, int N, int K, const float *A, const float *B, float *C) {
  int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y * blockDim.y + threadIdx.y;
  float s = 0.0f;
  for (int k = 0; k < K; k++) s += A[m * K + k] * B[k * N + n];
  C[m * N + n] = s;
}
