-- bench/overhead/searcher_cpu.lua: a searcher's own CPU per evaluation, on
-- a replayed space of 100,000 configurations (issue 40: under 10 µs on
-- average for budgets up to 5% of such a space).
--
--   build/ktlua bench/overhead/searcher_cpu.lua [--searchers forest,bestfirst,...]
--       [--seeds S] [--reps R] [--budgets 1,2,5] [--space FILE]
--
-- The space (written once to FILE, by default /tmp/ktlua-synthetic-100k.json,
-- as a Kernel Tuner cache) has six parameters, A to D of 10 values, E of 5,
-- F of 2: 100,000 configurations, of which those with A + B > 17 fail (3%).
-- Its times are a smooth function of the parameters with interactions
-- between pairs and a little seeded noise, so that a model-guided search
-- has something to learn and its fits grow as they would on a real space.
--
-- Per searcher and budget: the CPU time (os.clock) of S seeded replayed
-- tunings divided by their evaluations, the least of R repetitions (on a
-- machine shared with other work a run is slowed, never sped up), and the
-- same less random search's (the tuning loop's and the replay's own cost,
-- which a device tuning pays whatever the searcher): what the searcher
-- itself costs per evaluation.
local kt = require "ktlua"

local opt = {searchers = "random,forest,bestfirst,annealing", seeds = 3, reps = 3, budgets = "1,2,5",
             space = "/tmp/ktlua-synthetic-100k.json"}
local i = 1
while i <= #arg do
  local k = arg[i]:match("^%-%-(%w+)$")
  if not k or opt[k] == nil or arg[i + 1] == nil then
    error("usage: searcher_cpu.lua [--searchers LIST] [--seeds S] [--reps R] [--budgets 1,2,5] [--space FILE]")
  end
  opt[k] = arg[i + 1]
  i = i + 2
end
opt.seeds = assert(math.tointeger(tonumber(opt.seeds)), "--seeds: an integer")
opt.reps = assert(math.tointeger(tonumber(opt.reps)), "--reps: an integer")

local function write_space(path)
  local f = assert(io.open(path, "w"))
  local values = {A = 10, B = 10, C = 10, D = 10, E = 5, F = 2}
  local keys = {"A", "B", "C", "D", "E", "F"}
  f:write('{"schema_version": "1.1.0", "device_name": "synthetic", "kernel_name": "synthetic",\n')
  f:write('"tune_params_keys": ["A", "B", "C", "D", "E", "F"],\n"tune_params": {')
  for k, name in ipairs(keys) do
    local list = {}
    for v = 1, values[name] do list[v] = tostring(v) end
    f:write(k > 1 and ", " or "", '"', name, '": [', table.concat(list, ", "), "]")
  end
  f:write('},\n"objective": "time",\n"cache": {\n')
  local first, state = true, 12345
  local function noise() -- a seeded linear congruential generator: the same file everywhere
    state = (state * 1103515245 + 12345) % 2147483648
    return state / 2147483648
  end
  for a = 1, 10 do for b = 1, 10 do for c = 1, 10 do for d = 1, 10 do for e = 1, 5 do for g = 1, 2 do
    local key = ("%d,%d,%d,%d,%d,%d"):format(a, b, c, d, e, g)
    local entry
    if a + b > 17 then
      entry = ('{"A":%d,"B":%d,"C":%d,"D":%d,"E":%d,"F":%d,"time":"CompilationFailedConfig"}'):format(a, b, c, d, e, g)
    else
      local t = 1 + 0.05 * (a - 6) ^ 2 + 0.03 * (b - 3) ^ 2 + 0.02 * (c - d) ^ 2 + 0.1 * math.abs(e - 3)
        + (g == 2 and 0.2 * (a / 10) or 0.1) + 0.01 * (a * c % 7) + 0.02 * noise()
      entry = ('{"A":%d,"B":%d,"C":%d,"D":%d,"E":%d,"F":%d,"time":%.6f}'):format(a, b, c, d, e, g, t)
    end
    f:write(first and "" or ",\n", '"', key, '":', entry)
    first = false
  end end end end end end
  f:write("\n}}\n")
  f:close()
end

if not io.open(opt.space) then write_space(opt.space) end
local rec = kt.replay(opt.space)
io.write(("%s: %d configurations, %d seeds a cell, the least of %d repetitions; CPU per evaluation (µs): all / less random search's\n\n"):format(
  opt.space, rec:count(), opt.seeds, opt.reps))

local budgets = {}
for pct in opt.budgets:gmatch("[^,]+") do budgets[#budgets + 1] = tonumber(pct) end
local head = {"| searcher |"}
for _, pct in ipairs(budgets) do head[#head + 1] = (" %g%% (%d) |"):format(pct, math.ceil(pct / 100 * rec:count())) end
io.write(table.concat(head), "\n|---|", ("---|"):rep(#budgets), "\n")

local function cpu_per_eval(setting, count)
  local options = {setting:match("^([^:]+)")}
  for k, v in setting:gmatch(":(%w+)=([^:]+)") do options[k] = tonumber(v) or v end
  local least = math.huge
  for _ = 1, opt.reps do
    local t, evals = os.clock(), 0
    for seed = 1, opt.seeds do
      options.seed = seed
      evals = evals + #rec:tune{search = options, seed = seed, stop = {count = count}}
    end
    least = math.min(least, (os.clock() - t) / evals * 1e6)
  end
  return least
end

local base = {}
for _, pct in ipairs(budgets) do base[pct] = cpu_per_eval("random", math.ceil(pct / 100 * rec:count())) end
for setting in opt.searchers:gmatch("[^,]+") do
  local line = {"| " .. setting .. " |"}
  for _, pct in ipairs(budgets) do
    local all = setting == "random" and base[pct] or cpu_per_eval(setting, math.ceil(pct / 100 * rec:count()))
    line[#line + 1] = (" %.1f / %.1f |"):format(all, all - base[pct])
  end
  io.write(table.concat(line), "\n")
  io.flush()
end
