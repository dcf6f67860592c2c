-- User metrics and objectives: values in results, tables and files,
-- journals; the objective (maximised or not) choosing the best, on a
-- device and in replays of recorded numbers.
local kt = require "ktlua"
local files = require "spec.support.files"

local tuner = kt.tuner()
local DATASET, WHY = require("spec.support.datasets").path("gemm_RTX_3090.json.gz")

local n = 256

-- c[i] = a[i] * X: the same work for every X, so "score" below decides.
local function scale()
  local a = kt.array("float", n):fill(1)
  local c = kt.array("float", n)
  local k = tuner:kernel{ name = "scale", global = n, args = { a:input(), c:output() },
    source = "__kernel void scale(__global const float *a, __global float *c) "
          .. "{ int i = get_global_id(0); c[i] = a[i] * X; }" }
  k:param("X", { 1, 2, 3, 4 })
  return k
end

-- A made-up quality per configuration, so that the best is known.
local SCORE = { 5, 9, 7, 2 }
local function score(_, cfg) return SCORE[cfg.X] end
local function per_ms(r) return 1 / r.time_ms end

local function by_index(results)
  local t = {}
  for i = 1, #results do t[results[i].index] = results[i] end
  return t
end

describe("metrics", function()
  it("are computed per configuration, shown in the table and written to CSV and JSON", function()
    local csv, json = files.tmpname(".csv"), files.tmpname(".json")
    local r = tuner:tune(scale(), { repeats = 1, metrics = { score = score, per_ms = per_ms },
                                    output = { csv, json } })
    for i = 1, #r do
      assert.are.equal(SCORE[r[i].config.X], r[i].metrics.score)
      assert.are.equal(1 / r[i].time_ms, r[i].metrics.per_ms)
    end
    -- the time stays the objective
    assert.are.equal("kernel", r.objective)
    local fastest = r[1]
    for i = 2, #r do if r[i].time_ms < fastest.time_ms then fastest = r[i] end end
    assert.are.equal(fastest.index, r:best().index)
    -- CSV: a column per metric after the error; JSON: "metrics" of each result
    local lines = files.lines(csv)
    -- (then, on a CPU device, the columns of its waits for a processor: issue 45)
    local header = lines[1]:gsub(",waited_ms", ""):gsub(",crowded$", "")
    local row = lines[3]
    for _ in lines[1]:match(',"score"(.*)$'):gmatch(",") do row = row:gsub(",[^,]*$", "") end
    assert.matches(',error,"per_ms","score"$', header)
    assert.matches(",9$", row) -- X = 2
    assert.matches('"metrics":{"per_ms":[^}]*,"score":9}', files.read(json))
    for _, path in ipairs({ csv, json }) do
      local back = by_index(kt.load(path))
      for i = 1, #r do
        assert.are.equal(SCORE[r[i].config.X], back[r[i].index].metrics.score)
        assert.is_true(math.abs(back[r[i].index].metrics.per_ms / r[i].metrics.per_ms - 1) < 1e-8)
      end
      os.remove(path)
    end
    local out = files.tmpname(".txt")
    local f = assert(io.open(out, "w"))
    r:print{ out = f }
    f:close()
    local text = files.read(out)
    os.remove(out)
    assert.matches("#%s+X%s+status%s+time_ms%s+per_ms%s+score%s+runs", text)
  end)

  it("choose the best as the objective says, maximised or not", function()
    local r = tuner:tune(scale(), { repeats = 1, metrics = { score = score },
                                    objective = "score", maximize = true })
    assert.are.equal(2, r:best().config.X)
    assert.are.equal("score", r.objective)
    assert.is_true(r.maximize)
    r = tuner:tune(scale(), { repeats = 1, metrics = { score = score }, objective = "score" })
    assert.are.equal(4, r:best().config.X)
    -- a function as the objective: its values are the metric "objective"
    r = tuner:tune(scale(), { repeats = 1, maximize = true,
                              objective = function(_, cfg) return -math.abs(cfg.X - 3) end })
    assert.are.equal(3, r:best().config.X)
    assert.are.equal(0, r:best().metrics.objective)
    -- a results file keeps the objective: kt.load chooses alike
    local json = files.tmpname(".json")
    r = tuner:tune(scale(), { repeats = 1, metrics = { score = score }, objective = "score",
                              maximize = true, output = json })
    assert.are.equal(2, kt.load(json):best().config.X)
    os.remove(json)
  end)

  it("are chosen by kt.load's objective: a CSV file names none, any file may get another", function()
    local csv, json = files.tmpname(".csv"), files.tmpname(".json")
    local r = tuner:tune(scale(), { repeats = 1, metrics = { score = score }, objective = "score",
                                    maximize = true, output = { csv, json } })
    local fastest = r[1]
    for i = 2, #r do if r[i].time_ms < fastest.time_ms then fastest = r[i] end end
    local plain = kt.load(csv) -- by the time
    assert.are.same({ "kernel", false }, { plain.objective, plain.maximize })
    assert.are.equal(fastest.index, plain:best().index)
    local back = kt.load(csv, { objective = "score", maximize = true })
    assert.are.same({ "score", true, 2 }, { back.objective, back.maximize, back:best().config.X })
    assert.are.equal(4, kt.load(csv, { objective = "score" }):best().config.X)
    -- and back to the time from a file whose objective is a metric
    back = kt.load(json, { objective = "kernel" })
    assert.are.same({ "kernel", false, fastest.index }, { back.objective, back.maximize, back:best().index })
    assert.are.equal(2, kt.load(json, { max_bytes = 1 << 20 }):best().config.X)
    assert.has_error(function() kt.load(csv, { objective = "speed" }) end,
      "load options.objective: expected 'kernel' or a recorded metric (score), got 'speed'")
    assert.has_error(function() kt.load(csv, { maximize = true }) end,
      "load options.maximize: give the objective to maximise")
    assert.has_error(function() kt.load(csv, { max_bytes = 0 }) end,
      "bad argument #2 to 'load' (max_bytes must be a positive number of bytes)")
    os.remove(csv)
    os.remove(json)
  end)

  it("drive the searchers: a searcher hears the objective's cost", function()
    local costs = {}
    local walk = { init = function(self, space) self.i, self.n = -1, space:count() end,
                   next = function(self) self.i = self.i + 1; return self.i < self.n and { self.i } or {} end,
                   report = function(_, index, result) costs[index] = result.cost end }
    local r = tuner:tune(scale(), { repeats = 1, search = walk, metrics = { score = score },
                                    objective = "score", maximize = true })
    assert.are.same({ [0] = -5, [1] = -9, [2] = -7, [3] = -2 }, costs)
    assert.are.equal(1, r:best().index)
    -- the stop conditions too: no improvement after the best (X = 2) for 2 more
    r = tuner:tune(scale(), { repeats = 1, search = "exhaustive", metrics = { score = score },
                              objective = "score", maximize = true, stop = { no_improvement = 2 } })
    assert.are.equal(4, #r)
    assert.are.equal("no_improvement", r.stopped)
  end)

  it("are carried through journals and resumes", function()
    local journal = files.tmpname(".jsonl")
    local calls = 0
    local function counted(res, cfg) calls = calls + 1; return score(res, cfg) end
    local opts = { repeats = 1, journal = journal, search = "exhaustive", metrics = { score = counted },
                   objective = "score", maximize = true, stop = { count = 2 } }
    tuner:tune(scale(), opts)
    assert.are.equal(2, calls)
    assert.matches('"metrics":{"score":9}', files.read(journal))
    opts.stop, opts.resume = nil, true
    local r = tuner:tune(scale(), opts)
    assert.are.equal(4, calls) -- the two journaled ones are not computed again
    assert.are.equal(5, r[1].metrics.score)
    assert.are.equal(2, r:best().config.X)
    local back = kt.load(journal)
    assert.are.equal(4, #back)
    assert.are.equal(2, back:best().config.X)
    os.remove(journal)
  end)

  it("refuse what does not fit, and stop a tuning on an error in a metric", function()
    local k = scale()
    assert.has_error(function() tuner:tune(k, { objective = "speed" }) end,
      "tune options.objective: expected 'kernel', 'kernel+host', the name of a metric or a "
      .. "function(result, cfg), got 'speed'")
    assert.has_error(function() tuner:tune(k, { objective = "gflop/s", metrics = { { "gflops", function() return 1 end },
                                                                           { "q'\"", function() return 2 end } } }) end,
      "tune options.objective: expected 'kernel', 'kernel+host', the name of a metric (metrics: gflops, q'\") "
      .. "or a function(result, cfg), got 'gflop/s'")
    assert.has_error(function() tuner:tune(k, { maximize = true }) end,
      "tune options.maximize: give the objective to maximise")
    assert.has_error(function() tuner:tune(k, { objective = "kernel", maximize = true }) end,
      "tune options.maximize: the time (objective 'kernel') is minimised")
    assert.has_error(function() tuner:tune(k, { metrics = { score = 1 } }) end,
      "tune options.metrics.score: expected a function(result, cfg), got number")
    assert.has_error(function()
      tuner:tune(k, { metrics = { score = score }, objective = "score", stop = { target_ms = 1 } })
    end, "tune options.stop.target_ms: a target time needs the time as the objective (objective is 'score')")
    local ok, err = pcall(tuner.tune, tuner, k, { repeats = 1,
      metrics = { bad = function(_, cfg) if cfg.X == 3 then error("no score for 3") end end } })
    assert.is_false(ok)
    assert.matches("^metric bad: spec/metrics_spec.lua:%d+: no score for 3", err)
    ok, err = pcall(tuner.tune, tuner, k, { repeats = 1, metrics = { bad = function() return "fast" end } })
    assert.matches("metric bad: returned a string, expected a number (or nil)", err, 1, true)
  end)
end)

describe("objectives in replays", function()
  -- A Kernel Tuner cache whose entries hold an energy and an efficiency
  -- beside the time, as Kernel Tuner's energy observers record them.
  local cache = [[{"tune_params_keys": ["A"], "tune_params": {"A": [1, 2, 3, 4]},
    "cache": {
      "1": {"A": 1, "time": 1.0, "energy": 0.40, "GFLOPS/W": 10.0, "timestamp": "x"},
      "2": {"A": 2, "time": 2.0, "energy": 0.25, "GFLOPS/W": 12.5},
      "3": {"A": 3, "time": 3.0, "energy": 0.30, "GFLOPS/W": 20.0},
      "4": {"A": 4, "time": "RuntimeFailedConfig"}}}]]
  local path

  setup(function()
    path = files.tmpname(".json")
    files.write(path, cache)
  end)
  teardown(function() os.remove(path) end)

  it("optimise any recorded number, minimised or maximised", function()
    local rec = kt.replay(path)
    assert.are.equal(1, rec:tune{ search = "exhaustive" }:best().config.A)
    local r = rec:tune{ search = "exhaustive", objective = "energy" }
    assert.are.equal(2, r:best().config.A)
    assert.are.equal(0.25, r:best().metrics.energy)
    assert.are.equal(3, rec:tune{ search = "exhaustive", objective = "GFLOPS/W", maximize = true }:best().config.A)
    -- and metrics of their own, from what was recorded
    r = rec:tune{ search = "exhaustive", metrics = { joules_per_ms = function(res) return res.metrics.energy / res.time_ms end },
                  objective = "joules_per_ms" }
    assert.are.equal(3, r:best().config.A)
    assert.are.equal(0.30 / 3.0, r:best().metrics.joules_per_ms)
    assert.has_error(function() rec:tune{ objective = "power" } end,
      "tune options.objective: expected 'kernel', 'kernel+host', the name of a metric "
      .. "(recorded: energy, GFLOPS/W) or a function(result, cfg), got 'power'")
  end)

  it("give the optimum and the score of a search by an objective", function()
    local rec = kt.replay(path)
    assert.are.equal(1, rec:optimum().config.A)
    assert.are.equal(2, rec:optimum{ objective = "energy" }.config.A)
    assert.are.equal(3, rec:optimum{ objective = "GFLOPS/W", maximize = true }.config.A)
    assert.are.equal(1, rec:optimum{ objective = "kernel" }.config.A)
    -- exhaustive goes A = 1, 2, 3, 4: the score is the mean of optimum over best so far
    local r = rec:tune{ search = "exhaustive", objective = "energy" }
    local reached, score = rec:score(r)
    assert.are.same({ 1, (0.25 / 0.40 + 3) / 4 }, { reached, score })
    reached, score = rec:score(r, 1)
    assert.are.same({ 0.25 / 0.40, 0.25 / 0.40 }, { reached, score })
    r = rec:tune{ search = "exhaustive", objective = "GFLOPS/W", maximize = true }
    reached, score = rec:score(r, 2)
    assert.are.same({ 12.5 / 20, (10 / 20 + 12.5 / 20) / 2 }, { reached, score })
    -- by another objective than the search's
    reached, score = rec:score(r, 0, { objective = "kernel" })
    assert.are.same({ 1, 1 }, { reached, score })
    assert.has_error(function() rec:optimum{ objective = "power" } end,
      "optimum options.objective: expected 'kernel' or a recorded metric (energy, GFLOPS/W), got 'power'")
    assert.has_error(function() rec:optimum{ maximize = true } end,
      "optimum options.maximize: give the objective to maximise")
    assert.has_error(function() rec:score(r, 0, { objective = "kernel", maximize = true }) end,
      "score options.maximize: the time (objective 'kernel') is minimised")
    r = rec:tune{ search = "exhaustive", objective = function(res) return res.time_ms end }
    assert.has_error(function() rec:score(r) end, "rec:score: no record of the recording has a "
      .. "value of the objective 'objective' (give it as score options.objective)")
  end)

  it("optimise the metrics of ktlua's own results files", function()
    local json = files.tmpname(".json")
    tuner:tune(scale(), { repeats = 1, metrics = { score = score }, output = json })
    local rec = kt.replay(json)
    os.remove(json)
    assert.are.equal(2, rec:tune{ search = "exhaustive", objective = "score", maximize = true }:best().config.X)
    assert.are.equal(4, rec:tune{ search = "exhaustive", objective = "score" }:best().config.X)
  end)

  it("maximise GFLOP/s over a recorded GEMM", function()
    if not DATASET then return pending(WHY) end
    local rec = kt.replay(DATASET)
    local records, most = rec:records(), nil
    for i = 1, #records do
      local g = records[i].metrics and records[i].metrics["GFLOP/s"]
      if g and (not most or g > most.metrics["GFLOP/s"]) then most = records[i] end
    end
    local r = rec:tune{ search = "exhaustive", objective = "GFLOP/s", maximize = true }
    assert.are.equal(most.index, r:best().index)
    -- GFLOP/s is work over time here: its most is the fastest, and its least is not
    assert.are.equal(rec:optimum().index, most.index)
    assert.are_not.equal(most.index, rec:tune{ search = "exhaustive", objective = "GFLOP/s" }:best().index)
    -- a searcher on a budget goes by it too
    local b = rec:tune{ search = "bestfirst", seed = 1, stop = { count = 500 }, objective = "GFLOP/s", maximize = true }
    local seen = 0
    for i = 1, #b do seen = math.max(seen, b[i].metrics and b[i].metrics["GFLOP/s"] or 0) end
    assert.are.equal(seen, b:best().metrics["GFLOP/s"])
  end)
end)
