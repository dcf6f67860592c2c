-- bestfirst's twins option (core/search/search_bestfirst.c, kt_neighbors_twins_first in
-- core/search/neighbors.c): among a configuration's pair moves, those that step two
-- parameters of the same list of three or more values (a tile's x and y) each to its next
-- value up come first; with twins = 2 only from a configuration whose two such parameters
-- hold the same value (a square tile). spec/fixtures/twins_cache.json: tile_x and tile_y in {1, 2, 4, 8},
-- unroll in {0, 1}; oblong tiles are slow, so from 4 x 4 (1.5 ms) neither 8 x 4 nor 4 x 8
-- (3.5) is faster, and only the step to 8 x 8 (1.0, the optimum) is.
local kt = require "ktlua"

local twins = kt.replay("spec/fixtures/twins_cache.json") -- 32 configurations, none failed
local small = kt.replay("spec/fixtures/small_cache.json") -- no two parameters share their values

local indices = require("spec.support.replays").indices
local each_once = require("spec.support.replays").each_once

local function run(rec, search, count)
  return rec:tune{search = search, stop = {count = count}}
end

local function tiles(results)
  local t = {}
  for i = 1, #results do t[i] = results[i].config.tile_x .. "x" .. results[i].config.tile_y end
  return t
end

describe("bestfirst twins", function()
  it("makes exactly these proposals under a seed: the square step from 4 x 4 to 8 x 8 first", function()
    -- sample 1x4, 2x2, 4x4 (the fastest, index 20), 1x8; then from 4x4 a one-change move
    -- (8x4), then its first pair move
    local on = run(twins, {"bestfirst", seed = 1, sample = 4, pairs = 1, twins = 1}, 10)
    assert.same({5, 10, 20, 7, 28, 30, 31, 6, 29, 26}, indices(on))
    assert.same({"1x4", "2x2", "4x4", "1x8", "8x4", "8x8"}, {table.unpack(tiles(on), 1, 6)})
    assert.equal(1.0, on:best().time_ms)
    -- without twins the first pair move is another (8x2) and 8x8 is not met in 10
    local off = run(twins, {"bestfirst", seed = 1, sample = 4, pairs = 1, twins = 0}, 10)
    assert.same({5, 10, 20, 7, 28, 26, 21, 13, 11, 22}, indices(off))
    assert.equal(1.5, off:best().time_ms)
    -- from 2x2, the fastest of another sample, the square step is to 4x4
    assert.same({23, 10, 5, 29, 11, 20, 18, 30, 31, 6},
                indices(run(twins, {"bestfirst", seed = 2, sample = 4, pairs = 1, twins = 1}, 10)))
  end)

  it("with 2, steps first only from a square entry: 4 x 4 to 8 x 8 first, 4 x 2 as without", function()
    -- seed 1: the sample's fastest is 4x4, square, so the proposals are those of twins = 1
    assert.same({5, 10, 20, 7, 28, 30, 31, 6, 29, 26},
                indices(run(twins, {"bestfirst", seed = 1, sample = 4, pairs = 1, twins = 2}, 10)))
    -- seed 6: sample 1x4, 8x2, 2x1, 4x2 (the fastest, 4.0 ms, index 19); from 4x2 a one-change
    -- move (4x1, 17), then its first pair move: with twins = 1 the twins' step up to 8x4 (3.5,
    -- index 29); with 2, 4x2 being oblong, the pair move of twins = 0 (8x1, index 25)
    local off = indices(run(twins, {"bestfirst", seed = 6, sample = 4, pairs = 1, twins = 0}, 10))
    local square = run(twins, {"bestfirst", seed = 6, sample = 4, pairs = 1, twins = 2}, 10)
    local all = indices(run(twins, {"bestfirst", seed = 6, sample = 4, pairs = 1, twins = 1}, 10))
    assert.same({5, 27, 8, 19, 17, 25, 18, 26, 21, 13}, off)
    assert.same(off, indices(square))
    assert.same({"1x4", "8x2", "2x1", "4x2", "4x1", "8x1"}, {table.unpack(tiles(square), 1, 6)})
    assert.same({5, 27, 8, 19, 17, 29, 13, 23, 25, 30}, all)
  end)

  it("is 2 by default, and changes nothing where no two parameters share their values", function()
    local search = {"bestfirst", seed = 6, sample = 4, pairs = 1}
    assert.same(indices(run(twins, {"bestfirst", seed = 6, sample = 4, pairs = 1, twins = 2}, 22)),
                indices(run(twins, search, 22)))
    assert.are_not.same(indices(run(twins, {"bestfirst", seed = 6, sample = 4, pairs = 1, twins = 1}, 22)),
                        indices(run(twins, search, 22)))
    assert.are_not.same(indices(run(twins, {"bestfirst", seed = 1, sample = 4, pairs = 1, twins = 0}, 22)),
                        indices(run(twins, {"bestfirst", seed = 1, sample = 4, pairs = 1}, 22)))
    for seed = 1, 5 do
      for t = 1, 2 do
        assert.same(indices(run(small, {"bestfirst", seed = seed, sample = 4, pairs = 1}, 22)),
                    indices(run(small, {"bestfirst", seed = seed, sample = 4, pairs = 1, twins = t}, 22)))
      end
    end
  end)

  it("does nothing without pair moves", function()
    assert.same(indices(run(twins, {"bestfirst", seed = 3, sample = 4, pairs = 0}, 32)),
                indices(run(twins, {"bestfirst", seed = 3, sample = 4, pairs = 0, twins = 1}, 32)))
  end)

  it("tries every configuration once given the whole space", function()
    for _, o in ipairs{{pairs = 1}, {pairs = 4}, {pairs = 2, renew = 0}, {pairs = 1, model = 0},
                       {pairs = 1, twins = 2}, {pairs = 4, twins = 2}} do
      local search = {"bestfirst", seed = 7, sample = 4, twins = 1}
      for k, v in pairs(o) do search[k] = v end
      local results = run(twins, search, twins:count())
      assert.equal(32, #results)
      assert.equal(0, each_once(results))
      assert.equal(30, results:best().index)
    end
  end)

  it("rejects a twins out of range, naming the option", function()
    assert.has_error(function() run(twins, {"bestfirst", twins = 3}, 1) end,
      "searcher 'bestfirst': option twins must be in [0, 2], got 3")
    assert.has_error(function() run(twins, {"bestfirst", twins = 0.5}, 1) end,
      "searcher 'bestfirst': option twins must be a whole number, got 0.5")
  end)
end)
