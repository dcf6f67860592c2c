-- bench/counters/compare.lua: KTT's profile-based searcher (search = "profile", steered by the
-- hardware counters of kt.profile_counters) against bestfirst, at equal numbers of
-- evaluations, on bench/pipeline's GEMM and the T1 convolution of the datasets. Each searcher
-- runs with `seeds` seeds; bestfirst collects no counters, so the wall times compare a search
-- with its profiling passes against one without. Prints a Markdown table for bench/RESULTS.md:
-- per problem and searcher, the mean (and worst) best time found and the mean wall time, the
-- part of it spent profiling, and the passes each launch took.
--   ktlua bench/counters/compare.lua [--device=cuda:0] [--count=30] [--seeds=3] [--size=2048]
--     [--datasets=../shared/datasets] [--only=gemm|convolution] [--warmup=0|1]
local kt = require "ktlua"
local opt = require("ktlua.cli").options(arg, { device = "cuda:0", count = 30, seeds = 3, size = 2048,
  datasets = os.getenv("KTLUA_DATASETS") or "../shared/datasets", only = "", warmup = 0 },
  "bench/counters/compare.lua")

local tuner = kt.tuner(opt.device)

-- --warmup=1: a first small tuning with the counters, before any of the problems' kernels is
-- loaded (the order in which every counter was read before collections held the modules alone).
if opt.warmup ~= 0 then
  local n = 1 << 20
  local a, b = kt.array("float", n):random(1), kt.array("float", n)
  local copy = tuner:kernel{ name = "copy", global = n, group = 1, args = { a:input(), b:output() },
    source = 'extern "C" __global__ void copy(const float *a, float *b) {'
      .. ' int i = blockIdx.x * blockDim.x + threadIdx.x; b[i] = a[i]; }' }
  copy:param("WG", { 128, 256 }, { group_x = "mul" })
  tuner:tune(copy, { profile = kt.profile_counters, progress = false })
end

local function gemm()
  local s = opt.size
  local A, B = kt.array("float", s * s):random(3), kt.array("float", s * s):random(4)
  local C = kt.array("float", s * s)
  local k = dofile("bench/overhead/gemm_task.lua")(tuner, "bench/overhead/gemm.cu", s, A, B, C)
  return ("GEMM %d^3"):format(s), k, {}
end

local function convolution()
  local problem = kt.t1_read(opt.datasets .. "/formats/convolution_T1.json")
  local k, options = kt.t1(problem, { tuner = tuner })
  options.stop, options.search, options.output = nil, nil, nil
  return "T1 convolution", k, options
end

local function run(k, base, search, seed)
  local o = {}
  for key, v in pairs(base) do o[key] = v end
  o.search, o.stop, o.progress = { search, seed = seed }, { count = opt.count }, false
  local r = tuner:tune(k, o)
  local sm, best = r:summary(), r:best()
  return { best = best and best.time_ms or 0 / 0, wall = sm.wall_ms / 1e3, profile = sm.profile_ms / 1e3,
           passes = sm.profile_passes, n = sm.evaluated }
end

local function row(name, search, runs)
  local best, worst, wall, prof, n = 0, -math.huge, 0, 0, 0
  for _, x in ipairs(runs) do
    best, wall, prof, n = best + x.best, wall + x.wall, prof + x.profile, n + x.n
    worst = math.max(worst, x.best)
  end
  local m = #runs
  print(("| %s | %s | %.1f | %.4f | %.4f | %.2f | %.2f | %s |"):format(name, search, n / m, best / m, worst,
    wall / m, prof / m, runs[1].passes > 0 and runs[1].passes or "-"))
  io.stdout:flush()
end

print(("%s (%s): %d evaluations, seeds 1 to %d\n"):format(tuner.device.name, tuner.device.id, opt.count,
  opt.seeds))
print("| problem | searcher | evaluations | best ms (mean) | best ms (worst) | wall s (mean) | profiling s (mean) | passes |")
print("|---|---|---|---|---|---|---|---|")
for _, make in ipairs({ gemm, convolution }) do
  local name, k, base = make()
  if opt.only == "" or name:lower():find(opt.only, 1, true) then
    for _, search in ipairs({ "bestfirst", "profile" }) do
      local runs = {}
      for seed = 1, opt.seeds do runs[#runs + 1] = run(k, base, search, seed) end
      row(name, search, runs)
    end
  end
end
