-- ktlua.annotated: kt.annotated{...}, OCLoptimizer's annotated kernels
-- (Fernandez, Andrade, Fraguela, Doallo: "OCLoptimizer: an iterative
-- optimization tool for OpenCL"), doc/annotations.md.
--   local ann = kt.annotated{ file = "k.cl" | source = text, device = tuner.device }
--   ann.params                  -- a parameter per annotation
--   local k = ann:kernel(tuner, { name = ..., global = ..., args = ... })
--   tuner:tune(k, { search = ann:search() })  -- annotation after annotation
-- Each configuration's program is the source with its annotated loops
-- rewritten (ktlua.oclopts_rewrite), made by the kernel's source generator
-- on the tuning's thread (doc/codegen: source = function(cfg)). The source
-- is read and checked once, here; a configuration only writes its program.
local R = require "ktlua.oclopts_rewrite"
local P = require "ktlua.oclopts_parse"

local M = {}

local Annotated = {}
Annotated.__index = Annotated

local KEYS = { file = true, source = true, device = true, distribution = true, language = true }
local SOURCE_MAX = 64 << 20

-- The directory of the script that called kt.annotated (files are found
-- there as well as in the working directory, as tuner:kernel finds them).
local function caller_dir()
  for level = 3, 20 do
    local info = debug.getinfo(level, "S")
    if not info then return nil end
    if info.source:sub(1, 1) == "@" and not info.source:match("ktlua/annotated%.lua$") then
      return info.source:sub(2):match("^(.*)/[^/]*$")
    end
  end
end

local function read(file)
  local f, why = io.open(file, "rb")
  if not f then
    local dir = not file:match("^/") and caller_dir()
    f = dir and io.open(dir .. "/" .. file, "rb")
    if not f then error(("kt.annotated: file: cannot read %s"):format(why), 3) end
  end
  local text = f:read(SOURCE_MAX + 1)
  f:close()
  if not text then error(("kt.annotated: file: cannot read %s (not a regular file?)"):format(file), 3) end
  if #text > SOURCE_MAX then error(("kt.annotated: file: %s is over %d bytes"):format(file, SOURCE_MAX), 3) end
  return text
end

-- ---- GENINIT, GENLIMIT, GENSTEP ----

local INDEX = {
  opencl = { "((long)get_global_id(0))", "((long)get_global_size(0))" },
  cuda = { "((long)blockIdx.x * blockDim.x + threadIdx.x)", "((long)gridDim.x * blockDim.x)" },
}

-- The loop over iterations 0..n-1 each work-item runs: on a GPU,
-- work-item g takes g, g + G, g + 2G, ... (neighbours touch neighbouring
-- elements); elsewhere, a block of consecutive iterations (a core streams
-- through its own part of memory).
function M.gen_macros(distribution, language)
  local id, size = INDEX[language][1], INDEX[language][2]
  if distribution == "cyclic" then
    return ("#define GENINIT(n) %s\n#define GENLIMIT(n) ((long)(n))\n#define GENSTEP(n) %s\n"):format(id, size)
  end
  return table.concat({
    ("#define KT_GENCHUNK(n) (((long)(n) + %s - 1) / %s)"):format(size, size),
    ("#define GENINIT(n) (%s * KT_GENCHUNK(n))"):format(id),
    "#define GENLIMIT(n) (GENINIT(n) + KT_GENCHUNK(n) < (long)(n) ? GENINIT(n) + KT_GENCHUNK(n) : (long)(n))",
    "#define GENSTEP(n) 1L", "" }, "\n")
end

local function choice(def, field, allowed, default)
  local v = def[field]
  if v == nil then return default end
  if not allowed[v] then
    local names = {}
    for k in pairs(allowed) do names[#names + 1] = "'" .. k .. "'" end
    table.sort(names)
    error(("kt.annotated: %s: expected %s, got %s"):format(field, table.concat(names, " or "), tostring(v)), 4)
  end
  return v
end

-- The macros' text for def (nil where the source uses none).
local function distribution_prelude(def, uses)
  local device = def.device
  if device ~= nil and type(device) ~= "table" then
    error(("kt.annotated: device: expected a device table (tuner.device, kt.device(...)), got %s"):format(type(device)), 3)
  end
  local dist = choice(def, "distribution", { cyclic = true, blocked = true },
    device and (device.type == "gpu" and "cyclic" or "blocked"))
  local lang = choice(def, "language", { opencl = true, cuda = true },
    device and device.backend == "cuda" and "cuda" or "opencl")
  if not (uses.GENINIT or uses.GENLIMIT or uses.GENSTEP) then return "", dist end
  if not dist then
    error("kt.annotated: the source uses GENINIT/GENLIMIT/GENSTEP: give the device (its type chooses "
      .. "how iterations are shared) or distribution = 'cyclic' or 'blocked'", 3)
  end
  return M.gen_macros(dist, lang), dist
end

-- ---- the annotated kernel ----

local function fnv1a(text)
  local h = -3750763034362895579 -- 0xcbf29ce484222325
  for i = 1, #text do h = (h ~ text:byte(i)) * 1099511628211 end
  return ("%016x"):format(h)
end

local function params_of(anns, uses, where)
  local params = {}
  for i, a in ipairs(anns) do
    local name = (a.kind == "unroll" and "UNROLL_%d" or "UNROLL_JAM_%d"):format(i)
    if uses[name] then
      error(("%s:%d:%d: #pragma oclopts: its parameter's name %s is already used in the source"):format(where, a.line, a.col, name), 0)
    end
    local values = {}
    for v = a.init, a.limit, a.step do values[#values + 1] = v end
    params[i] = { name = name, kind = a.kind, values = values, tolerance = a.tolerance, number = a.number,
                  line = a.line, column = a.col }
  end
  return params
end

function M.annotated(def)
  if type(def) ~= "table" then error("kt.annotated: expected a table {file = ... or source = ..., device = ...}", 2) end
  for k in pairs(def) do
    if not KEYS[k] then error(("kt.annotated: unknown field %s"):format(tostring(k)), 2) end
  end
  if (def.file == nil) == (def.source == nil) then error("kt.annotated: give exactly one of 'file' and 'source'", 2) end
  for _, f in ipairs { "file", "source" } do
    if def[f] ~= nil and type(def[f]) ~= "string" then error(("kt.annotated: %s: expected a string, got %s"):format(f, type(def[f])), 2) end
  end
  local text = def.source or read(def.file)
  local where = def.file and def.file:match("[^/]*$") or "<string>"
  local prepared = R.prepare(text, where) -- every annotated loop checked, once
  local self = setmetatable({ where = where, prepared = prepared }, Annotated)
  self.params = params_of(prepared.anns, prepared.uses, where)
  local macros
  macros, self.distribution = distribution_prelude(def, prepared.uses)
  -- what identifies the kernel (journals, databases): the annotated text
  self.prelude = ("%s/* annotated source %s, fnv1a-64 %s */"):format(macros, where, fnv1a(text))
  return self
end

-- The factor of each annotation under cfg (a table name -> value; a
-- parameter cfg lacks takes its first value).
function Annotated:factors(cfg)
  local factors = {}
  for i, p in ipairs(self.params) do
    local v = cfg and cfg[p.name]
    if v == nil then v = p.values[1] end
    if math.type(v) ~= "integer" or v < 1 or v > P.MAX_FACTOR then
      error(("annotated:source: %s: expected a whole number from 1 to %d, got %s"):format(p.name, P.MAX_FACTOR,
        tostring(v)), 3)
    end
    factors[i] = v
  end
  return factors
end

-- The loops of the source rewritten for cfg (what source(cfg) gives a kernel).
function Annotated:body(cfg)
  return R.generate(self.prepared, self:factors(cfg))
end

-- The whole program of cfg: the prelude (GEN macros), then the body.
function Annotated:source(cfg)
  return self.prelude .. "\n#line 1\n" .. self:body(cfg)
end

-- tuner:kernel(def) with the rewritten source and a parameter per annotation.
function Annotated:kernel(tuner, def)
  if type(def) ~= "table" then error("annotated:kernel: expected the kernel's definition table", 2) end
  local full = {}
  for k, v in pairs(def) do
    if k == "file" or k == "source" or k == "prelude" then
      error(("annotated:kernel: %s: the annotated source gives the kernel's text"):format(k), 2)
    end
    full[k] = v
  end
  full.prelude = self.prelude
  full.source = function(cfg) return self:body(cfg) end
  local k = tuner:kernel(full)
  for _, p in ipairs(self.params) do k:param(p.name, p.values) end
  return k
end

-- OCLoptimizer's breadth-first search: the stages in `first` (work sizes,
-- say), then the annotations one after the other, each trying all its
-- values on each version kept so far and keeping those within its
-- tolerance (percent) of the best, at most its number (1 by default).
function Annotated:search(opts)
  opts = opts or {}
  local stages = {}
  for _, s in ipairs(opts.first or {}) do stages[#stages + 1] = s end
  for _, p in ipairs(self.params) do
    local stage = { p.name }
    if p.number then stage[#stage + 1] = ("keep=%d"):format(p.number) end
    if p.tolerance then stage[#stage + 1] = ("tolerance=%.15g"):format(p.tolerance / 100) end
    stages[#stages + 1] = stage
  end
  return { "staged", stages = stages, rounds = 1, explore = 0, seed = opts.seed }
end

return M
