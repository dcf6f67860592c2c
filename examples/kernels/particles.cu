// The CUDA twin of particles.cl: `emit` writes structs (declared by the
// script's prelude), `energy` reads arrays, VEC particles per thread.
extern "C" __global__ void __launch_bounds__(WG_EMIT) emit(particle *out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i].pos[0] = i * 0.5f;
  out[i].pos[1] = (i % 7) * 1.0f;
  out[i].pos[2] = (i % 13) * 0.25f;
  out[i].mass = 1.0f + (i % 5);
}

extern "C" __global__ void __launch_bounds__(WG)
energy(const float *x, const float *y, const float *z, const float *m, float *e, unsigned n) {
  unsigned j = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
  if (j >= n) return; // the last block may be partly past the end
#pragma unroll
  for (int v = 0; v < VEC; v++) {
    float px = x[j + v], py = y[j + v], pz = z[j + v];
    e[j + v] = 0.5f * m[j + v] * (px * px + py * py + pz * pz);
  }
}
