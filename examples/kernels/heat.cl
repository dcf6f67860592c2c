// One explicit step of the heat equation on an n x n plate held at 0 on its
// edges; each work-item updates ROWS rows of one column.
__kernel void heat(__global const float *u, __global float *v, int n, float r) {
  int i = get_global_id(0), j0 = get_global_id(1) * ROWS;
  for (int k = 0; k < ROWS; k++) {
    int j = j0 + k, c = j * n + i;
    if (i >= n || j >= n) return;
    if (i == 0 || j == 0 || i == n - 1 || j == n - 1) v[c] = 0.0f;
    else v[c] = u[c] + r * (u[c - 1] + u[c + 1] + u[c - n] + u[c + n] - 4.0f * u[c]);
  }
}
