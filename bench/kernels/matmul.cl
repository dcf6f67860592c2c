// C = A B (n x n) with Kernel Tuner's matmul parameters and no bounds
// checks: a tile row that does not divide n writes past C.
__kernel void matmul(__global float *C, __global const float *A, __global const float *B, int n) {
  int col0 = get_group_id(0) * block_size_x * tile_size_x + get_local_id(0);
  int row0 = get_group_id(1) * block_size_y * tile_size_y + get_local_id(1);
  for (int j = 0; j < tile_size_y; j++)
    for (int i = 0; i < tile_size_x; i++) {
      int row = row0 + j * block_size_y, col = col0 + i * block_size_x;
      float sum = 0.0f;
      for (int k = 0; k < n; k++) sum += A[row * n + k] * B[k * n + col];
      C[row * n + col] = sum;
    }
}
