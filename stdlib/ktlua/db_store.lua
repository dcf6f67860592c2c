-- ktlua.db_store: `ktlua db store DB FILE...`, a team's existing tuning data
-- into the tuned-configuration database (doc/database.md, "Peers'
-- recordings"): each results file kt.load reads (a Kernel Tuner cache,
-- KTT's JSON, T4, ktlua's own) is stored as db:store would, its best `top`
-- configurations under the kernel, device, backend and size the file says,
-- or those given; what is missing is named, with the option that gives it.
local M = {}

local usage = [[
usage: ktlua db store DB FILE... [--kernel=NAME] [--device=NAME] [--backend=cuda|opencl]
                                 [--size=x=4096,y=512] [--top=N]
Stores the best N (default 10) configurations of each results file (a Kernel
Tuner cache, KTT's JSON, T4, ktlua's JSON) in the database DB, for transfer
and db:best: the kernel, device and backend the file names, else those given
(given, they replace the file's); the size is the file's problem_size (a Kernel
Tuner cache's, as x, y, z), else --size.
]]

-- "x=4096,y=512" as {x = 4096, y = 512}; nil and why where it is no size.
local function parse_size(text)
  local size = {}
  for part in (text .. ","):gmatch("([^,]*),") do
    local name, value = part:match("^([^=]+)=(.+)$")
    local n = value and tonumber(value)
    if not name or not n or n <= 0 then
      return nil, ("'%s' is no name=number (--size=x=4096,y=512)"):format(part)
    end
    size[name] = math.tointeger(n) or n
  end
  return size
end

local function describe_size(size)
  local names, parts = {}, {}
  for k in pairs(size) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do parts[#parts + 1] = ("%s=%s"):format(k, tostring(size[k])) end
  return table.concat(parts, ",")
end

local function parse(args)
  local o, paths = { top = 10 }, {}
  for _, a in ipairs(args) do
    local key, value = a:match("^%-%-([%w_]+)=(.*)$")
    if a == "-h" or a == "--help" then return nil
    elseif (key == "kernel" or key == "device" or key == "backend") and value ~= "" then o[key] = value
    elseif key == "size" then
      local size, why = parse_size(value)
      if not size then error("ktlua db store: --size: " .. why, 0) end
      o.size = size
    elseif key == "top" and math.tointeger(tonumber(value)) and tonumber(value) > 0 then
      o.top = math.tointeger(tonumber(value))
    elseif not a:match("^%-") then paths[#paths + 1] = a
    else error(("ktlua db store: unexpected argument '%s'\n%s"):format(a, usage), 0) end
  end
  if #paths < 2 then
    error(("ktlua db store: %s\n%s"):format(#paths == 0 and "no database given" or "no results file given",
      usage), 0)
  end
  return o, table.remove(paths, 1), paths
end

-- The file's results, stored; what was stored, as a line.
local function store(kt, db, file, o)
  local results = kt.load(file)
  local size = o.size
  if not size and results.problem_size then
    local axes = { "x", "y", "z" }
    size = {}
    for i, v in ipairs(results.problem_size) do size[axes[i]] = v end
  end
  if not size then
    error(("%s does not say its problem size: give it, --size=n=4096"):format(file), 0)
  end
  local backend = o.backend or results.backend
  if not backend then
    error(("%s does not say its backend: give it, --backend=cuda or --backend=opencl"):format(file), 0)
  end
  local kernel, device = o.kernel or results.task, o.device or results.device
  db:store(results, { size = size, top = o.top, kernel = kernel, device = device, backend = backend,
    origin = "file:" .. file })
  local n = #db:list{ kernel = kernel, device = device, backend = backend, size = size,
    objective = results.objective }
  return ("%s: stored the best %d of %s on %s (%s) {%s}"):format(file, n, kernel, device, backend,
    describe_size(size))
end

function M.main(args)
  local o, path, files = parse(args)
  if not o then io.write(usage) return end
  local kt = require "ktlua"
  local db = kt.db(path)
  local failed = {}
  for _, file in ipairs(files) do
    local ok, line = pcall(store, kt, db, file, o)
    if ok then io.write(line, "\n")
    else
      io.write(("%s: not stored: %s\n"):format(file, tostring(line)))
      failed[#failed + 1] = file
    end
  end
  db:close()
  if #failed > 0 then
    error(("ktlua db store: %d of %d file%s not stored (above)"):format(#failed, #files,
      #files == 1 and "" or "s"), 0)
  end
end

return M
