-- How long a report takes (results:report: gathering, gnuplot, the page)
-- and how large the page is, for replays of the recorded datasets with
-- growing numbers of evaluations (random search, failures included).
--
--   ktlua bench/report/report.lua [--datasets=DIR] [--counts=500,5000,17956] [--png]
local kt = require "ktlua"
local o = require("ktlua.cli").options(arg, { datasets = os.getenv("KTLUA_DATASETS")
  or "../shared/datasets", counts = "500,5000,17956", png = false },
  "bench/report/report.lua: the time and size of HTML reports")

local counts = {}
for n in o.counts:gmatch("%d+") do counts[#counts + 1] = tonumber(n) end

local page = os.tmpname() .. ".html"
print("| dataset | evaluations | parameters | failed | report (s) | page (KiB) |")
print("|---|---:|---:|---:|---:|---:|")
for _, name in ipairs({ "pnpoly_RTX_3090", "convolution_RTX_3090", "gemm_RTX_3090" }) do
  local path = o.datasets .. "/" .. name .. ".json.gz"
  local f = io.open(path, "rb")
  if not f then
    print(("| %s | (not found in %s) | | | | |"):format(name, o.datasets))
  else
    f:close()
    local rec = kt.replay(path)
    local done = {}
    for _, n in ipairs(counts) do
      n = math.min(n, rec:count())
      if done[n] then goto next end
      done[n] = true
      local r = rec:tune{ search = "random", seed = 1, stop = { count = n } }
      local s = r:summary()
      local t0 = kt.clock()
      local written = r:report(page, { png = o.png })
      local took = kt.clock() - t0
      local size = io.open(page, "rb"):seek("end")
      for _, p in ipairs(written) do os.remove(p) end
      print(("| %s | %d | %d | %d | %.2f | %d |"):format(name, #r, #r.params,
        s.evaluated - s.statuses.ok, took, size // 1024))
      ::next::
    end
  end
end
