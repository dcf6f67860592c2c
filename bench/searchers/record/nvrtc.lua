-- bench/searchers/record/nvrtc.lua: compiles configurations of a kernel of
-- record/spaces.lua through NVRTC without a GPU (kt.cuda_compile), as the
-- CUDA recording would: a check before device time is spent on it.
--   ktlua nvrtc.lua --kernel=NAME [--count=N] [--arch=sm_90] [--bat=DIR] [--n=N] [--small]
-- The kernel is made on an OpenCL tuner (the default device: PoCL will do) as for CUDA
-- (opt.backend = "cuda"); --count configurations (12 by default) drawn at random from its space (seeded)
-- (every one with --count=0) are compiled with their #defines, the prelude and the source; each
-- line says ok or the compiler's first error. Exits non-zero if any failed.
local here = arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/../?.lua;" .. package.path
local kt = require "ktlua"
local lib = require "record.lib"

local opt = {kernel = "", count = 12, arch = "sm_90", bat = here .. "/../bat/benchmarks", n = false, small = false,
  backend = "cuda"}
for _, a in ipairs(arg) do
  local k, v = a:match("^%-%-(%w+)=(.+)$")
  if a == "--small" then opt.small = true
  elseif k and opt[k] ~= nil then opt[k] = tonumber(v) or v
  else error("unknown argument " .. a) end
end

local family = opt.kernel:match("^%a+") -- coulomb2d: record/coulomb.lua
local ok_module, module = pcall(require, "record." .. opt.kernel)
if not ok_module then module = require("record." .. family) end
local make = module[opt.kernel] or error("--kernel: no kernel " .. opt.kernel .. " in record/" .. family .. ".lua")

local tuner = kt.tuner(os.getenv("KTLUA_DEVICE") or "opencl")
local spec -- what the family gave tuner:kernel
local proxy = setmetatable({kernel = function(_, s) spec = s; return tuner:kernel(s) end}, {__index = tuner})
local k = make(proxy, opt)
local space = k:space()
local n, failed = space:count(), 0
local params = {}
for i, p in ipairs(space:params()) do params[i] = p.name end
local count = opt.count == 0 and n or math.min(opt.count, n)
print(("%s: %d configurations, %d compiled for %s"):format(opt.kernel, n, count, opt.arch))
local pick, seen = {}, {} -- every index, or count of them drawn at random (the same each time)
math.randomseed(1)
while #pick < count do
  local i = count == n and #pick or math.random(0, n - 1)
  if not seen[i] then seen[i], pick[#pick + 1] = true, i end
end
table.sort(pick)
for _, i in ipairs(pick) do
  local cfg = space:config(i)
  local defines = {}
  for _, p in ipairs(params) do
    local v = cfg[p]
    defines[#defines + 1] = ("#define %s %s\n"):format(p, v == true and 1 or v == false and 0 or tostring(v))
  end
  local function text(t) if type(t) == "function" then return t(cfg) end return t or "" end
  local source = table.concat(defines) .. text(spec.prelude) .. "\n" ..
    (spec.source and text(spec.source) or lib.read(spec.file))
  local out, log = kt.cuda_compile{source = source, arch = opt.arch, names = {spec.name},
    options = spec.options, name = opt.kernel .. ".cu"}
  local line = {}
  for _, p in ipairs(params) do line[#line + 1] = p .. "=" .. tostring(cfg[p]) end
  if out then print("ok     " .. table.concat(line, " "))
  else
    failed = failed + 1
    print("FAILED " .. table.concat(line, " ") .. "\n  " .. (log:match("[^\n]*error[^\n]*") or log:sub(1, 300)))
  end
end
tuner:close()
print(("%d of %d failed"):format(failed, count))
os.exit(failed == 0 and 0 or 1)
