-- bench/searchers/record/coulomb.lua: the spaces of record/coulomb.cu, a
-- Coulomb sum (the potential of natoms charges on a grid; after the idea of
-- KTT's CoulombSum 2d and 3d examples), one source for CUDA and OpenCL.
-- coulomb2d: one slice of n x n points (1024; 64 for a CPU), 1,344
-- configurations: block_size_x 16-64 and block_size_y 1-16 (14 pairs of 32 to
-- 1024 threads), tile_size_x 1-8 (points a thread, along x), inner_unroll 1-8,
-- use_constant, use_shared (not both), atoms_soa. coulomb3d: n x n/8 x n/16
-- points (512 x 64 x 32; 64 x 8 x 4 for a CPU), the same and z_iterations
-- 1-8 (points a thread along z), 5,376 configurations. 1,024 atoms (256 for a
-- CPU). Blocks may overhang a small grid (round_global; the kernel checks).
-- With opt.check the potentials are checked against Lua's (relative 1e-3).
local kt = require "ktlua"
local lib = require "record.lib"

local function coulomb(tuner, opt, nx, ny, nz)
  local natoms, spacing = opt.small and 256 or 1024, 0.5
  local extent = {nx * spacing, ny * spacing, math.max(nz, 16) * spacing}
  local z0 = (extent[3] - nz * spacing) / 2 -- the slices amid the atoms
  -- atoms in the grid's box (a 2-D grid's: 8 deep), charges in [0.1, 1] (of one sign: no sums near zero)
  local pos, q = kt.array("float", 3 * natoms):random(11), kt.array("float", natoms):random(12, 0.1, 1)
  local atoms = kt.array("float", 8 * natoms)
  for i = 0, natoms - 1 do
    for c = 0, 3 do
      local v = c == 3 and q[i] or pos[3 * i + c] * extent[c + 1]
      atoms[4 * i + c], atoms[(4 + c) * natoms + i] = v, v
    end
  end
  local energy = kt.array("float", nx * ny * nz)
  local args = {energy:output(), atoms:input(), kt.int(nx), kt.int(ny), kt.int(nz), kt.float(spacing), kt.float(z0)}
  if opt.backend == "cuda" then args[#args + 1] = kt.symbol("catoms", atoms) end
  local k = tuner:kernel{file = lib.here .. "/coulomb.cu", prelude = lib.portable .. ("#define natoms %d\n"):format(natoms),
    name = "coulomb", global = {nx, ny, nz}, group = {1, 1, 1}, round_global = true, args = args}
  k:param("block_size_x", {16, 32, 64}, {group_x = "mul"})
  k:param("block_size_y", {1, 2, 4, 8, 16}, {group_y = "mul"})
  k:param("tile_size_x", {1, 2, 4, 8}, {global_x = "div_ceil"})
  k:param("z_iterations", nz > 1 and {1, 2, 4, 8} or {1}, {global_z = "div_ceil"})
  k:param("inner_unroll", {1, 2, 4, 8})
  k:param("use_constant", {0, 1})
  k:param("use_shared", {0, 1})
  k:param("atoms_soa", {0, 1})
  k:constraint({"block_size_x", "block_size_y"}, lib.threads(32, 1024))
  k:constraint({"use_constant", "use_shared"}, function(c, s) return c + s <= 1 end)
  if opt.check then
    k:reference(energy, function(ref)
      for z = 0, nz - 1 do
        for y = 0, ny - 1 do
          for x = 0, nx - 1 do
            local e, px, py, pz = 0.0, x * spacing, y * spacing, z0 + z * spacing
            for i = 0, natoms - 1 do
              local dx, dy, dz = px - atoms[4 * i], py - atoms[4 * i + 1], pz - atoms[4 * i + 2]
              e = e + atoms[4 * i + 3] / math.sqrt(dx * dx + dy * dy + dz * dz)
            end
            ref[(z * ny + y) * nx + x] = e
          end
        end
      end
    end, {method = "relative", tolerance = 1e-3})
  end
  return k, {nx, ny, nz}
end

return {
  coulomb2d = function(tuner, opt)
    local n = lib.size(opt, 1024, 64)
    return coulomb(tuner, opt, n, n, 1)
  end,
  coulomb3d = function(tuner, opt)
    local n = lib.size(opt, 512, 64)
    return coulomb(tuner, opt, n, n // 8, n // 16)
  end,
}
