-- Spaces too large to list: a budgeted random search samples the groups
-- that cannot be walked (core/space/space_lazy.c), draws without repeats under
-- a seed, and leaves every other space as it was. Memory and time are
-- measured in bench/space/sampled.lua, not here.
local kt = require "ktlua"

local tuner = kt.tuner()
local out = kt.array("float", 64)
local src = "__kernel void k(__global float *o) { o[get_global_id(0)] = A + B + C + D; }"

local function range(lo, hi)
  local t = {}
  for v = lo, hi do t[#t + 1] = v end
  return t
end

local function kernel(hi, constraints)
  local k = tuner:kernel{ source = src, name = "k", global = 64, args = { out:output() } }
  for _, p in ipairs { "A", "B", "C", "D" } do k:param(p, range(1, hi)) end
  for _, c in ipairs(constraints) do
    if type(c) == "table" then k:constraint(c[1], c[2]) else k:constraint(c) end
  end
  return k
end

local function configs(results)
  local t = {}
  for i, r in ipairs(results) do
    assert.are.equal("ok", r.status)
    t[i] = { r.config.A, r.config.B, r.config.C, r.config.D }
  end
  return t
end

-- Tuples of four values in 1..1000 whose sum is at most 2000: by the
-- symmetry x -> 1001 - x, half of those whose sum is not 2001 to 2003.
local function exact_count()
  local function pairs_summing(t) return math.max(0, math.min(t - 1, 2001 - t)) end
  local middle = 0
  for s = 2001, 2003 do
    for t = 2, s - 2 do middle = middle + pairs_summing(t) * pairs_summing(s - t) end
  end
  return (1000 ^ 4 - middle) / 2
end

describe("a space too large to list", function()
  local SUM = { "A + B + C + D <= 2000" }
  -- deciding that a group cannot be walked takes a walk of 2^24 steps:
  -- the tunings share one kernel, whose space stays sampled
  local big = kernel(1000, SUM)

  it("is tuned by a random search with a budget, valid, distinct and the same under a seed", function()
    local results = tuner:tune(big, { search = "random", stop = { count = 3 }, seed = 7 })
    assert.are.equal(3, #results)
    assert.are.equal("count", results.stopped)
    local got = configs(results)
    local seen = {}
    for i, c in ipairs(got) do
      assert.is_true(c[1] + c[2] + c[3] + c[4] <= 2000)
      local key = table.concat(c, ",")
      assert.is_nil(seen[key])
      seen[key] = true
      -- the index numbers the combination: A slowest, D fastest
      assert.are.equal((((c[1] - 1) * 1000 + c[2] - 1) * 1000 + c[3] - 1) * 1000 + c[4] - 1,
        results[i].index)
    end
    assert.are.equal(0, results:summary().space_valid) -- not counted
    local again = tuner:tune(big, { search = "random", stop = { count = 3 }, seed = 7 })
    assert.are.same(got, configs(again))
    local other = tuner:tune(big, { search = "random", stop = { count = 3 }, seed = 8 })
    assert.are_not.same(got, configs(other))
  end)

  it("is tuned within a time budget, and with a constraint written in Lua", function()
    local results = tuner:tune(big, { search = "random", stop = { seconds = 0.5 }, seed = 1 })
    assert.is_true(#results >= 1)
    for _, c in ipairs(configs(results)) do assert.is_true(c[1] + c[2] + c[3] + c[4] <= 2000) end
    -- the Lua constraint is complete early in the walk, so it is called less often than the expression
    local lua = { { { "A", "B" }, function(a, b) return a <= b end }, SUM[1] }
    results = tuner:tune(kernel(1000, lua), { search = "random", stop = { count = 2 }, seed = 3 })
    assert.are.equal(2, #results)
    for _, c in ipairs(configs(results)) do
      assert.is_true(c[1] <= c[2] and c[1] + c[2] + c[3] + c[4] <= 2000)
    end
  end)

  it("fails clearly where the constraints are too selective to sample", function()
    local k = kernel(1000, { "A + B + C + D <= 8" }) -- 70 of 10^12
    local ok, err = pcall(tuner.tune, tuner, k, { search = "random", stop = { count = 3 } })
    assert.is_false(ok)
    assert.are.equal("searcher random: 1000000 draws in a row broke the constraints on A, B, C, D "
      .. "(1e+12 combinations, too many to list): they are too selective to sample; narrow the "
      .. "parameters' values", err)
  end)

  it("needs the listed space for other searchers and without a budget", function()
    local k = kernel(1000, SUM)
    k:space():max_bytes(1 << 20) -- fail fast: the default limit is 1 GiB
    for _, opts in ipairs { { search = "bestfirst", stop = { count = 3 } },
                            { search = "random", stop = { count = 3, fraction = 0.5 } } } do
      local ok, err = pcall(tuner.tune, tuner, k, opts)
      assert.is_false(ok)
      assert.matches("the valid configurations of A, B, C, D (of 1e+12 combinations) take more than "
        .. "1048576 bytes", err, 1, true)
      assert.matches('search = "random" with a budget', err, 1, true)
    end
  end)

  it("is counted by an estimate, and exactly where it can be walked", function()
    local s = big:space()
    local n, exact = s:estimate{ seed = 1 }
    assert.is_false(exact)
    assert.is_true(math.abs(n - exact_count()) < 0.03 * exact_count())
    local small = kernel(30, { "A >= B", "C + D <= 20" }):space()
    assert.are.same({ 465 * 190, true }, { small:estimate() })
    assert.has_error(function() s:estimate{ draws = 0 } end,
      "bad argument #1 to 'estimate' (estimate.draws must be at least 1)")
    assert.has_error(function() s:estimate{ samples = 5 } end)
  end)
end)

describe("a space that can be listed", function()
  -- A divisor chain over 1..128: 2^28 combinations, more than the walk's
  -- limit of steps to decide on, but walked in fewer; and a small space.
  local CHAIN = { "A % B == 0", "(A + C) % D == 0", "B * D <= 96" }

  it("gives the same configurations under the same seed with a budget as without", function()
    for _, def in ipairs { { 128, CHAIN }, { 12, { "A >= B", "C > D" } } } do
      local budget = tuner:tune(kernel(def[1], def[2]), { search = "random", stop = { count = 4 }, seed = 5 })
      -- with a fraction, the space is listed as always
      local listed = tuner:tune(kernel(def[1], def[2]),
        { search = "random", stop = { count = 4, fraction = 1 }, seed = 5 })
      assert.are.same(configs(listed), configs(budget))
      assert.are.equal(listed:summary().space_valid, budget:summary().space_valid)
      assert.is_true(budget:summary().space_valid > 0)
    end
  end)
end)
