-- bench/transfer/transfer.lua: transfer across devices (issue 42), measured
-- on recorded spaces, leave-one-device-out.
--
--   nice build/ktlua bench/transfer/transfer.lua [--seeds=50] [--top=10] [--only=KERNEL,...]
--       [--search=NAME] [--trust=N] [--count=8] [--other_gpus] [--out=FILE.md] [--cache=FILE]
--
-- For each kernel recorded on several devices (bench/searchers/spaces and
-- ../shared/datasets; BAT's GEMM and convolution samples on the H100 beside
-- benchmark_hub's RTX ones), each recording in turn is the new device: a
-- database (kt.db, a file of its own) gets the best `top` configurations of
-- each other recording, stored as a peer's recording with its device named
-- (db:store(records, {device =, backend =, kernel =, size =})), and
-- ktlua.transfer plans the held-out device's tuning from it: `count` seeds
-- and a prior ranked by how alike the devices (their names: recordings
-- carry no properties) and sizes are. The default searcher with a budget
-- (forest; --search=bestfirst for another) then searches the held-out replay with and without them, over `seeds`
-- seeds, at 0.5%, 1% and 2% of its configurations (seeds counted), and at
-- 5% without: the fraction of the optimum reached (rec:score), averaged.
-- A kernel's figure is the mean over its held-out devices; "all" the mean
-- over kernels. With --other_gpus the database holds only other GPUs'
-- recordings (not the held-out GPU's through the other API): a new GPU.
-- --trust=N sets the searcher's trust in the prior (0: the seeds alone);
-- without --search it names forest. The target: at 1% with transfer, at
-- least what the default reaches at 5% without it. --cache=FILE keeps the
-- figures without transfer (which no prior changes) from one run to the next.
local kt = require "ktlua"
local transfer = require "ktlua.transfer"

local opt = require("ktlua.cli").options(arg, { seeds = 50, top = 10, only = "", trust = "", search = "",
  count = 8, out = "", cache = "", other_gpus = false, datasets = "../shared/datasets", spaces = "bench/searchers/spaces" },
  "bench/transfer/transfer.lua: leave-one-device-out transfer on recorded spaces")

-- Each recording: its file, kernel, backend and problem size (the
-- variants of conv2d are other sizes of one kernel).
local RECORDINGS = {}
local function add(kernel, file, backend, size)
  RECORDINGS[#RECORDINGS + 1] = { kernel = kernel, file = file, backend = backend or "cuda",
    size = size or { n = 1 } }
end
for _, k in ipairs { "gemm", "convolution", "pnpoly" } do
  for _, gpu in ipairs { "RTX_2080_Ti", "RTX_3090", "RTX_Titan", "RTX_3060_laptop" } do
    add(k, ("%s/%s_%s.json.gz"):format(opt.datasets, k, gpu))
  end
end
local S = opt.spaces
for _, gpu in ipairs { "H200", "H100_80GB_HBM3" } do
  add("pnpoly", ("%s/pnpoly_%s.json.gz"):format(S, gpu))
  for _, k in ipairs { "mm", "dedisp", "nbody", "triad", "stencil", "transpose" } do
    add(k, ("%s/%s_%s.json.gz"):format(S, k, gpu))
  end
end
for _, f in ipairs { "mm_H200.opencl", "mm_H100_80GB_HBM3.opencl", "stencil_H100_80GB_HBM3.opencl",
  "transpose_H100_80GB_HBM3.opencl" } do
  add(f:match("^(%w+)"), ("%s/%s.json.gz"):format(S, f), "opencl")
end
-- BAT's GEMM and convolution on the H100, seeded random samples of the
-- same spaces as benchmark_hub's (the same parameters; sizes unknown here)
add("gemm", S .. "/gemm_H100_80GB_HBM3.bat.json.gz")
add("convolution", S .. "/convolution_H100_80GB_HBM3.bat.json.gz")
add("conv2d", S .. "/conv2d_H200.json.gz", "cuda", { n = 4096, filter = 15 })
add("conv2d", S .. "/conv2d_H100_80GB_HBM3.filter7.json.gz", "cuda", { n = 4096, filter = 7 })
add("conv2d", S .. "/conv2d_H100_80GB_HBM3.n1024.json.gz", "cuda", { n = 1024, filter = 15 })

local only = {}
for k in opt.only:gmatch("[^,]+") do only[k] = true end

local kernels, by_kernel = {}, {}
for _, r in ipairs(RECORDINGS) do
  if next(only) == nil or only[r.kernel] then
    if not by_kernel[r.kernel] then
      by_kernel[r.kernel] = {}
      kernels[#kernels + 1] = r.kernel
    end
    r.rec = kt.replay(r.file)
    r.name = r.file:match("([^/]+)%.json%.gz$")
    table.insert(by_kernel[r.kernel], r)
  end
end

local BUDGETS = { 0.005, 0.01, 0.02 }
-- nil: the default with a budget (forest)
local search = opt.search ~= "" and { opt.search } or nil
if opt.trust ~= "" then
  search = search or { "forest" }
  search.trust = assert(tonumber(opt.trust), "--trust: expected a number")
end

-- The figures without transfer, by searcher, recording, seeds and budget.
local cache, cache_key = {}, nil
if opt.cache ~= "" then
  local chunk = loadfile(opt.cache, "t", {})
  cache = chunk and chunk() or {}
  local s = search and search[1] or "forest" -- the default with a budget
  cache_key = function(rec, fraction) return ("%s|%s|%d|%g"):format(s, rec.file, opt.seeds, fraction) end
end
local function save_cache()
  if opt.cache == "" then return end
  local keys = {}
  for k in pairs(cache) do keys[#keys + 1] = k end
  table.sort(keys)
  local f = assert(io.open(opt.cache, "w"))
  f:write("return {\n")
  for _, k in ipairs(keys) do f:write(("  [%q] = %.17g,\n"):format(k, cache[k])) end
  f:write("}\n")
  f:close()
end

local function mean_score(held, plan, fraction)
  local rec = held.rec
  local key = not plan and cache_key and cache_key(held, fraction)
  if key and cache[key] then return cache[key] end
  local sum = 0
  for seed = 1, opt.seeds do
    local results = rec:tune{ search = search, seed = seed, stop = { fraction = fraction },
      seeds = plan and plan.seeds, prior = plan and plan.prior }
    sum = sum + rec:score(results)
  end
  if key then cache[key] = sum / opt.seeds; save_cache() end
  return sum / opt.seeds
end

local lines = {}
local function say(s) print(s); io.stdout:flush(); lines[#lines + 1] = s end
say(("searcher %s, seeds %d, top %d stored per device, %d transfer seeds, trust %s%s"):format(
  opt.search ~= "" and opt.search or "the default", opt.seeds, opt.top, opt.count,
  opt.trust ~= "" and opt.trust or "the searcher's default", opt.other_gpus and ", other GPUs only" or ""))
say("")
say("| held out | from | 0.5% | 1% | 2% | 0.5% with | 1% with | 2% with | 5% without |")
say("|---|---|---|---|---|---|---|---|---|")
local totals, nk = {}, 0
for _, k in ipairs(kernels) do
  local list = by_kernel[k]
  local function sources(held)
    local n = 0
    for _, other in ipairs(list) do
      if other ~= held and not (opt.other_gpus and other.rec.device == held.rec.device) then n = n + 1 end
    end
    return n
  end
  local usable = 0
  for _, held in ipairs(list) do if sources(held) > 0 then usable = usable + 1 end end
  if usable >= 1 then
    local sums = {}
    for _, held in ipairs(list) do if sources(held) > 0 then
      local path = os.tmpname()
      local db = kt.db(path)
      local names = {}
      for _, other in ipairs(list) do
        if other ~= held and not (opt.other_gpus and other.rec.device == held.rec.device) then
          db:store(other.rec:records(), { size = other.size, top = opt.top, kernel = k,
            device = other.rec.device, backend = other.backend })
          names[#names + 1] = other.name
        end
      end
      local plan = transfer.plan(db, { kernel = k, device = held.rec.device, backend = held.backend,
        size = held.size, space = held.rec:space(), seeds = opt.count })
      db:close()
      os.remove(path); os.remove(path .. "-wal"); os.remove(path .. "-shm")
      local row = {}
      for i, f in ipairs(BUDGETS) do
        row[i] = mean_score(held, nil, f)
        row[3 + i] = mean_score(held, plan, f)
      end
      row[7] = mean_score(held, nil, 0.05)
      for i, v in ipairs(row) do sums[i] = (sums[i] or 0) + v end
      local cells = {}
      for i, v in ipairs(row) do cells[i] = ("%.3f"):format(v) end
      say(("| %s | %d others | %s |"):format(held.name, #names, table.concat(cells, " | ")))
    end end
    local cells = {}
    for i, v in ipairs(sums) do
      cells[i] = ("%.3f"):format(v / usable)
      totals[i] = (totals[i] or 0) + v / usable
    end
    nk = nk + 1
    say(("| **%s** (mean of %d) | | %s |"):format(k, usable, table.concat(cells, " | ")))
  end
end
local cells = {}
for i, v in ipairs(totals) do cells[i] = ("%.3f"):format(v / nk) end
say(("| **all** (mean of %d kernels) | | %s |"):format(nk, table.concat(cells, " | ")))
if opt.out ~= "" then
  local f = assert(io.open(opt.out, "w"))
  f:write(table.concat(lines, "\n"), "\n")
  f:close()
end
