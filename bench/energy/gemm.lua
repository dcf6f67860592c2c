-- bench/energy: the fastest GEMM configuration against the most energy-efficient one (NVML,
-- tune option energy). The tiled GEMM of bench/overhead/gemm.cu (CLTune's parameters), 2048^3,
-- N random configurations tuned three times with the same seed: without energy (compiling every
-- program), with energy = {window = W}, and without again (the cost baseline, as the second, with its
-- programs cached). Prints both configurations' time, energy per run, power, SM clock and
-- GFLOP/J, the energy the efficient one saves and its slowdown, the one of least energy-delay
-- product, the energy pass's cost per configuration, and the two configurations measured again
-- R times, with the window and with a longer one (the spread of the energy counter's readings).
--   ktlua bench/energy/gemm.lua [--device=ID] [--size=S] [--n=N] [--window=SECONDS] [--again=R]
--     [--long=SECONDS (the longer window)]
--     [--seed=SEED] [--json=FILE (the results with energy)]
local kt = require "ktlua"
local opt = require("ktlua.cli").options(arg, { device = "cuda:0", size = 2048, n = 60, window = 0.1,
  again = 3, long = 1.0, seed = 1, json = "" }, "bench/energy/gemm.lua")

local tuner = kt.tuner(opt.device)
local s = opt.size
local A, B, C = kt.array("float", s * s):random(3), kt.array("float", s * s):random(4), kt.array("float", s * s)
local k = dofile("bench/overhead/gemm_task.lua")(tuner, "bench/overhead/gemm.cu", s, A, B, C)
local flop = 2.0 * s * s * s

local function tune(energy, extra, window)
  local o = { search = "random", seed = opt.seed, stop = { count = opt.n }, progress = false,
              energy = energy and { window = window or opt.window } or nil }
  for key, v in pairs(extra or {}) do o[key] = v end
  local r = tuner:tune(k, o)
  return r, r:summary()
end

local function line(what, x)
  local m = x.metrics
  print(("%-22s %8.4f ms  %8.4f J/run  %6.1f W  %5.0f MHz  %6.1f GFLOP/J  %6.0f GFLOP/s   %s"):format(what,
    x.time_ms, m.energy, m.power, m.sm_clock or 0, flop / m.energy / 1e9, flop / x.time_ms / 1e6,
    ("TS_M=%d TS_N=%d WPT_M=%d WPT_N=%d TS_K=%d PAD=%d"):format(x.config.TS_M, x.config.TS_N,
      x.config.WPT_M, x.config.WPT_N, x.config.TS_K, x.config.PAD)))
end

print(("ktlua energy benchmark on %s (%s): GEMM %d^3, %d random configurations, energy window %.3f s"):format(
  tuner.device.name, tuner.device.id, s, opt.n, opt.window))
tune(false) -- compiles every program: the two below find them in the program cache
local r, sm = tune(true)
local _, plain = tune(false)
local ok = sm.statuses.ok
print(("without energy: %d configs (%d ok) in %.2f s; with energy: %d configs (%d ok) in %.2f s"):format(
  plain.evaluated, plain.statuses.ok, plain.wall_ms / 1e3, sm.evaluated, ok, sm.wall_ms / 1e3))
print(("energy pass cost: %.3f s per ok configuration (window %.3f s)"):format(
  (sm.wall_ms - plain.wall_ms) / 1e3 / ok, opt.window))
local fastest, frugal, edp
for i = 1, #r do
  local x = r[i]
  if x.status == "ok" and x.metrics and x.metrics.energy then
    if not fastest or x.time_ms < fastest.time_ms then fastest = x end
    if not frugal or x.metrics.energy < frugal.metrics.energy then frugal = x end
    if not edp or x.metrics.energy * x.time_ms < edp.metrics.energy * edp.time_ms then edp = x end
  end
end
line("fastest", fastest)
line("most energy-efficient", frugal)
line("least energy x delay", edp)
print(("the efficient one saves %.1f %% energy per run at a slowdown of %.1f %%"):format(
  100 * (1 - frugal.metrics.energy / fastest.metrics.energy), 100 * (frugal.time_ms / fastest.time_ms - 1)))
-- The two measured again: how far the energy readings spread.
for round = 1, opt.again do
  for _, window in ipairs({ opt.window, opt.long }) do
    local again = tune(true, { seeds = { fastest.config, frugal.config }, stop = { count = 2 } }, window)
    for i = 1, #again do
      local x = again[i]
      line(("%d, %.2f s: %s"):format(round, window, x.index == fastest.index and "fastest" or "efficient"), x)
    end
  end
end
if opt.json ~= "" then r:write(opt.json) end
