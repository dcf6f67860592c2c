-- The tuning space: parameters, constraints, pruned generation, indexing.
local kt = require "ktlua"

local tuner = kt.tuner()
local src = "__kernel void k(__global float *a) { a[get_global_id(0)] = 0; }"
local function kernel() return tuner:kernel{ source = src, name = "k", global = 64 } end

describe("a space", function()
  it("counts configurations before and after constraints", function()
    local k = kernel()
    k:param("A", { 1, 2, 3, 4 })
    k:param("B", { 1, 2, 4, 8 })
    k:param("C", { "x", "y" })
    k:constraint({ "A", "B" }, function(a, b) return a <= b end)
    local s = k:space()
    assert.are.equal(32, s:count_all())
    -- pairs with a <= b: a=1: 4, a=2: 3, a=3: 2, a=4: 2 -> 11, times 2 for C
    assert.are.equal(22, s:count())
    assert.are.equal(22, #s)
  end)

  it("checks a constraint as soon as its parameters are bound", function()
    local k = kernel()
    local calls = 0
    k:param("A", { 1, 2, 3, 4, 5, 6, 7, 8 })
    k:param("B", { 1, 2, 3, 4, 5, 6, 7, 8 })
    for i = 1, 6 do k:param("P" .. i, { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }) end
    k:constraint({ "A", "B" }, function(a, b) calls = calls + 1; return a * b == 8 end)
    -- 10^6 unconstrained combinations times 64 never go through the constraint
    assert.are.equal(4 * 10 ^ 6, k:space():count())
    assert.are.equal(64, calls)
  end)

  it("prunes a partial assignment before binding the rest of its group", function()
    local k = kernel()
    local calls = { ab = 0, bc = 0 }
    k:param("A", { 1, 2, 3, 4 })
    k:param("B", { 1, 2, 3, 4 })
    k:param("C", { 1, 2, 3, 4 })
    k:constraint({ "A", "B" }, function(a, b) calls.ab = calls.ab + 1; return a == b end)
    k:constraint({ "B", "C" }, function(b, c) calls.bc = calls.bc + 1; return b == c end)
    assert.are.equal(4, k:space():count())
    assert.are.equal(16, calls.ab)
    -- C is only tried under the 4 surviving (A, B) pairs
    assert.are.equal(16, calls.bc)
  end)

  it("maps every index to a configuration and back", function()
    local k = kernel()
    k:param("WG", { 32, 64, 128 })
    k:param("VEC", { 1, 2, 4 })
    k:param("MODE", { "fast", "safe" })
    k:param("F", { 0.5, 1.5 })
    k:constraint({ "WG", "VEC" }, function(wg, vec) return wg * vec <= 256 end)
    local s = k:space()
    local seen = {}
    for i, cfg in s:configs() do
      assert.are.equal(i, s:index(cfg))
      local key = ("%d/%d/%s/%g"):format(cfg.WG, cfg.VEC, cfg.MODE, cfg.F)
      assert.is_nil(seen[key])
      seen[key] = true
      assert.is_true(cfg.WG * cfg.VEC <= 256)
    end
    assert.are.equal(8 * 2 * 2, s:count())
    assert.is_nil(s:index{ WG = 128, VEC = 4, MODE = "fast", F = 0.5 })
  end)

  it("orders configurations with the first parameter varying slowest", function()
    local k = kernel()
    k:param("A", { 1, 2 })
    k:param("B", { 10, 20, 30 })
    local s = k:space()
    local order = {}
    for _, cfg in s:configs() do order[#order + 1] = cfg.A .. ":" .. cfg.B end
    assert.are.same({ "1:10", "1:20", "1:30", "2:10", "2:20", "2:30" }, order)
  end)

  it("keeps the value types of parameters", function()
    local k = kernel()
    k:param("I", { 1, 2 })
    k:param("F", { 0.25 })
    k:param("S", { "float", "double" })
    local cfg = k:space():config(0)
    assert.are.equal("integer", math.type(cfg.I))
    assert.are.equal("float", math.type(cfg.F))
    assert.are.equal("float", cfg.S)
    assert.are.same({ { name = "I", values = { 1, 2 } }, { name = "F", values = { 0.25 } },
                      { name = "S", values = { "float", "double" } } }, k:space():params())
  end)

  it("has one empty configuration without parameters", function()
    local s = kernel():space()
    assert.are.equal(1, s:count())
    assert.are.same({}, s:config(0))
  end)

  it("reports a constraint that nothing satisfies as an empty space", function()
    local k = kernel()
    k:param("A", { 1, 2 })
    k:constraint({ "A" }, function() return false end)
    assert.are.equal(0, k:space():count())
    assert.has_error(function() tuner:tune(k) end, "task k: no configuration satisfies the constraints")
  end)

  it("rejects bad parameters and constraints with clear errors", function()
    local k = kernel()
    assert.has_error(function() k:param("1A", { 1 }) end,
      "parameter name '1A' is not a valid identifier (letters, digits, '_')")
    assert.has_error(function() k:param("A", {}) end)
    assert.has_error(function() k:param("A", { 1, 1 }) end, "parameter 'A' lists the value 1 twice")
    assert.has_error(function() k:param("A", { print }) end,
      "bad argument #2 to 'param' (value 1 is a function; parameter values are numbers, strings or booleans)")
    k:param("A", { 1 })
    assert.has_error(function() k:param("A", { 2 }) end, "parameter 'A' is already defined")
    assert.has_error(function() k:constraint({ "A", "Z" }, function() return true end) end,
      "constraint names unknown parameter 'Z'")
    assert.has_error(function() k:space():config(5) end)
    local none, why = k:space():index{ A = 3 }
    assert.is_nil(none)
    assert.are.equal("A = 3 is not one of its values (1)", why)
    assert.has_error(function() k:space():index(3) end)
    assert.has_error(function() k:space():index{} end, "configuration has no value for parameter A")
    assert.has_error(function() k:space():index{ A = 1, Z = 2 } end,
      'configuration names unknown parameter "Z"')
  end)

  it("stops on a Lua error in a constraint with the script's file and line", function()
    local k = kernel()
    k:param("A", { 1, 2 })
    k:constraint({ "A" }, function(a) return a < nil end)
    local ok, err = pcall(function() return k:space():count() end)
    assert.is_false(ok)
    assert.matches("constraint on A: spec/space_spec.lua:%d+: attempt to compare", err)
  end)
end)
