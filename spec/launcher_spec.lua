-- Launchers and compositions.
local kt = require "ktlua"

local tuner = kt.tuner()

local statuses = require "spec.support.statuses"

-- o[i] = o[i] * MUL + add
local axpb = [[__kernel void axpb(__global int *o, int add) {
  int i = get_global_id(0); o[i] = o[i] * MUL + add; }]]

describe("a launcher", function()
  it("launches with the configuration's sizes or its own, and sums the launches", function()
    local o = kt.array("int", 8):fill(1)
    local k = tuner:kernel{ source = axpb, name = "axpb", global = 8, args = { o:inout(), kt.int(0) } }
    k:param("MUL", { 2, 3 })
    local seen = {}
    k:launcher(function(run, cfg)
      seen[#seen + 1] = cfg.MUL .. "/" .. run.config.MUL
      run:launch(k)                      -- all 8
      run:launch(k, { global = 4 })      -- the first 4 again
    end)
    k:reference(o, function(ref) ref:fill(function(i) return i < 4 and 4 or 2 end) end)
    local r = tuner:tune(k, { repeats = 3 })
    assert.are.same({ "ok", "invalid_output" }, statuses(r))
    assert.are.equal(2, r[1].launches)
    assert.are.equal(3, #r[1].samples_ms)
    assert.are.equal("2/2", seen[1])
    assert.are.equal("3/3", seen[#seen])
    -- four executions of MUL=2 (warm-up and three timed runs), two of MUL=3
    -- (a wrong output is checked once more on restored inputs)
    assert.are.equal(6, #seen)
    assert.matches("^first run: invalid_output %(element 0: got 9, expected 4.*; run again because a wrong output is checked once more$", r[2].retried)
  end)

  it("updates scalars and sizes local memory for one execution", function()
    local o = kt.array("int", 4)
    local add = kt.int(100)
    local k = tuner:kernel{ source = axpb, name = "axpb", global = 4, args = { o:inout(), add } }
    k:param("MUL", { 1 })
    k:launcher(function(run)
      run:update(add, 5)
      run:launch(k)
      run:update(add, 7)
      run:launch(k, { global = 2 })
    end)
    k:reference(o, function(ref) ref:fill(function(i) return i < 2 and 12 or 5 end) end)
    assert.are.equal("ok", tuner:tune(k, { repeats = 2 })[1].status)
    assert.are.equal(100, add.value) -- the argument object itself is unchanged

    local l = kt.array("int", 1)
    local tmp = kt.localmem("int", 1)
    local lk = tuner:kernel{ source = [[__kernel void lm(__global int *o, __local int *t) {
      t[get_local_id(0)] = 1; barrier(CLK_LOCAL_MEM_FENCE);
      if (get_local_id(0) == 0) { int s = 0; for (int i = 0; i < get_local_size(0); i++) s += t[i]; o[0] = s; } }]],
      name = "lm", global = 16, group = 16, args = { l:output(), tmp } }
    lk:launcher(function(run) run:localmem(tmp, 16); run:launch(lk) end)
    lk:reference(l, function(ref) ref[0] = 16 end)
    assert.are.equal("ok", tuner:tune(lk, { repeats = 1 })[1].status)
  end)

  it("moves data: read, write, copy, clear, resize", function()
    local a = kt.array("int", 8):fill(function(i) return i end)
    local b = kt.array("int", 8)
    local host = kt.array("int", 8)
    local k = tuner:kernel{ source = axpb, name = "axpb", global = 8, args = { a:inout(), kt.int(0) } }
    k:param("MUL", { 10 })
    local log = {}
    k:launcher(function(run)
      run:launch(k)                       -- a = 10 * i
      run:read(a, host)
      log[#log + 1] = host[3]
      host:fill(function(i) return host[i] + 1 end)
      run:write(a, host)                  -- a = 10 * i + 1
      run:copy(b, a)
      run:clear(a)
      run:resize(b, 16)
      log[#log + 1] = run:length(b)
      run:args(k, { b:inout(), kt.int(0) })
      run:launch(k, { global = 16 })      -- b = 100 * i + 10 (then 0 past 8)
      run:copy(a, b, 8)
    end)
    k:reference(a, function(ref) ref:fill(function(i) return 100 * i + 10 end) end)
    local r = tuner:tune(k, { repeats = 2 })
    assert.are.equal("ok", r[1].status)
    assert.are.same({ 30, 16, 30, 16, 30, 16 }, log)
  end)

  it("moves data on the queue it is told", function()
    local a = kt.array("int", 8):fill(2)
    local b, host = kt.array("int", 8), kt.array("int", 8)
    local k = tuner:kernel{ source = axpb, name = "axpb", global = 8, args = { a:inout(), kt.int(1) } }
    k:param("MUL", { 3 })
    k:launcher(function(run)
      run:launch(k, { queue = 1 })       -- a = 7
      run:read(a, host, { queue = 1 })   -- after queue 1's launch
      host[0] = 100
      run:write(b, host, { queue = 2 })
      run:copy(a, b, 4, { queue = 2 })   -- a = 100 7 7 7 7 7 7 7
      run:sync(2)                        -- before another queue clears b
      run:clear(b, { queue = 3 })
      run:sync()
    end)
    k:reference(a, function(ref) ref:fill(7) ref[0] = 100 end)
    local r = tuner:tune(k, { repeats = 2 })
    assert.are.equal("ok", r[1].status, r[1].error)
  end)

  it("swaps arguments and replaces argument lists", function()
    local x = kt.array("int", 4):fill(1)
    local y = kt.array("int", 4):fill(10)
    local src = [[__kernel void addto(__global const int *from, __global int *to) {
      int i = get_global_id(0); to[i] += from[i]; }]]
    local k = tuner:kernel{ source = src, name = "addto", global = 4, args = { x:input(), y:inout() } }
    k:launcher(function(run)
      run:launch(k)          -- y = 11
      run:swap(k, x, y)
      run:launch(k)          -- x = 12 (x is written now)
      run:args(k, { x:input(), y:inout() })
      run:launch(k)          -- y = 23
    end)
    k:reference(y, function(ref) ref:fill(23) end)
    assert.are.equal("ok", tuner:tune(k, { repeats = 3 })[1].status)
    assert.are.same({ 1, 1, 1, 1 }, x:totable())
  end)

  it("launches on several queues and synchronises them", function()
    local a, b = kt.array("int", 64):fill(1), kt.array("int", 64):fill(1)
    local k = tuner:kernel{ source = axpb, name = "axpb", global = 64, args = { a:inout(), kt.int(1) } }
    k:param("MUL", { 3 })
    k:launcher(function(run)
      run:launch(k, { queue = 1 })
      run:args(k, { b:inout(), kt.int(2) })
      run:launch(k, { queue = 2 })
      run:sync(1)
      run:sync()
    end)
    k:reference(b, function(ref) ref:fill(5) end)
    local r = tuner:tune(k, { repeats = 2 })
    assert.are.equal("ok", r[1].status)
    assert.are.equal(2, r[1].launches)
    tuner:run(k, { MUL = 3 })
    assert.are.equal(4, a[0])
  end)

  it("records host time apart and adds it to the objective when asked", function()
    local o = kt.array("int", 4)
    local k = tuner:kernel{ source = axpb, name = "axpb", global = 4, args = { o:inout(), kt.int(0) } }
    k:param("MUL", { 1 })
    local sink = 0
    k:launcher(function(run)
      run:launch(k)
      for i = 1, 300000 do sink = sink + i % 7 end -- a host step of a few milliseconds
    end)
    local plain = tuner:tune(k, { repeats = 3 })[1]
    local with_host = tuner:tune(k, { repeats = 3, objective = "kernel+host" })[1]
    assert.is_true(plain.overheads_ms.launcher >= 4 * 1)
    assert.is_true(plain.time_ms < 1)
    assert.is_true(with_host.time_ms >= 1)
    assert.has_error(function() tuner:tune(k, { objective = "wall" }) end,
      "tune options.objective: expected 'kernel', 'kernel+host', the name of a metric or a "
      .. "function(result, cfg), got 'wall'")
  end)
end)

-- The summary of a launcher's tuning: its kernels are part of the device's
-- time, the host's wait for the device is named so, and what came from a
-- journal is not counted as this run's time.
describe("a launcher's summary", function()
  local files = require "spec.support.files"
  local report = require "ktlua.report"

  local function printed(r)
    local lines = {}
    report.print(r, { out = { write = function(_, ...)
      for _, x in ipairs { ... } do lines[#lines + 1] = x end
    end } })
    return table.concat(lines)
  end

  it("shows its kernels within the device's time, and the wait as a wait", function()
    local o = kt.array("int", 64):fill(1)
    local k = tuner:kernel{ source = axpb, name = "axpb", global = 64, args = { o:inout(), kt.int(0) } }
    k:param("MUL", { 1, 2 })
    k:launcher(function(run)
      for _ = 1, 4 do run:launch(k) end
    end)
    local journal = files.tmpname(".jsonl")
    finally(function() os.remove(journal) end)
    local r = tuner:tune(k, { repeats = 3, journal = journal })
    local s = r:summary()
    local timed = 0
    for i = 1, #r do
      assert.are.equal(4, r[i].launches)
      for _, t in ipairs(r[i].samples_ms) do timed = timed + t end
    end
    assert.is_true(math.abs(s.kernel_ms - timed) <= 1e-9 * timed, s.kernel_ms .. " " .. timed)
    assert.is_true(s.kernel_ms <= s.device_ms, s.kernel_ms .. " > " .. s.device_ms)
    assert.are.equal(0, s.resumed)
    local text = printed(r)
    local device, kernels = text:match("\ndevice: ([%d.]+) ms of kernels, ([%d.]+) ms of them in the "
      .. "timed runs %(the rest: warm%-ups, checks, references%)\n")
    assert.is_truthy(device, text)
    assert.is_true(tonumber(kernels) <= tonumber(device), text)
    assert.matches(" %+ waiting for the device [%d.]+ %+ ", text)
    assert.is_nil(text:find("(kernels", 1, true), text)

    -- resumed: every configuration from the journal, none timed by this run
    r = tuner:tune(k, { repeats = 3, journal = journal, resume = true })
    s = r:summary()
    assert.are.equal(2, s.evaluated)
    assert.are.equal(2, s.resumed)
    assert.is_true(r[1].resumed)
    for _, key in ipairs { "kernel_ms", "device_ms", "build_ms", "data_ms", "validation_ms",
                           "launcher_ms", "wait_ms" } do
      assert.are.equal(0, s[key], key)
    end
    text = printed(r)
    assert.matches("\n  2 configurations from the journal, measured by an earlier run: not in these "
      .. "times\n", text)
    assert.matches("\nkernels: 0%.0+ ms in the timed runs\n", text)
  end)
end)

describe("isolation", function()
  it("undoes what a launcher changed before the next configuration", function()
    local input = kt.array("int", 8):fill(3)
    local out = kt.array("int", 8)
    local add = kt.int(0)
    local k = tuner:kernel{ source = [[__kernel void cp(__global const int *in, __global int *out, int add) {
      int i = get_global_id(0); out[i] = in[i] * MUL + add; }]], name = "cp", global = 8,
      args = { input:input(), out:output(), add } }
    k:param("MUL", { 1, 2, 3 })
    local garbage = kt.array("int", 8):fill(-99)
    k:launcher(function(run, cfg)
      run:launch(k)
      -- after the launch, corrupt everything this configuration could leave behind
      run:write(input, garbage)
      run:update(add, 1000)
      run:resize(input, 2)
      run:swap(k, input, out)
    end)
    k:reference(out, function(ref) ref:fill(3) end)
    local r = tuner:tune(k, { repeats = 4 })
    assert.are.same({ "ok", "invalid_output", "invalid_output" }, statuses(r))
    assert.matches("got 6, expected 3", r[2].error)
    assert.matches("got 9, expected 3", r[3].error)
    assert.are.same({ 3, 3, 3, 3, 3, 3, 3, 3 }, input:totable())
  end)

  it("undoes what a launcher changed in the arrays' host contents", function()
    local input = kt.array("int", 8):fill(3)
    local out = kt.array("int", 8)
    local k = tuner:kernel{ source = [[__kernel void cp(__global const int *in, __global int *out) {
      int i = get_global_id(0); out[i] = in[i] * MUL; }]], name = "cp", global = 8,
      args = { input:input(), out:output() } }
    k:param("MUL", { 1, 2 })
    k:launcher(function(run)
      input[0] = input[0] + 1      -- a host step that builds on the input's host contents
      run:write(input)
      run:launch(k)
      run:read(out)                -- into out's own host array
    end)
    local seen = {}
    k:reference(out, function(ref) ref:fill(1) ref[0] = 4 end, {
      compare = function(got) seen[#seen + 1] = got[0] return true end })
    local r = tuner:tune(k, { repeats = 3 })
    assert.are.same({ "ok", "ok" }, statuses(r))
    -- every execution started from the same host contents: 4, then 8 with MUL=2
    assert.are.equal(4, seen[1])
    assert.are.equal(8, seen[#seen])
    assert.are.same({ 3, 3, 3, 3, 3, 3, 3, 3 }, input:totable()) -- as the tuning found them
    assert.are.same({ 0, 0, 0, 0, 0, 0, 0, 0 }, out:totable())
  end)

  it("undoes it in an array large enough to be kept by several threads, to its last element", function()
    local n = 5 * 1024 * 1024 + 3 -- 20 MiB: copied in slices (core/base/copy_wide.c), an odd tail
    local input = kt.array("int", n):fill(3)
    input[n - 1] = 9
    local out = kt.array("int", 2)
    local k = tuner:kernel{ source = [[__kernel void ends(__global const int *in, __global int *out,
      int last) { out[0] = in[0]; out[1] = in[last]; }]], name = "ends", global = 1,
      args = { input:input(), out:output(), kt.int(n - 1) } }
    k:param("X", { 1, 2 })
    local seen = {}
    k:launcher(function(run)
      seen[#seen + 1] = input[0] .. "/" .. input[n - 1]
      input[0], input[n - 1] = input[0] + 1, input[n - 1] + 1
      run:write(input)
      run:launch(k)
    end)
    k:reference(out, function(ref) ref[0], ref[1] = 4, 10 end)
    local r = tuner:tune(k, { repeats = 2 })
    assert.are.same({ "ok", "ok" }, statuses(r))
    for i = 1, #seen do assert.are.equal("3/9", seen[i]) end
    assert.are.same({ 3, 9 }, { input[0], input[n - 1] })
  end)
end)

describe("a composition", function()
  local data = kt.array("float", 64):fill(function(i) return i end)
  local mid, res = kt.array("float", 64), kt.array("float", 64)
  local function make()
    local scale = tuner:kernel{ source = [[__kernel void scale(__global const float *a, __global float *b) {
      int i = get_global_id(0); b[i] = a[i] * FACTOR; }]], name = "scale", global = 64, group = 1,
      args = { data:input(), mid:output() } }
    local shift = tuner:kernel{ source = [[__kernel void shift(__global const float *b, __global float *c) {
      int i = get_global_id(0); c[i] = b[i] + FACTOR + get_local_size(0); }]], name = "shift", global = 64,
      group = 1, args = { mid:input(), res:output() } }
    local c = tuner:composition{ name = "two", kernels = { scale, shift } }
    c:param("FACTOR", { 2, 3 })
    c:param("WG", { 4, 8 })
    c:modifier(shift, "group_x", "mul", "WG")
    return c, scale, shift
  end

  it("shares its parameters, targets modifiers at one kernel and validates the end result", function()
    local c = make()
    c:reference(res, function(ref) ref:fill(function(i) return i * 3 + 3 + 8 end) end)
    local r = tuner:tune(c, { repeats = 1 })
    assert.are.same({ "invalid_output", "invalid_output", "invalid_output", "ok" }, statuses(r))
    assert.are.equal(2, r[1].launches)
    assert.are.same({ 1 }, r[4].sizes[1].group)
    assert.are.same({ 8 }, r[4].sizes[2].group)
    assert.are.equal("scale", r[4].sizes[1].kernel)
  end)

  it("runs its launcher, which may launch its kernels in any order", function()
    local c, scale, shift = make()
    local order = {}
    c:launcher(function(run)
      run:launch(scale)
      run:launch(shift)
      run:launch(shift)
      order[#order + 1] = "x"
    end)
    c:reference(res, function(ref) ref:fill(function(i) return i * 2 + 2 + 4 end) end)
    local r = tuner:tune(c, { repeats = 1 })
    assert.are.equal("ok", r[1].status)
    assert.are.equal(3, r[1].launches)
    assert.has_error(function()
      local other = tuner:kernel{ source = axpb, name = "axpb", global = 1 }
      c:modifier(other, "group_x", "mul", "WG")
    end)
  end)
end)

describe("a faulty launcher", function()
  local o = kt.array("int", 4)
  local k = tuner:kernel{ source = axpb, name = "axpb", global = 4, args = { o:inout(), kt.int(0) } }
  k:param("MUL", { 1, 2, 3 })

  it("fails its configuration with the Lua traceback, and tuning goes on", function()
    k:launcher(function(run, cfg)
      if cfg.MUL == 2 then error("no MUL of 2 here") end
      run:launch(k)
    end)
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.same({ "ok", "runtime_failed", "ok" }, statuses(r))
    assert.matches("spec/launcher_spec.lua:%d+: no MUL of 2 here\nstack traceback:", r[2].error)
  end)

  it("is reported when it launches no kernel", function()
    k:launcher(function(run, cfg) if cfg.MUL ~= 3 then run:launch(k) end end)
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.same({ "ok", "ok", "runtime_failed" }, statuses(r))
    assert.are.equal("the launcher launched no kernel", r[3].error)
  end)

  it("gets launch_failed when the device refuses one of its launches", function()
    k:launcher(function(run, cfg) run:launch(k, { global = 4, group = cfg.MUL }) end)
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.same({ "ok", "ok", "launch_failed" }, statuses(r))
  end)

  it("stuck in its Lua code is stopped by the time limit: timeout, and tuning goes on", function()
    k:launcher(function(run, cfg)
      run:launch(k)
      if cfg.MUL == 2 then while true do end end
    end)
    local r = tuner:tune(k, { repeats = 1, time_limit = 0.5 })
    assert.are.same({ "ok", "timeout", "ok" }, statuses(r))
    assert.matches("^spec/launcher_spec.lua:%d+: the launcher ran past its time limit %(0.5 s%) in its Lua "
      .. "code\nstack traceback:", r[2].error)
    -- one that catches the error is stopped all the same
    k:launcher(function(run, cfg)
      run:launch(k)
      while cfg.MUL == 3 do pcall(function() for _ = 1, 100 do end end) end
    end)
    r = tuner:tune(k, { repeats = 1, time_limit = 0.5 })
    assert.are.same({ "ok", "ok", "timeout" }, statuses(r))
  end)

  it("cannot keep its run object", function()
    local kept
    k:launcher(function(run) kept = run; run:launch(k) end)
    tuner:tune(k, { repeats = 1, stop = { count = 1 } })
    assert.has_error(function() kept:launch(k) end,
      "this run is over: use the run object only inside its launcher")
    k:launcher(nil)
    assert.are.equal(1, tuner:tune(k, { repeats = 1 })[1].launches)
  end)
end)
