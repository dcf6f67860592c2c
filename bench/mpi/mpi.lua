-- What a device of another MPI rank costs per configuration: the same small
-- tuning (a vector addition, every configuration its own compile) on rank
-- 0's own device and on rank 1's, through the MPI relays (core/mpi*.c);
-- and what transfers cost through them (a write and a read of `mib` MiB).
--   mpirun -np 2 build/ktlua bench/mpi/mpi.lua [--n=65536] [--mib=64] [--rounds=3]
-- On one host with PoCL both ranks share the CPU device: the difference is
-- the relays' overhead, not a device's.
local kt = require "ktlua"
local o = require("ktlua.cli").options(arg, { n = 1 << 16, mib = 64, rounds = 3 })
assert(kt.mpi().size >= 2, "run it under mpirun -np 2 (ktlua --version says whether MPI is built in)")

local function tuning(device)
  local tuner = kt.tuner(device)
  local n = o.n
  local a = kt.array("float", n):random(1)
  local b = kt.array("float", n):random(2)
  local c = kt.array("float", n)
  local k = tuner:kernel{ name = "vadd", global = n, group = 1,
    args = { a:input(), b:input(), c:output(), kt.int(n) }, source = [[
__kernel void vadd(__global const float *a, __global const float *b, __global float *c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i] + (float)SALT * 0.0f;
}]] }
  k:param("WG", { 16, 32, 64, 128 }, { group_x = "mul" })
  k:param("SALT", { 1, 2, 3, 4, 5, 6 })
  k:reference(c, function(ref) for i = 0, n - 1 do ref[i] = a[i] + b[i] end end)
  return tuner:tune(k, { search = "exhaustive", progress = false, repeats = 3 })
end

local function best_of(f)
  local best = math.huge
  for _ = 1, o.rounds do
    local s = f()
    if s < best then best = s end
  end
  return best
end

local function per_config(device)
  return best_of(function()
    local t0 = kt.clock()
    local r = tuning(device)
    return (kt.clock() - t0) / #r * 1e3
  end)
end

local function transfers(device)
  local tuner = kt.tuner(device)
  local n = o.mib * (1 << 20) // 4
  local x = kt.array("float", n):random(3)
  local k = tuner:kernel{ name = "touch", global = 1, group = 1, args = { x:inout() },
    source = "__kernel void touch(__global float *x) { x[0] = x[0]; }" }
  return best_of(function()
    local t0 = kt.clock()
    tuner:run(k, {})
    return kt.clock() - t0
  end)
end

print(("%-22s %14s %16s"):format("device", "ms/config", ("run, %d MiB in+out (s)"):format(o.mib)))
for _, device in ipairs({ "opencl:0:0", "mpi:1:opencl:0:0" }) do
  print(("%-22s %14.1f %16.3f"):format(device, per_config(device), transfers(device)))
end
