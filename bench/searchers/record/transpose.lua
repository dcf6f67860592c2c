-- bench/searchers/record/transpose.lua: the space of record/transpose.cu, a
-- transpose of an n x n matrix (4096; 1024 for a CPU), one source for CUDA and
-- OpenCL. 960 configurations.
local lib = require "record.lib"

return {transpose = function(tuner, opt)
  local k, size = lib.tiled(tuner, opt, "transpose", {8, 16, 32, 64}, {1, 2, 4, 8, 16, 32})
  lib.shared(k)
  return k, size
end}
