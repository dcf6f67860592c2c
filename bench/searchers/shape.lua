-- bench/searchers/shape.lua: what makes a recorded space hard for a local
-- search, one line a dataset (bench/RESULTS.md, "Search that generalises").
--   build/ktlua bench/searchers/shape.lua FILE.json.gz ...
-- Per dataset: the parameters' numbers of values; the failed share; how many
-- configurations lie within 1%, 5% and 10% of the optimum; the one-change
-- local minima (no valid configuration one parameter away is faster) and how
-- many of them are more than 5% slower than the optimum (traps); the share of
-- valid configurations from which always taking the fastest one-change
-- neighbour ends within 2% of the optimum (the optimum's basin); and the
-- parameters whose best setting other than the optimum's costs the most
-- (the optimum's time over the best time without its value).
local kt = require "ktlua"
assert(arg[1], "usage: shape.lua FILE.json.gz ...")

local function shape(path)
  local rec = kt.replay(path)
  local params = rec:space():params()
  local ok, fails, key = {}, 0, {}
  local function key_of(cfg)
    local parts = {}
    for i, p in ipairs(params) do parts[i] = tostring(cfg[p.name]) end
    return table.concat(parts, "\0")
  end
  local all = rec:records():list()
  for _, r in ipairs(all) do
    if r.status == "ok" then ok[#ok + 1] = r; key[key_of(r.config)] = r else fails = fails + 1 end
  end
  local best = math.huge
  for _, r in ipairs(ok) do best = math.min(best, r.time_ms) end
  local within = {0, 0, 0}
  for _, r in ipairs(ok) do
    for i, f in ipairs{1.01, 1.05, 1.10} do if r.time_ms <= best * f then within[i] = within[i] + 1 end end
  end
  -- the fastest valid one-change neighbour of each configuration
  local down = {}
  for _, r in ipairs(ok) do
    local nb
    for _, p in ipairs(params) do
      local cfg = {}
      for k, v in pairs(r.config) do cfg[k] = v end
      for _, v in ipairs(p.values) do
        if v ~= r.config[p.name] then
          cfg[p.name] = v
          local n = key[key_of(cfg)]
          if n and (not nb or n.time_ms < nb.time_ms) then nb = n end
        end
      end
    end
    down[r] = nb and nb.time_ms < r.time_ms and nb or false
  end
  local minima, traps, basin = 0, 0, 0
  for _, r in ipairs(ok) do
    if not down[r] then
      minima = minima + 1
      if r.time_ms > best * 1.05 then traps = traps + 1 end
    end
    local at = r
    while down[at] do at = down[at] end
    if at.time_ms <= best * 1.02 then basin = basin + 1 end
  end
  -- what each parameter's optimum value is worth
  local opt = rec:optimum().config
  local cost = {}
  for _, p in ipairs(params) do
    if #p.values > 1 then
      local other = math.huge
      for _, r in ipairs(ok) do
        if r.config[p.name] ~= opt[p.name] then other = math.min(other, r.time_ms) end
      end
      cost[#cost + 1] = {p.name, best / other}
    end
  end
  table.sort(cost, function(a, b) return a[2] < b[2] end)
  local sizes = {}
  for _, p in ipairs(params) do if #p.values > 1 then sizes[#sizes + 1] = #p.values end end
  local worst = {}
  for i = 1, math.min(2, #cost) do worst[i] = ("%s %.2f"):format(cost[i][1], cost[i][2]) end
  print(("| %s | %s | %d | %.2f | %d / %d / %d | %d (%d) | %.2f | %s |"):format(
    path:match("([^/]+)%.json[%.gz]*$"), table.concat(sizes, "x"), #all, fails / #all,
    within[1], within[2], within[3], minima, traps, basin / #ok, table.concat(worst, ", ")))
end

print("| dataset | values | configurations | failed | within 1% / 5% / 10% | local minima (traps) | basin | costliest parameters |")
print("|---|---|---|---|---|---|---|---|")
for i = 1, #arg do shape(arg[i]) end
