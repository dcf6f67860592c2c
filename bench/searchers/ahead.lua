-- bench/searchers/ahead.lua: what bestfirst's `ahead` (proposals in flight)
-- costs a device tuning in time: mm (record/mm.cu) tuned with bestfirst at
-- ahead 8, 4, 2 and 1, and with renew (8 in flight, taken back after each
-- result: the proposals of ahead 1) without and with pairs 4 (and with 4 and
-- 2 in flight), the program
-- cache off, to a count and to a time limit; `withdrawn`: the proposals
-- taken back for good, whose compiles went unused.
--   ktlua bench/searchers/ahead.lua [--device=ID] [--count=N] [--seconds=S] [--seeds=N]
local kt = require "ktlua"
local opt = {device = "cuda:0", count = 45, seconds = 5, seeds = 3}
for _, a in ipairs(arg) do
  local k, v = a:match("^%-%-(%w+)=(.+)$")
  if not (k and opt[k] ~= nil) then error("unknown argument " .. a) end
  opt[k] = tonumber(v) or v
end
local here = arg[0]:match("^(.*)/[^/]*$") or "."
local n = 2048
local tuner = kt.tuner(opt.device, {cache = false})
local a, b, c = kt.array("float", n * n):random(1), kt.array("float", n * n):random(2), kt.array("float", n * n)
local function kernel()
  local k = tuner:kernel{file = here .. "/record/mm.cu", name = "mm", global = {n, n}, group = {1, 1},
    args = {c:output(), a:input(), b:input(), kt.int(n)}}
  k:param("block_size_x", {8, 16, 32, 64}, {group_x = "mul"})
  k:param("block_size_y", {1, 2, 4, 8, 16, 32}, {group_y = "mul"})
  k:param("tile_size_x", {1, 2, 4, 8}, {global_x = "div"})
  k:param("tile_size_y", {1, 2, 4, 8}, {global_y = "div"})
  k:param("use_local", {0, 1})
  k:param("tile_k", {8, 16, 32})
  k:param("padding", {0, 1})
  k:constraint({"block_size_x", "block_size_y"}, function(x, y) return x * y >= 32 and x * y <= 1024 end)
  k:constraint({"use_local", "tile_k", "padding"}, function(l, t, p) return l == 1 or (t == 8 and p == 0) end)
  k:prune{divisible = false}
  return k
end
local SETTINGS = {{"8", {ahead = 8}}, {"4", {ahead = 4}}, {"2", {ahead = 2}}, {"1", {ahead = 1}},
                  {"8, renew 1", {renew = 1}}, {"8, renew 1, pairs 4", {renew = 1, pairs = 4}},
                  {"4, renew 1, pairs 4", {ahead = 4, renew = 1, pairs = 4}},
                  {"2, renew 1, pairs 4", {ahead = 2, renew = 1, pairs = 4}}}
print("| ahead | stop | seed | evaluated | withdrawn | seconds | best ms |")
print("|---|---|---|---|---|---|---|")
for _, stop in ipairs{{count = opt.count}, {seconds = opt.seconds}} do
  for _, setting in ipairs(SETTINGS) do
    for seed = 1, opt.seeds do
      local search = {"bestfirst", seed = seed}
      for k, v in pairs(setting[2]) do search[k] = v end
      local t0 = kt.clock()
      local r = tuner:tune(kernel(), {search = search, stop = stop, repeats = 3, progress = false,
        fail_fast = false})
      local t1 = kt.clock()
      local best = r:best()
      print(("| %s | %s | %d | %d | %d | %.1f | %s |"):format(setting[1], stop.count and
        ("count " .. stop.count) or ("%d s"):format(stop.seconds), seed, #r, r:summary().withdrawn,
        t1 - t0, best and ("%.4f"):format(best.time_ms) or "-"))
    end
  end
end
