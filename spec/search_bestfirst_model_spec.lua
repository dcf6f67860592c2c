-- bestfirst's options that lean on its pairwise model (core/search/search_bestfirst.c):
-- guess (every Nth proposal after an episode's sample, the configuration the
-- model scores highest among `pool` random unexplored ones), adapt (guesses at
-- a share that follows their wins) and across (neighbours ranked across the
-- parameters by the model's gain).
local kt = require "ktlua"

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
  -- the model's options against the proposals without renew and pairs (on by default)
  if type(search) == "table" then
    search.renew, search.pairs = search.renew or 0, search.pairs or 0
  end
  return rec:tune{search = search, stop = {count = count}, lookahead = lookahead}
end

describe("bestfirst's model options", function()
  it("makes exactly these proposals under a seed on a small space", function()
    local guessing = indices(run(small, {"bestfirst", seed = 3, sample = 4, guess = 2}, 12))
    assert.same({10, 4, 21, 18, 11, 6, 8, 16, 12, 7, 1, 19}, guessing)
    -- plain bestfirst: the same sample and first two neighbours, then no guess
    assert.same({10, 4, 21, 18, 11, 6, 16, 8, 20, 19, 12, 0},
                indices(run(small, {"bestfirst", seed = 3, sample = 4}, 12)))
    -- a pool of one is a random guess, not the model's
    assert.same({10, 4, 21, 18, 6, 16, 8, 11, 1, 20, 15, 19},
                indices(run(small, {"bestfirst", seed = 3, sample = 4, guess = 2, pool = 1}, 12)))
  end)

  it("is off by default and with guess = 0", function()
    local plain = indices(run(small, {"bestfirst", seed = 3, sample = 4}, 22))
    assert.same(plain, indices(run(small, {"bestfirst", seed = 3, sample = 4, guess = 0}, 22)))
    assert.are_not.same(plain, indices(run(small, {"bestfirst", seed = 3, sample = 4, guess = 1}, 22)))
  end)

  it("makes exactly these proposals with adapt and with across", function()
    assert.same({10, 4, 21, 18, 9, 11, 8, 6, 16, 7, 20, 1},
                indices(run(small, {"bestfirst", seed = 3, sample = 4, adapt = 1}, 12)))
    assert.same({10, 4, 21, 18, 11, 6, 16, 8, 20, 0, 19, 12},
                indices(run(small, {"bestfirst", seed = 3, sample = 4, across = 1}, 12)))
    assert.same({10, 4, 21, 18, 11, 6, 8, 16, 20, 0, 12, 19},
                indices(run(small, {"bestfirst", seed = 3, sample = 4, across = 0.5}, 12)))
  end)

  it("guesses nothing and ranks as without them when the model is off (model = 0)", function()
    local plain = indices(run(small, {"bestfirst", seed = 5, model = 0}, 22))
    for _, o in ipairs{{guess = 1}, {adapt = 1}, {across = 1}} do
      local search = {"bestfirst", seed = 5, model = 0}
      for k, v in pairs(o) do search[k] = v end
      assert.same(plain, indices(run(small, search, 22)))
    end
  end)

  it("is off with adapt = 0 and across = 0", function()
    local plain = indices(run(small, {"bestfirst", seed = 3, sample = 4}, 22))
    assert.same(plain, indices(run(small, {"bestfirst", seed = 3, sample = 4, adapt = 0, across = 0}, 22)))
  end)

  it("tries every configuration once, failed ones included, given the whole space", function()
    for _, o in ipairs{{guess = 1}, {guess = 2}, {guess = 4}, {adapt = 1}, {across = 1, adapt = 1}} do
      local search = {"bestfirst", seed = 7, sample = 4}
      for k, v in pairs(o) do search[k] = v end
      local results = run(small, search, small:count())
      assert.equal(22, #results)
      assert.equal(2, each_once(results))
      assert.equal(17, results:best().index)
    end
  end)

  it("rejects options out of range, naming the option", function()
    assert.has_error(function() run(small, {"bestfirst", guess = -1}, 1) end,
      "searcher 'bestfirst': option guess must be in [0, 1000000000], got -1")
    assert.has_error(function() run(small, {"bestfirst", guess = 2.5}, 1) end,
      "searcher 'bestfirst': option guess must be a whole number, got 2.5")
    assert.has_error(function() run(small, {"bestfirst", pool = 0}, 1) end,
      "searcher 'bestfirst': option pool must be in [1, 1000000], got 0")
    assert.has_error(function() run(small, {"bestfirst", adapt = 2}, 1) end,
      "searcher 'bestfirst': option adapt must be in [0, 1], got 2")
    assert.has_error(function() run(small, {"bestfirst", across = -0.5}, 1) end,
      "searcher 'bestfirst': option across must be in [0, 1000000000], got -0.5")
  end)

  it_real("honours budgets exactly, a smaller budget giving a prefix of a larger one", function()
    for _, search in ipairs{{"bestfirst", seed = 4, guess = 4, patience = 8},
                            {"bestfirst", seed = 4, across = 1, adapt = 1, patience = 6}} do
      local long = indices(run(real, search, 97))
      assert.equal(97, #long)
      for _, count in ipairs{1, 17, 50} do
        assert.same({table.unpack(long, 1, count)}, indices(run(real, search, count)))
      end
    end
  end)

  it_real("never evaluates a configuration twice", function()
    for _, o in ipairs{{guess = 1}, {guess = 3}, {adapt = 1}, {across = 1, adapt = 1}} do
      local seen, search = {}, {"bestfirst", seed = 2}
      for k, v in pairs(o) do search[k] = v end
      for _, i in ipairs(indices(run(real, search, 300))) do
        assert.is_nil(seen[i])
        seen[i] = true
      end
    end
  end)

  it_real("keeps up to `ahead` in flight and searches alike whatever the lookahead", function()
    for _, search in ipairs{{"bestfirst", seed = 6, guess = 3}, {"bestfirst", seed = 6, adapt = 1, across = 1}} do
      local base = indices(run(real, search, 150))
      for _, lookahead in ipairs{8, 9, 100} do
        assert.same(base, indices(run(real, search, 150, lookahead)), "lookahead " .. lookahead)
      end
    end
    local base = indices(run(real, {"bestfirst", seed = 6, guess = 3}, 150))
    local one = indices(run(real, {"bestfirst", seed = 6, guess = 3, ahead = 1}, 150))
    assert.same(one, indices(run(real, {"bestfirst", seed = 6, guess = 3, ahead = 1}, 150, 1)))
    assert.are_not.same(one, base)
  end)
end)
