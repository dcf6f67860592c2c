-- The tiled GEMM of gemm.cl|cu with CLTune's parameters (tile sizes, work per
-- thread, K tile, padding) and its naive kernel as the reference: what
-- bench/overhead/overhead.lua and bench/pipeline/gemm.lua tune.
--   local k = dofile("bench/overhead/gemm_task.lua")(tuner, file, s, A, B, C)
local kt = require "ktlua"

return function(tuner, file, s, A, B, C)
  local args = { kt.int(s), kt.int(s), kt.int(s), A:input(), B:input(), C:output() }
  local k = tuner:kernel{ file = file, name = "gemm", global = { s, s }, group = { 1, 1 }, args = args }
  local naive = tuner:kernel{ file = file, name = "gemm_naive", global = { s, s }, group = { 16, 16 },
                              args = args }
  for _, p in ipairs({ "TS_M", "TS_N", "WPT_M", "WPT_N", "TS_K", "PAD" }) do
    naive:param(p, { 16 }) -- the naive kernel ignores them; the file needs them defined
  end
  k:param("TS_M", { 16, 32, 64, 128 }, { group_y = "mul" })
  k:param("TS_N", { 16, 32, 64, 128 }, { group_x = "mul" })
  k:param("WPT_M", { 1, 2, 4, 8 }, { group_y = "div", global_y = "div" })
  k:param("WPT_N", { 1, 2, 4, 8 }, { group_x = "div", global_x = "div" })
  k:param("TS_K", { 8, 16, 32 })
  k:param("PAD", { 0, 1 })
  k:constraint({ "TS_M", "TS_N", "WPT_M", "WPT_N" }, function(tm, tn, wm, wn)
    local threads = (tm // wm) * (tn // wn)
    return tm % wm == 0 and tn % wn == 0 and threads >= 16 and threads <= 1024
  end)
  k:constraint({ "TS_M", "TS_N", "TS_K", "PAD" }, function(tm, tn, tk, pad)
    return (tm + tn + 2 * pad) * tk * 4 <= 32768
  end)
  k:reference(C, { kernel = naive, config = { TS_M = 16, TS_N = 16, WPT_M = 16, WPT_N = 16, TS_K = 16, PAD = 16 } },
              { method = "relative", tolerance = 1e-3 })
  return k
end
