// One explicit step of the heat equation on an n x n plate held at 0 on its
// edges; each thread updates ROWS rows of one column.
extern "C" __global__ void heat(const float *u, float *v, int n, float r) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j0 = (blockIdx.y * blockDim.y + threadIdx.y) * ROWS;
  for (int k = 0; k < ROWS; k++) {
    int j = j0 + k, c = j * n + i;
    if (i >= n || j >= n) return;
    if (i == 0 || j == 0 || i == n - 1 || j == n - 1) v[c] = 0.0f;
    else v[c] = u[c] + r * (u[c - 1] + u[c + 1] + u[c - n] + u[c + n] - 4.0f * u[c]);
  }
}
