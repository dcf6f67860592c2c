-- bench/space/sampled.lua: a budgeted random tuning of a space too large
-- to list (issue 20.8): four parameters of 1,000 values linked by one
-- constraint (10^12 combinations, about 5 * 10^11 valid), stop = {count = 3}.
--
--   build/ktlua bench/space/sampled.lua [count]
--
-- Prints the time of the tuning and of an estimate of the count, and this
-- process's peak resident memory (VmHWM; the device process is apart and
-- holds no space) before and after. Run it in a fresh process.
local kt = require "ktlua"

local count = tonumber(arg and arg[1]) or 3

local function peak_kib()
  for line in io.lines("/proc/self/status") do
    local kib = line:match("^VmHWM:%s+(%d+)")
    if kib then return tonumber(kib) end
  end
end

local function now()
  local p = assert(io.popen("date +%s.%N"))
  local t = tonumber(p:read("a"))
  p:close()
  return t
end

local values = {}
for v = 1, 1000 do values[v] = v end
local tuner = kt.tuner()
local out = kt.array("float", 64)
local function kernel()
  local k = tuner:kernel{ source = "__kernel void k(__global float *o) { o[get_global_id(0)] = A + B + C + D; }",
                          name = "k", global = 64, args = { out:output() } }
  for _, name in ipairs { "A", "B", "C", "D" } do k:param(name, values) end
  k:constraint("A + B + C + D <= 2000")
  return k
end

-- the device process and the compiler start outside the figures
tuner:tune(kernel(), { search = "random", stop = { count = 1 }, seed = 1 })
local before = peak_kib()
local t0 = now()
local results = tuner:tune(kernel(), { search = "random", stop = { count = count }, seed = 7 })
local t1 = now()
local n, exact = kernel():space():estimate()
local t2 = now()
print(string.format("tuned %d configurations (%s) in %.3f s; estimate %.4g (exact: %s) in %.3f s",
  #results, results.stopped, t1 - t0, n, tostring(exact), t2 - t1))
print(string.format("peak resident memory: %.1f MiB before the tuning, %.1f MiB after",
  before / 1024, peak_kib() / 1024))
local s = results:summary()
print(string.format("of the tuning: searcher %.1f ms, build %.1f ms, kernel %.3f ms, wall %.1f ms",
  s.searcher_ms, s.build_ms, s.kernel_ms, s.wall_ms))
if os.getenv("SUMMARY") then for k, v in pairs(s) do if type(v) == "number" then print(k, v) end end end
