-- The CUDA backend. Everywhere: how it loads, and what it says when the
-- driver, NVRTC or the build's CUDA headers are missing. Where libnvrtc
-- is: compiling CUDA C++ without a GPU. Where a CUDA device is (the GPU
-- machine, through scripts/gpu-check.sh): the backend itself.
local kt = require "ktlua"

local shell = require "spec.support.shell"
local devices, why = kt.devices()
local device
for _, d in ipairs(devices) do
  if d.backend == "cuda" and not device then device = d end
end
local not_built = "ktlua was built without the CUDA headers (no cuda.h at build time, see CUDA_INC "
  .. "in the Makefile)"
local built = not why:find(not_built, 1, true)
local nvrtc_ok, nvrtc_why = pcall(kt.cuda_compile, { source = "" })

-- Runs ktlua -e code with the environment prefix env; returns its output.
local function ktlua_e(env, code)
  return (shell.run(("%s %s -e %q"):format(env, shell.ktlua, code)))
end

-- A temporary folder that command (where each %s stands for the folder)
-- makes before the tests of the enclosing block; removed after them.
local function folder_made_by(command)
  local dir = os.tmpname()
  os.remove(dir)
  setup(function()
    local out, code = shell.run((command:gsub("%%s", dir)))
    assert(code == 0, out)
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)
  return dir
end

local function cuda_reason(text)
  return text:match("cuda: ([^;\n]*)")
end

describe("the CUDA backend without a device", function()
  if device then
    pending("a CUDA device is present (" .. device.id .. ")")
    return
  end

  it("lists no device and says why", function()
    assert.is_not_nil(cuda_reason(why))
    if not built then assert.are.equal(not_built, cuda_reason(why)) end
  end)

  it("names the reason when a CUDA device is asked for", function()
    for _, what in ipairs({ "cuda", "cuda:0" }) do
      local ok, err = pcall(kt.device, what)
      assert.is_false(ok)
      assert.matches("no device '" .. what .. "': no device " .. (what == "cuda"
        and "of the cuda backend is here" or "has that id") .. "; the devices here: ", err, 1, true)
      assert.matches("(cuda: " .. cuda_reason(why) .. ")", err, 1, true)
    end
    assert.has_error(function() kt.tuner("cuda:0") end)
  end)
end)

describe("loading the CUDA libraries", function()
  it("reports a driver library that cannot be loaded", function()
    local out = ktlua_e("KTLUA_LIBCUDA=/nonexistent/libcuda.so.1", "print(select(2, kt.devices()))")
    assert.are.equal(built and "libcuda.so.1 (the NVIDIA driver) cannot be loaded from "
      .. "KTLUA_LIBCUDA=/nonexistent/libcuda.so.1: /nonexistent/libcuda.so.1: cannot open shared "
      .. "object file: No such file or directory" or not_built, cuda_reason(out))
  end)

  it("reports a library that is not the NVIDIA driver, naming it", function()
    for _, lib in ipairs { "libm.so.6", "libz.so.1" } do
      local out = ktlua_e("KTLUA_LIBCUDA=" .. lib, "print(select(2, kt.devices()))")
      assert.are.equal(built and ("KTLUA_LIBCUDA=%s is not the NVIDIA driver (libcuda): it has "
        .. "neither cuInit nor cuGetProcAddress"):format(lib) or not_built, cuda_reason(out))
    end
  end)

  describe("a driver older than CUDA 11.3", function()
    local _, no_cc = shell.run("command -v cc")
    if no_cc ~= 0 then
      pending("needs a C compiler")
      return
    end
    -- cuInit, and no cuGetProcAddress: what a driver of CUDA 11.2 has
    local dir = folder_made_by("mkdir -p %s && echo 'int cuInit(unsigned f) { return (int)f; }' > "
      .. "%s/old.c && cc -shared -fPIC -o %s/libcuda.so.1 %s/old.c")

    it("is said to be old, with its path", function()
      local out = ktlua_e("KTLUA_LIBCUDA=" .. dir .. "/libcuda.so.1", "print(select(2, kt.devices()))")
      assert.are.equal(built and ("the NVIDIA driver KTLUA_LIBCUDA=%s/libcuda.so.1 is older than "
        .. "CUDA 11.3 (it has no cuGetProcAddress)"):format(dir) or not_built, cuda_reason(out))
    end)
  end)

  it("reports a library that is not NVRTC, naming it", function()
    local out = ktlua_e("KTLUA_NVRTC=libz.so.1", "print(pcall(kt.cuda_compile, {source = ''}))")
    assert.are.equal("false\t" .. (built and "KTLUA_NVRTC=libz.so.1 is not NVRTC (libnvrtc): it has "
      .. "no nvrtcVersion" or not_built) .. "\n", out)
  end)

  it("reports NVRTC that cannot be loaded", function()
    local out = ktlua_e("KTLUA_NVRTC=/nonexistent/libnvrtc.so",
      "print(pcall(kt.cuda_compile, {source = ''}))")
    assert.are.equal("false\t" .. (built and "libnvrtc (NVRTC, from the CUDA toolkit) cannot be "
      .. "loaded from KTLUA_NVRTC=/nonexistent/libnvrtc.so: /nonexistent/libnvrtc.so: cannot open "
      .. "shared object file: No such file or directory" or not_built) .. "\n", out)
  end)
end)

describe("a build without the CUDA headers", function()
  local _, no_cc = shell.run("command -v cc")
  local sources = io.open("Makefile") -- not in a bundle
  if sources then sources:close() end
  if not built or no_cc ~= 0 or not sources or os.getenv("KTLUA_SANITIZED") then
    pending("needs the sources, a C compiler and a build with CUDA headers; the plain run builds one")
    return
  end
  -- Unoptimised: only what it says matters here.
  local dir = folder_made_by("env -u MAKEFLAGS -u MAKELEVEL make -s B=%s CUDA_INC= OPT=-O0 %s/ktlua")

  it("runs, lists no CUDA device and says why, also when one is asked for", function()
    local script = assert(io.open(dir .. "/script.lua", "w"))
    script:write([[
local kt = require "ktlua"
local list, why = kt.devices()
for _, d in ipairs(list) do assert(d.backend ~= "cuda") end
print(why:match("cuda: ([^;]*)"))
print(select(2, pcall(kt.device, "cuda:0")):match("%(cuda: [^)]*%)"))
print(select(2, pcall(kt.cuda_compile, { source = "" })))]])
    script:close()
    local out, code = shell.run(dir .. "/ktlua " .. dir .. "/script.lua")
    assert.are.equal(0, code, out)
    assert.are.equal(not_built .. "\n(cuda: " .. not_built .. "\n" .. not_built .. "\n", out)
  end)
end)

describe("compiling CUDA C++ with NVRTC", function()
  if not nvrtc_ok then
    it("says why it cannot", function()
      assert.has_error(function() kt.cuda_compile{ source = "" } end, nvrtc_why)
    end)
    pending("NVRTC is not available here: " .. tostring(nvrtc_why))
    return
  end
  local vadd = assert(io.open("examples/kernels/vadd.cu")):read("a")

  it("instantiates a template from a name expression whose macros expand", function()
    local out = kt.cuda_compile{ source = vadd, name = "vadd.cu", arch = "sm_90",
                                 names = { "vadd<VEC>" }, options = "-DVEC=4 -DWG=256" }
    assert.are.equal("_Z4vaddILi4EEvPK6floatsIXT_EES3_PS1_i", out.lowered["vadd<VEC>"])
    assert.are.equal("\127ELF", out.cubin:sub(1, 4))
    assert.matches(".target sm_90", out.ptx, 1, true)
    assert.matches(".entry _Z4vaddILi4EEvPK6floatsIXT_EES3_PS1_i", out.ptx, 1, true)
    assert.matches("ld.global.nc.v4.f32", out.ptx, 1, true)
    assert.are.equal("", out.log)
  end)

  it("gives PTX alone for a virtual architecture, and keeps extern \"C\" names", function()
    local out = kt.cuda_compile{ source = 'extern "C" __global__ void k(float *x) { x[0] = 1; }',
                                 arch = "compute_90", names = { "k" } }
    assert.is_nil(out.cubin)
    assert.are.equal("k", out.lowered.k)
    assert.matches(".entry k(", out.ptx, 1, true)
  end)

  it("finds the toolkit's headers beside NVRTC", function()
    local out, log = kt.cuda_compile{ source = "#include <cuda_fp16.h>\n"
      .. "__global__ void h(__half *x) { x[0] = __float2half(1.0f); }", arch = "compute_90" }
    assert.is_nil(log)
    assert.matches(".target sm_90", out.ptx, 1, true)
  end)

  it("returns nil and the compiler's log when the source does not compile", function()
    local out, log = kt.cuda_compile{ source = "__global__ void k(float *x) {\n  x[0] = y;\n}",
                                      name = "bad.cu" }
    assert.is_nil(out)
    assert.matches('bad.cu(2): error: identifier "y" is undefined', log, 1, true)
    out, log = kt.cuda_compile{ source = vadd, arch = "sm_10" }
    assert.is_nil(out)
    assert.are.equal("nvrtc: error: invalid value for --gpu-architecture (-arch)\n", log)
  end)

  it("checks its options", function()
    assert.has_error(function() kt.cuda_compile{} end,
      "cuda_compile options.source: the CUDA source is required")
    assert.has_error(function() kt.cuda_compile{ source = "", target = "sm_90" } end,
      "cuda_compile options: unknown field 'target' (expected one of: source, name, names, arch, options)")
    assert.has_error(function() kt.cuda_compile{ source = "", names = "k" } end,
      "cuda_compile options.names: expected a list of names")
    assert.has_error(function() kt.cuda_compile() end)
  end)
end)

describe("the CUDA backend with a stand-in driver (spec/support/fake_cuda.c)", function()
  local _, no_cc = shell.run("command -v cc")
  if not (built and nvrtc_ok) or no_cc ~= 0 then
    pending("needs the CUDA headers at build time, NVRTC and a C compiler")
    return
  end
  local dir = folder_made_by("mkdir -p %s && cc -std=c11 -shared -fPIC -o %s/libcuda.so.1 spec/support/fake_cuda.c")

  -- Runs a script with the stand-in driver (and env, "NAME=value ..."); returns
  -- its output and status.
  local function with_fake(script, env)
    local path = dir .. "/script.lua"
    local f = assert(io.open(path, "w"))
    f:write('local kt = require "ktlua"\n', script)
    f:close()
    return shell.run(("%s KTLUA_LIBCUDA=%s/libcuda.so.1 %s %s"):format(env or "", dir, shell.ktlua, path))
  end

  it("lists the driver's device with its properties", function()
    local out, code = with_fake([[
local d = kt.device("cuda")
print(d.id, d.name, d.compute_capability, d.arch, d.multiprocessors, d.shared_per_block_optin,
      table.concat(d.max_grid_dims, "x"), d.version, d.pci_bus_id)]])
    assert.are.equal(0, code, out)
    assert.are.equal("cuda:0\tFake GPU\t9.0\tsm_90\t4\t101376\t2147483647x65535x65535\tCUDA 13.0"
      .. "\t0000:00:00.0\n", out)
  end)

  it("lists no device, and says why, when the driver loads but NVRTC does not", function()
    local out, code = with_fake([[
local list, why = kt.devices()
local cuda = 0
for _, d in ipairs(list) do if d.backend == "cuda" then cuda = cuda + 1 end end
print(cuda, why)]],
      "KTLUA_NVRTC=/nonexistent/libnvrtc.so")
    assert.are.equal(0, code, out)
    assert.are.equal("0\tcuda: libnvrtc (NVRTC, from the CUDA toolkit) cannot be loaded from "
      .. "KTLUA_NVRTC=/nonexistent/libnvrtc.so: /nonexistent/libnvrtc.so: cannot open shared "
      .. "object file: No such file or directory", out:match("^[^\n]*"):gsub("; opencl:.*", ""))
  end)

  it("prunes local memory against the opt-in shared memory limit, not the default", function()
    local out, code = with_fake([[
local tuner = kt.tuner("cuda:0")
local k = tuner:kernel{ name = "k", global = 32, group = 32, args = {},
                        source = 'extern "C" __global__ void k() {}' }
k:param("FLOATS", { 256, 20000, 30000 })
k:local_memory("FLOATS * 4")
local s = k:space(tuner.device)
print(tuner.device.local_memory, tuner.device.shared_per_block_optin, s:count(), s:pruned().local_memory)]])
    assert.are.equal(0, code, out)
    -- 80,000 bytes fit under the stand-in's opt-in limit, 120,000 do not
    assert.are.equal("49152\t101376\t2\t1\n", out)
  end)

  it("says why an in-process tuner cannot reopen its context after a fault", function()
    local out, code = with_fake([[
local tuner = kt.tuner("cuda:0", { isolate = false })
local c = kt.array("float", 56)
local k = tuner:kernel{ name = "k", global = 56, group = 1, args = { c:output() },
                        source = 'extern "C" __global__ void k(float *c) {}' }
k:param("WG", { 1, 7, 8 }, { group_x = "mul" }) -- the stand-in faults on 7
print(select(2, pcall(tuner.tune, tuner, k, { repeats = 1 })))
print(select(2, pcall(tuner.run, tuner, k, { WG = 8 })))]], "FAKE_CUDA_CONTEXTS=1")
    assert.are.equal(0, code, out)
    assert.are.equal(table.concat({
      "after a kernel on queue 0 failed: CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access "
        .. "was encountered: reopening cuda:0: cuCtxCreate failed: CUDA_ERROR_OUT_OF_MEMORY (2): fake error"
        .. " (a driver may not recover within the process that met the fault; an isolated tuner, the "
        .. "default, starts a new device process)",
      "reopening cuda:0: cuCtxCreate failed: CUDA_ERROR_OUT_OF_MEMORY (2): fake error (a driver may not "
        .. "recover within the process that met the fault; an isolated tuner, the default, starts a new "
        .. "device process)", "" }, "\n"), out)
  end)

  it("compiles, launches, times, faults, recovers and tunes on", function()
    local out, code = with_fake([[
local tuner = kt.tuner("cuda:0")
local n = 3584
local a = kt.array("float", n):fill(function(i) return i end)
local c = kt.array("float", n):fill(1)
local k = tuner:kernel{ name = "scaled<2>", global = n, group = 1, source = [=[
__constant__ float s;
template <int F>
__global__ void scaled(const float *a, float *c, int n) {
  extern __shared__ float part[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] += F * s * a[i];
}]=], args = { a:input{ placement = "managed" }, c:inout{ placement = "host" }, kt.int(n),
               kt.localmem("float", 16), kt.symbol("s", kt.float(2)) } }
k:param("WG", { 1, 7, 8, 2048 }, { group_x = "mul" }) -- the stand-in faults on 7
k:prune(false) -- keep 2048 in the space: its launch is checked against the kernel's limit
local r = tuner:tune(k, { repeats = 2 })
for i = 1, #r do
  local u = r[i].resources[1]
  print(r[i].config.WG, r[i].status, r[i].time_ms, #r[i].samples_ms, u.registers, u.max_threads,
        r[i].error)
end
print(tuner:run(k, { WG = 8 }).status, c[n - 1])]])
    assert.are.equal(0, code, out)
    assert.are.equal(table.concat({
      "1\tok\t0.25\t2\t16\t1024\tnil",
      "7\truntime_failed\tnil\t0\t16\t1024\ta kernel on queue 0 failed: CUDA_ERROR_ILLEGAL_ADDRESS "
        .. "(700): an illegal memory access was encountered",
      "8\tok\t0.25\t2\t16\t1024\tnil",
      "2048\ttoo_many_threads\tnil\t0\t16\t1024\tkernel scaled<2>: a work-group of 2048 work-items "
        .. "exceeds the kernel's limit of 1024 on this device",
      "ok\t1.0", "" }, "\n"), out)
  end)
  it("catches a kernel that writes over an input, comparing on the device", function()
    -- BAD = 1's module makes the stand-in's kernel write over its first argument, an input
    local out, code = with_fake([[
local tuner = kt.tuner("cuda:0")
local b = kt.array("float", 64):fill(3)
local c = kt.array("float", 64)
local k = tuner:kernel{ name = "add", global = 64, group = 8, args = { b:input(), c:output() },
  source = [=[
#if BAD == 1
__device__ int fake_scribble;
#endif
extern "C" __global__ void add(const float *b, float *c) {
#if BAD == 1
  fake_scribble = 1;
#endif
  c[threadIdx.x] = b[threadIdx.x];
}]=] }
k:param("BAD", { 0, 1, 2, 3 })
local r = tuner:tune(k, { search = "exhaustive", repeats = 1, check_inputs = "always" })
local s = r:summary()
print(s.input_checks, s.input_checks_device, s.inputs_changed, b[0])
for i = 1, #r do print(r[i].config.BAD, r[i].status, r[i].error) end]])
    assert.are.equal(0, code, out)
    local lines = {}
    for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
    assert.are.equal(5, #lines, out)
    assert.are.equal("4\t4\t1\t3.0", lines[1])
    assert.are.equal("0\tok\tnil", lines[2])
    assert.matches("^1\tout_of_bounds\tit wrote where no kernel may: kernel add, argument 1 "
      .. "%(input float%[64%]%): 1 of 64 elements changed, the first at element 0 %(%-?nan "
      .. "instead of 3%) %(restored%)$", lines[3])
    assert.are.equal("2\tok\tnil", lines[4])
    assert.are.equal("3\tok\tnil", lines[5])
  end)

  it("fails only the configuration in flight when making the next one's kernel ahead kills the device process", function()
    -- MODE 2's module aborts the stand-in when its kernel is taken: during MODE 1's warm-up,
    -- where MODE 2's kernel is made ahead (the reference waits for every compile to be over),
    -- then when MODE 2 is built itself.
    local out, code = with_fake([[
local tuner = kt.tuner("cuda:0")
local c = kt.array("float", 64)
local k = tuner:kernel{ name = "k", global = 64, group = 8, args = { c:output() }, source = [=[
#if MODE == 2
__device__ int fake_abort_on_get;
#endif
extern "C" __global__ void k(float *c) {
#if MODE == 2
  fake_abort_on_get = 1;
#endif
}]=] }
k:param("MODE", { 0, 1, 2, 3 })
k:reference(c, function(ref) -- the stand-in's kernels do nothing
  require("spec.support.wait").compiles_over(tuner)
  ref:fill(0)
end)
local r = tuner:tune(k, { repeats = 2 })
for i = 1, #r do
  print(r[i].config.MODE, r[i].status, #r[i].samples_ms, r[i].retried or "-")
end]])
    assert.are.equal(0, code, out)
    local lines = {}
    for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
    assert.are.equal(4, #lines, out)
    assert.are.equal("0\tok\t2\t-", lines[1])
    assert.matches("^1\tok\t2\tfirst run: runtime_failed %(the device process died of signal 6 %(Aborted%)"
      .. "[^)]*%); run again because its device process was lost$", lines[2])
    assert.matches("^2\t%a+_failed\t0\t", lines[3])
    assert.are.equal("3\tok\t2\t-", lines[4])
  end)
end)

describe("the CUDA backend with a stand-in driver: launchers' queues", function()
  local _, no_cc = shell.run("command -v cc")
  if not (built and nvrtc_ok) or no_cc ~= 0 then
    pending("needs the CUDA headers at build time, NVRTC and a C compiler")
    return
  end
  local dir = folder_made_by("mkdir -p %s && cc -std=c11 -shared -fPIC -o %s/libcuda.so.1 spec/support/fake_cuda.c")

  it("queues transfers that do not block and orders streams with events", function()
    local path = dir .. "/script.lua"
    local f = assert(io.open(path, "w"))
    f:write([[
local kt = require "ktlua"
local tuner = kt.tuner("cuda:0")
local a, host, back = kt.array("int", 64), kt.array("int", 64):fill(7), kt.array("int", 64)
local k = tuner:kernel{ name = "k", global = 64, group = 1, args = { a:inout() },
  source = 'extern "C" __global__ void k(int *a) {}' } -- the stand-in runs nothing
local seen
k:launcher(function(run)
  run:write(a, host, { queue = 1, async = true })
  run:wait(run:event(1), 0)
  run:launch(k)
  run:read(a, back, { queue = 0, async = true })
  run:sync(0)
  seen = back[0] .. "," .. back[63]
end)
local r = tuner:tune(k, { repeats = 1 })
print(r[1].status, r[1].error, seen)]])
    f:close()
    local out, code = shell.run(("KTLUA_LIBCUDA=%s/libcuda.so.1 %s %s"):format(dir, shell.ktlua, path))
    assert.are.equal(0, code, out)
    assert.are.equal("ok\tnil\t7,7\n", out)
  end)
end)

describe("the CUDA backend on a device", function()
  if not device then
    pending("no CUDA device here (" .. (cuda_reason(why) or why) .. "); scripts/gpu-check.sh runs these")
    return
  end
  local tuner = kt.tuner(device.id)

  it("describes the device", function()
    local d = tuner.device
    assert.are.equal("cuda:0", d.id)
    assert.are.equal("gpu", d.type)
    assert.are.equal("NVIDIA Corporation", d.vendor)
    local major, minor = d.compute_capability:match("^(%d+)%.(%d)$")
    assert.are.equal("sm_" .. major .. minor, d.arch)
    assert.are.equal(d.multiprocessors, d.compute_units)
    assert.are.equal(32, d.warp_size)
    assert.are.equal(1024, d.max_group_size)
    assert.are.same({ 1024, 1024, 64 }, d.max_group_dims)
    assert.are.same({ 2147483647, 65535, 65535 }, d.max_grid_dims)
    assert.are.equal(49152, d.shared_per_block)
    assert.are.equal(d.shared_per_block, d.local_memory)
    assert.is_true(d.shared_per_block_optin > d.shared_per_block)
    assert.is_true(d.shared_per_sm >= d.shared_per_block_optin)
    assert.are.equal(65536, d.registers_per_block)
    for _, key in ipairs({ "multiprocessors", "l2_cache", "memory_clock_mhz", "memory_bus_width",
                           "clock_mhz", "global_memory", "constant_memory", "registers_per_sm" }) do
      assert.is_true(math.type(d[key]) == "integer" and d[key] > 0, key)
    end
    assert.matches("^CUDA %d+%.%d$", d.version)
    assert.matches("^NVRTC %d+%.%d$", d.c_version)
  end)

  it("tunes a template kernel named by its instance, with the compiled kernel's resources", function()
    local n = 1 << 16
    local a = kt.array("float", n):fill(function(i) return i end)
    local b = kt.array("float", n):random(3)
    local c = kt.array("float", n)
    local k = tuner:kernel{ file = "../examples/kernels/vadd.cu", name = "vadd<VEC>", global = n, group = 1,
                            args = { a:input(), b:input(), c:output(), kt.int(n) } }
    k:param("WG", { 64, 256 }, { group_x = "mul" })
    k:param("VEC", { 1, 4 }, { global_x = "div" })
    k:reference(c, function(ref) for i = 0, n - 1 do ref[i] = a[i] + b[i] end end)
    -- host comparison: a comparison kernel on the device would be a fifth program
    local r = tuner:tune(k, { repeats = 2, validate_on = "host" })
    assert.are.equal(4, #r)
    for i = 1, 4 do
      assert.are.equal("ok", r[i].status, r[i].error)
      local used = r[i].resources[1]
      assert.are.equal("vadd<VEC>", used.kernel)
      assert.are.equal(r[i].config.WG, used.max_threads) -- __launch_bounds__(WG)
      assert.is_true(used.registers > 0)
    end
    assert.is_not_nil(r:best())
    assert.are.equal(4, tuner:cache().misses)
  end)

  it("rejects blocks beyond the kernel's __launch_bounds__", function()
    local out = kt.array("int", 1024)
    local k = tuner:kernel{ name = "bounded", global = 1024, group = 1, args = { out:output() }, source = [[
extern "C" __global__ void __launch_bounds__(128) bounded(int *o) { o[blockIdx.x * blockDim.x + threadIdx.x] = 1; }]] }
    k:param("WG", { 128, 256 }, { group_x = "mul" })
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.equal("ok", r[1].status)
    assert.are.equal("too_many_threads", r[2].status)
    assert.are.equal("kernel bounded: a work-group of 256 work-items exceeds the kernel's limit of 128 "
      .. "on this device", r[2].error)
    assert.are.equal(128, r[2].resources[1].max_threads)
  end)

  it("opts in to large dynamic shared memory and refuses, before the launch, more than the device has", function()
    local out = kt.array("float", 256)
    local k = tuner:kernel{ name = "fill", global = 256, group = 256, args = { out:output(),
      kt.localmem("float", function(cfg) return cfg.FLOATS end) }, source = [[
extern "C" __global__ void fill(float *o) {
  extern __shared__ float s[];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  o[threadIdx.x] = s[255 - threadIdx.x];
}]] }
    k:param("FLOATS", { 256, 16384, 1 << 20 }) -- 1 KiB, 64 KiB (opt-in), 4 MiB (too much)
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.equal("ok", r[1].status, r[1].error)
    assert.are.equal("ok", r[2].status, r[2].error)
    assert.are.equal("too_much_local_memory", r[3].status)
    assert.matches("kernel fill: a work-group needs 4194304 bytes of local memory, more than the ",
      r[3].error, 1, true)
    assert.are.equal("ok", tuner:run(k, { FLOATS = 16384 }).status)
    assert.are.equal(255, out[0])
    assert.are.equal(0, out[255])
  end)

  it("reports a global size that is not a whole number of blocks as launch_failed", function()
    local out = kt.array("int", 100)
    local k = tuner:kernel{ name = "ones", global = 100, group = 64, args = { out:output() }, source = [[
extern "C" __global__ void ones(int *o) { o[blockIdx.x * blockDim.x + threadIdx.x] = 1; }]] }
    local r = tuner:run(k)
    assert.are.equal("launch_failed", r.status)
    assert.are.equal("kernel ones: the global size 100 in x is not a multiple of the block size 64 "
      .. "(CUDA launches whole blocks)", r.error)
  end)

  it("recovers from an illegal memory access: runtime_failed, then a fresh context", function()
    local n = 4096
    local a = kt.array("float", n):fill(function(i) return i end)
    local c = kt.array("float", n):fill(1)
    local k = tuner:kernel{ name = "twice", global = n, group = 128, args = { a:input(), c:inout(), kt.int(n) },
                            source = [[
extern "C" __global__ void twice(const float *a, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (CASE == 1) *(volatile float *)(8 + 4 * (size_t)i) = 1.0f;
  if (i < n) c[i] += 2 * a[i];
}]] }
    k:param("CASE", { 0, 1, 2 }) -- 1 writes far outside any allocation
    k:reference(c, function(ref) for i = 0, n - 1 do ref[i] = 1 + 2 * i end end)
    local r = tuner:tune(k, { repeats = 3 })
    assert.are.equal("ok", r[1].status, r[1].error)
    assert.are.equal("runtime_failed", r[2].status)
    assert.are.equal("a kernel on queue 0 failed: CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory "
      .. "access was encountered", r[2].error)
    -- the next configuration runs in a fresh context, on restored arrays, and validates
    assert.are.equal("ok", r[3].status, r[3].error)
    assert.are.equal(3, #r[3].samples_ms)
    assert.are.equal("ok", tuner:run(k, { CASE = 2 }).status)
    assert.are.equal(1 + 2 * 4095, c[4095])
  end)

  it("runs a launcher on several streams, with transfers, copies and a host step", function()
    local n = 4096
    local a = kt.array("float", n):fill(function(i) return i end)
    local b = kt.array("float", n)
    local out = kt.array("float", n)
    local src = [[
extern "C" __global__ void twice(float *x) { int i = blockIdx.x * blockDim.x + threadIdx.x; x[i] = 2 * x[i]; }]]
    local k = tuner:kernel{ source = src, name = "twice", global = n, group = 1, args = { a:inout() } }
    k:param("B", { 128, 256 }, { group_x = "mul" })
    local host = kt.array("float", n)
    k:launcher(function(run)
      run:launch(k, { queue = 1 })                -- a = 2i on stream 1
      run:sync(1)
      run:copy(b, a)                              -- b = 2i
      run:args(k, { b:inout() })
      run:launch(k, { queue = 2 })                -- b = 4i on stream 2
      run:sync(2)
      run:read(b, host)
      for i = 0, n - 1 do host[i] = host[i] + 1 end -- a host step: 4i + 1
      run:write(out, host, { queue = 1 })
      run:sync()
    end)
    k:reference(out, function(ref) for i = 0, n - 1 do ref[i] = 4 * i + 1 end end)
    k:reference(a, function(ref) for i = 0, n - 1 do ref[i] = 2 * i end end)
    local r = tuner:tune(k, { repeats = 2 })
    for i = 1, 2 do
      assert.are.equal("ok", r[i].status, r[i].error)
      assert.are.equal(2, r[i].launches)
    end
  end)

  it("writes on one stream without blocking, and a kernel on another waits through an event", function()
    local n = 1 << 20
    local a = kt.array("float", n)
    local host = kt.array("float", n):fill(function(i) return i end)
    local back = kt.array("float", n)
    local src = [[
extern "C" __global__ void twice(float *x) { int i = blockIdx.x * blockDim.x + threadIdx.x; x[i] = 2 * x[i]; }]]
    local k = tuner:kernel{ source = src, name = "twice", global = n, group = 1, args = { a:inout() } }
    k:param("B", { 128, 256 }, { group_x = "mul" })
    local wrong = 0
    k:launcher(function(run)
      run:write(a, host, { queue = 1, async = true })   -- stream 1
      run:wait(run:event(1), 0)                          -- stream 0 waits for it
      run:launch(k)                                      -- a = 2i on stream 0
      run:read(a, back, { queue = 0, async = true })
      run:sync(0)
      if back[n - 1] ~= 2 * (n - 1) then wrong = wrong + 1 end
    end)
    k:reference(a, function(ref) for i = 0, n - 1 do ref[i] = 2 * i end end)
    local r = tuner:tune(k, { repeats = 3 })
    for i = 1, 2 do
      assert.are.equal("ok", r[i].status, r[i].error)
      assert.is_true(r[i].time_ms > 0)
    end
    assert.are.equal(0, wrong)
  end)

  it("runs a composition of two kernels and managed memory", function()
    local n = 2048
    local a = kt.array("float", n):fill(function(i) return i end)
    local t = kt.array("float", n)
    local d = kt.array("float", n)
    local src = [[
extern "C" __global__ void scale(const float *a, float *t) { int i = blockIdx.x * blockDim.x + threadIdx.x; t[i] = F * a[i]; }
extern "C" __global__ void shift(const float *t, float *d) { int i = blockIdx.x * blockDim.x + threadIdx.x; d[i] = t[i] + 1; }]]
    local k1 = tuner:kernel{ source = src, name = "scale", global = n, group = 256,
                             args = { a:input{ placement = "managed" }, t:inout() } }
    local k2 = tuner:kernel{ source = src, name = "shift", global = n, group = 256, args = { t:input(), d:output() } }
    local both = tuner:composition{ name = "scale_shift", kernels = { k1, k2 } }
    both:param("F", { 2, 3 })
    both:reference(d, function(ref) for i = 0, n - 1 do ref[i] = 3 * i + 1 end end)
    local r = tuner:tune(both, { repeats = 1 })
    assert.are.equal("invalid_output", r[1].status)
    assert.are.equal("ok", r[2].status, r[2].error)
    assert.are.equal(2, r[2].launches)
    assert.are.equal("shift", r[2].resources[2].kernel)
  end)
end)
