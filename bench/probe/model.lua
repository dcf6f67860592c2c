-- The device probes and the cost model on one device: probes the device (kt.probe,
-- kept in a database), prints the figures, then tunes each example that declares
-- its cost with --probe=DB and prints the model's error on it (bench/RESULTS.md,
-- "Device probes and the cost model").
--   ktlua bench/probe/model.lua [--device=ID] [--db=FILE] [--examples=vectoradd,reduction,sort]
--                               [--quick] [--n=N]
-- --quick probes with the test sizes; --n passes a problem size to the examples.
local kt = require "ktlua"
local opt = require("ktlua.cli").options(arg, { device = "default", db = "",
  examples = "vectoradd,reduction,sort", quick = false, n = 0 },
  "bench/probe/model.lua: device probes and the cost model's error on the examples")

local device = kt.device(opt.device)
local path = opt.db ~= "" and opt.db or os.tmpname()
local db = kt.db(path)
local t0 = kt.clock()
local rec = kt.probe(device, { db = db, quick = opt.quick })
db:close()
print(("## %s (%s), %s: probed in %.1f s"):format(device.name, device.id, rec.date, kt.clock() - t0))
print()
print("```")
rec:print()
print("```")
print()
local function gbs(t) return t and ("%.4g GB/s, %.3g us"):format(t.gbs, t.latency_ns / 1e3) or "-" end
print("| figure | measured |")
print("| --- | --- |")
print(("| launch floor (device event, host) | %.3g us, %.3g us |"):format(rec.launch_ns / 1e3,
  rec.launch_host_ns / 1e3))
for _, dir in ipairs({ "h2d", "d2h" }) do
  for _, kind in ipairs({ "pageable", "pinned" }) do
    print(("| %s %s (largest: rate, smallest: time) | %s |"):format(dir, kind, gbs(rec.transfer[dir][kind])))
  end
end
print(("| device memory (copy, best work-group %d) | %.4g GB/s |"):format(rec.best_group, rec.memory_gbs))
local ops = rec.ops
local function flops(p)
  if not ops[p .. "_add"] then return "-" end
  return ("%.4g Gflop/s"):format(math.max(ops[p .. "_add"], ops[p .. "_mul"], 2 * ops[p .. "_fma"]))
end
print(("| fp32, fp64 (add, mul or 2 x fma, the best) | %s, %s |"):format(flops("fp32"), flops("fp64")))
print(("| int32 add, mul | %.4g, %.4g Gop/s |"):format(ops.int32_add or 0, ops.int32_mul or 0))
print(("| fp32 div, sqrt, exp, sin | %.4g, %.4g, %.4g, %.4g Gop/s |"):format(ops.fp32_div or 0,
  ops.fp32_sqrt or 0, ops.fp32_exp or 0, ops.fp32_sin or 0))
print(("| rows capped at %d repetitions above 2%% rse | %d of %d |"):format(rec.max_reps,
  rec.capped, #rec.rows))
print()

-- The examples, each in its own process (arg[-1]: this ktlua).
local ktlua = arg[-1] or "ktlua"
print("```")
for name in opt.examples:gmatch("[^,]+") do
  local cmd = ("%s examples/tune_%s.lua --device=%s --probe=%s%s 2>&1"):format(ktlua, name,
    device.id, path, opt.n > 0 and (" --n=" .. opt.n) or "")
  local p = assert(io.popen(cmd))
  for line in p:lines() do
    if line:match("^best:") or line:match("^cost model") or line:match("^ktlua:") then
      print(name .. ": " .. line)
    end
  end
  p:close()
end
print("```")
if opt.db == "" then os.remove(path) end
