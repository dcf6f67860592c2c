// Sum of n floats, after KTT's reduction example. Tuning parameters:
//   WG           work-group size
//   VEC          elements each work-item loads per step
//   UNBOUNDED_WG 1: one work-item per VEC elements; 0: WG_NUM groups loop over the data
//   WG_NUM       number of work-groups when bounded
//   USE_ATOMICS  1: groups add their sums into out[0]; 0: group g writes out[g], and the
//                launcher runs the kernel again on those partial sums until one is left
#define CAT(a, b) a##b
#define VFLOAT(n) CAT(float, n)
#define VLOAD(n) CAT(vload, n)

#if VEC == 1
#define LOAD_SUM(p, j) ((p)[j])
#else
// Sum of one loaded vector, halving it until a scalar is left.
inline float hsum2(float2 v) { return v.s0 + v.s1; }
inline float hsum4(float4 v) { return hsum2(v.lo + v.hi); }
inline float hsum8(float8 v) { return hsum4(v.lo + v.hi); }
inline float hsum16(float16 v) { return hsum8(v.lo + v.hi); }
#define HSUM(n) CAT(hsum, n)
#define LOAD_SUM(p, j) HSUM(VEC)(VLOAD(VEC)(j, p))
#endif

// Elements [j*VEC, j*VEC + VEC) of in, of which those below n count.
inline float chunk(__global const float *in, uint j, uint n) {
  uint first = j * VEC;
  if (first + VEC <= n) return LOAD_SUM(in, j);
  float s = 0.0f;
  for (uint e = first; e < n; e++) s += in[e];
  return s;
}

inline void atomic_add_float(volatile __global float *p, float x) {
  union { uint u; float f; } old, sum;
  do {
    old.f = *p;
    sum.f = old.f + x;
  } while (atomic_cmpxchg((volatile __global uint *)p, old.u, sum.u) != old.u);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce(__global const float *in, __global float *out, uint n) {
  __local float part[WG];
  uint lid = get_local_id(0);
  uint chunks = (n + VEC - 1) / VEC;
  float s = 0.0f;
#if UNBOUNDED_WG == 1
  if (get_global_id(0) < chunks) s = chunk(in, get_global_id(0), n);
#else
  for (uint j = get_global_id(0); j < chunks; j += get_global_size(0)) s += chunk(in, j, n);
#endif
  part[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint stride = WG / 2; stride > 0; stride /= 2) {
    if (lid < stride) part[lid] += part[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
#if USE_ATOMICS == 1
    atomic_add_float(out, part[0]);
#else
    out[get_group_id(0)] = part[0];
#endif
  }
}
