-- bench/searchers/run.lua: a fair comparison of searchers on recorded
-- spaces (design.md section 7).
--
-- For each dataset (Kernel Tuner cache files or ktlua result files in a
-- directory) and each searcher, R seeded runs (seeds 1..R) on the replay
-- at budgets of 1%, 2%, 5% and 10% of the valid configurations (rounded
-- up). Per cell it prints the mean and the 5th percentile (nearest rank)
-- of optimum time / best time found, and the mean score: the same ratio
-- averaged over the evaluations of the budget (rec:score), and the CPU time
-- per evaluation. Then it checks the targets for the default searcher
-- (check_target below).
--
--   build/ktlua bench/searchers/run.lua [--datasets DIR] [--runs R]
--       [--searchers greedy,random,...] [--only PATTERN] [--budgets 1,2,5,10]
--
-- --searchers also takes variants for tuning defaults, as
-- name:option=value:option=value (greedy:sample=8:model=0); --only keeps
-- the datasets whose file name contains PATTERN.
local kt = require "ktlua"

local DEFAULT = "bestfirst" -- the recommended searcher (see core/search/search.c)
local BUDGETS = {1, 2, 5, 10}
local SEARCHERS = {
  {"random"}, {"bestfirst"}, {"greedy"}, {"annealing"}, {"mcmc"}, {"genetic"}, {"differential"},
  {"pso"}, {"staged"}, {"portfolio"}, {"tabu (Lua)", lua = "ktlua.search_tabu"},
}
-- Only when named (--searchers): the model searcher costs 5 to 11 ms of CPU
-- per evaluation on these spaces, so 50 runs up to 10% take hours (bench/RESULTS.md
-- has it at 5 runs up to 5%: --searchers random,model --runs 5 --budgets 1,2,5).
local ON_REQUEST = {{"model"}}

local function parse_args(argv)
  local o = {datasets = "../shared/datasets", runs = 50}
  local i = 1
  while i <= #argv do
    local a, v = argv[i], argv[i + 1]
    if a == "--datasets" then o.datasets = v
    elseif a == "--runs" then o.runs = assert(math.tointeger(tonumber(v)), "--runs: an integer")
    elseif a == "--searchers" then o.searchers = v
    elseif a == "--only" then o.only = v
    elseif a == "--budgets" then
      BUDGETS = {}
      for pct in v:gmatch("[^,]+") do BUDGETS[#BUDGETS + 1] = assert(tonumber(pct), "--budgets: percentages") end
    else error("unknown argument " .. a .. " (see the header of this file)") end
    i = i + 2
  end
  return o
end

local function datasets(dir, only)
  local list = {}
  local ls = assert(io.popen('ls "' .. dir .. '"'))
  for name in ls:lines() do
    local recorded = name:match("%.json$") or name:match("%.json%.gz$")
    if recorded and (not only or name:find(only, 1, true)) then
      list[#list + 1] = {name = name:gsub("%.json.*$", ""), path = dir .. "/" .. name}
    end
  end
  ls:close()
  table.sort(list, function(a, b) return a.name < b.name end)
  return list
end

local function chosen_searchers(names)
  if not names then return SEARCHERS end
  local list = {}
  for spec in names:gmatch("[^,]+") do
    -- name or name:option=value:option=value (a variant for tuning the defaults)
    local name, found = spec:match("^([^:]+)"), nil
    for _, group in ipairs{SEARCHERS, ON_REQUEST} do
      for _, s in ipairs(group) do
        if s[1] == name or s[1]:match("^(%S+)") == name then found = s end
      end
    end
    if not found then error("unknown searcher " .. name) end
    if spec ~= name then
      local variant = {spec, lua = found.lua}
      for k, v in spec:gmatch(":(%w+)=([^:]+)") do variant[k] = tonumber(v) or v end
      found = variant
    end
    list[#list + 1] = found
  end
  return list
end

local function search_option(s, seed)
  local options = {}
  for k, v in pairs(s) do if type(k) == "string" and k ~= "lua" then options[k] = v end end
  if s.lua then return require(s.lua).new(options) end -- seeded by the tune options
  options[1], options.seed = s[1]:match("^([^:%s]+)"), seed
  return options
end

local function percentile(sorted, p)
  return sorted[math.max(1, math.ceil(p * #sorted))]
end

-- One row: R runs of a searcher, each at the largest budget; a search
-- with a smaller budget makes exactly the first proposals of a larger one
-- (doc/searchers.md, spec/search_builtin_spec.lua), so each smaller budget
-- is scored on the first evaluations of the same runs.
local function row(rec, s, budgets, runs)
  local reached, score_sum, last = {}, {}, budgets[#budgets]
  for i = 1, #budgets do reached[i], score_sum[i] = {}, 0 end
  for seed = 1, runs do
    local res = rec:tune{search = search_option(s, seed), seed = seed, stop = {count = last}}
    assert(#res <= last, "budget exceeded")
    for i, budget in ipairs(budgets) do
      local r, score = rec:score(res, budget)
      reached[i][seed] = r
      score_sum[i] = score_sum[i] + score
    end
  end
  local cells = {}
  for i = 1, #budgets do
    local sum = 0
    for _, r in ipairs(reached[i]) do sum = sum + r end
    table.sort(reached[i])
    cells[i] = {mean = sum / runs, p5 = percentile(reached[i], 0.05), score = score_sum[i] / runs}
  end
  return cells
end

local function bench_dataset(d, searchers, runs)
  local rec = kt.replay(d.path)
  local count = rec:count()
  local budgets = {}
  for i, pct in ipairs(BUDGETS) do budgets[i] = math.ceil(pct / 100 * count - 1e-9) end
  io.write(("\n### %s (%d configurations, optimum %.4g ms)\n\n"):format(d.name, count,
    rec:optimum().time_ms))
  local head = {"| searcher |"}
  for i, pct in ipairs(BUDGETS) do
    head[#head + 1] = (" %d%% (%d): mean / p5 / score |"):format(pct, budgets[i])
  end
  io.write(table.concat(head), " CPU per evaluation |\n|---|", ("---|"):rep(#BUDGETS + 1), "\n")
  local results, t0 = {}, os.clock()
  for _, s in ipairs(searchers) do
    local line, t = {"| " .. s[1] .. " |"}, os.clock()
    local cells = row(rec, s, budgets, runs)
    for i = 1, #budgets do
      line[#line + 1] = (" %.3f / %.3f / %.3f |"):format(cells[i].mean, cells[i].p5, cells[i].score)
    end
    results[s[1]:match("^([^:]+)")] = results[s[1]:match("^([^:]+)")] or cells
    line[#line + 1] = (" %.1f µs |"):format(1e6 * (os.clock() - t) / (runs * budgets[#budgets]))
    io.write(table.concat(line), "\n")
    io.flush()
  end
  io.write(("\n(%.1f s of CPU for this dataset)\n"):format(os.clock() - t0))
  return results
end

-- The targets of issue 15 for the default searcher, over every dataset
-- (failed configurations kept in the spaces): a mean of at least 0.95
-- at 2% and 0.99 at 5%, at least 0.90 at 2% on each dataset; and a higher
-- mean than random search on every dataset at every budget.
local function check_target(all)
  io.write("\n### Targets for the default searcher (", DEFAULT, ")\n\n")
  local ok, sums, n = true, {}, 0
  local at = {}
  for i, pct in ipairs(BUDGETS) do at[pct], sums[i] = i, 0 end
  for _, d in ipairs(all) do
    local def, rnd = d.results[DEFAULT], d.results.random
    if def then
      n = n + 1
      for i = 1, #BUDGETS do sums[i] = sums[i] + def[i].mean end
      local line = {"- " .. d.name .. ":"}
      for i, pct in ipairs(BUDGETS) do line[#line + 1] = (" %d%% %.3f"):format(pct, def[i].mean) end
      if at[2] and def[at[2]].mean < 0.90 then ok = false; line[#line + 1] = " (below 0.90 at 2%)" end
      for i, pct in ipairs(BUDGETS) do
        if rnd and def[i].mean <= rnd[i].mean then
          ok = false
          line[#line + 1] = (" (not above random at %d%%: %.3f vs %.3f)"):format(pct, def[i].mean,
            rnd[i].mean)
        end
      end
      io.write(table.concat(line), "\n")
    end
  end
  if n == 0 then return end
  local means = {}
  for i, pct in ipairs(BUDGETS) do means[#means + 1] = ("%d%% %.3f"):format(pct, sums[i] / n) end
  io.write("- mean over the ", n, " datasets: ", table.concat(means, ", "), "\n")
  if at[2] and sums[at[2]] / n < 0.95 then ok = false end
  if at[5] and sums[at[5]] / n < 0.99 then ok = false end
  io.write("\nTargets ", ok and "met" or "NOT met", ".\n")
end

local opts = parse_args(arg)
local searchers = chosen_searchers(opts.searchers)
local all = {}
io.write(("## Searchers on recorded spaces: %d runs per cell\n"):format(opts.runs))
for _, d in ipairs(datasets(opts.datasets, opts.only)) do
  d.results = bench_dataset(d, searchers, opts.runs)
  all[#all + 1] = d
end
check_target(all)
