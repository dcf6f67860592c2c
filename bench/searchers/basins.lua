-- bench/searchers/basins.lua: where a local search can get stuck in a recorded
-- space, and where bestfirst's runs end (bench/RESULTS.md, "A second basin").
--
--   build/ktlua bench/searchers/basins.lua FILE.json.gz [PERCENT [RUNS [OPTION=VALUE:...]]]
--
-- First the space's basins, twice: for the one-change moves (one parameter to
-- any other value) and for those with the pair moves too (two parameters, each
-- to an adjacent value: bestfirst's `pairs`). A basin is the valid
-- configurations from which always taking the fastest such neighbour ends at
-- the same local minimum; one line per minimum: its time as a fraction of the
-- optimum's, the basin's size, its configuration. Then RUNS runs (50) of
-- bestfirst (with the options given, as run.lua's name:option=value) to
-- PERCENT (2) of the valid configurations: how many end at each configuration,
-- the mean fraction of the optimum reached, and the mean evaluation at which
-- that configuration was found.
local kt = require "ktlua"

local path = assert(arg[1], "usage: basins.lua FILE.json.gz [PERCENT [RUNS [OPTION=VALUE:...]]]")
local percent, runs = tonumber(arg[2] or 2), math.tointeger(tonumber(arg[3] or 50))
local rec = kt.replay(path)
local params = rec:space():params()
local best = rec:optimum().time_ms

local function key_of(cfg)
  local t = {}
  for i, p in ipairs(params) do t[i] = tostring(cfg[p.name]) end
  return table.concat(t, " ")
end

local ok, by_key = {}, {}
for _, r in ipairs(rec:records():list()) do
  if r.status == "ok" then ok[#ok + 1] = r; by_key[key_of(r.config)] = r end
end

local function each_neighbour(cfg, with_pairs, f)
  local c = {}
  for k, v in pairs(cfg) do c[k] = v end
  local at = {}
  for i, p in ipairs(params) do
    local old = c[p.name]
    for j, v in ipairs(p.values) do
      if v == old then at[i] = j else c[p.name] = v; f(by_key[key_of(c)]) end
    end
    c[p.name] = old
  end
  if not with_pairs then return end
  for i, p in ipairs(params) do
    for j = i + 1, #params do
      local q = params[j]
      for _, dp in ipairs{-1, 1} do
        for _, dq in ipairs{-1, 1} do
          local a, b = p.values[at[i] + dp], q.values[at[j] + dq]
          if a ~= nil and b ~= nil then
            local oa, ob = c[p.name], c[q.name]
            c[p.name], c[q.name] = a, b
            f(by_key[key_of(c)])
            c[p.name], c[q.name] = oa, ob
          end
        end
      end
    end
  end
end

local function basins(with_pairs)
  local down = {}
  for _, r in ipairs(ok) do
    local nb
    each_neighbour(r.config, with_pairs, function(n) if n and (not nb or n.time_ms < nb.time_ms) then nb = n end end)
    down[r] = nb and nb.time_ms < r.time_ms and nb or false
  end
  local size = {}
  for _, r in ipairs(ok) do
    local at = r
    while down[at] do at = down[at] end
    size[at] = (size[at] or 0) + 1
  end
  local list = {}
  for r, n in pairs(size) do list[#list + 1] = {r = r, n = n} end
  table.sort(list, function(a, b) return a.r.time_ms < b.r.time_ms end)
  io.write(("\n%s: %d local minima among %d valid configurations\n"):format(
    with_pairs and "one-change and pair moves" or "one-change moves", #list, #ok))
  for _, e in ipairs(list) do
    io.write(("  %.3f  basin %5d  %s\n"):format(best / e.r.time_ms, e.n, key_of(e.r.config)))
  end
end

local names = {}
for i, p in ipairs(params) do names[i] = p.name end
io.write(("%s: %s (optimum %.4g ms)\n"):format(path:match("([^/]+)$"), table.concat(names, " "), best))
basins(false)
basins(true)

local search = {"bestfirst"}
for k, v in (arg[4] or ""):gmatch("(%w+)=([^:]+)") do search[k] = tonumber(v) or v end
local budget = math.ceil(percent / 100 * rec:count() - 1e-9)
local ends, total = {}, 0
for seed = 1, runs do
  search.seed = seed
  local res = rec:tune{search = search, seed = seed, stop = {count = budget}}
  local b, at = res:best(), 0
  for i = 1, #res do if res[i].index == b.index then at = i end end
  local k = key_of(b.config)
  ends[k] = ends[k] or {n = 0, at = 0, reached = best / b.time_ms}
  ends[k].n, ends[k].at = ends[k].n + 1, ends[k].at + at
  total = total + best / b.time_ms
end
local list = {}
for k, e in pairs(ends) do list[#list + 1] = {k = k, e = e} end
table.sort(list, function(a, b) return a.e.reached > b.e.reached end)
io.write(("\nbestfirst (%s) at %g%% (%d evaluations), %d runs: mean %.3f\n"):format(
  arg[4] or "defaults", percent, budget, runs, total / runs))
for _, x in ipairs(list) do
  io.write(("  %3d runs end at %.3f, found at evaluation %.1f on average: %s\n"):format(
    x.e.n, x.e.reached, x.e.at / x.e.n, x.k))
end
