-- Results that can be trusted: a tuning that ran nothing writes nothing,
-- nothing that did not run is recorded, files that contradict themselves
-- are refused, numbers that become integers are range-checked, and sizes
-- no device can launch are refused before launch.
local kt = require "ktlua"
local files = require "spec.support.files"

local tuner = kt.tuner()

-- c[i] = i + V over 16 items, V from 0 to 5.
local function counter(values)
  local c = kt.array("float", 16)
  local k = tuner:kernel{ name = "count", global = 16, args = { c:output() }, source =
    "__kernel void count(__global float *c) { int i = get_global_id(0); c[i] = i + V; }" }
  k:param("V", values or { 0, 1, 2, 3, 4, 5 })
  return k, c
end

-- Output files that hold a whole tuning's results already.
local function outputs()
  local json, csv = files.tmpname(".json"), files.tmpname(".csv")
  local r = tuner:tune(counter(), { search = "exhaustive", repeats = 1, output = { json, csv } })
  assert.are.equal(6, #r)
  return { json, csv }, { files.read(json), files.read(csv) }
end

local function unchanged(paths, texts)
  for i, path in ipairs(paths) do
    assert.are.equal(texts[i], files.read(path))
    os.remove(path)
  end
end

describe("a tuning refused before its first configuration", function()
  it("leaves its output files as they were when its journal is locked by another tuning", function()
    local paths, texts = outputs()
    local journal = files.tmpname(".jsonl")
    local other, err = kt.tuner(), nil
    local k = counter()
    tuner:tune(k, { repeats = 1, journal = journal, stop = { count = 2 }, progress = function()
      if err then return end
      local ok, e = pcall(other.tune, other, counter(), { journal = journal, output = paths })
      assert.is_false(ok)
      err = e
    end })
    assert.matches("the journal .* is in use by another tuning", err)
    unchanged(paths, texts)
    os.remove(journal)
  end)

  it("leaves them as they were when resuming is refused because the kernel changed", function()
    local paths, texts = outputs()
    local journal = files.tmpname(".jsonl")
    tuner:tune(counter(), { repeats = 1, journal = journal, stop = { count = 2 } })
    local k = counter({ 0, 1, 2, 3, 4, 6 })
    local ok, err = pcall(tuner.tune, tuner, k, { journal = journal, resume = true, output = paths })
    assert.is_false(ok)
    assert.matches("cannot resume from .*: its parameters and values differ", err)
    unchanged(paths, texts)
    os.remove(journal)
  end)

  it("leaves them as they were on bad options, an empty space or a failed set-up", function()
    local paths, texts = outputs()
    assert.has_error(function() tuner:tune(counter(), { output = paths, search = "nope" }) end)
    local k = counter()
    k:constraint("V > 9")
    assert.has_error(function() tuner:tune(k, { output = paths }) end,
      "task count: no configuration satisfies the constraints")
    local k2, c = counter()
    k2:reference(c, function() error("no reference today") end)
    local ok, err = pcall(tuner.tune, tuner, k2, { output = paths })
    assert.is_false(ok)
    assert.matches("reference for output 1 of task count: .*no reference today", err)
    unchanged(paths, texts)
  end)

  it("creates no output file", function()
    local k, c = counter()
    k:reference(c, function() error("no reference today") end)
    local path = files.tmpname(".json")
    assert.has_error(function() tuner:tune(k, { output = path }) end)
    assert.is_false(files.exists(path))
  end)
end)

describe("a configuration that did not run", function()
  it("is not recorded when the reference raises, in the journal or anywhere", function()
    local k, c = counter()
    k:reference(c, function() error("no reference today") end)
    local journal = files.tmpname(".jsonl")
    assert.has_error(function() tuner:tune(k, { journal = journal }) end)
    assert.are.equal(1, #files.lines(journal)) -- the header alone
    assert.are.equal(0, #kt.load(journal))
    os.remove(journal)
  end)

  it("is not taken for the best by an online tuning whose step failed", function()
    local k, c = counter()
    local fail = true
    k:reference(c, function(ref)
      if fail then error("no reference today") end
      for i = 0, 15 do ref[i] = i + 1 end
    end)
    local on = tuner:online(k, { search = "exhaustive", validate = true })
    local ok, err = pcall(on.step, on)
    assert.is_false(ok)
    assert.matches("no reference today", err)
    assert.are.equal(0, #on:results())
    assert.is_nil(on:results():best())
    fail = false
    local step = on:step() -- the search goes on after the configuration it proposed
    assert.are.same({ "ok", 1 }, { step.status, step.config.V })
    assert.are.equal(1, #on:results())
    assert.are.equal(1, on:results():best().config.V)
  end)

  it("that failed like the ones before it is kept when the tuning stops for that", function()
    local o = kt.array("int", 16)
    local k = tuner:kernel{ name = "f", global = 16, args = { o:output() },
      source = "__kernel void f(__global int *o) { o[get_global_id(0)] = undeclared; }" }
    k:param("A", { 1, 2, 3, 4, 5, 6 })
    local journal, out = files.tmpname(".jsonl"), files.tmpname(".json")
    local ok, err = pcall(tuner.tune, tuner, k, { fail_fast = 3, journal = journal, output = out })
    assert.is_false(ok)
    assert.matches("the first 3 configurations all failed the same way", err)
    for _, path in ipairs({ journal, out }) do
      local r = kt.load(path)
      assert.are.equal(3, #r)
      assert.are.equal(3, r:summary().statuses.compile_failed)
      os.remove(path)
    end
  end)
end)

describe("a results file that contradicts itself", function()
  local dir = "spec/fixtures/fuzz/"
  local cases = {
    -- kt.load took the first, empty, list of parameters: every configuration read as {}
    { "results_two_parameters.json",
      'JSON: line 2, column 1: the member name "parameters" appears twice in an object' },
    { "results_two_values.json",
      'JSON: line 4, column 28: the member name "V" appears twice in an object' },
    { "results_journal_two_statuses.jsonl",
      'line 2: JSON: line 1, column 58: the member name "status" appears twice in an object' },
    { "results_t4_two_times.json",
      'JSON: line 5, column 99: the member name "runtimes" appears twice in an object' },
    { "results_cache_two_entries.json",
      'JSON: line 6, column 1: the member name "16" appears twice in an object' },
    { "results_index_contradicts.json",
      "results 1 and 2 contradict each other: index 0 is configuration V=0 in one and V=2 in the other" },
    -- a record again replaced the record of its index, of another configuration
    { "results_index_replaces_other.jsonl",
      "lines 3 and 4 contradict each other: index 1 is configuration V=1 in one and V=2 in the other" },
    -- a journal gives a configuration one index: one recorded again under another is refused
    { "results_again_takes_index.jsonl",
      "lines 3 and 4 contradict each other: configuration V=1 has index 1 in one and 2 in the other" },
    -- kt.load took both (V=1 at 0.5 and 0.125 ms), the replay one of them, saying nothing
    { "results_journal_two_indices.jsonl",
      "lines 3 and 4 contradict each other: configuration V=1 has index 1 in one and 2 in the other" },
  }

  it("is refused, naming the file and the member name given twice or the records", function()
    for _, case in ipairs(cases) do
      local path = dir .. case[1]
      for _, read in ipairs({ kt.load, kt.replay }) do
        local ok, err = pcall(read, path)
        assert.is_false(ok, path)
        assert.are.equal(path .. ": " .. case[2], err)
      end
    end
  end)

  it("is refused when a CSV gives one index two configurations", function()
    local path = files.tmpname(".csv")
    tuner:tune(counter(), { search = "exhaustive", repeats = 1, output = path })
    local text = files.read(path):gsub("\n1,", "\n0,", 1)
    files.write(path, text)
    assert.has_error(function() kt.load(path) end, path .. ": results 1 and 2 contradict each "
      .. "other: index 0 is configuration V=0 in one and V=1 in the other")
    os.remove(path)
  end)

  it("is refused by kt.json too, where a table would keep one of the two", function()
    assert.has_error(function() kt.json.decode('{"a": 1, "b": {"c": 1, "c": 2}}') end,
      'kt.json.decode: JSON: line 1, column 24: the member name "c" appears twice in an object')
  end)

  it("is not written by a resumed tuning whose space changed the indices", function()
    local journal = files.tmpname(".jsonl")
    tuner:tune(counter(), { journal = journal, seeds = { { V = 2 }, { V = 3 } }, stop = { count = 2 },
                            repeats = 1 })
    local k = counter()
    k:constraint("V >= 2") -- V = 2 was index 2, is 0 now
    local r = tuner:tune(k, { journal = journal, resume = true, search = "exhaustive", repeats = 1 })
    assert.are.equal(4, #r)
    -- written again whole: the header, the 2 under their new indices, 2 new
    assert.are.equal(5, #files.lines(journal))
    local back = kt.load(journal)
    assert.are.equal(4, #back)
    for i = 1, 4 do assert.are.equal(back[i].config.V - 2, back[i].index) end
    os.remove(journal)
  end)

  it("is not: a journal's record again of the same configuration replaces the first", function()
    local path = files.tmpname(".jsonl")
    files.write(path, table.concat({
      '{"format":"ktlua-journal","version":1,"task":"count","kernels":["count"],'
        .. '"parameters":[{"name":"V","values":[0,1,2]}]}',
      '{"index":1,"config":{"V":1},"status":"ok","time_ms":0.5,"samples_ms":[0.5]}',
      '{"index":1,"config":{"V":1},"status":"out_of_bounds","time_ms":null}', "" }, "\n"))
    local r = kt.load(path)
    assert.are.equal(1, #r)
    assert.are.equal("out_of_bounds", r[1].status)
    os.remove(path)
  end)
end)

describe("a configuration recorded more than once", function()
  local dir = "spec/fixtures/fuzz/"

  -- The replay kept the last record of each, saying nothing.
  it("in a results file: kt.load keeps each record, a replay the last, and both say so", function()
    local path = dir .. "results_two_indices.json" -- V=0 at 0.25, 0.75, 1 ms; V=1 at 0.5, 0.125
    local r = kt.load(path)
    local times = {}
    for i = 1, #r do times[i] = r[i].time_ms end
    assert.are.same({ 0.25, 0.5, 0.125, 0.75, 1.0 }, times)
    assert.are.equal("configuration V=0 is recorded 3 times (first as result 1, last as result 5), "
      .. "and 1 other configuration more than once: kt.load keeps each record", r.notice)
    local rec = kt.replay(path)
    local records = rec:records()
    assert.are.same({ 2, 1.0, 0.125 }, { #records, records[1].time_ms, records[2].time_ms })
    local notice = "configuration V=0 is recorded 3 times (first as result 1, last as result 5), "
      .. "and 1 other configuration more than once: the replay uses the last record of each"
    assert.are.same({ notice, notice }, { rec.notice, records.notice })
    assert.are.equal("replay of count: 2 configurations (ktlua-results); " .. notice, tostring(rec))
    assert.are.equal(1.0, rec:tune{ search = "exhaustive" }[1].time_ms)
  end)

  it("in a file that records each configuration once: nothing is said", function()
    local r = kt.load(dir .. "results_metrics_nonfinite.json")
    local rec = kt.replay(dir .. "results_metrics_nonfinite.json")
    assert.are.same({ nil, nil }, { r.notice, rec.notice })
  end)
end)

describe("a Kernel Tuner cache", function()
  local t4 = [[{"schema_version":"1.0.0","metadata":{"timeunit":"milliseconds"},"results":[
{"timestamp":"2026-11-26 07:57:43+00:00","configuration":{"V":0},"times":{"runtimes":[0.25]},"invalidity":"correct","correctness":1,"measurements":[{"name":"time","value":0.25,"unit":"milliseconds"}],"objectives":["time"]},
{"timestamp":"2026-11-26 07:57:44+00:00","configuration":{"V":1},"times":{"runtimes":[0.5]},"invalidity":"correct","correctness":1,"measurements":[{"name":"time","value":0.5,"unit":"milliseconds"}],"objectives":["time"]},
{"timestamp":"2026-11-26 07:57:45+00:00","configuration":{"V":0},"times":{"runtimes":[0.75]},"invalidity":"correct","correctness":1,"measurements":[{"name":"time","value":0.75,"unit":"milliseconds"}],"objectives":["time"]}]}]]

  it("is not written with one key twice, which its readers would take one of", function()
    local path, cache = files.tmpname(".json"), files.tmpname(".json")
    files.write(path, t4)
    local r = kt.load(path) -- a T4 file may record a configuration twice
    assert.are.equal(3, #r)
    assert.has_error(function() r:write(cache, "kernel-tuner-cache") end, "results 1 and 3 would "
      .. "be one entry of a Kernel Tuner cache (key '0'): a cache keeps one record per configuration")
    assert.is_false(files.exists(cache))
    assert.are.equal("configuration V=0 is recorded 2 times (results 1 and 3): kt.load keeps each "
      .. "record", r.notice)
    r:write(path, "json") -- ktlua's own results keep both, under their places in the file
    assert.are.equal(3, #kt.load(path))
    os.remove(path)
  end)
end)

describe("a number that becomes an integer", function()
  local dir = "spec/fixtures/fuzz/"

  it("from a file is range-checked: unknown where it may be, else refused", function()
    local r = kt.load(dir .. "results_ktt_huge_usage.json") -- 1e300, -1e300, 2^63, 0.5: unknown
    assert.are.same({ { kernel = "k", constant_bytes = 16 } }, r[1].resources)
    assert.are.equal(0, kt.load(dir .. "results_huge_checks.json"):summary().input_checks)
    for name, want in pairs({
      ["results_ktt_ok_no_time.json"] = "result 1: Ok but no TotalDuration",
      ["results_ktt_grid_overflow.json"] = "result 1: ComputationResults[1]: its grid of blocks "
        .. "overflows a size",
      ["results_launch_count_huge.jsonl"] = "line 2: launched[1] is not a kernel's launch",
      ["results_launch_kernel_fraction.jsonl"] = "line 2: launched[1] is not a kernel's launch",
    }) do
      assert.has_error(function() kt.load(dir .. name) end, dir .. name .. ": " .. want)
    end
  end)

  it("as a bound of array:random is within the type's range, and no NaN", function()
    local a = kt.array("int", 4)
    for _, bounds in ipairs({ { 0 / 0, 0 }, { -1e19, -1e19 }, { 0, 1e10 } }) do
      local ok, err = pcall(function() a:random(1, bounds[1], bounds[2]) end)
      assert.is_false(ok)
      assert.matches("bad argument #%d to 'random' %(expected a number from %-2147483648%.0 to "
        .. "2147483647%.0 for int, got", err)
    end
    assert.has_error(function() kt.array("float", 2):random(1, 0, 1 / 0) end,
      "bad argument #3 to 'random' (expected a finite number, got inf)")
    local within = kt.array("int", 64):random(1, -5, -3):totable()
    assert.are.same({ -5, -3 }, { math.min(table.unpack(within)), math.max(table.unpack(within)) })
    local l = kt.array("long", 64):random(3, math.mininteger, math.maxinteger)
    local u = kt.array("ulong", 64):random(3)
    assert.are_not.equal(l[0], l[1])
    assert.are_not.equal(u[0], u[1])
  end)

  it("as a time limit is at most 1e9 seconds, and no NaN", function()
    local k = counter()
    for _, limit in ipairs({ 0 / 0, 1e300 }) do
      assert.has_error(function() tuner:tune(k, { time_limit = limit }) end)
    end
    assert.has_error(function() tuner:tune(k, { time_limit = { factor = 0 / 0 } }) end,
      "tune options.time_limit: factor and floor must be positive")
    assert.has_error(function() tuner:tune(k, { time_limit = { floor = 1e300 } }) end,
      "tune options.time_limit: factor and floor: at most 1e9 (times, seconds)")
    assert.has_error(function() tuner:tune(k, { time_limit = 1e300 }) end,
      "tune options.time_limit: at most 1e9 seconds, got 1e+300")
    local ok, err = pcall(require("ktlua.spawn").run, { "true" }, { timeout = 0 / 0 })
    assert.is_false(ok)
    assert.matches("spawn options.timeout: expected 0 %(no limit%) to 1e9 seconds, got %-?nan", err)
  end)
end)

describe("a global size no launch can hold", function()
  local src = "__kernel void f(__global int *o) { if (get_global_id(0) == 0) o[0] = 1; }"

  local function kernel(def)
    local o = kt.array("int", 16)
    def.name, def.source, def.args = "f", src, { o:output() }
    local k = tuner:kernel(def)
    k:param("A", { 1 })
    k:reference(o, function(ref) ref[0] = 1 end)
    return k
  end

  it("is refused before launch, naming the kernel and the sizes", function()
    -- 2^62 x 2^62 was recorded invalid_output on PoCL; 2^62 x 4 (2^64: 0) ok
    local cases = {
      { { global = { 1 << 62, 1 << 62 } }, "kernel f: the global size 4611686018427387904 x "
        .. "4611686018427387904 is more work-items than a launch can count (2^64 - 1)" },
      { { global = { 1 << 62, 4 }, group = { 1, 1 } }, "kernel f: the global size "
        .. "4611686018427387904 x 4 with local size 1 x 1 is more work-items than a launch can "
        .. "count (2^64 - 1)" },
      { { global = { 1 << 62, 8 }, group = { 1, 8 }, notation = "cuda" }, "kernel f: the global "
        .. "size 4611686018427387904 x 8 with local size 1 x 8 is more work-items than a launch "
        .. "can count (2^64 - 1)" },
    }
    for _, case in ipairs(cases) do
      local r = tuner:tune(kernel(case[1]), { repeats = 1 })
      assert.are.same({ "launch_failed", case[2], 0 }, { r[1].status, r[1].error, r[1].launches })
    end
  end)

  it("is refused before a launcher's launch too", function()
    local k = kernel({ global = 16 })
    k:launcher(function(run) run:launch(k, { global = { 1 << 62, 1 << 62 } }) end)
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.equal("launch_failed", r[1].status)
    assert.matches("kernel f: the global size 4611686018427387904 x 4611686018427387904 is more "
      .. "work%-items than a launch can count %(2%^64 %- 1%)", r[1].error)
  end)
end)

describe("a timestamp", function()
  local dir = "spec/fixtures/fuzz/"

  -- "23:03:9.3e18" was read as 3e17 seconds, which gmtime_r could not
  -- break down: the writers formatted what it left (ASan: a stack buffer
  -- overflow; the plain build wrote "916688984-1009236380-22040 04:.000000").
  it("that names no time is unknown, and written as unknown, never as garbage", function()
    local path = dir .. "results_t4_timestamps.json" -- 9.3e18 seconds, February 31st, hour 24, ...
    local r = kt.load(path)
    local finished = {}
    for i = 1, #r do finished[i] = r[i].finished or false end
    assert.are.same({ false, 1795679863.25, false, false, false, false, false, false }, finished)
    local good = "2026-11-26 07:57:43.250000+00:00"
    for format, key in pairs({ t4 = "timestamp", json = "finished", ["kernel-tuner-cache"] = "timestamp" }) do
      local out = files.tmpname(".json")
      r:write(out, format)
      local stamps = {}
      for s in files.read(out):gmatch('"' .. key .. '":"([^"]*)"') do stamps[#stamps + 1] = s end
      table.sort(stamps)
      -- a cache's entries need one: "" is unknown there
      local want = format == "kernel-tuner-cache" and { "", "", "", "", "", "", "", good } or { good }
      assert.are.same(want, stamps, format)
      local back = kt.load(out)
      for i = 1, #back do
        assert.are.equal(back[i].config.V == 1 and 1795679863.25 or nil, back[i].finished, format)
      end
      os.remove(out)
    end
  end)
end)
