-- bestfirst's renew option (core/search/search_bestfirst.c) and the search loop's
-- withdrawals (core/eval/loop.c, kt_searcher_ops.withdraw): after each result the
-- pending proposals past the episode's sample are taken back and chosen
-- again, so that a search keeping `ahead` in flight (compiled together on a
-- device) evaluates what it would with ahead = 1. And its pairs option: a
-- move of two parameters, each to an adjacent value, after every N one-change
-- moves of a configuration.
local kt = require "ktlua"

local small = kt.replay("spec/fixtures/small_cache.json") -- 22 configurations, 2 failed (4, 21)
local DATASET, WHY = require("spec.support.datasets").path("gemm_RTX_3090.json.gz")
local real = DATASET and kt.replay(DATASET)

local indices = require("spec.support.replays").indices
local each_once = require("spec.support.replays").each_once

local function run(rec, search, count, lookahead)
  return rec:tune{search = search, stop = {count = count}, lookahead = lookahead}
end

local function with(base, extra)
  local t = {}
  for k, v in pairs(base) do t[k] = v end
  for k, v in pairs(extra) do t[k] = v end
  return t
end

describe("bestfirst renew", function()
  it("makes exactly these proposals under a seed on a small space, those of ahead = 1", function()
    local renewed = run(small, {"bestfirst", seed = 3, sample = 4, renew = 1, pairs = 0}, 12)
    assert.same({10, 4, 21, 18, 16, 12, 17, 11, 13, 5, 15, 14}, indices(renewed))
    assert.equal(5, renewed:summary().withdrawn)
    assert.same(indices(renewed),
                indices(run(small, {"bestfirst", seed = 3, sample = 4, ahead = 1, pairs = 0}, 12)))
    -- without renew (ahead 8): the same sample, then neighbours chosen before their results
    local plain = run(small, {"bestfirst", seed = 3, sample = 4, renew = 0, pairs = 0}, 12)
    assert.same({10, 4, 21, 18, 11, 6, 16, 8, 20, 19, 12, 0}, indices(plain))
    assert.equal(0, plain:summary().withdrawn)
  end)

  it("evaluates what ahead = 1 does whatever the lookahead, seeds and options", function()
    for _, o in ipairs{{seed = 3, sample = 2, patience = 2}, {seed = 5, sample = 4},
                       {seed = 5, sample = 2, width = 2}, {seed = 1, sample = 3, ahead = 3}} do
      local one = indices(run(small, with({"bestfirst", ahead = 1}, with(o, {ahead = 1})), 22))
      for _, lookahead in ipairs{1, 2, 8, 100} do
        assert.same(one, indices(run(small, with({"bestfirst", renew = 1}, o), 22, lookahead)),
                    "seed " .. o.seed .. ", lookahead " .. lookahead)
      end
    end
  end)

  it("renews by default, and withdraws nothing with renew = 0 or with one proposal ahead", function()
    local default = run(small, {"bestfirst", seed = 3, sample = 4}, 22)
    assert.same(indices(run(small, {"bestfirst", seed = 3, sample = 4, renew = 1, pairs = 4}, 22)),
                indices(default))
    local off = run(small, {"bestfirst", seed = 3, sample = 4, renew = 0}, 22)
    assert.equal(0, off:summary().withdrawn)
    assert.equal(0, run(small, {"bestfirst", seed = 3, sample = 4, renew = 1}, 22, 1):summary().withdrawn)
    assert.equal(0, run(small, {"bestfirst", seed = 3, sample = 4, renew = 1, ahead = 1}, 22):summary().withdrawn)
  end)

  it("with renew = 2 takes back the same but keeps the orders of moves made meanwhile", function()
    -- the entries' orders of moves drawn while the sample's results came in stay
    local kept = run(small, {"bestfirst", seed = 3, sample = 4, renew = 2, pairs = 0}, 12)
    assert.same({10, 4, 21, 18, 11, 17, 13, 16, 15, 5, 14, 12}, indices(kept))
    assert.equal(7, kept:summary().withdrawn)
  end)

  it("tries every configuration once, failed ones included, given the whole space", function()
    for _, o in ipairs{{renew = 1}, {renew = 2}, {renew = 1, guess = 2}, {renew = 1, across = 1, adapt = 1}} do
      local results = run(small, with({"bestfirst", seed = 7, sample = 4}, o), small:count())
      assert.equal(22, #results)
      assert.equal(2, each_once(results))
      assert.equal(17, results:best().index)
    end
  end)

  it("rejects a renew out of range, naming the option", function()
    assert.has_error(function() run(small, {"bestfirst", renew = 3}, 1) end,
      "searcher 'bestfirst': option renew must be in [0, 2], got 3")
    assert.has_error(function() run(small, {"bestfirst", renew = 0.5}, 1) end,
      "searcher 'bestfirst': option renew must be a whole number, got 0.5")
  end)

  it("evaluates what ahead = 1 does on a recorded space, never twice, within the budget", function()
    if not real then return pending(WHY) end
    for seed = 1, 3 do
      local one = indices(run(real, {"bestfirst", seed = seed, ahead = 1}, 300))
      local renewed = run(real, {"bestfirst", seed = seed, renew = 1}, 300)
      assert.same(one, indices(renewed))
      assert.is_true(renewed:summary().withdrawn > 0)
      local seen = {}
      for _, i in ipairs(indices(renewed)) do
        assert.is_nil(seen[i])
        seen[i] = true
      end
      assert.same({table.unpack(one, 1, 97)}, indices(run(real, {"bestfirst", seed = seed, renew = 1}, 97)))
    end
  end)
end)

describe("bestfirst pairs", function()
  it("makes exactly these proposals under a seed on a small space", function()
    -- without renew or pairs: 10, 4, 21, 18, 11, 6, 16, 8, 20, 19, 12, 0 (above)
    assert.same({10, 4, 21, 18, 5, 11, 14, 6, 19, 20, 13, 12},
                indices(run(small, {"bestfirst", seed = 3, sample = 4, renew = 0, pairs = 1}, 12)))
    assert.same({10, 4, 21, 18, 11, 5, 6, 16, 19, 20, 12, 14},
                indices(run(small, {"bestfirst", seed = 3, sample = 4, renew = 0, pairs = 2}, 12)))
    assert.same({10, 4, 21, 18, 6, 14, 16, 5, 20, 19, 13, 0},
                indices(run(small, {"bestfirst", seed = 3, sample = 4, renew = 0, pairs = 1, model = 0},
                            12)))
  end)

  it("moves two parameters to adjacent values in a pair move", function()
    local records = small:records()
    local function position(name, value)
      for _, p in ipairs(records.params) do
        if p.name == name then
          for i, v in ipairs(p.values) do if v == value then return i end end
        end
      end
    end
    local function config(index)
      for i = 1, #records do if records[i].index == index then return records[i].config end end
    end
    -- with pairs = 1 the 5th proposal is the first pair move, from the sample's fastest:
    -- 10 (block_x 32, block_y 4, unroll 0) to 5 (16, 4, 1)
    local from, to = config(10), config(5)
    local changed = 0
    for _, p in ipairs(records.params) do
      if from[p.name] ~= to[p.name] then
        changed = changed + 1
        assert.equal(1, math.abs(position(p.name, from[p.name]) - position(p.name, to[p.name])))
      end
    end
    assert.equal(2, changed)
  end)

  it("is 4 by default, and off with pairs = 0", function()
    assert.same(indices(run(small, {"bestfirst", seed = 3, sample = 4}, 22)),
                indices(run(small, {"bestfirst", seed = 3, sample = 4, pairs = 4}, 22)))
    assert.are_not.same(indices(run(small, {"bestfirst", seed = 3, sample = 4}, 22)),
                        indices(run(small, {"bestfirst", seed = 3, sample = 4, pairs = 0}, 22)))
  end)

  it("tries every configuration once, failed ones included, given the whole space", function()
    for _, o in ipairs{{pairs = 1}, {pairs = 4}, {pairs = 1, model = 0}, {pairs = 2, renew = 1}} do
      local results = run(small, with({"bestfirst", seed = 7, sample = 4}, o), small:count())
      assert.equal(22, #results)
      each_once(results)
      assert.equal(17, results:best().index)
    end
  end)

  it("rejects a pairs out of range, naming the option", function()
    assert.has_error(function() run(small, {"bestfirst", pairs = -1}, 1) end,
      "searcher 'bestfirst': option pairs must be in [0, 1000000], got -1")
  end)
end)

describe("bestfirst renew on a device", function()
  it("evaluates each configuration once and compiles what it took back at most once", function()
    local tuner = kt.tuner(nil, {cache = false})
    local o = kt.array("int", 4)
    local k = tuner:kernel{source = "__kernel void rn(__global int *o) { o[0] = X + Y + Z; }", name = "rn",
                           global = 1, args = {o:output()}}
    k:param("X", {1, 2, 3, 4, 5, 6})
    k:param("Y", {10, 20})
    k:param("Z", {100, 200, 300, 400})
    local r = tuner:tune(k, {search = {"bestfirst", seed = 2, sample = 4, renew = 1}, stop = {count = 20},
                             repeats = 1, progress = false})
    assert.equal(20, #r)
    local seen = {}
    for i = 1, #r do
      assert.is_nil(seen[r[i].index])
      seen[r[i].index] = true
    end
    local s = r:summary()
    assert.is_true(s.withdrawn > 0)
    assert.is_true(s.compiles >= 20 and s.compiles <= 20 + s.withdrawn,
                   ("%d compiles, %d withdrawn"):format(s.compiles, s.withdrawn))
  end)
end)
