-- A 4-bit LSD radix sort of n uint keys (2^20 by default) as a composition
-- of three kernels (histogram, scan, scatter) run for eight passes by a
-- launcher, tuned over work-group size, keys per work-item and number of
-- work-groups.
--   ktlua examples/tune_sort.lua [--n=N] [--device=ID] [--repeats=N] [--progress]
--   [--search=NAME] [--count=N] [--seconds=S] [--seed=N] [--early_stop] [--output=FILE] [--probe=DB]
local kt = require "ktlua"
local opt = require("ktlua.cli").tuning(arg, { n = 1 << 20, probe = "" },
  "examples/tune_sort.lua: a tuned radix sort of n uint keys")

local n = opt.n
local tuner = kt.tuner(opt.device)

local keys = kt.array("uint", n):random(11)
local tmp = kt.array("uint", n)
local counts = kt.array("uint", 16 * 1024) -- 16 digits x at most 1024 groups
local count, shift = kt.uint(n), kt.uint(0)

local file = tuner.device.backend == "cuda" and "kernels/radix_sort.cu" or "kernels/radix_sort.cl"
local function kernel(name, args)
  return tuner:kernel{ file = file, name = name, global = 1, group = 1, args = args }
end
local histogram = kernel("histogram", { keys:input(), counts:inout(), count, shift })
local scan = kernel("scan", { counts:inout() })
local scatter = kernel("scatter", { keys:inout(), tmp:inout(), counts:input(), count, shift })

local sort = tuner:composition{ name = "radix_sort", kernels = { histogram, scan, scatter } }
sort:param("WG", { 32, 64, 128, 256 }, { group_x = "mul", global_x = "mul" })
sort:param("VEC", { 1, 2, 4, 8 })
sort:param("NUM_GROUPS", { 16, 32, 64, 128, 256, 512, 1024 })
-- Blocks of ceil(n / NUM_GROUPS) keys, each at least one full step of its
-- work-group (so no more groups than keys).
sort:constraint({ "WG", "VEC", "NUM_GROUPS" }, function(wg, vec, groups)
  return wg * vec <= (n + groups - 1) // groups
end)
-- Histogram and scatter run NUM_GROUPS work-groups; the scan runs one.
sort:modifier(histogram, "global_x", "mul", "NUM_GROUPS")
sort:modifier(scatter, "global_x", "mul", "NUM_GROUPS")

sort:launcher(function(run)
  local from, to = keys, tmp
  for pass = 0, 7 do
    run:update(shift, 4 * pass)
    run:args(histogram, { from:input(), counts:inout(), count, shift })
    run:launch(histogram)
    run:launch(scan)
    run:launch(scatter)
    run:swap(scatter, from, to)
    from, to = to, from
  end
  -- Eight passes: the sorted keys are back in `keys`.
end)

sort:reference(keys, function(ref)
  local t = keys:totable()
  table.sort(t)
  ref:fill(function(i) return t[i + 1] end)
end)

-- What a configuration does, for the cost model (k:predict, --probe): eight
-- passes of three launches; the keys are read twice and written once a
-- pass, the counts (16 per group) written, scanned and read; a few integer
-- operations per key and pass.
sort:cost(function(cfg)
  local counts_bytes = 16 * cfg.NUM_GROUPS * 4
  return { bytes = 8 * (12 * n + 4 * counts_bytes), iops = 8 * 6 * n, launches = 24 }
end)
print(("tuning a radix sort of %d keys on %s: %d configurations"):format(
  n, tuner.device.name, sort:space():count()))
local results = tuner:tune(sort, opt.tune)
results:print()
assert(results:best(), "no configuration of the sort ran correctly")
-- --probe=DB: the cost model's error on this tuning, from the probe that
-- `ktlua --probe=ID --probe-db=DB` kept for the device.
if opt.probe ~= "" then require("ktlua.cost").report(sort, results, opt.probe, tuner.device) end
