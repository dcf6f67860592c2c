-- Energy and power through NVML (core/device/energy.h, tune option energy): with
-- the stand-in CUDA driver and the stand-in NVML (spec/support/fake_nvml.c),
-- whose energy counter counts 3 mJ per kernel launch, so that a run's
-- energy is exact; on PoCL, the error; on a CUDA device (the GPU machine),
-- real readings.
local kt = require "ktlua"
local files = require "spec.support.files"
local shell = require "spec.support.shell"
local fake_cuda = require "spec.support.fake_cuda"

local devices = kt.devices()
local opencl, cuda
for _, d in ipairs(devices) do
  if d.backend == "opencl" and not opencl then opencl = d end
  if d.backend == "cuda" and not cuda then cuda = d end
end

-- A kernel of one launch per run, over two configurations.
local KERNEL = [[
local c = kt.array("float", 64)
local k = tuner:kernel{ name = "k", global = 64, group = 8, args = { c:output() },
  source = 'extern "C" __global__ void k(float *c) {}' }
k:param("X", { 1, 2 })
]]

describe("energy with a stand-in driver and NVML (spec/support/fake_nvml.c)", function()
  local missing = fake_cuda.missing()
  if missing then
    pending(missing)
    return
  end
  local lib = files.tmpname()
  setup(function()
    fake_cuda.build(lib)
    fake_cuda.build_nvml(lib)
  end)
  teardown(function() os.execute("rm -rf " .. lib) end)

  -- Runs script (after `local kt`, `tuner` on cuda:0 isolated unless ISO=0)
  -- with the stand-ins and env ("NAME=value ...", which may name others); its
  -- output and status. DIR: the stand-ins' folder, for the script's files.
  local function with_fake(script, env)
    local path = lib .. "/script.lua"
    files.write(path, 'local kt = require "ktlua"\n'
      .. 'local tuner = kt.tuner("cuda:0", { isolate = os.getenv("ISO") ~= "0" })\n' .. script)
    return shell.run(("DIR=%s KTLUA_LIBCUDA=%s/libcuda.so.1 KTLUA_LIBNVML=%s/libnvidia-ml.so.1 %s %s %s")
      :format(lib, lib, lib, env or "", shell.ktlua, path))
  end

  local TUNE = KERNEL .. [[
local r = tuner:tune(k, { repeats = 2, progress = false, energy = { window = 0.01 }, objective = "energy",
  metrics = { gflop_per_j = function(r) return 1e-9 / r.metrics.energy end } })
for i = 1, #r do
  local m = r[i].metrics
  print(r[i].config.X, r[i].status, ("%.6g %.6g %.6g"):format(m.energy, m.sm_clock, m.gflop_per_j),
        m.power > 0)
end
print(r.objective, r:best().metrics.energy)
]]

  it("records each configuration's energy per run, power and SM clock, in a device process", function()
    local out, code = with_fake(TUNE)
    assert.are.equal(0, code, out)
    assert.are.equal("1\tok\t0.003 1755 3.33333e-07\ttrue\n2\tok\t0.003 1755 3.33333e-07\ttrue\n"
      .. "energy\t0.003\n", out)
  end)

  it("and in the tuner's own process (isolate = false)", function()
    local out, code = with_fake(TUNE, "ISO=0")
    assert.are.equal(0, code, out)
    assert.are.equal("1\tok\t0.003 1755 3.33333e-07\ttrue\n2\tok\t0.003 1755 3.33333e-07\ttrue\n"
      .. "energy\t0.003\n", out)
  end)

  it("measures on every device of a tuner over several", function()
    local path = lib .. "/fleet.lua"
    files.write(path, 'local kt = require "ktlua"\nlocal tuner = kt.tuner({ "cuda:0", "cuda:1" })\n'
      .. KERNEL .. [[
k:param("Y", { 1, 2, 3 })
local r = tuner:tune(k, { repeats = 1, progress = false, energy = { window = 0.01 } })
local seen = {}
for i = 1, #r do seen[#seen + 1] = ("%.6g"):format(r[i].metrics.energy) end
print(#r, table.concat(seen, " "))]])
    local out, code = shell.run(("FAKE_CUDA_DEVICES=2 KTLUA_LIBCUDA=%s/libcuda.so.1 "
      .. "KTLUA_LIBNVML=%s/libnvidia-ml.so.1 %s %s"):format(lib, lib, shell.ktlua, path))
    assert.are.equal(0, code, out)
    assert.are.equal("6\t" .. ("0.003 "):rep(5) .. "0.003\n", out)
  end)

  it("divides the window's energy among its runs, of two kernels each", function()
    local out, code = with_fake([[
local c = kt.array("float", 64)
local src = 'extern "C" __global__ void a(float *c) {} extern "C" __global__ void b(float *c) {}'
local a = tuner:kernel{ name = "a", global = 64, group = 8, args = { c:output() }, source = src }
local b = tuner:kernel{ name = "b", global = 64, group = 8, args = { c:inout() }, source = src }
local both = tuner:composition{ name = "ab", kernels = { a, b } }
local r = tuner:tune(both, { repeats = 1, progress = false, energy = { window = 0.01 } })
print(r[1].status, r[1].launches, ("%.6g"):format(r[1].metrics.energy))]], "FAKE_NVML_MJ=5")
    assert.are.equal(0, code, out)
    assert.are.equal("ok\t2\t0.01\n", out)
  end)

  it("reads a counter that steps every 25 ms between its steps, over a window of 4 steps at least",
     function()
    -- A window of 1 ms would see no step, or one: 0 W, or 25 times the power.
    local out, code = with_fake(KERNEL .. [[
local r = tuner:tune(k, { repeats = 1, progress = false, energy = { window = 0.001 } })
for i = 1, #r do
  local m = r[i].metrics
  print(m.power > 80 and m.power < 120, m.energy > 0, m.sm_clock)
end]], "FAKE_NVML_STEP_MS=25 FAKE_NVML_MW=100000")
    assert.are.equal(0, code, out)
    assert.are.equal("true\ttrue\t1755.0\ntrue\ttrue\t1755.0\n", out)
  end)

  it("restores between the window's runs the arrays kernels read and write, not their outputs",
     function()
    -- 100 mJ per copy on the device: a restore of c between runs would add 0.1 J to each.
    local out, code = with_fake([[
local a, c = kt.array("float", 64), kt.array("float", 64)
local src = 'extern "C" __global__ void k(float *a, float *c) {}'
local out_only = tuner:kernel{ name = "k", global = 64, group = 8, args = { a:input(), c:output() },
                               source = src }
local both = tuner:kernel{ name = "k", global = 64, group = 8, args = { a:input(), c:inout() },
                           source = src }
for _, k in ipairs({ out_only, both }) do
  local r = tuner:tune(k, { repeats = 1, progress = false, energy = { window = 0.01 } })
  print(r[1].status, ("%.6g"):format(r[1].metrics.energy))
end]], "FAKE_NVML_COPY_MJ=100")
    assert.are.equal(0, code, out)
    assert.are.equal("ok\t0.003\nok\t0.103\n", out)
  end)

  it("integrates the power where the GPU has no energy counter", function()
    local out, code = with_fake(KERNEL .. [[
local r = tuner:tune(k, { repeats = 1, progress = false, energy = { window = 0.02 } })
for i = 1, #r do
  local m = r[i].metrics
  print(("%.6g %.6g"):format(m.power, m.sm_clock), m.energy > 0)
end]], "FAKE_NVML_NO_ENERGY=1 FAKE_NVML_MW=120000")
    assert.are.equal(0, code, out)
    assert.are.equal("120 1755\ttrue\n120 1755\ttrue\n", out)
  end)

  it("carries the metrics to the files, the journal, the database and replays", function()
    local out, code = with_fake(KERNEL .. [[
local dir = os.getenv("DIR") .. "/"
local db = kt.db(dir .. "e.db")
local r = tuner:tune(k, { repeats = 1, progress = false, energy = { window = 0.01 }, objective = "energy",
  output = { dir .. "e.csv", dir .. "e.json", { dir .. "t4.json", "t4" } }, journal = dir .. "e.jsonl",
  db = db, size = { n = 64 } })
local entry = db:list{ kernel = "k" }[1]
print(entry.objective, entry.rank, ("%.6g %.6g"):format(entry.metrics.energy, entry.metrics.sm_clock),
      entry.metrics.power == r:best().metrics.power)
for _, file in ipairs({ "e.csv", "e.json", "t4.json", "e.jsonl" }) do
  local back = kt.load(dir .. file)
  print(file, #back, ("%.6g %.6g"):format(back[1].metrics.energy, back[1].metrics.sm_clock))
end
local rec = kt.replay(dir .. "t4.json")
local again = rec:tune{ search = "exhaustive", objective = "energy", progress = false }
print(again.objective, ("%.6g"):format(again:best().metrics.energy))
local t4 = io.open(dir .. "t4.json"):read("a")
-- the energy as the others print it: the stand-in's counter follows the clock, so the last
-- digits of the value depend on how busy the machine is
local energy = t4:match('{"name":"energy","value":([^,]+),"unit":"J"}')
print(energy and ("%.6g"):format(tonumber(energy)) == "0.003",
      t4:match('{"name":"sm_clock","value":1755,"unit":"MHz"}') ~= nil,
      t4:match('{"name":"power","value":[^,]+,"unit":"W"}') ~= nil)]])
    assert.are.equal(0, code, out)
    assert.are.equal(table.concat({ "energy\t1\t0.003 1755\ttrue", "e.csv\t2\t0.003 1755", "e.json\t2\t0.003 1755",
      "t4.json\t2\t0.003 1755", "e.jsonl\t2\t0.003 1755", "energy\t0.003", "true\ttrue\ttrue", "" }, "\n"),
      out)
  end)

  it("measures nothing, and records no energy, unless asked", function()
    local out, code = with_fake(KERNEL .. [[
local r = tuner:tune(k, { repeats = 1, progress = false })
print(r[1].status, r[1].metrics)]], "KTLUA_LIBNVML=/nonexistent/libnvidia-ml.so.1")
    assert.are.equal(0, code, out)
    assert.are.equal("ok\tnil\n", out)
  end)

  -- The error of a tuning with energy, before its first configuration.
  local function refused(env)
    local out, code = with_fake(KERNEL .. [[
local ok, err = pcall(tuner.tune, tuner, k, { repeats = 1, progress = false, energy = true })
print(err)]], env)
    assert.are.equal(0, code, out)
    return out
  end

  it("says why where NVML is missing, fails to start or cannot measure", function()
    local prefix = "energy on cuda:0 (Fake GPU): "
    assert.are.equal(prefix .. "NVML (libnvidia-ml.so.1, NVIDIA's driver) cannot be loaded from KTLUA_LIBNVML=/nonexistent/libnvidia-ml.so.1: "
      .. "/nonexistent/libnvidia-ml.so.1: cannot open shared object file: No such file or directory\n",
      refused("KTLUA_LIBNVML=/nonexistent/libnvidia-ml.so.1"))
    assert.are.equal(prefix .. "nvmlInit_v2 failed: Driver Not Loaded (NVML error 9)\n", refused("FAKE_NVML_INIT=9"))
    assert.are.equal(prefix .. "GPU 0000:00:00.0 has no energy counter, and its power cannot be read: "
      .. "nvmlDeviceGetPowerUsage failed: Not Supported (NVML error 3)\n",
      refused("FAKE_NVML_NO_ENERGY=1 FAKE_NVML_NO_POWER=1"))
    assert.are.equal(prefix .. "nvmlInit_v2 failed: Driver Not Loaded (NVML error 9)\n",
      refused("ISO=0 FAKE_NVML_INIT=9"))
  end)
end)

describe("energy on an OpenCL device", function()
  if not opencl then
    pending("no OpenCL device here")
    return
  end

  -- In a process of its own: an in-process tuner could not start device processes after it.
  it("is refused, naming why, isolated or not; other tunings go on", function()
    local path = files.tmpname()
    files.write(path, ([[
local kt = require "ktlua"
for _, isolate in ipairs({ true, false }) do
  local tuner = kt.tuner(%q, { isolate = isolate })
  local c = kt.array("float", 64)
  local k = tuner:kernel{ name = "k", global = 64, group = 8, args = { c:output() },
    source = "__kernel void k(__global float *c) { c[get_global_id(0)] = 1; }" }
  print(select(2, pcall(tuner.tune, tuner, k, { repeats = 1, progress = false, energy = true })))
  local r = tuner:tune(k, { repeats = 1, progress = false })
  print(r[1].status, r[1].metrics)
  tuner:close()
end]]):format(opencl.id))
    local out, code = shell.run(("%s %s"):format(shell.ktlua, path))
    os.remove(path)
    assert.are.equal(0, code, out)
    local refusal = ("energy on %s (%s): energy is measured through NVML on NVIDIA GPUs driven by "
      .. "CUDA; this device's backend is opencl"):format(opencl.id, opencl.name)
    assert.are.equal(("%s\nok\tnil\n"):format(refusal):rep(2), out)
  end)
end)

describe("tune options.energy", function()
  local tuner = opencl and kt.tuner(opencl.id)
  local function check(opts, message)
    local c = kt.array("float", 8)
    local k = tuner:kernel{ name = "k", global = 8, args = { c:output() },
      source = "__kernel void k(__global float *c) {}" }
    assert.has_error(function() tuner:tune(k, opts) end, message)
  end
  if not tuner then
    pending("no OpenCL device here")
    return
  end

  it("checks its value", function()
    check({ energy = 1 }, "tune options.energy: expected true, false or {window = seconds}, got number")
    check({ energy = { window = 0 } }, "tune options.energy.window: expected 0.001 to 3600 seconds, got 0.0")
    check({ energy = { windows = 1 } },
      "tune options.energy: unknown field 'windows' (expected one of: window)")
  end)

  it("keeps its metrics' names and tells how to measure them", function()
    check({ energy = true, metrics = { power = function() return 1 end } },
      "tune options.metrics: the name 'power' is taken (energy = true measures it)")
    check({ objective = "energy" }, "tune options.objective: 'energy' is measured with energy = true")
    check({ objective = "joules", energy = true, metrics = { gflop_per_j = function() return 1 end } },
      "tune options.objective: expected 'kernel', 'kernel+host', the name of a metric (metrics: gflop_per_j; "
        .. "energy = true: energy, power, sm_clock) or a function(result, cfg), got 'joules'")
  end)
end)

describe("energy on a CUDA device", function()
  if not cuda then
    pending("no CUDA device here; scripts/gpu-check.sh runs these")
    return
  end

  it("reads NVML around each configuration's window, isolated or not", function()
    for _, isolate in ipairs({ true, false }) do
      local tuner = kt.tuner(cuda.id, { isolate = isolate })
      local n = 1 << 22
      local a, c = kt.array("float", n):random(1), kt.array("float", n)
      local k = tuner:kernel{ name = "scale", global = n, group = 256, args = { a:input(), c:output() },
        source = 'extern "C" __global__ void scale(const float *a, float *c) {'
          .. ' int i = blockIdx.x * blockDim.x + threadIdx.x; c[i] = 2 * a[i]; }' }
      local r = tuner:tune(k, { repeats = 3, progress = false, energy = true })
      local m = r[1].metrics
      assert.are.equal("ok", r[1].status, r[1].error)
      assert.is_true(m.energy > 0 and m.energy < 1, tostring(m.energy))
      assert.is_true(m.power > 10 and m.power < 2000, tostring(m.power))
      assert.is_true(m.sm_clock > 100 and m.sm_clock < 5000, tostring(m.sm_clock))
      tuner:close()
    end
  end)
end)
