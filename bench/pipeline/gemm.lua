-- bench/pipeline: does the device wait? A tiled GEMM (bench/overhead/gemm.cl|cu, CLTune's
-- parameters: tile sizes, work per thread, K tile, padding) tuned on N random configurations,
-- R timed runs each, every output validated against a naive kernel. Prints the wall time, the
-- device's busy time (every launch, timed or not: warm-ups, references, timed runs), compile time
-- (summed, and divided by the compile threads), wall / max(device busy, compile / threads), and
-- where the rest of the wall time went.
--   ktlua bench/pipeline/gemm.lua [--device=ID] [--size=S (M = N = K)] [--n=N (configurations)]
--     [--repeats=R] [--seed=SEED] [--serial (timed runs one by one, host comparison on the tuning
--     thread: as before the pipeline)] [--both (serial, then pipelined)] [--inprocess]
--     [--validate_on=auto|host|device (where outputs are compared; default auto: the device on a GPU)]
--     [--early_stop (tune option early_stop = true)]
--     [--threads=T (compile threads; 0: one per core)] [--json=FILE (results of the last tuning)]
local kt = require "ktlua"
local opt = require("ktlua.cli").options(arg, { device = "default", size = 2048, n = 200, repeats = 7,
  seed = 1, serial = false, both = false, inprocess = false, threads = 0, json = "", validate_on = "auto",
  early_stop = false },
  "bench/pipeline/gemm.lua")

local tuner = kt.tuner(opt.device, { isolate = not opt.inprocess, build_threads = opt.threads })
local cuda = tuner.device.backend == "cuda"
local s = opt.size
local A = kt.array("float", s * s):random(3)
local B = kt.array("float", s * s):random(4)
local C = kt.array("float", s * s)
local args = { kt.int(s), kt.int(s), kt.int(s), A:input(), B:input(), C:output() }
local file = "bench/overhead/gemm" .. (cuda and ".cu" or ".cl")
local k = tuner:kernel{ file = file, name = "gemm", global = { s, s }, group = { 1, 1 }, args = args }
local naive = tuner:kernel{ file = file, name = "gemm_naive", global = { s, s }, group = { 16, 16 }, args = args }
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

local function tune(pipeline)
  local r = tuner:tune(k, { search = "random", seed = opt.seed, stop = { count = opt.n },
                            repeats = opt.repeats, pipeline = pipeline, progress = false,
                            validate_on = opt.validate_on, early_stop = opt.early_stop })
  local sm = r:summary()
  local threads = tuner:cache().threads
  local wall, device = sm.wall_ms / 1e3, sm.device_ms / 1e3
  local compile = sm.compile_ms / 1e3
  local best = r:best()
  -- Compile throughput: configurations per second that the compile threads could build.
  print(("%-9s %d configs (%d ok)  wall %.2f s  device busy %.3f s (timed %.3f s)  compile %.2f s (/%d threads: %.2f s; %.1f configs/s)"):format(
    pipeline and "pipelined" or "serial  ", sm.evaluated, sm.statuses.ok, wall, device, sm.kernel_ms / 1e3,
    compile, threads, compile / threads, compile > 0 and sm.evaluated / (compile / threads) or 0))
  print(("          wall / device busy %.2f  wall / max(device busy, compile / threads) %.2f  framework %.1f us/config"):format(
    wall / device, wall / math.max(device, compile / threads), sm.framework_ms * 1e3 / sm.evaluated))
  print(("          wall = setup %.2f + build waits %.2f + device waits %.2f + data %.2f + validation %.2f + searcher %.3f + framework %.3f s"):format(
    sm.setup_ms / 1e3, sm.build_ms / 1e3, sm.wait_ms / 1e3, sm.data_ms / 1e3, sm.validation_ms / 1e3,
    sm.searcher_ms / 1e3, sm.framework_ms / 1e3))
  local order, cut, runs = {}, 0, 0
  for i = 1, #r do
    order[i] = r[i].index
    cut = cut + (r[i].cut_short and 1 or 0)
    runs = runs + #r[i].samples_ms
  end
  print(("          timed runs %d, cut short by early stop %d"):format(runs, cut))
  print(("          configurations evaluated (indices): %s%s"):format(table.concat(order, ",", 1, math.min(#order, 8)),
    #order > 8 and ",..." or ""))
  if best then
    local c = best.config
    print(("          best %.4f ms (index %d): TS_M=%d TS_N=%d WPT_M=%d WPT_N=%d TS_K=%d PAD=%d"):format(best.time_ms,
      best.index, c.TS_M, c.TS_N, c.WPT_M, c.WPT_N, c.TS_K, c.PAD))
  end
  io.stdout:flush()
  return r
end

print(("ktlua pipeline benchmark on %s (%s, %s, %d compile threads): GEMM %d^3, %d random configurations, %d timed runs"):format(
  tuner.device.name, tuner.device.id, tuner.isolated and "isolated" or "in-process", tuner:cache().threads,
  s, opt.n, opt.repeats))
local last
if opt.serial or opt.both then last = tune(false) end
if not opt.serial then last = tune(true) end
if opt.json ~= "" then last:write(opt.json) end
