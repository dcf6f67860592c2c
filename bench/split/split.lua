-- One kernel split across two devices (kt.split): for each case, each
-- device alone and the split that kt.split settles on, and every step it
-- measured: its shares, its time (host clock, from when the parts were let
-- go together until the last ended), each part's time and the wall time of
-- the whole run (uploads and read-backs too).
--   build/ktlua bench/split/split.lua [--devices=cuda:0,opencl:1:0] [--case=all|chain|vadd]
--     [--chain_n=1048576] [--iters=1000] [--vadd_n=16777216] [--repeats=5] [--refine=4]
-- Cases: "chain", a chain of multiply-adds per item (compute-bound: each
-- device's time grows with its share, the case where a CPU's share can pay,
-- by at most the CPU's part of the two devices' summed throughput), and
-- "vadd", a large vector addition (memory-bound, and at a GPU's bandwidth
-- over in a fraction of a millisecond: the case where a split cannot pay).
-- With the same device twice (the default here: PoCL), both parts share its
-- cores: the figures are the split's overhead, not a gain.
local kt = require "ktlua"
local o = require("ktlua.cli").options(arg, {
  devices = "opencl:0:0,opencl:0:0", case = "all", chain_n = 1 << 20, iters = 1000,
  vadd_n = 1 << 24, repeats = 5, refine = 4 })

local devices = {}
for id in o.devices:gmatch("[^,]+") do devices[#devices + 1] = id end

local SOURCES = {
  chain = {
    opencl = [[
__kernel void chain(__global const float *a, __global float *y, int offset, int iters) {
  int i = offset + get_global_id(0);
  float x = a[i];
  for (int j = 0; j < iters; j++) x = x * 0.5f + 0.25f;
  y[i] = x;
}]],
    cuda = [[
extern "C" __global__ void chain(const float *a, float *y, int offset, int iters) {
  int i = offset + blockIdx.x * blockDim.x + threadIdx.x;
  float x = a[i];
  for (int j = 0; j < iters; j++) x = x * 0.5f + 0.25f;
  y[i] = x;
}]] },
  vadd = {
    opencl = [[
__kernel void vadd(__global const float *a, __global const float *b, __global float *c, int offset) {
  int i = offset + get_global_id(0);
  c[i] = a[i] + b[i];
}]],
    cuda = [[
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int offset) {
  int i = offset + blockIdx.x * blockDim.x + threadIdx.x;
  c[i] = a[i] + b[i];
}]] },
}

local function chain_case()
  local n = o.chain_n
  local a, y = kt.array("float", n):random(1), kt.array("float", n)
  return {
    name = "chain", n = n, detail = ("%d items, %d multiply-adds each"):format(n, o.iters),
    outputs = { { y, reference = function(ref)
      for i = 0, n - 1 do
        local x = a[i]
        for _ = 1, o.iters do
          x = x * 0.5 + 0.25
          if x == 0.5 then break end -- a fixed point: the rest of the chain keeps it
        end
        ref[i] = x
      end
    end } },
    args = function(part)
      return { part.array(a):input(), part.array(y):output(), kt.int(part.offset), kt.int(o.iters) }
    end }
end

local function vadd_case()
  local n = o.vadd_n
  local a, b, c = kt.array("float", n):random(1), kt.array("float", n):random(2), kt.array("float", n)
  return {
    name = "vadd", n = n, detail = ("%d floats"):format(n),
    outputs = { { c, reference = function(ref) for i = 0, n - 1 do ref[i] = a[i] + b[i] end end } },
    args = function(part)
      return { part.array(a):input(), part.array(b):input(), part.array(c):output(),
               kt.int(part.offset) }
    end }
end

local function run_case(case)
  local t0 = kt.clock()
  local r = kt.split{
    devices = devices, allow_same = devices[1] == devices[2], range = case.n, quantum = 256,
    repeats = o.repeats, refine = o.refine, outputs = case.outputs,
    kernel = function(tuner, part)
      local k = tuner:kernel{ name = case.name, source = SOURCES[case.name][part.device.backend],
        global = part.count, group = 1, args = case.args(part) }
      k:param("WG", { 32, 64, 128, 256 }, { group_x = "mul" })
      return k
    end }
  local wall = kt.clock() - t0
  print(("\n%s: %s, on %s (kt.split took %.1f s)"):format(case.name, case.detail,
        table.concat(devices, " + "), wall))
  print("| step | shares | ms (last part ended) | each part ms | wall ms |")
  print("| --- | --- | ---: | --- | ---: |")
  for i, s in ipairs(r.steps) do
    local each = {}
    for d = 1, #devices do each[d] = s.parts_ms[d] and ("%.4f"):format(s.parts_ms[d]) or "-" end
    local shares = {}
    for d, c in ipairs(s.counts) do shares[d] = c end
    print(("| %d %s | %s | %.4f | %s | %.3f |"):format(i, s.kind, table.concat(shares, " / "),
          s.time_ms, table.concat(each, " / "), s.wall_ms))
  end
  for d, p in ipairs(r.parts) do
    local items = p.count > 0 and ("items %d..%d"):format(p.offset, p.offset + p.count - 1)
                  or "no items"
    print(("part %d: %s, %s (%.1f%%), WG=%d, alone %.4f ms (tuned %.4f ms)"):format(d, p.device,
          items, 100 * p.count / case.n, p.config.WG, p.alone_ms or 0, p.tuned_ms or 0))
  end
  print(("chosen: %.4f ms (wall %.3f ms); best device alone %.4f ms (wall %.3f ms); speedup "
         .. "%.2fx (%+.0f%%); output %s"):format(r.time_ms, r.wall_ms, r.best_alone_ms,
         r.best_alone_wall_ms, r.speedup, 100 * (r.speedup - 1), r.status))
  if r.status ~= "ok" then print(r.error) end
end

for _, id in ipairs(devices) do
  local d = kt.device(id)
  print(("%s: %s (%s, %d compute units)"):format(d.id, d.name, d.type, d.compute_units))
end
if o.case == "all" or o.case == "chain" then run_case(chain_case()) end
if o.case == "all" or o.case == "vadd" then run_case(vadd_case()) end
