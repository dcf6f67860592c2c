-- Validation against a reference computed once.
local kt = require "ktlua"

local tuner = kt.tuner()
local n = 64

-- c[i] = i * SCALE + OFFSET, so that each configuration's error is known.
local src = "__kernel void lin(__global float *c) { int i = get_global_id(0); c[i] = i * SCALE + OFFSET; }"

local function lin()
  local c = kt.array("float", n)
  local k = tuner:kernel{ source = src, name = "lin", global = n, args = { c:output() } }
  return k, c
end

local function statuses(results)
  local s = {}
  for i = 1, #results do s[i] = results[i].status end
  return s
end

describe("validation", function()
  it("compares with a reference function computed once", function()
    local k, c = lin()
    k:param("SCALE", { 1, 2 })
    k:param("OFFSET", { 0, 0.00001, 1 })
    local calls = 0
    k:reference(c, function(ref)
      calls = calls + 1
      for i = 0, n - 1 do ref[i] = i end
    end)
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.equal(1, calls)
    assert.are.same({ "ok", "ok", "invalid_output", "invalid_output", "invalid_output", "invalid_output" },
      statuses(r))
    assert.are.equal(1, r:best().config.SCALE)
    assert.are_not.equal(1, r:best().config.OFFSET)
    assert.matches("element 0: got 1, expected 0 %(absolute difference 1 > tolerance 0.0001%); 64 of 64 elements differ",
      r[3].error)
  end)

  it("never chooses a wrong configuration as the best, however fast", function()
    local k, c = lin()
    k:param("SCALE", { 1, 0 })
    k:param("OFFSET", { 0 })
    k:reference(c, function(ref) for i = 0, n - 1 do ref[i] = i end end)
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.equal("invalid_output", r[2].status)
    assert.is_nil(r[2].time_ms)
    assert.are.equal(0, r:best().index)
  end)

  it("takes a reference array or a reference kernel run with a given configuration", function()
    local k, c = lin()
    k:param("SCALE", { 2, 3 })
    k:param("OFFSET", { 0 })
    local given = kt.array("float", n):fill(function(i) return 3 * i end)
    k:reference(c, given)
    assert.are.same({ "invalid_output", "ok" }, statuses(tuner:tune(k, { repeats = 1 })))
    local ref = tuner:kernel{ source = src, name = "lin", global = n, args = { c:output() } }
    ref:param("SCALE", { 1, 2, 3 })
    ref:param("OFFSET", { 0 })
    k:reference(c, { kernel = ref, config = { SCALE = 2, OFFSET = 0 } })
    assert.are.same({ "ok", "invalid_output" }, statuses(tuner:tune(k, { repeats = 1 })))
  end)

  it("uses absolute, relative or summed differences with a tolerance", function()
    local k, c = lin()
    k:param("SCALE", { 1 })
    k:param("OFFSET", { 0.5 })
    local function with(opts)
      k:reference(c, function(ref) for i = 0, n - 1 do ref[i] = i end end, opts)
      return tuner:tune(k, { repeats = 1 })[1]
    end
    assert.are.equal("invalid_output", with{ method = "absolute", tolerance = 0.4 }.status)
    assert.are.equal("ok", with{ method = "absolute", tolerance = 0.5 }.status)
    -- relative: 0.5 / i > 0.01 for i = 1..49, and i = 0 compares absolutely
    local r = with{ method = "relative", tolerance = 0.01 }
    assert.are.equal("invalid_output", r.status)
    assert.matches("50 of 64 elements differ", r.error)
    assert.are.equal("ok", with{ method = "sum", tolerance = 32 }.status)
    r = with{ method = "sum", tolerance = 31.9 }
    assert.are.equal("invalid_output", r.status)
    assert.matches("sum of absolute differences 32 > tolerance 31.9", r.error)
  end)

  it("can check only the first elements", function()
    local k, c = lin()
    k:param("SCALE", { 1 })
    k:param("OFFSET", { 0 })
    k:reference(c, function(ref) for i = 0, 9 do ref[i] = i end end, { first = 10 })
    assert.are.equal("ok", tuner:tune(k, { repeats = 1 })[1].status)
  end)

  it("calls a custom comparator", function()
    local k, c = lin()
    k:param("SCALE", { 1, 2 })
    k:param("OFFSET", { 0 })
    k:reference(c, function() end, { compare = function(got, expected)
      if got[n - 1] == n - 1 then return true end
      return false, ("last element is %g"):format(got[n - 1])
    end })
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.same({ "ok", "invalid_output" }, statuses(r))
    assert.are.equal("last element is 126", r[2].error)
  end)

  it("needs a comparator for struct outputs", function()
    local pair = kt.struct("pair", { { "a", "int" }, { "b", "float" } })
    local out = kt.array(pair, 4)
    local k = tuner:kernel{ source = [[typedef struct { int a; float b; } pair;
      __kernel void p(__global pair *o) { int i = get_global_id(0); o[i].a = i; o[i].b = i * 0.5f; }]],
      name = "p", global = 4, args = { out:output() } }
    assert.has_error(function() k:reference(out, function() end) end)
    k:reference(out, function(ref) for i = 0, 3 do ref[i] = { a = i, b = i * 0.5 } end end, {
      compare = function(got, expected)
        for i = 0, 3 do
          if got[i].a ~= expected[i].a or got[i].b ~= expected[i].b then return false end
        end
        return true
      end })
    assert.are.equal("ok", tuner:tune(k, { repeats = 1 })[1].status)
  end)

  it("stops on a Lua error in the reference with the script's file and line", function()
    local k, c = lin()
    k:param("SCALE", { 1 })
    k:param("OFFSET", { 0 })
    k:reference(c, function(ref) ref[n] = 1 end)
    local ok, err = pcall(tuner.tune, tuner, k)
    assert.is_false(ok)
    assert.matches("reference for output 1 of task lin: spec/validate_spec.lua:%d+: array index 64 out of range", err)
  end)

  it("rejects a reference of the wrong shape or options", function()
    local k, c = lin()
    k:param("SCALE", { 1 })
    k:param("OFFSET", { 0 })
    k:reference(c, kt.array("float", 3))
    assert.has_error(function() tuner:tune(k) end,
      "reference for output 1 of task lin: the reference is float[3] but the output is float[64]")
    assert.has_error(function() k:reference(c, function() end, { method = "closest" }) end)
    assert.has_error(function() k:reference(c, function() end, { tolerance = -1 }) end)
    assert.has_error(function() k:reference(c, 5) end)
  end)
end)
