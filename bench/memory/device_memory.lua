-- The memory of the device process while a tuning compiles one distinct
-- program per configuration (a trivial kernel, X = 1..N reaching it as a
-- #define): VmRSS of the tuner's process and of its device process(es),
-- from /proc, every `sample` configurations.
--   ktlua bench/memory/device_memory.lua [--configs=3125] [--sample=250] [--device=cpu]
--                                        [--rounds=1] [--growth=128]
-- rounds > 1 tunes the same sources again with the same tuner (from its
-- program cache where they are still in it, else compiled again); growth
-- is the tuner's device_growth (MiB; 0: the device process is never
-- replaced).
local kt = require "ktlua"
local lfs = require "lfs"
local o = require("ktlua.cli").options(arg, { configs = 3125, sample = 250, device = "default",
                                              rounds = 1, growth = 128 })

local function read(path)
  local f = io.open(path)
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

local self_pid = tonumber(read("/proc/self/stat"):match("^(%d+)"))

local function rss_mb(pid)
  local status = read("/proc/" .. pid .. "/status")
  local kb = status and status:match("VmRSS:%s*(%d+)")
  return kb and tonumber(kb) / 1024
end

-- The tuner's children (its device process), whichever thread forked them.
local function children()
  local pids = {}
  for tid in lfs.dir("/proc/" .. self_pid .. "/task") do
    for pid in (read("/proc/" .. self_pid .. "/task/" .. tid .. "/children") or ""):gmatch("%d+") do
      pids[#pids + 1] = pid
    end
  end
  return pids
end

local values = {}
for i = 1, o.configs do values[i] = i end
local a = kt.array("float", 64)
local tuner = kt.tuner(o.device, { device_growth = o.growth })
local k = tuner:kernel{ source = "__kernel void k(__global float *a) { a[get_global_id(0)] = X; }",
                        name = "k", global = 64, args = { a:output() } }
k:param("X", values)

print(("device %s, %d configurations, sampled every %d, device_growth %g MiB")
  :format(tuner.device.name, o.configs, o.sample, o.growth))
print("round  configs  tuner_MB  device_MB  device_pid  renewals     s")
local t0 = os.time()
local function sample(round, n)
  local kids = children()
  local mb = {}
  for i, pid in ipairs(kids) do mb[i] = ("%.0f"):format(rss_mb(pid) or 0) end
  print(("%5d  %7d  %8.0f  %9s  %10s  %8d  %4d"):format(round, n, rss_mb(self_pid),
    table.concat(mb, "+"), table.concat(kids, ","), tuner.renewals, os.time() - t0))
  io.stdout:flush()
end
sample(0, 0)
for round = 1, o.rounds do
  local seen = 0
  local r = tuner:tune(k, { search = "exhaustive", repeats = 1, progress = function()
    seen = seen + 1
    if seen % o.sample == 0 then sample(round, seen) end
  end })
  if seen % o.sample ~= 0 then sample(round, seen) end
  local counts = {}
  for status, n in pairs(r:summary().statuses) do counts[#counts + 1] = status .. " " .. n end
  table.sort(counts)
  print(("round %d: %s"):format(round, table.concat(counts, ", ")))
end
