-- bench/pipeline: does the device wait? A tiled GEMM (bench/overhead/gemm.cl|cu, CLTune's
-- parameters: tile sizes, work per thread, K tile, padding) tuned on N random configurations,
-- R timed runs each, every output validated against a naive kernel. Prints the wall time, the
-- device's busy time (every launch, timed or not: warm-ups, references, timed runs), compile time
-- (summed, and divided by the compile threads), wall / max(device busy, compile / threads),
-- where the rest of the wall time went, and where the device's idle time between configurations
-- went (bench/pipeline/gaps.lua).
--   ktlua bench/pipeline/gemm.lua [--device=ID] [--size=S (M = N = K)] [--n=N (configurations)]
--     [--repeats=R] [--seed=SEED] [--serial (timed runs one by one, host comparison on the tuning
--     thread: as before the pipeline)] [--both (serial, then pipelined)] [--inprocess]
--     [--validate_on=auto|host|device (where outputs are compared; default auto: the device on a GPU)]
--     [--early_stop (tune option early_stop = true)]
--     [--threads=T (compile threads; 0: one per core)] [--json=FILE (results of the last tuning)]
--     [--workers=W (compiler processes, tuner option compile_workers; -1: the default)]
--     [--check_inputs=auto|always|failures (tune option check_inputs)]
local kt = require "ktlua"
local opt = require("ktlua.cli").options(arg, { device = "default", size = 2048, n = 200, repeats = 7,
  seed = 1, serial = false, both = false, inprocess = false, threads = 0, json = "", validate_on = "auto",
  early_stop = false, workers = -1, check_inputs = "auto" },
  "bench/pipeline/gemm.lua")

local tuner = kt.tuner(opt.device, { isolate = not opt.inprocess, build_threads = opt.threads,
                                     compile_workers = opt.workers >= 0 and opt.workers or nil })
local cuda = tuner.device.backend == "cuda"
local s = opt.size
local A = kt.array("float", s * s):random(3)
local B = kt.array("float", s * s):random(4)
local C = kt.array("float", s * s)
local file = "bench/overhead/gemm" .. (cuda and ".cu" or ".cl")
local k = dofile("bench/overhead/gemm_task.lua")(tuner, file, s, A, B, C)
local gaps = dofile("bench/pipeline/gaps.lua")

local function tune(pipeline)
  local r = tuner:tune(k, { search = "random", seed = opt.seed, stop = { count = opt.n },
                            repeats = opt.repeats, pipeline = pipeline, progress = false,
                            validate_on = opt.validate_on, early_stop = opt.early_stop,
                            check_inputs = opt.check_inputs })
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
  print(gaps(sm, "          "))
  local order, cut, runs = {}, 0, 0
  for i = 1, #r do
    order[i] = r[i].index
    cut = cut + (r[i].cut_short and 1 or 0)
    runs = runs + #r[i].samples_ms
  end
  local cache = tuner:cache()
  print(("          timed runs %d, cut short by early stop %d; programs compiled by the tuner so far %d"):format(
    runs, cut, cache.compiles))
  print(("          compiled %d, from the disk cache %d, compile workers %d"):format(sm.compiles, sm.cached,
    sm.compile_workers))
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
