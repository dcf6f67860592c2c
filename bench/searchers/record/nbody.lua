-- bench/searchers/record/nbody.lua: BAT's nbody (bat/benchmarks/nbody/nbody.cu,
-- CUDA) with its CAFF space on 32768 bodies. 1,568 configurations.
local kt = require "ktlua"

return {nbody = function(tuner, opt)
  local n = 32768
  local function vec(len, seed) return kt.array("float", len):random(seed, 0, 20) end
  local k = tuner:kernel{file = opt.bat .. "/nbody/nbody.cu", name = "nbody_kernel", options = "-use_fast_math",
    global = {n}, group = {1},
    args = {kt.float(0.001), vec(4 * n, 1):input(), vec(n, 2):input(), vec(n, 3):input(), vec(n, 4):input(),
      vec(n, 5):input(), kt.array("float", 4 * n):output(), vec(4 * n, 6):input(), vec(n, 7):input(),
      vec(n, 8):input(), vec(n, 9):input(), kt.array("float", 4 * n):output(), kt.float(0.5), kt.float(0.01), kt.int(n)}}
  k:param("BLOCK_SIZE", {64, 128, 256, 512}, {group_x = "mul"})
  k:param("OUTER_UNROLL_FACTOR", {1, 2, 4, 8}, {global_x = "div"})
  k:param("INNER_UNROLL_FACTOR1", {0, 1, 2, 4, 8, 16, 32})
  k:param("INNER_UNROLL_FACTOR2", {0, 1, 2, 4, 8, 16, 32})
  k:param("USE_SOA", {0, 1})
  k:param("LOCAL_MEM", {0, 1})
  k:param("USE_CONSTANT_MEMORY", {0})
  k:param("VECTOR_TYPE", {1})
  k:constraint({"INNER_UNROLL_FACTOR1", "INNER_UNROLL_FACTOR2"}, function(a, b) return a * b <= 256 end)
  k:constraint({"INNER_UNROLL_FACTOR2", "OUTER_UNROLL_FACTOR"}, function(b, o) return b <= o end)
  return k, {n}
end}
