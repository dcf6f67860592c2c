-- bench/searchers/paired.lua: the spread over seeds of a difference between
-- searchers, group by group (leave-one-out's groups: bench/searchers/loko.lua).
--
--   build/ktlua bench/searchers/paired.lua DIR RUNS BASE SETTING [SETTING ...]
--
-- Settings are run.lua's: name or name:option=value:option=value. Every
-- setting runs seeds 1..RUNS on every dataset of DIR (Kernel Tuner caches,
-- ktlua results) to 5% of its valid configurations. For each seed, the mean
-- over a group of datasets of a setting's reached fraction of the optimum
-- minus BASE's on the same seed; printed per group (all, recorded or proxy,
-- kernel, GPU) at 1%, 2% and 5%: the mean of that difference over the seeds
-- and, in brackets, its standard error.
local kt = require "ktlua"

local dir, runs = arg[1], math.tointeger(tonumber(arg[2] or ""))
assert(dir and runs and runs > 1 and arg[4], "usage: paired.lua DIR RUNS BASE SETTING [SETTING ...]")
local PCTS = {1, 2, 5}

local function setting(spec)
  local options = {spec:match("^([^:]+)")}
  for k, v in spec:gmatch(":(%w+)=([^:]+)") do options[k] = tonumber(v) or v end
  return {name = spec, options = options}
end

local settings = {}
for i = 3, #arg do settings[#settings + 1] = setting(arg[i]) end

-- reached[dataset][setting][budget][seed]
local function measure(path)
  local rec = kt.replay(path)
  local budgets, out = {}, {}
  for b, pct in ipairs(PCTS) do budgets[b] = math.ceil(pct / 100 * rec:count() - 1e-9) end
  for si, s in ipairs(settings) do
    out[si] = {}
    for b = 1, #PCTS do out[si][b] = {} end
    for seed = 1, runs do
      local search = {}
      for k, v in pairs(s.options) do search[k] = v end
      search.seed = seed
      local res = rec:tune{search = search, seed = seed, stop = {count = budgets[#budgets]}}
      for b = 1, #PCTS do out[si][b][seed] = rec:score(res, budgets[b]) end
    end
  end
  return out
end

local reached, names = {}, {}
local ls = assert(io.popen('ls "' .. dir .. '"'))
for name in ls:lines() do
  if name:match("%.json$") or name:match("%.json%.gz$") then
    local dataset = name:gsub("%.json.*$", "")
    names[#names + 1] = dataset
    reached[dataset] = measure(dir .. "/" .. name)
  end
end
ls:close()

local group_of = {
  {"all", function() return "all" end},
  {"set", function(d) return d:find("~", 1, true) and "proxies" or "recorded" end},
  {"kernel", function(d) return d:match("^([^_~]+)") end},
  {"gpu", function(d) return (d:gsub("[~.].*$", ""):match("^[^_]+_(.+)$") or d) end},
}

local function difference(si, b, members)
  local sum, sq = 0, 0
  for seed = 1, runs do
    local x = 0
    for _, d in ipairs(members) do x = x + reached[d][si][b][seed] - reached[d][1][b][seed] end
    x = x / #members
    sum, sq = sum + x, sq + x * x
  end
  local mean = sum / runs
  return mean, math.sqrt(math.max(0, sq / runs - mean * mean) / (runs - 1))
end

for si = 2, #settings do
  io.write(("\n### %s minus %s (%d seeds)\n\n| group | datasets | 1%% | 2%% | 5%% |\n|---|---|---|---|---|\n")
    :format(settings[si].name, settings[1].name, runs))
  for _, g in ipairs(group_of) do
    local members, order = {}, {}
    for _, d in ipairs(names) do
      local k = g[2](d)
      if not members[k] then members[k] = {}; order[#order + 1] = k end
      table.insert(members[k], d)
    end
    table.sort(order)
    for _, k in ipairs(order) do
      local cells = {}
      for b = 1, #PCTS do cells[b] = ("%+.4f (%.4f)"):format(difference(si, b, members[k])) end
      io.write(("| %s %s | %d | %s |\n"):format(g[1], k, #members[k], table.concat(cells, " | ")))
    end
  end
end
