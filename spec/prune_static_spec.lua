-- Pruning by the static local memory a kernel's source declares (core/eval/prune_shared.c, with
-- core/space/preproc.c reading its directives per configuration): OpenCL's __local arrays on
-- PoCL here, CUDA's __shared__ ones in t1_cuda_limits_spec.
local kt = require "ktlua"

local tuner = kt.tuner("opencl", { cache = false })
local limit = tuner.device.local_memory -- bytes of local memory a work-group may have
local over = limit // 4 + 1             -- floats: one more than fit

-- How many configurations of a kernel with source src (and options) the static local memory
-- check removes, the kernel's parameters given as {name, values}.
local function pruned(src, params, options)
  local k = tuner:kernel{ name = "k", global = 16, group = 1, options = options,
    args = { kt.array("float", 16):output() }, source = src }
  for _, p in ipairs(params) do k:param(p[1], p[2]) end
  return k:space(tuner.device):pruned().local_memory, k
end

local padded = [[
#define W (TS + 2)
#if PAD == 1
  #define WIDTH (W + 1)
#else
  #define WIDTH W
#endif
__kernel void k(__global float *c) {
  __local float tile[TS][WIDTH];
  tile[get_local_id(0)][0] = 1;
  c[get_global_id(0)] = tile[0][0];
}]]

describe("pruning by the static local memory the source declares", function()
  it("removes, before compiling, the configurations whose __local arrays are more than the device has",
     function()
    -- TS = 512: 512 x 514 (515 padded) floats, over PoCL's 1 MiB either way
    assert.are.equal(1048576, limit)
    local n, k = pruned(padded, { { "TS", { 16, 256, 512 } }, { "PAD", { 0, 1 } } })
    assert.are.equal(2, n)
    local r = tuner:tune(k, { repeats = 1, progress = false })
    assert.are.equal(4, #r)
    assert.are.equal(4, r:summary().compiles)
    assert.are.equal(2, r:summary().pruned.local_memory)
    for i = 1, #r do assert.are.equal("ok", r[i].status) end
    -- unpruned, they compile (the tuner has the other four's programs), and are refused
    -- before their launch
    k:prune{ local_memory = false }
    r = tuner:tune(k, { repeats = 1, progress = false })
    assert.are.equal(6, #r)
    assert.are.equal(2, r:summary().compiles)
    local refused = {}
    for i = 1, #r do
      if r[i].status ~= "ok" then refused[#refused + 1] = r[i].config.TS .. " " .. r[i].status end
    end
    assert.are.same({ "512 too_much_local_memory", "512 too_much_local_memory" }, refused)
  end)

  it("follows #if, #ifdef, #undef, function-like macros and -D options to a bound", function()
    local fit = limit // 4 -- floats
    local src = ([[
#define ROUND_UP(x, m) (((x) + (m) - 1) / (m) * (m))
#ifndef EXTRA
  #define EXTRA 0
#endif
#if MODE == 1
  #define N %d
#elif MODE == 2
  #define N ROUND_UP(%d, 4096)
#else
  #define N 16
  #undef EXTRA
  #define EXTRA 1
#endif
__kernel void k(__global float *c) {
  __local float a[N + EXTRA];
  a[0] = 1;
  c[0] = a[0];
}]]):format(fit - 20, fit - 4000)
    local modes = { { "MODE", { 0, 1, 2 } } }
    assert.are.equal(0, pruned(src, modes)) -- MODE 2 rounds up to exactly the limit
    assert.are.equal(1, pruned(src, modes, "-DEXTRA=10")) -- MODE 2 past it
    assert.are.equal(2, pruned(src, modes, "-D EXTRA=40")) -- MODE 1 too; MODE 0 undefines it
  end)

  it("counts only what it knows: nothing for an unused array, another kernel's, a type or "
     .. "macro it cannot know", function()
    local cases = {
      -- declared but never used: the compiler drops it
      "__kernel void k(__global float *c) { __local float big[S * %d]; c[0] = 1; }",
      -- another kernel's
      "__kernel void other(__global float *c) { __local float big[S * %d]; big[0] = 1; c[0] = big[0]; }\n"
        .. "__kernel void k(__global float *c) { c[0] = S; }",
      -- under the compiler's own macro
      "#ifdef __OPENCL_VERSION__\n#define N (S * %d)\n#else\n#define N 1\n#endif\n"
        .. "__kernel void k(__global float *c) { __local float big[N]; big[0] = 1; c[0] = big[0]; }",
      -- a type of unknown size
      "typedef struct { float x[S * %d]; } blob;\n"
        .. "__kernel void k(__global float *c) { __local blob big[1]; big[0].x[0] = 1; c[0] = big[0].x[0]; }",
    }
    for i, src in ipairs(cases) do
      assert.are.equal(0, pruned(src:format(over), { { "S", { 1, 2 } } }), "case " .. i)
    end
    -- the same array, used, is pruned
    assert.are.equal(2, pruned(("__kernel void k(__global float *c) { __local float big[S * %d]; "
      .. "big[0] = 1; c[0] = big[0]; }"):format(over), { { "S", { 1, 2 } } }))
  end)

  it("is switched off with the rest of the local memory check", function()
    local _, k = pruned(padded, { { "TS", { 16, 512 } }, { "PAD", { 0 } } })
    assert.are.equal(1, k:space(tuner.device):pruned().local_memory)
    k:prune{ local_memory = false }
    assert.are.equal(0, k:space(tuner.device):pruned().local_memory)
    assert.are.equal(2, k:space(tuner.device):count())
  end)
end)
