-- bench/searchers/record/pnpoly.lua: BAT's pnpoly (bat/benchmarks/pnpoly, the
-- kernel of the benchmark_hub pnpoly files, CUDA) with its CAFF space on 4 Mi
-- points, 600 vertices. 4,092 configurations.
local kt = require "ktlua"

return {pnpoly = function(tuner, opt)
  local n = 4 * 1024 * 1024
  local k = tuner:kernel{file = opt.bat .. "/pnpoly/pnpoly.cu", name = "cn_pnpoly", global = {n}, group = {1},
    round_global = true, options = "-std=c++11",
    args = {kt.array("int", n):output(), kt.array("float", 2 * n):random(1):input(), kt.int(n),
      kt.symbol("d_vertices", kt.array("float", 1200):random(2))}}
  local bs = {}
  for v = 32, 992, 32 do bs[#bs + 1] = v end
  k:param("block_size_x", bs, {group_x = "mul"})
  k:param("tile_size", {1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20}, {global_x = "div"})
  k:param("between_method", {0, 1, 2, 3})
  k:param("use_method", {0, 1, 2})
  return k, {n}
end}
