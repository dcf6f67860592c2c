-- Stop conditions of a tuning, on a recorded space searched exhaustively:
-- configuration 0 takes 1.8 ms, 1 to 16 are slower, 17 takes 1.5 ms.
local kt = require "ktlua"

local rec = kt.replay("spec/fixtures/small_cache.json")

local function tune(stop)
  return rec:tune{search = "exhaustive", stop = stop}
end

describe("stop conditions", function()
  it("count and fraction (rounded up) are exact", function()
    assert.equal(5, #tune{count = 5})
    assert.equal("count", tune{count = 5}.stopped)
    assert.equal(12, #tune{fraction = 0.5 + 1e-9})
    assert.equal("fraction", tune{fraction = 0.5 + 1e-9}.stopped)
  end)

  it("no_improvement: the last N evaluations found nothing faster", function()
    local results = tune{no_improvement = 5}
    assert.equal(6, #results) -- the best came first, then 5 slower ones
    assert.equal("no_improvement", results.stopped)
    -- 16 slower in a row, then 17 is faster and the wait starts again
    results = tune{no_improvement = 16}
    assert.equal(17, #results)
    assert.equal("no_improvement", results.stopped)
    results = tune{no_improvement = 17}
    assert.equal(22, #results)
    assert.equal("space explored", results.stopped)
  end)

  it("min_improvement_pct over a window: the best improved by less than that", function()
    local results = tune{min_improvement_pct = 10, window = 4}
    -- after 5 evaluations the best (1.8 ms) is what it was 4 evaluations before
    assert.equal(5, #results)
    assert.equal("min_improvement", results.stopped)
    -- over a window of 17, evaluation 18 improves 1.8 to 1.5 ms: 16.7%
    results = tune{min_improvement_pct = 17, window = 17}
    assert.equal(18, #results)
    assert.equal("min_improvement", results.stopped)
    results = tune{min_improvement_pct = 16, window = 17}
    assert.equal(22, #results)
    assert.equal("space explored", results.stopped)
    results = tune{min_improvement_pct = 1, window = 1e18} -- as long as the space: never reached
    assert.equal(22, #results)
    assert.equal("space explored", results.stopped)
  end)

  it("failures: this many configurations did not come out ok (KTT's FailureCount)", function()
    -- configuration 4 failed at run time and 21 to compile; the space holds 22
    local results = tune{failures = 1}
    assert.equal(5, #results)
    assert.equal("failures", results.stopped)
    assert.equal("runtime_failed", results[5].status)
    results = tune{failures = 2}
    assert.equal(22, #results)
    assert.equal("failures", results.stopped)
    results = tune{failures = 3}
    assert.equal(22, #results)
    assert.equal("space explored", results.stopped)
    assert.equal("count", tune{count = 3, failures = 1}.stopped)
  end)

  it("the first condition reached wins; at a tie, the first in the order listed", function()
    local results = tune{count = 10, no_improvement = 2}
    assert.equal(3, #results)
    assert.equal("no_improvement", results.stopped)
    assert.equal("count", tune{count = 3, no_improvement = 2}.stopped)
  end)

  it("choose the searcher of a tuning that names none: the forest within a budget", function()
    assert.equal("exhaustive", rec:tune().searcher)
    assert.equal("exhaustive", rec:tune{stop = {no_improvement = 3}}.searcher)
    assert.equal("forest", rec:tune{stop = {count = 5}}.searcher)
    assert.equal("forest", rec:tune{stop = {fraction = 0.25}}.searcher)
    assert.equal("forest", rec:tune{stop = {seconds = 1}}.searcher)
    assert.equal("random", rec:tune{search = "random", stop = {count = 5}}.searcher)
  end)

  it("are checked", function()
    assert.has_error(function() tune{min_improvement_pct = 5} end,
      "tune options.stop: min_improvement_pct and window go together (stop when the best improved "
      .. "by less than that percentage over the last window evaluations)")
    assert.has_error(function() tune{no_improvement = -1} end,
      "tune options.stop.no_improvement must be a positive number")
    for _, key in ipairs({ "count", "fraction", "seconds", "target_ms", "failures" }) do
      assert.has_error(function() tune{[key] = 0} end, "tune options.stop." .. key .. " must be a positive number")
    end
    assert.has_error(function() tune{count = "5"} end, "tune options.stop.count must be a positive number")
    assert.has_error(function() tune{fraction = 1.5} end, "tune options.stop.fraction must be in (0, 1]")
    assert.has_error(function() tune{patience = 3} end,
      "tune options.stop: unknown field 'patience' (expected one of: count, fraction, seconds, "
      .. "target_ms, no_improvement, min_improvement_pct, window, failures)")
  end)
end)
