// One pass of a 4-bit LSD radix sort of n uint keys, in three kernels.
// The keys are cut into NUM_GROUPS blocks of ceil(n / NUM_GROUPS); a work-group
// handles a block, VEC consecutive keys per work-item and step.
//   histogram: counts[d * NUM_GROUPS + g] = keys of block g with digit d
//   scan:      counts becomes its exclusive prefix sum (one work-group)
//   scatter:   every key goes to its place, stably, from the scanned counts
#define DIGITS 16
#define DIGIT(k, shift) (((k) >> (shift)) & (DIGITS - 1))

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void histogram(__global const uint *keys, __global uint *counts, uint n, uint shift) {
  __local uint hist[DIGITS];
  uint lid = get_local_id(0), g = get_group_id(0);
  for (uint d = lid; d < DIGITS; d += WG) hist[d] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  // blocks of ceil(n / NUM_GROUPS) keys; the last ones may be shorter or empty
  uint block = (n + NUM_GROUPS - 1) / NUM_GROUPS, start = min(g * block, n);
  block = min(block, n - start);
  for (uint i = lid * VEC; i < block; i += WG * VEC)
    for (uint v = 0; v < VEC && i + v < block; v++)
      atomic_inc(&hist[DIGIT(keys[start + i + v], shift)]);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint d = lid; d < DIGITS; d += WG) counts[d * NUM_GROUPS + g] = hist[d];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void scan(__global uint *counts) {
  __local uint sums[WG];
  const uint m = DIGITS * NUM_GROUPS;
  uint lid = get_local_id(0), per = (m + WG - 1) / WG;
  uint first = min(lid * per, m), last = min(first + per, m);
  uint s = 0;
  for (uint i = first; i < last; i++) s += counts[i];
  sums[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    uint run = 0;
    for (uint t = 0; t < WG; t++) {
      uint c = sums[t];
      sums[t] = run;
      run += c;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  uint run = sums[lid];
  for (uint i = first; i < last; i++) {
    uint c = counts[i];
    counts[i] = run;
    run += c;
  }
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void scatter(__global const uint *in, __global uint *out, __global const uint *offsets,
             uint n, uint shift) {
  __local uint base[DIGITS];        // where the block's next key of each digit goes
  __local uint rank[DIGITS * WG];   // keys of each digit held by the work-items before
  __local uint total[DIGITS];
  uint lid = get_local_id(0), g = get_group_id(0);
  // blocks of ceil(n / NUM_GROUPS) keys; the last ones may be shorter or empty
  uint block = (n + NUM_GROUPS - 1) / NUM_GROUPS, start = min(g * block, n);
  block = min(block, n - start);
  for (uint d = lid; d < DIGITS; d += WG) base[d] = offsets[d * NUM_GROUPS + g];
  for (uint c0 = 0; c0 < block; c0 += WG * VEC) {
    uint mine[DIGITS];
    for (uint d = 0; d < DIGITS; d++) mine[d] = 0;
    uint first = c0 + lid * VEC;
    for (uint v = 0; v < VEC && first + v < block; v++) mine[DIGIT(in[start + first + v], shift)]++;
    for (uint d = 0; d < DIGITS; d++) rank[d * WG + lid] = mine[d];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = lid; d < DIGITS; d += WG) {
      uint run = 0;
      for (uint t = 0; t < WG; t++) {
        uint c = rank[d * WG + t];
        rank[d * WG + t] = run;
        run += c;
      }
      total[d] = run;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 0; d < DIGITS; d++) mine[d] = 0;
    for (uint v = 0; v < VEC && first + v < block; v++) {
      uint key = in[start + first + v], d = DIGIT(key, shift);
      out[base[d] + rank[d * WG + lid] + mine[d]++] = key;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = lid; d < DIGITS; d += WG) base[d] += total[d];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
