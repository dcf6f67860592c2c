-- bench/searchers/lofo.lua: searchers judged by leave-one-family-out on
-- every recorded space (design.md section 9, issue 40).
--
--   build/ktlua bench/searchers/lofo.lua [--spaces DIR,DIR,...] [--seeds S]
--       [--candidates SETTING,...] [--default SETTING] [--baselines SETTING,...]
--       [--cache FILE] [--refresh PATTERN] [--only PATTERN] [--per-space] [--summary]
--
-- A setting is run.lua's: a searcher's name, or name:option=value:... .
-- Every setting runs seeds 1..S (50) on every space (every .json or
-- .json.gz file of the folders: bench/searchers/spaces and the shared
-- datasets, ../shared/datasets or KTLUA_DATASETS, by default) to 5% of its
-- valid configurations (rounded up); the first 1% and 2% of the same runs
-- are scored too (a search with a larger budget begins with exactly the
-- proposals of a smaller one). A run's figure at a budget is optimum time
-- / best time found (rec:score): failed configurations cost an evaluation
-- and never win.
--
-- Families. A space's kernel is its file name up to the first "_" (or a
-- longer name of FAMILY's: builtin_vectors, gemm_bat); its
-- family is the kernel's algorithm (FAMILY below: gemm with mm and BAT's
-- GEMM, convolution with conv2d, ...), so that no fold holds a close
-- relative of what it leaves out. A kernel the table does not name is a
-- family of its own, and the output says so. A device family is the
-- space's GPU and backend (DEVICE below): Hopper CUDA, NVIDIA OpenCL, RTX
-- (the shared datasets), CPU (PoCL).
--
-- Protocol, for each family (then each device family) F: among the
-- candidates, the one with the highest mean at 2% over the other families
-- (each family's mean over its spaces, then the mean over the families:
-- a family of many spaces weighs as one) is chosen, and its figures on F's
-- spaces are F's held-out figures. The default and every baseline are
-- measured on the same folds, as fixed settings. Per fold and budget:
-- the mean over the fold's spaces of the mean over seeds, and in brackets
-- its standard error over the seeds (each seed's mean over the fold's
-- spaces; seeds are independent runs); then the worst space. Overall: the
-- mean over folds (standard error likewise) and the worst fold.
--
-- The rule for a default (issue 40): in no fold, at 2% or 5%, below
-- annealing or random-restart hill climbing by more than one standard
-- error of the difference (per seed, the default's fold mean less the
-- baseline's; seeds pair runs of the same index, which share nothing but
-- the number). Targets on leave-one-family-out: 1% mean >= 0.92; 2% mean
-- >= 0.95 and worst family >= 0.90; 5% mean >= 0.99.
--
-- --cache FILE keeps every (space, setting)'s per-seed figures, so that a
-- later call only runs what is new; --refresh PATTERN runs again the
-- settings whose text contains PATTERN. --per-space adds a table of every
-- setting on every space; --summary prints only one line per setting (its
-- mean over the families at each budget, its worst family at 2% and 5%, and
-- the folds where it loses to annealing or rrhc beyond a standard error).
local kt = require "ktlua"

-- The kernel algorithm of each kernel name: the file name up to the
-- first "_", or the longest of these names that the file name begins with
-- followed by "_" (builtin_vectors, gemm_bat). BAT's kernels go with the
-- same algorithm recorded otherwise (gemm_bat with gemm, CLBlast's Xgemm,
-- and mm; convolution_bat with convolution and conv2d).
local FAMILY = {
  gemm = "gemm", mm = "gemm", xgemm = "gemm", gemm_bat = "gemm",
  convolution = "convolution", conv2d = "convolution", convolution_bat = "convolution",
  pnpoly = "pnpoly",
  dedisp = "dedispersion", dedispersion = "dedispersion",
  nbody = "nbody", nbody_bat = "nbody",
  triad = "triad", triad_bat = "triad",
  stencil = "stencil",
  transpose = "transpose",
  hotspot = "hotspot",
  md5hash = "md5hash",
  fft = "fft",
  reduction = "reduction",
  coulomb = "coulomb",
  histogram = "histogram",
  matvec = "matvec",
  particles = "particles",
  expdist = "expdist",
  builtin_vectors = "builtin_vectors",
}

-- A space's name KERNEL_DEVICE[.VARIANT] parted: kernel, device, variant.
local function parts(name)
  local kernel
  for k in pairs(FAMILY) do
    if name:sub(1, #k + 1) == k .. "_" and (not kernel or #k > #kernel) then kernel = k end
  end
  kernel = kernel or name:match("^([^_]+)") or name
  local rest = name:sub(#kernel + 2)
  local device, variant = rest:match("^([^.]*)%.?(.*)$")
  return kernel, device or "", variant or ""
end

-- The device family of a space: a CPU through PoCL, the RTX GPUs of the
-- shared datasets, NVIDIA's OpenCL, Hopper through CUDA; else its device.
local function device_family(name)
  local _, device, variant = parts(name)
  local lower = name:lower()
  if lower:find("pocl", 1, true) or lower:find("cpu", 1, true) then return "CPU (PoCL)" end
  if device:match("^RTX") then return "RTX (shared datasets)" end
  if variant:find("opencl", 1, true) then return "NVIDIA OpenCL" end
  if device:match("^H100") or device:match("^H200") or device:match("^GH200") then return "Hopper CUDA" end
  return device
end

local BUDGETS = {1, 2, 5}
local RRHC = "greedy:sample=1:model=0:adjacent=0"
local NAMES = { -- shorter names in the tables
  [RRHC] = "rrhc",
}

local function parse_args(argv)
  local o = {
    spaces = "bench/searchers/spaces," .. (os.getenv("KTLUA_DATASETS") or "../shared/datasets"),
    seeds = 50, candidates = "bestfirst", baselines = "random,annealing," .. RRHC .. ",greedy,bestfirst",
  }
  local i = 1
  while i <= #argv do
    local a, v = argv[i], argv[i + 1]
    if a == "--per-space" then o.per_space, i = true, i + 1
    elseif a == "--summary" then o.summary, i = true, i + 1
    else
      if v == nil then error(a .. ": a value is missing (see the header of this file)") end
      if a == "--spaces" then o.spaces = v
      elseif a == "--seeds" then o.seeds = assert(math.tointeger(tonumber(v)), "--seeds: an integer")
      elseif a == "--candidates" then o.candidates = v
      elseif a == "--default" then o.default = v
      elseif a == "--baselines" then o.baselines = v
      elseif a == "--cache" then o.cache = v
      elseif a == "--refresh" then o.refresh = v
      elseif a == "--only" then o.only = v
      else error("unknown argument " .. a .. " (see the header of this file)") end
      i = i + 2
    end
  end
  assert(o.seeds >= 2, "--seeds: at least 2 (a standard error needs two)")
  return o
end

local function list(text)
  local t = {}
  for s in text:gmatch("[^,]+") do t[#t + 1] = s end
  return t
end

local function spaces(dirs, only)
  local found, seen = {}, {}
  for _, dir in ipairs(list(dirs)) do
    local ls = assert(io.popen('ls "' .. dir .. '" 2>/dev/null'))
    for file in ls:lines() do
      local name = file:match("^(.-)%.json%.gz$") or file:match("^(.-)%.json$")
      if name and not seen[name] and (not only or name:find(only, 1, true)) then
        seen[name] = true
        local kernel = parts(name)
        found[#found + 1] = {name = name, path = dir .. "/" .. file, kernel = kernel,
                             family = FAMILY[kernel:lower()], device = device_family(name)}
        if not found[#found].family then
          found[#found].family, found[#found].unnamed = kernel:lower(), true
        end
      end
    end
    ls:close()
  end
  table.sort(found, function(a, b) return a.name < b.name end)
  return found
end

-- Settings whose options do not fit name:option=value (a portfolio's members
-- carry options of their own), by the name the command line gives them.
local ALIASES = {
  bandit = {"portfolio", bandit = 1,
            members = "forest+greedy:sample=1:model=0:adjacent=0+annealing"},
}

local function search_option(setting, seed)
  if ALIASES[setting] then
    local options = {seed = seed}
    for k, v in pairs(ALIASES[setting]) do options[k] = v end
    return options
  end
  local options = {setting:match("^([^:]+)"), seed = seed}
  for k, v in setting:gmatch(":(%w+)=([^:]+)") do options[k] = tonumber(v) or v end
  return options
end

-- ---- the runs, and the cache of their figures ----

local cache = {} -- cache[space][setting] = {[budget index] = {per seed}}

local function cache_load(path)
  local f = path and io.open(path)
  if not f then return end
  for line in f:lines() do
    local space, setting, rest = line:match("^([^\t]+)\t([^\t]+)\t(.*)$")
    if space then
      local per = {{}, {}, {}}
      for a, b, c in rest:gmatch("([%d.e-]+),([%d.e-]+),([%d.e-]+)") do
        per[1][#per[1] + 1], per[2][#per[2] + 1], per[3][#per[3] + 1] = tonumber(a), tonumber(b), tonumber(c)
      end
      cache[space] = cache[space] or {}
      cache[space][setting] = per
    end
  end
  f:close()
end

local function cache_save(path)
  if not path then return end
  local f = assert(io.open(path .. ".tmp", "w"))
  local names = {}
  for space in pairs(cache) do names[#names + 1] = space end
  table.sort(names)
  for _, space in ipairs(names) do
    local settings = {}
    for s in pairs(cache[space]) do settings[#settings + 1] = s end
    table.sort(settings)
    for _, s in ipairs(settings) do
      local per, cells = cache[space][s], {}
      for j = 1, #per[1] do cells[j] = ("%.6f,%.6f,%.6f"):format(per[1][j], per[2][j], per[3][j]) end
      f:write(space, "\t", s, "\t", table.concat(cells, " "), "\n")
    end
  end
  f:close()
  assert(os.rename(path .. ".tmp", path))
end

-- Seeds 1..seeds of setting on the replay: per budget, per seed, the figure.
local function measure(rec, setting, seeds)
  local count = rec:count()
  local budgets = {}
  for b, pct in ipairs(BUDGETS) do budgets[b] = math.max(1, math.ceil(pct / 100 * count - 1e-9)) end
  local per = {{}, {}, {}}
  for seed = 1, seeds do
    local res = rec:tune{search = search_option(setting, seed), seed = seed, stop = {count = budgets[3]}}
    for b = 1, 3 do per[b][seed] = (rec:score(res, budgets[b])) end
  end
  return per
end

local function run_all(o, all, settings)
  local cpu = {}
  for _, d in ipairs(all) do
    local rec
    cache[d.name] = cache[d.name] or {}
    for _, s in ipairs(settings) do
      local have = cache[d.name][s]
      local stale = o.refresh and s:find(o.refresh, 1, true)
      if stale or not have or #have[1] < o.seeds then
        rec = rec or kt.replay(d.path)
        local t = os.clock()
        cache[d.name][s] = measure(rec, s, o.seeds)
        cpu[s] = (cpu[s] or 0) + os.clock() - t
        io.stderr:write(("%-45s %-40s %6.1f s\n"):format(d.name, s, os.clock() - t))
      end
    end
    if rec then cache_save(o.cache) end
  end
  return cpu
end

-- ---- figures ----

local function per_seed_mean(names, setting, b, seeds)
  local v = {}
  for j = 1, seeds do
    local sum = 0
    for _, n in ipairs(names) do sum = sum + cache[n][setting][b][j] end
    v[j] = sum / #names
  end
  return v
end

local function mean_se(v)
  local n, sum = #v, 0
  for _, x in ipairs(v) do sum = sum + x end
  local m, ss = sum / n, 0
  for _, x in ipairs(v) do ss = ss + (x - m) ^ 2 end
  return m, math.sqrt(ss / (n - 1) / n)
end

-- groups: {name = , spaces = {names}}; the per-seed mean over a group of
-- its spaces, for a setting (or a function group -> setting).
local function group_seeds(group, setting, b, seeds)
  local s = type(setting) == "function" and setting(group) or setting
  return per_seed_mean(group.spaces, s, b, seeds)
end

local function worst_space(group, setting, b, seeds)
  local s = type(setting) == "function" and setting(group) or setting
  local worst, at = math.huge, nil
  for _, n in ipairs(group.spaces) do
    local m = mean_se(cache[n][s][b])
    if m < worst then worst, at = m, n end
  end
  return worst, at
end

-- The mean over the groups (each the mean over its spaces), per seed.
local function over_groups(groups, setting, b, seeds)
  local v = {}
  for j = 1, seeds do v[j] = 0 end
  for _, g in ipairs(groups) do
    local gv = group_seeds(g, setting, b, seeds)
    for j = 1, seeds do v[j] = v[j] + gv[j] / #groups end
  end
  return v
end

local function label(s) return NAMES[s] or s end

-- The candidate with the highest mean at 2% over the groups other than out.
local function choose(groups, out, candidates, seeds)
  local rest = {}
  for _, g in ipairs(groups) do if g ~= out then rest[#rest + 1] = g end end
  if #rest == 0 then return candidates[1] end
  local best, best_m
  for _, c in ipairs(candidates) do
    local m = mean_se(over_groups(rest, c, 2, seeds))
    if not best or m > best_m + 1e-12 then best, best_m = c, m end
  end
  return best
end

local function fmt(m, se) return ("%.3f (%.3f)"):format(m, se) end

local function report(kind, groups, o, candidates, baselines)
  local seeds = o.seeds
  io.write(("\n## Leave one %s out (%d folds, %d seeds)\n"):format(kind, #groups, seeds))
  local chosen = {}
  for _, g in ipairs(groups) do chosen[g] = choose(groups, g, candidates, seeds) end
  local lofo = function(g) return chosen[g] end
  local columns = {{"held-out choice", lofo}}
  if o.default then columns[#columns + 1] = {label(o.default) .. " (default)", o.default} end
  for _, s in ipairs(baselines) do
    if s ~= o.default then columns[#columns + 1] = {label(s), s} end
  end
  for b, pct in ipairs(BUDGETS) do
    io.write(("\n### %d%%: mean over the fold's spaces (standard error over seeds) / worst space\n\n"):format(pct))
    local head = {"| " .. kind .. " (spaces) | chosen on the others |"}
    for _, c in ipairs(columns) do head[#head + 1] = " " .. c[1] .. " |" end
    io.write(table.concat(head), "\n|", ("---|"):rep(#columns + 2), "\n")
    for _, g in ipairs(groups) do
      local line = {("| %s (%d) | %s |"):format(g.name, #g.spaces, label(chosen[g]))}
      for _, c in ipairs(columns) do
        local m, se = mean_se(group_seeds(g, c[2], b, seeds))
        line[#line + 1] = (" %s / %.3f |"):format(fmt(m, se), (worst_space(g, c[2], b, seeds)))
      end
      io.write(table.concat(line), "\n")
    end
    local mean_line, worst_line = {"| mean over the folds | |"}, {"| worst fold | |"}
    local spaces_line = {"| mean over the spaces | |"}
    for _, c in ipairs(columns) do
      local m, se = mean_se(over_groups(groups, c[2], b, seeds))
      mean_line[#mean_line + 1] = " " .. fmt(m, se) .. " |"
      local worst, at = math.huge, nil
      for _, g in ipairs(groups) do
        local gm = mean_se(group_seeds(g, c[2], b, seeds))
        if gm < worst then worst, at = gm, g.name end
      end
      worst_line[#worst_line + 1] = (" %.3f %s |"):format(worst, at)
      local each = {}
      for _, g in ipairs(groups) do
        for _, n in ipairs(g.spaces) do each[#each + 1] = {name = n, spaces = {n}, setting = c[2], g = g} end
      end
      local v = {}
      for j = 1, seeds do v[j] = 0 end
      for _, e in ipairs(each) do
        local s = type(c[2]) == "function" and c[2](e.g) or c[2]
        for j = 1, seeds do v[j] = v[j] + cache[e.name][s][b][j] / #each end
      end
      spaces_line[#spaces_line + 1] = " " .. fmt(mean_se(v)) .. " |"
    end
    io.write(table.concat(mean_line), "\n", table.concat(worst_line), "\n", table.concat(spaces_line), "\n")
  end
  return chosen
end

-- The rule for a default: per fold, at 2% and 5%, the default less each
-- of annealing and rrhc, per seed; a loss beyond one standard error fails.
local function rule(kind, groups, o)
  if not o.default then return true end
  local seeds, ok = o.seeds, true
  io.write(("\n### The rule, by %s: %s less annealing and less rrhc, mean (standard error)\n\n"):format(
    kind, label(o.default)))
  io.write("| fold | 2% less annealing | 5% less annealing | 2% less rrhc | 5% less rrhc |\n|---|---|---|---|---|\n")
  for _, g in ipairs(groups) do
    local line = {"| " .. g.name .. " |"}
    for _, base in ipairs{"annealing", RRHC} do
      for _, b in ipairs{2, 3} do
        local a, c = group_seeds(g, o.default, b, seeds), group_seeds(g, base, b, seeds)
        local d = {}
        for j = 1, seeds do d[j] = a[j] - c[j] end
        local m, se = mean_se(d)
        local lost = m < -se and m < 0
        if lost then ok = false end
        line[#line + 1] = (" %s%+.4f (%.4f)%s |"):format(lost and "**" or "", m, se, lost and "**" or "")
      end
    end
    io.write(table.concat(line), "\n")
  end
  io.write(("\n%s (in bold: a loss beyond one standard error).\n"):format(ok and "Met" or "NOT met"))
  return ok
end

local function targets(groups, o, chosen)
  local seeds = o.seeds
  local function at(b, setting)
    local v = over_groups(groups, setting, b, seeds)
    local worst = math.huge
    for _, g in ipairs(groups) do worst = math.min(worst, (mean_se(group_seeds(g, setting, b, seeds)))) end
    return (mean_se(v)), worst
  end
  io.write("\n### Targets on leave-one-family-out (mean over families; worst family)\n\n")
  local rows = {{"held-out choice", function(g) return chosen[g] end}}
  if o.default then rows[#rows + 1] = {label(o.default) .. " (default)", o.default} end
  for _, r in ipairs(rows) do
    local m1 = at(1, r[2])
    local m2, w2 = at(2, r[2])
    local m5 = at(3, r[2])
    io.write(("- %s: 1%% %.3f (%s 0.92), 2%% %.3f (%s 0.95), worst family at 2%% %.3f (%s 0.90), 5%% %.3f (%s 0.99)\n"):format(
      r[1], m1, m1 >= 0.92 and ">=" or "<", m2, m2 >= 0.95 and ">=" or "<", w2, w2 >= 0.90 and ">=" or "<",
      m5, m5 >= 0.99 and ">=" or "<"))
  end
end

local function per_space(all, settings, seeds)
  io.write("\n## Every setting on every space: mean at 1% / 2% / 5% over the seeds\n\n| space | family | device |")
  for _, s in ipairs(settings) do io.write(" ", label(s), " |") end
  io.write("\n|---|---|---|", ("---|"):rep(#settings), "\n")
  for _, d in ipairs(all) do
    io.write(("| %s | %s | %s |"):format(d.name, d.family, d.device))
    for _, s in ipairs(settings) do
      local c = cache[d.name][s]
      io.write((" %.3f / %.3f / %.3f |"):format(mean_se(c[1]), mean_se(c[2]), mean_se(c[3])))
    end
    io.write("\n")
  end
end

-- One line per setting: mean over the folds at each budget, the worst fold
-- at 2% and 5%, and the folds lost to annealing or rrhc beyond a standard
-- error at 2% or 5%.
local function summary(kind, groups, settings, seeds)
  io.write(("\n## Every setting, by %s (%d folds, %d seeds)\n\n"):format(kind, #groups, seeds))
  io.write("| setting | 1% | 2% | 5% | worst at 2% | worst at 5% | folds lost to annealing, rrhc (2%, 5%) |\n")
  io.write("|---|---|---|---|---|---|---|\n")
  for _, s in ipairs(settings) do
    local line = {"| " .. label(s) .. " |"}
    for b = 1, 3 do line[#line + 1] = " " .. fmt(mean_se(over_groups(groups, s, b, seeds))) .. " |" end
    for _, b in ipairs{2, 3} do
      local worst, at = math.huge, nil
      for _, g in ipairs(groups) do
        local m = mean_se(group_seeds(g, s, b, seeds))
        if m < worst then worst, at = m, g.name end
      end
      line[#line + 1] = (" %.3f %s |"):format(worst, at)
    end
    local lost = {}
    for _, base in ipairs{"annealing", RRHC} do
      for _, g in ipairs(groups) do
        for _, b in ipairs{2, 3} do
          local a, c = group_seeds(g, s, b, seeds), group_seeds(g, base, b, seeds)
          local d = {}
          for j = 1, seeds do d[j] = a[j] - c[j] end
          local m, se = mean_se(d)
          if m < -se and m < 0 then lost[#lost + 1] = ("%s %s %d%%"):format(g.name, label(base), BUDGETS[b]) end
        end
      end
    end
    line[#line + 1] = " " .. (#lost > 0 and table.concat(lost, ", ") or "none") .. " |"
    io.write(table.concat(line), "\n")
  end
end

local o = parse_args(arg)
local all = spaces(o.spaces, o.only)
assert(#all > 0, "no recorded spaces in " .. o.spaces)
local candidates, baselines = list(o.candidates), list(o.baselines)
for _, must in ipairs{"annealing", RRHC} do
  local have = false
  for _, s in ipairs(baselines) do have = have or s == must end
  if not have then baselines[#baselines + 1] = must end
end
local settings, seen = {}, {}
for _, group in ipairs{candidates, o.default and {o.default} or {}, baselines} do
  for _, s in ipairs(group) do
    if not seen[s] then seen[s] = true; settings[#settings + 1] = s end
  end
end
cache_load(o.cache)
local cpu = run_all(o, all, settings)

local function groups_by(key)
  local byname, out = {}, {}
  for _, d in ipairs(all) do
    local g = byname[d[key]]
    if not g then
      g = {name = d[key], spaces = {}}
      byname[d[key]] = g
      out[#out + 1] = g
    end
    g.spaces[#g.spaces + 1] = d.name
  end
  table.sort(out, function(a, b) return a.name < b.name end)
  return out
end

io.write(("# Leave-one-family-out on %d recorded spaces\n\n"):format(#all))
io.write("| family | kernels (spaces) |\n|---|---|\n")
local families = groups_by("family")
for _, g in ipairs(families) do
  local kernels, n = {}, {}
  for _, d in ipairs(all) do
    if d.family == g.name then
      if not n[d.kernel] then kernels[#kernels + 1] = d.kernel end
      n[d.kernel] = (n[d.kernel] or 0) + 1
    end
  end
  local parts = {}
  for _, k in ipairs(kernels) do parts[#parts + 1] = ("%s (%d)"):format(k, n[k]) end
  local unnamed = false
  for _, d in ipairs(all) do unnamed = unnamed or (d.family == g.name and d.unnamed) end
  io.write(("| %s | %s%s |\n"):format(g.name, table.concat(parts, ", "),
    unnamed and " (not in lofo.lua's FAMILY table: a family of its own)" or ""))
end
io.write(("\nCandidates (the held-out choice is among them): %s. rrhc is %s: a random-restart first-improvement hill climber.\n"):format(
  table.concat(candidates, ", "), RRHC))
for s, t in pairs(cpu) do io.write(("(ran %s: %.1f s of CPU)\n"):format(label(s), t)) end

if o.summary then
  summary("family", families, settings, o.seeds)
  summary("device family", groups_by("device"), settings, o.seeds)
  os.exit(0)
end
local chosen = report("family", families, o, candidates, baselines)
local ok = rule("family", families, o)
targets(families, o, chosen)
local devices = groups_by("device")
report("device family", devices, o, candidates, baselines)
ok = rule("device family", devices, o) and ok
if o.default then
  io.write(("\n%s %s the rule in every fold.\n"):format(label(o.default), ok and "meets" or "does NOT meet"))
end
if o.per_space then per_space(all, settings, o.seeds) end
