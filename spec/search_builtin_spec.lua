-- The built-in searchers on recorded spaces: reproducible under a seed,
-- budgets honoured exactly, the optimum found when the budget is the
-- whole space, and their options checked.
local kt = require "ktlua"

local FIXTURE = "spec/fixtures/small_cache.json"
local DATASET, WHY = require("spec.support.datasets").path("pnpoly_RTX_3090.json.gz")
local SEARCHERS = {"random", "greedy", "bestfirst", "annealing", "mcmc", "genetic", "differential",
                   "pso", "staged"}

local small, real = kt.replay(FIXTURE), DATASET and kt.replay(DATASET)

-- A spec on the recorded dataset: pending where the datasets are not (busted's
-- pending is the running test's only here, not in a module).
local function it_real(name, fn)
  it(name, function()
    if not real then return pending(WHY) end
    fn()
  end)
end

local indices = require("spec.support.replays").indices

local function run(rec, search, count)
  return rec:tune{search = search, stop = {count = count}}
end

describe("built-in searchers", function()
  it("are listed by kt.searchers", function()
    assert.equal("exhaustive, random, greedy, bestfirst, annealing, mcmc, genetic, differential, "
                 .. "pso, staged, model, portfolio, profile, forest", kt.searchers)
  end)

  for _, name in ipairs(SEARCHERS) do
    describe(name, function()
      it_real("gives identical results under the same seed", function()
        local a = run(real, {name, seed = 11}, 120)
        local b = run(real, {name, seed = 11}, 120)
        assert.same(indices(a), indices(b))
        assert.equal(a:best().index, b:best().index)
      end)

      it_real("takes the seed of the tune options too", function()
        local a = real:tune{search = name, seed = 11, stop = {count = 120}}
        assert.same(indices(run(real, {name, seed = 11}, 120)), indices(a))
      end)

      it_real("honours budgets exactly, a smaller budget giving a prefix of a larger one", function()
        local long = indices(run(real, {name, seed = 4}, 97))
        assert.equal(97, #long)
        for _, count in ipairs{1, 13, 50} do
          local short = indices(run(real, {name, seed = 4}, count))
          assert.equal(count, #short)
          assert.same({table.unpack(long, 1, count)}, short)
        end
      end)

      it_real("searches alike whatever the lookahead, so on any machine", function()
        -- one in flight (greedy, annealing, ...) or up to bestfirst's `ahead` (8): below 32
        local base = indices(real:tune{search = {name, seed = 6}, stop = {count = 150}})
        for _, lookahead in ipairs{name == "bestfirst" and 8 or 1, 9, 100} do
          assert.same(base, indices(real:tune{search = {name, seed = 6}, stop = {count = 150},
                                              lookahead = lookahead}), "lookahead " .. lookahead)
        end
      end)

      it_real("never proposes a configuration twice", function()
        local seen = {}
        for _, i in ipairs(indices(run(real, {name, seed = 2}, 300))) do
          assert.is_nil(seen[i])
          seen[i] = true
        end
      end)

      it("finds the optimum of a small recorded space given the whole space", function()
        for seed = 1, 5 do
          local results = run(small, {name, seed = seed}, small:count())
          assert.equal(22, #results)
          assert.equal(17, results:best().index)
          assert.equal(1.5, results:best().time_ms)
        end
      end)
    end)
  end

  it_real("differ under different seeds", function()
    for _, name in ipairs(SEARCHERS) do
      if name ~= "staged" then
        assert.are_not.same(indices(run(real, {name, seed = 1}, 40)), indices(run(real, {name, seed = 2}, 40)))
      end
    end
  end)

  it_real("do better than random search on a recorded space with a small budget", function()
    -- 5% of pnpoly on an RTX 3090; bench/searchers measures this properly
    local function mean(name)
      local sum = 0
      for seed = 1, 20 do sum = sum + real:score(run(real, {name, seed = seed}, 205), 205) end
      return sum / 20
    end
    assert.is_true(mean("bestfirst") > mean("random"))
  end)

  describe("staged", function()
    it("tunes one group at a time from configuration 0, keeping the best", function()
      local results = run(small, {"staged", stages = {{"block_x"}, {"block_y", "unroll"}}}, 9)
      -- block_x with the others at configuration 0's values, then block_y
      -- and unroll on the survivor (16, 1, 0)
      assert.same({0, 6, 12, 18, 2, 4, 1, 3, 5}, indices(results))
      assert.equal(0, results:best().index)
    end)

    it("keeps the best N between stages", function()
      local results = run(small, {"staged", stages = "block_x; block_y, unroll", keep = 2}, 14)
      assert.same({0, 6, 12, 18, 2, 4, 1, 3, 5, 14, 16, 13, 15, 17}, indices(results))
      assert.equal(17, results:best().index)
    end)

    it("keeps those within a tolerance of the best, each unnamed parameter a stage of its own", function()
      -- within 100% of 1.8 ms: all four values of block_x survive
      local results = run(small, {"staged", stages = {"block_x"}, tolerance = 1}, 11)
      assert.same({0, 6, 12, 18, 2, 4, 14, 16, 8, 10, 20}, indices(results))
    end)

    it("names an unknown parameter of its stages", function()
      assert.has_error(function() run(small, {"staged", stages = {{"block_x", "nope"}}}, 5) end,
        "searcher staged: stages names unknown parameter 'nope'")
      assert.has_error(function() run(small, {"staged", stages = "block_x;block_x"}, 5) end,
        "searcher staged: stages names parameter 'block_x' twice")
    end)
  end)

  describe("bestfirst", function()
    it_real("keeps up to `ahead` proposals in flight, one searching as with no lookahead", function()
      local one = indices(real:tune{search = {"bestfirst", seed = 5, ahead = 1}, stop = {count = 150}})
      assert.same(one, indices(real:tune{search = {"bestfirst", seed = 5}, stop = {count = 150},
                                         lookahead = 1}))
      -- without renew (on by default: it takes back what ahead 1 would not have proposed)
      assert.are_not.same(one, indices(real:tune{search = {"bestfirst", seed = 5, renew = 0},
                                                 stop = {count = 150}}))
      assert.has_error(function() real:tune{search = {"bestfirst", ahead = 0}} end)
    end)

    it_real("orders each parameter's new values by the pairwise model unless model = 0", function()
      local on = indices(run(real, {"bestfirst", seed = 5}, 150))
      assert.same(on, indices(run(real, {"bestfirst", seed = 5, model = 1}, 150)))
      local off = indices(run(real, {"bestfirst", seed = 5, model = 0}, 150))
      -- the same 16 random configurations begin both, then the orders differ
      assert.same({table.unpack(on, 1, 16)}, {table.unpack(off, 1, 16)})
      assert.are_not.same(on, off)
      assert.has_error(function() run(real, {"bestfirst", model = 2}, 1) end,
        "searcher 'bestfirst': option model must be in [0, 1], got 2")
    end)

    it("searches without the model where its tables would be too large", function()
      -- two parameters of 1,100 values: 1,210,000 pairs of values, over the
      -- model's limit (2^20); 60 recorded configurations
      local values, cache = {}, {}
      for i = 1, 1100 do values[i] = tostring(i) end
      for i = 0, 59 do -- a 10 x 6 grid, so that configurations have neighbours
        local x, y = i % 10 * 7 + 1, i // 10 * 13 + 1
        cache[#cache + 1] = ('"%d,%d": {"x": %d, "y": %d, "time": %g}'):format(x, y, x, y, 1 + (x * y) % 97 / 10)
      end
      local path = os.tmpname()
      local f = assert(io.open(path, "w"))
      f:write(('{"tune_params_keys": ["x", "y"], "tune_params": {"x": [%s], "y": [%s]}, "cache": {%s}}')
        :format(table.concat(values, ","), table.concat(values, ","), table.concat(cache, ",")))
      f:close()
      local wide = kt.replay(path)
      os.remove(path)
      local on = indices(run(wide, {"bestfirst", seed = 2}, 40))
      assert.equal(40, #on)
      assert.same(on, indices(run(wide, {"bestfirst", seed = 2, model = 0}, 40)))
    end)
  end)

  describe("genetic", function()
    it_real("takes its population as a fraction of the space and can stop when stagnant", function()
      local results = run(real, {"genetic", seed = 3, population = 0.005, stagnation = 2}, 4092)
      -- 21 members, of which the 2 fastest carry over to the next generation
      -- unevaluated; it ends after two generations without a faster one
      assert.equal("searcher finished", results.stopped)
      assert.equal(21 + 3 * 19, #results)
    end)
  end)

  describe("options", function()
    it("name an unknown searcher", function()
      assert.has_error(function() run(small, "nope", 1) end,
        "unknown searcher 'nope' (expected one of: exhaustive, random, greedy, bestfirst, annealing, "
        .. "mcmc, genetic, differential, pso, staged, model, portfolio, profile, forest)")
    end)

    it("name an unknown option and list the searcher's own", function()
      assert.has_error(function() run(small, {"annealing", beta = 1}, 1) end,
        "searcher 'annealing' has no option 'beta' (its options: t0, alpha, t_min, adjacent)")
    end)

    it_real("take true and false as 1 and 0", function()
      assert.same(indices(run(real, {"greedy", seed = 1, adjacent = 0, model = 1}, 60)),
        indices(run(real, {"greedy", seed = 1, adjacent = false, model = true}, 60)))
    end)

    it("check ranges and types", function()
      assert.has_error(function() run(small, {"mcmc", temperature = -1}, 1) end,
        "searcher 'mcmc': option temperature must be in [0, 1000000000], got -1")
      assert.has_error(function() run(small, {"annealing", alpha = 1}, 1) end,
        "searcher 'annealing': option alpha must be in [1e-09, 0.999999999], got 1")
      assert.has_error(function() run(small, {"genetic", elite = 0.5}, 1) end,
        "searcher 'genetic': option elite must be a whole number, got 0.5")
      assert.has_error(function() run(small, {"bestfirst", sample = 2.5}, 1) end,
        "searcher 'bestfirst': option sample must be a whole number (or below 1, a fraction of the space), got 2.5")
      assert.has_error(function() run(small, {"greedy", adjacent = 0.5}, 1) end,
        "searcher 'greedy': option adjacent must be a whole number, got 0.5")
      assert.equal(5, #run(small, {"bestfirst", sample = 0.25}, 5))
      assert.has_error(function() run(small, {"greedy", sample = "many"}, 1) end,
        "searcher 'greedy': option sample must be a number")
      assert.has_error(function() run(small, {"staged", stages = 3}, 1) end,
        "searcher 'staged': option stages must be text")
      assert.has_error(function() run(small, {"staged", stages = {{1}}}, 1) end,
        "search.stages[1][1]: expected a parameter name")
    end)
  end)
end)
