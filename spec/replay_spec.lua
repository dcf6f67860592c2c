-- Replays: recorded spaces from Kernel Tuner cache files (plain or
-- gzipped) and ktlua's own result files, tuned without a device.
local kt = require "ktlua"

local FIXTURE = "spec/fixtures/small_cache.json"
local DATASET, WHY = require("spec.support.datasets").path("pnpoly_RTX_3090.json.gz")

local function tmpname(suffix)
  local name = os.tmpname()
  os.remove(name)
  return name .. suffix
end

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

-- Replays text written to a temporary file: the replay, or nil and the
-- error message with the file's name as "FILE".
local function replay_text(text)
  local path = tmpname(".json")
  write(path, text)
  local ok, rec = pcall(kt.replay, path)
  os.remove(path)
  if ok then return rec end
  return nil, (rec:gsub(path:gsub("%p", "%%%0"), "FILE"))
end

local function config_string(cfg)
  return ("%d,%d,%d"):format(cfg.block_x, cfg.block_y, cfg.unroll)
end

describe("kt.replay", function()
  it("reads a Kernel Tuner cache file: parameters, recorded configurations, names", function()
    local rec = kt.replay(FIXTURE)
    assert.equal(22, rec:count()) -- 24 combinations, one InvalidConfig, one not recorded
    assert.equal(22, #rec)
    assert.equal("kernel-tuner-cache", rec.format)
    assert.equal("small_kernel", rec.task)
    assert.equal("Test GPU", rec.device)
    assert.same({{name = "block_x", values = {16, 32, 64, 128}}, {name = "block_y", values = {1, 2, 4}},
                 {name = "unroll", values = {0, 1}}}, rec:space():params())
    assert.equal("replay of small_kernel on Test GPU: 22 configurations (kernel-tuner-cache)", tostring(rec))
  end)

  it("orders the recorded configurations as generation would, and finds the optimum", function()
    local rec = kt.replay(FIXTURE)
    local space = rec:space()
    assert.equal("16,1,0", config_string(space:config(0)))
    assert.equal("128,2,1", config_string(space:config(21)))
    assert.is_nil(space:index({block_x = 128, block_y = 4, unroll = 0})) -- InvalidConfig
    local best = rec:optimum()
    assert.equal(17, best.index)
    assert.equal("64,4,1", config_string(best.config))
    assert.equal(1.5, best.time_ms)
  end)

  it("keeps failed configurations as failed records with their error", function()
    local records = kt.replay(FIXTURE):records()
    assert.equal(22, #records)
    assert.equal("runtime_failed", records[5].status)
    assert.equal("RuntimeFailedConfig", records[5].error)
    assert.equal("compile_failed", records[22].status)
    assert.equal("CompilationFailedConfig", records[22].error)
    local s = records:summary()
    assert.equal(20, s.statuses.ok)
    assert.equal(1, s.statuses.compile_failed)
    assert.equal(1, s.statuses.runtime_failed)
    assert.same({1.8, 1.81, 1.79}, records[1].samples_ms)
  end)

  it("reads the same file gzipped", function()
    local gz = tmpname(".json.gz")
    assert.is_true(os.execute(("gzip -c %s > %s"):format(FIXTURE, gz)))
    local rec = kt.replay(gz)
    os.remove(gz)
    assert.equal(22, rec:count())
    assert.equal(17, rec:optimum().index)
  end)

  it("tunes against the recording: the evaluation count and a simulated clock", function()
    local rec = kt.replay(FIXTURE)
    local results = rec:tune()
    local s = results:summary()
    assert.equal(22, s.evaluated)
    assert.equal("space explored", s.stopped)
    assert.equal("exhaustive", results.searcher)
    -- compile + verification + benchmark + framework time of every record
    assert.near(216.7, s.total_ms, 1e-9)
    assert.equal(17, results:best().index)
    assert.equal("compile_failed", results[22].status)
  end)

  it("counts stop.seconds on the simulated clock", function()
    -- the first three records cost 7.15 + 13.15 + 12.85 = 33.15 ms
    local results = kt.replay(FIXTURE):tune{search = "exhaustive", stop = {seconds = 0.033}}
    assert.equal(3, #results)
    assert.equal("seconds", results.stopped)
  end)

  it("replays ktlua's own result files, round trip", function()
    local rec = kt.replay(FIXTURE)
    local path = tmpname(".json")
    rec:tune{search = {"random", seed = 3}, stop = {count = 10}, output = path}
    local again = kt.replay(path)
    os.remove(path)
    assert.equal("ktlua-results", again.format)
    assert.equal(10, again:count())
    assert.equal("small_kernel", again.task)
    local results = again:tune()
    assert.equal(10, #results)
    local first = kt.replay(FIXTURE):tune{search = {"random", seed = 3}, stop = {count = 10}}
    assert.equal(config_string(first:best().config), config_string(again:optimum().config))
    assert.equal(first:best().time_ms, again:optimum().time_ms)
  end)

  it("replays ktlua's journals, gzipped or not, as kt.load reads them", function()
    local tuner = kt.tuner()
    local journal = tmpname(".jsonl")
    local k = tuner:kernel{source = "__kernel void small_kernel(__global int *o) { o[0] = X; }",
                           name = "small_kernel", global = 1, args = {kt.array("int", 1):output()}}
    k:param("X", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
    tuner:tune(k, {search = "random", seed = 3, stop = {count = 10}, repeats = 1, journal = journal})
    tuner:close()
    assert.is_true(os.execute(("gzip -c %s > %s.gz"):format(journal, journal)))
    for _, path in ipairs({journal, journal .. ".gz"}) do
      local again = kt.replay(path)
      assert.equal("ktlua-journal", again.format)
      assert.equal(10, again:count())
      assert.equal("small_kernel", again.task)
      assert.equal(10, #again:tune())
      assert.equal(10, #kt.load(path))
    end
    os.remove(journal)
    os.remove(journal .. ".gz")
  end)

  it("scores a search: optimum / best found, and its mean over the budget", function()
    local rec = kt.replay(FIXTURE)
    local results = rec:tune{search = "exhaustive", stop = {count = 2}} -- 1.8 ms, then 3.8 ms
    local reached, score = rec:score(results)
    assert.near(1.5 / 1.8, reached, 1e-12)
    assert.near(1.5 / 1.8, score, 1e-12)
    -- over a budget of 4, the search that ended after 2 keeps its best
    reached, score = rec:score(results, 4)
    assert.near(1.5 / 1.8, score, 1e-12)
    local all = rec:tune()
    reached, score = rec:score(all)
    assert.equal(1, reached)
    assert.near((17 * 1.5 / 1.8 + 5) / 22, score, 1e-12)
  end)

  it("refuses results of another space when scoring", function()
    if not DATASET then return pending(WHY) end
    local rec = kt.replay(FIXTURE)
    local other = kt.replay(DATASET):tune{stop = {count = 1}}
    assert.has_error(function() rec:score(other) end,
      "bad argument #1 to 'score' (the results are not of this recording's space)")
  end)

  it("replays a real dataset", function()
    if not DATASET then return pending(WHY) end
    local rec = kt.replay(DATASET)
    assert.equal(4092, rec:count())
    assert.equal("NVIDIA GeForce RTX 3090", rec.device)
    assert.equal(318, rec:records():summary().statuses.runtime_failed)
    assert.near(8.7142, rec:optimum().time_ms, 1e-4)
  end)

  describe("errors", function()
    it("names a missing file", function()
      assert.has_error(function() kt.replay("spec/fixtures/nothing.json") end,
        "cannot read spec/fixtures/nothing.json: No such file or directory")
    end)

    it("says where a file is not JSON", function()
      local rec, err = replay_text('{"tune_params": {"a": [1, 2]},\n "cache": {"1": {"a": 1, "time": 2.0,}}}')
      assert.is_nil(rec)
      assert.equal("FILE: JSON: line 2, column 38: expected a member name in quotes", err)
    end)

    it("names a file that is neither format", function()
      assert.same({nil, "FILE: neither ktlua's results (JSON, CSV or journal) nor T4 results, KTT results or a Kernel Tuner cache"},
        {replay_text('{"results": []}')})
    end)

    it("refuses records of a space without parameters, in every format", function()
      local journal = "spec/fixtures/fuzz/journal_no_parameters.jsonl" -- once memcpy(NULL, ...)
      assert.has_error(function() kt.replay(journal) end,
        journal .. ": a recorded space needs at least one parameter")
      assert.same({nil, "FILE: a recorded space needs at least one parameter"},
        {replay_text('{"tune_params": {}, "tune_params_keys": [], "cache": {"x": {"time": 1.0}}}')})
      assert.same({nil, "FILE: a recorded space needs at least one parameter"},
        {replay_text('{"format": "ktlua-results", "task": "t", "parameters": [], ' ..
          '"results": [{"index": 0, "config": {}, "status": "ok", "time_ms": 1}]}')})
      assert.equal(1, #kt.load(journal)) -- results need no space to be read
    end)

    it("names a record whose value is not one of the parameter's", function()
      assert.same({nil, "FILE: cache entry '3': a = 3 is not one of the parameter's values (tune_params)"},
        {replay_text('{"tune_params": {"a": [1, 2]}, "cache": {"3": {"a": 3, "time": 1.0}}}')})
    end)

    it("names the result of a ktlua file that is cut short", function()
      local head = '{"format": "ktlua-results", "task": "t", "parameters": [{"name": "a", "values": [1, 2]}], '
      assert.same({nil, "FILE: result 2: no config"},
        {replay_text(head .. '"results": [{"index": 0, "config": {"a": 1}, "status": "ok", "time_ms": 1}, {"status": "ok"}]}')})
      assert.same({nil, "FILE: result 1: no known status"},
        {replay_text(head .. '"results": [{"index": 1, "config": {"a": 2}, "status": "fast"}]}')})
    end)

    it("rejects unknown tune options", function()
      assert.has_error(function() kt.replay(FIXTURE):tune{repeats = 3} end,
        "tune options: unknown field 'repeats' (expected one of: search, seed, stop, progress, output, lookahead, "
        .. "metrics, objective, maximize, seeds, prior)")
    end)
  end)

  describe("the JSON reader", function()
    it("reads escapes, unicode and numbers in every form", function()
      local rec = replay_text([[{"tune_params": {"name": ["caf\u00e9", "a\"b\\c", "\ud83d\ude00"],
        "x": [1e2, -0.5, 3]}, "cache": {
        "k1": {"name": "caf\u00e9", "x": 1e2, "time": 2.5E-1},
        "k2": {"name": "a\"b\\c", "x": -0.5, "time": 1},
        "k3": {"name": "\ud83d\ude00", "x": 3, "time": "RuntimeFailedConfig"}}}]])
      assert.same({{name = "name", values = {"café", 'a"b\\c', "😀"}}, {name = "x", values = {100.0, -0.5, 3}}},
        rec:space():params())
      assert.equal(3, rec:count())
      assert.equal(0.25, rec:optimum().time_ms)
      assert.equal("café", rec:optimum().config.name)
    end)
  end)
end)
