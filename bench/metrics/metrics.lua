-- What metrics and objectives cost per configuration: a replay of the
-- recorded CLBlast GEMM (17,956 configurations, exhaustive), with the time
-- as the objective, a recorded number (GFLOP/s) as the objective, and a
-- metric written in Lua; then a generated source per configuration on the
-- default device (the generator's share of a tuning).
--   build/ktlua bench/metrics/metrics.lua [--repeats=5] [--datasets=../shared/datasets]
local kt = require "ktlua"
local o = require("ktlua.cli").options(arg, { repeats = 5, datasets = "../shared/datasets",
                                              configs = 64 })

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end

local path = o.datasets .. "/gemm_RTX_3090.json.gz"
local rec = kt.replay(path)
local n = rec:count()
local cases = {
  { "time (default)", {} },
  { "objective = recorded GFLOP/s, maximize", { objective = "GFLOP/s", maximize = true } },
  { "one Lua metric, objective", { metrics = { per_ms = function(r) return 1 / r.time_ms end },
                                   objective = "per_ms", maximize = true } },
}
print(("replay of %s: %d configurations, exhaustive, median of %d"):format(path, n, o.repeats))
print("| objective | ms | µs per configuration |")
print("| --- | ---: | ---: |")
for _, case in ipairs(cases) do
  local times = {}
  for i = 1, o.repeats do
    local opts = { search = "exhaustive" }
    for k, v in pairs(case[2]) do opts[k] = v end
    local t0 = kt.clock()
    rec:tune(opts)
    times[i] = kt.clock() - t0
  end
  local t = median(times)
  print(("| %s | %.1f | %.2f |"):format(case[1], t * 1e3, t * 1e6 / n))
end

-- A generated source per configuration: the generator's time against the
-- tuning's, on the default device.
local tuner = kt.tuner()
local a, c = kt.array("float", 4096):fill(1), kt.array("float", 4096)
local calls, spent = 0, 0
local k = tuner:kernel{ name = "gen", global = 4096, args = { a:input(), c:output() },
  source = function(cfg)
    local t0 = kt.clock()
    calls = calls + 1
    local terms = {}
    for t = 1, cfg.TERMS do terms[t] = ("a[i] * %d.0f"):format(t) end
    local text = "__kernel void gen(__global const float *a, __global float *c) "
              .. "{ int i = get_global_id(0); c[i] = " .. table.concat(terms, " + ") .. "; }"
    spent = spent + kt.clock() - t0
    return text
  end }
local values = {}
for t = 1, o.configs do values[t] = t end
k:param("TERMS", values)
local t0 = kt.clock()
local r = tuner:tune(k, { repeats = 1 })
local wall = kt.clock() - t0
print(("generated sources: %d configurations on %s, %d generator calls, %.1f µs per call, "
  .. "tuning %.0f ms (%.3f%% in the generator), program cache %d misses"):format(
  #r, tuner.device.name, calls, spent * 1e6 / calls, wall * 1e3, 100 * spent / wall,
  tuner:cache().misses))
