// A 256-bin histogram of the bytes of n uints, written for
// bench/searchers/record/spaces.lua, one source for CUDA and OpenCL
// (portable.h, the prelude). A block of block_size_x threads reads
// block_size_x * work_per_thread vectors of vector_width uints: a thread's
// vectors strided by the block (coalesced) or, with contiguous, adjacent. Each
// byte is counted by an atomic add: to the bins in global memory or, with
// use_local, to one of `copies` histograms of the block in shared memory (a
// thread to copy thread % copies; their rows padded by one bin when padding),
// added to the bins once the block is done.

#define NT block_size_x
#define PITCH (256 + padding)
#if vector_width == 1
#define VEC unsigned
#define EACH(v, F) F(v)
#elif vector_width == 2
#define VEC uint2
#define EACH(v, F) F((v).x) F((v).y)
#else
#define VEC uint4
#define EACH(v, F) F((v).x) F((v).y) F((v).z) F((v).w)
#endif
#if use_local
#define COUNT(b) ATOMIC_INC(&h[mine + (b)])
#else
#define COUNT(b) ATOMIC_INC(&bins[b])
#endif
#define BYTES(k) { unsigned k_ = (k); COUNT(k_ & 255u); COUNT((k_ >> 8) & 255u); COUNT((k_ >> 16) & 255u); COUNT(k_ >> 24); }

// bins: 256, zero before.
KERNEL void histogram(GMEM unsigned *bins, GMEM const unsigned *keys) {
#if use_local
  SMEM unsigned h[copies * PITCH];
  int mine = (LX % copies) * PITCH;
  for (int i = LX; i < copies * PITCH; i += NT) h[i] = 0;
  SYNC();
#endif
  GMEM const VEC *v = (GMEM const VEC *)keys + GX * NT * work_per_thread;
  for (int j = 0; j < work_per_thread; j++) {
#if contiguous
    VEC x = v[LX * work_per_thread + j];
#else
    VEC x = v[LX + j * NT];
#endif
    EACH(x, BYTES)
  }
#if use_local
  SYNC();
  for (int b = LX; b < 256; b += NT) {
    unsigned s = 0;
    for (int c = 0; c < copies; c++) s += h[c * PITCH + b];
    if (s) ATOMIC_ADD(&bins[b], s);
  }
#endif
}
