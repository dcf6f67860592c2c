-- ktlua.t1_run: `ktlua run PROBLEM.json [options]`, the command that tunes
-- the kernel of a T1 tuning-problem file (ktlua.t1) and prints its results.
local run = {}

local usage = [[
usage: ktlua run PROBLEM.json [--device=ID] [--search=NAME] [--count=N] [--seconds=S]
                 [--fraction=F] [--seed=N] [--repeats=N] [--output=FILE] [--format=NAME]
                 [--live=PAGE] [--max-bytes=N] [--check] [--db=DB] [--transfer=DB]
Tunes the kernel of a T1 file (its Budget and Search, unless the options say
otherwise: --count, --seconds and --fraction replace the whole Budget) and
prints the results. --output writes them to FILE, in the --format t4, json,
csv or kernel-tuner-cache (default: by FILE's extension, .json or .csv).
--live keeps the HTML page PAGE up to date while the tuning runs (the tune
option live: the results so far, reloading itself in a browser), and makes
it the finished report at its end. A
CUDA file runs on the first CUDA device unless --device (or KTLUA_DEVICE)
names another. --check loads the file and
prints its space, notes and defects without a device (and whether NVRTC, where
it is installed, compiles a CUDA kernel's first valid configuration); it fails,
as the run does, where a defect or a missing file would refuse the run.
--db stores the best configurations in the tuned-configuration database DB
(kt.db) under the file's ProblemSize ({x =, y =, z =}), with the file's path,
so that `ktlua db recheck DB` can time them again; --transfer seeds the search
with what DB holds of the kernel on other devices and sizes (doc/transfer.md).
--max-bytes bounds each argument's array and each data file the T1 file names
(default 16 GiB); a kernel file is at most 64 MiB.
]]

local function parse(args)
  local o = { stop = {} }
  for _, a in ipairs(args) do
    local key, value = a:match("^%-%-([%w_%-]+)=(.*)$")
    local number = value and tonumber(value)
    if a == "-h" or a == "--help" then o.help = true
    elseif a == "--check" then o.check = true
    elseif key == "device" or key == "search" or key == "output" or key == "format" or key == "db"
        or key == "transfer" or key == "live" then
      o[key] = value
    elseif key == "max-bytes" and math.tointeger(number) and number > 0 then
      o.max_bytes = math.tointeger(number)
    elseif (key == "count" or key == "seed" or key == "repeats") and math.tointeger(number) then
      if key == "count" then o.stop.count = math.tointeger(number) else o[key] = math.tointeger(number) end
    elseif (key == "seconds" or key == "fraction") and number then o.stop[key] = number
    elseif not a:match("^%-") and not o.path then o.path = a
    else error(("ktlua run: unexpected argument '%s'\n%s"):format(a, usage), 0) end
  end
  return o
end

local function check(problem)
  local kt = require "ktlua"
  local s = kt.space{ params = problem.params, constraints = problem.constraints }
  io.write(("%s: kernel %s (%s) in %s, %d parameters, %s of %s configurations valid\n"):format(
    problem.path, problem.kernel_name, problem.language, problem.file, #problem.params,
    tostring(s:count()), tostring(s:count_all())))
  for _, note in ipairs(problem.notes) do io.write("note: ", note, "\n") end
  for _, defect in ipairs(problem.defects) do io.write("defect: ", defect, "\n") end
  -- a CUDA kernel compiles without a GPU where NVRTC is there
  if problem.language == "CUDA" and problem.source and s:count() > 0 then
    local cfg, defines = s:config(0), {}
    for _, p in ipairs(problem.params) do
      defines[#defines + 1] = ("#define %s %s\n"):format(p[1], tostring(cfg[p[1]]))
    end
    local ok, out, log = pcall(kt.cuda_compile, { source = table.concat(defines) .. problem.source,
      names = { problem.kernel_name }, arch = "sm_90", options = problem.options })
    if ok and out then
      io.write("nvrtc: the first valid configuration compiles (sm_90)\n")
    elseif ok then
      io.write("nvrtc: the first valid configuration does not compile: ",
        (tostring(log):match("[^\n]*error[^\n]*") or tostring(log)), "\n")
    end
  end
end

function run.main(args)
  local o = parse(args)
  if o.help then io.write(usage) return end
  if not o.path then error("ktlua run: no T1 file given\n" .. usage, 0) end
  if o.format and not o.output then error("ktlua run: --format needs --output=FILE", 0) end
  local kt = require "ktlua"
  local problem = kt.t1_read(o.path, { max_bytes = o.max_bytes })
  if o.check then check(problem) end
  -- what kt.t1 would refuse, refused before a device opens, and by --check
  local refused = require("ktlua.t1_common").refusals(problem)
  if #refused > 0 then error(table.concat(refused, "\n"), 0) end
  if o.check then return end
  local env = os.getenv("KTLUA_DEVICE")
  local device = o.device or problem.device or (env ~= "" and env or nil)
  if not device and problem.language == "CUDA" then device = "cuda" end
  local tuner = kt.tuner(device)
  local backend = tuner.device.backend
  if (problem.language == "CUDA") ~= (backend == "cuda") then
    error(("ktlua run: %s is a %s kernel and %s is an %s device: name another with --device"):format(
      o.path, problem.language, tuner.device.id, backend), 0)
  end
  local k, options = kt.t1(problem, { tuner = tuner })
  if next(o.stop) then options.stop = o.stop end -- the command's budget, not added to the file's
  options.search = o.search or options.search
  options.seed, options.repeats = o.seed, o.repeats or options.repeats
  options.output = o.format and { { o.output, o.format } } or o.output
  options.live = o.live
  for _, note in ipairs(problem.notes) do io.stderr:write("note: ", note, "\n") end
  local size = require("ktlua.t1_common").db_size(problem)
  if o.db then
    local path = o.path:sub(1, 1) == "/" and o.path or (os.getenv("PWD") or ".") .. "/" .. o.path
    options.db, options.size, options.origin = kt.db(o.db), size, "t1:" .. path
  end
  if o.transfer then
    local db = (o.db and o.transfer == o.db) and options.db or kt.db(o.transfer, { readonly = true })
    options.transfer = { db = db, size = size }
  end
  local results = tuner:tune(k, options)
  results:print{ top = 10 }
  tuner:close()
end

return run
