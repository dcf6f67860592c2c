-- bench/counters/probe.lua: do hardware counters work on this CUDA device? Tries each counter
-- of the profile searcher (core/models/bottlenecks.h) and the documentation's examples on a vector
-- copy, one tuning of one configuration each, then all of them together on the GEMM of
-- bench/pipeline: the passes they need and what profiling costs against timing.
--   ktlua bench/counters/probe.lua [--device=cuda:0] [--size=2048] [--n=5]
local kt = require "ktlua"
local opt = require("ktlua.cli").options(arg, { device = "cuda:0", size = 2048, n = 5 },
  "bench/counters/probe.lua")

local tuner = kt.tuner(opt.device)
print(("%s (%s)"):format(tuner.device.name, tuner.device.id))
local n = 1 << 20
local a, b = kt.array("float", n):random(1), kt.array("float", n)
local copy = tuner:kernel{ name = "copy", global = n, group = 1, args = { a:input(), b:output() },
  source = 'extern "C" __global__ void copy(const float *a, float *b) {'
    .. ' int i = blockIdx.x * blockDim.x + threadIdx.x; b[i] = a[i]; }' }
copy:param("WG", { 128, 256 }, { group_x = "mul" })

local names = { "dram__bytes_read.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed" }
for _, c in ipairs(kt.profile_counters) do names[#names + 1] = c end
names[#names + 1] = "dram__bytes_read.sum" -- again: the first collection of a context is no different
local bad = {}
for _, c in ipairs(names) do
  local ok, r = pcall(tuner.tune, tuner, copy, { profile = { c }, stop = { count = 1 }, progress = false })
  local v = ok and r[1].metrics and r[1].metrics[c]
  if not v then bad[#bad + 1] = c end
  print(("%-80s %s"):format(c, ok and tostring(v) or ("ERROR " .. r)))
end
print(("%d of %d counters read"):format(#names - #bad, #names))
local ok, r = pcall(tuner.tune, tuner, copy, { profile = kt.profile_counters, stop = { count = 2 }, progress = false })
print("all at once on the copy:", ok and ("%s, %d counters, %d passes"):format(r[1].status,
  r[1].metrics and #kt.profile_counters or 0, r:summary().profile_passes) or r)

local s = opt.size
local A, B, C = kt.array("float", s * s):random(3), kt.array("float", s * s):random(4), kt.array("float", s * s)
local k = dofile("bench/overhead/gemm_task.lua")(tuner, "bench/overhead/gemm.cu", s, A, B, C)
for _, profile in ipairs({ false, true }) do
  local r = tuner:tune(k, { search = "random", seed = 1, stop = { count = opt.n }, progress = false,
    profile = profile and kt.profile_counters or nil })
  local sm = r:summary()
  for i = 1, #r do if r[i].error then print("  " .. r[i].status .. ": " .. r[i].error) end end
  print(("GEMM %d, %d configurations %s: wall %.2f s, profiling %.2f s (%d profiled, %d passes per launch)")
    :format(s, sm.evaluated, profile and "with counters" or "timed only", sm.wall_ms / 1e3,
      sm.profile_ms / 1e3, sm.profiled, sm.profile_passes))
  local best = r:best()
  if profile and best and best.metrics then
    for _, c in ipairs(kt.profile_counters) do print(("  %-78s %.4g"):format(c, best.metrics[c] or 0 / 0)) end
  end
end
