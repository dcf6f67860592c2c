-- bench/overhead/uploads.lua: how fast data goes to and from an isolated tuner's device, through
-- its device process's staging area (core/device/backend_remote.c): a launcher writes N MiB into
-- a buffer of the tuner (run:write, blocking) and reads it back (run:read, blocking), `reps`
-- times, each timed on the host clock around the call; printed as MB/s (10^6 bytes per second),
-- the best and the median of the reps. Before and after them, a tuning of one configuration
-- whose argument is that array: its set-up (results:summary().setup_ms) is the tuning's host copy
-- of the array, the device buffers (the array's, its zone, a pristine copy), the upload and the
-- zone's fill; the first is a fresh tuner's (its device process's first transfers).
--   ktlua bench/overhead/uploads.lua [--device=ID] [--mib=256] [--reps=5] [--inprocess]
local kt = require "ktlua"
local opt = require("ktlua.cli").options(arg, { device = "default", mib = 256, reps = 5,
                                              inprocess = false }, "bench/overhead/uploads.lua")

local tuner = kt.tuner(opt.device, { isolate = not opt.inprocess })
local n = opt.mib * (1 << 20) // 4
local a = kt.array("int", n):fill(function(i) return i end)
local host, back = kt.array("int", n):fill(function(i) return n - i end), kt.array("int", n)
-- Touches one element, so that the launcher launches something.
local source = tuner.device.backend == "cuda"
  and [[extern "C" __global__ void touch(int *a) { if (threadIdx.x == 0 && blockIdx.x == 0) a[0] += 0; }]]
  or [[__kernel void touch(__global int *a) { if (get_global_id(0) == 0) a[0] += 0; }]]
local k = tuner:kernel{ source = source, name = "touch", global = 1, group = 1, args = { a:inout() } }
k:param("X", { 1 })
local bytes = n * 4
local function setup(when)
  local ms = tuner:tune(k, { repeats = 1 }):summary().setup_ms
  print(("  a tuning's set-up, %s: %.1f ms (%.0f MB/s of the array)"):format(when, ms,
    bytes / (ms / 1e3) / 1e6))
end
print(("%s, %s, %d MiB, %d reps"):format(tuner.device.id, tuner.isolated and "isolated" or "in-process",
  opt.mib, opt.reps))
setup("the first")

local writes, reads = {}, {}
k:launcher(function(run)
  run:launch(k)
  for r = 1, opt.reps do
    local t0 = kt.clock()
    run:write(a, host)
    local t1 = kt.clock()
    run:read(a, back)
    local t2 = kt.clock()
    writes[r], reads[r] = t1 - t0, t2 - t1
  end
end)
local r = tuner:run(k, { X = 1 })
assert(r.status == "ok", r.error)
assert(back[0] == n and back[n - 1] == 1, "the data read back differs from the data written")

local function rates(times)
  table.sort(times)
  return bytes / times[1] / 1e6, bytes / times[(#times + 1) // 2] / 1e6
end
print(("  write (upload): best %.0f MB/s, median %.0f MB/s"):format(rates(writes)))
print(("  read (back):    best %.0f MB/s, median %.0f MB/s"):format(rates(reads)))
setup("again")
