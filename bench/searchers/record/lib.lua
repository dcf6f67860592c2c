-- bench/searchers/record/lib.lua: what the kernel families of record/ share
-- (record/spaces.lua records them; each family is a module of its own here,
-- record/NAME.lua, returning {NAME = function(tuner, opt) return k, size end}).
-- opt: n (a size the command line gave, else false), small (true: the size
-- for a CPU through PoCL), bat (BAT's benchmarks folder) and backend ("cuda"
-- or "opencl": the tuner's, unless a caller says which source to write for).
local lib = {}

-- record/ itself, wherever this file is loaded from.
lib.here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."

function lib.read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- KERNEL, GMEM, SMEM, SYNC, FUNC, LX, LY, GX, GY ...: the prelude of the
-- kernels written for this, one source for CUDA and OpenCL.
lib.portable = lib.read(lib.here .. "/portable.h")

-- A constraint: from lo to hi threads a block of x by y.
function lib.threads(lo, hi) return function(x, y) return x * y >= lo and x * y <= hi end end

-- The size: the command line's, else the one for a CPU (small) or for a GPU.
function lib.size(opt, gpu, cpu) return opt.n or (opt.small and cpu) or gpu end

-- A parameter only meaningful where another is on: off (its first value) otherwise.
function lib.only_with(k, param, with)
  k:constraint({with, param}, function(w, p) return w ~= 0 or p == 0 end)
end

-- A kernel of record/ from an n x n input to an n x n output (stencil.cu, transpose.cu): its
-- blocks and tiles (tile_size_x and tile_size_y in {1, 2, 4, 8}), 32 to 1024 threads a block;
-- n 4096 (1024 for a CPU: the largest tile, 128 x 8, fits).
function lib.tiled(tuner, opt, name, blocks_x, blocks_y)
  local kt = require "ktlua"
  local n = lib.size(opt, 4096, 1024)
  local k = tuner:kernel{file = lib.here .. "/" .. name .. ".cu", prelude = lib.portable, name = name,
    global = {n, n}, group = {1, 1},
    args = {kt.array("float", n * n):output(), kt.array("float", n * n):random(1):input(), kt.int(n)}}
  k:param("block_size_x", blocks_x, {group_x = "mul"})
  k:param("block_size_y", blocks_y, {group_y = "mul"})
  k:param("tile_size_x", {1, 2, 4, 8}, {global_x = "div"})
  k:param("tile_size_y", {1, 2, 4, 8}, {global_y = "div"})
  k:constraint({"block_size_x", "block_size_y"}, lib.threads(32, 1024))
  return k, {n, n}
end

-- use_shared, and padding only with it.
function lib.shared(k)
  k:param("use_shared", {0, 1})
  k:param("padding", {0, 1})
  lib.only_with(k, "padding", "use_shared")
end

return lib
