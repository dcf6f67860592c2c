-- The API fuzzer: random calls with random arguments on a world of ktlua
-- objects (arrays, struct types, arguments, kernels, space views, results,
-- replays), including objects released by hand and callbacks (progress,
-- constraints, launchers, searchers, references) that call back into the
-- API while a tuning runs. Every call is made under pcall: a misuse must be
-- a Lua error with a message, never a crash. Each call is logged (flushed)
-- before it is made, so that the log of a case that crashes ends with the
-- call that crashed it.
local kt = require "ktlua"
local fuzz = require "spec.support.fuzz"

local api = {}
local World = {}
World.__index = World

local SOURCES = {
  "__kernel void k(__global float *a, int n) { int i = get_global_id(0); if (i < n) a[i] += A; }",
  "__kernel void k(__global float *a) { a[get_global_id(0)] *= 2; }",
  "__kernel void k(__global int *o, __local int *t) { t[0] = 1; o[get_global_id(0)] = t[0]; }",
  "__kernel void k(__global float *a) { syntax error }",
}
local TYPES = { "float", "int", "uchar", "double", "half", "long", "nothing" }
local NAMES = { "A", "B", "WG" }
local FIXTURE = "spec/fixtures/small_cache.json"

-- world.tuner() gives the tuner, opening another if a case closed it.
function api.world(rng, open_tuner, log_path, dir)
  local w = setmetatable({ rng = rng, open_tuner = open_tuner, dir = dir, depth = 0, steps = 0,
                           objects = {}, kinds = {} }, World)
  w.log = assert(io.open(log_path, "a"))
  return w
end

function World:close() self.log:close() end

-- What the calls start from: arrays, a scalar, a kernel with a parameter
-- (and its space), a replay.
function World:start()
  local a, n = kt.array("float", 16), kt.int(16)
  local k = self:tuner():kernel{ source = SOURCES[1], name = "k", global = 16, args = { a, n } }
  k:param("A", { 1, 2 })
  self:keep(a, kt.array("int", 16), n, k, k:space(), kt.replay(FIXTURE))
end

function World:tuner()
  if not self.t or tostring(self.t) == "tuner (closed)" then self.t = self.open_tuner() end
  return self.t
end

-- Keeps the objects among what a call returned, by class.
function World:keep(...)
  for i = 1, select("#", ...) do
    local o = select(i, ...)
    local mt = type(o) == "userdata" and getmetatable(o)
    local kind = type(mt) == "table" and mt.__name and mt.__name:match("^ktlua%.(.*)")
    if kind then
      self.objects[#self.objects + 1] = o
      self.kinds[kind] = self.kinds[kind] or {}
      table.insert(self.kinds[kind], o)
    end
  end
  return ...
end

-- An object of a class (array, type, arg, task, space, results, replay,
-- run), mostly; else anything.
function World:get(kind)
  local list = self.kinds[kind]
  if list and #list > 0 and self.rng:chance(0.9) then return self.rng:pick(list) end
  return self:any()
end

-- Any value: mostly an object of the world, else a plain value.
function World:any()
  local rng = self.rng
  local kind = rng:int(10)
  if kind <= 4 and #self.objects > 0 then return rng:pick(self.objects) end
  if kind == 5 then return rng:number() end
  if kind == 6 then return rng:string() end
  if kind == 7 then return { A = rng:pick({ 1, 2, 4 }), B = rng:number() } end
  if kind == 8 then return self:callback() end
  if kind == 9 then return rng:pick({ true, false, {}, { 1, 2 } }) end
  return nil
end

function World:kernel() return self:get("task") end

-- A function that makes a few calls of its own, then returns anything (a
-- boolean as a constraint, a number as a count or a size).
function World:callback()
  return function(...)
    if self.depth < 2 then
      self.depth = self.depth + 1
      for _ = 1, self.rng:int(0, 2) do self:step() end
      self.depth = self.depth - 1
    end
    local rng = self.rng
    if rng:chance(0.7) then return rng:chance(0.8) end
    return rng:pick({ 1, 4, 64, -1, "x", {}, (...) })
  end
end

-- ---- the calls ----

local calls = {}

calls[#calls + 1] = function(w, rng)
  local n = rng:chance(0.9) and rng:int(1, 64) or rng:number()
  return "kt.array", function() return w:keep(kt.array(rng:chance(0.9) and rng:pick(TYPES) or w:any(), n)) end
end

calls[#calls + 1] = function(w, rng)
  local fields = { { "x", "float" }, { "pos", "float", rng:int(0, 3) }, { "id", rng:pick(TYPES) } }
  if rng:chance(0.2) then fields[rng:int(3)] = w:any() end
  return "kt.struct", function() return w:keep(kt.struct(rng:pick({ "P", "Q", "bad name" }), fields)) end
end

calls[#calls + 1] = function(w, rng)
  local a, m = w:get("array"), rng:pick({ "fill", "random", "copy", "copy_from", "totable", "get", "set",
                                   "input", "output", "inout", "index", "newindex", "len" })
  local x, y, z = w:any(), w:any(), w:any()
  if rng:chance(0.5) then x = rng:int(-1, 64) end
  if m == "copy_from" and rng:chance(0.8) then x = w:get("array") end
  if (m == "set" or m == "newindex") and rng:chance(0.5) then y = rng:number() end
  return "array:" .. m, function()
    if m == "index" then return a[x] end
    if m == "newindex" then a[x] = y return end
    if m == "len" then return #a end
    local r = a[m](a, x, y, z)
    if m == "input" or m == "output" or m == "inout" or m == "copy" then w:keep(r) end
    return r
  end
end

calls[#calls + 1] = function(w, rng)
  local f, x, y = rng:pick({ "scalar", "int", "float", "localmem", "symbol", "uchar" }), w:any(), w:any()
  if rng:chance(0.5) then x = rng:pick(TYPES) end
  if f ~= "scalar" and f ~= "localmem" and rng:chance(0.7) then x = rng:number() end
  if f == "localmem" and rng:chance(0.5) then y = rng:chance(0.5) and 4 or w:callback() end
  if f == "symbol" and rng:chance(0.7) then x, y = "c", w:get(rng:pick({ "array", "arg" })) end
  return "kt." .. f, function() return w:keep(kt[f](x, y)) end
end

calls[#calls + 1] = function(w, rng)
  local s, v = w:get("arg"), rng:chance(0.7) and rng:number() or w:any()
  return "scalar:set", function() return s:set(v) end
end

calls[#calls + 1] = function(w, rng)
  local def = {
    name = rng:chance(0.9) and "k" or w:any(), source = rng:pick(SOURCES),
    global = rng:chance(0.9) and rng:pick({ 8, 16, { 8, 2 } }) or w:any(),
    group = rng:chance(0.5) and rng:pick({ 1, 2, 4 }) or nil,
    args = { w:any(), w:any() }, round_global = rng:chance(0.2) or nil,
  }
  if rng:chance(0.7) then def.args = { w:get("array"), w:get("arg") } end
  if rng:chance(0.1) then def[rng:pick({ "notation", "options", "prelude", "file", "bad" })] = w:any() end
  local param = rng:chance(0.8)
  return "tuner:kernel", function()
    local k = w:keep(w:tuner():kernel(def))
    if param then k:param("A", { 1, 2 }) end
    return k
  end
end

calls[#calls + 1] = function(w, rng)
  local k = w:kernel()
  local values = rng:chance(0.9) and { 1, 2, 4 } or { w:any(), w:any() }
  local mods = rng:chance(0.3) and { [rng:pick({ "group_x", "global_x", "bad" })] = rng:pick({ "mul", "div", "x" }) } or nil
  local name = rng:chance(0.9) and rng:pick(NAMES) or w:any()
  return "k:param", function() return k:param(name, values, mods) end
end

calls[#calls + 1] = function(w, rng)
  local k = w:kernel()
  local texts = { "A > 1", "A % B == 0", "A * B <= 8", "WG >= A", "N > A", "A // 0 > 1", "(((A)))",
                  "min(A, B, 3) > 1 && !(B == 2)", "pow(A, 2) < 9" }
  local text = fuzz.mutate(rng, rng:pick(texts))
  local consts = rng:chance(0.2) and { N = rng:pick({ 2, "s", 1.5 }) } or nil
  return "k:constraint", function()
    if rng:chance(0.3) then return k:constraint({ rng:pick(NAMES), rng:pick(NAMES) }, w:callback()) end
    return k:constraint(text, consts)
  end
end

calls[#calls + 1] = function(w, rng)
  local k, m = w:kernel(), rng:pick({ "modifier", "reference", "local_memory", "prune", "launcher",
                                      "args", "space" })
  local x, y, z = w:any(), w:any(), w:any()
  if m == "modifier" and rng:chance(0.6) then x, y, z = "group_x", rng:pick({ "mul", "div" }), "A" end
  if m == "local_memory" and rng:chance(0.6) then x, y = "A * 4", nil end
  if m == "launcher" then x = rng:chance(0.8) and api.launcher(w) or nil end
  if m == "reference" and rng:chance(0.5) then y = w:callback() end
  return "k:" .. m, function() return w:keep(k[m](k, x, y, z)) end
end

calls[#calls + 1] = function(w, rng)
  local s, m = w:get("space"), rng:pick({ "count", "count_all", "config", "index", "params", "neighbors",
                                   "random_neighbor", "random_unexplored", "explored", "pruned",
                                   "threads", "value_indices", "random", "configs" })
  local x, y = rng:chance(0.6) and rng:int(-1, 8) or w:any(), w:any()
  return "space:" .. m, function()
    if m == "configs" then
      for i in s:configs() do if i > 3 then break end end
      return
    end
    return s[m](s, x, y)
  end
end

-- Tunings: a small budget always, other options at random.
calls[#calls + 1] = function(w, rng)
  local k = w:kernel()
  local opts = { stop = { count = rng:int(1, 3) }, repeats = rng:chance(0.8) and 1 or w:any(),
                 search = rng:pick({ "random", "bestfirst", "exhaustive", "genetic", { "annealing", alpha = 0.5 },
                                     api.searcher(w), w:any() }) }
  if rng:chance(0.5) then opts.progress = w:callback() end
  if rng:chance(0.1) then opts.journal, opts.resume = w.dir .. "/api.jsonl", rng:chance(0.5) end
  if rng:chance(0.1) then opts.output = w.dir .. "/api.json" end
  if rng:chance(0.1) then opts[rng:pick({ "objective", "lookahead", "seed", "time_limit", "bad" })] = w:any() end
  return "tuner:tune", function() return w:keep(w:tuner():tune(k, opts)) end
end

calls[#calls + 1] = function(w, rng)
  local k, cfg = w:kernel(), rng:chance(0.5) and { A = rng:pick({ 1, 2 }) } or w:any()
  return "tuner:run", function() return w:tuner():run(k, cfg) end
end

calls[#calls + 1] = function(w, rng)
  local ks = { w:kernel(), w:kernel() }
  return "tuner:composition", function()
    return w:keep(w:tuner():composition{ name = "c", kernels = ks })
  end
end

calls[#calls + 1] = function(w, rng)
  local r, m = w:get("results"), rng:pick({ "best", "list", "summary", "write", "index", "len", "load" })
  local i = rng:int(0, 4)
  return "results:" .. m, function()
    if m == "index" then return r[i] end
    if m == "len" then return #r end
    if m == "write" then return r:write(w.dir .. "/api." .. rng:pick({ "csv", "json", "txt" })) end
    if m == "load" then return w:keep(kt.load(w.dir .. "/api.json")) end
    return r[m](r)
  end
end

calls[#calls + 1] = function(w, rng)
  local m = rng:pick({ "open", "tune", "space", "score", "optimum", "records" })
  local rec, x = w:get("replay"), m == "score" and w:get("results") or w:any()
  return "replay:" .. m, function()
    if m == "open" then return w:keep(kt.replay(FIXTURE)) end
    if m == "tune" then
      return w:keep(rec:tune{ search = rng:pick({ "random", api.searcher(w) }), stop = { count = 4 },
                              progress = rng:chance(0.5) and w:callback() or nil })
    end
    return w:keep(rec[m](rec, x))
  end
end

calls[#calls + 1] = function(w, rng)
  local o = rng:chance(0.8) and w:get(rng:pick({ "array", "type", "arg", "task", "space", "results",
                                                  "replay", "tuner" })) or w:any()
  return "release", function()
    local mt = getmetatable(o)
    if type(mt) == "table" and mt.__gc then
      if mt.__name == "ktlua.tuner" and rng:chance(0.8) then return end -- keep the tuner mostly
      mt.__gc(o)
    end
  end
end

calls[#calls + 1] = function(w, rng)
  return "collectgarbage", function()
    if rng:chance(0.5) and #w.objects > 20 then
      for i = 1, 10 do w.objects[i] = false end
      for _, list in pairs(w.kinds) do
        for i = 1, #list // 2 do list[i] = false end
      end
    end
    collectgarbage()
  end
end

-- A launcher that calls the run object's methods with random arguments,
-- and sometimes keeps the run object for later.
function api.launcher(w)
  local methods = { "launch", "launch", "sync", "read", "write", "copy", "clear", "resize", "length",
                    "update", "localmem", "swap", "args" }
  return function(run, cfg)
    local rng = w.rng
    for _ = 1, rng:int(1, 3) do
      local m = rng:pick(methods)
      local x, y, z = w:kernel(), w:any(), w:any()
      if m ~= "launch" and m ~= "swap" and m ~= "args" then x = w:get(rng:pick({ "array", "arg" })) end
      if m == "resize" or m == "localmem" then y = rng:int(-1, 32) end
      if m == "launch" and rng:chance(0.7) then y = nil end
      w:note("run:" .. m)
      pcall(function() return run[m](run, x, y, z) end)
    end
    if rng:chance(0.1) then w:keep(run) end
    if rng:chance(0.1) then w:step() end
    local _ = cfg and run.config
  end
end

-- A searcher table whose methods return what a searcher should, or not.
function api.searcher(w)
  local rng = w.rng
  return {
    init = function(self, space) self.space = space end,
    next = function(self, n)
      if rng:chance(0.1) then w:step() end
      local choice = rng:int(6)
      if choice == 1 then return { rng:int(0, 3) } end
      if choice == 2 then return self.space and self.space:random_unexplored() end
      if choice == 3 then return { w:any() } end
      if choice == 4 then return w:any() end
      return rng:int(-1, 5)
    end,
    report = function(self, i, r) if rng:chance(0.1) then w:step() end end,
  }
end

function World:note(what)
  self.steps = self.steps + 1
  self.log:write(("%s%d %s\n"):format(("  "):rep(self.depth), self.steps, what))
  self.log:flush()
end

-- One random call. Its error must be a message (a string).
function World:step()
  if self.steps > 400 then return end -- callbacks calling callbacks stop somewhere
  local what, call = calls[self.rng:int(#calls)](self, self.rng)
  self:note(what)
  local ok, err = pcall(call)
  if not ok and type(err) ~= "string" and not self.bad then
    -- kept, since a callback's caller may turn any error into a message
    self.bad = ("step %d, %s, raised a %s, not a message"):format(self.steps, what, type(err))
  end
  return ok
end

return api
