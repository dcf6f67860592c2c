// One pass of a 4-bit LSD radix sort: the CUDA twin of radix_sort.cl
// (histogram, scan and scatter kernels; WG, VEC and NUM_GROUPS).
#define DIGITS 16
#define DIGIT(k, shift) (((k) >> (shift)) & (DIGITS - 1))

extern "C" __global__ void __launch_bounds__(WG)
histogram(const unsigned *keys, unsigned *counts, unsigned n, unsigned shift) {
  __shared__ unsigned hist[DIGITS];
  unsigned lid = threadIdx.x, g = blockIdx.x;
  for (unsigned d = lid; d < DIGITS; d += WG) hist[d] = 0;
  __syncthreads();
  // blocks of ceil(n / NUM_GROUPS) keys; the last ones may be shorter or empty
  unsigned block = (n + NUM_GROUPS - 1) / NUM_GROUPS, start = min(g * block, n);
  block = min(block, n - start);
  for (unsigned i = lid * VEC; i < block; i += WG * VEC)
    for (unsigned v = 0; v < VEC && i + v < block; v++)
      atomicAdd(&hist[DIGIT(keys[start + i + v], shift)], 1u);
  __syncthreads();
  for (unsigned d = lid; d < DIGITS; d += WG) counts[d * NUM_GROUPS + g] = hist[d];
}

extern "C" __global__ void __launch_bounds__(WG) scan(unsigned *counts) {
  __shared__ unsigned sums[WG];
  const unsigned m = DIGITS * NUM_GROUPS;
  unsigned lid = threadIdx.x, per = (m + WG - 1) / WG;
  unsigned first = min(lid * per, m), last = min(first + per, m);
  unsigned s = 0;
  for (unsigned i = first; i < last; i++) s += counts[i];
  sums[lid] = s;
  __syncthreads();
  if (lid == 0) {
    unsigned run = 0;
    for (unsigned t = 0; t < WG; t++) {
      unsigned c = sums[t];
      sums[t] = run;
      run += c;
    }
  }
  __syncthreads();
  unsigned run = sums[lid];
  for (unsigned i = first; i < last; i++) {
    unsigned c = counts[i];
    counts[i] = run;
    run += c;
  }
}

extern "C" __global__ void __launch_bounds__(WG)
scatter(const unsigned *in, unsigned *out, const unsigned *offsets, unsigned n, unsigned shift) {
  __shared__ unsigned base[DIGITS];
  __shared__ unsigned rank[DIGITS * WG];
  __shared__ unsigned total[DIGITS];
  unsigned lid = threadIdx.x, g = blockIdx.x;
  // blocks of ceil(n / NUM_GROUPS) keys; the last ones may be shorter or empty
  unsigned block = (n + NUM_GROUPS - 1) / NUM_GROUPS, start = min(g * block, n);
  block = min(block, n - start);
  for (unsigned d = lid; d < DIGITS; d += WG) base[d] = offsets[d * NUM_GROUPS + g];
  for (unsigned c0 = 0; c0 < block; c0 += WG * VEC) {
    unsigned mine[DIGITS];
    for (unsigned d = 0; d < DIGITS; d++) mine[d] = 0;
    unsigned first = c0 + lid * VEC;
    for (unsigned v = 0; v < VEC && first + v < block; v++) mine[DIGIT(in[start + first + v], shift)]++;
    for (unsigned d = 0; d < DIGITS; d++) rank[d * WG + lid] = mine[d];
    __syncthreads();
    for (unsigned d = lid; d < DIGITS; d += WG) {
      unsigned run = 0;
      for (unsigned t = 0; t < WG; t++) {
        unsigned c = rank[d * WG + t];
        rank[d * WG + t] = run;
        run += c;
      }
      total[d] = run;
    }
    __syncthreads();
    for (unsigned d = 0; d < DIGITS; d++) mine[d] = 0;
    for (unsigned v = 0; v < VEC && first + v < block; v++) {
      unsigned key = in[start + first + v], d = DIGIT(key, shift);
      out[base[d] + rank[d * WG + lid] + mine[d]++] = key;
    }
    __syncthreads();
    for (unsigned d = lid; d < DIGITS; d += WG) base[d] += total[d];
    __syncthreads();
  }
}
