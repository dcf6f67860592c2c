-- bench/searchers/loko.lua: leave-one-kernel-out and leave-one-GPU-out, from
-- tables that bench/searchers/run.lua printed.
--
--   build/ktlua bench/searchers/loko.lua [--by kernel|gpu|both] OUTPUT.md [OUTPUT.md ...]
--
-- Every searcher (or variant) in the tables is a candidate setting for the
-- default searcher. A dataset's kernel is its name up to the first "_"
-- (gemm, convolution, pnpoly, conv2d, ...); its GPU the rest, without a
-- subspace's "~PARAM=VALUE" (bench/searchers/subspaces.lua) or a recorded
-- variant's ".VARIANT" (conv2d_H100_80GB_HBM3.filter7). For each kernel
-- (or GPU), the setting is chosen on the datasets of the others (highest mean
-- at 2% and 5%, averaged, among those at or above 0.90 at 2% on every one of
-- them, if any), then measured on the datasets left out: the mean and the
-- least dataset mean at each budget, and the least 5th percentile over the
-- seeds (run.lua's p5). The last rows put every setting on all the
-- datasets left out in turn (each dataset counted once per group it is in).
-- A default that generalises does as well where it was not chosen as where
-- it was.
local by = "both"
local files = {}
local i = 1
while i <= #arg do
  if arg[i] == "--by" then by, i = arg[i + 1], i + 2
  else files[#files + 1], i = arg[i], i + 1 end
end
assert(by == "kernel" or by == "gpu" or by == "both", "--by: kernel, gpu or both")

local rows = {} -- rows[dataset][setting] = {[pct] = {mean =, p5 =}}
local pcts, pctset = {}, {}

for _, path in ipairs(files) do
  local dataset, cols
  for line in io.lines(path) do
    local name = line:match("^### (%S+) %(")
    if name then dataset, cols = name, nil end
    if dataset and line:match("^| searcher |") then
      cols = {}
      for pct in line:gmatch("(%d+)%% %(") do
        cols[#cols + 1] = tonumber(pct)
        if not pctset[tonumber(pct)] then pctset[tonumber(pct)] = true; pcts[#pcts + 1] = tonumber(pct) end
      end
    elseif dataset and cols and line:match("^| [^-]") then
      local setting = line:match("^| ([^|]-) |")
      local cells, k = {}, 0
      for mean, p5 in line:gmatch("| (%d%.%d+) / (%d%.%d+) / ") do
        k = k + 1
        cells[cols[k]] = {mean = tonumber(mean), p5 = tonumber(p5)}
      end
      rows[dataset] = rows[dataset] or {}
      rows[dataset][setting] = cells
    end
  end
end
table.sort(pcts)

local group_of = {
  kernel = function(d) return d:match("^([^_~]+)") end,
  gpu = function(d) return (d:gsub("[~.].*$", ""):match("^[^_]+_(.+)$") or d) end,
}

local settings, seen = {}, {}
for _, byset in pairs(rows) do
  for s in pairs(byset) do if not seen[s] then seen[s] = true; settings[#settings + 1] = s end end
end
table.sort(settings)

-- Mean of (2% + 5%) / 2 over the datasets kept and the least at 2%; nil if
-- a setting was not measured on one of them.
local function judge(setting, keep)
  local sum, n, least = 0, 0, math.huge
  for dataset, byset in pairs(rows) do
    if keep(dataset) then
      local c = byset[setting]
      if not (c and c[2] and c[5]) then return nil end
      sum, n, least = sum + (c[2].mean + c[5].mean) / 2, n + 1, math.min(least, c[2].mean)
    end
  end
  return n > 0 and sum / n or nil, least
end

-- Mean, least mean and least p5 at each budget over the datasets kept.
local function measure(setting, keep)
  local out = {}
  for _, pct in ipairs(pcts) do
    local sum, n, least, p5 = 0, 0, math.huge, math.huge
    for dataset, byset in pairs(rows) do
      local c = keep(dataset) and byset[setting] and byset[setting][pct]
      if c then sum, n, least, p5 = sum + c.mean, n + 1, math.min(least, c.mean), math.min(p5, c.p5) end
    end
    out[pct] = n > 0 and {mean = sum / n, least = least, p5 = p5, n = n} or nil
  end
  return out
end

local function cells(m)
  local t = {}
  for _, pct in ipairs(pcts) do
    local c = m[pct]
    t[#t + 1] = c and ("%.3f / %.3f / %.3f"):format(c.mean, c.least, c.p5) or "-"
  end
  return table.concat(t, " | ")
end

local function head(first)
  local t = {first}
  for _, pct in ipairs(pcts) do t[#t + 1] = ("%d%%: mean / least / p5"):format(pct) end
  return "| " .. table.concat(t, " | ") .. " |\n|" .. ("---|"):rep(#pcts + 1 + (first:find("|") and 1 or 0)) .. "\n"
end

local function leave_out(kind)
  local groupf, groups, gseen = group_of[kind], {}, {}
  for dataset in pairs(rows) do
    local g = groupf(dataset)
    if not gseen[g] then gseen[g] = true; groups[#groups + 1] = g end
  end
  table.sort(groups)
  io.write(("\n### Leave one %s out\n\n"):format(kind))
  io.write(head(kind .. " left out (datasets) | chosen on the others"))
  local chosen_on = {}
  for _, out in ipairs(groups) do
    local best, best_score, best_ok
    for _, s in ipairs(settings) do
      if s ~= "random" then
        local score, least = judge(s, function(d) return groupf(d) ~= out end)
        local ok = least and least >= 0.90
        if score and (not best or (ok and not best_ok) or (ok == best_ok and score > best_score)) then
          best, best_score, best_ok = s, score, ok
        end
      end
    end
    if best then
      chosen_on[out] = best
      local m = measure(best, function(d) return groupf(d) == out end)
      io.write(("| %s (%d) | %s | %s |\n"):format(out, m[pcts[1]].n, best, cells(m)))
    end
  end
  -- Every setting on the groups left out, and the choices above together.
  io.write("\n", head("setting, on every dataset (the left-out groups together)"))
  local choice = function(d) return chosen_on[groupf(d)] end
  local together = {}
  for _, pct in ipairs(pcts) do
    local sum, n, least, p5 = 0, 0, math.huge, math.huge
    for dataset, byset in pairs(rows) do
      local c = choice(dataset) and byset[choice(dataset)] and byset[choice(dataset)][pct]
      if c then sum, n, least, p5 = sum + c.mean, n + 1, math.min(least, c.mean), math.min(p5, c.p5) end
    end
    together[pct] = n > 0 and {mean = sum / n, least = least, p5 = p5, n = n} or nil
  end
  io.write(("| the choices above, each on its %s | %s |\n"):format(kind, cells(together)))
  for _, s in ipairs(settings) do
    io.write(("| %s | %s |\n"):format(s, cells(measure(s, function() return true end))))
  end
end

if by ~= "gpu" then leave_out("kernel") end
if by ~= "kernel" then leave_out("gpu") end
