-- The evaluation engine: time limits, crashes, the journal, resuming,
-- Ctrl-C, the program cache and the accounting of every second.
local kt = require "ktlua"
local shell = require "spec.support.shell"

local tuner = kt.tuner()

local statuses = require "spec.support.statuses"

local function tmp(ext)
  local path = os.tmpname()
  os.remove(path)
  return path .. ext
end

local function lines(path)
  local t = {}
  for line in io.lines(path) do t[#t + 1] = line end
  return t
end

-- A script for a child ktlua: a tuning of 40 configurations that writes a
-- journal; `stop_after` makes it send itself a signal (KILL, as a crash or
-- a kill -9 would, unless `signal` says INT) once that many have finished.
-- Without the program cache on disk every configuration compiles, so the
-- signal comes while the tuning runs (loading all 40 from a warm cache, it
-- was over before).
local function journal_script(journal, stop_after, resume, signal, output)
  return ([[
local kt = require "ktlua"
local t = kt.tuner(nil, { cache = false })
local o = kt.array("int", 256)
local k = t:kernel{ source = "__kernel void k(__global int *o) { o[get_global_id(0)] = X * Y; }",
                    name = "k", global = 256, args = { o:output() } }
k:param("X", { 1, 2, 3, 4, 5, 6, 7, 8 })
k:param("Y", { 0, 1, 2, 3, 4 })
k:reference(o, function(ref) ref:fill(3) end)
local pid = io.open("/proc/self/stat"):read("n")
local r = t:tune(k, { search = { "random", seed = 9 }, stop = { count = 30 }, repeats = 1,
  journal = %q, resume = %s, output = %s, progress = function(res, all)
    -- delivered before the next configuration starts
    if %d > 0 and #all == %d then require("spec.support.signals").send(pid, %q) end
  end })
for i = 1, #r do io.write(r[i].index, ":", r[i].status, " ") end
print()
]]):format(journal, tostring(resume), output and ("%q"):format(output) or "nil", stop_after,
           stop_after, signal or "KILL")
end

-- extra: ktlua's options; env: the child's environment ("NAME=value ...").
local function run_script(code, extra, env)
  local path = tmp(".lua")
  local f = assert(io.open(path, "w"))
  f:write(code)
  f:close()
  local out, status = shell.run((env or "") .. " " .. shell.ktlua .. " " .. (extra or "") .. " " .. path)
  os.remove(path)
  return out, status
end

describe("time limits", function()
  it("give timeout for exactly the configurations that hang, and the others run", function()
    local flag = kt.array("int", 1)
    local out = kt.array("int", 64)
    local k = tuner:kernel{ name = "h", global = 64, args = { flag:input(), out:output() }, source = [[
__kernel void h(__global volatile int *flag, __global int *o) {
#if MODE == 1 || MODE == 3
  while (flag[0] == 0) { }
#endif
  o[get_global_id(0)] = 7 + MODE;
}]] }
    k:param("MODE", { 0, 1, 2, 3 })
    k:reference(out, function(ref) ref:fill(7) end, { tolerance = 2 }) -- MODE 0 and 2 validate
    local r = tuner:tune(k, { repeats = 2, time_limit = 0.5 })
    assert.are.same({ "ok", "timeout", "ok", "timeout" }, statuses(r))
    assert.matches("^the configuration ran past its time limit %([%d.]+ s%); its device process was "
      .. "stopped$", r[2].error)
    assert.are.equal(2, #r[3].samples_ms)
    tuner:run(k, { MODE = 2 })
    assert.are.equal(9, out[63])
  end)

  it("leave a CPU device its compile at a kernel's first launch, behind the compiles ahead", function()
    -- PoCL compiles each kernel for its work-group size when it is first launched, one compile
    -- at a time in a process: with its cache empty, the first launches wait for the compiles
    -- ahead, for longer than the limit on a slow machine. None is a timeout.
    local cache = tmp("")
    local out, status = run_script([[
local kt = require "ktlua"
local t = kt.tuner("opencl:0:0", { build_threads = 2 })
local o = kt.array("int", 64)
local k = t:kernel{ name = "k", global = 64, args = { o:output() }, source = [=[
__kernel void k(__global int *o) { o[get_global_id(0)] = V + get_local_size(0) - WG; }]=] }
k:param("WG", { 1, 4 }, { group_x = "mul" })
k:param("V", { 1, 2, 3, 4 })
local r = t:tune(k, { search = "exhaustive", time_limit = 0.2, repeats = 1, progress = false })
for i = 1, #r do io.write(r[i].status, " ") end
print()
]], nil, "POCL_CACHE_DIR=" .. cache)
    os.execute("rm -rf " .. cache)
    assert.are.equal(0, status, out)
    assert.are.equal(("ok "):rep(8) .. "\n", out, out)
  end)

  it("give timeout while a launcher waits to read or write, and the next start afresh", function()
    local flag = kt.array("int", 1)
    local input = kt.array("int", 64):fill(5)
    local out = kt.array("int", 64)
    local k = tuner:kernel{ name = "w", global = 64, args = { flag:input(), input:input(), out:output() },
                            source = [[
__kernel void w(__global volatile int *flag, __global const int *in, __global int *o) {
#if MODE == 1 || MODE == 2
  while (flag[0] == 0) { }
#endif
  o[get_global_id(0)] = in[get_global_id(0)] + 1;
}]] }
    k:param("MODE", { 0, 1, 2, 3 })
    local zeros = kt.array("int", 1)
    k:launcher(function(run, cfg)
      run:launch(k)
      if cfg.MODE == 2 then run:write(flag, zeros) else run:read(input) end
      input[0] = -1 -- a host change, which the device process started after a timeout must not see
    end)
    k:reference(out, function(ref) ref:fill(6) end)
    local r = tuner:tune(k, { repeats = 2, time_limit = 0.5 })
    assert.are.same({ "ok", "timeout", "timeout", "ok" }, statuses(r), r[4].error)
    assert.are.equal(5, input[0])
  end)

  it("follow the best time so far, above a floor, by default", function()
    local flag = kt.array("int", 1)
    local out = kt.array("int", 64)
    local k = tuner:kernel{ name = "f", global = 64, args = { flag:input(), out:output() }, source = [[
__kernel void f(__global volatile int *flag, __global int *o) {
#if MODE == 1
  while (flag[0] == 0) { }
#endif
  o[get_global_id(0)] = 1;
}]] }
    k:param("MODE", { 0, 1 })
    local r = tuner:tune(k, { repeats = 1, time_limit = { factor = 50, floor = 0.5 } })
    assert.are.same({ "ok", "timeout" }, statuses(r))
    -- the floor, not the default 10 s: the warm-up and the timed run, queued together, share
    -- twice the limit, and a CPU device has twice the longest compile on top (below 9.5 s)
    local limit = tonumber(r[2].error:match("^the configuration ran past its time limit %(([%d.]+) s%); "
      .. "its device process was stopped$"))
    assert.is_true(limit >= 1 and limit < 20, r[2].error)
    assert.has_error(function() tuner:tune(k, { time_limit = { factor = 0 } }) end,
      "tune options.time_limit: factor and floor must be positive")
    assert.has_error(function() tuner:tune(k, { time_limit = "long" }) end,
      "tune options.time_limit: expected seconds or {factor =, floor =}")
  end)

  it("survive a kernel that crashes its device process", function()
    local out = kt.array("int", 64)
    local k = tuner:kernel{ name = "c", global = 64, args = { out:output() }, source = [[
__kernel void c(__global int *o) {
#if CRASH == 1
  __global int *wild = (__global int *)((ulong)o ^ 0x7f0000000000UL);
  wild[get_global_id(0) * 1000003] = 1;
#endif
  o[get_global_id(0)] = 7;
}]] }
    k:param("CRASH", { 0, 1, 2 })
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.same({ "ok", "runtime_failed", "ok" }, statuses(r))
    assert.matches("^the device process died of signal %d+", r[2].error)
  end)

  it("are checked", function()
    local k = tuner:kernel{ source = "__kernel void k(__global int *o) { }", name = "k", global = 1,
                            args = { kt.array("int", 1):output() } }
    assert.has_error(function() tuner:tune(k, { time_limit = 0 }) end, "tune options.time_limit must be positive")
    assert.has_error(function() tuner:tune(k, { time_limit = { factor = -1 } }) end)
    assert.has_error(function() tuner:tune(k, { time_limit = { floor = 1, slack = 2 } }) end)
  end)
end)

describe("the journal", function()
  it("holds a header and one line per finished configuration", function()
    local path = tmp(".jsonl")
    local out, status = run_script(journal_script(path, 0, false))
    assert.are.equal(0, status, out)
    local l = lines(path)
    assert.are.equal(31, #l)
    assert.matches('^{"format":"ktlua%-journal","version":1,"task":"k"', l[1])
    assert.matches('^{"index":%d+,"config":{"X":%d,"Y":%d},"status":"', l[2])
    os.remove(path)
  end)

  it("keeps every finished configuration of a killed tuning, and resuming finishes it alike", function()
    local whole, killed = tmp(".jsonl"), tmp(".jsonl")
    local full = run_script(journal_script(whole, 0, false))
    local _, status = run_script(journal_script(killed, 12, false))
    assert.are.equal(137, status) -- killed with SIGKILL
    -- everything finished before the kill is there
    local kept = #lines(killed) - 1
    assert.is_true(kept >= 12 and kept < 30)
    local resumed, status2 = run_script(journal_script(killed, 0, true))
    assert.are.equal(0, status2, resumed)
    assert.are.equal(full:match("[^\n]*"), resumed:match("[^\n]*"))
    assert.are.equal(31, #lines(killed))
    -- resuming a finished journal runs nothing more
    local again = run_script(journal_script(killed, 0, true))
    assert.are.equal(full:match("[^\n]*"), again:match("[^\n]*"))
    assert.are.equal(31, #lines(killed))
    os.remove(whole)
    os.remove(killed)
  end)

  it("resumes through `ktlua --journal=DIR --resume`", function()
    local dir = tmp("")
    os.execute("mkdir -p " .. dir)
    local code = journal_script("unused", 0, false):gsub('journal = "unused", resume = false, ', "")
    local first = run_script(code, "--journal=" .. dir)
    assert.are.equal(31, #lines(dir .. "/k.jsonl"))
    local again = run_script(code, "--journal=" .. dir .. " --resume")
    assert.are.equal(first, again)
    assert.are.equal(31, #lines(dir .. "/k.jsonl"))
    os.execute("rm -r " .. dir)
  end)

  it("refuses to resume a journal of other parameters", function()
    local path = tmp(".jsonl")
    run_script(journal_script(path, 0, false))
    local k = tuner:kernel{ source = "__kernel void k(__global int *o) { }", name = "k", global = 1,
                            args = { kt.array("int", 1):output() } }
    k:param("X", { 1, 2 })
    local ok, err = pcall(tuner.tune, tuner, k, { journal = path, resume = true })
    assert.is_false(ok)
    assert.matches("cannot resume from .*: its parameters and values differ from task k's", err)
    assert.has_error(function() tuner:tune(k, { resume = true }) end,
      "tune options.resume: resuming needs a journal (tune options.journal)")
    os.remove(path)
  end)

  it("gives back CSV and JSON files", function()
    local path = tmp(".jsonl")
    run_script(journal_script(path, 0, false))
    local r = kt.load(path)
    assert.are.equal(30, #r)
    assert.are.equal("k", r.task)
    assert.are.same({ { name = "X", values = { 1, 2, 3, 4, 5, 6, 7, 8 } },
                      { name = "Y", values = { 0, 1, 2, 3, 4 } } }, r.params)
    local csv, json = tmp(".csv"), tmp(".json")
    r:write(csv)
    r:write(json)
    assert.are.equal(31, #lines(csv))
    local back = kt.load(json)
    assert.are.equal(30, #back)
    for i = 1, 30 do
      assert.are.same(r[i].config, back[i].config)
      assert.are.equal(r[i].status, back[i].status)
      assert.are.same(r[i].samples_ms, back[i].samples_ms)
      assert.are.same(r[i].global, back[i].global)
    end
    assert.has_error(function() kt.load("/nonexistent.jsonl") end)
    for _, p in ipairs({ path, csv, json }) do os.remove(p) end
  end)
end)

describe("Ctrl-C", function()
  it("finishes the configuration in flight, writes the results, names the best and fails", function()
    local journal, csv = tmp(".jsonl"), tmp(".csv")
    local out, status = run_script(journal_script(journal, 7, false, "INT", csv))
    assert.are.equal(1, status)
    assert.matches("interrupted: finishing the configuration in flight", out)
    assert.matches("ktlua: best so far: X=%d Y=%d  [%d.e%-]+ ms", out)
    local n = tonumber(out:match("tuning of k interrupted after (%d+) configurations"))
    assert.is_true(n >= 7 and n < 30, out)
    assert.are.equal(n + 1, #lines(journal))
    assert.are.equal(n + 1, #lines(csv))
    os.remove(journal)
    os.remove(csv)
  end)

  it("a second time exits at once, leaving every finished configuration in the journal", function()
    local journal = tmp(".jsonl")
    local out, status = run_script(([[
local kt = require "ktlua"
local t = kt.tuner()
local flag, o = kt.array("int", 1), kt.array("int", 4)
local k = t:kernel{ name = "k", global = 4, args = { flag:input(), o:output() }, source = [=[
__kernel void k(__global volatile int *flag, __global int *o) {
#if X == 4
  while (flag[0] == 0) { }
#endif
  o[get_global_id(0)] = X;
}]=] }
k:param("X", { 1, 2, 3, 4, 5, 6 })
local pid = io.open("/proc/self/stat"):read("n")
local signals = require "spec.support.signals"
k:launcher(function(run, cfg)
  run:launch(k)
  if cfg.X == 4 then
    -- it hangs: interrupt it twice, the second time once the first is handled (send returns
    -- then), while the tuning waits for it
    signals.send(pid, "INT")
    os.execute(signals.when_caught(pid, "INT") .. " &")
  end
end)
t:tune(k, { repeats = 1, time_limit = 60, journal = %q })
print("not reached")]]):format(journal))
    assert.are.equal(130, status, out)
    assert.matches("interrupted: finishing the configuration in flight (Ctrl-C again to exit now)", out, 1, true)
    assert.matches("interrupted again: exiting now (the journal holds every finished configuration)", out, 1, true)
    assert.is_nil(out:find("not reached", 1, true))
    local kept = lines(journal)
    assert.are.equal(4, #kept) -- the header and X = 1, 2, 3
    local loaded = kt.load(journal)
    assert.are.same({ "ok", "ok", "ok" }, statuses(loaded))
    os.remove(journal)
  end)
end)

describe("the program cache", function()
  it("builds an identical source once", function()
    local o = kt.array("int", 4)
    local k = tuner:kernel{ source = "__kernel void same(__global int *o) { o[0] = X; }", name = "same",
                            global = 1, args = { o:output() } }
    k:param("X", { 1, 2 })
    tuner:tune(k, { repeats = 1 })
    local before = tuner:cache()
    tuner:tune(k, { repeats = 1 })
    local after = tuner:cache()
    assert.are.equal(before.hits + 2, after.hits)
    assert.are.equal(before.misses, after.misses)
    assert.is_true(after.threads >= 1)
    assert.are.equal(0, after.compiling) -- a tuning waits for the compiles it uses
  end)

  it("keys its programs on the compiler's options too", function()
    local o = kt.array("int", 4)
    local function kernel(options)
      return tuner:kernel{ source = "__kernel void opt(__global int *o) { o[0] = 3; }", name = "opt",
                           global = 1, options = options, args = { o:output() } }
    end
    local before = tuner:cache()
    tuner:run(kernel("-DA=1"))
    tuner:run(kernel("-DA=2"))
    tuner:run(kernel("-DA=1"))
    local after = tuner:cache()
    assert.are.equal(before.misses + 2, after.misses)
    assert.are.equal(before.hits + 1, after.hits)
  end)

  it("compiles as many proposals ahead as asked, with the same results", function()
    local o = kt.array("int", 4)
    local k = tuner:kernel{ source = "__kernel void la(__global int *o) { o[0] = X + Y; }", name = "la",
                            global = 1, args = { o:output() } }
    k:param("X", { 1, 2, 3, 4, 5, 6 })
    k:param("Y", { 10, 20 })
    local function order(opts)
      local r, list = tuner:tune(k, opts), {}
      for i = 1, #r do list[i] = r[i].index end
      return list
    end
    local base = order{ search = "random", seed = 4, stop = { count = 9 }, repeats = 1 }
    assert.are.equal(9, #base)
    for _, n in ipairs({ 1, 3, 100 }) do
      assert.are.same(base, order{ search = "random", seed = 4, stop = { count = 9 }, repeats = 1, lookahead = n })
    end
    assert.has_error(function() tuner:tune(k, { lookahead = -1 }) end,
      "tune options.lookahead: expected a positive number of configurations")
  end)

  it("compiles on one thread per processor, or as many as asked", function()
    local procs = tonumber((shell.run("nproc")))
    assert.are.equal(procs, tuner:cache().threads)
    local one = kt.tuner(nil, { build_threads = 1 })
    assert.are.equal(1, one:cache().threads)
    one:close()
    assert.has_error(function() kt.tuner(nil, { build_threads = -1 }) end,
      "tuner options.build_threads must not be negative")
  end)
end)

describe("the accounting", function()
  it("says where each configuration's time went", function()
    local o = kt.array("float", 1024)
    local k = tuner:kernel{ source = "__kernel void a(__global float *o) { o[get_global_id(0)] = X; }",
                            name = "a", global = 1024, args = { o:output() } }
    k:param("X", { 1, 2, 3 })
    k:reference(o, function(ref) ref:fill(1) end)
    local r = tuner:tune(k, { repeats = 3 })
    for i = 1, #r do
      local ov = r[i].overheads_ms
      local parts = ov.build + ov.data + ov.validation + ov.launcher + ov.wait + ov.framework
      assert.is_true(math.abs(parts - ov.total) < 1e-6 * math.max(1, ov.total) or parts <= ov.total + 1e-9)
      assert.is_true(r[i].compile_ms >= 0)
    end
    local s = r:summary()
    for _, key in ipairs({ "wall_ms", "setup_ms", "kernel_ms", "build_ms", "compile_ms", "data_ms",
                           "validation_ms", "launcher_ms", "wait_ms", "searcher_ms", "framework_ms" }) do
      assert.are.equal("number", type(s[key]), key)
    end
    assert.is_true(s.wall_ms >= s.build_ms + s.data_ms + s.validation_ms + s.wait_ms)
    -- The device's idle time between configurations, and the tuning's steps in it.
    local g = s.gap
    local again = 0 -- a gap before each configuration but the first, and before each run again
    for i = 1, #r do again = again + (r[i].retried and 1 or 0) end
    assert.are.equal(2, again) -- X = 2 and 3 are wrong, and checked once more
    assert.are.equal(#r - 1 + again, g.n)
    local parts = 0
    for _, key in ipairs({ "verdict_ms", "after_ms", "loop_ms", "prepare_ms", "kernel_ms", "build_wait_ms",
                           "launch_ms" }) do
      assert.is_true(g[key] >= 0, key)
      parts = parts + g[key]
    end
    assert.is_true(g.idle_ms > 0 and parts <= g.idle_ms, ("parts %g, idle %g"):format(parts, g.idle_ms))
    assert.is_true(s.wall_ms - s.setup_ms >= g.idle_ms)
  end)
end)

describe("a tuner without isolation", function()
  it("tunes in the tuner's own process", function()
    local out, status = shell.run(shell.ktlua .. [[ -e "
local t = kt.tuner(nil, { isolate = false })
local o = kt.array('int', 8)
local k = t:kernel{ source = '__kernel void k(__global int *o) { o[get_global_id(0)] = X; }', name = 'k',
                    global = 8, args = { o:output() } }
k:param('X', { 4, 5 })
local r = t:tune(k, { repeats = 2 })
print(t.isolated, r[1].status, r[2].status)
print(pcall(kt.tuner, nil, { isolate = true }))"]])
    assert.are.equal(0, status, out)
    assert.matches("^false\tok\tok\n", out)
    assert.matches("false\t.-can no longer start isolated device processes", out)
  end)
end)

describe("a closed tuner", function()
  it("can be closed twice and printed, and refuses work", function()
    local t = kt.tuner()
    local k = t:kernel{ source = "__kernel void k(__global int *o) { o[0] = 1; }", name = "k",
                        global = 1, args = { kt.array("int", 1):output() } }
    t:close()
    t:close()
    assert.are.equal("tuner (closed)", tostring(t))
    assert.are.equal("opencl:0:0", t.device.id)
    assert.has_error(function() t:tune(k) end, "calling 'tune' on bad self (tuner has been closed)")
  end)
end)

describe("a device process that grows", function()
  -- The output does not depend on X; every configuration compiles anew, in the device process
  -- (no disk cache, no compiler processes): the compiler's memory is a growth it can count on,
  -- where loading binaries alone may grow by less than the allowance.
  local function tuning(options)
    options.cache, options.compile_workers = false, 0
    local t = kt.tuner(nil, options)
    local a = kt.array("int", 64)
    local k = t:kernel{ source = "__kernel void k(__global int *a) { int i = get_global_id(0); "
                          .. "a[i] = 2 * i + X - X; }", name = "k", global = 64, args = { a:output() } }
    local xs = {}
    for i = 1, 12 do xs[i] = 1000 + i end
    k:param("X", xs)
    k:reference(a, function(ref) for i = 0, 63 do ref[i] = 2 * i end end)
    return t, t:tune(k, { repeats = 1 })
  end

  it("is replaced between configurations past its allowance, and tuning goes on", function()
    local t, r = tuning{ device_growth = 1 / 1024 } -- 1 KiB past its first configuration
    assert.are.equal(12, #r)
    for i = 1, #r do assert.are.equal("ok", r[i].status) end
    assert.is_true(t.renewals >= 1)
    t, r = tuning{ device_growth = 0 } -- never
    assert.are.equal(0, t.renewals)
    assert.has_error(function() kt.tuner(nil, { device_growth = -1 }) end,
      "tuner options.device_growth: expected 0 (never) to 2^30 MiB")
  end)
end)
