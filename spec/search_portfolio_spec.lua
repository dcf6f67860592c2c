-- The portfolio searcher (core/search/search_portfolio.c): several built-in searchers
-- sharing one budget, on recorded spaces.
local kt = require "ktlua"

local small = kt.replay("spec/fixtures/small_cache.json") -- 22 configurations, 2 failed (4, 21)
local DATASET, WHY = require("spec.support.datasets").path("pnpoly_RTX_3090.json.gz")
local real = DATASET and kt.replay(DATASET)

-- A spec on the recorded dataset: pending where the datasets are not (busted's
-- pending is the running test's only here, not in a module).
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

describe("portfolio searcher", function()
  it("is listed by kt.searchers", function()
    assert.truthy(kt.searchers:find("portfolio", 1, true))
  end)

  it("makes exactly these proposals under a seed on a small space", function()
    assert.same({20, 0, 16, 1, 19, 8, 4, 5, 14, 10, 18, 12},
                indices(run(small, {"portfolio", seed = 3}, 12)))
  end)

  it("tries every configuration once, failed ones included, given the whole space", function()
    local results = run(small, {"portfolio", seed = 3}, small:count())
    assert.equal(22, #results)
    assert.equal(2, each_once(results))
    assert.equal(17, results:best().index)
    assert.equal(1.5, results:best().time_ms)
  end)

  it("finds the optimum of the small space under every seed", function()
    for seed = 1, 5 do
      assert.equal(17, run(small, {"portfolio", seed = seed}, 22):best().index)
    end
  end)

  it_real("honours budgets exactly, a smaller budget giving a prefix of a larger one", function()
    local long = indices(run(real, {"portfolio", seed = 4}, 97))
    assert.equal(97, #long)
    for _, count in ipairs{1, 13, 50} do
      assert.same({table.unpack(long, 1, count)}, indices(run(real, {"portfolio", seed = 4}, count)))
    end
  end)

  it_real("never evaluates a configuration twice, though its members may propose one", function()
    local seen = {}
    for _, i in ipairs(indices(run(real, {"portfolio", seed = 2}, 300))) do
      assert.is_nil(seen[i])
      seen[i] = true
    end
  end)

  it_real("searches alike whatever the lookahead from 32 up (the least a tuning uses by default)", function()
    -- its members' repeats of evaluated configurations are answered at once
    -- and do not count against `ahead`, so a call may return up to 18
    local base = indices(run(real, {"portfolio", seed = 6}, 150))
    for _, lookahead in ipairs{32, 40, 100} do
      assert.same(base, indices(run(real, {"portfolio", seed = 6}, 150, lookahead)), "lookahead " .. lookahead)
    end
    local one = indices(run(real, {"portfolio", seed = 6, ahead = 1}, 150))
    for _, lookahead in ipairs{32, 100} do
      assert.same(one, indices(run(real, {"portfolio", seed = 6, ahead = 1}, 150, lookahead)))
    end
  end)

  it_real("differs under different seeds and members", function()
    local a = indices(run(real, {"portfolio", seed = 1}, 40))
    assert.are_not.same(a, indices(run(real, {"portfolio", seed = 2}, 40)))
    assert.are_not.same(a, indices(run(real, {"portfolio", seed = 1, members = "bestfirst,greedy"}, 40)))
    assert.are_not.same(a, indices(run(real, {"portfolio", seed = 1, share = 0}, 40)))
  end)

  it("with one member proposes what that member does", function()
    local order = {}
    for i = 0, 21 do order[#order + 1] = i end
    assert.same(order, indices(run(small, {"portfolio", seed = 9, members = "exhaustive"}, 22)))
    assert.same({table.unpack(order, 1, 7)}, indices(run(small, {"portfolio", members = "exhaustive"}, 7)))
  end)

  it("evaluates once what two members both propose", function()
    -- two exhaustive members propose the same configurations, in the same
    -- order: each is evaluated once and both hear of it
    local order = {}
    for i = 0, 21 do order[#order + 1] = i end
    local results = run(small, {"portfolio", seed = 2, members = "exhaustive,exhaustive"}, 100)
    assert.same(order, indices(results))
    assert.equal("space explored", results.stopped)
  end)

  it("with bandit, draws each proposal's member by Thompson sampling: exactly these under a seed", function()
    assert.same({20, 8, 0, 16, 1, 5, 19, 10, 21, 7, 12, 15},
                indices(run(small, {"portfolio", seed = 3, bandit = 1}, 12)))
    -- members with options of their own (numbers), + or , between them
    local members = "forest:sample=4+greedy:sample=1:model=0:adjacent=0+annealing"
    assert.same({3, 18, 20, 0, 16, 1, 9, 19, 10, 6, 21, 4},
                indices(run(small, {"portfolio", seed = 3, bandit = 1, members = members}, 12)))
    assert.equal(17, run(small, {"portfolio", seed = 3, bandit = 1, members = members}, 22):best().index)
  end)

  it("names what is wrong in a member's options", function()
    local function fails(members, message)
      assert.has_error(function() run(small, {"portfolio", members = members}, 1) end,
        "searcher 'portfolio': option members: " .. message)
    end
    fails("greedy:sample", "'sample' in 'greedy' is not option=number")
    fails("greedy:=3", "'=3' in 'greedy' is not option=number")
    fails("greedy:sample=x", "sample of 'greedy' must be a number")
    fails("forest:depth=2", "searcher 'forest' has no option 'depth' (its options: sample, trees, leaf, top, "
      .. "apart, pairs, pool, explore, kappa, refit, clip, ahead, trust)")
    assert.has_error(function() run(small, {"portfolio", bandit = 2}, 1) end,
      "searcher 'portfolio': option bandit must be in [0, 1], got 2")
  end)

  it("checks its options, naming the offending one", function()
    assert.has_error(function() run(small, {"portfolio", members = "bestfirst,nope"}, 1) end,
      "searcher 'portfolio': option members: unknown searcher 'nope' (expected one of: "
      .. kt.searchers .. ")") -- search_builtin_spec checks that list
    assert.has_error(function() run(small, {"portfolio", members = "portfolio"}, 1) end,
      "searcher 'portfolio': option members: 'portfolio' is no member it can have")
    assert.has_error(function() run(small, {"portfolio", members = "random,random,random,random,random,random,random,random,random"}, 1) end,
      "searcher 'portfolio': option members: 'random' is one too many (at most 8)")
    assert.has_error(function() run(small, {"portfolio", members = ", "}, 1) end,
      "searcher 'portfolio': option members names no searcher")
    assert.has_error(function() run(small, {"portfolio", members = 3}, 1) end,
      "searcher 'portfolio': option members must be text")
    assert.has_error(function() run(small, {"portfolio", floor = 2}, 1) end,
      "searcher 'portfolio': option floor must be in [0, 1], got 2")
    assert.has_error(function() run(small, {"portfolio", share = 0.5}, 1) end,
      "searcher 'portfolio': option share must be a whole number, got 0.5")
    assert.has_error(function() run(small, {"portfolio", beta = 1}, 1) end,
      "searcher 'portfolio' has no option 'beta' (its options: members, floor, fade, ahead, share, bandit)")
  end)
end)
