-- Results that can be trusted: a tuning that ran nothing writes nothing,
-- nothing that did not run is recorded, files that contradict themselves
-- are refused, numbers that become integers are range-checked, and sizes
-- no device can launch are refused before launch.
local kt = require "ktlua"
local files = require "spec.support.files"

local tuner = kt.tuner()

-- c[i] = i + V over 16 items, V from 0 to 5.
local function counter(values)
  local c = kt.array("float", 16)
  local k = tuner:kernel{ name = "count", global = 16, args = { c:output() }, source =
    "__kernel void count(__global float *c) { int i = get_global_id(0); c[i] = i + V; }" }
  k:param("V", values or { 0, 1, 2, 3, 4, 5 })
  return k, c
end

-- Output files that hold a whole tuning's results already.
local function outputs()
  local json, csv = files.tmpname(".json"), files.tmpname(".csv")
  local r = tuner:tune(counter(), { search = "exhaustive", repeats = 1, output = { json, csv } })
  assert.are.equal(6, #r)
  return { json, csv }, { files.read(json), files.read(csv) }
end

local function unchanged(paths, texts)
  for i, path in ipairs(paths) do
    assert.are.equal(texts[i], files.read(path))
    os.remove(path)
  end
end

describe("a tuning refused before its first configuration", function()
  it("leaves its output files as they were when its journal is locked by another tuning", function()
    local paths, texts = outputs()
    local journal = files.tmpname(".jsonl")
    local other, err = kt.tuner(), nil
    local k = counter()
    tuner:tune(k, { repeats = 1, journal = journal, stop = { count = 2 }, progress = function()
      if err then return end
      local ok, e = pcall(other.tune, other, counter(), { journal = journal, output = paths })
      assert.is_false(ok)
      err = e
    end })
    assert.matches("the journal .* is in use by another tuning", err)
    unchanged(paths, texts)
    os.remove(journal)
  end)

  it("leaves them as they were when resuming is refused because the kernel changed", function()
    local paths, texts = outputs()
    local journal = files.tmpname(".jsonl")
    tuner:tune(counter(), { repeats = 1, journal = journal, stop = { count = 2 } })
    local k = counter({ 0, 1, 2, 3, 4, 6 })
    local ok, err = pcall(tuner.tune, tuner, k, { journal = journal, resume = true, output = paths })
    assert.is_false(ok)
    assert.matches("cannot resume from .*: its parameters and values differ", err)
    unchanged(paths, texts)
    os.remove(journal)
  end)

  it("leaves them as they were on bad options, an empty space or a failed set-up", function()
    local paths, texts = outputs()
    assert.has_error(function() tuner:tune(counter(), { output = paths, search = "nope" }) end)
    local k = counter()
    k:constraint("V > 9")
    assert.has_error(function() tuner:tune(k, { output = paths }) end,
      "task count: no configuration satisfies the constraints")
    local k2, c = counter()
    k2:reference(c, function() error("no reference today") end)
    local ok, err = pcall(tuner.tune, tuner, k2, { output = paths })
    assert.is_false(ok)
    assert.matches("reference for output 1 of task count: .*no reference today", err)
    unchanged(paths, texts)
  end)

  it("creates no output file", function()
    local k, c = counter()
    k:reference(c, function() error("no reference today") end)
    local path = files.tmpname(".json")
    assert.has_error(function() tuner:tune(k, { output = path }) end)
    assert.is_false(files.exists(path))
  end)
end)

describe("a configuration that did not run", function()
  it("is not recorded when the reference raises, in the journal or anywhere", function()
    local k, c = counter()
    k:reference(c, function() error("no reference today") end)
    local journal = files.tmpname(".jsonl")
    assert.has_error(function() tuner:tune(k, { journal = journal }) end)
    assert.are.equal(1, #files.lines(journal)) -- the header alone
    assert.are.equal(0, #kt.load(journal))
    os.remove(journal)
  end)

  it("is not taken for the best by an online tuning whose step failed", function()
    local k, c = counter()
    local fail = true
    k:reference(c, function(ref)
      if fail then error("no reference today") end
      for i = 0, 15 do ref[i] = i + 1 end
    end)
    local on = tuner:online(k, { search = "exhaustive", validate = true })
    local ok, err = pcall(on.step, on)
    assert.is_false(ok)
    assert.matches("no reference today", err)
    assert.are.equal(0, #on:results())
    assert.is_nil(on:results():best())
    fail = false
    local step = on:step() -- the search goes on after the configuration it proposed
    assert.are.same({ "ok", 1 }, { step.status, step.config.V })
    assert.are.equal(1, #on:results())
    assert.are.equal(1, on:results():best().config.V)
  end)

  it("that failed like the ones before it is kept when the tuning stops for that", function()
    local o = kt.array("int", 16)
    local k = tuner:kernel{ name = "f", global = 16, args = { o:output() },
      source = "__kernel void f(__global int *o) { o[get_global_id(0)] = undeclared; }" }
    k:param("A", { 1, 2, 3, 4, 5, 6 })
    local journal, out = files.tmpname(".jsonl"), files.tmpname(".json")
    local ok, err = pcall(tuner.tune, tuner, k, { fail_fast = 3, journal = journal, output = out })
    assert.is_false(ok)
    assert.matches("the first 3 configurations all failed the same way", err)
    for _, path in ipairs({ journal, out }) do
      local r = kt.load(path)
      assert.are.equal(3, #r)
      assert.are.equal(3, r:summary().statuses.compile_failed)
      os.remove(path)
    end
  end)
end)
