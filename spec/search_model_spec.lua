-- The model-based searcher (core/search/search_model.c, Falch and Elster's neural
-- network ensemble on FANN): reproducible under a seed, its options checked
-- with what they take, and what it does on a small constructed space.
-- Pending where ktlua was built without FANN.
local kt = require "ktlua"
local files = require "spec.support.files"

local DATASET, WHY = require("spec.support.datasets").path("pnpoly_RTX_3090.json.gz")
local real = DATASET and kt.replay(DATASET)
local small = kt.replay("spec/fixtures/small_cache.json")
local available = select(2, pcall(small.tune, small, {search = "model", stop = {count = 1}}))
available = type(available) ~= "string" or not available:find("unavailable", 1, true)

local function it_fann(name, fn, needs_dataset)
  it(name, function()
    if not available then return pending("ktlua was built without FANN (libfann-dev)") end
    if needs_dataset and not real then return pending(WHY) end
    fn()
  end)
end

local indices = require("spec.support.replays").indices

-- A 12 x 12 bowl: 1 + 0.02 ((a - 8)^2 + (b - 3)^2) ms, its optimum at a = 8,
-- b = 3; with `failing`, the 21 configurations with a + b >= 17 failed.
local function bowl(failing, all_fail)
  local records, values = {}, {}
  for a = 0, 11 do
    values[#values + 1] = a
    for b = 0, 11 do
      local t = ("%.4f"):format(1 + 0.02 * ((a - 8) ^ 2 + (b - 3) ^ 2))
      local time, times = t, t
      if all_fail or (failing and a + b >= 17) then time, times = '"RuntimeFailedConfig"', "" end
      records[#records + 1] = ('"%d,%d": {"a": %d, "b": %d, "time": %s, "times": [%s]}'):format(
        a, b, a, b, time, times)
    end
  end
  local list = table.concat(values, ", ")
  local path = files.tmpname(".json")
  files.write(path, ('{"device_name": "Test GPU", "kernel_name": "bowl", "tune_params_keys": '
    .. '["a", "b"], "tune_params": {"a": [%s], "b": [%s]}, "objective": "time", "cache": {%s}}')
    :format(list, list, table.concat(records, ",\n")))
  local rec = kt.replay(path)
  os.remove(path)
  return rec
end

describe("the model searcher", function()
  it_fann("gives the same sequence under the same seed, another under another seed", function()
    local function run(seed) return indices(real:tune{search = {"model", seed = seed}, stop = {count = 48}}) end
    local a = run(5)
    assert.equal(48, #a)
    assert.same(a, run(5))
    assert.not_same(a, run(6))
  end, true)

  it_fann("searches alike whatever the lookahead, a smaller budget giving a prefix", function()
    local base = indices(real:tune{search = {"model", seed = 3}, stop = {count = 56}})
    assert.same(base, indices(real:tune{search = {"model", seed = 3}, stop = {count = 56},
                                        lookahead = 8}))
    assert.same({table.unpack(base, 1, 40)},
                indices(real:tune{search = {"model", seed = 3}, stop = {count = 40}}))
  end, true)

  it_fann("finds the bottom of a bowl within 30 of 144", function()
    local rec = bowl(false)
    local found = {}
    for seed = 1, 5 do
      local results = rec:tune{search = {"model", sample = 10, seed = seed}, stop = {count = 30}}
      assert.equal(30, #results)
      local best = results:best().config
      found[seed] = best.a .. "," .. best.b
    end
    assert.same({"8,3", "8,3", "8,3", "8,3", "8,3"}, found)
  end)

  it_fann("learns failed configurations as slow: after its sample it proposes almost none", function()
    local rec = bowl(true)
    local found, failed = {}, {}
    for seed = 1, 5 do
      local results = rec:tune{search = {"model", sample = 10, seed = seed}, stop = {count = 30}}
      failed[seed] = 0
      for i = 11, #results do
        if results[i].status ~= "ok" then failed[seed] = failed[seed] + 1 end
      end
      local best = results:best().config
      found[seed] = best.a .. "," .. best.b
    end
    assert.same({0, 1, 0, 0, 0}, failed)
    assert.same({"8,3", "8,3", "8,2", "8,3", "8,2"}, found)
  end)

  it_fann("tries every configuration once given the whole space", function()
    local rec = bowl(true)
    local results = rec:tune{search = {"model", sample = 10, seed = 1}, stop = {count = 1000}}
    assert.equal(144, #results)
    assert.equal("space explored", results.stopped)
    local seen = {}
    for _, i in ipairs(indices(results)) do
      assert.is_nil(seen[i])
      seen[i] = true
    end
    assert.equal(1, results:best().time_ms)
  end)

  it_fann("explores at random while nothing succeeds, and never learns from failures alone", function()
    local rec = bowl(true, true)
    local results = rec:tune{search = {"model", sample = 10, seed = 1}, stop = {count = 40}}
    assert.equal(40, #results)
    assert.is_nil(results:best())
    local seen = {}
    for _, i in ipairs(indices(results)) do
      assert.is_nil(seen[i])
      seen[i] = true
    end
    assert.equal(144, #rec:tune{search = {"model", sample = 10, seed = 1}, stop = {count = 1000}})
  end)

  it("rejects bad options, naming what they take", function()
    local cases = {
      {{hidden = 3}, "searcher 'model': hidden: expected an integer from 40 to 70, got 3"},
      {{k = 0}, "searcher 'model': k: expected an integer from 1 to 100, got 0"},
      {{k = 2.5}, "searcher 'model': k: expected an integer from 1 to 100, got 2.5"},
      {{t = -1}, "searcher 'model': t: expected a number from 0 to 100, got -1"},
      {{sample = 0}, "searcher 'model': sample: expected an integer from 1 to 1000000000 (or a "
                     .. "fraction of the space below 1), got 0"},
      {{sample = "x"}, "searcher 'model': sample: expected an integer from 1 to 1000000000 (or a "
                       .. "fraction of the space below 1), got 'x'"},
      {{epochs = 0}, "searcher 'model': epochs: expected an integer from 1 to 100000, got 0"},
      {{retrain = -1}, "searcher 'model': retrain: expected a number from 0 to 100, got -1"},
      {{ahead = 0}, "searcher 'model': ahead: expected an integer from 1 to 1024, got 0"},
      {{nope = 1}, "searcher 'model' has no option 'nope' (its options: sample, k, hidden, t, "
                   .. "epochs, retrain, ahead)"},
    }
    for _, case in ipairs(cases) do
      local search = {"model"}
      for k, v in pairs(case[1]) do search[k] = v end
      local ok, msg = pcall(small.tune, small, {search = search, stop = {count = 5}})
      assert.is_false(ok)
      assert.equal(case[2], msg)
    end
  end)

  describe("as bestfirst's restarts (restart = 1)", function()
    it_fann("changes nothing before the first episode ends, then starts where it predicts", function()
      local function run(restart)
        return indices(real:tune{search = {"bestfirst", seed = 2, restart = restart, renew = 0,
                                           pairs = 0}, stop = {count = 200}})
      end
      local plain, restarted = run(0), run(1)
      assert.same(restarted, run(1))
      -- with seed 2 (without renew and pairs) the first episode is 132 evaluations long
      assert.same({table.unpack(plain, 1, 132)}, {table.unpack(restarted, 1, 132)})
      assert.not_equal(plain[133], restarted[133])
    end, true)

    it("is a switch", function()
      local ok, msg = pcall(small.tune, small, {search = {"bestfirst", restart = 2},
                                                stop = {count = 2}})
      assert.is_false(ok)
      assert.equal("searcher 'bestfirst': option restart must be in [0, 1], got 2", msg)
    end)
  end)
end)
