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
    local ok, err = pcall(function() kt.pow2(3, 3) end) -- the caller's position
    assert.is_false(ok)
    assert.matches("space_values_spec.lua:%d+: pow2: no power of two from 3 to 3$", err)
    ok, err = pcall(function() kt.multiples(10, 1, 9) end)
    assert.matches("space_values_spec.lua:%d+: multiples: no multiple of 10 from 1 to 9$", err)
  end)

  it("refuse ranges that would overflow or make lists without end, saying how long", function()
    local max = math.maxinteger
    assert.has_error(function() kt.multiples(60, max, max) end,
      "multiples: no multiple of 60 from 9223372036854775807 to 9223372036854775807")
    assert.are.same({ max }, kt.multiples(max, 1, max))
    assert.are.same({ max - 7 }, kt.multiples(8, max - 8, max)) -- 2^63 - 8
    assert.has_error(function() kt.multiples(60, 1, max) end,
      "multiples: 1 to 9223372036854775807 holds 153722867280912930 multiples of 60, more " ..
      "than a list takes (1048576)")
    assert.are.equal(1 << 20, #kt.multiples(1, 1, 1 << 20))
    assert.has_error(function() kt.multiples(1, 1, (1 << 20) + 1) end,
      "multiples: 1 to 1048577 holds 1048577 multiples of 1, more than a list takes (1048576)")
    assert.has_error(function() kt.pow2((1 << 62) + 1, max) end,
      "pow2: no power of two from 4611686018427387905 to 9223372036854775807")
    assert.are.same({ 1 << 62 }, kt.pow2(1 << 62, max))
  end)

  it("factor large numbers, up to what trial division does in a tenth of a second", function()
    local d = kt.divisors(math.maxinteger) -- 7^2 * 73 * 127 * 337 * 92737 * 649657
    assert.are.equal(96, #d)
    assert.are.same({ 1, 7, 49, 73 }, { d[1], d[2], d[3], d[4] })
    assert.are.equal(math.maxinteger, d[96])
    assert.are.same({ 1, 2351, 4513, 10610063, 13264529, 31184907679, 59862819377,
      140737488355327 }, kt.divisors((1 << 47) - 1))
    assert.are.equal(6720, #kt.divisors(963761198400)) -- highly composite
    assert.are.same({ 1, 281474976710597 }, kt.divisors(281474976710597)) -- the prime below 2^48
    assert.has_error(function() kt.divisors(2305843009213693951) end, -- 2^61 - 1, a prime
      "divisors: 2305843009213693951 is too large to factor: it keeps a part " ..
      "2305843009213693951 with no factor up to 16777216")
  end)

  it("feed parameters of a million values, checked for repeats in n log n", function()
    local tuner = kt.tuner()
    local k = tuner:kernel{ source = "__kernel void k(__global float *a) {}", name = "k", global = 64 }
    local values = kt.multiples(1, 1, 1 << 20)
    k:param("X", values)
    values[#values + 1] = 77.0
    assert.has_error(function() k:param("Y", values) end, "parameter 'Y' lists the value 77.0 twice")
    assert.has_error(function() k:param("Z", { "a", 1, 0 / 0, 0 / 0, 2, "b", 1.0 }) end,
      "parameter 'Z' lists the value 1.0 twice")
    assert.has_error(function() k:param("W", { (1 << 53) + 1, 2.0 ^ 53, 1 << 53 }) end,
      "parameter 'W' lists the value 9007199254740992.0 twice")
    k:param("V", { (1 << 53) + 1, 1 << 53, "x", 0 / 0, 0 / 0 }) -- NaN is never equal
    assert.are.equal(5, #k:space():params()[2].values)
  end)
end)
