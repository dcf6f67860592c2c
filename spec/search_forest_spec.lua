-- The forest searcher (core/search/search_forest.c, core/models/forest.c): search guided by
-- a random forest fitted to what the tuning has measured, on recorded spaces and on a device.
local kt = require "ktlua"
local files = require "spec.support.files"

local small = kt.replay("spec/fixtures/small_cache.json") -- 22 configurations, 2 failed (4, 21)
local DATASET, WHY = require("spec.support.datasets").path("pnpoly_RTX_3090.json.gz")
local real = DATASET and kt.replay(DATASET)

local function it_real(name, fn)
  it(name, function()
    if not real then return pending(WHY) end
    fn()
  end)
end

local indices = require("spec.support.replays").indices
local each_once = require("spec.support.replays").each_once

local function run(rec, search, count, lookahead)
  return rec:tune{search = search, stop = {count = count}, lookahead = lookahead}
end

-- A Kernel Tuner cache of X, Y in 0..7 and Z in 0..3 (256 configurations) whose half with
-- X >= 4 fails to compile; the time is least at X = 2, Y = 5, Z = 0.
local function half_failing()
  local entries = {}
  for x = 0, 7 do for y = 0, 7 do for z = 0, 3 do
    local t = x >= 4 and '"CompilationFailedConfig"'
      or ("%.4f"):format(1 + 0.1 * (x - 2) ^ 2 + 0.05 * (y - 5) ^ 2 + 0.01 * z)
    entries[#entries + 1] = ('"%d,%d,%d": {"X": %d, "Y": %d, "Z": %d, "time": %s}'):format(x, y, z, x, y, z, t)
  end end end
  local path = files.tmpname(".json")
  files.write(path, '{"tune_params_keys": ["X", "Y", "Z"], "tune_params": {"X": [0, 1, 2, 3, 4, 5, 6, 7], '
    .. '"Y": [0, 1, 2, 3, 4, 5, 6, 7], "Z": [0, 1, 2, 3]}, "objective": "time", "cache": {'
    .. table.concat(entries, ", ") .. "}}")
  local rec = kt.replay(path)
  os.remove(path)
  return rec
end

describe("forest searcher", function()
  it("is listed by kt.searchers", function()
    assert.truthy(kt.searchers:find("forest", 1, true))
  end)

  it("makes exactly these proposals under a seed on a small space", function()
    -- 8 random configurations, then the forest's: 16, 4 (it fails: a neighbour of the
    -- best at 1.8 ms), then the optimum (17, 1.5 ms)
    local results = run(small, {"forest", seed = 3}, 12)
    assert.same({12, 21, 19, 14, 10, 9, 2, 13, 16, 4, 17, 5}, indices(results))
    assert.equal(17, results:best().index)
    -- with a sample of 4 the forest proposes from the fifth on
    assert.same({12, 21, 19, 14, 2, 3, 20, 8, 16, 4, 10, 17},
                indices(run(small, {"forest", seed = 3, sample = 4}, 12)))
    -- with apart = 0 the second configuration whose neighbours it lists is the second best
    -- wherever it is, not the best one at least 4 parameters from the best: other proposals
    assert.same({12, 21, 19, 14, 2, 3, 20, 8, 16, 4, 11, 10},
                indices(run(small, {"forest", seed = 3, sample = 4, apart = 0}, 12)))
  end)

  it("tries every configuration once, failed ones included, given the whole space", function()
    local results = run(small, {"forest", seed = 3}, 30)
    assert.equal(22, #results)
    assert.equal(2, each_once(results))
    assert.equal(17, results:best().index)
    assert.equal("space explored", results.stopped)
  end)

  it("finds the optimum of the small space under every seed", function()
    for seed = 1, 5 do
      assert.equal(17, run(small, {"forest", seed = seed}, 22):best().index)
    end
  end)

  it("learns where configurations fail and proposes few of them after its sample", function()
    local rec = half_failing()
    local function failed_after_sample(search)
      local results, n = run(rec, search, 40), 0
      for i = 9, 40 do n = n + (results[i].status == "ok" and 0 or 1) end
      return n, results
    end
    -- random search fails about half the time; the forest, having seen 8 random
    -- configurations, hardly ever
    local forest, results = failed_after_sample({"forest", seed = 1})
    assert.equal(4, forest)
    assert.equal(18, (failed_after_sample({"random", seed = 1})))
    assert.equal(1.0, rec:score(results)) -- and it finds the optimum
  end)

  it_real("honours budgets exactly, a smaller budget giving a prefix of a larger one", function()
    local long = indices(run(real, {"forest", seed = 4}, 97))
    assert.equal(97, #long)
    for _, count in ipairs{1, 13, 50} do
      assert.same({table.unpack(long, 1, count)}, indices(run(real, {"forest", seed = 4}, count)))
    end
  end)

  it_real("evaluates the same configurations whatever ahead and the lookahead", function()
    -- proposals not yet evaluated are taken back after each result and chosen again
    local base = indices(run(real, {"forest", seed = 6}, 150))
    for _, lookahead in ipairs{1, 9, 100} do
      assert.same(base, indices(run(real, {"forest", seed = 6}, 150, lookahead)), "lookahead " .. lookahead)
    end
    for _, ahead in ipairs{1, 3, 32} do
      assert.same(base, indices(run(real, {"forest", seed = 6, ahead = ahead}, 150)), "ahead " .. ahead)
    end
  end)

  it_real("never proposes a configuration twice, and differs under different seeds", function()
    local seen = {}
    for _, i in ipairs(indices(run(real, {"forest", seed = 2}, 300))) do
      assert.is_nil(seen[i])
      seen[i] = true
    end
    assert.are_not.same(indices(run(real, {"forest", seed = 1}, 40)), indices(run(real, {"forest", seed = 2}, 40)))
  end)

  it_real("finds more than random search with a small budget", function()
    -- 5% of pnpoly on an RTX 3090; bench/searchers/lofo.lua measures this properly
    local function mean(name)
      local sum = 0
      for seed = 1, 10 do sum = sum + real:score(run(real, {name, seed = seed}, 205), 205) end
      return sum / 10
    end
    assert.is_true(mean("forest") > mean("random"))
  end)

  it("checks its options, naming the offending one", function()
    assert.has_error(function() run(small, {"forest", trees = 0}, 1) end,
      "searcher 'forest': option trees must be in [1, 256], got 0")
    assert.has_error(function() run(small, {"forest", top = 1.5}, 1) end,
      "searcher 'forest': option top must be a whole number, got 1.5")
    assert.has_error(function() run(small, {"forest", top = 65}, 1) end,
      "searcher 'forest': option top must be in [0, 64], got 65")
    assert.has_error(function() run(small, {"forest", apart = -1}, 1) end,
      "searcher 'forest': option apart must be in [0, 1000000], got -1")
    assert.has_error(function() run(small, {"forest", explore = 2}, 1) end,
      "searcher 'forest': option explore must be in [0, 1], got 2")
    assert.has_error(function() run(small, {"forest", clip = 0}, 1) end,
      "searcher 'forest': option clip must be in [1e-09, 1], got 0")
    assert.has_error(function() run(small, {"forest", kappa = "big"}, 1) end,
      "searcher 'forest': option kappa must be a number")
    assert.has_error(function() run(small, {"forest", depth = 3}, 1) end,
      "searcher 'forest' has no option 'depth' (its options: sample, trees, leaf, top, apart, pairs, "
      .. "pool, explore, kappa, refit, clip, ahead, trust)")
  end)
end)

-- A Kernel Tuner cache of A, B, C, D in 0..7 (4,096 configurations) whose time is least at
-- A = 6, B = 1, C = 5, D = 2 (1 ms); 5 configurations take 1.06 ms or less.
local function quadratic()
  local entries = {}
  for a = 0, 7 do for b = 0, 7 do for c = 0, 7 do for d = 0, 7 do
    local t = 1 + 0.2 * (a - 6) ^ 2 + 0.2 * (b - 1) ^ 2 + 0.1 * (c - 5) ^ 2 + 0.05 * (d - 2) ^ 2
    entries[#entries + 1] = ('"%d,%d,%d,%d": {"A": %d, "B": %d, "C": %d, "D": %d, "time": %.4f}')
      :format(a, b, c, d, a, b, c, d, t)
  end end end end
  local path, v = files.tmpname(".json"), "[0, 1, 2, 3, 4, 5, 6, 7]"
  files.write(path, '{"tune_params_keys": ["A", "B", "C", "D"], "tune_params": {"A": ' .. v .. ', "B": '
    .. v .. ', "C": ' .. v .. ', "D": ' .. v .. '}, "objective": "time", "cache": {'
    .. table.concat(entries, ", ") .. "}}")
  local rec = kt.replay(path)
  os.remove(path)
  return rec
end

describe("forest searcher with a prior", function()
  local prior = {{config = {block_x = 128, block_y = 4}, weight = 1}} -- unroll left out

  it("makes exactly these proposals under a seed, and without trust those of no prior", function()
    -- its sample guessed from the prior: 16, 21 and 19 are block_x = 128 (4 of the 22 are)
    assert.same({16, 21, 19, 18, 10, 11, 20, 4, 17, 5, 13, 15},
                indices(small:tune{search = {"forest", seed = 3}, prior = prior, stop = {count = 12}}))
    assert.same({12, 21, 19, 14, 10, 9, 2, 13, 16, 4, 17, 5},
                indices(small:tune{search = {"forest", seed = 3, trust = 0}, prior = prior, stop = {count = 12}}))
  end)

  it("finds the prior's fast region in fewer evaluations", function()
    local rec = quadratic()
    -- the prior says A = 6, B = 1, C = 4 (D left out) and, less surely, A = 5, B = 1, D = 2
    local told = {{config = {A = 6, B = 1, C = 4}, weight = 2}, {config = {A = 5, B = 1, D = 2}, weight = 1}}
    local function until_fast(r)
      for i = 1, #r do if r[i].time_ms <= 1.06 then return i end end
      return #r + 1
    end
    local with, without = 0, 0
    for seed = 1, 10 do
      with = with + until_fast(rec:tune{search = {"forest", seed = seed}, prior = told, stop = {count = 60}})
      without = without + until_fast(rec:tune{search = {"forest", seed = seed}, stop = {count = 60}})
    end
    assert.same({221, 311}, {with, without}) -- evaluations, summed over the 10 seeds
    -- its first configuration, guessed, says more of the prior's values than a random one
    local said = 0
    for seed = 1, 10 do
      local c = rec:tune{search = {"forest", seed = seed}, prior = told, stop = {count = 1}}[1].config
      said = said + (c.A == 6 and 1 or 0) + (c.B == 1 and 1 or 0) + (c.C == 4 and 1 or 0)
    end
    assert.is_true(said >= 20, said .. " of 30 values as the prior's first configuration says")
  end)

  it_real("evaluates the same configurations whatever ahead and the lookahead", function()
    local told = {}
    for i, r in ipairs(real:tune{search = {"forest", seed = 9}, stop = {count = 60}}:list()) do
      if i <= 5 then told[i] = {config = r.config, weight = 1 / i} end
    end
    local function run_prior(lookahead, ahead)
      return indices(real:tune{search = {"forest", seed = 6, ahead = ahead}, prior = told,
                               stop = {count = 80}, lookahead = lookahead})
    end
    local base = run_prior()
    for _, lookahead in ipairs{1, 9} do assert.same(base, run_prior(lookahead), "lookahead " .. lookahead) end
    for _, ahead in ipairs{1, 32} do assert.same(base, run_prior(nil, ahead), "ahead " .. ahead) end
  end)

  it("checks trust, naming it", function()
    local function tune(search) return small:tune{search = search, prior = prior, stop = {count = 1}} end
    assert.has_error(function() tune{"forest", trust = -1} end,
      "searcher 'forest': option trust must be in [0, 4096], got -1")
    assert.has_error(function() tune{"forest", trust = 2.5} end,
      "searcher 'forest': option trust must be a whole number, got 2.5")
    assert.has_error(function() tune{"forest", trust = "much"} end,
      "searcher 'forest': option trust must be a number")
  end)
end)

describe("forest searcher on a device", function()
  it("tunes a kernel within a budget, each configuration once, compiling what it takes back at most once", function()
    local tuner = kt.tuner(nil, {cache = false})
    local o = kt.array("int", 4)
    local k = tuner:kernel{source = "__kernel void fo(__global int *o) { o[0] = X * Y + Z; }", name = "fo",
                           global = 1, args = {o:output()}}
    k:param("X", {1, 2, 3, 4, 5, 6})
    k:param("Y", {10, 20})
    k:param("Z", {100, 200, 300, 400})
    k:constraint({"X", "Z"}, function(x, z) return x + z ~= 403 end)
    local r = tuner:tune(k, {search = {"forest", seed = 2, sample = 4}, stop = {count = 20}, repeats = 1,
                             progress = false})
    assert.equal(20, #r)
    assert.equal("forest", r.searcher)
    assert.equal(0, each_once(r))
    local s = r:summary()
    assert.is_true(s.compiles >= 20 and s.compiles <= 20 + s.withdrawn,
                   ("%d compiles, %d withdrawn"):format(s.compiles, s.withdrawn))
    assert.equal("ok", r:best().status)
  end)
end)
