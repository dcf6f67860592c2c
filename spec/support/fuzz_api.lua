-- The API fuzzer: random calls with random arguments on a world of ktlua
-- objects (arrays, struct types, arguments, kernels, space views, results,
-- replays), including objects released by hand and callbacks (progress,
-- constraints, launchers, searchers, references) that call back into the
-- API while a tuning runs. Every call is made under pcall: a misuse must be
-- a Lua error with a message, never a crash. Each call is logged (flushed)
-- before it is made, so that the log of a case that crashes ends with the
-- call that crashed it.
--
-- Online tunings (tuner:online and its methods) are among the calls; the
-- online fuzzer (api.world(..., {online = true})) makes mostly those, also
-- on a kernel of its own whose steps it checks (World:start_online).
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
-- options.online: three calls in four are online calls.
function api.world(rng, open_tuner, log_path, dir, options)
  local w = setmetatable({ rng = rng, open_tuner = open_tuner, dir = dir, depth = 0, steps = 0,
                           objects = {}, kinds = {}, online = options and options.online,
                           checked = setmetatable({}, { __mode = "k" }) }, World)
  w.log = assert(io.open(log_path, "a"))
  return w
end

function World:close() self.log:close() end

-- Ends a case: its world closed and collected, and what broke it (nil:
-- nothing). Each case opens a tuner, a device process with a 32 MB staging
-- area that the collector sees as a small userdata: uncollected, a long
-- run's tuners filled the memory (the online fuzzer, seed 4: killed for
-- memory after 233 cases).
function api.finish(w)
  w:close()
  local bad = w.bad
  for k in pairs(w) do w[k] = nil end
  collectgarbage()
  collectgarbage()
  return bad
end

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
                                                  "replay", "tuner", "online", "db" })) or w:any()
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

-- ---- online tuning ----

-- The online calls: made by the API fuzzer as any others, and three times
-- in four by the online fuzzer.
local online_calls = {}

-- x[i] += V on the world's own kernel for online tunings, checked against
-- x + 1: V = 2 is invalid_output when validated, BAD = 1 does not compile.
-- Its arrays are no objects of the world: only its online tunings' steps
-- change them. A launcher of the fuzzer's, at times (then its steps'
-- outputs are not checked), else one that launches it.
function World:start_online()
  local rng = self.rng
  local x = kt.array("int", 32):fill(0)
  local k = self:tuner():kernel{ name = "inc", global = 32, args = { x:inout() }, source = [[
__kernel void inc(__global int *x) {
#if BAD
  syntax error
#endif
  int i = get_global_id(0);
  x[i] = x[i] + V;
}]] }
  k:param("V", { 1, 2 })
  k:param("BAD", { 0, 1 })
  k:param("WG", { 1, 2, 4 }, { group_x = "mul" })
  k:reference(x, function(ref) for i = 0, 31 do ref[i] = x[i] + 1 end end)
  local fuzzed = rng:chance(0.3)
  if fuzzed then k:launcher(api.launcher(self))
  elseif rng:chance(0.3) then k:launcher(function(run) run:launch(k) end) end
  self.own = { k = k, x = x, outputs = not fuzzed }
end

-- A database of the world's, mostly the one it has (a release may have
-- closed it).
function World:database()
  local list = self.kinds.db
  if list and #list > 0 and self.rng:chance(0.8) then return self.rng:pick(list) end
  return self:keep(kt.db(self.dir .. "/online.db"))
end

-- One option of tuner:online wrong, and what its error must name.
local function wrong_online_option(w, rng, opts)
  local cases = {
    function() opts.confirm = true return "online options.confirm: expected a table" end,
    function() opts.confirm = { candidates = -1 } return "online options.confirm.candidates" end,
    function() opts.confirm = { runs = 1001 } return "online options.confirm.runs" end,
    function() opts.confirm = { rounds = 1 } return "online options.confirm: unknown field 'rounds'" end,
    function() opts.bad = rng:pick({ 1, "x", {} }) return "online options: unknown field 'bad'" end,
    function() opts.validate = "yes" return "online options.validate" end,
    function() opts.objective = "kernel+host" return "online options.objective" end,
    function() opts.fallback = { V = 7, BAD = 0, WG = 1 } return "online options.fallback" end,
    function() opts.fallback = rng:pick({ 5, "x", true }) return "online options.fallback" end,
    function() opts.db, opts.size = rng:pick({ 5, "x", {} }), { n = 1 } return "options.db" end,
    function() opts.stop = rng:pick({ 3, "x" }) return "options.stop" end,
    function() opts.search = 3 return "options.search" end,
    function() opts.search = "nosuch" return "unknown searcher 'nosuch'" end,
    function() opts.seed = "x" return "options.seed" end,
    function() opts.time_limit = "x" return "options.time_limit" end,
    function() opts.lookahead = -1 return "options.lookahead" end,
  }
  return rng:pick(cases)()
end

-- tuner:online on the world's own kernel mostly, options at random; at
-- times one wrong, whose error must name it.
online_calls[#online_calls + 1] = function(w, rng)
  local own = w.own and rng:chance(0.8)
  local k = own and w.own.k or w:kernel()
  local opts = { search = rng:pick({ "exhaustive", "random", "bestfirst", "greedy", api.searcher(w) }),
                 seed = rng:int(0, 9) }
  local wrong
  if own and rng:chance(0.2) then
    wrong = wrong_online_option(w, rng, opts)
  else
    opts.validate = own and rng:chance(0.7) or (rng:chance(0.1) and w:any()) or nil
    if rng:chance(0.5) then opts.stop = { count = rng:int(1, 8) } end
    local confirm = { candidates = rng:int(0, 3), runs = rng:int(0, 3) }
    opts.confirm = rng:pick({ nil, false, confirm, confirm })
    if rng:chance(0.5) then
      opts.fallback = own and { V = rng:pick({ 1, 1, 2 }), BAD = rng:pick({ 0, 0, 1 }), WG = 2 }
        or w:any()
    end
    if rng:chance(0.1) then opts.journal, opts.resume = w.dir .. "/online.jsonl", rng:chance(0.5) end
    if rng:chance(0.1) then opts.metrics, opts.objective = { m = w:callback() }, "m" end
    if rng:chance(0.1) then opts.db, opts.size = w:database(), { n = rng:int(1, 3) } end
    if rng:chance(0.1) then opts[rng:pick({ "time_limit", "lookahead", "confirm", "fallback" })] = w:any() end
  end
  return "tuner:online", function()
    local ok, on = pcall(w:tuner().online, w:tuner(), k, opts)
    if wrong and ok then w:fail("tuner:online accepted a wrong option (" .. wrong .. ")") end
    if wrong and type(on) == "string" and not on:find(wrong, 1, true) then
      w:fail(("tuner:online's error does not name the wrong option (%s): %s"):format(wrong, on))
    end
    if not ok then error(on, 0) end
    if own then w.checked[on] = opts.validate == true end
    return w:keep(on)
  end
end

-- What a step of an online tuning of the world's own kernel gave, checked:
-- what failed fell back; unless the fuzzer's launcher runs it, its outputs
-- are x + V of what ran, a validated search's ok step ran V = 1 and a step
-- that raised changed nothing.
local function check_step(w, on, before, ok, step)
  local x = w.own.x
  if not ok then
    if w.own.outputs and x[0] ~= before then
      w:fail(("a step that raised changed its outputs (%d, not %d): %s"):format(x[0], before,
        tostring(step)))
    end
    return
  end
  local function expect(cond, what) if not cond then w:fail("step: " .. what) end end
  expect(not (step.searching and step.confirming), "searching and confirming")
  expect(step.status == "ok" or step.fell_back, step.status .. " did not fall back")
  expect(not step.fell_back or type(step.error) == "string", "fell back without an error")
  expect(step.done == on:done(), "done is not on:done()")
  if not w.own.outputs then return end -- a launcher of the fuzzer's made them
  if w.checked[on] and step.status == "ok" and (step.searching or step.confirming) then
    expect(step.config.V == 1 and step.config.BAD == 0, "a validated ok step ran V = 2")
  end
  expect(x[0] == before + step.config.V and x[31] == x[0],
    ("outputs %d, %d after %d with V = %d"):format(x[0], x[31], before, step.config.V))
end

-- The online tuning's methods, at times on a wrong self (the error must
-- say what was expected).
online_calls[#online_calls + 1] = function(w, rng)
  local on = w:get("online")
  local m = rng:pick({ "step", "step", "step", "step", "step", "best", "results", "done", "stop",
                       "close", "tostring" })
  local mt = type(on) == "userdata" and getmetatable(on)
  local wrong = mt and mt.__name == "ktlua.online" and m ~= "tostring" and rng:chance(0.1)
    and rng:pick({ 42, "on", {}, kt.array("int", 1) })
  local x = rng:chance(0.2) and w:any() or nil
  return "online:" .. m, function()
    if m == "tostring" then return tostring(on) end
    local f = on[m]
    if wrong then
      local ok, err = pcall(f, wrong, x)
      if ok or not tostring(err):find("ktlua.online expected", 1, true) then
        w:fail(("on:%s on a wrong self gave %s"):format(m, tostring(err)))
      end
      return
    end
    local own = w.checked[on] ~= nil
    local before = own and w.own.x[0]
    local ok, r = pcall(f, on, x)
    if own and m == "step" then check_step(w, on, before, ok, r) end
    if not ok then error(r, 0) end
    if m == "best" or m == "results" then w:keep(r) end
    return r
  end
end

for _, call in ipairs(online_calls) do calls[#calls + 1] = call end

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

-- What broke the case (the first thing).
function World:fail(what)
  if not self.bad then self.bad = ("step %d: %s"):format(self.steps, what) end
end

-- One random call. Its error must be a message (a string).
function World:step()
  if self.steps > 400 then return end -- callbacks calling callbacks stop somewhere
  local list = self.online and self.rng:chance(0.75) and online_calls or calls
  local what, call = list[self.rng:int(#list)](self, self.rng)
  self:note(what)
  local ok, err = pcall(call)
  if not ok and type(err) ~= "string" and not self.bad then
    -- kept, since a callback's caller may turn any error into a message
    self.bad = ("step %d, %s, raised a %s, not a message"):format(self.steps, what, type(err))
  end
  return ok
end

return api
