// A Coulomb sum: the electrostatic potential of natoms point charges on the
// points of an nx x ny x nz grid (spacing apart, the first slice at z0; a
// 2-D grid is one slice), written for bench/searchers/record/spaces.lua
// after the idea of KTT's CoulombSum examples, one source for CUDA and
// OpenCL (portable.h, the prelude). A thread computes tile_size_x points
// along x (strided by the block) and z_iterations points along z, sharing
// the atom's loads and the squares they have in common; the loop over the
// atoms unrolled inner_unroll times. The atoms come from global memory, from
// constant memory (use_constant) or staged block by block in shared memory
// (use_shared); as an array of structures (x y z q) or of structures of
// arrays (atoms_soa). atoms: 8 natoms floats, the structures then the
// arrays; CUDA's constant memory copy, catoms, holds the same.

#define NT (block_size_x * block_size_y)
#ifdef __OPENCL_VERSION__
#if use_constant
#define ASPACE __constant
#else
#define ASPACE __global
#endif
#define SRC atoms
#else
#define ASPACE
__constant__ float catoms[8 * natoms]; /* declared always: the recording fills it */
#if use_constant
#define SRC catoms
#else
#define SRC atoms
#endif
#endif
#if atoms_soa /* element c (0-3: x, y, z, q) of atom i */
#define AT(src, i, c) (src)[(4 + (c)) * natoms + (i)]
#else
#define AT(src, i, c) (src)[4 * (i) + (c)]
#endif

KERNEL void coulomb(GMEM float *energy, ASPACE const float *atoms, int nx, int ny, int nz, float spacing,
                     float z0) {
  int x0 = GX * block_size_x * tile_size_x + LX, yi = GY * block_size_y + LY, zi0 = GZ * z_iterations;
  float y = yi * spacing, x[tile_size_x], e[z_iterations][tile_size_x];
  for (int t = 0; t < tile_size_x; t++) {
    x[t] = (x0 + t * block_size_x) * spacing;
    for (int z = 0; z < z_iterations; z++) e[z][t] = 0.0f;
  }
#if use_shared
  SMEM float sh[4 * NT];
  for (int a0 = 0; a0 < natoms; a0 += NT) {
    int l = LY * block_size_x + LX, m = natoms - a0 < NT ? natoms - a0 : NT;
    if (l < m)
      for (int c = 0; c < 4; c++) sh[c * NT + l] = AT(SRC, a0 + l, c);
    SYNC();
#define ATOM(j, c) sh[(c) * NT + (j)]
#else
  {
    int m = natoms;
#define ATOM(j, c) AT(SRC, j, c)
#endif
UNROLL(inner_unroll)
    for (int j = 0; j < m; j++) {
      float ax = ATOM(j, 0), ay = ATOM(j, 1), az = ATOM(j, 2), q = ATOM(j, 3);
      float dy = y - ay, dy2 = dy * dy, dx2[tile_size_x];
      for (int t = 0; t < tile_size_x; t++) dx2[t] = (x[t] - ax) * (x[t] - ax);
      for (int z = 0; z < z_iterations; z++) {
        float dz = z0 + (zi0 + z) * spacing - az, dyz = dy2 + dz * dz;
        for (int t = 0; t < tile_size_x; t++) e[z][t] += q * RSQRT(dx2[t] + dyz);
      }
    }
#if use_shared
    SYNC();
#endif
  }
  for (int z = 0; z < z_iterations; z++)
    for (int t = 0; t < tile_size_x; t++)
      if (x0 + t * block_size_x < nx && yi < ny && zi0 + z < nz) /* blocks may overhang the grid */
        energy[((zi0 + z) * ny + yi) * nx + x0 + t * block_size_x] = e[z][t];
}
