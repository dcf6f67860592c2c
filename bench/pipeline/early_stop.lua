-- Early stop on the examples (issue 15.5): each example that takes --early_stop,
-- tuned twice in processes of their own (without, then with early stop) on one
-- device; prints the tuning's wall time, the timed runs, the configurations cut
-- short and the best found by each, for bench/RESULTS.md.
--   ktlua bench/pipeline/early_stop.lua [--device=ID] [--examples=vectoradd,reduction,sort]
local kt = require "ktlua"
local o = require("ktlua.cli").options(arg, { device = "default", examples = "vectoradd,reduction,sort" },
  "bench/pipeline/early_stop.lua: early stop on the examples")

local exe = arg[-1] or "ktlua"
local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function tune(example, early)
  local out = os.tmpname() .. ".json"
  local cmd = ("%s examples/tune_%s.lua --device=%s --output=%s%s >/dev/null"):format(quote(exe),
    example, quote(o.device), quote(out), early and " --early_stop" or "")
  assert(os.execute(cmd), "failed: " .. cmd)
  local r = kt.load(out)
  os.remove(out)
  local runs, cut = 0, 0
  for _, x in ipairs(r) do
    runs = runs + #(x.samples_ms or {})
    if x.cut_short then cut = cut + 1 end
  end
  return { results = r, wall = r:summary().wall_ms / 1e3, runs = runs, cut = cut, best = r:best() }
end

local function config(r, best)
  return require("ktlua.report").config(best.config, r.params)
end

print(("early stop on the examples, device %s"):format(o.device))
print()
print("| example | early stop | configurations | wall (s) | timed runs | cut short | best (ms) | best configuration |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
for example in o.examples:gmatch("[^,]+") do
  for _, early in ipairs({ false, true }) do
    local t = tune(example, early)
    print(("| %s | %s | %d | %.2f | %d | %d | %.4f | %s |"):format(example, early and "on" or "off",
      #t.results, t.wall, t.runs, t.cut, t.best.time_ms, config(t.results, t.best)))
  end
end
