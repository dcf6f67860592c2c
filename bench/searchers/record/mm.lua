-- bench/searchers/record/mm.lua: the space of record/mm.cu, a tiled matrix
-- product C = A B of n x n floats (2048; 256 for a CPU, where the 140 whose
-- block's tile spans 512 overhang the matrix and fail), one source for CUDA and
-- OpenCL. 2,240 configurations.
local kt = require "ktlua"
local lib = require "record.lib"

return {mm = function(tuner, opt)
  local n = lib.size(opt, 2048, 256)
  local a, b, c = kt.array("float", n * n):random(1), kt.array("float", n * n):random(2), kt.array("float", n * n)
  local k = tuner:kernel{file = lib.here .. "/mm.cu", prelude = lib.portable, name = "mm", global = {n, n}, group = {1, 1},
    args = {c:output(), a:input(), b:input(), kt.int(n)}}
  k:param("block_size_x", {8, 16, 32, 64}, {group_x = "mul"})
  k:param("block_size_y", {1, 2, 4, 8, 16, 32}, {group_y = "mul"})
  k:param("tile_size_x", {1, 2, 4, 8}, {global_x = "div"})
  k:param("tile_size_y", {1, 2, 4, 8}, {global_y = "div"})
  k:param("use_local", {0, 1})
  k:param("tile_k", {8, 16, 32})
  k:param("padding", {0, 1})
  k:constraint({"block_size_x", "block_size_y"}, lib.threads(32, 1024))
  k:constraint({"use_local", "tile_k", "padding"}, function(l, t, p) return l == 1 or (t == 8 and p == 0) end)
  return k, {n, n}
end}
