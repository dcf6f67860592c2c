-- A matrix-vector product with two annotated loops (doc/annotations.md):
-- unroll-and-jam over the rows a work-item computes, and unrolling of the
-- loop along a row. Each pair of factors is its own program.
--   ktlua examples/tune_annotated_matvec.lua [--rows=N] [--cols=N] [--items=N] [--device=ID]
--   [--search=NAME] [--count=N] [--seconds=S] [--seed=N] [--output=FILE]
-- (default search: the paper's, annotation after annotation; --search=genetic
-- tries them all at once)
local kt = require "ktlua"
local opt = require("ktlua.cli").tuning(arg, { rows = 2048, cols = 1024, items = 256 },
  "examples/tune_annotated_matvec.lua: a matrix-vector product with two annotated loops")

local rows, cols = opt.rows, opt.cols
local A = kt.array("float", rows * cols):random(7)
local x = kt.array("float", cols):random(8)
local y = kt.array("float", rows)

local tuner = kt.tuner(opt.device)
local cuda = tuner.device.backend == "cuda"
print(("tuning the annotated %d x %d matrix-vector product on %s (%s)"):format(rows, cols,
  tuner.device.name, tuner.device.backend))

local ann = kt.annotated{ file = cuda and "kernels/matvec_annotated.cu" or "kernels/matvec_annotated.cl",
                          device = tuner.device }
local k = ann:kernel(tuner, {
  name = "matvec", global = opt.items, group = 1, round_global = true,
  args = { A:input(), x:input(), y:output(), kt.int(rows), kt.int(cols) },
})
k:param("WG", { 32, 64 }, { group_x = "mul" })
k:reference(y, function(ref)
  for r = 0, rows - 1 do
    local acc = 0.0
    for j = 0, cols - 1 do acc = acc + A[r * cols + j] * x[j] end
    ref[r] = acc
  end
end, { method = "relative", tolerance = 1e-5 }) -- sums of 1,024 floats in another order (H200: 1e-6)

opt.tune.search = opt.tune.search or ann:search{ first = { "WG" } }
local results = tuner:tune(k, opt.tune)
results:print()
assert(results:best(), "no configuration of matvec ran correctly")
