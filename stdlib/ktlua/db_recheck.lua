-- ktlua.db_recheck: the regression watch of the tuned-configuration
-- database (doc/database.md, "Rechecking"). After a driver, compiler or
-- ktlua upgrade a stored best may have become slower, or no longer run:
-- db:recheck{kernel = k, tuner = t} times each stored best of k on t's
-- device again where any of these changed, or k's source or compiler options
-- since (as db:best tells an entry stale; or every one, with all = true)
-- with the tuning's own measurement (tuner:tune with the configuration as
-- its one seed, so the kernel's checks and repetitions apply), and says
-- per entry: unchanged, faster, slower (beyond the noise, with both
-- times) or invalid (compile or launch failure, wrong output against the
-- kernel's reference: the validation's reason, "element 5: got 20, expected
-- 15 ..."). retune = true tunes again those slower or invalid,
-- seeded with the old best and transferring from the database.
--
--   db:recheck{kernel = k, tuner = t[, size = {...}, all = false, retune = false,
--              noise = 0.05, repeats =, stop = {fraction = 0.02}, search =]}
--     -> report: a list of {kernel, device, backend, size, objective, changed,
--        verdict, old_ms, new_ms, status, error, results (retuned)},
--        and, where it is empty, why (nothing of k stored for t's device)
--
-- `ktlua db recheck DB [--device=ID] [--all] [--retune] [--noise=X]` rechecks
-- the entries that stored what re-runs them: those that `ktlua run --db`
-- tuned (origin "t1:" and the T1 file's path). Its exit status, for CI:
-- 0 nothing regressed, 2 something did (slower or invalid), 3 nothing of
-- the database is of the device, 4 some entries could not be rechecked
-- (their kernel cannot be made again) and none regressed; 1 an error.
local recheck = {}

local NOISE = 0.05 -- a change of the time below this share is noise

local function sorted_size(size)
  local names = {}
  for k in pairs(size) do names[#names + 1] = k end
  table.sort(names)
  local parts = {}
  for _, k in ipairs(names) do parts[#parts + 1] = ("%s=%s"):format(k, tostring(size[k])) end
  return table.concat(parts, ",")
end

-- The kernel's code against the entry's, as db:best compares them (its source
-- hash, its compiler options): "source fnv1a-... -> fnv1a-..." or
-- "compiler options '-DA' -> '-DB'", or nil where they are the same. (The hash
-- is of the kernel's own text: a header it includes is not in it.) An entry
-- that knows no source (stored from a peer's recording) has nothing to compare.
local function code_change(db, kernel, e)
  if (e.source or "") == "" then return nil end
  local ok, found, why = pcall(db.best, db, { kernel = kernel, device = { name = e.device, backend = e.backend },
    size = e.size, objective = e.objective })
  if not ok or found or type(why) ~= "string" then return nil end
  local old, new = why:match("was tuned for another source %((.-), now (.-)%)$")
  if old then return ("source %s -> %s"):format(old, new) end
  old, new = why:match("was tuned with other compiler options %('(.*)', now '(.*)'%)$")
  if old then return ("compiler options '%s' -> '%s'"):format(old, new) end
end

-- What changed since the entry was measured: a list of "driver 535.1 -> 580.2".
local function changes(db, kernel, e, now)
  local out = { code_change(db, kernel, e) }
  local function compare(what, old, new)
    if old ~= "" and new ~= "" and old ~= new then out[#out + 1] = ("%s %s -> %s"):format(what, old, new) end
  end
  compare("driver", e.driver or "", now.driver)
  compare("compiler", e.compiler or "", now.compiler)
  compare("ktlua", e.version or "", now.version)
  return out
end

-- The spread of a result's timed runs: their standard deviation over their mean.
local function spread(r)
  local s = r.samples_ms
  if type(s) ~= "table" or #s < 2 then return 0 end
  local sum = 0
  for _, v in ipairs(s) do sum = sum + v end
  local mean, var = sum / #s, 0
  for _, v in ipairs(s) do var = var + (v - mean) ^ 2 end
  return mean > 0 and math.sqrt(var / (#s - 1)) / mean or 0
end

local function check_options(o)
  local allowed = { kernel = true, tuner = true, size = true, all = true, retune = true, noise = true,
    repeats = true, stop = true, search = true }
  if type(o) ~= "table" then error("db:recheck: expected a table of options {kernel =, tuner =}", 3) end
  for k in pairs(o) do
    if not allowed[k] then
      error(("db:recheck: unknown option '%s' (kernel, tuner, size, all, retune, noise, repeats, stop, search)")
        :format(tostring(k)), 3)
    end
  end
  if o.kernel == nil or type(o.kernel) == "string" then
    error("db:recheck: kernel: expected the kernel (or composition) to time the stored configurations of, "
      .. "made for the size to recheck", 3)
  end
  if o.tuner == nil then error("db:recheck: tuner: expected the tuner of the device to recheck on", 3) end
  local noise = o.noise or NOISE
  if type(noise) ~= "number" or not (noise >= 0 and noise < 10) then
    error("db:recheck: noise: expected a share of the time from 0 (e.g. 0.05: 5%)", 3)
  end
  return noise
end

-- The rank-1 entries of the kernel on the tuner's device, of the size.
local function entries_of(db, o)
  local dev = o.tuner.device
  local list = db:list{ kernel = o.kernel.name, device = dev.name, backend = dev.backend, size = o.size }
  local best, sizes, n = {}, {}, 0
  for _, e in ipairs(list) do
    if e.rank == 1 then
      best[#best + 1] = e
      local key = sorted_size(e.size)
      if not sizes[key] then sizes[key], n = true, n + 1 end
    end
  end
  if n > 1 and not o.size then
    error(("db:recheck: %s on %s is stored for %d sizes: name the size the kernel given was made "
      .. "for (size = {...})"):format(o.kernel.name, dev.name, n), 3)
  end
  if #best == 0 then
    return best, ("nothing to recheck: no stored best of %s on %s (%s)%s"):format(o.kernel.name, dev.name,
      dev.backend, o.size and (" of size {" .. sorted_size(o.size) .. "}") or "")
  end
  return best
end

-- Times the entry's configuration with the tuning's rules: one seed, one evaluation.
local function time_again(o, e)
  local space = o.kernel:space()
  local ok, index, why = pcall(space.index, space, e.config)
  if not ok or not index then
    return { status = "not in the space", error = tostring(not ok and index or why) }
  end
  local tune = { seeds = { e.config }, stop = { count = 1 }, search = "exhaustive",
    repeats = o.repeats, progress = false }
  local okr, results = pcall(o.tuner.tune, o.tuner, o.kernel, tune)
  if not okr then return { status = "error", error = tostring(results) } end
  local r = results:list()[1]
  if not r then return { status = "error", error = "the tuning evaluated nothing" } end
  return { status = r.status, time_ms = r.time_ms, spread = spread(r), error = r.error }
end

function recheck.recheck(db, o)
  local noise = check_options(o)
  local kt = require "ktlua"
  local dev = o.tuner.device
  local now = { driver = dev.driver_version or "", compiler = kt.compiler_version(dev), version = kt.version }
  local report = {}
  local entries, why = entries_of(db, o)
  for _, e in ipairs(entries) do
    local item = { kernel = e.kernel, device = e.device, backend = e.backend, size = e.size,
      objective = e.objective, config = e.config, changed = changes(db, o.kernel, e, now), old_ms = e.time_ms }
    if #item.changed == 0 and not o.all then
      item.verdict = "not rechecked"
    else
      local t = time_again(o, e)
      item.status, item.new_ms, item.error = t.status, t.time_ms, t.error
      if t.status ~= "ok" then
        item.verdict = "invalid"
      else
        local limit = math.max(noise, 3 * t.spread)
        if t.time_ms > e.time_ms * (1 + limit) then item.verdict = "slower"
        elseif t.time_ms < e.time_ms / (1 + limit) then item.verdict = "faster"
        else item.verdict = "unchanged" end
      end
      if item.verdict == "unchanged" or item.verdict == "faster" then
        -- measured again with what is installed now: no longer stale
        db:touch(e, { driver = now.driver, compiler = now.compiler,
          time_ms = item.verdict == "faster" and t.time_ms or nil })
      elseif o.retune then
        item.results = o.tuner:tune(o.kernel, { seeds = { e.config }, transfer = db, db = db,
          size = e.size, origin = e.origin ~= "" and e.origin or nil,
          stop = o.stop or { fraction = 0.02 }, search = o.search, repeats = o.repeats })
        local best = item.results:best()
        item.retuned_ms = best and best.time_ms
      end
    end
    report[#report + 1] = item
  end
  return report, why
end

-- ---- the command ----

-- Exit statuses of `ktlua db recheck` (1: an error, as every command's).
recheck.REGRESSED, recheck.NOTHING, recheck.NOT_REBUILT = 2, 3, 4

local usage = [[
usage: ktlua db recheck DB [--device=ID] [--all] [--retune] [--noise=X] [--repeats=N]
Times again, on the device at hand (--device, else each T1 file's), each
stored best whose driver, compiler or ktlua version, or its kernel's source
or compiler options, changed (every one with --all, which also sees a changed
header the kernel includes), of the entries that `ktlua run --db=DB` stored
(they name their T1 file), and says per entry: unchanged, faster, slower
(beyond the noise, default 5%, with both times) or invalid (no longer
compiling, launching or matching the T1 file's reference output, and why);
entries it cannot re-run are named.
--retune tunes again those slower or invalid (2% of the space), seeded with
the old best and transferring from DB, and stores them.
Exit status: 0 nothing regressed; 2 an entry is slower or invalid; 3 nothing
in DB was tuned on the device; 4 an entry's kernel could not be made again
(its T1 file gone or changed, its device missing), none regressed; 1 an error.
]]

local function entry_name(e)
  return ("%s on %s (%s) {%s}"):format(e.kernel, e.device, e.backend, sorted_size(e.size))
end

local function line_of(item)
  local times = item.new_ms and ("%.4g ms, was %.4g ms"):format(item.new_ms, item.old_ms)
    or ("was %.4g ms"):format(item.old_ms)
  local changed = #item.changed > 0 and table.concat(item.changed, ", ") or "nothing changed"
  local s = ("%s: %s (%s; %s)"):format(entry_name(item), item.verdict, times, changed)
  if item.verdict == "invalid" then s = s .. ": " .. tostring(item.status) .. (item.error and (": " .. item.error) or "") end
  if item.retuned_ms then s = s .. ("; retuned: %.4g ms"):format(item.retuned_ms) end
  return s
end

local function parse(args)
  local o, path = { noise = NOISE }, nil
  for _, a in ipairs(args) do
    local key, value = a:match("^%-%-([%w_]+)=(.*)$")
    if a == "-h" or a == "--help" then return nil
    elseif a == "--all" then o.all = true
    elseif a == "--retune" then o.retune = true
    elseif key == "device" and value ~= "" then o.device = value
    elseif key == "noise" and tonumber(value) then o.noise = tonumber(value)
    elseif key == "repeats" and math.tointeger(tonumber(value)) then o.repeats = math.tointeger(tonumber(value))
    elseif not a:match("^%-") and not path then path = a
    else error(("ktlua db recheck: unexpected argument '%s'\n%s"):format(a, usage), 0) end
  end
  if not path then error("ktlua db recheck: no database given\n" .. usage, 0) end
  local f = io.open(path, "rb")
  if not f then error(("ktlua db recheck: %s does not exist"):format(path), 0) end
  f:close()
  return o, path
end

-- The rank-1 entries by the T1 file that re-runs them, and those tuned by scripts.
local function by_origin(db)
  local origins, scripted = {}, {}
  for _, e in ipairs(db:list()) do
    if e.rank == 1 then
      local t1 = e.origin:match("^t1:(.+)$")
      if t1 then
        origins[t1] = origins[t1] or {}
        table.insert(origins[t1], e)
      else
        scripted[#scripted + 1] = e
      end
    end
  end
  local files = {}
  for f in pairs(origins) do files[#files + 1] = f end
  table.sort(files)
  return files, origins, scripted
end

-- Rechecks the entries of one T1 file on its device (or o.device); the report and the device's name.
local function recheck_file(kt, db, file, o)
  local tuner
  local ok, report, dev = pcall(function()
    local problem = kt.t1_read(file)
    local device = o.device or problem.device
    if not device and problem.language == "CUDA" then device = "cuda" end
    tuner = kt.tuner(device)
    local k = kt.t1(problem, { tuner = tuner })
    local size = require("ktlua.t1_common").db_size(problem)
    return db:recheck{ kernel = k, tuner = tuner, size = size, all = o.all, retune = o.retune,
      noise = o.noise, repeats = o.repeats }, tuner.device
  end)
  if tuner then tuner:close() end
  if not ok then return nil, tostring(report) end
  return report, dev
end

function recheck.main(args)
  local o, path = parse(args)
  if not o then io.write(usage) return end
  local kt = require "ktlua"
  local db = kt.db(path)
  local files, origins, scripted = by_origin(db)
  local matched, regressed, not_rebuilt, devices = 0, 0, 0, {}
  for _, file in ipairs(files) do
    local report, dev = recheck_file(kt, db, file, o)
    if report then
      devices[("%s (%s)"):format(dev.name, dev.backend)] = true
      for _, item in ipairs(report) do
        io.write(line_of(item), "\n")
        matched = matched + 1
        if item.verdict == "slower" or item.verdict == "invalid" then regressed = regressed + 1 end
      end
    else -- a file gone or changed, a device missing: its entries are named, the others rechecked
      for _, e in ipairs(origins[file]) do
        io.write(("%s: not rechecked: its kernel could not be made again from %s: %s\n")
          :format(entry_name(e), file, dev))
        not_rebuilt = not_rebuilt + 1
      end
    end
  end
  for _, e in ipairs(scripted) do
    local file = e.origin:match("^file:(.+)$")
    io.write(("%s: not rechecked: %s\n"):format(entry_name(e), file
      and ("stored from the recording %s (ktlua db store), nothing re-runs it"):format(file)
      or "tuned by a script, it does not say what re-runs it"))
  end
  if #scripted > 0 then
    io.write(("%d stored best%s not rechecked: tuned by scripts or stored from recordings, they do not say "
      .. "what re-runs them (db:recheck{kernel =, tuner =} from the script)\n")
      :format(#scripted, #scripted == 1 and " was" or "s were"))
  end
  db:close()
  if regressed > 0 then
    io.stderr:write(("ktlua db recheck: %d stored best%s regressed (slower or invalid)\n")
      :format(regressed, regressed == 1 and "" or "s"))
    return recheck.REGRESSED
  elseif not_rebuilt > 0 then
    io.stderr:write(("ktlua db recheck: %d stored best%s could not be rechecked: %s could not be "
      .. "made again (above)\n"):format(not_rebuilt, not_rebuilt == 1 and "" or "s",
      not_rebuilt == 1 and "its kernel" or "their kernels"))
    return recheck.NOT_REBUILT
  elseif matched == 0 then
    local names = {}
    for d in pairs(devices) do names[#names + 1] = d end
    table.sort(names)
    local on = #names > 0 and table.concat(names, ", ") or o.device or "the devices of its T1 files"
    io.stderr:write(("ktlua db recheck: nothing to recheck: %s holds no stored best of %s that a T1 file "
      .. "re-runs\n"):format(path, on))
    return recheck.NOTHING
  end
end

return recheck
