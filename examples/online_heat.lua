-- Heat diffusion on an n x n plate, its stencil kernel tuned online while
-- the simulation runs: every time step is one on:step(), which runs the
-- kernel on the current temperatures with the next configuration the
-- search proposes (or, once the search has ended, the best), and reads the
-- new temperatures back. The edges are held at 0 and the plate starts as
-- sin(pi x) sin(pi y), whose discrete solution decays by a known factor per
-- step: the end state is checked against it.
--
--   ktlua examples/online_heat.lua [--n=N] [--steps=N] [--count=N] [--device=ID]
--     [--search=NAME] [--seconds=S] [--seed=N] [--repeats=N] [--progress] [--early_stop]
--     [--journal=FILE] [--resume] [--db=FILE] [--offline] [--output=FILE (with --offline)]
--
-- --offline tunes first (the same search and budget) and then runs the
-- steps with the best configuration, for comparison.
local kt = require "ktlua"
local o = require("ktlua.cli").tuning(arg, { n = 128, steps = 300, count = 40, search = "bestfirst",
  seed = 1, journal = "", resume = false, db = "", offline = false },
  "examples/online_heat.lua: a heat simulation whose kernel is tuned while it runs")
local n, steps = o.n, o.steps
local r = 0.2 -- alpha dt / h^2: stable below 0.25

local u = kt.array("float", n * n)
local v = kt.array("float", n * n)
local function at(i, j) return j * n + i end
for j = 0, n - 1 do
  for i = 0, n - 1 do
    u[at(i, j)] = math.sin(math.pi * i / (n - 1)) * math.sin(math.pi * j / (n - 1))
  end
end

local tuner = kt.tuner(o.device)
local k = tuner:kernel{ name = "heat", global = { n, n }, group = { 1, 1 }, round_global = true,
  file = tuner.device.backend == "cuda" and "kernels/heat.cu" or "kernels/heat.cl",
  args = { u:input(), v:output(), kt.int(n), kt.float(r) } }
k:param("BX", { 1, 2, 4, 8, 16, 32, 64 }, { group_x = "mul" })
k:param("BY", { 1, 2, 4, 8, 16 }, { group_y = "mul" })
k:param("ROWS", { 1, 2, 4, 8 }, { global_y = "div_ceil" })
k:constraint("BX * BY <= 256")

-- A step's time is its kernel's, timed once: the tuning's other options
-- are for --offline.
for _, name in ipairs { "output", "progress", "repeats", "early_stop" } do
  if o.tune[name] and not o.offline then error(("--%s applies to --offline only"):format(name), 0) end
end
local search = o.tune
search.journal, search.resume = o.journal ~= "" and o.journal or nil, o.resume or nil
search.db, search.size = o.db ~= "" and kt.db(o.db) or nil, o.db ~= "" and { n = n } or nil

local clock = kt.clock()
local tried, fell_back, best = 0, 0, nil
if o.offline then
  local results = tuner:tune(k, search)
  tried, best = #results, results:best()
  for _ = 1, steps do
    tuner:run(k, best)
    u:copy_from(v)
  end
else
  search.fallback = { BX = 16, BY = 4, ROWS = 1 }
  search.output, search.progress, search.repeats, search.early_stop = nil, nil, nil, nil
  local on = tuner:online(k, search)
  for _ = 1, steps do
    local step = on:step()
    if step.searching then tried = tried + 1 end
    if step.fell_back then fell_back = fell_back + 1 end
    u:copy_from(v) -- the new temperatures are the next step's input
  end
  best = on:best()
end
local seconds = kt.clock() - clock

-- The discrete solution: sin(pi x) sin(pi y) times lambda per step.
local s = math.sin(math.pi / (2 * (n - 1)))
local lambda = 1 - 8 * r * s * s
local worst = 0
for j = 0, n - 1 do
  for i = 0, n - 1 do
    local want = lambda ^ steps * math.sin(math.pi * i / (n - 1)) * math.sin(math.pi * j / (n - 1))
    worst = math.max(worst, math.abs(u[at(i, j)] - want))
  end
end

print(("heat %dx%d, %d steps on %s: %d configurations tried %s (%d steps fell back)"):format(
  n, n, steps, tuner.device.id, tried, o.offline and "before the steps" or "online", fell_back))
print(("the whole loop (tuning included): %.3f s"):format(seconds))
print(("best: BX=%d BY=%d ROWS=%d  %.4f ms"):format(best.config.BX, best.config.BY, best.config.ROWS,
  best.time_ms))
print(("largest error against the discrete solution: %.3g (peak %.4f)"):format(worst, lambda ^ steps))
assert(worst < 1e-4, "the simulation went wrong")
