-- Verdicts that can be trusted: inputs protected, sizes as launched, every
-- failure explained (doc/tuning.md, "Trustworthy verdicts").
local kt = require "ktlua"
local shell = require "spec.support.shell"
local statuses = require "spec.support.statuses"

local tuner = kt.tuner()

-- c = a + b; configuration BAD = 1 also writes -1 where it must not, as
-- WHERE says: into b through its distance from c, past c's end, or
-- through b's const pointer.
local function adder(n, where, bad, on)
  local src = ([[
__kernel void add(__global const float *a, __global float *c, __global const float *b) {
  int i = get_global_id(0);
  c[i] = a[i] + b[i];
#if BAD == 1
  %s
#endif
}]]):format(where)
  local a = kt.array("float", n):fill(function(i) return i end)
  local b = kt.array("float", n):fill(3)
  local c = kt.array("float", n)
  local k = (on or tuner):kernel{ source = src, name = "add", global = n, group = 16,
                                 args = { a:input(), c:output(), b:input() } }
  k:param("BAD", bad or { 0, 1, 2, 3, 4, 5 })
  k:reference(c, function(ref) ref:fill(function(i) return i + 3 end) end)
  return k, b
end

local INTO_B = "c[(b - (__global const float *)c) + i] = -1.0f;"
local PAST_C = "c[i + get_global_size(0)] = -1.0f;"
local CONST_B = "((__global float *)b)[i] = -1.0f;"

describe("a configuration that writes where no kernel may", function()
  it("is recorded out_of_bounds with what it overwrote, and every later one is ok", function()
    local k, b = adder(256, INTO_B)
    local r = tuner:tune(k, { search = "exhaustive" })
    assert.are.same({ "ok", "out_of_bounds", "ok", "ok", "ok", "ok" }, statuses(r))
    assert.are.equal("it wrote where no kernel may: kernel add, argument 3 (input float[256]): "
      .. "256 of 256 elements changed, the first at element 0 (-1 instead of 3) (restored)",
      r[2].error)
    assert.is_number(r[2].time_ms)
    assert.are_not.equal(1, r:best().config.BAD)
    local s = r:summary()
    assert.are.equal(1, s.inputs_changed)
    assert.are.equal(1, s.statuses.out_of_bounds)
    assert.matches("^configuration 1 wrote where no kernel may: kernel add, argument 3", s.inputs_log)
    assert.is_true(s.input_checks >= 2)
    assert.are.equal(3, b[0]) -- the host contents are the tuning's own
  end)

  it("is caught by checks compared on the device, with the message of the host's", function()
    -- every configuration checked: the device compares each input with a copy kept there and
    -- each zone with its pattern; only what it finds changed is read back, to say what changed
    local k, b = adder(256, CONST_B)
    local r = tuner:tune(k, { search = "exhaustive", check_inputs = "always" })
    assert.are.same({ "ok", "out_of_bounds", "ok", "ok", "ok", "ok" }, statuses(r))
    assert.are.equal("it wrote where no kernel may: kernel add, argument 3 (input float[256]): "
      .. "256 of 256 elements changed, the first at element 0 (-1 instead of 3) (restored)",
      r[2].error)
    local s = r:summary()
    assert.are.equal(1, s.inputs_changed)
    assert.are.equal(6, s.input_checks)
    assert.are.equal(6, s.input_checks_device)
    local past = tuner:tune(adder(64, PAST_C), { search = "exhaustive", check_inputs = "always" })
    assert.are.same({ "ok", "out_of_bounds", "ok", "ok", "ok", "ok" }, statuses(past))
    assert.matches("written past its end", past[2].error, 1, true)
    assert.are.equal(past:summary().input_checks, past:summary().input_checks_device)
    assert.are.equal(3, b[0])
  end)

  it("is found by checks sent with the configuration's runs, or apart in one round trip", function()
    -- A check due after a configuration goes to the device process with its runs: its
    -- comparisons queued behind the last timed run, the read of their flag with them, and the
    -- flag comes back with the runs' wait. Made apart (here after the last configuration, the
    -- checks following failures only), a check sends its comparisons and the flag's read at
    -- once and waits once: one round trip and seven requests, the six comparisons (each
    -- array's zone, the inputs and the output's kept copy against their copies) and the read.
    -- The wait for every queue before it costs nothing when the configuration's own wait left
    -- nothing queued, the flag needs no clearing (each check writes its own mark), and the
    -- copies it compares against were made on the device at the upload.
    local own = kt.tuner() -- a check compares every array its tuner holds: this task's alone
    local k = adder(256, INTO_B, { 0, 2, 3, 4, 5 }, own)
    local function summary(count, when)
      local r = own:tune(k, { search = "exhaustive", check_inputs = when, repeats = 3,
                              stop = { count = count } })
      assert.are.equal(count, r:summary().statuses.ok)
      return r:summary()
    end
    summary(1, "always") -- the checks' kernel made
    local two, five = summary(2, "always"), summary(5, "always")
    assert.are.same({ 2, 2, 2 }, { two.input_checks, two.input_checks_device,
                                   two.input_checks_queued })
    assert.are.same({ 5, 5, 5 }, { five.input_checks, five.input_checks_device,
                                   five.input_checks_queued })
    assert.are.same({ 0, 0, 0, 0 }, { two.input_check_round_trips, two.input_check_requests,
                                      five.input_check_round_trips, five.input_check_requests })
    local apart = summary(5, "failures")
    assert.are.same({ 1, 1, 0 }, { apart.input_checks, apart.input_checks_device,
                                   apart.input_checks_queued })
    assert.are.same({ 1, 7 }, { apart.input_check_round_trips, apart.input_check_requests })
    -- the writer among them is blamed, alone, by checks queued with the runs; also where the
    -- runs go on past the least number the rule asks for (an rse that no times reach), and the
    -- check queued there is not the one taken
    for _, repeats in ipairs({ 3, { min = 3, max = 4, rse = 1e-9 } }) do
      local r = own:tune(adder(256, INTO_B, { 0, 1, 3, 4, 5 }, own), { search = "exhaustive",
        check_inputs = "always", repeats = repeats })
      assert.are.same({ "ok", "out_of_bounds", "ok", "ok", "ok" }, statuses(r))
      assert.matches("argument 3 %(input float%[256%]%): 256 of 256 elements changed", r[2].error)
      local s = r:summary()
      assert.are.same({ 1, 5 }, { s.inputs_changed, s.input_checks_device })
      assert.is_true(s.input_checks_queued >= 3)
    end
    own:close()
  end)

  it("is caught in any byte of the zone past an output, the zone compared in words", function()
    -- 4102 ints: a zone of 4102 bytes, 512 eight-byte words and 6 bytes more
    local src = [[__kernel void f(__global int *o) {
      int i = get_global_id(0);
      o[i] = 1;
      if (AT >= 0 && i == 0) ((__global uchar *)o)[4 * 4102 + AT] += 1; }]]
    local o = kt.array("int", 4102)
    local k = tuner:kernel{ source = src, name = "f", global = 4102, args = { o:output() } }
    k:param("AT", { -1, 0, 5, 4095, 4096, 4101 })
    k:reference(o, function(ref) ref:fill(1) end)
    local r = tuner:tune(k, { search = "exhaustive", check_inputs = "always" })
    assert.are.same({ "ok", "out_of_bounds", "out_of_bounds", "out_of_bounds", "out_of_bounds",
                      "out_of_bounds" }, statuses(r))
    for i, at in ipairs({ 0, 5, 4095, 4096, 4101 }) do
      assert.matches(("written past its end: 1 of the 4102 bytes after it changed, the first at "
        .. "byte %d past the end"):format(at), r[i + 1].error, 1, true)
    end
    assert.are.equal(r:summary().input_checks, r:summary().input_checks_device)
  end)

  it("is caught writing past its own output, whatever lies beyond", function()
    local k = adder(64, PAST_C)
    local r = tuner:tune(k, { search = "exhaustive" })
    assert.are.same({ "ok", "out_of_bounds", "ok", "ok", "ok", "ok" }, statuses(r))
    assert.matches("kernel add, argument 2 %(output float%[64%]%): written past its end: %d+ of "
      .. "the 4096 bytes after it changed, the first at byte 0 past the end", r[2].error)
  end)

  it("is found among several by running them again when checks only follow failures", function()
    -- Only failures are followed by checks: the writer (BAD = 1) passes
    -- unchecked, and BAD = 2 comes out wrong on the inputs it left.
    local k = adder(128, CONST_B)
    local r = tuner:tune(k, { search = "exhaustive", check_inputs = "failures" })
    assert.are.same({ "ok", "out_of_bounds", "ok", "ok", "ok", "ok" }, statuses(r))
    assert.matches("argument 3 %(input float%[128%]%): 128 of 128 elements changed", r[2].error)
    assert.matches("^first run: invalid_output %(element 0: got %-1, expected 3 .*%); run again "
      .. "because the inputs had changed and were restored$", r[3].retried)
    assert.are.equal(2, r:summary().input_checks) -- after BAD = 2, and at the end
  end)

  it("found only by the last check is recorded again in the journal", function()
    local path = os.tmpname()
    local k = adder(64, CONST_B, { 0, 1 }) -- the writer comes last
    local r = tuner:tune(k, { search = "exhaustive", check_inputs = "failures", journal = path })
    assert.are.same({ "ok", "out_of_bounds" }, statuses(r))
    local lines = 0
    for _ in io.lines(path) do lines = lines + 1 end
    assert.are.equal(4, lines) -- the header, two results, the writer again
    local back = kt.load(path)
    assert.are.equal(2, #back)
    assert.are.same({ "ok", "out_of_bounds" }, statuses(back))
    assert.are.equal(r[2].error, back[2].error)
    os.remove(path)
  end)

  it("is not run again, while a wrong output is checked once more", function()
    local src = [[__kernel void f(__global int *o) { o[get_global_id(0)] = V; }]]
    local o = kt.array("int", 16)
    local k = tuner:kernel{ source = src, name = "f", global = 16, args = { o:output() } }
    k:param("V", { 1, 2 })
    k:reference(o, function(ref) ref:fill(1) end)
    local r = tuner:tune(k, { search = "exhaustive" })
    assert.are.same({ "ok", "invalid_output" }, statuses(r))
    assert.is_nil(r[1].retried)
    assert.matches("^first run: invalid_output %(element 0: got 2, expected 1", r[2].retried)
    assert.matches("run again because a wrong output is checked once more$", r[2].retried)
  end)

  it("whose device process dies is run once more in a new one before it is recorded", function()
    local src = [[__kernel void wild(__global int *o) {
#if WILD == 1
      __global int *far = (__global int *)((ulong)o ^ 0x7f0000000000UL);
      far[get_global_id(0) * 1000003] = 1;
#endif
      o[get_global_id(0)] = 7; }]]
    local o = kt.array("int", 256)
    local k = tuner:kernel{ source = src, name = "wild", global = 256, group = 64, args = { o:output() } }
    k:param("WILD", { 0, 1, 2 })
    k:reference(o, function(ref) ref:fill(7) end)
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.same({ "ok", "runtime_failed", "ok" }, statuses(r))
    -- (signal 11, or 6 with the sanitizer's report in the sanitized build)
    assert.matches("^first run: runtime_failed %(the device process died of signal %d+ %(.*%); run "
      .. "again because its device process was lost$", r[2].retried)
  end)

  it("killed from outside while it runs is run again in a new device process", function()
    local stat = io.open("/proc/self/stat")
    local pid = stat:read("n")
    stat:close()
    local o = kt.array("int", 64)
    local k = tuner:kernel{ source = "__kernel void f(__global int *o) { o[get_global_id(0)] = 7; }",
                            name = "f", global = 64, args = { o:output() } }
    k:param("X", { 1, 2, 3 })
    local killed = false
    k:launcher(function(run, cfg)
      run:launch(k)
      if cfg.X == 2 and not killed then -- the device processes are this process's ktlua children
        killed = true
        os.execute("pkill -KILL -x ktlua -P " .. pid)
      end
      run:sync()
    end)
    k:reference(o, function(ref) ref:fill(7) end)
    local r = tuner:tune(k, { search = "exhaustive", repeats = 1 })
    assert.is_true(killed)
    assert.are.same({ "ok", "ok", "ok" }, statuses(r))
    assert.matches("^first run: runtime_failed %(.*the device process died of signal 9 %(Killed%).*%); "
      .. "run again because its device process was lost$", r[2].retried)
  end)

  it("leaves the next tuning a device process to work with when the last one timed out", function()
    local flag, out = kt.array("int", 1), kt.array("int", 64)
    local k = tuner:kernel{ name = "h", global = 64, args = { flag:input(), out:output() }, source = [[
      __kernel void h(__global volatile int *flag, __global int *o) {
      #if MODE == 1
        while (flag[0] == 0) { }
      #endif
        o[get_global_id(0)] = 7; }]] }
    k:param("MODE", { 0, 1 })
    assert.are.same({ "ok", "timeout" }, statuses(tuner:tune(k, { repeats = 1, time_limit = 0.5 })))
    assert.are.same({ "ok", "timeout" }, statuses(tuner:tune(k, { repeats = 1, time_limit = 0.5 })))
  end)

  it("rejects a check_inputs that is not one of the three", function()
    local k = adder(16, CONST_B)
    assert.has_error(function() tuner:tune(k, { check_inputs = "sometimes" }) end,
      "tune options.check_inputs: expected 'auto', 'always' or 'failures', got 'sometimes'")
  end)
end)

describe("a launcher's swap", function()
  it("lets the kernel write an array declared as an input, and restores it", function()
    local x = kt.array("int", 4):fill(1)
    local y = kt.array("int", 4):fill(10)
    local src = [[__kernel void addto(__global const int *from, __global int *to) {
      int i = get_global_id(0); to[i] += from[i]; }]]
    local k = tuner:kernel{ source = src, name = "addto", global = 4, args = { x:input(), y:inout() } }
    k:launcher(function(run)
      run:launch(k)
      run:swap(k, x, y)
      run:launch(k)
    end)
    k:reference(y, function(ref) ref:fill(11) end)
    local r = tuner:tune(k, { repeats = 3, check_inputs = "always" })
    assert.are.equal("ok", r[1].status, r[1].error)
    assert.are.equal(0, r:summary().inputs_changed)
  end)
end)

describe("recorded sizes", function()
  it("are the rounded global size that ran with round_global", function()
    local o = kt.array("int", 50)
    local k = tuner:kernel{ source = [[__kernel void f(__global int *o, int n) {
        int i = get_global_id(0); if (i < n) o[i] = 1; }]], name = "f", global = 50, group = 8,
      round_global = true, args = { o:output(), kt.int(50) } }
    local r = tuner:tune(k)
    assert.are.same({ 56 }, r[1].global)
    assert.are.same({ 56 }, r[1].sizes[1].global)
    assert.are.same({ { kernel = "f", global = { 56 }, group = { 8 }, count = 1 } }, r[1].launched)
  end)

  it("list every launch of a launcher, per kernel, with how often it ran", function()
    local o = kt.array("int", 64)
    local k = tuner:kernel{ source = [[__kernel void f(__global int *o) {
        o[get_global_id(0)] += 1; }]], name = "f", global = 64, group = 16, args = { o:inout() } }
    k:param("X", { 1, 2 })
    k:launcher(function(run)
      run:launch(k)
      run:launch(k, { global = 32 })
      run:launch(k, { global = 32 })
    end)
    local r = tuner:tune(k, { search = "exhaustive", repeats = 2 })
    local path = os.tmpname()
    r:write(path, "json")
    for _, res in ipairs({ r[2], kt.load(path)[2] }) do
      assert.are.same({ { kernel = "f", global = { 64 }, group = { 16 }, count = 1 },
                        { kernel = "f", global = { 32 }, group = { 16 }, count = 2 } }, res.launched)
    end
    os.remove(path)
  end)
end)

describe("a mistake that breaks every configuration", function()
  local broken = [[__kernel void f(__global int *o) { o[get_global_id(0)] = undeclared; }]]

  it("stops the tuning after the first ones, quoting the error", function()
    local o = kt.array("int", 16)
    local k = tuner:kernel{ source = broken, name = "f", global = 16, args = { o:output() } }
    k:param("A", kt.pow2(1, 32))
    k:param("B", kt.pow2(1, 32))
    local ok, err = pcall(tuner.tune, tuner, k, { search = "random", seed = 1 })
    assert.is_false(ok)
    assert.matches("task f: the first 8 configurations all failed the same way %(compile_failed%)"
      .. ", so every one may %(fail_fast = false tunes on regardless%): .*undeclared", err)
  end)

  it("tunes on with fail_fast = false, or after as many as fail_fast says", function()
    local o = kt.array("int", 16)
    local k = tuner:kernel{ source = broken, name = "f", global = 16, args = { o:output() } }
    k:param("A", { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 })
    local r = tuner:tune(k, { fail_fast = false })
    assert.are.equal(10, r:summary().statuses.compile_failed)
    local ok, err = pcall(tuner.tune, tuner, k, { fail_fast = 3 })
    assert.matches("the first 3 configurations all failed the same way", err)
    assert.has_error(function() tuner:tune(k, { fail_fast = 1 }) end,
      "tune options.fail_fast: expected a number of configurations (2 or more) or false, got 1")
  end)

  it("stops on a kernel name that the source lacks", function()
    local o = kt.array("int", 16)
    local k = tuner:kernel{ source = [[__kernel void f(__global int *o) { o[0] = 1; }]],
                            name = "g", global = 16, args = { o:output() } }
    k:param("A", { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 })
    local ok, err = pcall(tuner.tune, tuner, k)
    assert.matches("the first 8 configurations all failed the same way %(compile_failed%)", err)
  end)

  it("leaves results:best() nil with why, and tuner:run says what it needs", function()
    local o = kt.array("int", 16)
    local k = tuner:kernel{ source = broken, name = "f", global = 16, args = { o:output() } }
    k:param("A", { 1, 2 })
    local r = tuner:tune(k)
    local best, why = r:best()
    assert.is_nil(best)
    assert.are.equal("no configuration was valid: 2 compile_failed", why)
    assert.has_error(function() tuner:run(k, r:best()) end,
      "bad argument #2 to 'run' (no configuration given (a table of values, a result or an index; "
      .. "results:best() gives nil, and why, when no configuration was valid))")
  end)
end)

describe("what the device says", function()
  it("keeps the compiler's warnings of a build that succeeded in the result", function()
    local o = kt.array("int", 16)
    local k = tuner:kernel{ source = [[__kernel void f(__global int *o) {
        int i = get_global_id(0), x = 0; if (x = i) o[i] = 1; else o[i] = 1; }]],
      name = "f", global = 16, args = { o:output() } }
    local r = tuner:tune(k)
    assert.are.equal("ok", r[1].status)
    assert.matches("using the result of an assignment as a condition", r[1].build_log)
  end)

  it("goes into the results, not onto the tuner's stderr", function()
    -- PoCL's debug output is written on the device process's stderr (and on
    -- that of the short-lived process that lists the devices, which makes
    -- no kernel f).
    local script = os.tmpname()
    local f = io.open(script, "w")
    f:write([[
local kt = require "ktlua"
local tuner = kt.tuner("cpu")
local o = kt.array("int", 16)
local k = tuner:kernel{ source = "__kernel void f(__global int *o) { o[get_global_id(0)] = V; }",
                        name = "f", global = 16, args = { o:output() } }
k:param("V", { 1, 2 })
k:reference(o, function(ref) ref:fill(1) end)
local r = tuner:tune(k, { search = "exhaustive" })
print("retried: " .. tostring(r[2].retried))
print("result log: " .. tostring(r[1].device_log ~= nil))
print("summary log: " .. tostring((r:summary().device_log or ""):find("configuration 0:", 1, true) ~= nil))
print("kernel: " .. tostring((r[1].device_log or ""):find("Kernel f (", 1, true) ~= nil))
]])
    f:close()
    local out = shell.run("POCL_DEBUG=all " .. shell.ktlua .. " " .. script .. " 2>&1 >/dev/null")
    local printed = shell.run("POCL_DEBUG=all " .. shell.ktlua .. " " .. script .. " 2>/dev/null")
    os.remove(script)
    assert.is_nil(out:find("Kernel f (", 1, true))
    assert.matches("result log: true", printed)
    assert.matches("summary log: true", printed)
    assert.matches("kernel: true", printed)
    -- a wrong output after the device process said something: a new one
    assert.matches("retried: first run: invalid_output %(element 0: got 2, expected 1[^\n]*%); run "
      .. "again because the device process reported trouble\n", printed)
  end)
end)
