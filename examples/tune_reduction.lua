-- Sum of n random floats (2^24 by default), tuned over KTT's five reduction
-- parameters. Without atomics a launcher runs the kernel again on the
-- partial sums, swapping buffers, until one sum is left.
--   ktlua examples/tune_reduction.lua [--n=N] [--device=ID] [--repeats=N] [--progress]
--   [--search=NAME] [--count=N] [--seconds=S] [--seed=N] [--early_stop] [--output=FILE] [--probe=DB]
--   [--live=PAGE (a page kept up to date while the tuning runs)]
local kt = require "ktlua"
local opt = require("ktlua.cli").tuning(arg, { n = 1 << 24, probe = "" },
  "examples/tune_reduction.lua: a tuned sum of n floats")

local n = opt.n
local tuner = kt.tuner(opt.device)
local cus = tuner.device.compute_units

local data = kt.array("float", n):random(7)
local result = kt.array("float", 1)
-- Partial sums: at most one per work-group of the first pass.
local most_groups = math.max(16 * cus, (n + 31) // 32)
local pa, pb = kt.array("float", most_groups), kt.array("float", most_groups)
local count = kt.uint(n)

local cuda = tuner.device.backend == "cuda"
local k = tuner:kernel{
  file = cuda and "kernels/reduce.cu" or "kernels/reduce.cl", name = "reduce",
  global = n, group = 1,
  args = { data:input(), result:inout(), count },
}
k:param("WG", { 32, 64, 128, 256, 512 }, { group_x = "mul" })
k:param("UNBOUNDED_WG", { 0, 1 })
k:param("WG_NUM", { 0, cus, 2 * cus, 4 * cus, 8 * cus, 16 * cus })
k:param("VEC", { 1, 2, 4, 8, 16 })
k:param("USE_ATOMICS", { 0, 1 })
-- A fixed number of groups exactly when the groups are bounded ...
k:constraint({ "UNBOUNDED_WG", "WG_NUM" }, function(unbounded, groups)
  return (unbounded == 1) == (groups == 0)
end)
-- ... and those groups meet through atomics (as in KTT);
k:constraint({ "UNBOUNDED_WG", "USE_ATOMICS" }, function(unbounded, atomics)
  return unbounded == 1 or atomics == 1
end)
-- the vector width divides the data.
k:constraint({ "VEC" }, function(vec) return n % vec == 0 end)
-- The launcher gives every launch its global size (a multiple of WG), so n
-- need not be one.
k:prune{ divisible = false }

k:launcher(function(run, cfg)
  local wg, vec = cfg.WG, cfg.VEC
  local function groups_for(m)
    if cfg.UNBOUNDED_WG == 0 then return cfg.WG_NUM end
    return (m + wg * vec - 1) // (wg * vec)
  end
  local groups = groups_for(n)
  if cfg.USE_ATOMICS == 1 then
    run:launch(k, { global = groups * wg })
    return
  end
  -- First pass: data -> partial sums in pa; then from <-> to until one is left.
  run:args(k, { data:input(), pa:inout(), count })
  run:launch(k, { global = groups * wg })
  local from, to = pa, pb
  run:args(k, { from:inout(), to:inout(), count })
  local m = groups
  while m > 1 do
    run:update(count, m)
    groups = (m + wg * vec - 1) // (wg * vec)
    run:launch(k, { global = groups * wg })
    run:swap(k, from, to)
    from, to = to, from
    m = groups
  end
  run:copy(result, from, 1)
end)

k:reference(result, function(ref)
  local s = 0.0
  for i = 0, n - 1 do s = s + data[i] end
  ref[0] = s
end, { method = "relative", tolerance = 1e-3 })

-- What a configuration does, for the cost model (k:predict, --probe): the
-- launches and bytes of the launcher's passes, and an add per element.
k:cost(function(cfg)
  local step = cfg.WG * cfg.VEC
  local m = cfg.UNBOUNDED_WG == 0 and cfg.WG_NUM or (n + step - 1) // step
  local bytes, launches = 4 * n + 4 * m, 1
  while cfg.USE_ATOMICS == 0 and m > 1 do
    local groups = (m + step - 1) // step
    bytes, launches, m = bytes + 4 * m + 4 * groups, launches + 1, groups
  end
  return { bytes = bytes, flops = n, launches = launches }
end)
print(("tuning a sum of %d floats on %s (%d compute units): %d configurations"):format(
  n, tuner.device.name, cus, k:space():count()))
local results = tuner:tune(k, opt.tune)
results:print()
assert(results:best(), "no configuration of the reduction ran correctly")
-- --probe=DB: the cost model's error on this tuning, from the probe that
-- `ktlua --probe=ID --probe-db=DB` kept for the device.
if opt.probe ~= "" then require("ktlua.cost").report(k, results, opt.probe, tuner.device) end
