// Vector addition: each work-item adds VEC consecutive elements.
// WG (work-group size) and VEC (vector width) come from the tuner.
#if VEC == 1
typedef float floatv;
#define LOAD(p, i) (p)[i]
#define STORE(v, p, i) ((p)[i] = (v))
#else
#define CAT(a, b) a##b
#define VTYPE(n) CAT(float, n)
#define VLOAD(n) CAT(vload, n)
#define VSTORE(n) CAT(vstore, n)
typedef VTYPE(VEC) floatv;
#define LOAD(p, i) VLOAD(VEC)(i, p)
#define STORE(v, p, i) VSTORE(VEC)(v, i, p)
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vadd(__global const float *a, __global const float *b, __global float *c, int n) {
  int i = get_global_id(0);
  if (i * VEC < n) {
    floatv x = LOAD(a, i), y = LOAD(b, i);
    STORE(x + y, c, i);
  }
}
