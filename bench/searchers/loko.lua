-- bench/searchers/loko.lua: leave-one-kernel-out, from tables that
-- bench/searchers/run.lua printed.
--
--   build/ktlua bench/searchers/loko.lua OUTPUT.md [OUTPUT.md ...]
--
-- Every searcher (or variant) in the tables is a candidate setting for
-- the default searcher. For each kernel (the dataset name up to its first
-- "_": gemm, convolution, pnpoly), the setting is chosen on the datasets
-- of the other kernels (highest mean at 2% and 5%, averaged, among those
-- at or above 0.90 at 2% on every one of them, if any), then measured on
-- the datasets of the kernel left out. A default that generalises does as
-- well on the kernel it did not see as on those it was chosen on.
local rows = {} -- rows[dataset][setting] = {[pct] = mean}
local pcts = {}

for _, path in ipairs(arg) do
  local dataset, cols
  for line in io.lines(path) do
    local name = line:match("^### (%S+) %(")
    if name then dataset, cols = name, nil end
    if dataset and line:match("^| searcher |") then
      cols = {}
      for pct in line:gmatch("(%d+)%% %(") do cols[#cols + 1] = tonumber(pct) end
    elseif dataset and cols and line:match("^| [^-]") then
      local setting = line:match("^| ([^|]-) |")
      local cells, i = {}, 0
      for mean in line:gmatch("| (%d%.%d+) / ") do
        i = i + 1
        cells[cols[i]] = tonumber(mean)
        pcts[cols[i]] = true
      end
      rows[dataset] = rows[dataset] or {}
      rows[dataset][setting] = cells
    end
  end
end

local function kernel(dataset) return dataset:match("^([^_]+)") end

local kernels, settings, seen = {}, {}, {}
for dataset, by in pairs(rows) do
  if not seen[kernel(dataset)] then seen[kernel(dataset)] = true; kernels[#kernels + 1] = kernel(dataset) end
  for s in pairs(by) do settings[s] = true end
end
table.sort(kernels)

-- Mean at 2% and 5% over the datasets kept, and the least at 2%; nil if a
-- setting was not measured on one of them.
local function judge(setting, keep)
  local sum, n, least = 0, 0, math.huge
  for dataset, by in pairs(rows) do
    if keep(dataset) then
      local c = by[setting]
      if not (c and c[2] and c[5]) then return nil end
      sum, n, least = sum + (c[2] + c[5]) / 2, n + 1, math.min(least, c[2])
    end
  end
  return n > 0 and sum / n or nil, least
end

io.write("| left out | chosen on the others | its mean at 2% / 5% there | on the kernel left out: mean at 2% / 5%, least at 2% |\n|---|---|---|---|\n")
local names = {}
for s in pairs(settings) do if s ~= "random" then names[#names + 1] = s end end
table.sort(names)
for _, out in ipairs(kernels) do
  local best, best_score, best_ok
  for _, s in ipairs(names) do
    local score, least = judge(s, function(d) return kernel(d) ~= out end)
    local ok = least and least >= 0.90
    if score and (not best or (ok and not best_ok) or (ok == best_ok and score > best_score)) then
      best, best_score, best_ok = s, score, ok
    end
  end
  if best then
    local m2, m5, least, n = 0, 0, math.huge, 0
    for dataset, by in pairs(rows) do
      if kernel(dataset) == out and by[best] then
        m2, m5, n = m2 + by[best][2], m5 + by[best][5], n + 1
        least = math.min(least, by[best][2])
      end
    end
    io.write(("| %s | %s | %.3f | %.3f / %.3f, %.3f |\n"):format(out, best, best_score, m2 / n,
      m5 / n, least))
  end
end
