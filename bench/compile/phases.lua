-- bench/compile/phases.lua: where a CUDA T1 kernel's compile goes, NVRTC's front end (CUDA C++ to
-- PTX, arch compute_XX) against the whole (PTX and ptxas to a cubin, arch sm_XX), one compile at a
-- time in this process, for configurations drawn at random from the file's space; and the
-- option NVRTC offers to spread one compile over threads (--split-compile), to see what it gives.
--   ktlua bench/compile/phases.lua --file=T1.json [--count=8] [--seed=1] [--arch=90] [--split=0]
-- No GPU needed (kt.cuda_compile), only NVRTC.
local kt = require "ktlua"
local opt = require("ktlua.cli").options(arg, { file = "", count = 8, seed = 1, arch = 90, split = 0 },
  "bench/compile/phases.lua --file=T1.json")
local problem = kt.t1_read(opt.file ~= "" and opt.file or error("bench/compile/phases.lua: no --file given", 0))
local source, kernel_name = problem.source, problem.kernel_name
local tuner = kt.tuner(nil, { isolate = false }) -- the space only: its kernel is never built here
local k = kt.t1(problem, { tuner = tuner })
local space = k:space()
local n = space:count()
local rng = kt.rng and kt.rng(opt.seed) or nil
math.randomseed(opt.seed)
local base = problem.options or ""
print(("%s: %d configurations; %d drawn (seed %d); arch %d; split-compile %d"):format(
  opt.file:match("[^/]*$"), n, opt.count, opt.seed, opt.arch, opt.split))
local sum_ptx, sum_all = 0, 0
for _ = 1, opt.count do
  local at = (rng and rng:integer(0, n - 1)) or math.random(0, n - 1)
  local cfg = space:config(at)
  local defs = {}
  for name, v in pairs(cfg) do defs[#defs + 1] = ("-D%s=%s"):format(name, tostring(v)) end
  table.sort(defs)
  local options = base .. " " .. table.concat(defs, " ") .. (opt.split > 0 and (" --split-compile=" .. opt.split) or "")
  local t0 = kt.clock()
  local ptx, log1 = kt.cuda_compile{ source = source, arch = "compute_" .. opt.arch, options = options,
                                     names = { kernel_name } }
  local t1 = kt.clock()
  local all, log2 = kt.cuda_compile{ source = source, arch = "sm_" .. opt.arch, options = options,
                                     names = { kernel_name } }
  local t2 = kt.clock()
  sum_ptx, sum_all = sum_ptx + (t1 - t0), sum_all + (t2 - t1)
  print(("  position %6d: to PTX %7.0f ms%s, to a cubin %7.0f ms%s  (%s)"):format(at, (t1 - t0) * 1e3,
    ptx and "" or " (failed)", (t2 - t1) * 1e3, all and "" or (" (failed: " .. tostring(log2):sub(1, 80):gsub("\n", " ") .. ")"),
    table.concat(defs, " ")))
end
print(("  mean: to PTX %.0f ms, to a cubin %.0f ms: ptxas and the rest %.0f%% of the whole"):format(
  sum_ptx / opt.count * 1e3, sum_all / opt.count * 1e3, sum_all > 0 and 100 * (sum_all - sum_ptx) / sum_all or 0))
