// Two steps with a host step between them: `emit` writes particles as an
// array of structures (the struct comes from the script's kt.struct as a
// prelude); the script reshapes them into a structure of arrays; `energy`
// reads those arrays, VEC elements per work-item.
__kernel __attribute__((reqd_work_group_size(WG_EMIT, 1, 1)))
void emit(__global particle *out, uint n) {
  uint i = get_global_id(0);
  if (i >= n) return;
  out[i].pos[0] = i * 0.5f;
  out[i].pos[1] = (i % 7) * 1.0f;
  out[i].pos[2] = (i % 13) * 0.25f;
  out[i].mass = 1.0f + (i % 5);
}

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define VLOAD(n) CAT(vload, n)
#define VSTORE(n) CAT(vstore, n)
#if VEC == 1
#define LOAD(j, p) (p)[j]
#define STORE(v, j, p) ((p)[j] = (v))
typedef float floatv;
#else
#define LOAD(j, p) VLOAD(VEC)(j, p)
#define STORE(v, j, p) VSTORE(VEC)(v, j, p)
typedef CAT(float, VEC) floatv;
#endif

// Kinetic-like energy 0.5 * m * |pos|^2 of VEC particles per work-item.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void energy(__global const float *x, __global const float *y, __global const float *z,
            __global const float *m, __global float *e, uint n) {
  uint j = get_global_id(0);
  if (j * VEC >= n) return; // the last work-group may be partly past the end
  floatv px = LOAD(j, x), py = LOAD(j, y), pz = LOAD(j, z);
  STORE(0.5f * LOAD(j, m) * (px * px + py * py + pz * pz), j, e);
}
