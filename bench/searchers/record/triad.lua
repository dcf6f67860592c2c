-- bench/searchers/record/triad.lua: BAT's TRIAD (bat/benchmarks/TRIAD, CUDA)
-- with its CAFF space on 16 Mi floats (its PRECISION test is misspelt: always
-- float): memory bound. 4,320 configurations.
local kt = require "ktlua"

return {triad = function(tuner, opt)
  local n = 16 * 1024 * 1024
  local k = tuner:kernel{file = opt.bat .. "/TRIAD/triad_kernel.cu", name = "triad", global = {n}, group = {1},
    round_global = true, args = {kt.array("float", n):random(1):input(), kt.array("float", n):random(2):input(),
      kt.array("float", n):output(), kt.float(1.75), kt.int(n)}}
  local bs, wpt = {}, {}
  for v = 32, 1024, 32 do bs[#bs + 1] = v end
  for v = 1, 16 do wpt[#wpt + 1] = v end
  k:param("BLOCK_SIZE", bs, {group_x = "mul"})
  k:param("LOOP_UNROLL_TRIAD", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
  k:param("WORK_PER_THREAD", wpt, {global_x = "div"})
  k:constraint({"LOOP_UNROLL_TRIAD", "WORK_PER_THREAD"}, function(u, w) return u <= w end)
  return k, {n}
end}
