-- Vector addition tuned over work-group size and vector width, with an
-- OpenCL kernel and a CUDA kernel: the device chooses which.
--   ktlua examples/tune_vectoradd.lua [--n=N] [--device=ID] [--repeats=N] [--progress]
--   [--search=NAME] [--count=N] [--seconds=S] [--seed=N] [--early_stop] [--output=FILE] [--probe=DB]
-- (every configuration, unless --count or --seconds sets a budget; --output
-- writes the results, JSON or CSV)
-- device: cuda, cuda:0, opencl, opencl:0:1, gpu, cpu, ... (default:
-- $KTLUA_DEVICE, else the first GPU, else the first device)
local kt = require "ktlua"
local opt = require("ktlua.cli").tuning(arg, { n = 1 << 22, probe = "" },
  "examples/tune_vectoradd.lua: a tuned vector addition")

local n = opt.n

local a = kt.array("float", n):fill(function(i) return i end)
local b = kt.array("float", n):random(42)
local c = kt.array("float", n)

local tuner = kt.tuner(opt.device)
local cuda = tuner.device.backend == "cuda"
print(("tuning vector addition of %d floats on %s (%s)"):format(n, tuner.device.name,
  tuner.device.backend))

local k = tuner:kernel{
  -- The CUDA kernel is a template: "vadd<VEC>" instantiates it per configuration.
  file = cuda and "kernels/vadd.cu" or "kernels/vadd.cl",
  name = cuda and "vadd<VEC>" or "vadd",
  global = n, group = 1, round_global = true, -- any n: the kernel skips work-items past the end
  args = { a:input(), b:input(), c:output(), kt.int(n) },
}
-- Each work-item handles VEC elements: the global size shrinks by VEC.
k:param("WG", { 32, 64, 128, 256, 512 }, { group_x = "mul" })
k:param("VEC", { 1, 2, 4, 8, 16 }, { global_x = "div" })
k:constraint({ "VEC" }, function(vec) return n % vec == 0 end) -- whole vectors
k:reference(c, function(ref)
  for i = 0, n - 1 do ref[i] = a[i] + b[i] end
end)

-- What a configuration does, for the cost model (k:predict, --probe): every
-- element is read twice and written once, and added.
k:cost(function() return { bytes = 12 * n, flops = n, launches = 1 } end)
local results = tuner:tune(k, opt.tune)
results:print()
local best = results:best()
assert(best, "no configuration of vadd ran correctly")
-- --probe=DB: the cost model's error on this tuning, from the probe that
-- `ktlua --probe=ID --probe-db=DB` kept for the device.
if opt.probe ~= "" then require("ktlua.cost").report(k, results, opt.probe, tuner.device) end
