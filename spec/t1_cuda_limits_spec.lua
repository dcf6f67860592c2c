-- A CUDA T1 problem at the device's limits, on the stand-in driver
-- (spec/support/fake_cuda.c): 48 KiB of dynamic shared memory (SharedMemory)
-- beside a kernel's static shared memory, as BAT's Xgemm has, must launch
-- (the kernel opts in to it); a grid taller than the device's is refused
-- before it is compiled.
local fake_cuda = require "spec.support.fake_cuda"
local files = require "spec.support.files"
local shell = require "spec.support.shell"

describe("a CUDA T1 problem at the device's limits (stand-in driver)", function()
  local missing = fake_cuda.missing()
  if missing then
    pending(missing)
    return
  end
  local dir = files.tmpname()
  setup(function() fake_cuda.build(dir) end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  local function with_fake(script)
    local path = dir .. "/script.lua"
    files.write(path, 'local kt = require "ktlua"\n' .. script)
    return shell.run(("KTLUA_LIBCUDA=%s/libcuda.so.1 %s %s"):format(dir, shell.ktlua, path))
  end

  it("launches static and dynamic shared memory beyond 48 KiB, and refuses a grid too tall before compiling", function()
    local out, code = with_fake([[
local tuner = kt.tuner("cuda:0", { cache = false })
local k, options = kt.t1("spec/fixtures/t1/shared_T1.json", { tuner = tuner })
options.repeats, options.progress = 1, false
local r = tuner:tune(k, options)
local rows = {}
for i = 1, #r do
  rows[#rows + 1] = ("SA=%d GY=%d %s %s %s"):format(r[i].config.SA, r[i].config.GY, r[i].status,
    (r[i].compile_ms or 0) > 0 and "compiled" or "-", r[i].error or "")
end
table.sort(rows)
print(table.concat(rows, "\n"))
print(r:summary().compiles)]])
    assert.are.equal(0, code, out)
    local refused = "too_many_threads - kernel tile: a grid of 2 x 65536 x 1 blocks exceeds the "
      .. "device's limit of 2147483647 x 65535 x 65535"
    assert.are.equal(table.concat({
      "SA=0 GY=1 ok compiled ",
      "SA=0 GY=65535 ok compiled ",
      "SA=0 GY=65536 " .. refused,
      "SA=1 GY=1 ok compiled ",
      "SA=1 GY=65535 ok compiled ",
      "SA=1 GY=65536 " .. refused,
      "4", "" }, "\n"), out)
  end)
end)

describe("a CUDA T1 problem's SharedMemory expression (stand-in driver)", function()
  local missing = fake_cuda.missing()
  if missing then
    pending(missing)
    return
  end
  local dir = files.tmpname()
  setup(function() fake_cuda.build(dir) end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("prunes, before compiling, configurations whose dynamic shared memory alone is more than the device has", function()
    local text = files.read("spec/fixtures/t1/shared_T1.json")
    text = text:gsub('"SharedMemory": 49152', '"SharedMemory": "49152 + SA * 65536"')
    files.write(dir .. "/p.json", text)
    files.write(dir .. "/shared.cu", files.read("spec/fixtures/t1/shared.cu"))
    files.write(dir .. "/script.lua", ([[
local kt = require "ktlua"
local tuner = kt.tuner("cuda:0", { cache = false })
local k = kt.t1("%s/p.json", { tuner = tuner })
local s = k:space(tuner.device)
print(tuner.device.shared_per_block_optin, s:count(), s:pruned().local_memory)]]):format(dir))
    local out, code = shell.run(("KTLUA_LIBCUDA=%s/libcuda.so.1 %s %s/script.lua"):format(dir, shell.ktlua, dir))
    assert.are.equal(0, code, out)
    -- SA = 1 asks for 114,688 bytes: more than the stand-in's 101,376 even with opting in
    assert.are.equal("101376\t3\t3\n", out)
  end)
end)

describe("a CUDA T1 problem's static shared memory, as its source declares it (stand-in driver)", function()
  local missing = fake_cuda.missing()
  if missing then
    pending(missing)
    return
  end
  local dir = files.tmpname()
  setup(function() fake_cuda.build(dir) end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  -- BAT's convolution's declaration in small (spec/fixtures/t1/static_shared.cu): 86 rows of
  -- 30, 48, 142, 144 (16 threads wide, 1 or 8 columns each, unpadded or padded) or 46 and 270
  -- (32 wide) floats. Over 48 KiB: 144 and 270 columns, which NVRTC's ptxas refuses.
  local function tune(off)
    files.write(dir .. "/script.lua", ([[
local kt = require "ktlua"
local tuner = kt.tuner("cuda:0", { cache = false })
local k, options = kt.t1("spec/fixtures/t1/static_shared_T1.json", { tuner = tuner })
if %s then k:prune{ local_memory = false } end
options.repeats, options.progress = 1, false
local r = tuner:tune(k, options)
local rows = {}
for i = 1, #r do
  local c = r[i].config
  rows[#rows + 1] = ("%%d %%d %%d %%s %%s"):format(c.block_size_x, c.tile_size_x, c.use_padding,
    r[i].status, (r[i].error or ""):match("uses too much shared data") or "")
end
table.sort(rows)
print(table.concat(rows, "\n"))
local s = r:summary()
print(s.compiles, s.pruned.local_memory)]]):format(tostring(off)))
    local out, code = shell.run(("KTLUA_LIBCUDA=%s/libcuda.so.1 %s %s/script.lua"):format(dir, shell.ktlua, dir))
    assert.are.equal(0, code, out)
    return out
  end

  it("prunes before compiling the configurations whose __shared__ arrays pass 48 KiB, which ptxas refuses",
     function()
    assert.are.equal(table.concat({
      "16 1 0 ok ", "16 1 1 ok ", "16 8 0 ok ", "32 1 0 ok ", "32 1 1 ok ",
      "5\t3", "" }, "\n"), tune(false))
    local refused = "compile_failed uses too much shared data"
    assert.are.equal(table.concat({
      "16 1 0 ok ", "16 1 1 ok ", "16 8 0 ok ", "16 8 1 " .. refused, "32 1 0 ok ", "32 1 1 ok ",
      "32 8 0 " .. refused, "32 8 1 " .. refused,
      "8\t0", "" }, "\n"), tune(true))
  end)
end)
