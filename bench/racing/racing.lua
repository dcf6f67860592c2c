-- bench/racing: is a racing rule (early_stop) safe? Over recorded per-run samples (each
-- configuration's timed runs in the order they ran: Kernel Tuner caches' "times", ktlua's
-- samples_ms), a tuning is replayed in random orders: each configuration's first `runs` samples
-- decide whether it is cut, as core/eval/measure.c decides (clearly_slower); one not cut keeps
-- all its samples, and its time is their median. Per file and rule it prints:
--   cut: the configurations cut, of those with samples (mean over the orders);
--   saved: the timed runs saved, of all, in a tuning of --repeats timed runs (default 7) or as
--     many as a configuration has (a cut one keeps only its first runs);
--   near: configurations within 5% of the best (full medians) ever cut, over all orders;
--   same: orders whose best has the time of the best without racing (of the configurations
--     tied at that time, the first in the order wins).
--   ktlua bench/racing/racing.lua [--orders=N] [--rules=runs:factor:spread:noise,...] FILE...
-- A rule is runs, factor (the least ratio to the best's time), spread (the most the first runs
-- may differ, relative to their fastest) and noise (how many times the best's own relative
-- spread is added to the ratio); --resolution_us adds twice a timer's resolution to the bound.
local kt = require "ktlua"

local opt = { orders = 50, rules = "2:2:0.1:0,2:1.3:0.1:0,2:1.2:0.1:3,2:1.1:0.1:3,1:1.2:1e9:3,2:1.05:0.1:0",
  resolution_us = 0.5, repeats = 7 }
local files = {}
for _, a in ipairs(arg) do
  local k, v = a:match("^%-%-([%w_]+)=(.+)$")
  if k and opt[k] ~= nil then opt[k] = tonumber(v) or v
  elseif a:sub(1, 2) == "--" then error("unknown option " .. a)
  else files[#files + 1] = a end
end
assert(#files > 0, "usage: racing.lua [--orders=N] [--rules=...] FILE...")

local rules = {}
for r in opt.rules:gmatch("[^,]+") do
  local runs, factor, spread, noise = r:match("^(%d+):([%d.e]+):([%d.e]+):([%d.e]+)$")
  assert(runs, "a rule is runs:factor:spread:noise, not " .. r)
  rules[#rules + 1] = { name = r, runs = tonumber(runs), factor = tonumber(factor),
                        spread = tonumber(spread), noise = tonumber(noise) }
end

local function median(x, n)
  local s = {}
  for i = 1, n do s[i] = x[i] end
  table.sort(s)
  return n % 2 == 1 and s[(n + 1) // 2] or (s[n // 2] + s[n // 2 + 1]) / 2
end

local function range(x, n)
  local lo, hi = x[1], x[1]
  for i = 2, n do lo, hi = math.min(lo, x[i]), math.max(hi, x[i]) end
  return lo, hi
end

-- The configurations with at least two samples, their full medians and relative spreads.
local function read(path)
  local r = kt.load(path)
  local list = {}
  for i = 1, #r do
    local s = r[i].status == "ok" and r[i].samples_ms
    if s and #s >= 2 then
      local lo, hi = range(s, #s)
      local m = median(s, #s)
      list[#list + 1] = { samples = s, median = m, rel = (hi - lo) / m }
    end
  end
  return list
end

-- core/eval/measure.c's clearly_slower, on ms.
local function cut(rule, c, best)
  local lo, hi = range(c.samples, rule.runs)
  local ratio = math.max(rule.factor, 1 + rule.noise * best.rel)
  return lo > ratio * best.median + 2 * opt.resolution_us / 1e3 and hi - lo <= rule.spread * lo
end

local function shuffle(n, seed)
  local p = {}
  for i = 1, n do p[i] = i end
  local x = seed * 2654435761 % 4294967296
  for i = n, 2, -1 do
    x = (x * 1103515245 + 12345) % 2147483648
    local j = x % i + 1
    p[i], p[j] = p[j], p[i]
  end
  return p
end

local function replay(rule, list, order)
  local best, ncut, saved, total, near = nil, 0, 0, 0, {}
  for _, i in ipairs(order) do
    local c = list[i]
    local n = math.min(#c.samples, opt.repeats)
    total = total + n
    if best and n > rule.runs and cut(rule, c, best) then
      ncut = ncut + 1
      saved = saved + n - rule.runs
      near[i] = true
    elseif not best or c.median < best.median then
      best = c
    end
  end
  return best, ncut, saved / total, near
end

print(("%-44s %-16s %8s %7s %5s %5s %6s"):format("file", "rule", "configs", "cut", "saved", "near", "same"))
for _, path in ipairs(files) do
  local list = read(path)
  local truth
  for _, c in ipairs(list) do if not truth or c.median < truth.median then truth = c end end
  for _, rule in ipairs(rules) do
    local cuts, saved, same, near = 0, 0, 0, 0
    local ever = {}
    for seed = 1, opt.orders do
      local best, ncut, s, cutset = replay(rule, list, shuffle(#list, seed))
      cuts, saved = cuts + ncut, saved + s
      if best.median == truth.median then same = same + 1 end -- ties: one of equal times
      for i in pairs(cutset) do ever[i] = true end
    end
    for i in pairs(ever) do if list[i].median <= 1.05 * truth.median then near = near + 1 end end
    print(("%-44s %-16s %8d %6.1f%% %4.0f%% %5d %3d/%d"):format(path:match("[^/]*$"), rule.name, #list,
      100 * cuts / opt.orders / #list, 100 * saved / opt.orders, near, same, opt.orders))
  end
end
