-- The pipelined measuring of configurations (core/eval/measure.c): timed runs queued back to back,
-- outputs compared on a host worker or on the device, and the same outcomes as one by one.
local kt = require "ktlua"
local wait = require "spec.support.wait"

local tuner = kt.tuner()

-- The relative standard error of the mean, as core/base/stats.c computes it.
local function rse(x, n)
  if n < 2 then return math.huge end
  local m, ss = 0, 0
  for i = 1, n do m = m + x[i] end
  m = m / n
  for i = 1, n do ss = ss + (x[i] - m) ^ 2 end
  return math.sqrt(ss / (n - 1)) / math.sqrt(n) / math.abs(m)
end

local function outcomes(r)
  local t = {}
  for i = 1, #r do t[i] = { index = r[i].index, status = r[i].status, error = r[i].error } end
  return t
end

-- c[i] = a[i] * 2, except where MODE makes it wrong: 1 one element off by 1 (element 777),
-- 2 a relative error of 1e-3 everywhere, 3 NaN where a[i] is NaN (the reference has NaN there
-- too), 4 NaN at element 5 only, 5 a wrong element past the first 1000.
local src = [[
__kernel void twice(__global const T *a, __global T *c, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  T x = a[i] * 2;
  if (MODE == 1 && i == 777) x += 1;
  if (MODE == 2) x *= 1.001;
  if (MODE == 4 && i == 5) x = NAN;
  if (MODE == 5 && i == 1500) x = -1;
  c[i] = x;
}]]

local function twice(type, n, nan_at)
  local a = kt.array(type, n):random(7)
  if nan_at then a[nan_at] = 0 / 0 end
  local c = kt.array(type, n)
  local k = tuner:kernel{ source = "#define T " .. type .. "\n" .. src, name = "twice", global = n, group = 1,
                          round_global = true, args = { a:input(), c:output(), kt.int(n) } }
  k:param("WG", { 64 }, { group_x = "mul" })
  k:param("MODE", { 0, 1, 2, 3, 4, 5 })
  return k, a, c
end

describe("the pipeline", function()
  it("keeps every timed run's own time, as many as repeats asks", function()
    local k, a, c = twice("float", 4096)
    k:reference(c, function(ref) for i = 0, 4095 do ref[i] = a[i] * 2 end end)
    local r = tuner:tune(k, { repeats = 5 })
    for i = 1, #r do
      if r[i].status == "ok" then
        assert.are.equal(5, #r[i].samples_ms)
        local s = {}
        for j, x in ipairs(r[i].samples_ms) do
          assert.is_true(x > 0)
          s[j] = x
        end
        table.sort(s)
        assert.are.equal(s[3], r[i].time_ms)
      else
        assert.are.equal(0, #r[i].samples_ms)
      end
    end
    -- Every launch's device time: the warm-ups too, so more than the timed runs.
    local sm = r:summary()
    assert.is_true(sm.device_ms > sm.kernel_ms)
  end)

  it("stops repeating where the adaptive rule says, after each run beyond the minimum", function()
    local k, a, c = twice("float", 4096)
    k:reference(c, function(ref) for i = 0, 4095 do ref[i] = a[i] * 2 end end)
    local rule = { rse = 0.05, min = 3, max = 9 }
    local r = tuner:tune(k, { repeats = rule })
    local oks = 0
    for i = 1, #r do
      local x, n = r[i].samples_ms, #r[i].samples_ms
      if r[i].status == "ok" then
        oks = oks + 1
        assert.is_true(n >= rule.min and n <= rule.max)
        if n < rule.max then assert.is_true(rse(x, n) < rule.rse) end
        for m = rule.min, n - 1 do assert.is_true(rse(x, m) >= rule.rse) end
      end
    end
    assert.are.equal(2, oks) -- MODE 0 and 3
  end)

  it("evaluates the same configurations with the same outcomes as one run at a time", function()
    local k, a, c = twice("float", 2048, 9)
    k:reference(c, function(ref) for i = 0, 2047 do ref[i] = a[i] * 2 end end)
    local opts = { search = "random", seed = 3, stop = { count = 5 }, repeats = 3 }
    local piped = tuner:tune(k, opts)
    opts.pipeline = false
    local serial = tuner:tune(k, opts)
    assert.are.same(outcomes(serial), outcomes(piped))
    assert.are.equal(5, #piped)
  end)

  for _, type in ipairs({ "float", "double" }) do
    it("compares on the device with the host's verdicts and messages (" .. type .. ")", function()
      local n = 3000
      local k, a, c = twice(type, n, 11)
      for _, ref in ipairs({ { method = "absolute", tolerance = 1e-4 }, { method = "relative", tolerance = 1e-2 },
                             { method = "relative", tolerance = 1e-4, first = 1000 } }) do
        k:reference(c, function(out) for i = 0, n - 1 do out[i] = a[i] * 2 end end, ref)
        local host = tuner:tune(k, { validate_on = "host", repeats = 2 })
        local device = tuner:tune(k, { validate_on = "device", repeats = 2 })
        assert.are.same(outcomes(host), outcomes(device))
        local want = ref.first and { "ok", "invalid_output", "invalid_output", "ok", "invalid_output", "ok" }
                     or ref.method == "relative" and { "ok", "invalid_output", "ok", "ok", "invalid_output", "invalid_output" }
                     or { "ok", "invalid_output", "invalid_output", "ok", "invalid_output", "invalid_output" }
        for i = 1, #device do assert.are.equal(want[i], device[i].status) end
      end
      assert.matches("element 777: got", tuner:tune(k, { validate_on = "device", repeats = 1 })[2].error)
    end)
  end

  it("fails only the configuration whose device process dies during its queued timed runs", function()
    -- MODE 1 counts its executions in an array it may not write, and writes into the first page
    -- of the address space in the third: the second of its timed runs, queued with the first.
    -- (No process maps that page, a sanitized one neither; an address far from the buffers, made
    -- from theirs, may fall in memory that is mapped, such as AddressSanitizer's shadow.)
    local src = [[__kernel void boom(__global int *count, __global int *o) {
      if (MODE == 1 && get_global_id(0) == 0) {
        int c = count[0];
        count[0] = c + 1;
        if (c >= 2) { __global int *far = (__global int *)((ulong)(c - 2) * 4096UL + 16UL); far[0] = 1; }
      }
      o[get_global_id(0)] = 7; }]]
    local count, o = kt.array("int", 1), kt.array("int", 64)
    local k = tuner:kernel{ source = src, name = "boom", global = 64, group = 64, args = { count:input(), o:output() } }
    k:param("MODE", { 0, 1, 2 })
    k:reference(o, function(ref) ref:fill(7) end)
    local r = tuner:tune(k, { repeats = 3 })
    assert.are.same({ "ok", "runtime_failed", "ok" }, { r[1].status, r[2].status, r[3].status },
      ("%d results; MODE %s: retried %s; error %s; %d samples"):format(#r, tostring(r[2].config.MODE),
        tostring(r[2].retried), tostring(r[2].error), #r[2].samples_ms))
    assert.matches("^first run: runtime_failed %(the device process died of signal %d+", r[2].retried)
    assert.are.equal(3, #r[1].samples_ms)
    assert.are.equal(3, #r[3].samples_ms)
    assert.are.equal(0, #r[2].samples_ms)
  end)

  it("makes the next configuration's kernel during the warm-up, also one then not evaluated", function()
    local n = 2048
    local a, c = kt.array("float", n):random(7), kt.array("float", n)
    local k = tuner:kernel{ name = "scale", global = n, group = 64, args = { a:input(), c:output(), kt.int(n) },
      source = [[__kernel void scale(__global const float *a, __global float *c, int n) {
        int i = get_global_id(0);
        if (i < n) c[i] = a[i] * (float)(P - P + 2); }]] }
    k:param("P", { 1, 2, 3, 4 })
    -- Three announced (seeds), two evaluated: the third's kernel is made during the second's
    -- warm-up, and never used. The reference, computed before the first configuration runs,
    -- waits for every compile to be over.
    k:reference(c, function(ref)
      wait.compiles_over(tuner)
      for i = 0, n - 1 do ref[i] = a[i] * 2 end
    end)
    local r = tuner:tune(k, { seeds = { { P = 4 }, { P = 2 }, { P = 3 } }, stop = { count = 2 }, repeats = 2 })
    assert.are.same({ 4, 2 }, { r[1].config.P, r[2].config.P })
    assert.are.same({ "ok", "ok" }, { r[1].status, r[2].status })
    local g = r:summary().gap
    assert.are.equal(2, g.ahead) -- P = 2's kernel during P = 4's warm-up, P = 3's during P = 2's
    assert.are.equal(1, g.n)
    assert.is_true(g.idle_ms > 0)
    -- The kernel made ahead serves a later tuning, whose configuration is charged its compile.
    local again = tuner:tune(k, { seeds = { { P = 3 }, { P = 4 } }, stop = { count = 2 }, repeats = 2 })
    assert.are.same({ 3, 4 }, { again[1].config.P, again[2].config.P })
    assert.are.same({ "ok", "ok" }, { again[1].status, again[2].status })
    assert.is_true(again[1].compile_ms > 0)
    assert.are.equal(0, again[2].compile_ms) -- compiled for the first tuning, and charged there
  end)

  it("compiles each program once in a tuning longer than the program cache holds", function()
    -- 72 sources against a cache of 64 entries. Each configuration's comparison waits for the
    -- compiles in flight, so the next one's compile is over and its kernel made ahead during the
    -- warm-up: such a program, not yet used, is not evicted by the compiles started after it (it
    -- was, and compiled again when its configuration came).
    local t, n = kt.tuner(), 256
    local a, c = kt.array("float", n):random(3), kt.array("float", n)
    local k = t:kernel{ name = "scale", global = n, group = 64, args = { a:input(), c:output(), kt.int(n) },
      source = [[__kernel void scale(__global const float *a, __global float *c, int n) {
        int i = get_global_id(0);
        if (i < n) c[i] = a[i] * (float)(P - P + 2); }]] }
    local values = {}
    for i = 1, 72 do values[i] = i end
    k:param("P", values)
    k:reference(c, function(ref)
      wait.compiles_over(t) -- the first compiles are over when the first configuration runs
      for i = 0, n - 1 do ref[i] = a[i] * 2 end
    end, { compare = function(got, want)
      wait.compiles_over(t)
      for i = 0, n - 1 do if got[i] ~= want[i] then return false end end
      return true
    end })
    local r = t:tune(k, { search = "random", seed = 5, repeats = 1 })
    assert.are.equal(72, #r)
    for i = 1, #r do assert.are.equal("ok", r[i].status) end
    assert.are.equal(71, r:summary().gap.ahead) -- every configuration's but the first
    assert.are.equal(72, t:cache().compiles)
    t:close()
  end)

  it("makes nothing ahead in a serial tuning", function()
    local k, a, c = twice("float", 1024)
    k:reference(c, function(ref) for i = 0, 1023 do ref[i] = a[i] * 2 end end)
    local r = tuner:tune(k, { pipeline = false, repeats = 1 })
    local g = r:summary().gap
    assert.are.equal(0, g.ahead)
    -- a gap before each configuration but the first, and before each run again of a wrong one
    assert.are.equal(#r - 1 + 3, g.n)
  end)

  it("rejects bad options, naming the expected values", function()
    local k, a, c = twice("float", 256)
    k:reference(c, function(ref) for i = 0, 255 do ref[i] = a[i] * 2 end end)
    assert.has_error(function() tuner:tune(k, { validate_on = "gpu" }) end,
      "tune options.validate_on: expected 'auto', 'host' or 'device', got 'gpu'")
    assert.has_error(function() tuner:tune(k, { pipeline = 1 }) end)
    local ok, e = pcall(tuner.tune, tuner, k, { pipeline = "yes" })
    assert.is_false(ok)
    assert.matches("tune options.pipeline", e)
  end)
end)
