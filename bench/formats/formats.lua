-- Reading and writing the exchange formats: for each recorded file (the
-- shared datasets' Kernel Tuner caches and formats/ T4 and KTT files),
-- the time of kt.load, of kt.replay, and of writing the results as T4,
-- as a Kernel Tuner cache and as ktlua JSON (process CPU time, os.clock:
-- the best of `rounds`; a write's sync to disk is not in it), with the
-- written files' sizes.
--   ktlua bench/formats/formats.lua [--datasets=../shared/datasets] [--rounds=3]
local kt = require "ktlua"
local o = require("ktlua.cli").options(arg, { datasets = "../shared/datasets", rounds = 3 })

local files = {
  "formats/pnpoly_RTX_3090_T4.json.gz", "formats/convolution_RTX_3090_T4.json.gz",
  "formats/pnpoly_RTX_3090_KTT.json.gz", "pnpoly_RTX_3090.json.gz", "convolution_RTX_3090.json.gz",
  "gemm_RTX_3090.json.gz",
}

-- The best of o.rounds wall times of fn, in ms.
local function best_ms(fn)
  local best = math.huge
  for _ = 1, o.rounds do
    local t0 = os.clock()
    fn()
    best = math.min(best, (os.clock() - t0) * 1e3)
  end
  return best
end

local function size_kb(path)
  local f = assert(io.open(path, "rb"))
  local n = f:seek("end")
  f:close()
  return n / 1024
end

local out = os.tmpname()
print("| file | records | load | replay | write T4 | write cache | write JSON | T4 size | cache size |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for _, name in ipairs(files) do
  local path = o.datasets .. "/" .. name
  local r = kt.load(path)
  local load = best_ms(function() kt.load(path) end)
  local replay = best_ms(function() kt.replay(path) end)
  local t4 = best_ms(function() r:write(out .. ".t4", "t4") end)
  local cache = best_ms(function() r:write(out .. ".cache", "kernel-tuner-cache") end)
  local json = best_ms(function() r:write(out .. ".json") end)
  print(("| %s | %d | %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.0f KiB | %.0f KiB |"):format(
    name, #r, load, replay, t4, cache, json, size_kb(out .. ".t4"), size_kb(out .. ".cache")))
end
for _, ext in ipairs({ "", ".t4", ".cache", ".json" }) do os.remove(out .. ext) end
