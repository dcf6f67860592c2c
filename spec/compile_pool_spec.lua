-- Compiler processes (core/device/compile_pool.c, core/device/compile_worker.c): compiles run in a pool of
-- processes that give program binaries, which the device process loads. On PoCL here; CUDA
-- through NVRTC with a stand-in driver (spec/support/fake_cuda.c).
local kt = require "ktlua"
local shell = require "spec.support.shell"
local files = require "spec.support.files"

-- Eight configurations; SCALE == 3 does not compile, every one warns.
local source = [[
__kernel void k(__global const float *a, __global float *c) {
  int i = get_global_id(0);
#if SCALE == 3
  not_a_declared_name;
#endif
  c[i] = a[i] * SCALE; }
#warning kept with the program
]]

-- A tuning of `source` by tuner options opts; the results.
local function tune(opts)
  local tuner = kt.tuner("opencl", opts)
  local n = 16
  local a = kt.array("float", n):fill(function(i) return i end)
  local c = kt.array("float", n)
  local k = tuner:kernel{ name = "k", global = n, group = 1, args = { a:input(), c:output() },
    source = source }
  k:param("SCALE", { 1, 2, 3, 4 })
  k:param("WG", { 1, 2 }, { group_x = "mul" })
  local r = tuner:tune(k, { search = "random", seed = 7, repeats = 1, progress = false })
  local cache = tuner:cache()
  tuner:close()
  return r, cache
end

-- Each result as "SCALE WG status", in the order tried.
local function outline(r)
  local lines = {}
  for i = 1, #r do
    lines[i] = ("%d %d %s"):format(r[i].config.SCALE, r[i].config.WG, r[i].status)
  end
  return lines
end

describe("compiler processes", function()
  it("give the results of compiling in the device process, for the same seed", function()
    local with = tune({ cache = false, compile_workers = 2 })
    local without = tune({ cache = false, compile_workers = 0 })
    assert.are.same(outline(without), outline(with))
    assert.are.equal(8, #with)
    local failed = 0
    for _, line in ipairs(outline(with)) do
      if line:match("compile_failed$") then failed = failed + 1 end
    end
    assert.are.equal(2, failed)
  end)

  it("count in the summary: one per compile thread that ran, none with compile_workers = 0",
     function()
    local r, cache = tune({ cache = false, build_threads = 1, compile_workers = 1 })
    assert.are.equal(1, r:summary().compile_workers)
    assert.are.equal(8, r:summary().compiles)
    assert.are.equal(1, cache.workers)
    r, cache = tune({ cache = false, build_threads = 1, compile_workers = 0 })
    assert.are.equal(0, r:summary().compile_workers)
    assert.are.equal(8, r:summary().compiles)
    assert.are.equal(0, cache.workers)
  end)

  it("are none by default on OpenCL, where they measured slower than the device process", function()
    local r, cache = tune({ cache = false, build_threads = 2 })
    assert.are.equal(0, r:summary().compile_workers)
    assert.are.equal(0, cache.workers)
    assert.are.equal(8, r:summary().compiles)
  end)

  it("keep the compiler's warnings and errors in the results", function()
    for _, workers in ipairs({ 2, 0 }) do
      local r = tune({ cache = false, compile_workers = workers })
      for i = 1, #r do
        local log = r[i].build_log or r[i].error or ""
        assert.matches("kept with the program", log, 1, true)
        if r[i].config.SCALE == 3 then
          assert.are.equal("compile_failed", r[i].status)
          assert.matches("not_a_declared_name", log, 1, true)
        else
          assert.are.equal("ok", r[i].status)
        end
      end
    end
  end)

  it("reject a count that is no count, a time limit below 0, and an in-process tuner", function()
    local ok, err = pcall(kt.tuner, "opencl", { compile_workers = -1 })
    assert.is_false(ok)
    assert.matches("tuner options.compile_workers: expected 0 (compile in the device process) "
                   .. "to 4096 processes", err, 1, true)
    ok, err = pcall(kt.tuner, "opencl", { compile_workers = "two" })
    assert.is_false(ok)
    assert.matches("compile_workers", err, 1, true)
    ok, err = pcall(kt.tuner, "opencl", { compile_timeout = -1 })
    assert.is_false(ok)
    assert.matches("tuner options.compile_timeout: expected 0 (no limit) to 10^6 seconds", err, 1,
                   true)
    ok, err = pcall(kt.tuner, "opencl", { compile_workers = 1, isolate = false })
    assert.is_false(ok)
    assert.matches("tuner options.compile_workers: compiler processes need isolate = true", err,
                   1, true)
  end)
end)

describe("compiler processes in a tuning of its own process", function()
  local dir = files.tmpname()
  setup(function() assert(os.execute("mkdir -p " .. dir)) end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  -- Runs a tuning of `source` in ktlua with the environment env; its summary's counts, then
  -- "SCALE WG status reason" per result (the reason followed by " [infrastructure]" where it
  -- was no compiler's verdict).
  local function run(env, opts)
    local path = dir .. "/tune.lua"
    files.write(path, ([[
local kt = require "ktlua"
local tuner = kt.tuner("opencl", %s)
local a = kt.array("float", 16):fill(function(i) return i end)
local c = kt.array("float", 16)
local k = tuner:kernel{ name = "k", global = 16, group = 1, args = { a:input(), c:output() },
  source = %q }
k:param("SCALE", { 1, 2, 3, 4 })
k:param("WG", { 1, 2 }, { group_x = "mul" })
local r = tuner:tune(k, { search = "exhaustive", repeats = 1, progress = false })
local s = r:summary()
print(s.compiles, s.cached, s.compile_workers)
for i = 1, #r do
  local why = r[i].status == "ok" and "" or (r[i].build_log or r[i].error or ""):match("[^\n]*")
  print(r[i].config.SCALE, r[i].config.WG, r[i].status,
    why .. (r[i].infrastructure and " [infrastructure]" or ""))
end]]):format(opts, source))
    local out, code = shell.run(("env %s %s %s"):format(env, shell.ktlua, path))
    assert.are.equal(0, code, out)
    return out
  end

  it("fail only the configuration whose compiler process died, and go on in a new one", function()
    -- Test hook (compile_pool.h): a compiler process given a source holding the text kills
    -- itself, as a compiler crashing on that configuration would.
    local out = run("KTLUA_CACHE=off 'KTLUA_TEST_COMPILER_CRASH=#define SCALE 2'",
                    "{ build_threads = 1, compile_workers = 1 }")
    local died = "the compiler process died of signal 9 (Killed) [infrastructure]"
    local undeclared = "use of undeclared identifier 'not_a_declared_name'"
    local lines = {}
    for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
    assert.are.equal("8\t0\t1", lines[1])
    local want = {
      "1\t1\tok\t", "1\t2\tok\t", "2\t1\tcompile_failed\t" .. died,
      "2\t2\tcompile_failed\t" .. died, "3\t1\tcompile_failed\t", "3\t2\tcompile_failed\t",
      "4\t1\tok\t", "4\t2\tok\t" }
    for i, line in ipairs(want) do
      if line:match("^3") then
        assert.matches(line, lines[i + 1], 1, true)
        assert.matches(undeclared, lines[i + 1], 1, true)
        assert.is_nil(lines[i + 1]:find("[infrastructure]", 1, true)) -- the compiler's verdict
      else
        assert.are.equal(line, lines[i + 1])
      end
    end
    assert.are.equal(9, #lines)
  end)

  -- A compiler process that died (here: killed, as from outside) is no verdict on its source:
  -- its configurations are marked so in the results and the journal, and a resumed tuning
  -- runs them again, keeping the compiler's real verdicts (SCALE 3) and the rest.
  it("leave a compile whose process died to be retried on resume, unlike the compiler's verdicts",
     function()
    local journal = dir .. "/killed.jsonl"
    os.remove(journal)
    local path = dir .. "/resume.lua"
    files.write(path, ([[
local kt = require "ktlua"
local tuner = kt.tuner("opencl", { build_threads = 1, compile_workers = 1 })
local a = kt.array("float", 16):fill(function(i) return i end)
local c = kt.array("float", 16)
local k = tuner:kernel{ name = "k", global = 16, group = 1, args = { a:input(), c:output() },
  source = %q }
k:param("SCALE", { 1, 2, 3, 4 })
k:param("WG", { 1, 2 }, { group_x = "mul" })
local r = tuner:tune(k, { search = "exhaustive", repeats = 1, progress = false,
  journal = %q, resume = arg[1] == "resume" })
for i = 1, #r do
  print(r[i].config.SCALE, r[i].config.WG, r[i].status, tostring(r[i].infrastructure),
    tostring(r[i].resumed))
end]]):format(source, journal))
    local out, code = shell.run(("env KTLUA_CACHE=off 'KTLUA_TEST_COMPILER_CRASH=#define SCALE 2' "
      .. "%s %s"):format(shell.ktlua, path))
    assert.are.equal(0, code, out)
    assert.are.equal(table.concat({
      "1\t1\tok\tnil\tnil", "1\t2\tok\tnil\tnil",
      "2\t1\tcompile_failed\ttrue\tnil", "2\t2\tcompile_failed\ttrue\tnil",
      "3\t1\tcompile_failed\tnil\tnil", "3\t2\tcompile_failed\tnil\tnil",
      "4\t1\tok\tnil\tnil", "4\t2\tok\tnil\tnil" }, "\n") .. "\n", out)
    local lines = files.lines(journal)
    assert.are.equal(9, #lines) -- the header, then a line a configuration
    for i = 2, 9 do
      assert.are.equal(i == 4 or i == 5, lines[i]:find('"infrastructure":true', 1, true) ~= nil,
        lines[i])
    end
    out, code = shell.run(("env KTLUA_CACHE=off %s %s resume"):format(shell.ktlua, path))
    assert.are.equal(0, code, out)
    assert.are.equal(table.concat({
      "1\t1\tok\tnil\ttrue", "1\t2\tok\tnil\ttrue",
      "2\t1\tok\tnil\tnil", "2\t2\tok\tnil\tnil",
      "3\t1\tcompile_failed\tnil\ttrue", "3\t2\tcompile_failed\tnil\ttrue",
      "4\t1\tok\tnil\ttrue", "4\t2\tok\tnil\ttrue" }, "\n") .. "\n", out)
    lines = files.lines(journal) -- one line a configuration still, the retried ones last
    assert.are.equal(9, #lines)
    for i = 2, 9 do assert.is_nil(lines[i]:find('"infrastructure"', 1, true), lines[i]) end
    assert.matches('"SCALE":2.*"status":"ok"', lines[9])
  end)

  it("kill a compile that runs past compile_timeout, failing only its configuration", function()
    -- Test hook (compile_pool.h): a compiler process given a source holding the text waits
    -- for ever, as a compiler hanging on that configuration would. The limit leaves the other
    -- compiles room on a loaded machine (PoCL's cache off, sanitizers: seconds each).
    local out = run("KTLUA_CACHE=off 'KTLUA_TEST_COMPILER_HANG=#define SCALE 2'",
                    "{ build_threads = 1, compile_workers = 1, compile_timeout = 15 }")
    local killed = "compile took longer than 15 s (compile_timeout): its compiler process was "
      .. "killed [infrastructure]"
    local lines = {}
    for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
    assert.are.equal("8\t0\t1", lines[1])
    assert.are.equal("1\t1\tok\t", lines[2])
    assert.are.equal("2\t1\tcompile_failed\t" .. killed, lines[4])
    assert.are.equal("2\t2\tcompile_failed\t" .. killed, lines[5])
    assert.matches("^3\t2\tcompile_failed\t", lines[7])
    assert.are.equal("4\t2\tok\t", lines[9])
    assert.are.equal(9, #lines)
  end)

  it("are fresh images of the ktlua executable (`ktlua --compile-worker`), not forks", function()
    local path = dir .. "/children.lua"
    files.write(path, [[
local kt = require "ktlua"
local tuner = kt.tuner("opencl", { cache = false, compile_workers = 2, build_threads = 1 })
local c = kt.array("float", 4)
local k = tuner:kernel{ name = "k", global = 4, args = { c:output() },
  source = "__kernel void k(__global float *c) { c[get_global_id(0)] = 1; }" }
tuner:tune(k, { repeats = 1, progress = false })
local pid = io.open("/proc/self/stat"):read("n")
for task in io.popen("ls /proc/" .. pid .. "/task"):lines() do -- any thread may start them
  for child in io.open(("/proc/%d/task/%s/children"):format(pid, task)):read("a"):gmatch("%d+") do
    local cmd = io.open("/proc/" .. child .. "/cmdline"):read("a")
    if cmd:find("\0--compile-worker\0", 1, true) then print((cmd:gsub("%z", " "))) end
  end
end]])
    local exe = shell.run("readlink -f " .. shell.ktlua):gsub("\n$", "")
    local out, code = shell.run(("%s %s"):format(shell.ktlua, path))
    assert.are.equal(0, code, out)
    assert.are.equal(("%s --compile-worker \n"):format(exe):rep(2), out)
  end)

  it("are not started at all by a tuning whose programs the disk cache holds", function()
    -- every configuration compiles, so that the second tuning has all of them on the disk
    local path = dir .. "/warm.lua"
    files.write(path, [[
local kt = require "ktlua"
local tuner = kt.tuner("opencl", { compile_workers = 2, build_threads = 2 })
local c = kt.array("float", 4)
local k = tuner:kernel{ name = "k", global = 4, args = { c:output() },
  source = "__kernel void k(__global float *c) { c[get_global_id(0)] = F; }" }
k:param("F", { 1, 2, 3 })
local s = tuner:tune(k, { repeats = 1, progress = false }):summary()
local pid, n = io.open("/proc/self/stat"):read("n"), 0
for task in io.popen("ls /proc/" .. pid .. "/task"):lines() do
  for child in io.open(("/proc/%d/task/%s/children"):format(pid, task)):read("a"):gmatch("%d+") do
    local cmd = io.open("/proc/" .. child .. "/cmdline"):read("a")
    if cmd:find("\0--compile-worker\0", 1, true) then n = n + 1 end
  end
end
print(s.compiles, s.cached, s.compile_workers, n)]])
    local run_it = ("KTLUA_CACHE=%s/warm-cache %s %s"):format(dir, shell.ktlua, path)
    local cold, code = shell.run(run_it)
    assert.are.equal(0, code, cold)
    assert.are.equal("3\t0\t2\t2\n", cold)
    local warm
    warm, code = shell.run(run_it)
    assert.are.equal(0, code, warm)
    assert.are.equal("0\t3\t0\t0\n", warm) -- loaded, and no compiler process began
  end)

  it("are not started for programs the disk cache holds", function()
    local env = "KTLUA_CACHE=" .. dir .. "/cache"
    local first = run(env, "{ compile_workers = 1, build_threads = 1 }")
    assert.matches("^8\t0\t1\n", first)
    local again = run(env, "{ compile_workers = 1, build_threads = 1 }")
    -- the two that did not compile are compiled again, in one process
    assert.matches("^2\t6\t1\n", again)
    assert.are.equal(first:gsub("^[^\n]*\n", ""), (again:gsub("^[^\n]*\n", "")))
  end)
end)

describe("compiler processes with CUDA (NVRTC; a stand-in driver: spec/support/fake_cuda.c)",
         function()
  local missing = require("spec.support.fake_cuda").missing()
  if missing then
    pending(missing)
    return
  end
  local lib = files.tmpname()
  setup(function() require("spec.support.fake_cuda").build(lib) end)
  teardown(function() os.execute("rm -rf " .. lib) end)

  it("compile cubins in NVRTC alone that the device process loads", function()
    local path = lib .. "/tune.lua"
    files.write(path, [[
local kt = require "ktlua"
local tuner = kt.tuner("cuda:0", { cache = false, compile_workers = tonumber(os.getenv("W")),
                                   build_threads = 1 })
local c = kt.array("float", 64)
local k = tuner:kernel{ name = "scaled<2>", global = 64, args = { c:output() }, source = [=[
template <int F>
__global__ void scaled(float *c) { c[threadIdx.x] = F * V; }
#if V == 3
#error three is refused
#endif
]=] }
k:param("V", { 1, 2, 3 })
k:param("WG", { 8, 16 }, { group_x = "mul" })
local r = tuner:tune(k, { search = "exhaustive", repeats = 1, progress = false })
local s = r:summary()
io.write(s.compiles, " ", s.compile_workers)
for i = 1, #r do io.write(" ", r[i].status) end
print()
for i = 1, #r do
  if r[i].status ~= "ok" then print((r[i].build_log or r[i].error):match("three is refused")) end
end]])
    for _, workers in ipairs({ 1, 0 }) do
      local out, code = shell.run(("env KTLUA_LIBCUDA=%s/libcuda.so.1 W=%d %s %s")
        :format(lib, workers, shell.ktlua, path))
      assert.are.equal(0, code, out)
      assert.are.equal(("6 %d ok ok ok ok compile_failed compile_failed\n"):format(workers)
                       .. "three is refused\nthree is refused\n", out)
    end
  end)

  it("are as many as the processors this process may use, by default (its affinity here)",
     function()
    local path = lib .. "/usable.lua"
    files.write(path, [[
local kt = require "ktlua"
local tuner = kt.tuner("cuda:0", { cache = false })
local c = kt.array("float", 8)
local k = tuner:kernel{ name = "k", global = 8, args = { c:output() },
                        source = 'extern "C" __global__ void k(float *c) { c[0] = V; }' }
k:param("V", { 1, 2, 3 })
local r = tuner:tune(k, { repeats = 1, progress = false })
print(tuner:cache().threads, r:summary().compile_workers)]])
    local out, code = shell.run(("env KTLUA_LIBCUDA=%s/libcuda.so.1 taskset -c 0 %s %s")
      :format(lib, shell.ktlua, path))
    assert.are.equal(0, code, out)
    assert.are.equal("1\t1\n", out)
  end)

  it("outlive the compile threads of a context that a fault replaced", function()
    local path = lib .. "/fault.lua"
    files.write(path, [[
local kt = require "ktlua"
local tuner = kt.tuner("cuda:0", { cache = false, compile_workers = 1, build_threads = 1 })
local c = kt.array("float", 56)
local k = tuner:kernel{ name = "k", global = 56, group = 1, args = { c:output() },
                        source = 'extern "C" __global__ void k(float *c) { c[0] = V; }' }
k:param("V", { 1, 2 })
k:param("WG", { 1, 7, 8 }, { group_x = "mul" }) -- the stand-in faults on 7: a new context
local r = tuner:tune(k, { search = "exhaustive", repeats = 1, progress = false })
io.write(r:summary().compile_workers)
for i = 1, #r do io.write(" ", r[i].status) end
print()]])
    local out, code = shell.run(("env KTLUA_LIBCUDA=%s/libcuda.so.1 %s %s")
      :format(lib, shell.ktlua, path))
    assert.are.equal(0, code, out)
    assert.are.equal("1 ok runtime_failed ok ok runtime_failed ok\n", out)
  end)
end)
