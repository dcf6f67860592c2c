-- Bulk data of an isolated tuner through its device process's staging area
-- (core/device/remote_stage.c): chunks of half the area, the next filled (or the last emptied)
-- while the device process moves one; every size, blocking or not, and the checks that compare
-- in chunks; a device process lost in the middle of a transfer (a stand-in CUDA driver).
local kt = require "ktlua"
local shell = require "spec.support.shell"
local statuses = require "spec.support.statuses"
local fake_cuda = require "spec.support.fake_cuda"

local AREA = 32 << 20 -- KT_STAGING_BYTES (core/device/remote_proto.h)
local HALF = AREA // 2
-- A byte, odd sizes, about half the area, the area, past it, several times it.
local SIZES = { 1, 4097, HALF - 1, HALF + 1, AREA, AREA + 1, 3 * AREA + 4097 }

-- Nil where b holds a's bytes, else the first index found that differs: every element near a
-- chunk's edge (a multiple of HALF) and at either end, and every 4093rd.
local function differs(a, b)
  local n = a.length
  local function bad(i) return a[i] ~= b[i] and i or nil end
  for i = 0, n - 1, 4093 do if bad(i) then return i end end
  for edge = 0, n + HALF, HALF do
    for i = math.max(0, edge - 64), math.min(n - 1, edge + 64) do if bad(i) then return i end end
  end
  for i = math.max(0, n - 64), n - 1 do if bad(i) then return i end end
  return nil
end

-- Random bytes, one array for each of SIZES, and as many to read into and as device copies.
local function arrays()
  local from, back, dev = {}, {}, {}
  for i, n in ipairs(SIZES) do
    from[i], back[i], dev[i] = kt.array("uchar", n):random(i), kt.array("uchar", n), kt.array("uchar", n)
  end
  return from, back, dev
end

describe("transfers through the staging area", function()
  local tuner = kt.tuner()
  local touch = "__kernel void touch(__global uchar *a) { }"

  -- Runs launcher(run) once, in a configuration whose kernel does nothing.
  local function in_launcher(launcher)
    local k = tuner:kernel{ source = touch, name = "touch", global = 1, group = 1,
                            args = { kt.array("uchar", 1):inout() } }
    k:param("X", { 1 })
    k:launcher(function(run) run:launch(k) launcher(run) end)
    local r = tuner:run(k, { X = 1 })
    assert.are.equal("ok", r.status, r.error)
  end

  it("carry every size whole, blocking: a byte, odd sizes, half the area, the area, several times it", function()
    local from, back, dev = arrays()
    local part = kt.array("uchar", AREA + 1)
    in_launcher(function(run)
      for i = 1, #SIZES do
        run:write(dev[i], from[i])
        run:read(dev[i], back[i])
      end
      run:read(dev[#SIZES], part, { count = HALF + 3 }) -- a part, past the first chunk
    end)
    for i, n in ipairs(SIZES) do
      assert.is_nil(differs(from[i], back[i]), n .. " bytes")
      assert.is_true(back[i].length == n)
    end
    assert.are.same({ from[#SIZES][HALF + 2], 0 }, { part[HALF + 2], part[HALF + 3] })
  end)

  it("carry every size whole, not blocking", function()
    local from, back, dev = arrays()
    in_launcher(function(run)
      for i = 1, #SIZES do
        run:write(dev[i], from[i], { queue = 1, async = true })
        run:read(dev[i], back[i], { queue = 1, async = true }) -- past the area: taken in chunks
      end
      run:sync(1)
    end)
    for i, n in ipairs(SIZES) do assert.is_nil(differs(from[i], back[i]), n .. " bytes") end
  end)

  it("leave a read staged on one queue whole when one bigger than the area, on another, is taken first", function()
    -- the small read lands in the area; the big one's data comes through the whole area
    local small, big = kt.array("uchar", 4096):random(1), kt.array("uchar", AREA + 7):random(2)
    local small_back, big_back = kt.array("uchar", 4096), kt.array("uchar", AREA + 7)
    in_launcher(function(run)
      run:write(small, small)
      run:write(big, big)
      run:read(small, small_back, { queue = 0, async = true })
      run:read(big, big_back, { queue = 1, async = true })
      run:sync(1)
      run:sync(0)
    end)
    assert.is_nil(differs(small, small_back))
    assert.is_nil(differs(big, big_back))
  end)

  it("let the inputs' checks on the host say where an input or zone bigger than half the area changed", function()
    -- in: 40 MB, compared in three chunks, changed in the second (the third is on its way when
    -- the difference is found); c: 80 MB, whose zone of 20 MB (at 80 MB) takes two chunks. In
    -- host memory, where no check runs on the device: the host compares them (core/eval/verify.c).
    local n, m = 10000000, 20000000
    local src = ([[
__kernel void k(__global const float *in, __global float *c) {
  if (get_global_id(0) == 0) {
#if BAD == 1
    ((__global float *)in)[5000000] = -1.0f;
#elif BAD == 2
    c[%d + 4500000] = -1.0f;
#endif
    c[0] = in[0];
  }
}]]):format(m)
    local input = kt.array("float", n):fill(3)
    local tuner = kt.tuner() -- none of the other tests' arrays, which the device would check
    local k = tuner:kernel{ source = src, name = "k", global = 1, group = 1,
                            args = { input:input{ placement = "host" },
                                     kt.array("float", m):output{ placement = "host" } } }
    k:param("BAD", { 0, 1, 2, 3 })
    local r = tuner:tune(k, { search = "exhaustive", repeats = 1, check_inputs = "always" })
    assert.are.same({ "ok", "out_of_bounds", "out_of_bounds", "ok" }, statuses(r))
    assert.are.equal("it wrote where no kernel may: kernel k, argument 1 (input float[10000000]): "
      .. "1 of 10000000 elements changed, the first at element 5000000 (-1 instead of 3) (restored)",
      r[2].error)
    assert.matches("kernel k, argument 2 (output float[20000000]): written past its end: 3 of the "
      .. "20000000 bytes after it changed, the first at byte 18000000 past the end", r[3].error, 1, true)
    assert.are.equal(0, r:summary().input_checks_device)
    assert.are.equal(3, input[5000000])
  end)
end)

describe("transfers through the staging area of a stand-in CUDA driver (spec/support/fake_cuda.c)", function()
  local missing = fake_cuda.missing()
  if missing then
    pending(missing)
    return
  end
  local dir = os.tmpname()
  os.remove(dir)
  setup(function() fake_cuda.build(dir) end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  -- Writes and reads back 3 * HALF + 5 bytes in each configuration; MODE 1's data bears the
  -- stand-in's mark at its second chunk, where the driver aborts its process.
  local script = ([[
local kt = require "ktlua"
local HALF = %d
local tuner = kt.tuner("cuda:0")
local n = 3 * HALF + 5
local dev, from, back = kt.array("uchar", n), kt.array("uchar", n):random(1), kt.array("uchar", n)
local marked = from:copy()
local mark = "fake abort copy\0"
for i = 1, #mark do marked[HALF + i - 1] = mark:byte(i) end
local k = tuner:kernel{ source = [=[extern "C" __global__ void touch(unsigned char *a) { }]=],
                        name = "touch", global = 1, group = 1, args = { kt.array("uchar", 1):inout() } }
k:param("MODE", { 0, 1, 2 })
local whole = {}
k:launcher(function(run, cfg)
  run:launch(k)
  back:fill(0)
  run:write(dev, cfg.MODE == 1 and marked or from)
  run:read(dev, back)
  local same = true
  for i = 0, n - 1, 4093 do same = same and back[i] == from[i] end
  for edge = HALF, 3 * HALF, HALF do
    for i = edge - 64, math.min(n - 1, edge + 64) do same = same and back[i] == from[i] end
  end
  whole[cfg.MODE] = same
end)
-- (a time limit far beyond what a loaded machine can take: the abort, not the clock, ends MODE 1)
local r = tuner:tune(k, { repeats = 1, time_limit = 900 })
for i = 1, #r do print(r[i].config.MODE, r[i].status, (r[i].error or "-"):match("^[^\n]*")) end
print(whole[0], whole[1], whole[2], marked[HALF] == 102, from[HALF] ~= 102 or from[HALF + 1] ~= 97)
]]):format(HALF)

  local function run_script(env)
    local path = dir .. "/script.lua"
    local f = assert(io.open(path, "w"))
    f:write(script)
    f:close()
    return shell.run(("%s KTLUA_LIBCUDA=%s/libcuda.so.1 %s %s"):format(env, dir, shell.ktlua, path))
  end

  for _, case in ipairs({ { "", "page-locked" }, { "FAKE_CUDA_NO_PIN=1", "not page-locked" } }) do
    it("carry data whole, and a device process lost in the middle of one says so and loses nothing else ("
       .. case[2] .. ")", function()
      local out, code = run_script(case[1])
      assert.are.equal(0, code, out)
      local lines = {}
      for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
      assert.are.equal(4, #lines, out)
      assert.are.equal("0\tok\t-", lines[1])
      assert.matches("^1\truntime_failed\t[^\t]*: the device process died of signal 6 %(Aborted%)$", lines[2])
      assert.are.equal("2\tok\t-", lines[3])
      -- MODE 1's read never ran; the marked array and the data are as they were
      assert.are.equal("true\tnil\ttrue\ttrue\ttrue", lines[4])
    end)
  end
end)
