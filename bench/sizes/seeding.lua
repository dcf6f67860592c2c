-- Problem-size-aware tuning (tuner:tune_sizes): how many evaluations a
-- search needs to come within 5% of a size's optimum, with and without
-- being seeded by the best configurations of the size tuned before it.
-- Each size is first tuned exhaustively (its optimum); then, for each
-- seed of the searcher, a bestfirst search of the budget runs unseeded and
-- seeded with the previous size's three best (what tune_sizes does).
--
--   ktlua bench/sizes/seeding.lua [--device=ID] [--budget=N] [--runs=N] [--only=heat|matmul]
local kt = require "ktlua"
local o = require("ktlua.cli").options(arg, { device = "default", budget = 30, runs = 5, only = "" },
  "bench/sizes/seeding.lua: evaluations to 95% of the optimum, seeded or not")
local tuner = kt.tuner(o.device)
local backend = tuner.device.backend

local kernels = {}

kernels.heat = { sizes = { 64, 128, 256, 512 }, make = function(n)
  local u, v = kt.array("float", n * n):random(1), kt.array("float", n * n)
  local k = tuner:kernel{ name = "heat", global = { n, n }, group = { 1, 1 }, round_global = true,
    file = "examples/kernels/heat." .. (backend == "cuda" and "cu" or "cl"),
    args = { u:input(), v:output(), kt.int(n), kt.float(0.2) } }
  k:param("BX", { 1, 2, 4, 8, 16, 32, 64 }, { group_x = "mul" })
  k:param("BY", { 1, 2, 4, 8, 16 }, { group_y = "mul" })
  k:param("ROWS", { 1, 2, 4, 8 }, { global_y = "div_ceil" })
  k:constraint("BX * BY <= 256")
  return k
end }

kernels.matmul = { sizes = { 64, 128, 256 }, make = function(n)
  local A, B = kt.array("float", n * n):random(1), kt.array("float", n * n):random(2)
  local C = kt.array("float", n * n)
  local k = tuner:kernel{ name = "matmul", global = { n, n }, group = { 1, 1 },
    file = "bench/kernels/matmul." .. (backend == "cuda" and "cu" or "cl"),
    args = { C:output(), A:input(), B:input(), kt.int(n) } }
  k:param("block_size_x", { 4, 8, 16, 32, 64 }, { group_x = "mul" })
  k:param("block_size_y", { 1, 2, 4, 8, 16 }, { group_y = "mul" })
  k:param("tile_size_x", { 1, 2, 4, 8 }, { global_x = "div" })
  k:param("tile_size_y", { 1, 2, 4, 8 }, { global_y = "div" })
  k:constraint(("%d %% (block_size_x * tile_size_x) == 0 and %d %% (block_size_y * tile_size_y) "
    .. "== 0 and block_size_x * block_size_y <= 256"):format(n, n))
  return k
end }

-- Evaluations until the best so far is within 5% of the optimum, or nil.
local function to_95(results, optimum)
  local best = math.huge
  for i = 1, #results do
    local r = results[i]
    if r.status == "ok" and r.time_ms < best then best = r.time_ms end
    if best <= optimum * 1.05 then return i end
  end
end

local function top(results, n)
  local ok = {}
  for _, r in ipairs(results:list()) do if r.status == "ok" then ok[#ok + 1] = r end end
  table.sort(ok, function(a, b) return a.time_ms < b.time_ms end)
  local configs = {}
  for i = 1, math.min(n, #ok) do configs[i] = ok[i].config end
  return configs
end

-- The mean of the runs that got there (runs is the count: nil holes).
local function mean(list, runs)
  local sum, n, missed = 0, 0, 0
  for i = 1, runs do
    if list[i] then sum, n = sum + list[i], n + 1 else missed = missed + 1 end
  end
  return n > 0 and sum / n or math.huge, missed
end

print("| kernel | size | space | unseeded: evaluations to 95% | seeded | runs | budget |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for _, name in ipairs({ "heat", "matmul" }) do
  if o.only == "" or o.only == name then
    local previous
    for _, n in ipairs(kernels[name].sizes) do
      local all = tuner:tune(kernels[name].make(n), { search = "exhaustive", repeats = 5 })
      local optimum = all:best().time_ms
      if previous then
        local seeds = top(previous, 3)
        local plain, seeded = {}, {}
        for run = 1, o.runs do
          local opts = { search = "bestfirst", seed = run, stop = { count = o.budget }, repeats = 5 }
          plain[run] = to_95(tuner:tune(kernels[name].make(n), opts), optimum)
          opts.seeds = seeds
          seeded[run] = to_95(tuner:tune(kernels[name].make(n), opts), optimum)
        end
        local p, pm = mean(plain, o.runs)
        local s, sm = mean(seeded, o.runs)
        print(("| %s | %d | %d | %.1f (%d of %d never) | %.1f (%d never) | %d | %d |"):format(name, n,
          #all, p, pm, o.runs, s, sm, o.runs, o.budget))
      end
      previous = all
    end
  end
end
