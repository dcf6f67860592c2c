-- bench/compile: compile throughput of ktlua's compile paths on one device. N distinct programs
-- (one GEMM configuration of bench/overhead/gemm.cl|cu, made distinct by a SALT #define) are
-- tuned on a tiny matrix, so that the wall time is the compiles': with T compile threads in the
-- device process (compile_workers = 0: the compilers share one process), and with T compiler
-- processes (compile_workers = T, build_threads = T). Prints compiles/s for T = 1..K, each
-- measured once, with the disk cache off (--cache: on, as tunings have it by default: then
-- every compile also takes the program's binary, which PoCL makes by generating code).
--   ktlua bench/compile/compile.lua [--device=ID] [--n=N (programs)] [--k=K (most threads)]
--   [--threads=1,2,4 (the T to measure; default 1..K, doubling)] [--cache]
--   [--processes_only (no compile threads in the device process)]
-- Each rate is N over the tuning's wall less its set-up (the device process's start, CUDA's
-- initialisation: what comes before the first configuration), then over the whole wall.
-- NVRTC: --device=cuda:0; NVIDIA's OpenCL or PoCL: their opencl:N. bench/compile/run.sh runs it
-- and the GEMM-200 tuning.
local kt = require "ktlua"
local opt = require("ktlua.cli").options(arg, { device = "default", n = 64, k = 0, threads = "",
  cache = false, processes_only = false },
  "bench/compile/compile.lua")

local cores = tonumber(io.popen("nproc"):read("l")) or 1
local k = opt.k > 0 and opt.k or cores
local counts = {}
if opt.threads ~= "" then
  for t in opt.threads:gmatch("%d+") do counts[#counts + 1] = tonumber(t) end
else
  local t = 1
  while t < k do counts[#counts + 1] = t; t = t * 2 end
  counts[#counts + 1] = k
end

local function measure(threads, workers)
  local tuner = kt.tuner(opt.device, { build_threads = threads, compile_workers = workers,
                                       cache = opt.cache })
  local cuda = tuner.device.backend == "cuda"
  local s = 64
  local A = kt.array("float", s * s):random(3)
  local B = kt.array("float", s * s):random(4)
  local C = kt.array("float", s * s)
  local file = "bench/overhead/gemm" .. (cuda and ".cu" or ".cl")
  local args = { kt.int(s), kt.int(s), kt.int(s), A:input(), B:input(), C:output() }
  local g = tuner:kernel{ file = file, name = "gemm", global = { s, s }, group = { 1, 1 }, args = args }
  g:param("TS_M", { 32 }, { group_y = "mul" })
  g:param("TS_N", { 32 }, { group_x = "mul" })
  g:param("WPT_M", { 4 }, { group_y = "div", global_y = "div" })
  g:param("WPT_N", { 4 }, { group_x = "div", global_x = "div" })
  g:param("TS_K", { 16 })
  g:param("PAD", { 1 })
  -- New sources on every measurement: drivers keep disk caches of their own (PoCL's, NVIDIA's).
  local base = math.floor((kt.clock() % 1e4) * 1e5) * 1000
  local salts = {}
  for i = 1, opt.n do salts[i] = base + i end
  g:param("SALT", salts)
  local r = tuner:tune(g, { search = "exhaustive", repeats = 1, progress = false })
  local sm = r:summary()
  tuner:close()
  local ok = sm.statuses.ok or 0
  return (sm.wall_ms - sm.setup_ms) / 1e3, ok, sm.compile_workers, sm.wall_ms / 1e3
end

print(("compile throughput, %d distinct GEMM programs, %s, %d cores"):format(opt.n, opt.device, cores))
print("threads  one process (compiles/s; whole wall)  processes (compiles/s; whole wall)  ok  workers")
for _, t in ipairs(counts) do
  local wall0, ok0, whole0 = 0, 0, 0
  if not opt.processes_only then wall0, ok0, _, whole0 = measure(t, 0) end
  local wall1, ok1, ran, whole1 = measure(t, t)
  print(("%7d  %14.1f; %6.1f  %14.1f; %6.1f  %d/%d  %d"):format(t, wall0 > 0 and opt.n / wall0 or 0,
    whole0 > 0 and opt.n / whole0 or 0, opt.n / wall1, opt.n / whole1, ok0, ok1, ran))
  io.stdout:flush()
end
