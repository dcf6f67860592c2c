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
--
-- As OCLoptimizer's paper writes them, GENINIT(n, s, d), GENLIMIT(n, s, d)
-- and GENSTEP(n, s, d) share the iterations 0..n-1 of a loop: s is g (all
-- the work-items of the NDRange along dimension d share them) or l (the
-- work-items of each work-group along d share them: every work-group runs
-- all n); GENINIT(n) is GENINIT(n, g, 0). The macro's arity picks the form
-- (__VA_ARGS__ counted), and s is pasted onto a name, so that the bare
-- token g or l selects the helper: KT_GEN_INIT_g(n, d), ...

-- A work-item's index along dimension d, and the number of them, within
-- the NDRange (g) or its work-group (l). CUDA's indices are chosen by
-- d at run time (d may be any expression); past 2, as OpenCL's
-- get_global_id, index 0 of 1.
local INDEX = {
  opencl = {
    "#define KT_GEN_ID_g(d) ((long)get_global_id(d))",
    "#define KT_GEN_SIZE_g(d) ((long)get_global_size(d))",
    "#define KT_GEN_ID_l(d) ((long)get_local_id(d))",
    "#define KT_GEN_SIZE_l(d) ((long)get_local_size(d))",
  },
  cuda = {
    "#define KT_GEN_DIM(v, d, past) ((d) == 0 ? (long)(v).x : (d) == 1 ? (long)(v).y : (d) == 2 ? (long)(v).z : (past))",
    "#define KT_GEN_ID_l(d) KT_GEN_DIM(threadIdx, d, 0L)",
    "#define KT_GEN_SIZE_l(d) KT_GEN_DIM(blockDim, d, 1L)",
    "#define KT_GEN_ID_g(d) (KT_GEN_DIM(blockIdx, d, 0L) * KT_GEN_SIZE_l(d) + KT_GEN_ID_l(d))",
    "#define KT_GEN_SIZE_g(d) (KT_GEN_DIM(gridDim, d, 1L) * KT_GEN_SIZE_l(d))",
  },
}

-- On a GPU, work-item k of K takes k, k + K, k + 2K, ... (neighbours touch
-- neighbouring elements); elsewhere, the k-th block of ceil(n / K)
-- consecutive iterations (a core streams through its own part of memory).
-- s is pasted wherever it is used, never passed on: a macro named g or l
-- would not change the one-argument form.
local SHARE = {
  cyclic = {
    "#define KT_GEN_INIT(n, s, d) KT_GEN_ID_##s(d)",
    "#define KT_GEN_LIMIT(n, s, d) ((long)(n))",
    "#define KT_GEN_STEP(n, s, d) KT_GEN_SIZE_##s(d)",
  },
  blocked = {
    "#define KT_GEN_CHUNK_g(n, d) (((long)(n) + KT_GEN_SIZE_g(d) - 1) / KT_GEN_SIZE_g(d))",
    "#define KT_GEN_CHUNK_l(n, d) (((long)(n) + KT_GEN_SIZE_l(d) - 1) / KT_GEN_SIZE_l(d))",
    "#define KT_GEN_INIT(n, s, d) (KT_GEN_ID_##s(d) * KT_GEN_CHUNK_##s(n, d))",
    "#define KT_GEN_LIMIT(n, s, d) ((KT_GEN_ID_##s(d) + 1) * KT_GEN_CHUNK_##s(n, d) < (long)(n) "
      .. "? (KT_GEN_ID_##s(d) + 1) * KT_GEN_CHUNK_##s(n, d) : (long)(n))",
    "#define KT_GEN_STEP(n, s, d) 1L",
  },
}

-- The forms: three arguments as the paper writes them, or one (n, g, 0).
-- KT_GEN_ARITY's fourth argument is the form's macro; two arguments name
-- none (kt.annotated refuses them, with where they are, before a compile).
local FORMS = {
  "#define KT_GEN_ARITY(a, b, c, form, ...) form",
  "#define KT_GEN_3(what, n, s, d) KT_GEN_##what(n, s, d)",
  "#define KT_GEN_1(what, n) KT_GEN_##what(n, g, 0)",
  "#define GENINIT(...) KT_GEN_ARITY(__VA_ARGS__, KT_GEN_3, KT_GEN_2, KT_GEN_1, -)(INIT, __VA_ARGS__)",
  "#define GENLIMIT(...) KT_GEN_ARITY(__VA_ARGS__, KT_GEN_3, KT_GEN_2, KT_GEN_1, -)(LIMIT, __VA_ARGS__)",
  "#define GENSTEP(...) KT_GEN_ARITY(__VA_ARGS__, KT_GEN_3, KT_GEN_2, KT_GEN_1, -)(STEP, __VA_ARGS__)",
}

-- The macros' text for a distribution ("cyclic" or "blocked") and a
-- language ("opencl" or "cuda").
function M.gen_macros(distribution, language)
  local lines = {}
  for _, part in ipairs { INDEX[language], SHARE[distribution], FORMS } do
    for _, line in ipairs(part) do lines[#lines + 1] = line end
  end
  lines[#lines + 1] = ""
  return table.concat(lines, "\n")
end

local GEN = { GENINIT = true, GENLIMIT = true, GENSTEP = true }
local SPREAD = { g = true, l = true }

-- Fails, naming where, at a use of GENINIT, GENLIMIT or GENSTEP that no
-- form reads: other than 1 or 3 arguments, a second one other than the
-- bare g or l, a dimension written as a number other than 0, 1 or 2 (one
-- written as an expression is the kernel's to keep within 0..2). Reads
-- each token once more.
local function check_gen_uses(src, toks, where)
  local W = P.work
  for j, t in ipairs(toks) do
    W.steps = W.steps + 1
    if t.k == "id" and GEN[t.t] and P.is(toks, j + 1, "(") then
      local close = P.match(toks, j + 1, where)
      local args, a = {}, j + 2
      local k = a
      while k <= close do
        W.steps = W.steps + 1
        local u = toks[k]
        if k == close or P.is(toks, k, ",") then
          args[#args + 1] = { a, k - 1 }
          a = k + 1
        elseif u.k == "punct" and (u.t == "(" or u.t == "[" or u.t == "{") then
          k = P.match(toks, k, where)
        end
        k = k + 1
      end
      local function fail(msg, at) P.fail(where, (at or t).line, (at or t).col, t.t .. msg) end
      if #args ~= 1 and #args ~= 3 then
        fail((" takes 1 argument (n) or 3 (n, g or l, the dimension), got %d"):format(#args))
      end
      for _, arg in ipairs(args) do
        if arg[1] > arg[2] then fail(" has an empty argument", toks[arg[1]]) end
      end
      if #args == 3 then
        local s, d = args[2], args[3]
        if s[1] ~= s[2] or not SPREAD[toks[s[1]].t] or toks[s[1]].k ~= "id" then
          fail(("'s second argument is g (the NDRange's work-items share the iterations) or l (each "
            .. "work-group's do), got %s"):format(src:sub(toks[s[1]].s, toks[s[2]].e)), toks[s[1]])
        end
        local v = d[1] == d[2] and toks[d[1]].k == "num" and tonumber((toks[d[1]].t:gsub("[uUlL]+$", "")))
        if d[1] == d[2] and toks[d[1]].k == "num" and v ~= 0 and v ~= 1 and v ~= 2 then
          fail(("'s dimension is 0, 1 or 2, got %s"):format(toks[d[1]].t), toks[d[1]])
        end
      end
    end
  end
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
local function distribution_prelude(def, gen)
  local device = def.device
  if device ~= nil and type(device) ~= "table" then
    error(("kt.annotated: device: expected a device table (tuner.device, kt.device(...)), got %s"):format(type(device)), 3)
  end
  local dist = choice(def, "distribution", { cyclic = true, blocked = true },
    device and (device.type == "gpu" and "cyclic" or "blocked"))
  local lang = choice(def, "language", { opencl = true, cuda = true },
    device and device.backend == "cuda" and "cuda" or "opencl")
  if not gen then return "", dist end
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
  local gen = prepared.uses.GENINIT or prepared.uses.GENLIMIT or prepared.uses.GENSTEP
  if gen then check_gen_uses(text, prepared.toks, where) end
  for _, t in ipairs(gen and {} or prepared.toks) do -- or the source's own macros
    if t.k == "pp" then
      for w in t.t:gmatch("[%a_][%w_]*") do gen = gen or GEN[w] end
    end
  end
  local macros
  macros, self.distribution = distribution_prelude(def, gen)
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
