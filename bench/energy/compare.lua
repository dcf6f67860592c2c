-- bench/energy/compare.lua: the fastest configuration of a results file measured with energy
-- against the one of least energy per run (and of least energy-delay product), and what the
-- latter saves at what slowdown.
--   ktlua bench/energy/compare.lua FILE.json
local kt = require "ktlua"
local path = assert(arg[1], "usage: ktlua bench/energy/compare.lua FILE.json")
local r = kt.load(path)
local fastest, frugal, edp, n = nil, nil, nil, 0
for i = 1, #r do
  local x = r[i]
  if x.status == "ok" and x.metrics and x.metrics.energy then
    n = n + 1
    if not fastest or x.time_ms < fastest.time_ms then fastest = x end
    if not frugal or x.metrics.energy < frugal.metrics.energy then frugal = x end
    if not edp or x.metrics.energy * x.time_ms < edp.metrics.energy * edp.time_ms then edp = x end
  end
end
assert(fastest, "no ok configuration with an energy in " .. path)
local function config(x)
  local names = {}
  for name in pairs(x.config) do names[#names + 1] = name end
  table.sort(names)
  for i, name in ipairs(names) do names[i] = name .. "=" .. tostring(x.config[name]) end
  return table.concat(names, " ")
end
local function line(what, x)
  print(("%-22s %9.5f ms  %10.6f mJ/run  %6.1f W  %5.0f MHz   %s"):format(what, x.time_ms,
    x.metrics.energy * 1e3, x.metrics.power, x.metrics.sm_clock or 0, config(x)))
end
print(("%s: %d ok configurations with energy"):format(path, n))
line("fastest", fastest)
line("most energy-efficient", frugal)
line("least energy x delay", edp)
print(("the efficient one saves %.1f %% energy per run at a slowdown of %.1f %%"):format(
  100 * (1 - frugal.metrics.energy / fastest.metrics.energy), 100 * (frugal.time_ms / fastest.time_ms - 1)))
