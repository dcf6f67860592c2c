-- Backend parity: the same kernels, written in OpenCL C and in CUDA C++,
-- behave the same on whichever device KTLUA_DEVICE names (the default
-- device here; scripts/gpu-check.sh runs this file on cuda:0 and on the
-- NVIDIA OpenCL device).
local kt = require "ktlua"

local statuses = require "spec.support.statuses"

local tuner = kt.tuner()
local backend = tuner.device.backend
local cuda = backend == "cuda"

local sources = {
  -- c[i] = a[i] + s * b[i]
  add = {
    opencl = [[
__kernel void add(__global const float *a, __global const float *b, __global float *c,
                  float s, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + s * b[i];
}]],
    cuda = [[
extern "C" __global__ void add(const float *a, const float *b, float *c, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + s * b[i];
}]],
  },
  -- sums[g] = the sum of a over work-group g, through local (shared) memory
  block_sum = {
    opencl = [[
__kernel void block_sum(__global const float *a, __global float *sums, __local float *part) {
  int l = get_local_id(0), n = get_local_size(0);
  part[l] = a[get_global_id(0)];
  for (int s = n / 2; s > 0; s /= 2) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < s) part[l] += part[l + s];
  }
  if (l == 0) sums[get_group_id(0)] = part[0];
}]],
    cuda = [[
extern "C" __global__ void block_sum(const float *a, float *sums) {
  extern __shared__ float part[];
  int l = threadIdx.x, n = blockDim.x;
  part[l] = a[blockIdx.x * blockDim.x + l];
  for (int s = n / 2; s > 0; s /= 2) {
    __syncthreads();
    if (l < s) part[l] += part[l + s];
  }
  if (l == 0) sums[blockIdx.x] = part[0];
}]],
  },
  -- with WILD == 1, a write far outside any buffer
  wild = {
    opencl = [[
__kernel void wild(__global int *o) {
#if WILD == 1
  __global int *far = (__global int *)((ulong)o ^ 0x7f0000000000UL);
  far[get_global_id(0) * 1000003] = 1;
#endif
  o[get_global_id(0)] = 7;
}]],
    cuda = [[
extern "C" __global__ void wild(int *o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if WILD == 1
  int *far = (int *)((unsigned long long)o ^ 0x7f0000000000ULL);
  far[i * 1000003] = 1;
#endif
  o[i] = 7;
}]],
  },
  broken = {
    opencl = "__kernel void broken(__global float *a) {\n  a[0] = undeclared_name;\n}",
    cuda = "extern \"C\" __global__ void broken(float *a) {\n  a[0] = undeclared_name;\n}",
  },
}

local function add_kernel(n, placement, def)
  local a = kt.array("float", n):fill(function(i) return i end)
  local b = kt.array("float", n):fill(1)
  local c = kt.array("float", n)
  def = def or {}
  def.source, def.name = sources.add[backend], "add"
  def.global = def.global or n
  def.args = { a:input(placement), b:input(placement), c:output(placement), kt.float(2), kt.int(n) }
  return tuner:kernel(def), c
end

local function expect_add(c, n)
  for i = 0, n - 1 do
    if c[i] ~= i + 2 then error(("c[%d] = %s, expected %d"):format(i, c[i], i + 2)) end
  end
end

describe("the " .. backend .. " backend", function()
  it("runs a kernel with buffer and scalar arguments in each placement it has", function()
    for _, place in ipairs({ "device", "host", "zero_copy" }) do
      local k, c = add_kernel(1000, { placement = place }, { group = 100 })
      local r = tuner:run(k)
      assert.are.equal("ok", r.status, place .. ": " .. (r.error or ""))
      expect_add(c, 1000)
    end
    local k, c = add_kernel(64, { placement = "managed" })
    if cuda then
      assert.are.equal("ok", tuner:run(k).status)
      expect_add(c, 64)
    else
      assert.has_error(function() tuner:run(k) end,
        "device memory for float[64]: placement 'managed' needs the CUDA backend")
    end
  end)

  it("gives local memory arguments to the kernel (CUDA: dynamic shared memory)", function()
    local n = 1024
    local a = kt.array("float", n):fill(function(i) return i end)
    local sums = kt.array("float", n // 16)
    local k = tuner:kernel{ source = sources.block_sum[backend], name = "block_sum", global = n, group = 1,
                            args = { a:input(), sums:output(),
                                     kt.localmem("float", function(cfg) return cfg.WG end) } }
    k:param("WG", { 16, 256 }, { group_x = "mul" })
    for _, wg in ipairs({ 16, 256 }) do
      local r = tuner:run(k, { WG = wg })
      assert.are.equal("ok", r.status, r.error)
      for g = 0, n // wg - 1 do
        local first, last = g * wg, (g + 1) * wg - 1
        assert.are.equal((first + last) * wg / 2, sums[g], ("WG=%d, group %d"):format(wg, g))
      end
    end
  end)

  it("counts the global size in work-items or, with notation 'cuda', in blocks", function()
    local k, c = add_kernel(4096, nil, { global = 4096 // 128, group = 128, notation = "cuda" })
    local r = tuner:run(k)
    assert.are.equal("ok", r.status, r.error)
    assert.are.same({ 32 }, r.global)
    expect_add(c, 4096)
  end)

  it("passes the kernel's compiler options to the compiler", function()
    local out = kt.array("int", 4)
    local body = "#ifndef SCALE\n#error SCALE is not defined\n#endif\n"
      .. (cuda and 'extern "C" __global__ void opt(int *o) { o[threadIdx.x] = SCALE * 2; }'
               or "__kernel void opt(__global int *o) { o[get_global_id(0)] = SCALE * 2; }")
    local k = tuner:kernel{ source = body, name = "opt", global = 4, group = 4, options = "-DSCALE=3",
                            args = { out:output() } }
    assert.are.equal("ok", tuner:run(k).status)
    assert.are.same({ 6, 6, 6, 6 }, out:totable())
    local plain = tuner:kernel{ source = body, name = "opt", global = 4, group = 4, args = { out:output() } }
    local r = tuner:run(plain)
    assert.are.equal("compile_failed", r.status)
    assert.matches("SCALE is not defined", r.error, 1, true)
  end)

  it("records the compiler's log for a kernel that does not compile", function()
    local a = kt.array("float", 4)
    local k = tuner:kernel{ source = sources.broken[backend], name = "broken", global = 4, args = { a:output() } }
    local r = tuner:run(k)
    assert.are.equal("compile_failed", r.status)
    if cuda then
      assert.matches('<string>%(2%): error: identifier "undeclared_name" is undefined', r.error)
    else
      assert.matches("undeclared_name", r.error)
    end
  end)

  it("survives a kernel that writes outside its memory, and runs the next configuration", function()
    local out = kt.array("int", 256)
    local k = tuner:kernel{ source = sources.wild[backend], name = "wild", global = 256, group = 64,
                            args = { out:output() } }
    k:param("WILD", { 0, 1, 2 })
    k:reference(out, function(ref) ref:fill(7) end)
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.same({ "ok", "runtime_failed", "ok" }, statuses(r), r[2].error)
  end)

  it("rejects work-groups beyond the kernel's limit before launching", function()
    local k = add_kernel(1 << 16, nil, { group = 1 })
    local limit = tuner.device.max_group_size
    k:param("WG", { 64, limit * 2 }, { group_x = "mul" })
    k:prune(false) -- keep the second in the space: it is the launch that must refuse it
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.equal("ok", r[1].status)
    assert.are.equal("too_many_threads", r[2].status)
    -- The kernel's own limit: the device's, or lower (NVIDIA's OpenCL says 256 for many kernels).
    local kernel_limit = r[1].resources[1].max_threads
    assert.is_true(kernel_limit <= limit)
    assert.are.equal(("kernel add: a work-group of %d work-items exceeds the kernel's limit of %d on "
      .. "this device"):format(limit * 2, kernel_limit), r[2].error)
  end)

  it("records what the compiled kernel uses with each result, and times launches", function()
    local k = add_kernel(1 << 12, nil, { group = 64 })
    local r = tuner:tune(k, { repeats = 3 })
    local used = r[1].resources[1]
    assert.are.equal("add", used.kernel)
    assert.is_true(used.max_threads >= 64 and used.max_threads <= tuner.device.max_group_size)
    -- no __local memory of its own (NVIDIA's OpenCL reports a byte)
    assert.is_true(used.shared_bytes >= 0 and used.shared_bytes <= (cuda and 0 or 16))
    if cuda then
      assert.is_true(math.type(used.registers) == "integer" and used.registers > 0)
      assert.are.equal(0, used.local_bytes)
      assert.are.equal(0, used.constant_bytes)
    else
      assert.is_nil(used.registers)
      assert.is_nil(used.constant_bytes)
    end
    assert.are.equal(3, #r[1].samples_ms)
    assert.is_true(r[1].time_ms > 0)
    local path = os.tmpname()
    r:write(path, "json")
    local text = assert(io.open(path)):read("a")
    os.remove(path)
    local registers = cuda and tostring(used.registers) or "null"
    assert.matches('"resources":%[{"registers":' .. registers .. ',"shared_bytes":' .. used.shared_bytes .. ',', text)
    assert.matches('"max_threads":' .. used.max_threads .. "}%]", text)
  end)

  it("copies symbol arguments into __constant__ variables, in CUDA only", function()
    local out = kt.array("float", 4)
    local coeffs = kt.array("float", 4):fill(function(i) return 10 * i end)
    local source = cuda and [[
__constant__ float coeffs[4];
__constant__ float scale;
extern "C" __global__ void poly(float *out) { out[threadIdx.x] = scale * coeffs[threadIdx.x]; }]]
      or "__kernel void poly(__global float *out) { out[get_global_id(0)] = 1; }"
    local scale = kt.symbol("scale", kt.float(0.5))
    local k = tuner:kernel{ source = source, name = "poly", global = 4, group = 4,
                            args = { out:output(), kt.symbol("coeffs", coeffs), scale } }
    if not cuda then
      assert.has_error(function() tuner:run(k) end, "kernel poly: argument 2: the __constant__ symbol "
        .. "'coeffs' needs the CUDA backend (in OpenCL, pass a __constant pointer argument)")
      return
    end
    assert.are.equal("ok", tuner:run(k).status)
    assert.are.same({ 0, 5, 10, 15 }, out:totable())
    scale:set(2)
    assert.are.equal("ok", tuner:run(k).status)
    assert.are.same({ 0, 20, 40, 60 }, out:totable())
  end)
end)

describe("symbol arguments", function()
  it("hold an array or a scalar under the variable's name", function()
    local coeffs = kt.array("float", 4)
    local s = kt.symbol("coeffs", coeffs)
    assert.are.equal("symbol", s.kind)
    assert.are.equal("coeffs", s.symbol)
    assert.are.equal("argument: symbol coeffs", tostring(s))
    assert.is_nil(s.placement)
    local f = kt.symbol("scale", kt.float(1.5))
    assert.are.equal(1.5, f.value)
    f:set(4)
    assert.are.equal(4, f.value)
    assert.has_error(function() s:set(1) end)
    assert.has_error(function() kt.symbol("x", 3) end)
    assert.has_error(function() kt.symbol("x", kt.localmem("float", 4)) end)
    assert.has_error(function() kt.symbol(nil, coeffs) end)
  end)
end)
