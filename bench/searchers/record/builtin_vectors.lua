-- bench/searchers/record/builtin_vectors.lua: BAT's builtin_vectors
-- (bat/benchmarks/others/builtin_vectors/builtin_vectors.cu, CUDA: out[i] =
-- lhs[i] + rhs[0] over double3 vectors) with its CAFF space, BLOCK_SIZE 32-1024
-- by 32: 32 configurations only, as the kernel has no other parameter (a space
-- too small for the percent budgets of bench/searchers; a family of its own
-- still). On 2^24 vectors (the CAFF file's 4,096 take microseconds: launch bound).
local kt = require "ktlua"

return {builtin_vectors = function(tuner, opt)
  local n = opt.n or (1 << 24)
  local k = tuner:kernel{file = opt.bat .. "/others/builtin_vectors/builtin_vectors.cu", name = "sum_kernel",
    options = "-std=c++11", global = n, group = 1, round_global = true,
    args = {kt.array("double", 3 * n):random(1):input(), kt.array("double", 3):random(2):input(),
      kt.array("double", 3 * n):output(), kt.int(n)}}
  local bs = {}
  for v = 32, 1024, 32 do bs[#bs + 1] = v end
  k:param("BLOCK_SIZE", bs, {group_x = "mul"})
  return k, {n}
end}
