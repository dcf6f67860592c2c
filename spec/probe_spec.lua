-- Device probes (kt.probe, ktlua --probe, db:probe) and the cost model (k:cost,
-- k:predict, k:predicted, k:model_error). Probes run with the test sizes
-- (quick = true): what is checked is how they repeat and what they keep, not
-- how fast the device is (bench/RESULTS.md has those figures).
local kt = require "ktlua"
local files = require "spec.support.files"
local shell = require "spec.support.shell"

local device = kt.device()

-- Every row honours the repetition rule: at least min repetitions, at most
-- max; below the rse target, or capped at max above it.
local function check_rule(rows, target, min, max)
  for _, r in ipairs(rows) do
    local where = r.kind .. " " .. r.name .. " " .. r.size
    assert(r.reps >= min and r.reps <= max, where .. ": " .. r.reps .. " repetitions")
    if r.capped then
      assert(r.reps == max, where .. ": capped after " .. r.reps)
      assert(r.rse >= target, where)
    else
      assert(r.rse < target, where .. ": rse " .. r.rse)
    end
    assert(r.mean_ns > 0 and r.value > 0, where)
  end
end

local function count(rows, kind, name)
  local n = 0
  for _, r in ipairs(rows) do
    if r.kind == kind and (not name or r.name == name) then n = n + 1 end
  end
  return n
end

describe("kt.probe", function()
  local rec -- one quick probe, shared by the tests that read it

  setup(function()
    rec = kt.probe(device, { quick = true, sizes = { 4, 4096, 65536 } })
  end)

  it("measures every part, each row repeated to a 2% rse or capped at 100", function()
    assert.are.equal(0.02, rec.rse_target)
    assert.are.equal(100, rec.max_reps)
    check_rule(rec.rows, 0.02, 5, 100)
    -- three sizes, two directions, pageable and pinned
    assert.are.same({ 6, 6 }, { count(rec.rows, "h2d"), count(rec.rows, "d2h") })
    assert.are.same({ 3, 3 }, { count(rec.rows, "d2h", "pinned"), count(rec.rows, "h2d", "pageable") })
    assert.are.same({ 2, 3 }, { count(rec.rows, "launch"), count(rec.rows, "sweep") })
    local groups = {}
    for _, r in ipairs(rec.rows) do
      if r.kind == "sweep" then groups[#groups + 1] = r.size end
    end
    assert.are.same({ 16, 32, 64 }, groups) -- the quick sweep: 16 to 64
    assert.are.equal(12, count(rec.rows, "op") + #rec.notes)
  end)

  it("summarises its rows", function()
    local pinned = rec.transfer.h2d.pinned
    for _, r in ipairs(rec.rows) do
      if r.kind == "h2d" and r.name == "pinned" and r.size == 4 then
        assert.are.equal(r.mean_ns, pinned.latency_ns)
      elseif r.kind == "h2d" and r.name == "pinned" and r.size == 65536 then
        assert.are.equal(r.value, pinned.gbs)
        assert.are.equal(65536 / r.mean_ns, r.value)
      elseif r.kind == "launch" and r.name == "event" then
        assert.are.equal(r.value, rec.launch_ns)
      end
    end
    local best = 0
    for _, r in ipairs(rec.rows) do
      if r.kind == "sweep" and r.value > best then best = r.value end
    end
    assert.are.equal(best, rec.memory_gbs)
    assert.is_true(rec.ops.fp32_fma > 0)
  end)

  it("caps repetitions and says so", function()
    local r = kt.probe(device, { quick = true, parts = { "launch" }, rse = 1e-9, min = 3, max = 4 })
    assert.are.equal(2, #r.rows)
    check_rule(r.rows, 1e-9, 3, 4)
    for _, row in ipairs(r.rows) do
      assert.are.same({ 4, true }, { row.reps, row.capped })
    end
    assert.are.equal(2, r.capped)
    local out = files.tmpname(".txt")
    local f = assert(io.open(out, "w"))
    r:print(f)
    f:close()
    assert.matches("2 rows reached the cap of repetitions", files.read(out))
    os.remove(out)
  end)

  it("stops a probe that runs past its time limit", function()
    local ok, err = pcall(kt.probe, device, { parts = { "ops" }, time_limit = 0.5 })
    assert.is_false(ok)
    assert.matches("the probe took longer than its time limit (0.5 s) and was stopped", err, 1, true)
  end)

  it("keeps its records per device in a database and reads them back", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    local r = kt.probe(device, { quick = true, parts = { "launch", "sweep" }, db = db })
    local back = assert(db:probe(device))
    assert.are.same(r.rows, back.rows)
    assert.are.same({ device.name, device.backend, device.driver_version, r.date },
                    { back.device, back.backend, back.driver, back.date })
    assert.are.equal(r.memory_gbs, back.memory_gbs)
    -- probing again replaces the record
    kt.probe(device, { quick = true, parts = { "launch" }, db = db })
    assert.are.equal(2, #assert(db:probe(device.name, device.backend)).rows)
    local none, why = db:probe("no such device", "cuda")
    assert.is_nil(none)
    assert.are.equal("no probe of no such device (cuda) in " .. path, why)
    db:close()
    os.remove(path)
  end)

  it("rejects bad options, naming what it expects", function()
    local function fails(opts, msg)
      local ok, err = pcall(kt.probe, device, opts)
      assert.is_false(ok)
      assert.matches(msg, err, 1, true)
    end
    fails({ parts = { "transfer" } },
          'options.parts[1]: expected "transfers", "launch", "sweep" or "ops", got transfer')
    fails({ parts = {} }, "options.parts: expected at least one name")
    fails({ rse = 2 }, "options.rse: expected a relative standard error between 0 and 1")
    fails({ min = 1 }, "expected 2 <= min <= max repetitions, got min = 1, max = 100")
    fails({ min = 10, max = 5 }, "expected 2 <= min <= max repetitions, got min = 10, max = 5")
    fails({ groups = { 64, 16 } }, "options.groups: expected {lo, hi}, work-group sizes with 1 <= lo <= hi")
    fails({ groups = 64 }, "options.groups: expected {lo, hi}")
    fails({ sizes = { 0 } }, "options.sizes[1]: expected at most 32 byte counts from 1 to")
    fails({ reps = 3 }, "kt.probe options: unknown field 'reps' (expected one of:")
    fails({ time_limit = -1 }, "options.time_limit: expected seconds from 0 (none) to 86400")
    fails({ iters = 0 }, "options.iters: expected a whole number from 1 to 1048576, got 0")
    local ok, err = pcall(kt.probe, "opencl:9:9")
    assert.is_false(ok)
    assert.matches("opencl:9:9", err, 1, true)
  end)
end)

describe("ktlua --probe", function()
  it("prints the figures and keeps them in the database it names", function()
    local path = files.tmpname(".db")
    local out, code = shell.run(shell.ktlua .. " --probe=" .. device.id .. " --probe-quick --probe-db=" .. path)
    assert.are.equal(0, code, out)
    assert.matches("probe of " .. device.name, out, 1, true)
    assert.matches("summary: launch", out, 1, true)
    assert.matches("stored in " .. path, out, 1, true)
    local db = kt.db(path)
    assert.are.equal(25, #assert(db:probe(device)).rows + #assert(db:probe(device)).notes)
    db:close()
    os.remove(path)
    -- in a process that drives its device itself, the probe runs in place
    out, code = shell.run(shell.ktlua .. [[ -e "kt.tuner(nil, {isolate = false}); ]]
      .. [[print(#kt.probe(nil, {quick = true, parts = {'launch', 'sweep'}}).rows)"]])
    assert.are.same({ "5\n", 0 }, { out, code })
    out, code = shell.run(shell.ktlua .. " --probe-db=" .. path)
    assert.are.equal(1, code)
    assert.matches("--probe-db and --probe-quick go with --probe[=DEVICE]", out, 1, true)
  end)
end)

describe("the examples' costs", function()
  it("give the model's error on their tunings, from a kept probe", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    kt.probe(device, { quick = true, parts = { "launch", "sweep", "ops" }, db = db })
    db:close()
    for _, ex in ipairs({ { "vectoradd", "vadd", 4096 }, { "reduction", "reduce", 8192 },
                          { "sort", "radix_sort", 4096 } }) do
      -- 16 configurations each: the model's lines, not the whole spaces, are what is checked
      local out, code = shell.run(("%s examples/tune_%s.lua --n=%d --repeats=1 --count=16 --device=%s --probe=%s")
        :format(shell.ktlua, ex[1], ex[3], device.id, path))
      assert.are.equal(0, code, out)
      for _, model in ipairs({ "sum", "max" }) do
        assert.matches(("cost model %%(%s%%) of %s on %s: %%d+ configurations, bias [-+]%%d"):format(
          model, ex[2], device.name:gsub("%p", "%%%0")), out)
      end
    end
    local out, code = shell.run(("%s examples/tune_vectoradd.lua --n=256 --probe=%s.none")
      :format(shell.ktlua, path))
    assert.are.equal(1, code)
    assert.matches("no probe of " .. device.name, out, 1, true)
    assert.matches("run: ktlua --probe=", out, 1, true)
    os.remove(path)
    os.remove(path .. ".none")
  end)
end)

-- A probe record built by hand: rates in powers of two, so that every
-- prediction below is exact.
local function fake_probe(skip)
  local rows = {
    { kind = "launch", name = "event", size = 0, value = 1000 },
    { kind = "sweep", name = "copy", size = 64, value = 100 },
    { kind = "sweep", name = "copy", size = 256, value = 200 },
    { kind = "op", name = "fp32_add", size = 1, value = 1000 },
    { kind = "op", name = "fp32_mul", size = 1, value = 1000 },
    { kind = "op", name = "fp32_fma", size = 1, value = 1000 },
    { kind = "op", name = "fp64_add", size = 1, value = 512 },
    { kind = "op", name = "fp64_mul", size = 1, value = 256 },
    { kind = "op", name = "fp64_fma", size = 1, value = 128 },
    { kind = "op", name = "int32_add", size = 1, value = 256 },
    { kind = "op", name = "fp32_div", size = 1, value = 8 },
    { kind = "op", name = "fp32_sqrt", size = 1, value = 16 },
    { kind = "op", name = "fp32_exp", size = 1, value = 32 },
    { kind = "op", name = "fp32_sin", size = 1, value = 64 },
  }
  local kept = {}
  for _, r in ipairs(rows) do
    if r.name ~= skip then
      r.reps, r.mean_ns, r.rse, r.capped = 5, 1, 0.01, false
      kept[#kept + 1] = r
    end
  end
  return require("ktlua.probe").record{ device = "fake", backend = "opencl", driver = "1",
                                        date = "2026-01-01T00:00:00Z", rows = kept, notes = {} }
end

describe("the cost model", function()
  local probe = fake_probe()

  it("predicts exactly from a probe record", function()
    -- 3 launches of 1000 ns, 2e6 bytes at the best 200 B/ns, 4e6 flops at 2 x 1000
    assert.are.equal(15000 / 1e6, probe:predict{ bytes = 2e6, flops = 4e6, launches = 3 })
    -- at work-group 100, the bandwidth of the nearest swept size (64, in log2)
    assert.are.equal(25000 / 1e6, probe:predict{ bytes = 2e6, flops = 4e6, launches = 3, group = 100 })
    assert.are.equal(13000 / 1e6, probe:predict({ bytes = 2e6, flops = 4e6, launches = 3 }, { model = "max" }))
    -- fp64 at 512 (add beats 2 x 128), iops at 256, special at the mean of 1/8, 1/16, 1/32, 1/64
    assert.are.equal((1000 + 2000 + 4000 + 1024 * 0.05859375 + 10) / 1e6,
      probe:predict{ fp64 = 1024000, iops = 1024000, special = 1024, ops = { fp32_sin = 640 } })
    assert.are.equal(1000 / 1e6, probe:predict{}) -- one launch by default
  end)

  it("predicts a kernel's configurations from its cost, and ranks them", function()
    local tuner = kt.tuner()
    local n = 1024
    local a, c = kt.array("float", n), kt.array("float", n)
    local k = tuner:kernel{ name = "copy", global = n, group = 1, args = { a:input(), c:output() },
      source = "__kernel void copy(__global const float *a, __global float *c) "
            .. "{ int i = get_global_id(0); c[i] = a[i]; }" }
    k:param("WG", { 16, 64, 256 }, { group_x = "mul" })
    local seen
    k:cost(function(cfg, sizes)
      seen = sizes
      return { bytes = 8 * n, flops = n, launches = 1 }
    end)
    local ms, cost = k:predict({ WG = 64 }, probe)
    assert.are.equal((1000 + (8 * n / 100 + n / 2000)) / 1e6, ms)
    assert.are.same({ n }, seen.global)
    assert.are.same({ 64 }, seen.group)
    assert.are.same({ 64 }, seen[1].group)
    assert.are.equal(64, cost.group)
    assert.are.equal((1000 + (8 * n / 200 + n / 2000)) / 1e6, k:predict(2, probe)) -- WG = 256
    -- WG 16 and 64 both take the bandwidth of group 64: the tie goes to the lower index
    assert.are.same({ 2, 0 }, k:predicted(2, probe))
    assert.are.same({ 2, 0, 1 }, k:predicted(10, probe))
    local predict = require("ktlua.cost").predictor(k, probe)
    assert.are.equal(k:predict({ WG = 16 }, probe), predict({ WG = 16 }))
    -- seeds: the predicted fastest run first
    local r = tuner:tune(k, { seeds = k:predicted(2, probe), stop = { count = 2 } })
    assert.are.same({ 256, 16 }, { r[1].config.WG, r[2].config.WG })
    local e = k:model_error(r, probe)
    assert.are.equal(2, e.n)
    assert.are.equal(2, #e.pairs)
    local bias = 0
    for _, p in ipairs(e.pairs) do bias = bias + (p.predicted - p.measured) / p.measured end
    assert.are.equal(bias / 2, e.bias)
    tuner:close()
  end)

  it("rejects bad costs and options, naming what it expects", function()
    local function fails(fn, msg)
      local ok, err = pcall(fn)
      assert.is_false(ok)
      assert.matches(msg, err, 1, true)
    end
    fails(function() probe:predict{ byte = 1 } end,
          "cost: unknown key byte (expected bytes, flops, fp64, iops, special, ops, launches, group)")
    fails(function() probe:predict{ bytes = -1 } end, "cost.bytes: expected a count from 0, got -1")
    fails(function() probe:predict{ ops = { sin = "x" } } end, "cost.ops.sin: expected a count from 0")
    fails(function() probe:predict({}, { model = "roofline" }) end,
          'options.model: expected "sum" or "max", got roofline')
    fails(function() probe:predict({}, { models = "max" }) end, "unknown option models (expected model)")
    fails(function() fake_probe("fp64_add"):predict{ fp64 = 1 } end,
          'the probe of fake has no rate of fp64_add (probe its "ops")')
    local tuner = kt.tuner()
    local k = tuner:kernel{ name = "nothing", global = 4, group = 1, args = {},
      source = "__kernel void nothing(void) {}" }
    k:param("WG", { 1, 2 }, { group_x = "mul" })
    fails(function() k:predict({ WG = 1 }, probe) end, "kernel nothing has no cost: declare it with k:cost(fn)")
    fails(function() k:cost(42) end, "expected a function(cfg, sizes) or nil")
    k:cost(function() return { launch = 1 } end)
    fails(function() k:predict({ WG = 1 }, probe) end, "the cost of nothing: unknown key launch")
    fails(function() k:predicted(0, probe) end, "expected a count from 1")
    fails(function() k:predict({ WG = 3 }, probe) end, "WG")
    tuner:close()
  end)
end)
