-- Tuning: kernels, thread modifiers, parameters as defines, search, stop
-- conditions, repetitions, restoring written arguments.
local kt = require "ktlua"

local tuner = kt.tuner()

-- out[i] = the values of the given macros, so a test can see what the
-- kernel was built with and how it was launched.
local probe_src = [[
__kernel void probe(__global float *out, int n) {
  int i = get_global_id(0);
  if (i < n) out[i] = VALUE;
  if (i == 0) { out[n] = get_global_size(0); out[n + 1] = get_local_size(0); }
}]]

local function probe(n, def)
  local out = kt.array("float", n + 2)
  def = def or {}
  def.source, def.name = probe_src, "probe"
  def.global = def.global or n
  def.args = { out:output(), kt.int(n) }
  return tuner:kernel(def), out
end

describe("a kernel", function()
  it("comes from a file or a string", function()
    local k = tuner:kernel{ file = "../examples/kernels/vadd.cl", name = "vadd", global = 16 }
    assert.are.equal("vadd", k.name)
    assert.has_error(function() tuner:kernel{ name = "k", global = 1 } end,
      "kernel: give exactly one of 'file' and 'source'")
    assert.has_error(function() tuner:kernel{ file = "nope.cl", name = "k", global = 1 } end,
      "cannot read nope.cl: No such file or directory")
    -- only a regular file: no device read forever, no pipe waited on
    assert.has_error(function() tuner:kernel{ file = "/dev/zero", name = "k", global = 1 } end,
      "cannot read /dev/zero: not a regular file (a character device)")
    assert.has_error(function() tuner:kernel{ file = ".", name = "k", global = 1 } end,
      "cannot read .: not a regular file (a directory)")
  end)

  it("checks its definition", function()
    assert.has_error(function() tuner:kernel{ source = probe_src, global = 4 } end,
      "kernel.name: the kernel function's name is required")
    assert.has_error(function() tuner:kernel{ source = probe_src, name = "probe" } end,
      "kernel.global: the global size is required")
    assert.has_error(function() tuner:kernel{ source = probe_src, name = "probe", global = 0 } end,
      "kernel.global: expected a positive integer, got 0")
    assert.has_error(function() tuner:kernel{ source = probe_src, name = "probe", global = 2.5 } end,
      "kernel.global: expected a positive integer, got 2.5")
    assert.has_error(function() tuner:kernel{ source = probe_src, name = "probe", global = 4, args = 5 } end,
      "kernel probe: args must be a list of arguments, got number")
    assert.has_error(function() tuner:kernel{ source = probe_src, name = "probe", global = { 1, 2, 3, 4 } } end,
      "kernel.global: expected 1 to 3 sizes, got 4")
    assert.has_error(function() tuner:kernel{ source = probe_src, name = "probe", global = 4, grup = 2 } end)
    assert.has_error(function() tuner:kernel{ source = probe_src, name = "probe", global = 4, notation = "x" } end)
    assert.has_error(function() tuner:kernel{ source = probe_src, name = "probe", global = 4, args = { 5 } } end,
      "kernel probe, argument 1: a number needs a type, e.g. kt.int(5) or kt.float(5)")
  end)

  it("gets parameters of every type as #define NAME VALUE", function()
    local k, out = probe(8)
    k:param("A", { 3 })
    k:param("B", { 0.5 })
    k:param("OP", { "+" })
    k:param("VALUE_", { "(A OP B)" })
    k:args{ out:output(), kt.int(8) }
    local k2 = tuner:kernel{ source = "#define VALUE VALUE_\n" .. probe_src, name = "probe", global = 8,
                             args = { out:output(), kt.int(8) } }
    k2:param("A", { 3 })
    k2:param("B", { 0.5 })
    k2:param("OP", { "+" })
    k2:param("VALUE_", { "(A OP B)" })
    local r = tuner:run(k2, { A = 3, B = 0.5, OP = "+", VALUE_ = "(A OP B)" })
    assert.are.equal("ok", r.status)
    assert.are.equal(3.5, out[0])
    assert.are.equal(3.5, out[7])
  end)

  it("applies thread modifiers in the order they were added", function()
    local k, out = probe(64, { group = 1 })
    k:param("WG", { 4, 8 }, { group_x = "mul" })
    k:param("VEC", { 2 }, { global_x = "div" })
    k:param("VALUE", { 1 })
    k:modifier("global_x", "add", 16)          -- 64 / 2 + 16 = 48
    k:modifier("global_x", function(size, cfg) return size * cfg.VEC end) -- 96
    k:modifier("group_x", "div_ceil", "VEC")   -- WG / 2 rounded up
    local r = tuner:run(k, { WG = 8, VEC = 2, VALUE = 1 })
    assert.are.equal("ok", r.status)
    assert.are.same({ 96 }, r.global)
    assert.are.same({ 4 }, r.group)
    assert.are.equal(96, out[64])
    assert.are.equal(4, out[65])
  end)

  it("takes a thread size from an expression of the parameters", function()
    local k, out = probe(64, { group = 1 })
    k:param("WG", { 4, 8 })
    k:param("TILE", { 2, 4 })
    k:param("VALUE", { 1 })
    k:modifier("global_x", "64 // TILE * 2")       -- the size itself: 64 with TILE = 2
    k:modifier("group_x", "WG if TILE > 2 else WG // 2")
    k:modifier("global_x", "add", 8)               -- then the modifiers after it: 72
    local r = tuner:run(k, { WG = 8, TILE = 2, VALUE = 1 })
    assert.are.equal("ok", r.status, r.error)
    assert.are.same({ 72 }, r.global)
    assert.are.same({ 4 }, r.group)
    assert.are.equal(72, out[64])
    assert.are.equal(4, out[65])
    assert.has_error(function() k:modifier("group_x", "WG * SIZE") end,
      "thread size 'WG * SIZE': at character 6: unknown parameter 'SIZE'")
    assert.has_error(function() k:modifier("group_x", "WG > 2") end,
      "thread size 'WG > 2': the expression is a condition; it should give a number of threads")
    assert.has_error(function() k:modifier("group_x", "WG +") end)
    k:modifier("group_x", "WG / 3")
    local ok, err = pcall(tuner.run, tuner, k, { WG = 4, TILE = 2, VALUE = 1 })
    assert.is_false(ok)
    assert.matches("thread size 'WG / 3' gives 1.33333, not an integer", err, 1, true)
  end)

  it("understands the CUDA notation of the global size and rounds up when asked", function()
    local k, out = probe(60, { global = 15, group = 4, notation = "cuda" })
    k:param("VALUE", { 2 })
    local r = tuner:run(k, { VALUE = 2 })
    assert.are.same({ 15 }, r.global)       -- blocks, as the kernel states it
    assert.are.equal(60, out[60])            -- 15 blocks of 4 work-items
    local k2, out2 = probe(50, { global = 50, group = 8, round_global = true })
    k2:param("VALUE", { 2 })
    assert.are.equal("ok", tuner:run(k2, { VALUE = 2 }).status)
    assert.are.equal(56, out2[50])
  end)

  it("runs in two and three dimensions", function()
    local src = [[__kernel void d3(__global int *o) {
      int i = get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2));
      o[i] = get_local_size(0) * 100 + get_local_size(1) * 10 + get_local_size(2); }]]
    local o = kt.array("int", 4 * 6 * 2)
    local k = tuner:kernel{ source = src, name = "d3", global = { 4, 6, 2 }, group = { 1, 1, 1 }, args = { o:output() } }
    k:param("BY", { 3 }, { group_y = "mul" })
    k:param("BX", { 2 }, { group_x = "mul" })
    local r = tuner:run(k, { BX = 2, BY = 3 })
    assert.are.same({ 4, 6, 2 }, r.global)
    assert.are.same({ 2, 3, 1 }, r.group)
    assert.are.equal(231, o[47])
    k:param("Z", { 2 }, { group_z = "mul", global_z = "mul" }) -- z: 2 * 2 work-items, groups of 2
    k:modifier("global_y", "sub", 3)                         -- y: 6 - 3
    o:fill(0)
    r = tuner:run(k, { BX = 2, BY = 3, Z = 2 })
    assert.are.equal("ok", r.status, r.error)
    assert.are.same({ 4, 3, 4 }, r.global)
    assert.are.same({ 2, 3, 2 }, r.group)
    assert.are.equal(232, o[47])
  end)

  it("passes arrays of halves and of structs to kernels", function()
    local h = kt.array("half", 4):fill(function(i) return i + 0.5 end)
    local pair = kt.struct("pair", { { "a", "int" }, { "b", "float", 2 } })
    local p = kt.array(pair, 4):fill(function(i) return { a = i, b = { 0.25, i * 10 } } end)
    local out = kt.array("float", 4)
    local k = tuner:kernel{ name = "hs", global = 4, prelude = pair:declaration(), args = { h:input(), p:input(), out:output() },
      source = [[__kernel void hs(__global const half *h, __global const pair *p, __global float *o) {
        int i = get_global_id(0); o[i] = vload_half(i, h) + p[i].a + p[i].b[0] + p[i].b[1]; }]] }
    assert.are.equal("ok", tuner:run(k).status)
    assert.are.same({ 0.75, 12.75, 24.75, 36.75 }, out:totable())
  end)

  it("places arrays in device memory, pinned host memory or zero-copy memory", function()
    local src = "__kernel void p(__global const int *a, __global int *b) { b[get_global_id(0)] = a[get_global_id(0)] + 1; }"
    for _, place in ipairs({ "device", "host", "zero_copy" }) do
      local a = kt.array("int", 16):fill(function(i) return i end)
      local b = kt.array("int", 16)
      local k = tuner:kernel{ source = src, name = "p", global = 16,
                              args = { a:input{ placement = place }, b:output{ placement = place } } }
      k:reference(b, function(ref) ref:fill(function(i) return i + 1 end) end)
      assert.are.equal("ok", tuner:tune(k, { repeats = 2 })[1].status, place)
      tuner:run(k)
      assert.are.equal(16, b[15], place)
    end
  end)

  it("passes compiler options", function()
    local src = "__kernel void k(__global int *o) { o[0] = FROM_OPTIONS; }"
    local o = kt.array("int", 1)
    local k = tuner:kernel{ source = src, name = "k", global = 1, options = "-DFROM_OPTIONS=42", args = { o:output() } }
    assert.are.equal("ok", tuner:run(k).status)
    assert.are.equal(42, o[0])
  end)

  it("shares an argument between kernels", function()
    local buf = kt.array("int", 4)
    local shared = buf:inout()
    local writer = tuner:kernel{ source = "__kernel void w(__global int *b) { b[get_global_id(0)] = 5; }",
                                 name = "w", global = 4, args = { shared } }
    local adder = tuner:kernel{ source = "__kernel void a(__global int *b) { b[get_global_id(0)] += 1; }",
                                name = "a", global = 4, args = { shared } }
    tuner:run(writer)
    tuner:run(adder)
    assert.are.same({ 6, 6, 6, 6 }, buf:totable())
  end)

  it("takes scalars of every type and local memory", function()
    local src = [[__kernel void s(__global double *o, char a, uchar b, short c, ushort d, int e, uint f,
        long g, ulong h, float i, double j, __local float *tmp) {
      tmp[get_local_id(0)] = 1.0f;
      barrier(CLK_LOCAL_MEM_FENCE);
      o[0] = a + b + c + d + e + f + g + h + i + j + tmp[0]; }]]
    local o = kt.array("double", 1)
    local k = tuner:kernel{ source = src, name = "s", global = 8, group = 8, args = {
      o:output(), kt.char(-1), kt.uchar(2), kt.short(-3), kt.ushort(4), kt.int(-5), kt.uint(6),
      kt.long(-7), kt.ulong(8), kt.float(0.5), kt.double(0.25), kt.localmem("float", 8) } }
    assert.are.equal("ok", tuner:run(k).status)
    assert.are.equal(-1 + 2 - 3 + 4 - 5 + 6 - 7 + 8 + 0.5 + 0.25 + 1, o[0])
  end)

  it("sizes local memory from the configuration", function()
    local src = [[__kernel void l(__global int *o, __local int *tmp) {
      tmp[get_local_id(0)] = get_local_id(0); barrier(CLK_LOCAL_MEM_FENCE);
      if (get_local_id(0) == 0) { int s = 0; for (int i = 0; i < WG; i++) s += tmp[i]; o[get_group_id(0)] = s; } }]]
    local o = kt.array("int", 4)
    local k = tuner:kernel{ source = src, name = "l", global = 4, group = 1,
                            args = { o:output(), kt.localmem("int", function(cfg) return cfg.WG end) } }
    k:param("WG", { 8, 16 }, { group_x = "mul", global_x = "mul" })
    local results = tuner:tune(k, { repeats = 1 })
    assert.are.equal("ok", results[1].status)
    assert.are.equal("ok", results[2].status)
    tuner:run(k, { WG = 16 })
    assert.are.same({ 120, 120, 120, 120 }, o:totable()) -- 0 + 1 + ... + 15 per group
    tuner:run(k, { WG = 8 })
    assert.are.same({ 28, 28, 28, 28 }, o:totable())
  end)
end)

describe("tuning", function()
  local function counter_kernel()
    local out = kt.array("int", 4)
    local k = tuner:kernel{ source = "__kernel void c(__global int *o) { o[get_global_id(0)] = X * 10 + Y; }",
                            name = "c", global = 4, args = { out:output() } }
    k:param("X", { 1, 2, 3 })
    k:param("Y", { 1, 2, 3, 4 })
    return k, out
  end

  it("tries every configuration in index order with exhaustive search", function()
    local k = counter_kernel()
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.equal(12, #r)
    for i = 1, 12 do assert.are.equal(i - 1, r[i].index) end
    assert.are.equal("exhaustive", r.searcher)
    assert.are.equal("space explored", r.stopped)
  end)

  it("gives a searcher that needs each result first every result before its next proposal", function()
    -- X = 6 is best by far, then Y = 6: an objective of the configuration, not a time that a
    -- loaded machine could reorder, so the search is the same every time
    local o = kt.array("int", 1)
    local k = tuner:kernel{ name = "la", global = 1, args = { o:output() }, source = [[
__kernel void la(__global int *o) { o[0] = X * 10 + Y; }]] }
    k:param("X", { 1, 2, 3, 4, 5, 6 })
    k:param("Y", { 1, 2, 3, 4, 5, 6 })
    for _, lookahead in ipairs({ 1, 40 }) do
      local r = tuner:tune(k, { search = { "staged", stages = "X;Y" }, repeats = 1, stop = { count = 11 },
                                lookahead = lookahead,
                                objective = function(res) return (7 - res.config.X) * 10 + 7 - res.config.Y end })
      local order = {}
      for i = 1, #r do order[i] = r[i].index end
      -- X first (Y = 1), then Y on the best X
      assert.are.same({ 0, 6, 12, 18, 24, 30, 31, 32, 33, 34, 35 }, order)
    end
  end)

  it("draws a seeded random order without repeats", function()
    local k = counter_kernel()
    local function order(seed)
      local r = tuner:tune(k, { search = "random", seed = seed, repeats = 1 })
      local o = {}
      for i = 1, #r do o[i] = r[i].index end
      return o
    end
    local a, b, c = order(5), order(5), order(6)
    local first = a[1]
    assert.are.same(a, b)
    assert.are_not.same(a, c)
    table.sort(a)
    assert.are.same({ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 }, a)
    local d = tuner:tune(k, { search = { "random", seed = 5 }, repeats = 1 })
    assert.are.equal(first, d[1].index)
  end)

  it("stops at a count, a fraction, a time or a target, whichever comes first", function()
    local k = counter_kernel()
    assert.are.equal(5, #tuner:tune(k, { stop = { count = 5 }, repeats = 1 }))
    assert.are.equal("count", tuner:tune(k, { stop = { count = 5 }, repeats = 1 }).stopped)
    assert.are.equal(3, #tuner:tune(k, { stop = { fraction = 0.25 }, repeats = 1 }))
    assert.are.equal(4, #tuner:tune(k, { stop = { fraction = 0.3, count = 7 }, repeats = 1 }))
    assert.are.equal(3, #tuner:tune(k, { stop = { fraction = 0.3, count = 3 }, repeats = 1 }))
    local r = tuner:tune(k, { stop = { seconds = 1e-9 }, repeats = 1 })
    assert.are.equal("seconds", r.stopped)
    assert.are.equal(1, #r)
    r = tuner:tune(k, { stop = { target_ms = 1e9 }, repeats = 1 })
    assert.are.equal(1, #r)
    assert.are.equal("target", r.stopped)
    assert.has_error(function() tuner:tune(k, { stop = { fraction = 2 } }) end)
    assert.has_error(function() tuner:tune(k, { stop = { cuont = 2 } }) end,
      "tune options.stop: unknown field 'cuont' (expected one of: count, fraction, seconds, target_ms, "
      .. "no_improvement, min_improvement_pct, window, failures)")
    assert.has_error(function() tuner:tune(k, { serch = "random" }) end)
    assert.has_error(function() tuner:tune(k, { search = "nope" }) end,
      "unknown searcher 'nope' (expected one of: " .. kt.searchers .. ")")
  end)

  it("takes a fixed number of timed runs, or repeats until the time is stable", function()
    local k = counter_kernel()
    local r = tuner:tune(k, { repeats = 7, stop = { count = 2 } })
    assert.are.equal(7, #r[1].samples_ms)
    local samples = r[1].samples_ms
    table.sort(samples)
    assert.are.equal(samples[4], r[1].time_ms)
    r = tuner:tune(k, { repeats = { rse = 0.5, min = 4, max = 9 }, stop = { count = 3 } })
    for i = 1, 3 do assert.is_true(#r[i].samples_ms >= 4 and #r[i].samples_ms <= 9) end
    -- an error target that noisy timings cannot reach: the cap ends the runs (two
    -- identical samples, though, have no error at all)
    r = tuner:tune(k, { repeats = { rse = 1e-12, min = 2, max = 6 }, stop = { count = 1 } })
    local n = #r[1].samples_ms
    assert.is_true(n == 6 or (n >= 2 and r[1].samples_ms[1] == r[1].samples_ms[n]))
    -- by default: until the relative standard error of the mean is under 2%, 3 to 50 runs, or
    -- from 10 on where the device's threads waited for a processor (a CPU device on a busy machine)
    r = tuner:tune(k, { stop = { count = 2 } })
    for i = 1, 2 do
      local s, n, sum, sq = r[i].samples_ms, #r[i].samples_ms, 0, 0
      for _, x in ipairs(s) do sum = sum + x end
      local mean = sum / n
      for _, x in ipairs(s) do sq = sq + (x - mean) ^ 2 end
      local rse = math.sqrt(sq / (n - 1)) / math.sqrt(n) / mean
      assert.is_true(n >= 3 and n <= 50, n)
      assert.is_true(n == 50 or rse < 0.02 or (r[i].crowded and n >= 10),
        ("%d runs, rse %g, crowded %s"):format(n, rse, tostring(r[i].crowded)))
    end
    assert.has_error(function() tuner:tune(k, { repeats = 0 }) end)
    assert.has_error(function() tuner:tune(k, { repeats = { min = 5, max = 2 } }) end)
  end)

  it("restores written arguments before every run", function()
    local acc = kt.array("int", 8):fill(100)
    local k = tuner:kernel{ source = "__kernel void acc(__global int *a) { a[get_global_id(0)] += STEP; }",
                            name = "acc", global = 8, args = { acc:inout() } }
    k:param("STEP", { 1, 2, 3 })
    k:reference(acc, function(ref) for i = 0, 7 do ref[i] = 101 end end)
    local r = tuner:tune(k, { repeats = 5 })
    assert.are.equal("ok", r[1].status)
    assert.are.equal("invalid_output", r[2].status)
    assert.are.equal("invalid_output", r[3].status)
    assert.matches("element 0: got 102, expected 101", r[2].error)
    assert.are.same({ 100, 100, 100, 100, 100, 100, 100, 100 }, acc:totable())
  end)

  it("restores an array kernels only write before each warm-up, not between timed runs", function()
    local own = kt.tuner() -- no array of another tuning to restore
    local a, o = kt.array("int", 8):fill(5), kt.array("int", 8)
    local k = own:kernel{ source = "__kernel void k(__global int *a, __global int *o) {"
                              .. " int i = get_global_id(0); a[i] = a[i] * 1; o[i] = a[i] + X - X; }",
                            name = "k", global = 8, args = { a:inout(), o:output() } }
    k:param("X", { 1, 2, 3 })
    k:reference(o, function(ref) ref:fill(5) end)
    local r = own:tune(k, { repeats = 3 })
    assert.are.same({ "ok", "ok", "ok" }, { r[1].status, r[2].status, r[3].status })
    -- 3 configurations of 4 runs (a warm-up, 3 timed); nothing to restore before the first:
    -- a (read and written) before each of the 11 others, o before the 2 other warm-ups
    assert.are.equal(11 + 2, r:summary().restores)
    k:launcher(function(run) run:launch(k) end) -- a launcher's runs restore both, every time
    r = own:tune(k, { repeats = 3 })
    own:close()
    assert.are.same({ "ok", "ok", "ok" }, { r[1].status, r[2].status, r[3].status })
    assert.are.equal(11 + 11, r:summary().restores)
  end)

  it("uploads read-only inputs once per tuning", function()
    local input = kt.array("int", 4):fill(1)
    local out = kt.array("int", 4)
    local k = tuner:kernel{ source = "__kernel void cp(__global const int *i, __global int *o) { o[get_global_id(0)] = i[get_global_id(0)] * X; }",
                            name = "cp", global = 4, args = { input:input(), out:output() } }
    k:param("X", { 1, 2, 3 })
    local seen = {}
    k:reference(out, function(ref) for i = 0, 3 do ref[i] = input[i] end end)
    -- The host array changes during the tuning; the device keeps the
    -- contents it had when the tuning started.
    local r = tuner:tune(k, { repeats = 1, progress = function(res) input:fill(res.index + 50); seen[#seen + 1] = res.status end })
    assert.are.same({ "ok", "invalid_output", "invalid_output" }, seen)
    assert.matches("got 2, expected 1", r[2].error)
  end)
end)
