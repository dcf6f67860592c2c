-- Value generators for parameters: kt.divisors, kt.pow2, kt.multiples.
local kt = require "ktlua"

describe("value generators", function()
  it("list the divisors of n in ascending order", function()
    assert.are.same({ 1, 2, 3, 4, 6, 8, 12, 16, 24, 48 }, kt.divisors(48))
    assert.are.same({ 1, 2, 4, 8, 16 }, kt.divisors(16))
    assert.are.same({ 1 }, kt.divisors(1))
    assert.are.same({ 1, 97 }, kt.divisors(97))
  end)

  it("list the powers of two in a range", function()
    assert.are.same({ 4, 8, 16, 32, 64 }, kt.pow2(3, 100))
    assert.are.same({ 1, 2, 4 }, kt.pow2(1, 4))
    assert.are.same({ 1024 }, kt.pow2(1024, 1024))
    assert.are.equal(63, #kt.pow2(1, math.maxinteger))
  end)

  it("list the multiples of k in a range", function()
    assert.are.same({ 32, 64, 96, 128 }, kt.multiples(32, 1, 128))
    assert.are.same({ 6, 9, 12 }, kt.multiples(3, 5, 13))
    assert.are.same({ 7 }, kt.multiples(7, 7, 7))
  end)

  it("are the functions of the ktlua.values module", function()
    local values = require "ktlua.values"
    assert.are.equal(values.divisors, kt.divisors)
    assert.are.equal(values.pow2, kt.pow2)
    assert.are.equal(values.multiples, kt.multiples)
  end)

  it("feed parameters directly", function()
    local tuner = kt.tuner()
    local k = tuner:kernel{ source = "__kernel void k(__global float *a) {}", name = "k", global = 64 }
    k:param("WG", kt.pow2(1, 64))
    k:param("TILE", kt.divisors(64))
    k:constraint("TILE % WG == 0")
    -- pairs (2^a, 2^b) with a <= b <= 6: 7 + 6 + ... + 1
    assert.are.equal(28, k:space():count())
  end)

  it("reject arguments that are not positive integers, and empty ranges", function()
    assert.has_error(function() kt.divisors(0) end,
      "bad argument #1 to 'divisors' (positive integer expected, got 0)")
    assert.has_error(function() kt.divisors(2.5) end,
      "bad argument #1 to 'divisors' (positive integer expected, got 2.5)")
    assert.has_error(function() kt.pow2(1, "8") end,
      "bad argument #2 to 'pow2' (positive integer expected, got string)")
    assert.has_error(function() kt.multiples(4, 1, -3) end,
      "bad argument #3 to 'multiples' (positive integer expected, got -3)")
    local ok, err = pcall(kt.pow2, 3, 3)
    assert.is_false(ok)
    assert.matches("space_values_spec.lua:%d+: pow2: no power of two from 3 to 3$", err)
    ok, err = pcall(kt.multiples, 10, 1, 9)
    assert.matches("multiples: no multiple of 10 from 1 to 9$", err)
  end)
end)
