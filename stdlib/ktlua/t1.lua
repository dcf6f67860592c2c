-- ktlua.t1: tuning problems in the T1 format (Kernel Tuner's T1/1.0.0 input
-- schema, and the variants that real files have: BAT's lower-case
-- kernelSpecification, blockSize/gridSize, length/value/path, Values as a
-- JSON list or a Python list expression, Constraints for Conditions).
--
--   kt.t1_read(path[, {max_bytes =}])
--                               the problem as plain data, checked (no device)
--   kt.t1(path[, {tuner =, device =, force =, max_bytes =}])
--                               -> kernel, tune options, problem
--
-- Values, Conditions, sizes and argument sizes are Python expressions; they
-- are evaluated by ktlua's own evaluator (core/expr*.c), never as code.
-- What is wrong with a file names the file and the field: an error where
-- the space cannot be read, else a defect (ktlua.t1_args: the arguments).
local c = require "ktlua.t1_common"
local args = require "ktlua.t1_args"
local sig = require "ktlua.t1_signature"
local t1_search = require "ktlua.t1_search"
local lookup, fail, show, compile = c.lookup, c.fail, c.show, c.compile
local t1 = {}

local kt = c.kt

-- fn(...); an error of the file it raises becomes a defect, and a fatal one
-- (that leaves nothing to build) is also in problem.broken.
local function defect_of(problem, fatal, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then return true end
  if type(err) ~= "string" or err:sub(1, #problem.path + 2) ~= problem.path .. ": " then
    error(err, 0) -- ktlua's own fault: no defect of the file
  end
  problem.defects[#problem.defects + 1] = err
  if fatal then problem.broken[#problem.broken + 1] = err end
  return false
end

-- ---- the configuration space ----

local function read_values(p, where)
  local raw = lookup(p, "Values")
  local values
  if type(raw) == "string" then
    local ok, v = pcall(kt().python_list, raw)
    if not ok then fail(where, "Values: %s", v) end
    values = v
  elseif type(raw) == "table" then
    values = {}
    for i, v in ipairs(raw) do values[i] = v end
  else
    fail(where, "Values must be a list or a list expression")
  end
  if #values == 0 then fail(where, "Values is empty") end
  local ty = lookup(p, "Type")
  for i, v in ipairs(values) do
    if type(v) ~= "number" and type(v) ~= "string" and type(v) ~= "boolean" then
      fail(where, "value %d is %s, not a number or a string", i, show(v))
    end
    if type(v) == "boolean" then v = v and 1 or 0 end
    if ty == "bool" and type(v) == "number" then v = v ~= 0 and 1 or 0 end
    if (ty == "int" or ty == "uint") and not math.tointeger(v) then
      fail(where, "value %d (%s) is not an integer, as Type %s says", i, show(v), ty)
    end
    if ty == "float" and type(v) ~= "number" then
      fail(where, "value %d (%s) is not a number, as Type float says", i, show(v))
    end
    if ty == "int" or ty == "uint" then v = math.tointeger(v) end
    values[i] = v
  end
  return values
end

-- ProblemSize[0] in Conditions, sizes and Values is the first of these.
local function read_problem_size(doc, problem)
  local size = lookup(lookup(doc, "KernelSpecification"), "ProblemSize") or {}
  problem.problem_size = type(size) == "table" and size or { size }
  for i, v in ipairs(problem.problem_size) do -- indexed from 0, as its expressions are
    defect_of(problem, true, c.integer_of, v, ("%s: ProblemSize[%d]"):format(problem.path, i - 1),
      "the size")
  end
end

local function read_space(doc, problem)
  local cs = lookup(doc, "ConfigurationSpace")
  if type(cs) ~= "table" then fail(problem.path, "no ConfigurationSpace") end
  local tps = lookup(cs, "TuningParameters")
  if type(tps) ~= "table" or (tps[1] == nil and next(tps) ~= nil) then
    fail(problem.path, "ConfigurationSpace has no TuningParameters list")
  end
  for i, p in ipairs(tps) do
    local where = ("%s: TuningParameters[%d]"):format(problem.path, i)
    local name = lookup(p, "Name")
    if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") then
      fail(where, "Name must be an identifier, found %s", show(name))
    end
    if problem.values[name] then fail(where, "parameter %s is defined twice", name) end
    local values = read_values(p, where .. " (" .. name .. ")")
    problem.params[#problem.params + 1] = { name, values }
    problem.values[name] = values
  end
  local conditions, key = lookup(cs, "Conditions", "Constraints")
  if type(conditions) == "string" then conditions = { conditions } end
  for i, cond in ipairs(c.list_of(conditions, problem.path .. ": " .. c.key("Conditions", key))) do
    local text = type(cond) == "string" and cond or lookup(cond, "Expression")
    if type(text) ~= "string" then
      fail(problem.path, "Conditions[%d] has no Expression", i)
    end
    local where = ("%s: Conditions[%d]"):format(problem.path, i)
    local _, names = compile(text, problem, where)
    if #names == 0 then fail(where, "'%s' reads no tuning parameter", text) end
    problem.constraints[#problem.constraints + 1] = text
  end
end

-- ---- sizes ----

local dims = { "X", "Y", "Z" }

-- {X =, Y =, Z =} as three compiled expressions.
local function read_sizes(spec, problem, key, ...)
  local t, found = lookup(spec, key, ...)
  if type(t) ~= "table" then return nil end
  local out = {}
  for d, dim in ipairs(dims) do
    local v = lookup(t, dim)
    if v == nil then v = 1 end
    if type(v) == "string" and v:match("^%s*%d+%s*$") then v = math.tointeger(tonumber(v)) end
    local where = ("%s: %s.%s"):format(problem.path, found, dim)
    local f, _, value, expr = compile(v, problem, where)
    if not f then value = c.positive(value, where, "the size") end
    out[d] = { text = tostring(v), fn = f, value = value, expr = f and expr }
  end
  return out
end

-- Kernel Tuner's rule where ProblemSize and GridDivX are given: a grid of
-- ceil(ProblemSize / product of the GridDiv parameters) blocks.
local function grid_from_problem_size(spec, problem)
  local ps = lookup(spec, "ProblemSize")
  local divs = { lookup(spec, "GridDivX"), lookup(spec, "GridDivY"), lookup(spec, "GridDivZ") }
  if ps == nil or divs[1] == nil then return nil end
  if type(ps) ~= "table" then ps = { ps } end
  local out = {}
  for d = 1, 3 do
    local size = ps[d] and c.positive(ps[d], ("%s: ProblemSize[%d]"):format(problem.path, d - 1),
      "the size") or 1 -- indexed from 0, as its expressions are
    local div, where = divs[d] or {}, ("%s: GridDiv%s"):format(problem.path, dims[d])
    if type(div) ~= "table" then
      fail(where, "expected a list of parameter names, found %s", show(div))
    end
    for j, name in ipairs(div) do
      local values = problem.values[name]
      if not values then
        fail(("%s[%d]"):format(where, j), "%s is no tuning parameter", show(name))
      end
      for _, v in ipairs(values) do
        if not math.tointeger(v) or v < 1 then
          fail(("%s[%d]"):format(where, j), "%s takes %s, and divides by positive integers only",
            name, show(v))
        end
      end
    end
    if #div == 0 then
      out[d] = { text = tostring(size), value = size }
    else
      local product = table.concat(div, " * ")
      out[d] = { text = ("ceil(%d / (%s))"):format(size, product),
                 expr = ("(%d + %s - 1) // (%s)"):format(size, product, product),
                 fn = function(cfg)
                   local n = size
                   for _, name in ipairs(div) do n = (n + cfg[name] - 1) // cfg[name] end
                   return n
                 end }
    end
  end
  return out
end

-- ---- the whole problem ----

local function read_budget(doc, problem)
  local where = problem.path .. ": Budget"
  for i, b in ipairs(c.list_of(lookup(doc, "Budget"), where)) do
    local here = ("%s[%d]"):format(where, i)
    local kind, value = lookup(b, "Type"), lookup(b, "BudgetValue")
    if type(value) ~= "number" or not (value > 0) then
      fail(here .. ".BudgetValue", "%s is not a positive number", show(value))
    end
    if kind == "ConfigurationCount" then
      problem.stop.count = math.tointeger(value) or math.ceil(value)
    elseif kind == "TuningDuration" then problem.stop.seconds = value
    elseif kind == "ConfigurationFraction" and value <= 1 then problem.stop.fraction = value
    elseif kind == "ConfigurationFraction" then
      fail(here .. ".BudgetValue", "%s is more than 1", show(value))
    else fail(here .. ".Type", "%s is not ConfigurationCount, TuningDuration or " ..
      "ConfigurationFraction", show(kind)) end
  end
end

local function read_search(doc, problem)
  local s = lookup(doc, "Search")
  if s == nil then return end
  local where = problem.path .. ": Search"
  if type(s) ~= "table" then fail(where, "expected an object, found %s", show(s)) end
  local name = lookup(s, "Name")
  if type(name) ~= "string" then fail(where .. ".Name", "%s is no searcher's name", show(name)) end
  local ours, differs = t1_search.of(name)
  if not ours then
    problem.notes[#problem.notes + 1] = ("Search %s has no ktlua counterpart: the " ..
      "default searcher is used"):format(show(name))
    return
  end
  problem.search = ours
  local attributes = c.list_of(lookup(s, "Attributes"), where .. ".Attributes")
  if differs then -- another algorithm's options are no options of ours
    problem.notes[#problem.notes + 1] = ("Search %s runs as ktlua's %s: %s%s"):format(show(name),
      ours, differs, #attributes > 0 and " (its Attributes are left out)" or "")
  elseif #attributes > 0 then -- the searcher's options: {"annealing", alpha = 0.9}
    problem.search = { ours }
    for i, a in ipairs(attributes) do
      local here = ("%s.Attributes[%d]"):format(where, i)
      local key, value = lookup(a, "Name"), lookup(a, "Value")
      if type(key) ~= "string" or not key:match("^[%a_][%w_]*$") then
        fail(here .. ".Name", "%s is not an option's name", show(key))
      end
      if type(value) ~= "number" and type(value) ~= "string" and type(value) ~= "boolean" then
        fail(here .. ".Value", "%s is not a number, a string or a boolean", show(value))
      end
      problem.search[key] = tonumber(value) or value
    end
  end
end

-- BAT's BenchmarkConfig: iterations, the timed runs of each configuration;
-- each number a macro of the kernel (-DPRECISION=32), as BAT's runner
-- defines them (fft.cu's `#if PRECISION == 32` picks float2 so), unless a
-- tuning parameter has its name.
local function read_benchmark(doc, problem)
  local config = lookup(doc, "BenchmarkConfig")
  local iterations = lookup(config, "iterations")
  if iterations ~= nil then
    problem.repeats = c.positive(iterations, problem.path .. ": BenchmarkConfig.iterations",
      "the count")
  end
  local names = {}
  for k, v in pairs(type(config) == "table" and config or {}) do
    if type(k) == "string" and k:match("^[%a_][%w_]*$") and type(v) == "number" and v == v
        and math.abs(v) ~= math.huge and not problem.values[k] then
      names[#names + 1] = k
    end
  end
  table.sort(names)
  local defines = {}
  for i, k in ipairs(names) do
    local v = config[k]
    defines[i] = ("-D%s=%s"):format(k, math.tointeger(v) or ("%.17g"):format(v))
  end
  if #defines > 0 then
    problem.options = table.concat({ problem.options or "", table.concat(defines, " ") }, " ")
      :gsub("^ ", "")
  end
end

local function read_options(spec, problem)
  local options, key = lookup(spec, "CompilerOptions")
  local where = problem.path .. ": " .. c.key("CompilerOptions", key)
  if type(options) == "string" then options = { options } end
  for i, o in ipairs(c.list_of(options, where)) do
    if type(o) ~= "string" then fail(("%s[%d]"):format(where, i), "%s is not a string", show(o)) end
  end
  problem.options = table.concat(options or {}, " ")
end

local function read_device(spec, problem)
  local dev, key = lookup(spec, "Device")
  if dev == nil then return end
  local where = problem.path .. ": " .. c.key("Device", key)
  if type(dev) ~= "table" then fail(where, "expected an object, found %s", show(dev)) end
  local ids = {}
  for i, name in ipairs({ "PlatformId", "DeviceId" }) do
    local v = lookup(dev, name)
    ids[i] = v == nil and 0 or c.integer_of(v, where .. "." .. name, "the id")
    if ids[i] < 0 then fail(where .. "." .. name, "%d is negative", ids[i]) end
  end
  problem.device = problem.language == "CUDA" and ("cuda:" .. ids[2])
    or ("opencl:" .. ids[1] .. ":" .. ids[2])
end

local function read_launch(spec, problem)
  local size_type = lookup(spec, "GlobalSizeType")
  local _, grid_key = lookup(spec, "GlobalSize", "gridSize")
  problem.group = read_sizes(spec, problem, "LocalSize", "blockSize")
  problem.global = grid_from_problem_size(spec, problem)
  if problem.global then
    problem.notation = "cuda"
  else
    problem.global = read_sizes(spec, problem, "GlobalSize", "gridSize")
    -- a grid counts blocks: a CUDA file's GlobalSize, unless it says OpenCL
    local blocks = size_type == "CUDA" or (size_type == nil and problem.language == "CUDA")
    problem.notation = (blocks or (grid_key and grid_key:lower() == "gridsize")) and "cuda" or nil
  end
  if not problem.group or not problem.global then
    fail(problem.path, "KernelSpecification needs GlobalSize (or ProblemSize and GridDivX) " ..
      "and LocalSize")
  end
end

local function read_shared(spec, problem)
  local shared, key = lookup(spec, "SharedMemory")
  if shared == nil or shared == 0 then return end
  local where = problem.path .. ": " .. c.key("SharedMemory", key)
  local f, _, v, text = compile(shared, problem, where)
  problem.shared = f or c.positive(v, where, "the size")
  problem.shared_expr = f and text or nil
end

-- A list of the KernelSpecification (nil, and a defect, when it is none).
local function list_in(spec, problem, name)
  local list, key = lookup(spec, name)
  local ok = defect_of(problem, true, function()
    list = c.list_of(list, problem.path .. ": " .. c.key(name, key))
  end)
  return ok and list or {}
end

local function read_arguments(spec, problem)
  local by_name = {}
  for i, a in ipairs(list_in(spec, problem, "Arguments")) do
    local ok = defect_of(problem, true, function()
      local arg = args.read(a, i, problem)
      if by_name[arg.name] ~= nil then
        fail(arg.where .. ".Name", "another argument has the name %s", arg.name)
      end
      problem.args[#problem.args + 1], by_name[arg.name] = arg, arg
    end)
    if not ok then
      problem.args_broken = true
      local name = type(a) == "table" and lookup(a, "Name")
      if type(name) == "string" then by_name[name] = false end
    end
  end
  for i, r in ipairs(list_in(spec, problem, "ReferenceArguments")) do
    defect_of(problem, true, function()
      problem.references[#problem.references + 1] = args.read_reference(r, i, problem, by_name)
    end)
  end
end

local function read_kernel(doc, problem)
  local spec = lookup(doc, "KernelSpecification")
  if type(spec) ~= "table" then fail(problem.path, "no KernelSpecification") end
  problem.language = lookup(spec, "Language")
  if not ({ CUDA = 1, OpenCL = 1 })[problem.language] then
    fail(problem.path, "Language %s: ktlua runs CUDA and OpenCL kernels", show(problem.language))
  end
  problem.kernel_name = lookup(spec, "KernelName")
  local file = lookup(spec, "KernelFile")
  if type(problem.kernel_name) ~= "string" or problem.kernel_name == "" or type(file) ~= "string"
      or file == "" then
    fail(problem.path, "KernelSpecification needs KernelName and KernelFile")
  end
  if not problem.kernel_name:match("^[%a_][%w_]*") then
    fail(problem.path .. ": KernelName", "%s is no function's name", show(problem.kernel_name))
  end
  problem.kernel_file = file
  problem.file = file:sub(1, 1) == "/" and file or c.dirname(problem.path) .. "/" .. file
  -- each a defect that leaves the space readable: kt.t1 refuses to build it
  defect_of(problem, true, read_options, spec, problem)
  defect_of(problem, true, read_launch, spec, problem)
  defect_of(problem, true, read_shared, spec, problem)
  read_arguments(spec, problem)
  defect_of(problem, true, read_device, spec, problem)
end

-- The KernelFile: absent, a note (and a refusal of kt.t1); no regular file, too
-- large or no text, a defect.
local function read_source(problem)
  local where = ("%s: KernelFile %s"):format(problem.path, show(problem.kernel_file))
  local data, why, fault = kt()._read_regular(problem.file, args.SOURCE_MAX)
  if fault == "absent" then
    problem.notes[#problem.notes + 1] = ("the kernel file %s is not there"):format(problem.file)
    problem.absent[#problem.absent + 1] = ("%s: %s"):format(where, why)
    return
  end
  if not data then fail(where, "%s", why) end
  local nul = data:find("\0", 1, true)
  if nul then fail(where, "holds a NUL byte at offset %d: no source text", nul - 1) end
  problem.source = data
end

-- What the file's source says about the parameters.
local function check_source(problem)
  if not problem.args_broken then sig.check(problem, problem.source) end
  local unnamed, other_case = {}, {}
  for _, p in ipairs(problem.params) do
    local word = "%f[%w_]" .. p[1] .. "%f[^%w_]"
    if not problem.source:find(word) then
      unnamed[#unnamed + 1] = p[1]
      if problem.source:lower():find(word:lower()) then other_case[#other_case + 1] = p[1]:lower() end
    end
  end
  if #unnamed > 0 then
    problem.notes[#problem.notes + 1] = ("%s never names the parameters %s%s"):format(
      problem.file:match("[^/]*$"), table.concat(unnamed, ", "), #other_case == 0 and "" or
      (" (it names %s)"):format(table.concat(other_case, ", ")))
  end
end

-- T1 readers treat a null as an absent key.
local function without_nulls(v, null)
  if v == null then return nil end
  if type(v) == "table" then
    for k, x in pairs(v) do v[k] = without_nulls(x, null) end
  end
  return v
end

local function max_bytes(opts, who)
  local n = opts and opts.max_bytes
  if n == nil then return args.BYTES_MAX end
  if not math.tointeger(n) or n < 1 then
    error(("%s: max_bytes must be a positive integer, got %s"):format(who, tostring(n)), 3)
  end
  return math.tointeger(n)
end

function t1.t1_read(path, opts)
  if type(path) ~= "string" then error("t1_read: expected the path of a T1 file", 2) end
  if opts ~= nil and type(opts) ~= "table" then error("t1_read: expected an options table", 2) end
  local json = kt().json
  local ok, doc = pcall(json.read, path)
  if not ok then error(doc, 0) end
  doc = without_nulls(doc, json.null)
  if type(doc) ~= "table" or (doc[1] ~= nil) then fail(path, "a T1 file is a JSON object") end
  local problem = { path = path, params = {}, values = {}, constraints = {}, args = {},
                    references = {}, stop = {}, notes = {}, defects = {}, broken = {}, absent = {},
                    max_bytes = max_bytes(opts, "t1_read") }
  problem.bat = lookup(doc, "BenchmarkConfig") ~= nil -- a BAT file: BAT's runner makes its data
  local general = lookup(doc, "General")
  problem.name = lookup(general, "BenchmarkName")
  if problem.name ~= nil and type(problem.name) ~= "string" then problem.name = nil end
  read_problem_size(doc, problem)
  read_space(doc, problem)
  read_kernel(doc, problem)
  defect_of(problem, false, read_budget, doc, problem)
  defect_of(problem, false, read_search, doc, problem)
  defect_of(problem, false, read_benchmark, doc, problem)
  problem.name = problem.name or problem.kernel_name
  if defect_of(problem, true, read_source, problem) and problem.source then
    check_source(problem)
  end
  return problem
end

-- ---- building the kernel ----

local function size_list(sizes)
  local out = {}
  for d, s in ipairs(sizes) do out[d] = s.value or 1 end
  return out
end

-- Sizes that read parameters become expressions evaluated in C: the
-- device's limits check them for every configuration of the space.
local function add_modifiers(k, sizes, kind)
  for d, s in ipairs(sizes) do
    if s.fn then k:modifier(kind .. "_" .. dims[d]:lower(), s.expr) end
  end
end

-- kt.t1(path[, {tuner =, device =, force =, max_bytes =}]) -> kernel, tune
-- options, problem (the data of kt.t1_read, with .tuner and .arrays by name).
-- force builds despite defects that leave something to build.
function t1.t1(path, opts)
  if opts ~= nil and type(opts) ~= "table" then error("t1: expected an options table", 2) end
  opts = opts or {}
  local problem = type(path) == "table" and path or t1.t1_read(path, { max_bytes = opts.max_bytes })
  local refused = c.refusals(problem, opts.force)
  if #refused > 0 then error(table.concat(refused, "\n"), 0) end
  local K = kt()
  local tuner = opts.tuner or K.tuner(opts.device or problem.device)
  local source = problem.source
  local arrays, list = {}, {}
  for _, arg in ipairs(problem.args) do
    local a, symbol = args.make(K, arg, problem, arrays, source)
    list[#list + 1] = a
    if symbol then list[#list + 1] = symbol end
  end
  if problem.shared and problem.language == "CUDA" then
    list[#list + 1] = K.localmem("char", problem.shared)
  end
  local ok, k = pcall(tuner.kernel, tuner, {
    name = problem.kernel_name, source = source, options = problem.options,
    notation = problem.notation, global = size_list(problem.global),
    group = size_list(problem.group), args = list,
  })
  if not ok then fail(problem.path, "KernelSpecification: %s", k) end
  for i, p in ipairs(problem.params) do
    local done, err = pcall(k.param, k, p[1], p[2])
    if not done then fail(problem.path, "TuningParameters[%d] (%s): %s", i, p[1], err) end
  end
  for i, cond in ipairs(problem.constraints) do
    local done, err = pcall(k.constraint, k, cond)
    if not done then fail(problem.path, "Conditions[%d]: %s", i, err) end
  end
  if problem.shared_expr and problem.language == "CUDA" then
    -- pruned before compiling where it alone is more than the device has
    local done, err = pcall(k.local_memory, k, problem.shared_expr)
    if not done then fail(problem.path, "KernelSpecification: SharedMemory: %s", err) end
  end
  add_modifiers(k, problem.group, "group")
  add_modifiers(k, problem.global, "global")
  for _, ref in ipairs(problem.references) do args.add_reference(k, ref, arrays) end
  problem.tuner, problem.arrays, problem.kernel = tuner, arrays, k
  local options = { stop = next(problem.stop) and problem.stop or nil, search = problem.search,
                    repeats = problem.repeats }
  return k, options, problem
end

return t1
