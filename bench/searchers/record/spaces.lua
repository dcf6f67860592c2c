-- bench/searchers/record/spaces.lua: records the complete space of one kernel
-- (every configuration, failed ones kept) as a Kernel Tuner cache file, for
-- the searcher benchmarks (bench/searchers/spaces/README.md).
--   ktlua spaces.lua --kernel=mm|dedisp|nbody|triad|pnpoly|stencil|transpose [--device=ID] [--repeats=N] [--bat=DIR] [--n=N] [--workers=N] OUTPUT.json
-- --n: mm's matrix size (2048), stencil's grid and transpose's matrix (4096); --workers: compiler processes (the tuner's compile_workers).
-- mm: record/mm.cu, a tiled matrix product (CUDA or OpenCL, by the device); stencil and
-- transpose: record/stencil.cu and record/transpose.cu, the same way.
-- dedisp, nbody, triad, pnpoly: BAT's kernels (--bat: BAT's benchmarks folder), at
-- sizes that keep a configuration's run near a millisecond.
local kt = require "ktlua"
local usage = "usage: spaces.lua --kernel=mm|dedisp|nbody|triad|pnpoly|stencil|transpose [--device=ID] [--repeats=N] [--bat=DIR] [--n=N] [--workers=N] OUTPUT.json"
local here = arg[0]:match("^(.*)/[^/]*$") or "."
local opt, out = {kernel = "", device = os.getenv("KTLUA_DEVICE") or "cuda:0", repeats = 3, n = false, workers = false, bat = here .. "/../bat/benchmarks"}, nil
for _, a in ipairs(arg) do
  local k, v = a:match("^%-%-(%w+)=(.+)$")
  if k and opt[k] ~= nil then opt[k] = tonumber(v) or v
  elseif not k and not out then out = a
  else error("unknown argument " .. a .. " (" .. usage .. ")") end
end
assert(out, usage)

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function threads(lo, hi) return function(x, y) return x * y >= lo and x * y <= hi end end
local portable = read(here .. "/portable.h") -- the prelude of mm.cu, stencil.cu and transpose.cu
local spaces = {}

function spaces.mm(tuner)
  local n = opt.n or 2048
  local a, b, c = kt.array("float", n * n):random(1), kt.array("float", n * n):random(2), kt.array("float", n * n)
  local k = tuner:kernel{file = here .. "/mm.cu", prelude = portable, name = "mm", global = {n, n}, group = {1, 1},
    args = {c:output(), a:input(), b:input(), kt.int(n)}}
  k:param("block_size_x", {8, 16, 32, 64}, {group_x = "mul"})
  k:param("block_size_y", {1, 2, 4, 8, 16, 32}, {group_y = "mul"})
  k:param("tile_size_x", {1, 2, 4, 8}, {global_x = "div"})
  k:param("tile_size_y", {1, 2, 4, 8}, {global_y = "div"})
  k:param("use_local", {0, 1})
  k:param("tile_k", {8, 16, 32})
  k:param("padding", {0, 1})
  k:constraint({"block_size_x", "block_size_y"}, threads(32, 1024))
  k:constraint({"use_local", "tile_k", "padding"}, function(l, t, p) return l == 1 or (t == 8 and p == 0) end)
  return k, {n, n}
end

-- BAT's dedispersion on 8192 samples, 512 DMs, 256 channels of the same band.
function spaces.dedisp(tuner)
  local samples, dms, channels = 8192, 512, 256
  local min_freq, bw, dt = 1425.0, 0.1953125 * 1536 / channels, 0.00004096
  local max_freq = min_freq + (channels - 1) * bw
  local shifts = kt.array("float", channels)
  for ch = 0, channels - 1 do
    local f = min_freq + ch * bw
    shifts[ch] = ch == channels - 1 and 0 or 4148.808 * (1 / f ^ 2 - 1 / max_freq ^ 2) / dt
  end
  local max_shift = math.ceil((dms - 1) * 0.02 * shifts[0]) + 2
  local src = read(opt.bat .. "/dedisp/dedispersion.cu"):gsub('#include "dedispersion.h"', "")
    :gsub("#pragma unroll loop_unroll_factor_channel",
      "\n#if loop_unroll_factor_channel > 0\n#pragma unroll loop_unroll_factor_channel\n#endif\n")
  local prelude = ("#define nr_dms %d\n#define nr_samples %d\n#define nr_channels %d\n#define max_shift %d\n" ..
    "#define nr_samples_per_channel (nr_samples+max_shift)\n#define dm_first 0.0f\n#define dm_step 0.02f\n")
    :format(dms, samples, channels, max_shift)
  local input = kt.array("uchar", (samples + max_shift) * channels):random(3, 0, 255)
  local output = kt.array("float", dms * samples)
  local k = tuner:kernel{source = src, prelude = prelude, name = "dedispersion_kernel", global = {samples, dms},
    group = {1, 1}, round_global = true, args = {input:input(), output:output(), shifts:input()}}
  k:param("block_size_x", {1, 2, 4, 8, 16, 32, 64, 128}, {group_x = "mul"})
  k:param("block_size_y", {4, 8, 16, 32}, {group_y = "mul"})
  k:param("block_size_z", {1})
  k:param("tile_size_x", {1, 2, 4, 8}, {global_x = "div"})
  k:param("tile_size_y", {1, 2, 4, 8}, {global_y = "div"})
  k:param("tile_stride_x", {0, 1})
  k:param("tile_stride_y", {0, 1})
  k:param("loop_unroll_factor_channel", {0, 4})
  k:param("blocks_per_sm", {0, 1, 4})
  k:constraint({"block_size_x", "block_size_y"}, threads(32, 1024))
  k:constraint({"tile_size_x", "tile_stride_x"}, function(t, s) return t > 1 or s == 0 end)
  k:constraint({"tile_size_y", "tile_stride_y"}, function(t, s) return t > 1 or s == 0 end)
  return k, {samples, dms}
end

-- BAT's nbody (its CAFF space) on 32768 bodies.
function spaces.nbody(tuner)
  local n = 32768
  local function vec(len, seed) return kt.array("float", len):random(seed, 0, 20) end
  local k = tuner:kernel{file = opt.bat .. "/nbody/nbody.cu", name = "nbody_kernel", options = "-use_fast_math",
    global = {n}, group = {1},
    args = {kt.float(0.001), vec(4 * n, 1):input(), vec(n, 2):input(), vec(n, 3):input(), vec(n, 4):input(),
      vec(n, 5):input(), kt.array("float", 4 * n):output(), vec(4 * n, 6):input(), vec(n, 7):input(),
      vec(n, 8):input(), vec(n, 9):input(), kt.array("float", 4 * n):output(), kt.float(0.5), kt.float(0.01), kt.int(n)}}
  k:param("BLOCK_SIZE", {64, 128, 256, 512}, {group_x = "mul"})
  k:param("OUTER_UNROLL_FACTOR", {1, 2, 4, 8}, {global_x = "div"})
  k:param("INNER_UNROLL_FACTOR1", {0, 1, 2, 4, 8, 16, 32})
  k:param("INNER_UNROLL_FACTOR2", {0, 1, 2, 4, 8, 16, 32})
  k:param("USE_SOA", {0, 1})
  k:param("LOCAL_MEM", {0, 1})
  k:param("USE_CONSTANT_MEMORY", {0})
  k:param("VECTOR_TYPE", {1})
  k:constraint({"INNER_UNROLL_FACTOR1", "INNER_UNROLL_FACTOR2"}, function(a, b) return a * b <= 256 end)
  k:constraint({"INNER_UNROLL_FACTOR2", "OUTER_UNROLL_FACTOR"}, function(b, o) return b <= o end)
  return k, {n}
end

-- BAT's TRIAD (its CAFF space) on 16 Mi floats (its PRECISION test is misspelt: always float): memory bound.
function spaces.triad(tuner)
  local n = 16 * 1024 * 1024
  local k = tuner:kernel{file = opt.bat .. "/TRIAD/triad_kernel.cu", name = "triad", global = {n}, group = {1},
    round_global = true, args = {kt.array("float", n):random(1):input(), kt.array("float", n):random(2):input(),
      kt.array("float", n):output(), kt.float(1.75), kt.int(n)}}
  local bs, wpt = {}, {}
  for v = 32, 1024, 32 do bs[#bs + 1] = v end
  for v = 1, 16 do wpt[#wpt + 1] = v end
  k:param("BLOCK_SIZE", bs, {group_x = "mul"})
  k:param("LOOP_UNROLL_TRIAD", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
  k:param("WORK_PER_THREAD", wpt, {global_x = "div"})
  k:constraint({"LOOP_UNROLL_TRIAD", "WORK_PER_THREAD"}, function(u, w) return u <= w end)
  return k, {n}
end

-- BAT's pnpoly (its CAFF space, the benchmark_hub pnpoly's) on 4 Mi points, 600 vertices.
function spaces.pnpoly(tuner)
  local n = 4 * 1024 * 1024
  local k = tuner:kernel{file = opt.bat .. "/pnpoly/pnpoly.cu", name = "cn_pnpoly", global = {n}, group = {1},
    round_global = true, options = "-std=c++11",
    args = {kt.array("int", n):output(), kt.array("float", 2 * n):random(1):input(), kt.int(n),
      kt.symbol("d_vertices", kt.array("float", 1200):random(2))}}
  local bs = {}
  for v = 32, 992, 32 do bs[#bs + 1] = v end
  k:param("block_size_x", bs, {group_x = "mul"})
  k:param("tile_size", {1, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20}, {global_x = "div"})
  k:param("between_method", {0, 1, 2, 3})
  k:param("use_method", {0, 1, 2})
  return k, {n}
end

-- A kernel of record/ from an n x n input to an n x n output (stencil.cu, transpose.cu): its
-- blocks and tiles (tile_size_x and tile_size_y in {1, 2, 4, 8}), 32 to 1024 threads a block.
local function tiled(tuner, name, blocks_x, blocks_y)
  local n = opt.n or 4096
  local k = tuner:kernel{file = here .. "/" .. name .. ".cu", prelude = portable, name = name,
    global = {n, n}, group = {1, 1},
    args = {kt.array("float", n * n):output(), kt.array("float", n * n):random(1):input(), kt.int(n)}}
  k:param("block_size_x", blocks_x, {group_x = "mul"})
  k:param("block_size_y", blocks_y, {group_y = "mul"})
  k:param("tile_size_x", {1, 2, 4, 8}, {global_x = "div"})
  k:param("tile_size_y", {1, 2, 4, 8}, {global_y = "div"})
  k:constraint({"block_size_x", "block_size_y"}, threads(32, 1024))
  return k, {n, n}
end

local function shared(k) -- use_shared, and padding only with it
  k:param("use_shared", {0, 1})
  k:param("padding", {0, 1})
  k:constraint({"use_shared", "padding"}, function(u, p) return u == 1 or p == 0 end)
end

-- record/stencil.cu: one five-point Jacobi step on a 4096 x 4096 grid.
function spaces.stencil(tuner)
  local k, size = tiled(tuner, "stencil", {16, 32, 64, 128}, {1, 2, 4, 8, 16})
  k:param("tile_contig_y", {0, 1})
  shared(k)
  return k, size
end

-- record/transpose.cu: a transpose of a 4096 x 4096 matrix.
function spaces.transpose(tuner)
  local k, size = tiled(tuner, "transpose", {8, 16, 32, 64}, {1, 2, 4, 8, 16, 32})
  shared(k)
  return k, size
end

local make = spaces[opt.kernel] or error("--kernel: unknown kernel '" .. opt.kernel .. "' (" .. usage .. ")")
local tuner = kt.tuner(opt.device, {compile_workers = opt.workers or nil})
local k, size = make(tuner)
k:prune{divisible = false}
print(("recording %s on %s: %d configurations"):format(opt.kernel, tuner.device.name, #k:space()))
local t0 = os.time()
local results = tuner:tune(k, {repeats = opt.repeats, fail_fast = 8})
local ok, first = 0, nil
for _, r in ipairs(results) do
  if r.status == "ok" then ok = ok + 1 elseif not first then first = r end
end
print(("%d configurations, %d ok, %d failed, in %d s"):format(#results, ok, #results - ok, os.time() - t0))
if first then print("first failure: " .. tostring(first.status) .. ": " .. tostring(first.error):sub(1, 300)) end
results:write(out, "kernel-tuner-cache", {problem_size = size})
