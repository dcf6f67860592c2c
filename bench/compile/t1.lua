-- bench/compile/t1.lua: one tuning of a T1 file's kernel (BAT's GEMM-CAFF.json, convolution, ...)
-- as the first tuning of a fresh process, with the compile options given; prints the wall time
-- (the tuning's, and the process's from before the tuner was made), the device's busy time, the
-- compiles and where the wall went (bench/pipeline/gaps.lua).
--   ktlua bench/compile/t1.lua --file=T1.json [--device=cuda:0] [--count=200] [--repeats=7]
--     [--seed=1] [--workers=-1 (compile_workers; -1: the default)] [--threads=0 (build_threads)]
--     [--nocache (tuner option cache = false)] [--label=TEXT]
--     [--each (then the 10 longest compiles: index, status, ms; and each status's first error)]
--     [--check_inputs=auto|always|failures (tune option check_inputs)]
--     [--outlier=FACTOR|false (tune option compile_outlier; default: its default)]
--     [--noprune (k:prune{local_memory = false}: static shared memory compiled, as before issue 41)]
-- Then "outliers:": the longest single compile of a configuration evaluated, the wall over it,
-- those set aside and not evaluated (deferred), the compiles killed at the end (abandoned), and
-- when the last result came in against when the tuning ended.
-- The disk cache is the one KTLUA_CACHE names (bench/compile/targets.sh gives each run its own).
local t0 = require("ktlua").clock()
local kt = require "ktlua"
local opt = require("ktlua.cli").options(arg, { device = "cuda:0", count = 200, repeats = 7, seed = 1,
  workers = -1, threads = 0, nocache = false, label = "", file = "", each = false, check_inputs = "auto",
  outlier = "", noprune = false }, "bench/compile/t1.lua --file=T1.json")
local path = opt.file ~= "" and opt.file or error("bench/compile/t1.lua: no --file=T1.json given", 0)

local problem = kt.t1_read(path)
local tuner = kt.tuner(opt.device, { build_threads = opt.threads, cache = not opt.nocache,
                                     compile_workers = opt.workers >= 0 and opt.workers or nil })
local made = kt.clock()
local k, options = kt.t1(problem, { tuner = tuner })
options.stop = { count = opt.count }
options.search, options.seed, options.repeats, options.progress = "random", opt.seed, opt.repeats, false
options.check_inputs = opt.check_inputs
if opt.outlier == "false" then options.compile_outlier = false
elseif opt.outlier ~= "" then options.compile_outlier = tonumber(opt.outlier) end
if opt.noprune then k:prune{ local_memory = false } end
local r = tuner:tune(k, options)
local done = kt.clock()
local sm = r:summary()
local compile_sum, compiled_n = 0, 0
for i = 1, #r do
  if r[i].compile_ms and r[i].compile_ms > 0 then
    compile_sum, compiled_n = compile_sum + r[i].compile_ms, compiled_n + 1
  end
end
local statuses = {}
for st, n in pairs(sm.statuses) do if n > 0 then statuses[#statuses + 1] = n .. " " .. st end end
table.sort(statuses)
local wall, busy = sm.wall_ms / 1e3, sm.device_ms / 1e3
print(("%s %s: %d configs (%s)  tuning wall %.2f s  process wall %.2f s (tuner made in %.2f s)  device busy %.3f s  wall/busy %.2f  wall-busy %.2f s"):format(
  opt.label, path:match("[^/]*$"), sm.evaluated, table.concat(statuses, ", "), wall, done - t0, made - t0,
  busy, wall / busy, wall - busy))
print(("          compiled %d, from the disk cache %d, compile workers %d, threads %d; compile time per configuration: mean %.0f ms over %d (sum %.1f s)"):format(
  sm.compiles, sm.cached, sm.compile_workers, tuner:cache().threads, compiled_n > 0 and compile_sum / compiled_n or 0,
  compiled_n, compile_sum / 1e3))
print(("          wall = setup %.2f + build waits %.2f + device waits %.2f + data %.2f + validation %.2f + searcher %.3f + framework %.3f s"):format(
  sm.setup_ms / 1e3, sm.build_ms / 1e3, sm.wait_ms / 1e3, sm.data_ms / 1e3, sm.validation_ms / 1e3,
  sm.searcher_ms / 1e3, sm.framework_ms / 1e3))
print(dofile("bench/pipeline/gaps.lua")(sm, "          "))
if r[1] then -- the first configuration: its wait for its program, and when it was over
  print(("          first configuration (index %d): build wait %.1f ms (its program's compile or load %.1f ms), over %.1f ms after the tuning began (set-up %.1f ms); input checks %d, %s on the device"):format(
    r[1].index, r[1].build_ms or 0, r[1].compile_ms or 0, r[1].elapsed_ms or 0, sm.setup_ms, sm.input_checks,
    tostring(sm.input_checks_device)))
end
if r[1] then -- the rest at the start: before the search loop (results' elapsed_ms count from it),
  -- and the first configuration beyond its set-up and timed runs
  local function timed(x) local ms = 0 for _, v in ipairs(x.samples_ms or {}) do ms = ms + v end return ms end
  local last = 0
  for i = 1, #r do last = math.max(last, r[i].elapsed_ms or 0) end
  print(("          the start: %.1f ms before the search began (the space, the task's checks); the first configuration over %.1f ms after it and the set-up, %.1f ms of that its timed runs"):format(
    sm.wall_ms - last, (r[1].elapsed_ms or 0) - sm.setup_ms, timed(r[1])))
end
do -- issue 41: the wall against the longest compile, and what the end did not wait for
  local longest, at, last = 0, -1, 0
  for i = 1, #r do
    if (r[i].compile_ms or 0) > longest then longest, at = r[i].compile_ms, r[i].index end
    if r[i].status ~= "compile_deferred" then last = math.max(last, r[i].elapsed_ms or 0) end
  end
  print(("          outliers: longest compile %.2f s (index %d), wall / longest %.2f; deferred %d, abandoned %d; pruned local_memory %d; the last result at %.2f s of the search, the tuning over at %.2f s"):format(
    longest / 1e3, at, longest > 0 and wall / (longest / 1e3) or 0, sm.deferred, sm.abandoned,
    sm.pruned.local_memory, last / 1e3, wall))
end
if sm.device_log and sm.device_log ~= "" then print("          device log: " .. sm.device_log:sub(1, 300)) end
local best = r:best()
if best then print(("          best %.4f ms (index %d)"):format(best.time_ms, best.index)) end
if opt.each then
  local list, said = {}, {}
  for i = 1, #r do
    list[#list + 1] = r[i]
    local st = r[i].status
    if st ~= "ok" and not said[st] then
      said[st] = true
      print(("          first %s: %s"):format(st, tostring(r[i].error or r[i].build_log):sub(1, 200):gsub("\n", " | ")))
    end
  end
  table.sort(list, function(a, b) return (a.compile_ms or 0) > (b.compile_ms or 0) end)
  for i = 1, math.min(10, #list) do
    print(("          compile %7.0f ms  index %d  %s"):format(list[i].compile_ms or 0, list[i].index, list[i].status))
  end
end
io.stdout:flush()
tuner:close()
