-- Objects whose __gc was called by hand, and callbacks that reach what is
-- running: every misuse is a Lua error that says so, never a crash.
local kt = require "ktlua"

local function release(o) getmetatable(o).__gc(o) end

-- The message of the error f raises, without its position.
local function error_of(f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return (tostring(err):gsub("^[^:]*:%d+: ", ""))
end

local source = "__kernel void k(__global float *a) { a[get_global_id(0)] += X; }"

local function kernel(tuner)
  local k = tuner:kernel{ source = source, name = "k", global = 8, args = { kt.array("float", 8) } }
  k:param("X", { 1, 2, 3 })
  return k
end

describe("a released object", function()
  it("is an array that says so, also to its methods, and prints as released", function()
    local a = kt.array("float", 4)
    release(a)
    release(a) -- twice is harmless, as the collector's own call after it
    assert.are.equal("calling 'random' on bad self (array has been released)",
      error_of(function() a:random(1) end))
    assert.are.equal("bad argument #1 to 'len' (array has been released)",
      error_of(function() return #a end))
    assert.are.equal("bad argument #1 to 'index' (array has been released)",
      error_of(function() return a[0] end))
    assert.are.equal("calling 'input' on bad self (array has been released)",
      error_of(function() return a:input() end))
    assert.are.equal("bad argument #1 to 'copy_from' (array has been released)",
      error_of(function() kt.array("float", 4):copy_from(a) end))
    assert.are.equal("array (released)", tostring(a))
  end)

  it("is a struct type, a scalar or an argument", function()
    local st = kt.struct("P", { { "x", "float" } })
    local kept = kt.array(st, 2) -- an array keeps its type alive
    release(st)
    assert.are.equal("calling 'declaration' on bad self (struct type has been released)",
      error_of(function() return st:declaration() end))
    assert.are.equal("bad argument #1 to 'array' (struct type has been released)",
      error_of(function() return kt.array(st, 2) end))
    assert.are.equal("struct type (released)", tostring(st))
    kept[1] = { x = 2 }
    assert.are.equal(2, kept[1].x)

    local s = kt.int(3)
    release(s)
    assert.are.equal("calling 'set' on bad self (argument has been released)",
      error_of(function() s:set(4) end))
    assert.are.equal("argument (released)", tostring(s))
  end)

  it("is refused in a kernel's arguments, naming which", function()
    local tuner = kt.tuner()
    local input = kt.array("float", 8):input()
    release(input)
    assert.are.equal("kernel k, argument 1: argument has been released",
      error_of(function()
        tuner:kernel{ source = source, name = "k", global = 8, args = { input } }
      end))
    local a = kt.array("float", 8)
    release(a)
    assert.are.equal("kernel k, argument 1: array has been released",
      error_of(function()
        tuner:kernel{ source = source, name = "k", global = 8, args = { a } }
      end))
  end)

  it("is a kernel, a composition, a space view or results", function()
    local tuner = kt.tuner()
    local k = kernel(tuner)
    local s = k:space()
    local r = tuner:tune(k, { repeats = 1 })
    release(r)
    assert.are.equal("bad argument #1 to 'len' (results have been released)",
      error_of(function() return #r end))
    assert.are.equal("calling 'best' on bad self (results have been released)",
      error_of(function() return r:best() end))
    assert.are.equal("results (released)", tostring(r))
    release(k)
    assert.are.equal("calling 'param' on bad self (kernel has been released)",
      error_of(function() k:param("Y", { 1 }) end))
    assert.are.equal("bad argument #1 to 'tune' (kernel has been released)",
      error_of(function() tuner:tune(k) end))
    assert.are.equal("composition.kernels[1]: kernel has been released",
      error_of(function() tuner:composition{ kernels = { k } } end))
    assert.are.equal("kernel (released)", tostring(k))
    assert.are.equal(3, s:count()) -- the view keeps its kernel's space
    release(s)
    assert.are.equal("calling 'count' on bad self (space view has been released)",
      error_of(function() return s:count() end))
    assert.are.equal("space view (released)", tostring(s))
  end)

  it("is a tuner, closed", function()
    local tuner = kt.tuner()
    release(tuner)
    assert.are.equal("calling 'kernel' on bad self (tuner has been closed)",
      error_of(function() return kernel(tuner) end))
    assert.are.equal("tuner (closed)", tostring(tuner))
  end)

  it("is a replay", function()
    local rec = kt.replay("spec/fixtures/small_cache.json")
    release(rec)
    assert.are.equal("calling 'optimum' on bad self (replay has been released)",
      error_of(function() return rec:optimum() end))
    assert.are.equal("replay (released)", tostring(rec))
  end)
end)

describe("a callback of a tuning", function()
  local tuner = kt.tuner()

  -- The error of a tuning whose progress callback calls f(k).
  local function progress_error(f)
    local k = kernel(tuner)
    local msg = error_of(tuner.tune, tuner, k, { repeats = 1, progress = function() f(k) end })
    return (msg:match("^progress: [^:]*:%d+: ([^\n]*)"))
  end

  it("cannot close the tuner, nor tune or run on it", function()
    assert.are.equal("calling 'close' on bad self (the tuner is in use: close it after its "
      .. "tuning or run returns)", progress_error(function() tuner:close() end))
    assert.are.equal("the tuner is in use: a tuning or a run is in progress on it",
      progress_error(function(k) tuner:tune(k) end))
    assert.are.equal("the tuner is in use: a tuning or a run is in progress on it",
      progress_error(function(k) tuner:run(k, { X = 1 }) end))
    assert.are.equal(3, #tuner:tune(kernel(tuner), { repeats = 1 })) -- and it still works
  end)

  it("cannot change the kernel being tuned, nor tune it on another tuner", function()
    local in_use = "calling '%s' on bad self (kernel k is in use: it cannot change while it is "
      .. "tuned or run, or while its space is generated)"
    assert.are.equal(in_use:format("param"), progress_error(function(k) k:param("Y", { 1 }) end))
    assert.are.equal(in_use:format("constraint"),
      progress_error(function(k) k:constraint("X > 1") end))
    assert.are.equal(in_use:format("launcher"), progress_error(function(k) k:launcher(nil) end))
    assert.are.equal(in_use:format("args"),
      progress_error(function(k) k:args{ kt.array("float", 8) } end))
    local other = kt.tuner()
    assert.are.equal("task k is in use: it is being tuned or run, or its space generated, and "
      .. "cannot change or be tuned or run until that ends",
      progress_error(function(k) other:tune(k) end))
  end)

  it("may release the kernel and the replay it tunes, which live until it ends", function()
    local k = kernel(tuner)
    local r = tuner:tune(k, { repeats = 1, progress = function() release(k) end })
    assert.are.equal(3, #r)
    local rec = kt.replay("spec/fixtures/small_cache.json")
    local n = rec:count()
    r = rec:tune{ search = "random", progress = function() release(rec) end }
    assert.are.equal(n, #r)
    assert.are.equal("replay (released)", tostring(rec))
  end)

  it("in a constraint cannot change or generate the space it is part of", function()
    local k = kernel(tuner)
    k:constraint({ "X" }, function() k:param("Y", { 1 }) return true end)
    assert.are.equal("constraint on X: calling 'param' on bad self (kernel k is in use: it "
      .. "cannot change while it is tuned or run, or while its space is generated)",
      (error_of(function() return k:space():count() end):gsub("constraint on X: [^:]*:%d+: ",
        "constraint on X: ")))
    local k2 = kernel(tuner)
    k2:constraint({ "X" }, function() return k2:space():count() > 0 end)
    assert.are.equal("constraint on X: the space is being generated: its constraints cannot "
      .. "change or generate it",
      (error_of(function() return k2:space():count() end):gsub("constraint on X: [^:]*:%d+: ",
        "constraint on X: ")))
  end)
end)
