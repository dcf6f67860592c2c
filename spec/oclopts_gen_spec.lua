-- GENINIT, GENLIMIT and GENSTEP as OCLoptimizer's paper writes them
-- (issue 43, doc/annotations.md): GENINIT(n, g, 0) ... over the
-- work-items of the NDRange (g) or of each work-group (l) along
-- dimension 0, 1 or 2, cyclic or in blocks; GENINIT(n) the same as
-- GENINIT(n, g, 0). Every iteration is done exactly once by the
-- work-items that share the loop, by the work-item the distribution
-- names, for every spread, dimension, NDRange of 1 to 3 dimensions and
-- trip counts that the work-items divide and do not: on this machine's
-- device (PoCL here; scripts/gpu-check.sh runs this file on cuda:0 and on
-- NVIDIA's OpenCL), both distributions whatever the device's type; the
-- CUDA form compiled by NVRTC and, with CUDA's indices played on the
-- host, run by a C program. Uses that no form reads are refused where
-- they are.
local kt = require "ktlua"
local shell = require "spec.support.shell"

-- NDRanges of 1, 2 and 3 dimensions: global sizes and work-groups.
local RANGES = {
  { global = { 12, 1, 1 }, group = { 4, 1, 1 } },
  { global = { 6, 4, 1 }, group = { 3, 2, 1 } },
  { global = { 4, 6, 2 }, group = { 2, 3, 2 } },
}

-- Each kernel: its name, the spread and dimension it gives the macros,
-- and how it calls them (nil spread: the one-argument form).
local KERNELS = {}
for _, s in ipairs { "g", "l" } do
  for d = 0, 2 do KERNELS[#KERNELS + 1] = { name = ("count_%s%d"):format(s, d), spread = s, dim = d } end
end
KERNELS[#KERNELS + 1] = { name = "count_1", spread = "g", dim = 0, one = true }

-- The language's words: a kernel's head, an atomic increment, a
-- work-item's index along dimension d and the team function (the
-- work-items that share one loop are those whose indices differ along d
-- alone: their global indices (g), or their work-group's and their local
-- indices (l); team numbers them). CUDA's at() reads x, y or z; the C
-- program of the host run keeps one of its two (dim3 is uint3 there).
local LANG = {
  opencl = {
    head = "__kernel void %s(__global int *count, __global int *who, int n)",
    inc = "atomic_inc(&count[row + i])",
    id = { g = "get_global_id(%d)", l = "get_local_id(%d)" },
    prelude = [[
long team(int d, int local_) {
  long t = 0;
  if (local_) for (int k = 2; k >= 0; k--) t = t * get_num_groups(k) + get_group_id(k);
  for (int k = 2; k >= 0; k--)
    if (k != d) t = local_ ? t * get_local_size(k) + get_local_id(k) : t * get_global_size(k) + get_global_id(k);
  return t;
}
]],
  },
  cuda = {
    head = 'extern "C" __global__ void %s(int *count, int *who, int n)',
    inc = "atomicAdd(&count[row + i], 1)",
    id = { g = "(at(blockIdx, %d) * at(blockDim, %d) + at(threadIdx, %d))", l = "at(threadIdx, %d)" },
    prelude = [[
__device__ long at(uint3 v, int k) { return k == 0 ? v.x : k == 1 ? v.y : v.z; }
__device__ long at(dim3 v, int k) { return k == 0 ? v.x : k == 1 ? v.y : v.z; }
__device__ long team(int d, int local_) {
  long t = 0;
  if (local_) for (int k = 2; k >= 0; k--) t = t * at(gridDim, k) + at(blockIdx, k);
  for (int k = 2; k >= 0; k--)
    if (k != d) t = local_ ? t * at(blockDim, k) + at(threadIdx, k)
                           : t * at(gridDim, k) * at(blockDim, k) + at(blockIdx, k) * at(blockDim, k) + at(threadIdx, k);
  return t;
}
]],
  },
}

-- The kernels' source: for each, the loop written as the paper writes it
-- (GENINIT(n, g, 0), ...), counting each iteration and recording who did it.
local function source(lang)
  local L = LANG[lang]
  local parts = { L.prelude }
  for _, k in ipairs(KERNELS) do
    local args = k.one and "n" or ("n, %s, %d"):format(k.spread, k.dim)
    parts[#parts + 1] = table.concat({
      L.head:format(k.name) .. " {",
      ("  long row = team(%d, %d) * n;"):format(k.dim, k.spread == "l" and 1 or 0),
      ("  for (int i = GENINIT(%s); i < GENLIMIT(%s); i += GENSTEP(%s)) {"):format(args, args, args),
      "    " .. L.inc .. ";",
      "    who[row + i] = (int)" .. L.id[k.spread]:format(k.dim, k.dim, k.dim) .. ";",
      "  }",
      "}", "" }, "\n")
  end
  return table.concat(parts, "\n")
end

local function product(list, skip)
  local p = 1
  for k = 1, 3 do if k ~= skip then p = p * list[k] end end
  return p
end

-- The work-items that share a loop (size), the teams that each run it all,
-- and the trip counts to try: a multiple of size, one that is not, fewer
-- iterations than work-items.
local function shape(range, kernel)
  local d = kernel.dim + 1
  local size, teams
  if kernel.spread == "g" then
    size, teams = range.global[d], product(range.global, d)
  else
    local groups = {}
    for k = 1, 3 do groups[k] = range.global[k] // range.group[k] end
    size, teams = range.group[d], product(groups) * product(range.group, d)
  end
  return size, teams, { 2 * size, 2 * size + 1, size - 1 }
end

local CELLS = 1024 -- more than any case's teams * n
do
  for _, r in ipairs(RANGES) do
    for _, k in ipairs(KERNELS) do
      local _, teams, ns = shape(r, k)
      assert(teams * math.max(table.unpack(ns)) < CELLS)
    end
  end
end

-- What count and who hold after a run: every iteration of every team
-- once, by the work-item the distribution gives it (cyclic: i mod size;
-- in blocks: i div ceil(n / size)); nothing past them.
local function expected(dist, size, teams, n)
  local count, who = {}, {}
  local chunk = n > 0 and (n + size - 1) // size or 1
  for c = 0, CELLS - 1 do
    local i = c % math.max(n, 1)
    local done = c < teams * n
    count[c + 1] = done and 1 or 0
    who[c + 1] = not done and -1 or dist == "cyclic" and i % size or i // chunk
  end
  return count, who
end

-- A case's description, for failures.
local function case_name(dist, r, k, n)
  return ("%s, %s on %dx%dx%d work-items in groups of %dx%dx%d, n = %d"):format(dist,
    k.one and "GENINIT(n)" or ("GENINIT(n, %s, %d)"):format(k.spread, k.dim), r.global[1], r.global[2],
    r.global[3], r.group[1], r.group[2], r.group[3], n)
end

-- Every case: f(dist, range, kernel, n, size, teams).
local function each_case(f)
  for _, dist in ipairs { "blocked", "cyclic" } do
    for _, r in ipairs(RANGES) do
      for _, k in ipairs(KERNELS) do
        local size, teams, ns = shape(r, k)
        for _, n in ipairs(ns) do f(dist, r, k, n, size, teams) end
      end
    end
  end
end

describe("GENINIT/GENLIMIT/GENSTEP on this machine's device (scripts/gpu-check.sh: cuda:0, NVIDIA's OpenCL)", function()
  it("do every iteration exactly once, by the work-item the distribution names, in every form", function()
    local tuner = kt.tuner()
    local lang = tuner.device.backend == "cuda" and "cuda" or "opencl"
    local count, who, n = kt.array("int", CELLS), kt.array("int", CELLS), kt.int(0)
    local kernels, cases = {}, 0
    each_case(function(dist, r, k, trips, size, teams)
      local key = table.concat({ dist, k.name, table.concat(r.global, "x") }, " ")
      if not kernels[key] then
        local ann = kt.annotated{ source = source(lang), device = tuner.device, distribution = dist }
        kernels[key] = ann:kernel(tuner, { name = k.name, global = r.global, group = r.group,
                                            args = { count:inout(), who:inout(), n } })
      end
      count:fill(0)
      who:fill(-1)
      n:set(trips)
      local name = case_name(dist, r, k, trips)
      local result = tuner:run(kernels[key], {})
      assert.are.equal("ok", result.status, name .. ": " .. tostring(result.error))
      local want_count, want_who = expected(dist, size, teams, trips)
      assert.are.same(want_count, count:totable(), name)
      assert.are.same(want_who, who:totable(), name)
      cases = cases + 1
    end)
    assert.are.equal(2 * 3 * 7 * 3, cases)
    assert.are.equal(2, tuner:cache().misses) -- a program per distribution
  end)
end)

describe("GENINIT/GENLIMIT/GENSTEP for CUDA", function()
  local nvrtc = pcall(kt.cuda_compile, { source = "" })
  local gpu = { type = "gpu", backend = "cuda" }

  it("compile with NVRTC, every form in both distributions", function()
    if not nvrtc then return pending("needs NVRTC") end
    for _, dist in ipairs { "blocked", "cyclic" } do
      local ann = kt.annotated{ source = source("cuda"), device = gpu, distribution = dist }
      local out, log = kt.cuda_compile{ source = ann:source{}, arch = "sm_90", name = "count.cu" }
      assert.is_table(out, log)
      for _, k in ipairs(KERNELS) do assert.matches("%.entry " .. k.name .. "%(", out.ptx, 1, dist) end
    end
  end)

  -- The CUDA macros run by a C program on the host: threadIdx, blockIdx,
  -- blockDim and gridDim are its variables, and it runs every thread of
  -- every block in turn (the loops depend on no other thread).
  local HOST = [[
#include <stdio.h>
#include <string.h>
typedef struct { unsigned x, y, z; } uint3;
typedef uint3 dim3;
static uint3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;
static void atomicAdd(int *p, int v) { *p += v; }
#define __device__ static
#define __global__
%s
static int count[%d], who[%d];
int main(void) {
  char name[16];
  unsigned g[3], b[3];
  int n;
  while (scanf("%%15s %%u %%u %%u %%u %%u %%u %%d", name, &g[0], &g[1], &g[2], &b[0], &b[1], &b[2], &n) == 8) {
    memset(count, 0, sizeof count);
    memset(who, 0xff, sizeof who);
    blockDim = (dim3){ b[0], b[1], b[2] };
    gridDim = (dim3){ g[0] / b[0], g[1] / b[1], g[2] / b[2] };
    for (blockIdx.z = 0; blockIdx.z < gridDim.z; blockIdx.z++)
    for (blockIdx.y = 0; blockIdx.y < gridDim.y; blockIdx.y++)
    for (blockIdx.x = 0; blockIdx.x < gridDim.x; blockIdx.x++)
    for (threadIdx.z = 0; threadIdx.z < blockDim.z; threadIdx.z++)
    for (threadIdx.y = 0; threadIdx.y < blockDim.y; threadIdx.y++)
    for (threadIdx.x = 0; threadIdx.x < blockDim.x; threadIdx.x++) {
%s
    }
    for (int c = 0; c < %d; c++) printf("%%d %%d\n", count[c], who[c]);
  }
  return 0;
}
]]

  it("do every iteration exactly once, with CUDA's indices played on the host", function()
    local _, no_cc = shell.run("command -v cc")
    if no_cc ~= 0 then return pending("needs a C compiler") end
    local dir = os.tmpname()
    os.remove(dir)
    finally(function() os.execute("rm -rf " .. dir) end)
    shell.must("mkdir -p " .. dir)
    for _, dist in ipairs { "blocked", "cyclic" } do
      -- the C program: the program kt.annotated writes for CUDA (its macros,
      -- then the kernels), in C: no extern "C", and one at() (dim3 is uint3 here)
      local ann = kt.annotated{ source = source("cuda"), device = gpu, distribution = dist }
      local kernels = ann:source{}:gsub("__device__ long at%(dim3 v, int k%)[^\n]*\n", ""):gsub('extern "C" ', "")
      local calls = {}
      for _, k in ipairs(KERNELS) do
        calls[#calls + 1] = ('      if (!strcmp(name, "%s")) %s(count, who, n);'):format(k.name, k.name)
      end
      local c = HOST:format(kernels, CELLS, CELLS, table.concat(calls, "\n"), CELLS)
      local f = assert(io.open(dir .. "/host.c", "w"))
      f:write(c)
      f:close()
      shell.must(("cc -std=c11 -o %s/host %s/host.c"):format(dir, dir))
      local input, cases = {}, {}
      each_case(function(d, r, k, trips, size, teams)
        if d == dist then
          input[#input + 1] = ("%s %d %d %d %d %d %d %d"):format(k.name, r.global[1], r.global[2], r.global[3],
            r.group[1], r.group[2], r.group[3], trips)
          cases[#cases + 1] = { case_name(d, r, k, trips), size, teams, trips }
        end
      end)
      f = assert(io.open(dir .. "/input", "w"))
      f:write(table.concat(input, "\n"), "\n")
      f:close()
      local out = shell.must(("%s/host < %s/input"):format(dir, dir))
      local lines = {}
      for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
      assert.are.equal(#cases * CELLS, #lines)
      for i, case in ipairs(cases) do
        local count, who = {}, {}
        for c = 1, CELLS do
          local a, b = lines[(i - 1) * CELLS + c]:match("^(%-?%d+) (%-?%d+)$")
          count[c], who[c] = tonumber(a), tonumber(b)
        end
        local want_count, want_who = expected(dist, case[2], case[3], case[4])
        assert.are.same(want_count, count, case[1])
        assert.are.same(want_who, who, case[1])
      end
    end
  end)
end)

describe("a use of GENINIT, GENLIMIT or GENSTEP that no form reads", function()
  local function error_of(header)
    local ok, err = pcall(kt.annotated, { source = "void f(int n, int D) {\n  for (" .. header .. ") ;\n}\n",
                                          distribution = "cyclic" })
    assert.is_false(ok, header)
    return err
  end

  it("is refused where it is, before a compile", function()
    assert.are.equal("<string>:2:16: GENINIT takes 1 argument (n) or 3 (n, g or l, the dimension), got 2",
      error_of("int i = GENINIT(n, g); i < n; i++"))
    assert.are.equal("<string>:2:23: GENLIMIT takes 1 argument (n) or 3 (n, g or l, the dimension), got 4",
      error_of("int i = 0; i < GENLIMIT(n, g, 0, 1); i++"))
    assert.are.equal("<string>:2:27: GENINIT's second argument is g (the NDRange's work-items share the "
      .. "iterations) or l (each work-group's do), got G", error_of("int i = GENINIT(n, G, 0); i < n; i++"))
    assert.are.equal("<string>:2:27: GENINIT's second argument is g (the NDRange's work-items share the "
      .. "iterations) or l (each work-group's do), got (g)", error_of("int i = GENINIT(n, (g), 0); i < n; i++"))
    assert.are.equal("<string>:2:45: GENSTEP's dimension is 0, 1 or 2, got 3",
      error_of("int i = 0; i < n; i += GENSTEP(n, l, 3)"))
    assert.are.equal("<string>:2:24: GENINIT has an empty argument", error_of("int i = GENINIT(); i < n; i++"))
    assert.are.equal("<string>:2:27: GENINIT has an empty argument", error_of("int i = GENINIT(n, , 0); i < n; i++"))
  end)

  it("reads a dimension given as an expression, or as a number with a suffix", function()
    for _, header in ipairs { "int i = GENINIT(n, l, D); i < GENLIMIT(n, l, (D + 1) % 3); i += GENSTEP(n, g, 2u)",
                              "int i = GENINIT((n), g, 0x1); i < GENLIMIT(n, g, 1L); i++" } do
      assert.is_table(kt.annotated{ source = "void f(int n, int D) {\n  for (" .. header .. ") ;\n}\n",
                                    distribution = "blocked" })
    end
  end)
end)

describe("GENINIT/GENLIMIT/GENSTEP in the source's own macros", function()
  it("get their definitions too", function()
    local ann = kt.annotated{ source = "#define ROWS(n) for (int i = GENINIT(n, l, 1); i < GENLIMIT(n, l, 1); \\\n"
      .. "  i += GENSTEP(n, l, 1))\nvoid f(int n, int *c) { ROWS(n) c[i] = 1; }\n", distribution = "cyclic" }
    assert.matches("#define KT_GEN_INIT%(n, s, d%)", ann.prelude)
    assert.are.equal("", kt.annotated{ source = "#define GEN 1\nvoid f(void) {}\n" }.prelude:match("^(.-)/%*"))
  end)
end)
