-- Hardware counters (tune options.profile, core/eval/profile.c and core/device/counters.c) and KTT's
-- profile-based searcher (search = "profile", core/search/search_profile.c). Everywhere: the options'
-- checks, the OpenCL error, and the searcher on recorded spaces with synthetic counters. Where
-- the CUDA headers, NVRTC and a C compiler are: the whole path through a stand-in CUDA driver
-- (spec/support/fake_cuda.c) and a stand-in CUPTI (spec/support/fake_cupti.c).
local kt = require "ktlua"
local shell = require "spec.support.shell"
local fake_cuda = require "spec.support.fake_cuda"

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p " .. d))
  return d
end

describe("tune options.profile", function()
  local n = 64
  local a, b = kt.array("float", n):random(1), kt.array("float", n)
  local opencl -- the OpenCL device: on a GPU machine kt.tuner() takes CUDA's
  for _, d in ipairs(kt.devices()) do
    if d.backend == "opencl" and not opencl then opencl = d.id end
  end
  local tuner = kt.tuner(opencl)
  local k = tuner:kernel{ name = "copy", global = { n }, group = { 1 }, args = { a:input(), b:output() },
    source = "__kernel void copy(__global const float *a, __global float *b) "
      .. "{ int i = get_global_id(0); b[i] = a[i]; }" }
  k:param("WG", { 1, 2 }, { group_x = "mul" })

  local function err(opts)
    local ok, e = pcall(tuner.tune, tuner, k, opts)
    assert.is_false(ok)
    return (tostring(e):gsub("^[^:]*:%d+: ", ""))
  end

  it("is a list of distinct counter names", function()
    assert.are.equal("tune options.profile: expected a list of counter names, got string",
      err{ profile = "dram__sectors_read.sum" })
    assert.are.equal("tune options.profile: expected a list of counter names (CUPTI's metrics, "
      .. "e.g. \"dram__bytes_read.sum\")", err{ profile = {} })
    assert.are.equal("tune options.profile[2]: expected a counter's name, got number",
      err{ profile = { "a__b.sum", 3 } })
    assert.are.equal("tune options.profile[2]: 'a__b.sum' is named twice",
      err{ profile = { "a__b.sum", "a__b.sum" } })
  end)

  it("says that only CUDA has counters, on an OpenCL device, before any configuration runs", function()
    local want = ("tune options.profile: hardware counters are CUDA's only (through CUPTI); "
      .. "%s (%s) is an OpenCL device"):format(tuner.device.id, tuner.device.name)
    assert.are.equal(want, err{ profile = { "dram__sectors_read.sum" }, progress = false })
    -- search = "profile" profiles its own counters, so it asks the same
    assert.are.equal(want, err{ search = "profile", progress = false })
  end)

  it("makes the counters it collects objectives, with dots in their names; names what else there is",
     function()
    local cuda_only = ("tune options.profile: hardware counters are CUDA's only (through CUPTI); "
      .. "%s (%s) is an OpenCL device"):format(tuner.device.id, tuner.device.name)
    -- accepted as objectives: the tuning goes on to say that this device has no counters
    assert.are.equal(cuda_only, err{ profile = { "dram__sectors_read.sum" }, objective = "dram__sectors_read.sum",
                                     maximize = true, progress = false })
    assert.are.equal(cuda_only, err{ search = "profile", objective = kt.profile_counters[2], progress = false })
    assert.are.equal("tune options.objective: expected 'kernel', 'kernel+host', the name of a metric "
      .. "(metrics: gflops; profile: dram__sectors_read.sum, l1tex__t_bytes.sum) or a function(result, cfg), "
      .. "got 'dram__bytes_read.sum'",
      err{ profile = { "dram__sectors_read.sum", "l1tex__t_bytes.sum" }, objective = "dram__bytes_read.sum",
           metrics = { gflops = function() return 1 end } })
    assert.are.equal("tune options.objective: expected 'kernel', 'kernel+host', the name of a metric "
      .. "or a function(result, cfg), got 'dram__bytes_read.sum'", err{ objective = "dram__bytes_read.sum" })
  end)

  it("lists the counters the profile searcher reads", function()
    assert.are.equal(23, #kt.profile_counters)
    assert.are.equal("dram__throughput.avg.pct_of_peak_sustained_elapsed", kt.profile_counters[1])
    assert.truthy(kt.searchers:find("profile", 1, true))
  end)
end)

-- A Kernel Tuner cache of an n x n space whose time follows its DRAM reads (a memory-bound
-- kernel: DRAM busy 90%), fastest at X = 11, Y = 4; with counters = false, no counters.
local function synthetic_space(n, counters)
  local parts, vals = {}, {}
  for i = 0, n - 1 do vals[#vals + 1] = tostring(i) end
  for x = 0, n - 1 do
    for y = 0, n - 1 do
      local reads = 1000 * (1 + (x - 11) ^ 2 + (y - 4) ^ 2)
      local extra = counters and (', "dram__sectors_read.sum": %d, '
        .. '"dram__throughput.avg.pct_of_peak_sustained_elapsed": 90'):format(reads) or ""
      parts[#parts + 1] = ('"%d,%d": {"X": %d, "Y": %d, "time": %.6f%s}'):format(x, y, x, y, reads / 1e5, extra)
    end
  end
  local path = os.tmpname() .. ".json"
  local f = assert(io.open(path, "w"))
  f:write(('{"device_name": "synthetic", "kernel_name": "k", "tune_params_keys": ["X", "Y"], '
    .. '"tune_params": {"X": [%s], "Y": [%s]}, "objective": "time", "cache": {%s}}')
    :format(table.concat(vals, ", "), table.concat(vals, ", "), table.concat(parts, ", ")))
  f:close()
  local rec = kt.replay(path)
  os.remove(path)
  return rec
end

describe("the profile searcher on recorded spaces", function()
  -- The mean fraction of the optimum reached (optimum / best found) over seeds 1 to 20.
  local function mean_reached(rec, search, budget)
    local sum = 0
    for seed = 1, 20 do
      sum = sum + rec:score(rec:tune{ search = { search, seed = seed }, stop = { count = budget } })
    end
    return sum / 20
  end

  it("is steered by the counters: it finds more of the optimum than random search", function()
    local rec = synthetic_space(16, true)
    local profile, random = mean_reached(rec, "profile", 25), mean_reached(rec, "random", 25)
    assert.is_true(profile > random * 1.2, ("profile %.3f, random %.3f"):format(profile, random))
  end)

  it("searches a space without counters as batches of random configurations, never twice", function()
    local rec = synthetic_space(8, false)
    local r = rec:tune{ search = { "profile", seed = 3, batch = 4 }, stop = { count = 40 } }
    assert.are.equal(40, #r)
    local seen = {}
    for i = 1, #r do
      assert.is_nil(seen[r[i].index])
      seen[r[i].index] = true
    end
    -- a seed gives the same search
    local again = rec:tune{ search = { "profile", seed = 3, batch = 4 }, stop = { count = 40 } }
    for i = 1, #r do assert.are.equal(r[i].index, again[i].index) end
    -- and it ends when the space does
    assert.are.equal(64, #rec:tune{ search = "profile" })
  end)

  it("checks its options", function()
    local rec = synthetic_space(4, true)
    assert.has_error(function() rec:tune{ search = { "profile", width = 3 } } end,
      "searcher 'profile' has no option 'width' (its options: batch, neighbors, random, distance, exp, "
        .. "react, cutoff)")
    assert.has_error(function() rec:tune{ search = { "profile", neighbors = 0, random = 0 } } end,
      "searcher 'profile': neighbors and random are both 0: no candidates")
  end)
end)

describe("hardware counters through a stand-in CUDA driver and CUPTI", function()
  local missing = fake_cuda.missing()
  if missing then
    pending(missing)
    return
  end
  local dir = tmpdir()
  local cupti_missing
  setup(function()
    fake_cuda.build(dir)
    cupti_missing = fake_cuda.build_cupti(dir)
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  -- Runs a script with both stand-ins (and env, "NAME=value ..."); its output and status.
  local function with_fakes(script, env)
    local path = dir .. "/script.lua"
    local f = assert(io.open(path, "w"))
    f:write('local kt = require "ktlua"\n', [[
local tuner = kt.tuner("cuda:0", { isolate = os.getenv("ISOLATE") ~= "0" })
local c = kt.array("float", 64)
local k = tuner:kernel{ name = "k", global = 64, group = 1, args = { c:output() },
                        source = 'extern "C" __global__ void k(float *c) {}' }
k:param("WG", { 1, 2, 4 }, { group_x = "mul" })
local READ, PCT = "dram__bytes_read.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed"
]], script)
    f:close()
    return shell.run(("KTLUA_LIBCUDA=%s/libcuda.so.1 KTLUA_LIBCUPTI=%s/libcupti.so %s %s %s")
      :format(dir, dir, env or "", shell.ktlua, path))
  end

  local READ_NAME = "dram__bytes_read.sum"

  local function needs_cupti()
    if cupti_missing then pending(cupti_missing) return true end
  end

  for _, isolate in ipairs({ "1", "0" }) do
    it("keeps each configuration's counters as metrics (" .. (isolate == "1" and "device process" or "in process") .. ")", function()
      if needs_cupti() then return end
      local out, code = with_fakes([[
local r = tuner:tune(k, { repeats = 1, progress = false, profile = { READ, PCT } })
for i = 1, #r do print(r[i].config.WG, r[i].status, r[i].metrics[READ], r[i].metrics[PCT]) end
local s = r:summary()
print(s.profiled, s.profile_passes, s.profile_ms > 0, r:best().metrics[READ])]], "ISOLATE=" .. isolate)
      assert.are.equal(0, code, out)
      -- one launch a run: 1000 (k + 1) with k the name's length modulo 10 (fake_cupti.c)
      assert.are.equal("1\tok\t1000.0\t9000.0\n2\tok\t1000.0\t9000.0\n4\tok\t1000.0\t9000.0\n"
        .. "3\t1\ttrue\t1000.0\n", out)
    end)
  end

  -- CUPTI 13's host object reads the counter availability image it was made with, by reference,
  -- when counters are added: one freed after cuptiProfilerHostInitialize crashed the first
  -- collection of every process on an H200 (fake_cupti.c fails where the image has changed).
  it("keeps the counter availability image while CUPTI's host object lives, tuning after tuning", function()
    if needs_cupti() then return end
    local out, code = with_fakes([[
for _, names in ipairs({ { READ }, { PCT, READ }, { READ } }) do
  local r = tuner:tune(k, { repeats = 1, progress = false, stop = { count = 1 }, profile = names })
  print(r[1].status, r[1].metrics[READ], r[1].metrics[PCT], r:summary().profiled)
end]])
    assert.are.equal(0, code, out)
    assert.are.equal("ok\t1000.0\tnil\t1\nok\t1000.0\t9000.0\t1\nok\t1000.0\tnil\t1\n", out)
  end)

  it("sums .sum counters over a launcher's launches and averages the others", function()
    if needs_cupti() then return end
    local out, code = with_fakes([[
k:launcher(function(run) run:launch(k) run:launch(k) end)
local r = tuner:tune(k, { repeats = 1, progress = false, stop = { count = 1 }, profile = { READ, PCT } })
print(r[1].metrics[READ], r[1].metrics[PCT])]])
    assert.are.equal(0, code, out)
    -- ranges 0 and 1: 1000 + 1001 summed; 9000 and 9001 averaged
    assert.are.equal("2001.0\t9000.5\n", out)
  end)

  it("carries the counters to result files, journals and T4 measurements", function()
    if needs_cupti() then return end
    local out, code = with_fakes(([[
local r = tuner:tune(k, { repeats = 1, progress = false, profile = { READ }, journal = "%s/j.jsonl",
                          output = { "%s/r.json", "%s/r_t4.json" } })
for _, f in ipairs({ "%s/j.jsonl", "%s/r.json", "%s/r_t4.json" }) do
  local back = kt.load(f)
  print(#back, back[1].metrics[READ], back:best().metrics[READ])
end]]):format(dir, dir, dir, dir, dir, dir))
    assert.are.equal(0, code, out)
    assert.are.equal(("3\t1000.0\t1000.0\n"):rep(3), out)
  end)

  it("takes a counter as the objective, minimised or maximised, and stores the best by it", function()
    if needs_cupti() then return end
    -- WG launches a run: READ sums to 1000 (WG 1), 2001 (WG 2), 4006 (WG 4)
    local out, code = with_fakes(([[
k:launcher(function(run, cfg) for _ = 1, cfg.WG do run:launch(k) end end)
local db = kt.db("%s/c.db")
for _, most in ipairs({ false, true }) do
  local r = tuner:tune(k, { repeats = 1, progress = false, profile = { READ, PCT }, objective = READ,
                            maximize = most, db = db, size = { n = most and 2 or 1 } })
  local e = db:best{ kernel = "k", device = tuner, size = { n = most and 2 or 1 }, objective = READ }
  print(r.objective, r.maximize, r:best().config.WG, r:best().metrics[READ], e.config.WG,
        e.metrics[READ], e.metrics[PCT], #db:list{ size = { n = most and 2 or 1 } })
end]]):format(dir))
    assert.are.equal(0, code, out)
    assert.are.equal(("%s\tfalse\t1\t1000.0\t1\t1000.0\t9000.0\t3\n"
      .. "%s\ttrue\t4\t4006.0\t4\t4006.0\t9001.5\t3\n"):format(READ_NAME, READ_NAME), out)
  end)

  it("names an unknown counter, and stops the tuning there", function()
    if needs_cupti() then return end
    local out, code = with_fakes([[
print(select(2, pcall(tuner.tune, tuner, k, { progress = false, profile = { READ, "nocounter" } })))]])
    assert.are.equal(0, code, out)
    assert.truthy(out:find("profile: unknown counter 'nocounter' (not a metric of CUPTI for chip FK100; "
      .. "`ncu --query-metrics` lists them)", 1, true), out)
  end)

  it("says where counters cannot be read, once, and goes on timing", function()
    if needs_cupti() then return end
    local out, code = with_fakes([[
local r = tuner:tune(k, { repeats = 1, progress = false, profile = { READ } })
print(#r, r:summary().statuses.ok, r[1].metrics, r:summary().profiled)]], "FAKE_CUPTI_PRIVILEGES=0")
    assert.are.equal(0, code, out)
    local said = "hardware counters cannot be read here (the GPU's profiling is kept for administrators: "
      .. "NVreg_RestrictProfilingToAdminUsers): cuptiRangeProfilerEnable failed: CUPTI error 35: "
      .. "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES; tuned without counters"
    local _, times = out:gsub("cannot be read here", "")
    assert.are.equal(1, times, out)
    assert.truthy(out:find("ktlua: " .. said, 1, true), out)
    assert.truthy(out:find("3\t3\tnil\t0\n", 1, true), out)
  end)

  it("says so when CUPTI cannot be loaded", function()
    local out, code = with_fakes([[
print(select(2, pcall(tuner.tune, tuner, k, { progress = false, profile = { READ } })))]],
      "KTLUA_LIBCUPTI=/nonexistent/libcupti.so")
    assert.are.equal(0, code, out)
    assert.truthy(out:find("hardware counters: CUPTI cannot be loaded from "
      .. "KTLUA_LIBCUPTI=/nonexistent/libcupti.so: /nonexistent/libcupti.so: cannot open shared object file",
      1, true), out)
  end)
end)
