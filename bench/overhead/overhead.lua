-- bench/overhead: where a tuning's wall time goes, for a vector addition
-- with 256 configurations and a tiled GEMM with 1,290. Prints, per tuning:
-- wall time, the device's kernel time, compile time (summed over compile
-- threads, and divided by them), and the framework's own overhead per
-- configuration; and how the wall time compares with
-- max(kernel time, compile time / threads), the time a perfect overlap of
-- compiles and runs would take.
--   ktlua bench/overhead/overhead.lua [--device=ID] [--n=N] [--size=S]
--     [--repeats=R] [--only=vadd|gemm] [--inprocess] [--threads=T (compile threads;
--     0: one per core)] [--lookahead=L (configurations compiled ahead; 0: the default)]
--     [--fraction=F (0 < F < 1: a budget of that fraction, searched by bestfirst)
--      [--ahead=A (bestfirst's proposals in flight; 0: its default)]]
--     [--serial (timed runs one by one, outputs compared on the tuning thread: without the
--      pipeline of core/eval/measure.c)] [--validate_on=auto|host|device] [--early_stop (tune option
--      early_stop = true: the best found and the configurations cut short are printed)]
--     [--live=PAGE (tune option live: each tuning keeps PAGE up to date while it runs; run with and
--      without it for its cost)]
local kt = require "ktlua"
local opt = require("ktlua.cli").options(arg, { device = "default", n = 1 << 20, size = 1024,
  repeats = 10, only = "", inprocess = false, threads = 0, lookahead = 0, fraction = 0.0, ahead = 0,
  serial = false, validate_on = "auto", early_stop = false, live = "" },
  "bench/overhead/overhead.lua")
-- The options of every tuning here: all configurations, or a budget for bestfirst.
local tune_options = { repeats = opt.repeats, lookahead = opt.lookahead > 0 and opt.lookahead or nil,
                       pipeline = not opt.serial, validate_on = opt.validate_on,
                       early_stop = opt.early_stop, live = opt.live ~= "" and opt.live or nil }
if opt.fraction > 0 then
  tune_options.stop = { fraction = opt.fraction }
  tune_options.search = { "bestfirst", seed = 1, ahead = opt.ahead > 0 and opt.ahead or nil }
end

local tuner = kt.tuner(opt.device, { isolate = not opt.inprocess, build_threads = opt.threads })
local cuda = tuner.device.backend == "cuda"
local function file(name) return name .. (cuda and ".cu" or ".cl") end

-- Percentiles of the compile time of one configuration, in ms.
local function compile_spread(results)
  local t = {}
  for i = 1, #results do t[#t + 1] = results[i].compile_ms end
  table.sort(t)
  local function at(q) return t[math.max(1, math.ceil(q * #t))] end
  return ("compile per configuration: median %.0f ms, p90 %.0f ms, max %.0f ms"):format(
    at(0.5), at(0.9), at(1))
end

local function report(name, results)
  local s = results:summary()
  local compile = s.compile_ms / 1e3
  local threads = tuner:cache().threads
  local kernel = s.kernel_ms / 1e3
  local ideal = math.max(kernel, compile / threads)
  print(("%-5s %5d configs (%d ok)  wall %7.2f s  kernels %7.3f s  compile %7.2f s (/%d threads: %6.2f s)  wall / ideal %5.2f  framework %6.1f us/config"):format(
    name, s.evaluated, s.statuses.ok, s.wall_ms / 1e3, kernel, compile, threads, compile / threads,
    s.wall_ms / 1e3 / ideal, s.framework_ms * 1e3 / s.evaluated))
  print(("      device busy (every launch, timed or not) %.3f s: wall / device busy %.2f, wall / max(device busy, compile / threads) %.2f"):format(
    s.device_ms / 1e3, s.wall_ms / s.device_ms, s.wall_ms / 1e3 / math.max(s.device_ms / 1e3, compile / threads)))
  print(("      wall = setup %.2f + build waits %.2f + device waits %.2f + data %.2f + validation %.2f + launcher %.2f + searcher %.3f + framework %.3f s"):format(
    s.setup_ms / 1e3, s.build_ms / 1e3, s.wait_ms / 1e3, s.data_ms / 1e3, s.validation_ms / 1e3,
    s.launcher_ms / 1e3, s.searcher_ms / 1e3, s.framework_ms / 1e3))
  print(dofile("bench/pipeline/gaps.lua")(s, "      "))
  print("      " .. compile_spread(results))
  local best, cut, runs = results:best(), 0, 0
  for i = 1, #results do
    cut = cut + (results[i].cut_short and 1 or 0)
    runs = runs + #results[i].samples_ms
  end
  print(("      timed runs %d, cut short %d; best %s"):format(runs, cut,
    best and ("%.4f ms at index %d"):format(best.time_ms, best.index) or "none"))
  io.stdout:flush()
end

local function vadd()
  local n = opt.n
  local a = kt.array("float", n):random(1)
  local b = kt.array("float", n):random(2)
  local c = kt.array("float", n)
  local k = tuner:kernel{ file = file("vadd"), name = "vadd", global = n, group = 1, round_global = true,
                          args = { a:input(), b:input(), c:output(), kt.int(n) } }
  k:param("WG", { 32, 64, 96, 128, 192, 256, 384, 512 }, { group_x = "mul" })
  k:param("VEC", { 1, 2, 4, 8 }, { global_x = "div_ceil" })
  k:param("UNROLL", { 1, 2, 4, 8, 16, 32, 64, 128 })
  k:reference(c, function(ref) for i = 0, n - 1 do ref[i] = a[i] + b[i] end end)
  report("vadd", tuner:tune(k, tune_options))
end

local function gemm()
  local s = opt.size
  local A = kt.array("float", s * s):random(3)
  local B = kt.array("float", s * s):random(4)
  local C = kt.array("float", s * s)
  local k = dofile("bench/overhead/gemm_task.lua")(tuner, file("gemm"), s, A, B, C)
  report("gemm", tuner:tune(k, tune_options))
end

print(("ktlua overhead benchmark on %s (%s, %s, %d compile threads)"):format(tuner.device.name,
  tuner.device.id, tuner.isolated and "isolated" or "in-process", tuner:cache().threads))
if opt.only ~= "gemm" then vadd() end
if opt.only ~= "vadd" then gemm() end
