-- ktlua.transfer: tuned once, reused everywhere (doc/transfer.md). What a
-- database (kt.db) holds of a kernel on other devices and sizes becomes,
-- for a new tuning, its first configurations (seeds) and a prior for the
-- searcher (which values won, and how alike the device and size that won
-- them are), and for db:best{nearest = true}, the answer of the most alike
-- device.
--
--   transfer.plan(db, {kernel =, device =, backend =, properties =, size =,
--                      objective =, space =, seeds = 8})
--     -> {seeds = {config, ...}, prior = {{config =, weight =}, ...},
--         from = {{device =, backend =, size =, similarity =}, ...}}
--     seeds: configurations the space holds; prior: each with the values
--     that are their parameter's in the space (two at least; a constraint,
--     a recorded sample or another device's other values may leave the
--     configuration out of the space: it still says which values won)
--   transfer.similarity(a, b) -> 0..1: how alike two devices are, each
--     {name =, backend =, properties = {...} or nil, probe = kt.probe's record or nil}
--   transfer.tune_options(tuner, kernel, options) -> the options of
--     tuner:tune(k, {transfer = db | {db =, seeds =, size =}}) with their seeds
--     and prior (the size: transfer's, else the options' own)
--   transfer.nearest_best(db, query) -> entry, or nil and why (db:best)
--
-- Device and size names, properties and configurations are data read from
-- the database: compared and copied, never run.
local transfer = {}

local SEEDS = 8 -- seeds a tuning gets from a database unless told

-- Same GPU through another API (CUDA and OpenCL of one card): the code
-- generated differs, the hardware does not.
local OTHER_BACKEND = 0.9

-- Numeric properties that tell devices apart (a ratio far from 1 makes
-- them less alike); ids, limits of one API and sizes of one process are not.
local NUMERIC = { "compute_units", "multiprocessors", "clock_mhz", "memory_clock_mhz",
  "memory_bus_width", "global_memory", "local_memory", "shared_per_block", "shared_per_sm",
  "l2_cache", "registers_per_sm", "max_threads_per_sm", "warp_size", "max_group_size" }

local function words(name)
  local set, n = {}, 0
  for w in tostring(name):lower():gmatch("[%w]+") do
    if not set[w] then set[w], n = true, n + 1 end
  end
  return set, n
end

-- How alike two names are: the share of their words in common (Jaccard).
local function name_likeness(a, b)
  local wa, na = words(a)
  local wb, nb = words(b)
  local common = 0
  for w in pairs(wa) do if wb[w] then common = common + 1 end end
  local union = na + nb - common
  return union > 0 and common / union or 0
end

local function number(v)
  if type(v) == "number" then return v end
  if type(v) == "string" then return tonumber(v:match("^%s*([%d.]+)")) end
end

-- The mean |log ratio| of the numeric properties both have, and how many.
local function property_distance(pa, pb)
  local sum, n = 0, 0
  for _, key in ipairs(NUMERIC) do
    local x, y = number(pa[key]), number(pb[key])
    if x and y and x > 0 and y > 0 then
      sum, n = sum + math.abs(math.log(x / y)), n + 1
    end
  end
  local ca, cb = number(pa.compute_capability), number(pb.compute_capability)
  if ca and cb then sum, n = sum + math.abs(ca - cb), n + 1 end -- 9.0 and 8.6: 0.4
  return n > 0 and sum / n or nil, n
end

-- The mean |log ratio| of the figures two probes (kt.probe) both measured
-- (same kind, name and size: a transfer rate, the launch floor, a
-- work-group size's bandwidth, an operation's rate), and how many.
local function probe_distance(qa, qb)
  if type(qa) ~= "table" or type(qb) ~= "table" then return nil, 0 end
  local seen = {}
  for _, r in ipairs(qa.rows or {}) do seen[("%s\0%s\0%s"):format(r.kind, r.name, r.size)] = r.value end
  local sum, n = 0, 0
  for _, r in ipairs(qb.rows or {}) do
    local v = seen[("%s\0%s\0%s"):format(r.kind, r.name, r.size)]
    if v and v > 0 and r.value and r.value > 0 then sum, n = sum + math.abs(math.log(v / r.value)), n + 1 end
  end
  return n > 0 and sum / n or nil, n
end

-- How alike two devices are, from 0 to 1: 1 for the same device and
-- backend; OTHER_BACKEND for the same name through another backend; else
-- from their stored properties and probes where both have some (numbers
-- compared by their ratio, the probe counting as two properties; the
-- vendor and type by equality), and from their names.
function transfer.similarity(a, b)
  if a.name == b.name then return a.backend == b.backend and 1 or OTHER_BACKEND end
  local like = 0.25 + 0.5 * name_likeness(a.name, b.name)
  local pa, pb = a.properties, b.properties
  local d, n = nil, 0
  if type(pa) == "table" and type(pb) == "table" then d, n = property_distance(pa, pb) end
  local dq, nq = probe_distance(a.probe, b.probe)
  if nq > 0 then d, n = ((d or 0) * n + 2 * dq) / (n + 2), n + 2 end
  if n > 0 then like = 0.8 * math.exp(-d) + 0.1 * name_likeness(a.name, b.name) end
  if type(pa) == "table" and type(pb) == "table" then
    if pa.type and pb.type and pa.type ~= pb.type then like = like * 0.3 end
    if pa.vendor and pb.vendor and pa.vendor ~= pb.vendor then like = like * 0.6 end
  end
  return math.max(0.01, math.min(like, OTHER_BACKEND - 0.01))
end

-- The probe kept in db for a device, or nil.
local function stored_probe(db, name, backend)
  if not name or not backend then return nil end
  local ok, rec = pcall(db.probe, db, name, backend)
  return ok and rec or nil
end

-- How close two sizes are, from 0 to 1: exp(-d/2) of their log2 distance
-- (db:best's); 0.2 for sizes of other names; 1 where none is given.
local function size_closeness(a, b)
  if not a or not b then return 1 end
  local sum = 0
  for name, v in pairs(a) do
    local w = b[name]
    if type(w) ~= "number" or type(v) ~= "number" or v <= 0 or w <= 0 then return 0.2 end
    local d = math.log(v, 2) - math.log(w, 2)
    sum = sum + d * d
  end
  for name in pairs(b) do if a[name] == nil then return 0.2 end end
  return math.exp(-math.sqrt(sum) / 2)
end

local function key_of(e)
  local names = {}
  for name, v in pairs(e.size) do names[#names + 1] = ("%q=%s"):format(name, tostring(v)) end
  table.sort(names)
  return e.device .. "\0" .. e.backend .. "\0" .. table.concat(names, ",")
end

-- The properties stored for each device, by device and backend.
local function stored_properties(db)
  local props = {}
  for _, d in ipairs(db:devices()) do props[d.device .. "\0" .. d.backend] = d.properties end
  return props
end

local function config_key(space, cfg)
  local ok, index = pcall(space.index, space, cfg)
  return ok and index or nil
end

-- cfg's values that are their parameter's in the space (a prior may break
-- a constraint, be missing from a recorded sample, or hold values another
-- device's space had and this one has not: it says the others), and how many.
local function values_fit(params, cfg)
  local out, n = {}, 0
  for _, p in ipairs(params) do
    local v = cfg[p.name]
    for _, x in ipairs(p.values) do
      if x == v then out[p.name], n = v, n + 1; break end
    end
  end
  return out, n
end

-- Every stored entry of the kernel, weighted by how alike its device and
-- size are to the target's, over its rank; the entries' groups (device,
-- backend, size), most alike first.
local function weighted_entries(db, q)
  local props = stored_properties(db)
  local target = { name = q.device, backend = q.backend,
    properties = q.properties or props[tostring(q.device) .. "\0" .. tostring(q.backend)],
    probe = stored_probe(db, q.device, q.backend) }
  local groups, order, entries = {}, {}, {}
  for _, e in ipairs(db:list{ kernel = q.kernel, objective = q.objective or "kernel" }) do
    local k = key_of(e)
    local g = groups[k]
    if not g then
      local sim = transfer.similarity(target, { name = e.device, backend = e.backend,
        properties = props[e.device .. "\0" .. e.backend], probe = stored_probe(db, e.device, e.backend) })
        * size_closeness(q.size, e.size)
      g = { device = e.device, backend = e.backend, size = e.size, similarity = sim }
      groups[k] = g
      order[#order + 1] = g
    end
    entries[#entries + 1] = { entry = e, weight = g.similarity / e.rank }
  end
  table.sort(order, function(x, y) return x.similarity > y.similarity end)
  table.sort(entries, function(x, y)
    if x.weight ~= y.weight then return x.weight > y.weight end
    return key_of(x.entry) .. x.entry.rank < key_of(y.entry) .. y.entry.rank
  end)
  return entries, order
end

function transfer.plan(db, q)
  local count = q.seeds or SEEDS
  if math.type(count) ~= "integer" or count < 0 then
    error("transfer: seeds: expected a whole number of configurations >= 0, got " .. tostring(count), 2)
  end
  local entries, from = weighted_entries(db, q)
  local params = q.space and q.space:params()
  local seeds, prior, seen = {}, {}, {}
  for _, w in ipairs(entries) do
    local index = q.space and config_key(q.space, w.entry.config)
    if not q.space then
      prior[#prior + 1] = { config = w.entry.config, weight = w.weight }
    else
      local said, n = values_fit(params, w.entry.config)
      if n >= 2 then prior[#prior + 1] = { config = said, weight = w.weight } end -- a pair at least
    end
    if index or not q.space then -- a seed: one the space holds
      local k = index or key_of(w.entry) .. w.entry.rank
      if #seeds < count and not seen[k] then seeds[#seeds + 1] = w.entry.config end
      seen[k] = true
    end
  end
  return { seeds = seeds, prior = prior, from = from }
end

-- The options of tuner:tune with transfer: seeds (after the caller's own)
-- and a prior (after the caller's own) from the database.
function transfer.tune_options(tuner, kernel, options)
  local t = options.transfer
  local db, count, size = t, nil, options.size
  if type(t) == "table" and getmetatable(t) == nil then
    for k in pairs(t) do
      if k ~= "db" and k ~= "seeds" and k ~= "size" then
        error(("tune options.transfer: unknown field '%s' (db, seeds, size)"):format(tostring(k)), 3)
      end
    end
    db, count, size = t.db, t.seeds, t.size or size
  end
  if not (type(db) == "userdata" and tostring(db):find("^tuned%-configuration database")) then
    error("tune options.transfer: expected a database (kt.db) or {db = ..., seeds = N, size = {...}}, got "
      .. tostring(t), 3)
  end
  if size ~= nil and type(size) ~= "table" then
    error("tune options.transfer: size: expected a table of named positive numbers ({n = 4096})", 3)
  end
  local device = tuner.device
  local objective = options.objective
  if type(objective) == "function" then objective = "objective" end
  local plan = transfer.plan(db, { kernel = kernel.name, device = device.name,
    backend = device.backend, properties = device, size = size,
    objective = objective or "kernel", space = kernel:space(), seeds = count })
  local out = {}
  for k, v in pairs(options) do out[k] = v end
  local seeds, prior = {}, {}
  for _, s in ipairs(options.seeds or {}) do seeds[#seeds + 1] = s end
  for _, s in ipairs(plan.seeds) do seeds[#seeds + 1] = s end
  for _, p in ipairs(options.prior or {}) do prior[#prior + 1] = p end
  for _, p in ipairs(plan.prior) do prior[#prior + 1] = p end
  out.seeds = #seeds > 0 and seeds or nil
  out.prior = #prior > 0 and prior or nil
  return out
end

-- db:best{..., nearest = true} for a device with no entry of the kernel:
-- the best of the most alike device that has one (of the size nearest the
-- one asked, with the same names), entry.match "alike", entry.similarity.
function transfer.nearest_best(db, query)
  local kernel = query.kernel
  local name = type(kernel) == "string" and kernel or kernel.name
  local dev = query.device
  local target
  if type(dev) == "string" then
    target = { name = dev, backend = query.backend }
  else
    local d = type(dev) == "table" and dev or dev.device -- a device table or a tuner
    target = { name = d.name, backend = d.backend, properties = d }
  end
  local props = stored_properties(db)
  if not target.properties then target.properties = props[target.name .. "\0" .. tostring(target.backend)] end
  target.probe = stored_probe(db, target.name, target.backend)
  local best, best_sim
  local seen = {}
  for _, e in ipairs(db:list{ kernel = name, objective = query.objective or "kernel" }) do
    local k = e.device .. "\0" .. e.backend
    if e.rank == 1 and not seen[k] then
      seen[k] = true
      local sim = transfer.similarity(target, { name = e.device, backend = e.backend, properties = props[k],
        probe = stored_probe(db, e.device, e.backend) })
      if not best_sim or sim > best_sim then best, best_sim = e, sim end
    end
  end
  if not best then
    return nil, ("no configuration of %s is stored for any device"):format(name)
  end
  local entry, why = db:best{ kernel = query.kernel, device = best.device, backend = best.backend,
    size = query.size, objective = query.objective, stale = query.stale }
  if not entry then return nil, why end
  entry.match, entry.similarity = "alike", best_sim
  return entry
end

return transfer
