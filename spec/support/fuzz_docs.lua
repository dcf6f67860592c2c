-- Documents for the parser fuzzer: ktlua journals and results files,
-- Kernel Tuner caches, T4 and KTT results, built from their schema with some fields made
-- wrong (a wrong type, a value out of range, a field left out), as text.
-- fuzz.mutate then damages some of the texts byte by byte. A new reader
-- (T1, ...) gets a generator here and a place in docs.kinds.
local fuzz = require "spec.support.fuzz"
local docs = {}

local statuses = { "ok", "ok", "ok", "compile_failed", "launch_failed", "runtime_failed",
                   "invalid_output", "timeout", "too_many_threads", "too_much_local_memory" }

-- Any JSON value, to put where another was expected.
local function any(rng, depth)
  depth = depth or 0
  local kind = rng:int(depth > 2 and 4 or 7)
  if kind == 1 then return rng:number()
  elseif kind == 2 then return rng:string()
  elseif kind == 3 then return rng:pick({ true, false, fuzz.raw("null") })
  elseif kind == 4 then return fuzz.raw(rng:pick(fuzz.number_texts))
  elseif kind == 5 then return fuzz.array({}) end
  local t = {}
  for i = 1, rng:int(0, 4) do
    if kind == 6 then t[i] = any(rng, depth + 1) else t[rng:string()] = any(rng, depth + 1) end
  end
  return kind == 6 and fuzz.array(t) or t
end
docs.any = any

-- Whether to make something wrong, at the document's rate of damage (see
-- docs.generate).
local function odd(rng) return rng:chance(rng.damage) end

-- v, or (when odd) anything else, or nothing.
local function maybe(rng, v)
  if not odd(rng) then return v end
  if rng:chance(0.5) then return nil end
  return any(rng)
end

local function list(rng, n, f)
  local t = fuzz.array({})
  for i = 1, n do t[i] = f(i) end
  return t
end

-- Parameters: {name =, values =} with distinct values, mostly.
local function params(rng)
  local names = { "A", "B", "block_x", "unroll", "WG" }
  return list(rng, rng:int(0, 3) + (odd(rng) and 0 or 1), function(i)
    local name = odd(rng) and rng:string() or names[i]
    local values = list(rng, rng:int(1, 4) - (odd(rng) and 1 or 0), function(v)
      if not odd(rng) then return rng:pick({ v * 2, v * 2, v * 2 + 0.5, "v" .. v }) end
      return rng:chance(0.5) and rng:number() or rng:string()
    end)
    return { name = name, values = maybe(rng, values), order = { "name", "values" } }
  end)
end

local function sizes(rng)
  local function dims()
    return list(rng, rng:int(1, 3), function() return odd(rng) and rng:number() or rng:int(1, 1024) end)
  end
  return list(rng, rng:int(0, 2), function()
    return { global = maybe(rng, dims()), ["local"] = rng:chance(0.5) and dims() or fuzz.raw("null") }
  end)
end

local function overheads(rng)
  local o = {}
  for _, k in ipairs({ "build", "data", "validation", "launcher", "wait", "searcher", "framework", "total" }) do
    o[k] = maybe(rng, rng:int(0, 100) / 8)
  end
  return o
end

-- A ktlua result of the parameters ps.
local function record(rng, ps, index)
  local config = {}
  for _, p in ipairs(ps) do
    local vs = type(p.values) == "table" and p.values or {}
    config[tostring(p.name)] = maybe(rng, vs[rng:int(math.max(#vs, 1))])
  end
  return {
    index = maybe(rng, index), config = maybe(rng, config), status = maybe(rng, rng:pick(statuses)),
    time_ms = maybe(rng, rng:int(1, 1000) / 16), samples_ms = maybe(rng, list(rng, rng:int(0, 3), function() return rng:int(1, 99) / 8 end)),
    sizes = maybe(rng, sizes(rng)),
    resources = maybe(rng, list(rng, rng:int(0, 2), function() return { registers = maybe(rng, rng:int(0, 64)), max_threads = maybe(rng, 1024) } end)),
    launches = maybe(rng, rng:int(0, 3)), compile_ms = maybe(rng, 1.5), overheads_ms = maybe(rng, overheads(rng)),
    error = maybe(rng, rng:chance(0.7) and fuzz.raw("null") or rng:string()),
    order = { "index", "config", "status", "time_ms", "samples_ms", "sizes", "resources", "launches",
              "compile_ms", "overheads_ms", "error" },
  }
end

local function header(rng, format, ps)
  return {
    format = format, version = maybe(rng, 1), task = maybe(rng, rng:string()), device = maybe(rng, rng:string()),
    searcher = maybe(rng, "random"), kernels = maybe(rng, list(rng, rng:int(0, 2), function() return rng:string() end)),
    parameters = maybe(rng, ps),
    space = maybe(rng, { valid = maybe(rng, rng:number()), all = maybe(rng, rng:number()),
                         pruned = maybe(rng, { group_size = maybe(rng, rng:number()) }) }),
    order = { "format", "version", "task", "device", "searcher", "kernels", "parameters", "space" },
  }
end

function docs.journal(rng)
  local ps = params(rng)
  local lines = { fuzz.json(header(rng, maybe(rng, "ktlua-journal"), ps)) }
  for i = 1, rng:int(0, 6) do lines[#lines + 1] = fuzz.json(record(rng, ps, i - 1)) end
  return table.concat(lines, "\n") .. (rng:chance(0.9) and "\n" or "")
end

function docs.results(rng)
  local ps = params(rng)
  local h = header(rng, maybe(rng, "ktlua-results"), ps)
  h.results = maybe(rng, list(rng, rng:int(0, 6), function(i) return record(rng, ps, i - 1) end))
  h.wall_ms = maybe(rng, 12.5)
  h.order[#h.order + 1] = "results"
  h.order[#h.order + 1] = "wall_ms"
  return fuzz.json(h)
end

-- A Kernel Tuner cache: tune_params, their keys, and entries keyed by the
-- comma-joined values.
function docs.kt_cache(rng)
  local ps = params(rng)
  local tune_params, keys = {}, fuzz.array({})
  for i, p in ipairs(ps) do
    tune_params[tostring(p.name)] = p.values
    keys[i] = p.name
  end
  local cache = {}
  for _ = 1, rng:int(0, 6) do
    local entry, key = {}, {}
    for _, p in ipairs(ps) do
      local vs = type(p.values) == "table" and p.values or {}
      local v = maybe(rng, vs[rng:int(math.max(#vs, 1))])
      entry[tostring(p.name)] = v
      key[#key + 1] = tostring(v)
    end
    entry.time = maybe(rng, rng:chance(0.8) and rng:int(1, 500) / 16 or
      rng:pick({ "InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig", "OtherError" }))
    entry.times = maybe(rng, list(rng, rng:int(0, 3), function() return rng:int(1, 99) / 8 end))
    entry.compile_time = maybe(rng, 3.5)
    cache[table.concat(key, ",")] = entry
  end
  return fuzz.json({
    device_name = maybe(rng, "GPU"), kernel_name = maybe(rng, "k"), tune_params_keys = maybe(rng, keys),
    tune_params = maybe(rng, tune_params), cache = maybe(rng, cache),
    order = { "device_name", "kernel_name", "tune_params_keys", "tune_params", "cache" },
  })
end

-- An expression over A, B (integers) and S (strings), mostly well formed.
function docs.expression(rng, depth)
  depth = depth or 0
  local kind = rng:int(depth > 3 and 3 or 9)
  if kind == 1 then return rng:pick({ "A", "B", "A", "S" }) end
  if kind == 2 then return tostring(rng:pick({ 0, 1, 2, 3, -1, 0.5, math.maxinteger, 1e300 })) end
  if kind == 3 then return rng:pick({ "'float'", "\"x\"", "true", "false", "N" }) end
  local a, b = docs.expression(rng, depth + 1), docs.expression(rng, depth + 1)
  if kind <= 6 then
    local op = rng:pick({ "+", "-", "*", "/", "//", "%", "==", "!=", "~=", "<", "<=", ">", ">=",
                          "&&", "||", "and", "or" })
    return a .. " " .. op .. " " .. b
  end
  if kind == 7 then return rng:pick({ "-", "!", "not ", "- -" }) .. a end
  if kind == 8 then return "(" .. a .. ")" end
  local f = rng:pick({ "min", "max", "abs", "floor", "ceil", "sqrt", "pow", "nope" })
  return f .. "(" .. a .. (rng:chance(0.5) and ", " .. b or "") .. ")"
end

-- One parameter value of ps's parameter p (bools and floats among them).
local function value_of(rng, p)
  local vs = type(p.values) == "table" and p.values or {}
  local v = vs[rng:int(math.max(#vs, 1))]
  if rng:chance(0.1) then v = rng:chance(0.5) end
  return maybe(rng, v)
end

-- T4 results: configurations by name, times, invalidity, measurements.
function docs.t4(rng)
  local ps = params(rng)
  local results = list(rng, rng:int(0, 6), function()
    local config = {}
    for _, p in ipairs(ps) do config[tostring(p.name)] = value_of(rng, p) end
    local inv = maybe(rng, rng:pick({ "correct", "correct", "compile", "runtime", "timeout", "correctness", "constraints", "other" }))
    local time = inv == "correct" and rng:int(1, 500) / 16 or rng:pick({ "CompilationFailedConfig", "RuntimeFailedConfig" })
    return {
      timestamp = maybe(rng, rng:pick({ "2023-01-24 01:03:17.677311+00:00", "2024-04-25T20:16:20Z", "yesterday" })),
      configuration = maybe(rng, config),
      times = maybe(rng, { compilation = maybe(rng, 1.5), framework = maybe(rng, 0.25), search_algorithm = maybe(rng, 0),
                           validation = maybe(rng, 0), runtimes = maybe(rng, list(rng, rng:int(0, 3), function() return rng:int(1, 99) / 8 end)),
                           order = { "compilation", "framework", "search_algorithm", "validation", "runtimes" } }),
      invalidity = inv, correctness = maybe(rng, inv == "correct" and 1 or 0),
      measurements = maybe(rng, list(rng, rng:int(0, 2), function(i)
        return { name = maybe(rng, i == 1 and "time" or "GFLOP/s"), value = maybe(rng, time), unit = maybe(rng, rng:pick({ "ms", "us", "miliseconds", "parsecs" })),
                 order = { "name", "value", "unit" } } end)),
      objectives = maybe(rng, list(rng, 1, function() return "time" end)),
      order = { "timestamp", "configuration", "times", "invalidity", "correctness", "measurements", "objectives" },
    }
  end)
  return fuzz.json({ schema_version = maybe(rng, "1.0.0"), metadata = maybe(rng, { timeunit = maybe(rng, rng:pick({ "miliseconds", "seconds", "eons" })) }),
                     results = maybe(rng, results), order = { "schema_version", "metadata", "results" } })
end

-- KTT's JSON results: configurations as lists, statuses, per-kernel data.
function docs.ktt(rng)
  local ps = params(rng)
  local function size() return { X = maybe(rng, rng:int(1, 4096)), Y = maybe(rng, 1), Z = maybe(rng, 1), order = { "X", "Y", "Z" } } end
  local results = list(rng, rng:int(0, 6), function()
    local config = list(rng, #ps, function(i)
      local v = value_of(rng, ps[i])
      return { Name = maybe(rng, ps[i].name), Value = v, ValueType = maybe(rng, type(v) == "boolean" and "Bool" or "Int"),
               order = { "Name", "Value", "ValueType" } }
    end)
    local comps = list(rng, rng:int(0, 2), function()
      return { KernelFunction = maybe(rng, "k"), Duration = maybe(rng, rng:int(1, 999)), Overhead = maybe(rng, 10),
               GlobalSize = maybe(rng, size()), LocalSize = maybe(rng, size()),
               CompilationData = maybe(rng, { RegistersCount = maybe(rng, rng:int(0, 64)), MaxWorkGroupSize = maybe(rng, 1024) }),
               order = { "KernelFunction", "Duration", "Overhead", "GlobalSize", "LocalSize", "CompilationData" } }
    end)
    return { Configuration = maybe(rng, config), ComputationResults = maybe(rng, comps),
             Status = maybe(rng, rng:pick({ "Ok", "Ok", "CompilationFailed", "ComputationFailed", "ValidationFailed", "DeviceLimitsExceeded", "Odd" })),
             TotalDuration = maybe(rng, rng:int(1, 9999) / 4), TotalOverhead = maybe(rng, 50), SearcherOverhead = maybe(rng, 1),
             KernelName = maybe(rng, "k"),
             order = { "KernelName", "Status", "TotalDuration", "TotalOverhead", "SearcherOverhead", "Configuration", "ComputationResults" } }
  end)
  return fuzz.json({ Metadata = maybe(rng, { Device = maybe(rng, "GPU"), TimeUnit = maybe(rng, rng:pick({ "Microseconds", "Nanoseconds", "Weeks" })),
                                              GlobalSizeType = maybe(rng, rng:pick({ "CUDA", "OpenCL" })), order = { "Device", "TimeUnit", "GlobalSizeType" } }),
                     Results = maybe(rng, results), order = { "Metadata", "Results" } })
end

docs.kinds = { "journal", "results", "kt_cache", "t4", "ktt" }

-- A document of one of the kinds: half of them have no field made wrong,
-- so that the readers' paths past their checks are taken too.
function docs.generate(rng)
  local kind = rng:pick(docs.kinds)
  rng.damage = rng:pick({ 0, 0, 0.01, 0.05, 0.2 })
  return kind, docs[kind](rng)
end

return docs
