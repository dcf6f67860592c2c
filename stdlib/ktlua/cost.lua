-- ktlua.cost: a cost model after Poeppl. A script declares what a kernel does
-- per configuration (k:cost), and its time is predicted from the device's
-- probes (kt.probe):
--
--   time = launches * launch floor
--        + bytes / memory bandwidth (of the sweep, at the configuration's work-group size)
--        + flops / fp32 rate + fp64 / fp64 rate + iops / int32 rate
--        + special * the mean time of div, sqrt, exp and sin + ops[name] / rate of name
--
-- ("sum", the default: nothing overlaps; "max" takes the largest of the terms
-- after the launches instead, as a roofline does). Rates are throughputs of the
-- whole device (Gop/s = operations per ns); an fma counts as two flops.
local M = {}

local costs = setmetatable({}, { __mode = "k" }) -- kernel -> its cost function

local keys = { "bytes", "flops", "fp64", "iops", "special", "ops", "launches", "group" }
local known = {}
for _, k in ipairs(keys) do known[k] = true end
local expected = table.concat(keys, ", ")

local function check_count(where, key, v)
  if type(v) ~= "number" or v < 0 or v ~= v or v == math.huge then
    error(("%s.%s: expected a count from 0, got %s"):format(where, key, tostring(v)), 0)
  end
end

-- Checks a cost table: its keys, and counts from 0.
function M.check(c, where)
  where = where or "cost"
  if type(c) ~= "table" then error(("%s: expected a table {%s}, got %s"):format(where,
    expected, type(c)), 0) end
  for key, v in pairs(c) do
    if not known[key] then
      error(("%s: unknown key %s (expected %s)"):format(where, tostring(key), expected), 0)
    end
    if key == "ops" then
      if type(v) ~= "table" then error(where .. ".ops: expected a table {name = count}", 0) end
      for name, n in pairs(v) do check_count(where .. ".ops", tostring(name), n) end
    else
      check_count(where, key, v)
    end
  end
  return c
end

local function rate(probe, name)
  local r = probe.ops and probe.ops[name]
  if not r or not (r > 0) then
    error(("the probe of %s has no rate of %s (probe its \"ops\")"):format(tostring(probe.device),
      name), 0)
  end
  return r
end

local function flop_rate(probe, prefix)
  return math.max(rate(probe, prefix .. "_add"), rate(probe, prefix .. "_mul"),
    2 * rate(probe, prefix .. "_fma"))
end

-- Bytes per ns of the copy at the swept work-group size nearest (in log2) to group.
local function bandwidth(probe, group)
  local best, bestd
  for _, r in ipairs(probe.rows) do
    if r.kind == "sweep" then
      if not group then
        if not best or r.value > best then best = r.value end
      else
        local d = math.abs(math.log(r.size, 2) - math.log(group, 2))
        if not bestd or d < bestd or (d == bestd and r.value > best) then best, bestd = r.value, d end
      end
    end
  end
  if not best then
    error(("the probe of %s has no memory bandwidth (probe its \"sweep\")"):format(
      tostring(probe.device)), 0)
  end
  return best
end

local models = { sum = true, max = true }

local function check_model(opts, where)
  if opts ~= nil and type(opts) ~= "table" then error(where .. ": expected an options table", 0) end
  local model = opts and opts.model or "sum"
  if not models[model] then
    error(("%s.model: expected \"sum\" or \"max\", got %s"):format(where, tostring(model)), 0)
  end
  for k in pairs(opts or {}) do
    if k ~= "model" then error(("%s: unknown option %s (expected model)"):format(where, tostring(k)), 0) end
  end
  return model
end

-- The predicted time in ms of work c (a cost table) on the probed device.
function M.time(probe, c, opts)
  if type(probe) ~= "table" or type(probe.rows) ~= "table" then
    error("expected a probe record (kt.probe, db:probe), got " .. type(probe), 0)
  end
  M.check(c)
  local model = check_model(opts, "options")
  local terms = {}
  local function add(count, per_ns)
    if count and count > 0 then terms[#terms + 1] = count / per_ns end
  end
  add(c.bytes, bandwidth(probe, c.group))
  add(c.flops, c.flops and c.flops > 0 and flop_rate(probe, "fp32"))
  add(c.fp64, c.fp64 and c.fp64 > 0 and flop_rate(probe, "fp64"))
  add(c.iops, c.iops and c.iops > 0 and rate(probe, "int32_add"))
  if c.special and c.special > 0 then
    local ns = 0
    for _, name in ipairs({ "fp32_div", "fp32_sqrt", "fp32_exp", "fp32_sin" }) do
      ns = ns + 1 / rate(probe, name) / 4
    end
    terms[#terms + 1] = c.special * ns
  end
  for name, n in pairs(c.ops or {}) do add(n, n > 0 and rate(probe, name)) end
  local work = 0
  for _, t in ipairs(terms) do
    work = model == "sum" and work + t or math.max(work, t)
  end
  if not probe.launch_ns then
    error(("the probe of %s has no launch floor (probe its \"launch\")"):format(
      tostring(probe.device)), 0)
  end
  return ((c.launches or 1) * probe.launch_ns + work) / 1e6
end

-- ---- a kernel's cost ----

-- k:cost(function(cfg, sizes) return {bytes =, flops =, launches =, ...} end)
function M.cost(k, fn)
  if fn ~= nil and type(fn) ~= "function" then
    error("bad argument #1 to 'cost' (expected a function(cfg, sizes) or nil)", 2)
  end
  costs[k] = fn
end

local function config_of(k, cfg)
  if math.type(cfg) == "integer" then
    local c = k:space():config(cfg)
    if not c then error(("configuration %d is not in the space of %s"):format(cfg, k.name), 0) end
    return c
  end
  if type(cfg) == "table" and type(cfg.config) == "table" then return cfg.config end
  if type(cfg) ~= "table" then
    error("expected a configuration (a table of values, a result or an index), got " .. type(cfg), 0)
  end
  return cfg
end

-- k:predict(cfg, probe[, {model =}]) -> ms, and the cost table
function M.predict_config(k, cfg, probe, opts)
  local fn = costs[k]
  if not fn then error(("kernel %s has no cost: declare it with k:cost(fn)"):format(k.name), 0) end
  cfg = config_of(k, cfg)
  local sizes = k:sizes(cfg)
  local c = fn(cfg, sizes)
  M.check(c, "the cost of " .. k.name)
  if c.group == nil and sizes.group and #sizes.group > 0 then
    local g = 1
    for _, v in ipairs(sizes.group) do g = g * v end
    if g > 0 then c.group = g end
  end
  return M.time(probe, c, opts), c
end

-- A function(cfg) -> predicted ms for k on the probed device: what an early
-- stop or a searcher asks.
function M.predictor(k, probe, opts)
  check_model(opts, "predictor options")
  return function(cfg) return (M.predict_config(k, cfg, probe, opts)) end
end

-- k:predicted(n, probe[, opts]) -> the n configuration indices (0-based) predicted
-- fastest, fastest first: seeds = k:predicted(8, probe) tries them first.
function M.predicted(k, n, probe, opts)
  if math.type(n) ~= "integer" or n < 1 then
    error("bad argument #1 to 'predicted' (expected a count from 1)", 2)
  end
  local s = k:space()
  local count = s:count()
  if count > 1000000 then
    error(("predicted: the space of %s has %.0f configurations, more than 1000000 to rank")
      :format(k.name, count), 0)
  end
  local ranked = {}
  for i, cfg in s:configs() do
    ranked[#ranked + 1] = { i, (M.predict_config(k, cfg, probe, opts)) }
  end
  table.sort(ranked, function(a, b) return a[2] < b[2] or (a[2] == b[2] and a[1] < b[1]) end)
  local out = {}
  for j = 1, math.min(n, #ranked) do out[j] = ranked[j][1] end
  return out
end

-- The model's error over the ok results of a tuning of k: relative errors
-- (predicted - measured) / measured: their mean (bias), the mean of their
-- absolute values, and Spearman's rank correlation of predicted and measured.
function M.error(k, results, probe, opts)
  local pairs_ = {}
  for _, r in ipairs(results:list()) do
    if r.status == "ok" and r.time_ms and r.time_ms > 0 then
      local p = M.predict_config(k, r.config, probe, opts)
      pairs_[#pairs_ + 1] = { measured = r.time_ms, predicted = p, index = r.index }
    end
  end
  local n, bias, abs = #pairs_, 0, 0
  if n == 0 then return nil, "no configuration came out ok" end
  for _, e in ipairs(pairs_) do
    local rel = (e.predicted - e.measured) / e.measured
    bias, abs = bias + rel, abs + math.abs(rel)
  end
  local function ranks(key)
    local order = {}
    for i = 1, n do order[i] = i end
    table.sort(order, function(a, b) return pairs_[a][key] < pairs_[b][key] end)
    local r = {}
    for pos, i in ipairs(order) do r[i] = pos end
    return r
  end
  local rp, rm, d2 = ranks("predicted"), ranks("measured"), 0
  for i = 1, n do d2 = d2 + (rp[i] - rm[i]) ^ 2 end
  local rho = n > 1 and 1 - 6 * d2 / (n * (n * n - 1)) or 1
  return { n = n, bias = bias / n, mean_abs = abs / n, spearman = rho, pairs = pairs_ }
end

-- For the examples' --probe=DB: the model's error on a tuning of k, against the
-- probe of the tuner's device kept in the database at path, on both models.
function M.report(k, results, path, device, f)
  f = f or io.stdout
  local kt = require "ktlua"
  local db = kt.db(path)
  local probe, why = db:probe(device)
  db:close()
  if not probe then
    error(("%s (run: ktlua --probe=%s --probe-db=%s)"):format(why, device.id or "DEVICE", path), 0)
  end
  for _, model in ipairs({ "sum", "max" }) do
    local e = assert(M.error(k, results, probe, { model = model }))
    local best, first
    for _, p in ipairs(e.pairs) do
      if not best or p.measured < best.measured then best = p end
      if not first or p.predicted < first.predicted then first = p end
    end
    f:write(("cost model (%s) of %s on %s: %d configurations, bias %+.1f%%, mean |error| %.1f%%, "
      .. "Spearman %.2f; the predicted fastest runs %.4g ms (the best %.4g ms)\n"):format(model,
      k.name, probe.device, e.n, 100 * e.bias, 100 * e.mean_abs, e.spearman, first.measured,
      best.measured))
  end
end

return M
