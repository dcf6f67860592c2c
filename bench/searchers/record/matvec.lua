-- bench/searchers/record/matvec.lua: the space of record/matvec.cu, y = A x
-- for a rows x cols matrix of floats (16384 x 8192, 512 MiB; 1024 x 1024 for a
-- CPU), after the idea of examples/kernels/matvec_annotated.*, one source for
-- CUDA and OpenCL: block_size_x (threads a row: 1-128) and block_size_y (rows
-- a block: 1-128) of 32 to 1024 threads (39 pairs), tile_size_y 1, 2, 4 (rows a
-- thread), vector_width 1, 2, 4, loop_unroll 1 or 4, use_shared (x in shared
-- memory), team_reduce (warp shuffles: CUDA, teams of 2 to 32): 1,404
-- configurations through OpenCL, 2,376 through CUDA. With opt.check y is
-- checked against Lua's (relative 1e-3).
local kt = require "ktlua"
local lib = require "record.lib"

return {matvec = function(tuner, opt)
  local rows = lib.size(opt, 16384, 1024)
  local cols = opt.n or (opt.small and 1024 or 8192)
  local a, x, y = kt.array("float", rows * cols):random(1), kt.array("float", cols):random(2), kt.array("float", rows)
  local k = tuner:kernel{file = lib.here .. "/matvec.cu", prelude = lib.portable .. ("#define ncols %d\n"):format(cols),
    name = "matvec", global = {1, rows}, group = {1, 1}, args = {y:output(), a:input(), x:input()}}
  local pow2 = {1, 2, 4, 8, 16, 32, 64, 128}
  k:param("block_size_x", pow2, {group_x = "mul", global_x = "mul"})
  k:param("block_size_y", pow2, {group_y = "mul"})
  k:param("tile_size_y", {1, 2, 4}, {global_y = "div"})
  k:param("vector_width", {1, 2, 4})
  k:param("loop_unroll", {1, 4})
  k:param("use_shared", {0, 1})
  k:param("team_reduce", opt.backend == "cuda" and {0, 1} or {0})
  k:constraint({"block_size_x", "block_size_y"}, lib.threads(32, 1024))
  k:constraint({"block_size_x", "team_reduce"}, function(t, r) return r == 0 or (t > 1 and t <= 32) end)
  if opt.check then
    k:reference(y, function(ref)
      for r = 0, rows - 1 do
        local s = 0.0
        for c = 0, cols - 1 do s = s + a[r * cols + c] * x[c] end
        ref[r] = s
      end
    end, {method = "relative", tolerance = 1e-3})
  end
  return k, {cols, rows}
end}
