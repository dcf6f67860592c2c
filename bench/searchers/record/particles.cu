// A particle push: n particles, each x y z vx vy vz m (and a float unused),
// move steps_per_launch time steps of dt under gravity and a drag, written
// for bench/searchers/record/spaces.lua after the idea of
// examples/kernels/particles.* (particles as structures or as arrays), one
// source for CUDA and OpenCL (portable.h, the prelude). The particles lie
// as an array of structures of 8 floats (layout 0), as 8 arrays (1) or as
// structures of 32 particles' arrays (2). A block of block_size_x threads
// moves block_size_x * work_per_thread particles, a thread's strided by the
// block or, with contiguous, adjacent. Structures are read a float at a time
// (aos_load 0), as two float4 (1), or staged through shared memory (2: the
// block's particles copied in and out along the array, coalesced).

#define NT block_size_x
#if layout == 0 /* the array of the layout: each starts with the same particles in its own */
#define p p0
#elif layout == 1
#define p p1
#else
#define p p2
#endif
#define NB (NT * work_per_thread) /* the block's particles */
#if layout == 0
#define AT(q, i, f) (q)[8 * (i) + (f)]
#elif layout == 1
#define AT(q, i, f) (q)[(f) * nparticles + (i)]
#else
#define AT(q, i, f) (q)[((i) / 32) * 256 + (f) * 32 + (i) % 32]
#endif

KERNEL void particles(GMEM float *p0, GMEM float *p1, GMEM float *p2, float dt) {
  int base = GX * NB;
#if layout == 0 && aos_load == 2
  SMEM float s[8 * NB];
  for (int e = LX; e < 8 * NB; e += NT) s[e] = p[8 * base + e];
  SYNC();
#define SRC s
#define I(i) ((i) - base)
#else
#define SRC p
#define I(i) (i)
#endif
  for (int j = 0; j < work_per_thread; j++) {
#if contiguous
    int i = base + LX * work_per_thread + j;
#else
    int i = base + LX + j * NT;
#endif
    float x, y, z, vx, vy, vz, m;
#if layout == 0 && aos_load == 1
    float4 a = ((GMEM float4 *)p)[2 * i], b = ((GMEM float4 *)p)[2 * i + 1];
    x = a.x; y = a.y; z = a.z; vx = a.w; vy = b.x; vz = b.y; m = b.z;
#else
    x = AT(SRC, I(i), 0); y = AT(SRC, I(i), 1); z = AT(SRC, I(i), 2);
    vx = AT(SRC, I(i), 3); vy = AT(SRC, I(i), 4); vz = AT(SRC, I(i), 5); m = AT(SRC, I(i), 6);
#endif
    float drag = 0.1f / m;
    for (int t = 0; t < steps_per_launch; t++) {
      vx -= dt * drag * vx;
      vy -= dt * drag * vy;
      vz -= dt * (9.81f + drag * vz);
      x += dt * vx;
      y += dt * vy;
      z += dt * vz;
    }
#if layout == 0 && aos_load == 1
    a.x = x; a.y = y; a.z = z; a.w = vx; b.x = vy; b.y = vz;
    ((GMEM float4 *)p)[2 * i] = a;
    ((GMEM float4 *)p)[2 * i + 1] = b;
#else
    AT(SRC, I(i), 0) = x; AT(SRC, I(i), 1) = y; AT(SRC, I(i), 2) = z;
    AT(SRC, I(i), 3) = vx; AT(SRC, I(i), 4) = vy; AT(SRC, I(i), 5) = vz;
#endif
  }
#if layout == 0 && aos_load == 2
  SYNC();
  for (int e = LX; e < 8 * NB; e += NT) p[8 * base + e] = s[e];
#endif
}
