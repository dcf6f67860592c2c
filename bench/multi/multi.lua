-- bench/multi: one tuning over several devices against one device. Tunes
-- the overhead GEMM (bench/overhead/gemm_task.lua: every configuration, or
-- the first --limit of a seeded random search) and a sample of --n random
-- configurations of the GEMM at --size (bench/pipeline/gemm.lua's) on the
-- first device alone, then on every device given, and prints for each the
-- configurations per second, the ratio, the compiles, the devices used and
-- the best found each way.
--   ktlua bench/multi/multi.lua [--devices=ID,ID,...|all|gpu:all] [--only=overhead|sample]
--     [--size=S (the sample's GEMM, M = N = K)] [--n=N (the sample's configurations)]
--     [--repeats=R (the sample's timed runs)] [--overhead_size=S] [--overhead_repeats=R]
--     [--limit=L (the overhead GEMM's configurations; 0: all 1,290)] [--threads=T (compile
--     threads per device; 0: one per core)] [--order=one|all (which runs first)]
-- On two GPUs: ktlua bench/multi/multi.lua --devices=cuda:0,cuda:1
-- On PoCL: POCL_DEVICES="pthread pthread" ktlua bench/multi/multi.lua --devices=all --size=128
--   --n=40 --repeats=3 --overhead_size=64 --overhead_repeats=3 --limit=60
local kt = require "ktlua"
local opt = require("ktlua.cli").options(arg, { devices = "gpu:all", only = "", size = 2048, n = 200,
  repeats = 7, overhead_size = 1024, overhead_repeats = 10, limit = 0, threads = 0, order = "one" },
  "bench/multi/multi.lua")

local function device_set()
  if opt.devices == "all" or opt.devices == "gpu:all" then return opt.devices end
  local list = {}
  for id in opt.devices:gmatch("[^,]+") do list[#list + 1] = id end
  return list
end

-- The tuner of the whole set, and one on its first device only (each made
-- when its tuning starts, and closed after, so that no two hold a device).
local function tuner_of(all)
  local set = kt.tuner(device_set(), { build_threads = opt.threads })
  if all then return set end
  local first = set.devices[1]
  set:close()
  return kt.tuner(first, { build_threads = opt.threads })
end

local function tune(name, all, make, options)
  local tuner = tuner_of(all)
  local cuda = tuner.device.backend == "cuda"
  local k = make(tuner, "bench/overhead/gemm" .. (cuda and ".cu" or ".cl"))
  local r = tuner:tune(k, options)
  local s, cache = r:summary(), tuner:cache()
  local used, ids = {}, {}
  for i = 1, #r do
    local d = r[i].device or tuner.devices[1]
    if not used[d] then ids[#ids + 1] = d end
    used[d] = (used[d] or 0) + 1
  end
  local per = {}
  for _, d in ipairs(ids) do per[#per + 1] = ("%s %d"):format(d, used[d]) end
  local best = r:best()
  local rate = s.evaluated / (s.wall_ms / 1e3)
  print(("%-8s %-4s %d device(s): %4d configs (%d ok)  wall %7.2f s  %7.2f configs/s  compiles %d (%d threads/device)  [%s]"):format(
    name, all and "all" or "one", #tuner.devices, s.evaluated, s.statuses.ok, s.wall_ms / 1e3, rate,
    cache.misses, cache.threads, table.concat(per, ", ")))
  print(("              best %s  device busy %.3f s  setup %.2f s  build waits %.2f s  device waits %.2f s"):format(
    best and ("%.4f ms at index %d"):format(best.time_ms, best.index) or "none", s.device_ms / 1e3,
    s.setup_ms / 1e3, s.build_ms / 1e3, s.wait_ms / 1e3))
  io.stdout:flush()
  tuner:close()
  return rate, best and best.index
end

local function compare(name, make, options)
  local order = opt.order == "all" and { true, false } or { false, true }
  local rates, bests = {}, {}
  for _, all in ipairs(order) do rates[all], bests[all] = tune(name, all, make, options) end
  print(("%-8s all / one: %.2f times the configurations per second; best %s (one: index %s, all: index %s)"):format(
    name, rates[true] / rates[false], bests[true] == bests[false] and "the same" or "differs",
    tostring(bests[false]), tostring(bests[true])))
  io.stdout:flush()
end

local function gemm(size)
  local A = kt.array("float", size * size):random(3)
  local B = kt.array("float", size * size):random(4)
  local C = kt.array("float", size * size)
  return function(tuner, file) return dofile("bench/overhead/gemm_task.lua")(tuner, file, size, A, B, C) end
end

print(("ktlua several-device benchmark: devices %s, %s compile threads per device"):format(opt.devices,
  opt.threads > 0 and tostring(opt.threads) or "one per core"))
if opt.only ~= "sample" then
  local o = { repeats = opt.overhead_repeats, progress = false }
  if opt.limit > 0 then o.search, o.stop = { "random", seed = 1 }, { count = opt.limit } end
  compare("overhead", gemm(opt.overhead_size), o)
end
if opt.only ~= "overhead" then
  compare("sample", gemm(opt.size), { search = { "random", seed = 1 }, stop = { count = opt.n },
                                      repeats = opt.repeats, progress = false })
end
