-- The exchange formats around the one results model: T4 results (read and
-- written, checked against Kernel Tuner's T4 schemas), KTT's JSON results
-- (read), Kernel Tuner cache files (written, checked against Kernel Tuner's
-- cache schema, and read back, boolean and mixed parameter values too).
local kt = require "ktlua"
local files = require "spec.support.files"
local datasets = require "spec.support.datasets"

local T4_PNPOLY, WHY = datasets.path("formats/pnpoly_RTX_3090_T4.json.gz")
local T4_CONV = datasets.path("formats/convolution_RTX_3090_T4.json.gz")
local KTT_PNPOLY = datasets.path("formats/pnpoly_RTX_3090_KTT.json.gz")
local SCHEMAS = "spec/fixtures/schemas/"
local T4_SCHEMAS = { SCHEMAS .. "T4-1.0.0-results-schema.json", SCHEMAS .. "T4-1.0.0-metadata-schema.json" }
local CACHE_SCHEMA = SCHEMAS .. "kernel-tuner-cache-1.1.0-schema.json"

-- What Debian's python3-jsonschema says of a file: "valid", or its errors.
local function validate(schema, path)
  local p = assert(io.popen(("/usr/bin/python3 spec/support/validate_schema.py %q %q 2>&1"):format(schema, path)))
  local out = p:read("a")
  p:close()
  return (out:gsub("%s+$", ""))
end

local function statuses(results)
  local t = {}
  for name, n in pairs(results:summary().statuses) do
    if n > 0 then t[name] = n end
  end
  return t
end

-- Loads text written to a temporary file: the results, or nil and the
-- error with the file's name as FILE.
local function load_text(text, how)
  local path = files.tmpname(".json")
  files.write(path, text)
  local ok, r = pcall(how or kt.load, path)
  os.remove(path)
  if ok then return r end
  return nil, (r:gsub(path:gsub("%p", "%%%0"), "FILE"))
end

local function datasets_it(name, fn)
  if T4_PNPOLY then it(name, fn) else pending(name .. " (" .. WHY .. ")") end
end

describe("T4 results", function()
  datasets_it("load: every record, its status, times and timestamp", function()
    local r = kt.load(T4_PNPOLY)
    assert.equal(4092, #r)
    assert.same({ ok = 3762, runtime_failed = 330 }, statuses(r))
    local best = r:best()
    assert.equal(7.224192, best.time_ms)
    assert.same({ between_method = 0, block_size_x = 256, tile_size = 20, use_method = 2 }, best.config)
    local first = r[1]
    assert.same({ between_method = 0, block_size_x = 32, tile_size = 1, use_method = 0 }, first.config)
    assert.equal(46.268736, first.time_ms)
    assert.equal(10, #first.samples_ms)
    assert.equal(43.293697357177734, first.samples_ms[1])
    assert.equal(0.03068055957555771, first.build_ms)
    -- "2023-01-26 01:05:09.730633+00:00"
    assert.near(1674695109.730633, first.finished, 1e-5)
    local failed
    for _, x in ipairs(r:list()) do
      if x.status ~= "ok" then failed = failed or x end
    end
    assert.equal("runtime_failed", failed.status)
    assert.equal("RuntimeFailedConfig", failed.error)
    assert.is_nil(failed.time_ms)
  end)

  datasets_it("load compile failures as such", function()
    local r = kt.load(T4_CONV)
    assert.equal(6768, #r)
    assert.same({ ok = 5220, compile_failed = 1426, runtime_failed = 122 }, statuses(r))
    local best = r:best()
    assert.equal(0.526624, best.time_ms)
    assert.same({ block_size_x = 64, block_size_y = 2, filter_height = 15, filter_width = 15,
                  read_only = 0, tile_size_x = 1, tile_size_y = 8, use_padding = 1 }, best.config)
  end)

  datasets_it("replay: the recorded configurations, the optimum, a search", function()
    local rec = kt.replay(T4_PNPOLY)
    assert.equal("t4", rec.format)
    assert.equal(4092, #rec)
    assert.equal(7.224192, rec:optimum().time_ms)
    local res = rec:tune{ search = "exhaustive" }
    assert.equal(4092, #res)
    assert.equal(7.224192, res:best().time_ms)
    local reached = rec:score(res)
    assert.equal(1, reached)
  end)

  datasets_it("write files that Kernel Tuner's T4 schemas accept, and read them back whole", function()
    local r = kt.load(T4_CONV)
    local path = files.tmpname(".json")
    r:write(path, "t4")
    for _, schema in ipairs(T4_SCHEMAS) do assert.equal("valid", validate(schema, path)) end
    local back = kt.load(path)
    assert.equal(#r, #back)
    assert.same(statuses(r), statuses(back))
    for _, i in ipairs({ 1, 2, 100, 4000, 6768 }) do
      local a, b = r[i], back[i]
      assert.same(a.config, b.config)
      assert.equal(a.status, b.status)
      assert.equal(a.time_ms, b.time_ms)
      assert.same(a.samples_ms, b.samples_ms)
      assert.equal(a.error, b.error)
      assert.near(a.finished, b.finished, 1e-5)
      assert.near(a.overheads_ms.total, b.overheads_ms.total, 1e-9)
      assert.near(a.build_ms, b.build_ms, 1e-12)
    end
    os.remove(path)
  end)

  it("say what is wrong with a malformed file, and where", function()
    local ok = '{"configuration": {"a": 1}, "times": {}, "invalidity": "correct", "correctness": 1,'
      .. ' "measurements": [{"name": "time", "value": 2.5, "unit": "ms"}]}'
    local r = assert(load_text('{"schema_version": "1.0.0", "results": [' .. ok .. ']}'))
    assert.equal(2.5, r[1].time_ms)
    assert.same({ nil, "FILE: result 2: invalidity 'wrong' is none of T4's (correct, compile, runtime, "
      .. "timeout, correctness, constraints)" },
      { load_text('{"results": [' .. ok .. ', ' .. ok:gsub('"correct"', '"wrong"') .. ']}') })
    assert.same({ nil, "FILE: result 1 is correct but has no time measurement" },
      { load_text('{"results": [' .. ok:gsub('"time"', '"GFLOPs"') .. ']}') })
    assert.same({ nil, "FILE: metadata.timeunit 'fortnights' is no unit of time" },
      { load_text('{"metadata": {"timeunit": "fortnights"}, "results": [' .. ok .. ']}') })
    assert.same({ nil, "FILE: result 1: the value of a is not a number, a string or a boolean" },
      { load_text('{"results": [' .. ok:gsub('"a": 1', '"a": null') .. ']}') })
    -- a configuration that broke constraints is none; microseconds are converted
    local us = ok:gsub('"ms"', '"us"')
    r = assert(load_text('{"results": [' .. us .. ', ' .. ok:gsub('"correct"', '"constraints"'):gsub('"a": 1', '"a": 2') .. ']}'))
    assert.equal(1, #r)
    assert.equal(0.0025, r[1].time_ms)
  end)
end)

describe("KTT results", function()
  datasets_it("load: records, statuses, sizes, resources, overheads", function()
    local r = kt.load(KTT_PNPOLY)
    assert.equal(4092, #r)
    assert.equal("Pnpoly", r.task)
    assert.equal("NVIDIA GeForce RTX 3090", r.device)
    assert.same({ ok = 3818, runtime_failed = 274 }, statuses(r))
    local best = r:best()
    assert.equal(7.224192, best.time_ms)
    assert.same({ VERTICES = 600, BLOCK_SIZE_X = 256, TILE_SIZE = 20, BETWEEN_METHOD = 0, USE_METHOD = 2 },
                best.config)
    local first = r[1]
    assert.equal(46.268736, first.time_ms)
    assert.same({ 625000 }, first.global) -- CUDA: blocks, as ktlua's CUDA kernels count them
    assert.same({ 32 }, first.group)
    assert.same({ kernel = "Pnpoly", registers = 21, shared_bytes = 0, local_bytes = 0,
                  constant_bytes = 4800, max_threads = 1024 }, first.resources[1])
    assert.near(100.450552, first.build_ms, 1e-9)
    assert.near(20.68137, first.overheads_ms.data, 1e-9)
    assert.near(46.268736 + 121.169533 - 0.032993, first.overheads_ms.total, 1e-9)
    local failed
    for _, x in ipairs(r:list()) do
      if x.status ~= "ok" then failed = failed or x end
    end
    assert.equal("runtime_failed", failed.status)
    assert.equal("ComputationFailed", failed.error)
  end)

  datasets_it("replay, and go on to T4 and to a Kernel Tuner cache", function()
    local rec = kt.replay(KTT_PNPOLY)
    assert.equal("ktt", rec.format)
    assert.equal(4092, #rec)
    assert.same({ 256, 20, 2 }, { rec:optimum().config.BLOCK_SIZE_X, rec:optimum().config.TILE_SIZE,
                                  rec:optimum().config.USE_METHOD })
    local res = rec:tune{ search = "random", seed = 3, stop = { count = 50 } }
    assert.equal(50, #res)
    local cache = files.tmpname(".json")
    kt.load(KTT_PNPOLY):write(cache, "kernel-tuner-cache", { problem_size = 20000000 })
    assert.equal("valid", validate(CACHE_SCHEMA, cache))
    local back = kt.replay(cache)
    assert.equal("kernel-tuner-cache", back.format)
    assert.equal(4092, #back)
    assert.equal(7.224192, back:optimum().time_ms)
    local written = kt.json.read(cache)
    assert.equal("Pnpoly", written.kernel_name)
    assert.equal(20000000, written.problem_size) -- a number stays one: Kernel Tuner compares them so
    assert.same({ "VERTICES", "BLOCK_SIZE_X", "TILE_SIZE", "BETWEEN_METHOD", "USE_METHOD" }, written.tune_params_keys)
    assert.equal(7.224192, written.cache["600,256,20,0,2"].time)
    os.remove(cache)
  end)

  it("say what is wrong with a malformed file", function()
    local rec = '{"Configuration": [{"Name": "A", "Value": 1, "ValueType": "Int"}], "Status": "Ok", '
      .. '"TotalDuration": 5.0, "ComputationResults": []}'
    local r = assert(load_text('{"Metadata": {"TimeUnit": "Milliseconds"}, "Results": [' .. rec .. ']}'))
    assert.equal(5, r[1].time_ms)
    assert.same({ nil, "FILE: result 1: status 'Melted' is none of KTT's" },
      { load_text('{"Metadata": {}, "Results": [' .. rec:gsub('"Ok"', '"Melted"') .. ']}') })
    assert.same({ nil, "FILE: result 1 has no Configuration" },
      { load_text('{"Metadata": {}, "Results": [{"Status": "Ok"}]}') })
    assert.same({ nil, "FILE: Metadata.TimeUnit 'Ages' is no unit of time" },
      { load_text('{"Metadata": {"TimeUnit": "Ages"}, "Results": [' .. rec .. ']}') })
  end)
end)

describe("Kernel Tuner caches", function()
  local MIXED = [[{"device_name": "D", "kernel_name": "k", "tune_params_keys": ["b", "m", "f", "s"],
    "tune_params": {"b": [true, false], "m": [0, 1, true, false], "f": [0.5, 1.0, 1e-05], "s": ["x", "y"]},
    "cache": {
      "True,0,0.5,x": {"b": true, "m": 0, "f": 0.5, "s": "x", "time": 3.0},
      "False,True,1.0,y": {"b": false, "m": true, "f": 1.0, "s": "y", "time": 1.0},
      "True,False,1e-05,x": {"b": true, "m": false, "f": 1e-05, "s": "x", "time": "RuntimeFailedConfig"},
      "True,1,1e-05,y": {"b": true, "m": 1, "f": 1e-05, "s": "y", "time": "InvalidConfig"}}}]]

  it("load boolean and mixed parameter values as they are", function()
    local r = assert(load_text(MIXED))
    assert.equal(3, #r)
    assert.same({ { name = "b", values = { true, false } }, { name = "m", values = { 0, 1, true, false } },
                  { name = "f", values = { 0.5, 1.0, 1e-05 } }, { name = "s", values = { "x", "y" } } },
                r.params)
    assert.same({ b = false, m = true, f = 1.0, s = "y" }, r:best().config)
    assert.equal("runtime_failed", r[3].status)
    local rec = assert(load_text(MIXED, kt.replay))
    assert.equal(3, #rec)
    assert.same({ b = false, m = true, f = 1.0, s = "y" }, rec:optimum().config)
    assert.equal(1, rec:tune{ search = "exhaustive" }:best().time_ms)
  end)

  it("write keys as Kernel Tuner makes them, and read back what ktlua knew", function()
    local r = assert(load_text(MIXED))
    local path = files.tmpname(".json")
    r:write(path, "kernel-tuner-cache", { problem_size = { 64, 2 } })
    assert.equal("valid", validate(CACHE_SCHEMA, path))
    local c = kt.json.read(path)
    assert.same({ 64, 2 }, c.problem_size)
    local keys = {}
    for key in pairs(c.cache) do keys[#keys + 1] = key end
    table.sort(keys)
    assert.same({ "False,True,1.0,y", "True,0,0.5,x", "True,False,1e-05,x" }, keys)
    assert.equal("RuntimeFailedConfig", c.cache["True,False,1e-05,x"].time)
    assert.equal("runtime_failed", c.cache["True,False,1e-05,x"].ktlua_status)
    assert.equal("time", c.objective)
    local back = kt.load(path)
    assert.same(r.params, back.params)
    assert.same(statuses(r), statuses(back))
    os.remove(path)
  end)

  it("hold None, a list or a dict as the text Python's str() makes of it (issue 28)", function()
    local r = load_text('{"tune_params": {"b": [1, null, [2, "x"], {"k": true}]}, "cache": {}}')
    assert.same({ 1, "None", "[2, 'x']", "{'k': True}" }, r.params[1].values)
  end)
end)

describe("results:write", function()
  local tuner = kt.tuner()
  local out = kt.array("float", 32)
  local k = tuner:kernel{ source = [[__kernel void f(__global float *o) {
      o[get_global_id(0)] = FLAG ? V : -1; }]],
    name = "f", global = 32, group = 1, args = { out:output() } }
  k:param("WG", { 4, 8 }, { group_x = "mul" })
  k:param("V", { 1, 2 })
  k:param("FLAG", { false, true })
  k:reference(out, function(ref) ref:fill(1) end)
  local r = tuner:tune(k, { repeats = 3 })

  it("tunes boolean parameters: kernels see 0 and 1, results keep booleans", function()
    assert.equal(8, #r)
    assert.same({ ok = 2, invalid_output = 6 }, statuses(r))
    assert.equal(true, r:best().config.FLAG)
    assert.equal(1, r:best().config.V)
    assert.is_true(math.abs(r:best().finished - os.time()) < 600)
  end)

  it("writes a tuning as T4 and as a Kernel Tuner cache, which read back the same", function()
    local t4, cache, csv = files.tmpname(".json"), files.tmpname(".json"), files.tmpname(".csv")
    r:write(t4, "t4")
    r:write(cache, "kernel-tuner-cache", { problem_size = 32 })
    r:write(csv)
    for _, schema in ipairs(T4_SCHEMAS) do assert.equal("valid", validate(schema, t4)) end
    assert.equal("valid", validate(CACHE_SCHEMA, cache))
    for _, path in ipairs({ t4, cache, csv }) do
      local back = kt.load(path)
      assert.equal(8, #back, path)
      assert.same(statuses(r), statuses(back), path)
      assert.same(r:best().config, back:best().config, path)
      assert.equal(r:best().time_ms, back:best().time_ms, path)
      assert.same(r.params, back.params, path)
    end
    assert.equal(r.task, kt.load(t4).task)
    assert.equal(r.device, kt.load(t4).device)
    assert.equal(r.device, kt.load(cache).device)
    local c = kt.json.read(cache)
    assert.truthy(c.cache["4,1,True"])
    assert.equal("invalid_output", c.cache["4,1,False"].ktlua_status)
    os.remove(t4)
    os.remove(cache)
    os.remove(csv)
  end)

  it("names what is wrong with a format or an option", function()
    assert.has_error(function() r:write("x.json", "yaml") end,
      "unknown result format 'yaml' (expected csv, json, t4 or kernel-tuner-cache)")
    assert.has_error(function() r:write("x.json", "kernel-tuner-cache", { problem_size = { 1, 2, 3, 4 } }) end,
      "bad argument #3 to 'write' (problem_size must be a size or a list of 1 to 3 sizes)")
  end)
end)
