-- Every T1 file ktlua knows of, loaded, checked and, where its kernel is
-- there and ktlua finds nothing wrong with it, tuned for a short budget on
-- a CUDA device: BAT's 13 files (spec/fixtures/t1/bat) and benchmark_hub's
-- two (the datasets' formats/). BAT's convolution and pnpoly files name
-- kernels that BAT's tree lacks; they run with benchmark_hub's kernels of
-- the same names, copied beside an unmodified copy of the file.
--
--   ktlua bench/t1/run_all.lua [--device=cuda:0] [--count=20] [--out=DIR]
--                              [--datasets=../shared/datasets]
--
-- Prints a Markdown table (file, space, kernel, outcome) for bench/RESULTS.md.
local kt = require "ktlua"
local o = require("ktlua.cli").options(arg, {
  device = "cuda:0", count = 20, out = "", datasets = os.getenv("KTLUA_DATASETS") or "../shared/datasets",
})

if o.out ~= "" then assert(os.execute(("mkdir -p '%s'"):format(o.out:gsub("'", "'\\''")))) end

local here = debug.getinfo(1, "S").source:match("^@(.*)/bench/t1/[^/]*$") or "."
local bat = here .. "/spec/fixtures/t1/bat/"
local files = {
  "GEMM/GEMM-CAFF.json", "GEMM/GEMM-CAFF-matmul.json", "MD5Hash/MD5Hash-CAFF.json",
  "TRIAD/TRIAD-CAFF.json", "convolution/convolution-CAFF.json", "expdist/expdist-CAFF.json",
  "hotspot/hotspot-CAFF.json", "nbody/nbody-CAFF.json", "pnpoly/pnpoly-CAFF.json",
  "others/FFT/FFT-CAFF.json", "others/MD/MD-CAFF.json", "others/Reduction/Reduction-CAFF.json",
  "others/builtin_vectors/builtin_vectors-CAFF.json",
}
local borrowed = { ["convolution/convolution-CAFF.json"] = "convolution.cu",
                   ["pnpoly/pnpoly-CAFF.json"] = "pnpoly.cu" }

local function copy(from, to)
  local f = io.open(from, "rb")
  if not f then return false end
  local data = f:read("a")
  f:close()
  f = assert(io.open(to, "wb"))
  f:write(data)
  f:close()
  return true
end

local list = {}
for _, f in ipairs(files) do
  local path = bat .. f
  if borrowed[f] then -- the file as it is, beside benchmark_hub's kernel
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir))
    if copy(o.datasets .. "/formats/" .. borrowed[f], dir .. "/" .. borrowed[f]) then
      copy(path, dir .. "/" .. f:match("[^/]*$"))
      path = dir .. "/" .. f:match("[^/]*$")
    end
  end
  list[#list + 1] = { name = "BAT " .. f, path = path }
end
for _, f in ipairs({ "convolution_T1.json", "pnpoly_T1.json" }) do
  list[#list + 1] = { name = "benchmark_hub " .. f, path = o.datasets .. "/formats/" .. f }
end

local tuner = kt.tuner(o.device)
print(("T1 files on %s (%s), at most %d configurations each\n"):format(tuner.device.name,
  tuner.device.id, o.count))
print("| file | space (valid of all) | kernel | outcome |")
print("|---|---|---|---|")
local function cell(s) return (tostring(s):gsub("|", "\\|"):gsub("\n", "<br>")) end
for _, item in ipairs(list) do
  local ok, problem = pcall(kt.t1_read, item.path)
  local space, kernel, outcome = "-", "-", ""
  if not ok then
    outcome = "does not load: " .. problem
  else
    local s = kt.space{ params = problem.params, constraints = problem.constraints }
    space = ("%s of %s"):format(tostring(s:count()), tostring(s:count_all()))
    kernel = problem.source and problem.file:match("[^/]*$") or "absent"
    if #problem.defects > 0 then
      outcome = "defects: " .. table.concat(problem.defects, "; ")
    elseif not problem.source then
      outcome = "loads; its kernel is not among the fixtures"
    else
      local k, options
      ok, k, options = pcall(kt.t1, problem, { tuner = tuner })
      if not ok then
        outcome = "not built: " .. k
      else
        options.stop = { count = o.count }
        if o.out ~= "" then
          options.output = o.out .. "/" .. item.name:gsub("[^%w_.-]", "_") .. ".json"
        end
        local t0 = kt.clock()
        local tok, results = pcall(tuner.tune, tuner, k, options)
        if not tok then
          outcome = "tuning stopped: " .. results
        else
          local counts = {}
          for st, n in pairs(results:summary().statuses) do
            if n > 0 then counts[#counts + 1] = n .. " " .. st end
          end
          table.sort(counts)
          local best = results:best()
          outcome = ("ran %d: %s; best %s (%.1f s)"):format(#results, table.concat(counts, ", "),
            best and ("%.4f ms"):format(best.time_ms) or "none", kt.clock() - t0)
        end
      end
    end
    for _, n in ipairs(problem.notes) do
      if not n:match("^the kernel file") then outcome = outcome .. "; note: " .. n end
    end
  end
  print(("| %s | %s | %s | %s |"):format(cell(item.name), cell(space), cell(kernel), cell(outcome)))
  io.stdout:flush()
end
tuner:close()
