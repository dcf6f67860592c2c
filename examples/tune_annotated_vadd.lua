-- The vector addition of OCLoptimizer's paper, annotated (doc/annotations.md),
-- tuned unmodified: its loop's unroll factor is a parameter, and so is the
-- work-group size; each unroll factor is its own program, the loop rewritten.
-- The search is the paper's breadth-first one: the work-group size first,
-- then the annotation, keeping the versions its tolerance and number allow.
--   ktlua examples/tune_annotated_vadd.lua [--n=N] [--items=N] [--device=ID]
--   [--search=NAME] [--count=N] [--seconds=S] [--seed=N] [--output=FILE]
-- (--search=genetic tries all annotations at once)
local kt = require "ktlua"
local opt = require("ktlua.cli").tuning(arg, { n = 1 << 20, items = 4096 },
  "examples/tune_annotated_vadd.lua: OCLoptimizer's annotated vector addition")

local n = opt.n
local a = kt.array("float", n):fill(function(i) return i end)
local b = kt.array("float", n):random(42)
local c = kt.array("float", n)

local tuner = kt.tuner(opt.device)
local cuda = tuner.device.backend == "cuda"
print(("tuning the annotated vector addition of %d floats on %s (%s)"):format(n, tuner.device.name,
  tuner.device.backend))

-- The device's type chooses how GENINIT/GENLIMIT/GENSTEP share the iterations.
local ann = kt.annotated{ file = cuda and "kernels/vadd_annotated.cu" or "kernels/vadd_annotated.cl",
                          device = tuner.device }
local k = ann:kernel(tuner, {
  name = "vadd", global = opt.items, group = 1, round_global = true,
  args = { a:input(), b:input(), c:output(), kt.int(n) },
})
k:param("WG", { 32, 64, 128, 256 }, { group_x = "mul" })
k:reference(c, function(ref)
  for i = 0, n - 1 do ref[i] = a[i] + b[i] end
end)

opt.tune.search = opt.tune.search or ann:search{ first = { "WG" } }
local results = tuner:tune(k, opt.tune)
results:print()
assert(results:best(), "no configuration of vadd ran correctly")
