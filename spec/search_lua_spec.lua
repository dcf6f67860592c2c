-- Searchers written in Lua, the space view's helpers they walk with, and
-- the worked example shipped in the stdlib (ktlua.search_tabu).
local kt = require "ktlua"

local rec = kt.replay("spec/fixtures/small_cache.json")

local indices = require("spec.support.replays").indices

-- A searcher that proposes a fixed list, n at a time, and remembers what
-- it heard.
local function scripted(list)
  local s = {heard = {}}
  function s:init(space)
    self.space, self.at = space, 1
  end
  function s:next(n)
    local batch = {}
    while #batch < n and self.at <= #list do
      batch[#batch + 1] = list[self.at]
      self.at = self.at + 1
    end
    return batch
  end
  function s:report(index, result)
    self.heard[#self.heard + 1] = {index, result.status, result.time_ms}
  end
  return s
end

describe("a Lua searcher", function()
  it("plugs in: init gets the space, next proposes, report hears every result", function()
    local s = scripted({21, 4, 17, 0})
    local results = rec:tune{search = s}
    assert.same({21, 4, 17, 0}, indices(results))
    assert.equal("searcher finished", results.stopped)
    assert.equal("lua", results.searcher)
    assert.equal(22, s.space:count())
    assert.same({{21, "compile_failed"}, {4, "runtime_failed"}, {17, "ok", 1.5}, {0, "ok", 1.8}}, s.heard)
  end)

  it("may propose configurations as tables", function()
    local s = scripted({{block_x = 64, block_y = 4, unroll = 1}, {block_x = 16, block_y = 1, unroll = 0}})
    assert.same({17, 0}, indices(rec:tune{search = s}))
  end)

  it("is stopped by the budget, not by itself", function()
    assert.same({21, 4}, indices(rec:tune{search = scripted({21, 4, 17, 0}), stop = {count = 2}}))
  end)

  it("hears a repeated proposal's earlier result without a new evaluation", function()
    local s = scripted({17, 17, 3})
    local results = rec:tune{search = s}
    assert.same({17, 3}, indices(results))
    assert.same({{17, "ok", 1.5}, {17, "ok", 1.5}, {3, "ok", 3.4}}, s.heard)
  end)

  it("fails with a message naming a bad proposal", function()
    assert.has_error(function() rec:tune{search = scripted({99})} end,
      "searcher lua: next() proposed index 99; the space has 22 configurations (0-based)")
    assert.has_error(function() rec:tune{search = scripted({{block_x = 128, block_y = 4, unroll = 0}})} end,
      "searcher lua: next() proposed a configuration that breaks a constraint")
  end)
end)

describe("the space view's helpers", function()
  it("list neighbours within k changes, Hamming or adjacent", function()
    local space = rec:space()
    -- configuration 0 is (16, 1, 0): block_x, then block_y, then unroll changed
    assert.same({6, 12, 18, 2, 4, 1}, space:neighbors(0))
    assert.same({6, 12, 18, 2, 4, 1, 8, 10, 7, 14, 16, 13, 20, 19, 3, 5}, space:neighbors(0, {changes = 2}))
    -- 9 is (32, 2, 1): adjacent values only
    assert.same({3, 15, 7, 11, 8}, space:neighbors(9, {adjacent = true}))
    -- (128, 4, *) is not in the space, so 20 = (128, 2, 0) has no such neighbour
    assert.same({2, 8, 14, 18, 21}, space:neighbors(20))
  end)

  it("convert between indices and value indices", function()
    local space = rec:space()
    assert.same({2, 2, 1}, space:value_indices(17))
    assert.equal(17, space:from_value_indices({2, 2, 1}))
    assert.is_nil(space:from_value_indices({3, 2, 0}))
    assert.has_error(function() space:from_value_indices({4, 0, 0}) end,
      "bad argument #1 to 'from_value_indices' (value index 1 of parameter block_x is out of range)")
  end)

  it("follow the tuning: explored, unexplored, random ones", function()
    local s = scripted({0, 4, 17})
    local later = {}
    local inner = s.report
    function s.report(self, index, result)
      inner(self, index, result)
      if index == 17 then
        local space = self.space
        later.count = space:explored_count()
        later.ok = {space:explored(17)}
        later.failed = {space:explored(4)}
        later.unseen = {space:explored(5)}
        later.fresh = space:neighbors(0, {unexplored = true})
        later.draws = {}
        for k = 1, 40 do later.draws[k] = space:random_unexplored() end
        later.neighbor = space:random_neighbor(0, {unexplored = true})
        later.random = space:random()
      end
    end
    rec:tune{search = s, seed = 9}
    assert.equal(3, later.count)
    assert.same({true, 1.5}, later.ok)
    assert.same({true}, later.failed) -- failed: no time
    assert.same({false}, later.unseen)
    assert.same({6, 12, 18, 2, 1}, later.fresh)
    for _, i in ipairs(later.draws) do
      assert.is_true(i ~= 0 and i ~= 4 and i ~= 17 and i >= 0 and i < 22)
    end
    assert.is_true(later.neighbor == 6 or later.neighbor == 12 or later.neighbor == 18
                   or later.neighbor == 2 or later.neighbor == 1)
    assert.is_true(later.random >= 0 and later.random < 1)
  end)

  it("draw the same random values under the same seed", function()
    local function draws(seed)
      local out = {}
      local s = scripted({0})
      function s.init(self, space)
        self.space, self.at = space, 1
        for k = 1, 10 do out[k] = space:random_unexplored() end
      end
      rec:tune{search = s, seed = seed}
      return out
    end
    assert.same(draws(5), draws(5))
    assert.are_not.same(draws(5), draws(6))
  end)

  it("work on a kernel's space with its constraints", function()
    local tuner = kt.tuner()
    local k = tuner:kernel{name = "k", source = "__kernel void k() {}", global = {64}}
    k:param("A", {1, 2, 4})
    k:param("B", {1, 2, 4})
    k:constraint({"A", "B"}, function(a, b) return a * b <= 4 end)
    local space = k:space()
    assert.equal(6, space:count())
    -- 0 is (1, 1); (4, 4), (2, 4) and (4, 2) break the constraint
    assert.same({3, 5, 1, 2}, space:neighbors(0))
    assert.same({0, 2}, space:value_indices(2)) -- (1, 4)
    assert.same({1, 1}, space:value_indices(4)) -- (2, 2)
  end)
end)

describe("ktlua.search_tabu, the worked example", function()
  local tabu = require "ktlua.search_tabu"

  it("finds the optimum of a small space given the whole space", function()
    for seed = 1, 5 do
      local results = rec:tune{search = tabu.new(), seed = seed, stop = {count = 22}}
      assert.equal(22, #results)
      assert.equal(17, results:best().index)
    end
  end)

  it("is reproducible under a seed and honours the budget", function()
    local path, why = require("spec.support.datasets").path("pnpoly_RTX_3090.json.gz")
    if not path then return pending(why) end
    local real = kt.replay(path)
    local a = real:tune{search = tabu.new{tenure = 4}, seed = 3, stop = {count = 150}}
    local b = real:tune{search = tabu.new{tenure = 4}, seed = 3, stop = {count = 150}}
    assert.equal(150, #a)
    assert.same(indices(a), indices(b))
  end)

  it("checks its options", function()
    assert.has_error(function() tabu.new{tenur = 3} end,
      "search_tabu.new: unknown option 'tenur' (expected tenure, adjacent)")
  end)
end)
