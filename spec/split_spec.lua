-- One kernel split across devices: kt.split and ktlua.split.shares. Here
-- both devices are the PoCL device, each driven by its own tuner and device
-- process (allow_same = true), which is what a split of a GPU and a CPU
-- does with two different ones.
local kt = require "ktlua"
local split = require "ktlua.split"
local shell = require "spec.support.shell"
local files = require "spec.support.files"

local N = 1024
local DEV = kt.device("default").id

-- c[i] = 3 a[i] + i over the items [offset, offset + count); OFFSET = 0
-- makes a kernel that ignores its offset; HANG = 1 one that never ends.
local SOURCE = [[
__kernel void axpi(__global const int *a, __global int *c, int offset) {
  int i = (OFFSET ? offset : 0) + get_global_id(0);
#if HANG
  while (a[0] >= 0) { }
#endif
  c[i] = 3 * a[i] + i;
}]]

local function problem(opts)
  opts = opts or {}
  local a = kt.array("int", N):fill(function(i) return (i * 7) % 50 end)
  local c = kt.array("int", N)
  local options = {
    devices = { DEV, DEV }, allow_same = true, range = N, quantum = 64, repeats = 1,
    kernel = function(tuner, part)
      local k = tuner:kernel{ source = SOURCE, name = "axpi", global = part.count, group = 1,
        args = { part.array(a):input(), part.array(c):output(), kt.int(part.offset) } }
      k:param("WG", { 16, 32, 64 }, { group_x = "mul" })
      k:param("OFFSET", { opts.offset == false and 0 or 1 })
      k:param("HANG", opts.hang and { 0, 1 } or { 0 })
      return k
    end,
    outputs = { { c, reference = function(ref)
      for i = 0, N - 1 do ref[i] = 3 * a[i] + i end
    end } },
  }
  for key, v in pairs(opts.options or {}) do options[key] = v end
  return options, a, c
end

local CONFIGS = { { WG = 32, OFFSET = 1, HANG = 0 }, { WG = 64, OFFSET = 1, HANG = 0 } }

local function expect_reference(a, c)
  for i = 0, N - 1 do
    if c[i] ~= 3 * a[i] + i then error(("c[%d] = %d, expected %d"):format(i, c[i], 3 * a[i] + i)) end
  end
end

describe("split.shares", function()
  it("shares a range in proportion to the speeds, in multiples of the quantum", function()
    assert.are.same({ 768, 256 }, split.shares(1024, { 3, 1 }, 64))
    assert.are.same({ 750, 250 }, split.shares(1000, { 3, 1 }, 10))
    assert.are.same({ 1024, 0 }, split.shares(1024, { 1000, 1 }, 256))
  end)

  it("gives the quanta that rounding leaves to the largest remainders, the sum the range", function()
    assert.are.same({ 342, 341, 341 }, split.shares(1024, { 1, 1, 1 }))
    assert.are.same({ 384, 320, 320 }, split.shares(1024, { 1, 1, 1 }, 64))
    assert.are.same({ 128, 896 }, split.shares(1024, { 1, 7.5 }, 64)) -- 120.5 / 903.5
  end)
end)

describe("kt.split", function()
  it("tunes each device, shares the range, and combines outputs that equal the reference", function()
    local options, a, c = problem{ options = { tune = { repeats = 1 }, refine = 2 } }
    local r = kt.split(options)
    assert.are.equal("ok", r.status)
    expect_reference(a, c)
    assert.are.equal(N, r.counts[1] + r.counts[2])
    assert.are.equal(0, r.counts[1] % 64)
    assert.are.equal(0, r.parts[1].offset)
    assert.are.equal(r.counts[1], r.parts[2].offset)
    for i = 1, 2 do
      assert.are.equal(DEV, r.parts[i].device)
      assert.are.equal(1, r.parts[i].config.OFFSET)
      assert.is_true(r.parts[i].tuned_ms > 0 and r.parts[i].alone_ms > 0)
    end
    -- each device alone, then up to two steps from the shares of the tuned speeds
    assert.are.same({ N, 0 }, r.steps[1].counts)
    assert.are.same({ 0, N }, r.steps[2].counts)
    assert.is_true(#r.steps == 3 or #r.steps == 4)
    local tuned = split.shares(N, { N / r.parts[1].tuned_ms, N / r.parts[2].tuned_ms }, 64)
    assert.are.same(tuned, r.steps[3].counts)
    assert.are.equal(math.min(r.steps[1].time_ms, r.steps[2].time_ms), r.best_alone_ms)
    for _, s in ipairs(r.steps) do -- one run per step: its time is its last part's end
      local last = 0
      for i = 1, 2 do
        if s.counts[i] > 0 then
          assert.is_true(s.kernels_ms[i] > 0)
          last = math.max(last, s.parts_ms[i])
        else
          assert.is_nil(s.parts_ms[i])
        end
      end
      assert.are.equal(last, s.time_ms)
      assert.is_true(s.wall_ms >= s.time_ms)
    end
  end)

  it("starts from given speeds and configurations", function()
    local options, a, c = problem{ options = { configs = CONFIGS, speeds = { 1, 3 }, refine = 1 } }
    local r = kt.split(options)
    assert.are.same({ 256, 768 }, r.steps[3].counts)
    assert.are.equal("split", r.steps[3].kind)
    assert.are.equal(3, #r.steps)
    assert.are.equal("ok", r.status)
    expect_reference(a, c)
  end)

  it("runs given shares, a device's share possibly empty", function()
    for _, counts in ipairs { { 320, 704 }, { 0, N }, { N, 0 } } do
      local options, a, c = problem{ options = { configs = CONFIGS, counts = counts } }
      local r = kt.split(options)
      assert.are.same(counts, r.counts)
      assert.are.equal("ok", r.status)
      for i = 1, 2 do
        if counts[i] == 0 then assert.is_nil(r.parts[i].time_ms) else assert.is_true(r.parts[i].time_ms > 0) end
      end
      expect_reference(a, c)
    end
  end)

  it("finds a combined output that is wrong invalid, naming the element", function()
    local options = problem{ offset = false,
      options = { configs = { { WG = 32, OFFSET = 0, HANG = 0 }, { WG = 32, OFFSET = 0, HANG = 0 } },
                  counts = { 512, 512 } } }
    local r = kt.split(options)
    assert.are.equal("invalid_output", r.status)
    assert.are.equal("output 1, element 512: 0 instead of 614", r.error)
  end)
end)

describe("kt.split's bad input", function()
  local function fails(pattern, opts)
    local options = problem(opts)
    local ok, err = pcall(function() return kt.split(options) end)
    assert.is_false(ok)
    assert.matches(pattern, err, 1, true)
    return err
  end

  it("names an unknown device", function()
    local err = fails("split options.devices[2]: ", { options = { devices = { DEV, "opencl:9:9" } } })
    assert.matches("split_spec.lua:%d+: split", err)
    assert.matches("opencl:9:9", err, 1, true)
  end)

  it("refuses a device twice unless allowed, and the same tuner twice always", function()
    fails("split options.devices[2]: " .. DEV .. " is devices[1] again (allow_same = true runs two "
          .. "parts on one device, for tests)", { options = { allow_same = false } })
    local t = kt.tuner()
    fails("split options.devices[2]: the same tuner as devices[1]", { options = { devices = { t, t } } })
    t:close()
    fails("split options.devices: expected a list of at least two devices", { options = { devices = { DEV } } })
  end)

  it("checks its options", function()
    fails("split options: unknown option 'shares'", { options = { shares = {} } })
    fails("split options.quantum: expected a positive integer that divides the range (1024), got 100",
          { options = { quantum = 100 } })
    fails("split options.counts: the shares sum to 960, not the range (1024)",
          { options = { configs = CONFIGS, counts = { 320, 640 } } })
    fails("split options.counts[1]: expected a multiple of the quantum (64) from 0, got 10",
          { options = { configs = CONFIGS, counts = { 10, 1014 } } })
    fails("split options.speeds[2]: expected a positive number, got 0", { options = { speeds = { 1, 0 } } })
    fails("split options.outputs[1]: its 1000 elements are not a whole number per item of the range (1024)",
          { options = { outputs = { kt.array("int", 1000) } } })
    fails("split options.kernel: expected a function(tuner, part) returning the part's kernel",
          { options = { kernel = 1 } })
  end)

  it("refuses parts that share an array", function()
    local shared = kt.array("int", N)
    local options = problem{ options = { configs = CONFIGS, counts = { 512, 512 } } }
    options.outputs = { shared }
    options.kernel = function(tuner, part)
      local k = tuner:kernel{ source = SOURCE, name = "axpi", global = part.count, group = 1,
        args = { part.array(shared):input(), shared:output(), kt.int(part.offset) } }
      k:param("WG", { 32, 64 }, { group_x = "mul" })
      k:param("OFFSET", { 1 })
      k:param("HANG", { 0 })
      return k
    end
    local ok, err = pcall(kt.split, options)
    assert.is_false(ok)
    assert.matches("part 2 (axpi) uses an array another part uses: give each part its own arrays",
                   err, 1, true)
  end)

  it("refuses parts that would call Lua from their threads", function()
    local options = problem{ options = { configs = CONFIGS, counts = { 512, 512 } } }
    local make = options.kernel
    options.kernel = function(tuner, part)
      local k = make(tuner, part)
      k:launcher(function(run) run:launch(k) end)
      return k
    end
    local ok, err = pcall(kt.split, options)
    assert.is_false(ok)
    assert.matches("part 1 (axpi) has a launcher: a split runs tasks without one", err, 1, true)
  end)

  it("stops a part past its time limit", function()
    local options = problem{ hang = true, options = { configs = {
      { WG = 32, OFFSET = 1, HANG = 1 }, CONFIGS[2] }, counts = { 512, 512 }, time_limit = 1 } }
    local ok, err = pcall(kt.split, options)
    assert.is_false(ok)
    assert.matches("split part 1 on " .. DEV .. ": timeout", err, 1, true)
  end)

  it("stops on Ctrl-C once the parts in flight have finished", function()
    local script = files.tmpname(".lua")
    files.write(script, ([[
package.path = %q .. ";" .. package.path
local kt = require "ktlua"
local N = 1024
local a, c = kt.array("int", N), kt.array("int", N)
local pid = io.open("/proc/self/stat"):read("n")
-- Ctrl-C once the split's handler is in: the parts are starting, and hang
os.execute(require("spec.support.signals").when_caught(pid, "INT") .. " &")
kt.split{ devices = { %q, %q }, allow_same = true, range = N, time_limit = 3,
  configs = { {}, {} }, counts = { 512, 512 }, outputs = { c },
  kernel = function(tuner, part)
    return tuner:kernel{ name = "k", global = part.count, group = 32,
      source = "__kernel void k(__global const int *a, __global int *c) "
            .. "{ while (a[0] >= 0) { } c[get_global_id(0)] = 1; }",
      args = { part.array(a):input(), part.array(c):output() } }
  end }
]]):format(package.path, DEV, DEV))
    local out, status = shell.run(shell.ktlua .. " " .. script)
    os.remove(script)
    assert.are.equal(1, status, out)
    assert.matches("split interrupted", out, 1, true)
  end)
end)
