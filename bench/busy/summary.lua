-- bench/busy/summary.lua RESULTS: one line on a tuning's results (bench/busy/busy.sh):
-- configurations and statuses, timed runs (all, the most a configuration had), those stopped at
-- 10 by a busy machine (crowded), and the best.
local kt = require "ktlua"
local r = kt.load((assert(arg[1], "usage: summary.lua RESULTS")))
local ok, runs, most, crowded = 0, 0, 0, 0
for _, x in ipairs(r:list()) do
  if x.status == "ok" then ok = ok + 1 end
  local n = #(x.samples_ms or {})
  runs, most = runs + n, math.max(most, n)
  if x.crowded then crowded = crowded + 1 end
end
local best = r:best()
local names = {}
for name, v in pairs(best and best.config or {}) do names[#names + 1] = name .. "=" .. tostring(v) end
table.sort(names)
print(("%d configurations (%d ok), %d timed runs (at most %d), %d crowded; best %s ms: %s")
  :format(#r, ok, runs, most, crowded,
  best and ("%.3f"):format(best.time_ms) or "-", table.concat(names, " ")))
