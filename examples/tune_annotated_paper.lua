-- A kernel in the form of OCLoptimizer's paper (doc/annotations.md): an
-- N x N matrix-vector product whose rows GENINIT(N, g, 0), GENLIMIT(N, g, 0)
-- and GENSTEP(N, g, 0) share among the work-items, with an unroll-and-jam
-- and an unroll pragma; tuned unmodified, as the paper tunes it, breadth
-- first: the work sizes first (the work-group size and the number of
-- work-groups: the macros let any number of work-items do all the rows),
-- then each annotation on the best sizes.
--   ktlua examples/tune_annotated_paper.lua [--n=N] [--device=ID]
--   [--search=NAME] [--count=N] [--seconds=S] [--seed=N] [--output=FILE]
-- (--search=genetic tries every parameter at once)
local kt = require "ktlua"
local opt = require("ktlua.cli").tuning(arg, { n = 2048 },
  "examples/tune_annotated_paper.lua: the paper's form of an annotated kernel, tuned breadth first")

local n = opt.n
local A = kt.array("float", n * n):random(3)
local x = kt.array("float", n):random(4)
local y = kt.array("float", n)

local tuner = kt.tuner(opt.device)
local cuda = tuner.device.backend == "cuda"
print(("tuning the paper's %d x %d matrix-vector product on %s (%s)"):format(n, n, tuner.device.name,
  tuner.device.backend))

-- The device's type chooses how the macros share the rows.
local ann = kt.annotated{ file = cuda and "kernels/matvec_paper.cu" or "kernels/matvec_paper.cl",
                          device = tuner.device }
local k = ann:kernel(tuner, { name = "matvec", global = 1, group = 1,
                              args = { A:input(), x:input(), y:output(), kt.int(n) } })
k:param("WG", { 32, 64, 128 }, { group_x = "mul", global_x = "mul" }) -- work-items a group
k:param("GROUPS", { 4, 16, 64 }, { global_x = "mul" })                 -- work-groups
k:reference(y, function(ref)
  for r = 0, n - 1 do
    local acc = 0.0
    for j = 0, n - 1 do acc = acc + A[r * n + j] * x[j] end
    ref[r] = acc
  end
end, { method = "relative", tolerance = 1e-5 }) -- sums of floats in another order

opt.tune.search = opt.tune.search or ann:search{ first = { { "WG", "GROUPS" } } }
local results = tuner:tune(k, opt.tune)
results:print()
assert(results:best(), "no configuration of matvec ran correctly")
