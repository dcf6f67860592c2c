-- bench/searchers/record/spaces.lua: records the complete space of one kernel
-- (every configuration, failed ones kept) as a Kernel Tuner cache file, for
-- the searcher benchmarks (bench/searchers/spaces/README.md).
--   ktlua spaces.lua --kernel=NAME [--device=ID] [--repeats=N] [--bat=DIR] [--n=N] [--small]
--                    [--check] [--progress] [--workers=N] [--sample=N] [--seed=N] OUTPUT.json
-- Each kernel family is a module of its own, record/FAMILY.lua (the list below), whose space
-- function makes the kernel, its parameters and constraints (record/lib.lua: what they share).
-- --n: the family's size (each module says which); --small: the size for a CPU (PoCL), where a
-- whole space records in minutes; --check: each output checked against the family's Lua
-- reference, where it has one (a wrong one is recorded as failed: invalid_output); --progress:
-- a line per configuration; --bat: BAT's benchmarks folder (for BAT's kernels);
-- --workers: compiler processes (the tuner's compile_workers); --sample=N: N configurations
-- drawn at random (seeded by --seed, 1 by default; the same N and seed give the same sample)
-- instead of every one, for a space too large to record whole. The kernels written for this
-- build through CUDA or OpenCL, by the device (KTLUA_DEVICE, else cuda:0).
local here = arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/../?.lua;" .. package.path -- record.NAME: record/NAME.lua
local kt = require "ktlua"

local families = {"mm", "dedisp", "nbody", "triad", "pnpoly", "stencil", "transpose", "reduction", "coulomb",
  "hotspot", "expdist", "md5hash", "builtin_vectors", "histogram", "fft", "matvec", "particles"}
local kernels, names = {}, {}
for _, family in ipairs(families) do
  local own = {}
  for name, make in pairs(require("record." .. family)) do kernels[name], own[#own + 1] = make, name end
  table.sort(own)
  table.move(own, 1, #own, #names + 1, names)
end
local usage = "usage: spaces.lua --kernel=" .. table.concat(names, "|") ..
  " [--device=ID] [--repeats=N] [--bat=DIR] [--n=N] [--small] [--check] [--progress] [--workers=N] [--sample=N] [--seed=N] OUTPUT.json"

local opt, out = {kernel = "", device = os.getenv("KTLUA_DEVICE") or "cuda:0", repeats = 3, n = false, small = false,
  workers = false, sample = false, seed = 1, check = false, progress = false, bat = here .. "/../bat/benchmarks"}, nil
for _, a in ipairs(arg) do
  local k, v = a:match("^%-%-(%w+)=(.+)$")
  local flag = ({["--small"] = "small", ["--check"] = "check", ["--progress"] = "progress"})[a]
  if flag then opt[flag] = true
  elseif k and opt[k] ~= nil and k ~= "small" and k ~= "check" and k ~= "progress" then opt[k] = tonumber(v) or v
  elseif not k and not out then out = a
  else error("unknown argument " .. a .. " (" .. usage .. ")") end
end
assert(out, usage)

local make = kernels[opt.kernel] or error("--kernel: unknown kernel '" .. opt.kernel .. "' (" .. usage .. ")")
local tuner = kt.tuner(opt.device, {compile_workers = opt.workers or nil})
opt.backend = tuner.device.backend
local k, size = make(tuner, opt)
k:prune{divisible = false}
local count = k:space():count()
print(("recording %s on %s: %d configurations%s"):format(opt.kernel, tuner.device.name, count,
  opt.sample and (", a sample of %d (seed %d)"):format(opt.sample, opt.seed) or ""))
local t0 = os.time()
local results = tuner:tune(k, {repeats = opt.repeats, fail_fast = 8, progress = opt.progress,
  search = opt.sample and "random" or "exhaustive", seed = opt.sample and opt.seed or nil,
  stop = opt.sample and {count = opt.sample} or nil})
local ok, first = 0, nil
for _, r in ipairs(results) do
  if r.status == "ok" then ok = ok + 1 elseif not first then first = r end
end
print(("%d configurations, %d ok, %d failed, in %d s"):format(#results, ok, #results - ok, os.time() - t0))
if first then print("first failure: " .. tostring(first.status) .. ": " .. tostring(first.error):sub(1, 300)) end
results:write(out, "kernel-tuner-cache", {problem_size = size})
