-- bench/searchers/record/reduction.lua: the space of record/reduction.cu, a
-- sum of n floats (2^27, 512 MiB; 2^20 for a CPU) in one pass, one source for
-- CUDA and OpenCL: block_size_x 32-1024 (6 values), vector_width 1, 2, 4,
-- work_per_thread 1-64 (7), contiguous and loop_unroll (only with more than
-- one vector a thread), block_reduce (warp shuffles: CUDA only), use_atomics.
-- 1,800 configurations through CUDA, 900 through OpenCL. With opt.check the
-- sum is checked against Lua's (relative error 1e-3).
local kt = require "ktlua"
local lib = require "record.lib"

return {reduction = function(tuner, opt)
  local n = lib.size(opt, 1 << 27, 1 << 20)
  local data = kt.array("float", n):random(7)
  local sum = kt.array("float", 1)
  local k = tuner:kernel{file = lib.here .. "/reduction.cu", prelude = lib.portable, name = "reduction",
    global = n, group = 1,
    args = {sum:inout(), kt.array("float", n // 32):inout(), kt.array("uint", 1):inout(), data:input()}}
  k:param("block_size_x", {32, 64, 128, 256, 512, 1024}, {group_x = "mul"})
  k:param("vector_width", {1, 2, 4}, {global_x = "div"})
  k:param("work_per_thread", {1, 2, 4, 8, 16, 32, 64}, {global_x = "div"})
  k:param("contiguous", {0, 1})
  k:param("loop_unroll", {0, 1})
  k:param("block_reduce", opt.backend == "cuda" and {0, 1} or {0})
  k:param("use_atomics", {0, 1})
  k:constraint({"work_per_thread", "contiguous"}, function(w, c) return w > 1 or c == 0 end)
  k:constraint({"work_per_thread", "loop_unroll"}, function(w, u) return w > 1 or u == 0 end)
  if opt.check then
    k:reference(sum, function(ref)
      local s = 0.0
      for i = 0, n - 1 do s = s + data[i] end
      ref[0] = s
    end, {method = "relative", tolerance = 1e-3})
  end
  return k, {n}
end}
