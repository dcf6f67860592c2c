-- bench/searchers/record/stencil.lua: the space of record/stencil.cu, one
-- five-point Jacobi step on an n x n grid (4096; 1024 for a CPU), one source
-- for CUDA and OpenCL. 1,728 configurations.
local lib = require "record.lib"

return {stencil = function(tuner, opt)
  local k, size = lib.tiled(tuner, opt, "stencil", {16, 32, 64, 128}, {1, 2, 4, 8, 16})
  k:param("tile_contig_y", {0, 1})
  lib.shared(k)
  return k, size
end}
