-- bench/counters/first.lua: the first tuning with counters of a fresh process (it crashed the
-- process while the counter availability image was freed under CUPTI's host object;
-- bench/RESULTS.md), on bench/pipeline's GEMM, printed whole: statuses, the counters read, what
-- the device log says. Variants: --isolate=0 (counters in this process), --pipeline=0,
-- --workers=0 (no compiler processes), --before=1 (a tuning without counters first).
--   ktlua bench/counters/first.lua [--device=cuda:0] [--count=6] [--size=2048] [--isolate=1]
--     [--pipeline=1] [--workers=-1] [--before=0]
local kt = require "ktlua"
local opt = require("ktlua.cli").options(arg, { device = "cuda:0", count = 6, size = 2048, isolate = 1,
  pipeline = 1, workers = -1, before = 0 }, "bench/counters/first.lua")

local tuner = kt.tuner(opt.device, { isolate = opt.isolate ~= 0,
  compile_workers = opt.workers >= 0 and opt.workers or nil })
local s = opt.size
local A, B = kt.array("float", s * s):random(3), kt.array("float", s * s):random(4)
local C = kt.array("float", s * s)
local cuda = tuner.device.backend == "cuda"
local k = dofile("bench/overhead/gemm_task.lua")(tuner, cuda and "bench/overhead/gemm.cu" or
  "bench/overhead/gemm.cl", s, A, B, C)
if opt.before ~= 0 then tuner:tune(k, { stop = { count = opt.count }, progress = false }) end
local r = tuner:tune(k, { profile = cuda and { "sm__throughput.avg.pct_of_peak_sustained_elapsed",
  "dram__sectors_read.sum" } or nil, stop = { count = opt.count }, pipeline = opt.pipeline ~= 0,
  progress = false, search = { "random", seed = 1 } })
for _, x in ipairs(r:list()) do
  local m = x.metrics or {}
  print(x.index, x.status, x.time_ms, m["sm__throughput.avg.pct_of_peak_sustained_elapsed"],
    m["dram__sectors_read.sum"], x.error)
end
local sm = r:summary()
print("profiled", sm.profiled, "passes", sm.profile_passes, "notice", r.notice)
print("device_log", sm.device_log)
