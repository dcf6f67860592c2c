-- Online tuning's best against offline tuning's (issue 28.18): a microsecond
-- vector addition (examples/kernels/vadd.*) tuned offline once (exhaustive,
-- the default repeats), then online `trials` times, with and without the
-- re-measurement of the leading candidates (online option `confirm`). Each
-- online best is judged by the offline tuning's time for that configuration:
-- the ratio to the offline best says how close it came (1.00: the same).
--   ktlua bench/online/online.lua [--device=ID] [--n=N] [--trials=T]
--                                 [--candidates=K] [--runs=R]
local kt = require "ktlua"
local o = require("ktlua.cli").options(arg, { device = "default", n = 1 << 16, trials = 10,
  candidates = 3, runs = 3 }, "bench/online/online.lua: online tuning's best against offline's")

local n = o.n
local tuner = kt.tuner(o.device)
local cuda = tuner.device.backend == "cuda"
local a = kt.array("float", n):fill(function(i) return i end)
local b = kt.array("float", n):random(42)
local c = kt.array("float", n)
local k = tuner:kernel{ file = cuda and "examples/kernels/vadd.cu" or "examples/kernels/vadd.cl",
  name = cuda and "vadd<VEC>" or "vadd", global = n, group = 1, round_global = true,
  args = { a:input(), b:input(), c:output(), kt.int(n) } }
k:param("WG", { 32, 64, 128, 256, 512 }, { group_x = "mul" })
k:param("VEC", { 1, 2, 4, 8, 16 }, { global_x = "div" })

local offline = tuner:tune(k, { search = "exhaustive" })
local by_index, best = {}, offline:best()
for _, r in ipairs(offline) do if r.status == "ok" then by_index[r.index] = r.time_ms end end

-- One online tuning, stepped until its best is declared: the offline time
-- of that best, and the steps it took.
local function online(confirm)
  local on <close> = tuner:online(k, { search = "exhaustive", confirm = confirm })
  local steps = 0
  repeat
    on:step()
    steps = steps + 1
  until on:done()
  return by_index[on:best().index], steps
end

local function trials(confirm)
  local sum, worst, steps, hits = 0, 0, 0, 0
  for _ = 1, o.trials do
    local t, s = online(confirm)
    local ratio = t / best.time_ms
    sum, worst, steps = sum + ratio, math.max(worst, ratio), s
    if ratio == 1 then hits = hits + 1 end
  end
  return sum / o.trials, worst, steps, hits
end

print(("online against offline tuning: vadd of %d floats on %s (%s), %d configurations, %d "
       .. "trials; offline best %.4f ms"):format(n, tuner.device.name, tuner.device.id, #offline,
       o.trials, best.time_ms))
print()
print("| online | steps to its best | mean best / offline best | worst | offline's best found |")
print("| --- | ---: | ---: | ---: | ---: |")
for _, v in ipairs { { "one measurement each", false },
                     { ("%d leading candidates re-measured %d times"):format(o.candidates, o.runs),
                       { candidates = o.candidates, runs = o.runs } } } do
  local mean, worst, steps, hits = trials(v[2])
  print(("| %s | %d | %.3f | %.3f | %d / %d |"):format(v[1], steps, mean, worst, hits, o.trials))
end
