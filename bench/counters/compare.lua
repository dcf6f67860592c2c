-- bench/counters/compare.lua: KTT's profile-based searcher (search = "profile", steered by the
-- hardware counters of kt.profile_counters) against bestfirst, at equal numbers of
-- evaluations, on bench/pipeline's GEMM and the T1 convolution of the datasets. Each searcher
-- runs with seeds from, from + 1, ... (`seeds` of them); bestfirst collects no counters, so the
-- wall times compare a search with its profiling passes against one without. Prints a Markdown
-- table for bench/RESULTS.md: per problem and searcher, the mean (and worst) best time found,
-- the mean wall time, the part of it spent profiling, the programs compiled (not found in the
-- program cache) and their compile time summed over compiler processes, and the passes each
-- launch took. The rows of one seed follow one another as they finish (--rows=seed).
--   ktlua bench/counters/compare.lua [--device=cuda:0] [--count=30] [--seeds=3] [--from=1]
--     [--size=2048] [--datasets=../shared/datasets] [--only=gemm|convolution]
--     [--searchers=bestfirst,profile] [--rows=mean|seed]
local kt = require "ktlua"
local opt = require("ktlua.cli").options(arg, { device = "cuda:0", count = 30, seeds = 3, from = 1,
  size = 2048, datasets = os.getenv("KTLUA_DATASETS") or "../shared/datasets", only = "",
  searchers = "bestfirst,profile", rows = "mean" }, "bench/counters/compare.lua")

local tuner = kt.tuner(opt.device)

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
           passes = sm.profile_passes, n = sm.evaluated, compiles = sm.compiles,
           compile = sm.compile_ms / 1e3 }
end

local function row(name, search, runs, seeds)
  local best, worst, wall, prof, n, compiles, compile = 0, -math.huge, 0, 0, 0, 0, 0
  for _, x in ipairs(runs) do
    best, wall, prof, n = best + x.best, wall + x.wall, prof + x.profile, n + x.n
    compiles, compile = compiles + x.compiles, compile + x.compile
    worst = math.max(worst, x.best)
  end
  local m = #runs
  local fmt = "| %s | %s | %s | %.1f | %.4f | %.4f | %.2f | %.2f | %.1f | %.1f | %s |"
  print(fmt:format(name, search, seeds, n / m, best / m, worst, wall / m, prof / m, compiles / m,
    compile / m, runs[1].passes > 0 and runs[1].passes or "-"))
  io.stdout:flush()
end

local searchers = {}
for s in opt.searchers:gmatch("[^,]+") do searchers[#searchers + 1] = s end
local last = opt.from + opt.seeds - 1
print(("%s (%s): %d evaluations, seeds %d to %d\n"):format(tuner.device.name, tuner.device.id,
  opt.count, opt.from, last))
print("| problem | searcher | seeds | evaluations | best ms (mean) | best ms (worst) "
  .. "| wall s (mean) | profiling s (mean) | compiled (mean) | compile s (mean) | passes |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for _, make in ipairs({ gemm, convolution }) do
  if opt.only == "" or make == (opt.only == "gemm" and gemm or convolution) then
    local name, k, base = make()
    for _, search in ipairs(searchers) do
      local runs = {}
      for seed = opt.from, last do
        runs[#runs + 1] = run(k, base, search, seed)
        if opt.rows == "seed" then row(name, search, { runs[#runs] }, seed) end
      end
      if opt.rows ~= "seed" then row(name, search, runs, ("%d-%d"):format(opt.from, last)) end
    end
  end
end
