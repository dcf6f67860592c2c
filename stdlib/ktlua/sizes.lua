-- ktlua.sizes: tuner:tune_sizes(make, sizes, options), problem-size-aware
-- tuning. make(size) returns the kernel (or composition) for one size, with
-- its arrays and sizes set; each size is tuned in turn, its search seeded
-- with the best configurations (by the objective) of the nearest size
-- tuned before it (in this call, or stored in options.db under the
-- objective), and, with a database, stored in it.
local sizes = {}

local SEEDS = 3 -- the best configurations of the nearest size that start a search

-- The log2 distance of two sizes with the same names, or nil.
local function distance(a, b)
  local sum, n = 0, 0
  for name, v in pairs(a) do
    if type(b[name]) ~= "number" then return nil end
    local d = math.log(v, 2) - math.log(b[name], 2)
    sum, n = sum + d * d, n + 1
  end
  for name in pairs(b) do if a[name] == nil then return nil end end
  return n > 0 and math.sqrt(sum) or nil
end

local function check_size(size, i)
  if type(size) ~= "table" or next(size) == nil then
    error(("tuner:tune_sizes: sizes[%d]: expected a table of named positive numbers ({n = 4096})")
      :format(i), 3)
  end
  for name, v in pairs(size) do
    if type(name) ~= "string" or type(v) ~= "number" or v <= 0 then
      error(("tuner:tune_sizes: sizes[%d]: %s = %s is not a named positive number")
        :format(i, tostring(name), tostring(v)), 3)
    end
  end
end

-- What a result of results is ranked by, less is better: its time, or the
-- results' objective's value (negated when maximised); nil when it has none.
local function cost(results, r)
  local objective = results.objective
  if objective == "kernel" or objective == "kernel+host" then return r.time_ms end
  local v = r.metrics and r.metrics[objective]
  return v and (results.maximize and -v or v)
end

-- The objective a tuning with these options stores under in a database.
local function stored_objective(options)
  if type(options.objective) == "function" then return "objective" end
  return options.objective
end

-- The configurations of the nearest tuned size: its ok results, best by
-- the objective first, or the database's entries for it under the objective.
local function nearest_configs(done, size, options, tuner, kernel)
  local db, objective = options.db, stored_objective(options)
  local best, best_d
  for _, d in ipairs(done) do
    local dist = distance(size, d.size)
    if dist and (not best_d or dist < best_d) then best, best_d = d, dist end
  end
  local configs = {}
  if best then
    local ok = {}
    for _, r in ipairs(best.results:list()) do
      if r.status == "ok" and cost(best.results, r) then ok[#ok + 1] = r end
    end
    table.sort(ok, function(x, y) return cost(best.results, x) < cost(best.results, y) end)
    for i = 1, math.min(SEEDS, #ok) do configs[i] = ok[i].config end
  elseif db then
    local e = db:best{ kernel = kernel, device = tuner, size = size, objective = objective }
    if e then
      local entries = db:list{ kernel = e.kernel, device = tuner, size = e.size, objective = e.objective }
      for _, r in ipairs(entries) do
        if r.rank <= SEEDS then configs[#configs + 1] = r.config end
      end
    end
  end
  return configs
end

-- The configurations that this kernel's space holds.
local function in_space(kernel, configs)
  local space, kept = kernel:space(), {}
  for _, cfg in ipairs(configs) do
    local ok, index = pcall(space.index, space, cfg)
    if ok and index then kept[#kept + 1] = cfg end
  end
  return kept
end

function sizes.tune(tuner, make, list, options)
  if type(make) ~= "function" then
    error("tuner:tune_sizes: expected a function that makes the kernel for a size, got "
      .. type(make), 2)
  end
  if type(list) ~= "table" or #list == 0 then
    error("tuner:tune_sizes: expected a list of sizes ({{n = 1024}, {n = 4096}})", 2)
  end
  options = options or {}
  if type(options) ~= "table" then error("tuner:tune_sizes: options must be a table", 2) end
  if options.size ~= nil or options.seeds ~= nil then
    error("tuner:tune_sizes: options.size and options.seeds are set for each size", 2)
  end
  for i, size in ipairs(list) do check_size(size, i) end
  local done, out = {}, {}
  for i, size in ipairs(list) do
    local kernel = make(size)
    local o = {}
    for k, v in pairs(options) do o[k] = v end
    o.seeds = in_space(kernel, nearest_configs(done, size, options, tuner, kernel))
    if options.db then o.size = size end
    local results = tuner:tune(kernel, o)
    out[i] = results
    done[#done + 1] = { size = size, results = results }
  end
  return out
end

return sizes
