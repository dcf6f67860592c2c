-- ktlua.t1: tuning problems in the T1 format (Kernel Tuner's T1/1.0.0 input
-- schema, and the variants that real files have: BAT's lower-case
-- kernelSpecification, blockSize/gridSize, length/value/path, Values as a
-- JSON list or a Python list expression, Constraints for Conditions).
--
--   kt.t1_read(path)            the problem as plain data, checked (no device)
--   kt.t1(path[, {tuner =, device =}])
--                               -> kernel, tune options, problem
--
-- Values, Conditions, sizes and argument sizes are Python expressions; they
-- are evaluated by ktlua's own evaluator (core/expr*.c), never as code.
local t1 = {}

local function kt() return require "ktlua" end

-- ---- keys: "KernelSpecification" or "kernelSpecification", and aliases ----

local function lookup(t, ...)
  if type(t) ~= "table" then return nil end
  for _, name in ipairs({ ... }) do
    if t[name] ~= nil then return t[name], name end
    local lower = name:lower()
    for k, v in pairs(t) do
      if type(k) == "string" and k:lower() == lower then return v, k end
    end
  end
  return nil
end

local function fail(where, fmt, ...)
  error(("%s: " .. fmt):format(where, ...), 0)
end

local function list_of(v)
  if v == nil then return {} end
  if type(v) == "table" and v[1] == nil and next(v) ~= nil then return { v } end -- one object
  return v
end

-- ---- types ----

local scalar_types = {
  bool = "uchar", int8 = "char", uint8 = "uchar", int16 = "short", uint16 = "ushort",
  int32 = "int", uint32 = "uint", int64 = "long", uint64 = "ulong", int = "int", uint = "uint",
  char = "char", uchar = "uchar", short = "short", ushort = "ushort", long = "long",
  ulong = "ulong", half = "half", float = "float", double = "double",
}

-- A T1 type as ktlua's element type and components per element: float4 is
-- four floats; a 3-vector takes 4 places in OpenCL, 3 in CUDA.
local function element_type(name, language, where)
  local base, n = tostring(name):match("^(%a+)(%d*)$")
  local t = base and scalar_types[base] or scalar_types[name]
  if not t then
    fail(where, "type '%s' is not one of bool, int8 ... uint64, half, float, double, their " ..
      "vectors (float2, float4, ...) or custom", tostring(name))
  end
  n = tonumber(n) or 1
  if scalar_types[name] then n = 1 end
  local stride = (n == 3 and language == "OpenCL") and 4 or n
  return t, n, stride
end

-- ---- expressions ----

-- "ProblemSize[0]" and "max(filter_width)" (the largest value of a
-- parameter) become numbers; the rest is an expression of expr.h.
local function substitute(text, problem_size, params)
  text = text:gsub("ProblemSize%s*%[%s*(%d+)%s*%]", function(i)
    local v = problem_size[tonumber(i) + 1]
    return v and tostring(v) or nil
  end)
  return (text:gsub("(%a+)%(%s*([%a_][%w_]*)%s*%)", function(fn, name)
    local p = params[name]
    if not p or (fn ~= "max" and fn ~= "min") then return nil end
    local best = p[1]
    for _, v in ipairs(p) do
      if (fn == "max" and v > best) or (fn == "min" and v < best) then best = v end
    end
    return tostring(best)
  end))
end

-- An expression (a string or a number) over the tuning parameters: the
-- function of a configuration, its names, and its value when it reads none.
local function compile(v, problem, where)
  if math.type(v) == "integer" then return nil, {}, v end
  if type(v) ~= "string" then fail(where, "expected an integer or an expression, found %s", type(v)) end
  local text = substitute(v, problem.problem_size, problem.values)
  local ok, f, names = pcall(kt()._expression, text)
  if not ok then fail(where, "%s", f) end
  for _, name in ipairs(names) do
    if not problem.values[name] then
      fail(where, "'%s' reads %s, which is no tuning parameter", v, name)
    end
  end
  if #names == 0 then return nil, names, f({}) end
  return f, names, nil
end

local function integer_of(v, where, what)
  local n = math.tointeger(tonumber(v))
  if not n then fail(where, "%s %s is not an integer", what, tostring(v)) end
  return n
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
    if type(v) == "boolean" then v = v and 1 or 0 end
    if ty == "bool" and type(v) == "number" then v = v ~= 0 and 1 or 0 end
    if (ty == "int" or ty == "uint") and not math.tointeger(v) then
      fail(where, "value %d (%s) is not an integer, as Type %s says", i, tostring(v), ty)
    end
    if ty == "float" and type(v) ~= "number" then
      fail(where, "value %d (%s) is not a number, as Type float says", i, tostring(v))
    end
    if ty == "int" or ty == "uint" then v = math.tointeger(v) end
    values[i] = v
  end
  return values
end

local function read_space(doc, problem)
  local cs = lookup(doc, "ConfigurationSpace")
  if type(cs) ~= "table" then fail(problem.path, "no ConfigurationSpace") end
  local tps = lookup(cs, "TuningParameters")
  if type(tps) ~= "table" then fail(problem.path, "ConfigurationSpace has no TuningParameters") end
  for i, p in ipairs(tps) do
    local where = ("%s: TuningParameters[%d]"):format(problem.path, i)
    local name = lookup(p, "Name")
    if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") then
      fail(where, "Name must be an identifier, found %s", tostring(name))
    end
    if problem.values[name] then fail(where, "parameter %s is defined twice", name) end
    local values = read_values(p, where .. " (" .. name .. ")")
    problem.params[#problem.params + 1] = { name, values }
    problem.values[name] = values
  end
  for i, c in ipairs(list_of(lookup(cs, "Conditions", "Constraints"))) do
    local text = type(c) == "string" and c or lookup(c, "Expression")
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
    local f, _, value = compile(v, problem, where)
    out[d] = { text = tostring(v), fn = f, value = value }
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
    local size = ps[d] and integer_of(ps[d], problem.path, "ProblemSize") or 1
    local div = divs[d] or {}
    for _, name in ipairs(div) do
      if not problem.values[name] then
        fail(problem.path, "GridDiv%s names %s, which is no tuning parameter", dims[d], name)
      end
    end
    if #div == 0 then
      out[d] = { text = tostring(size), value = size }
    else
      out[d] = { text = ("ceil(%d / (%s))"):format(size, table.concat(div, " * ")),
                 fn = function(cfg)
                   local n = size
                   for _, name in ipairs(div) do n = (n + cfg[name] - 1) // cfg[name] end
                   return n
                 end }
    end
  end
  return out
end

-- ---- arguments ----

local function read_argument(a, i, problem)
  local name = lookup(a, "Name") or ("argument " .. i)
  local where = ("%s: Arguments[%d] (%s)"):format(problem.path, i, name)
  local memory = tostring(lookup(a, "MemoryType") or "Vector"):lower()
  local arg = { name = name, memory = memory, where = where }
  arg.type, arg.components, arg.stride = element_type(lookup(a, "Type") or "float",
    problem.language, where)
  if lookup(a, "Type") == "custom" then arg.type = "uchar" end
  local size = lookup(a, "Size", "length")
  if memory ~= "scalar" then
    if size == nil then fail(where, "a %s argument needs a Size", memory) end
    local f, _, v = compile(size, problem, where .. ": Size")
    if f then fail(where, "Size '%s' reads tuning parameters", size) end
    arg.size = integer_of(v, where, "Size")
    if lookup(a, "Type") == "custom" then
      arg.size = arg.size * integer_of(lookup(a, "TypeSize") or 1, where, "TypeSize")
    end
  end
  arg.access = tostring(lookup(a, "AccessType") or "ReadWrite")
  arg.fill = tostring(lookup(a, "FillType") or (memory == "scalar" and "Constant" or "Constant"))
  arg.value = lookup(a, "FillValue", "value")
  if type(arg.value) == "string" then arg.value = tonumber(arg.value) or arg.value end
  arg.source = lookup(a, "DataSource", "path")
  arg.seed = lookup(a, "RandomSeed")
  arg.constant = tostring(lookup(a, "MemType") or ""):lower() == "constant"
  arg.output = (lookup(a, "Output") or 0) ~= 0
  if memory == "scalar" and type(arg.value) ~= "number" then
    fail(where, "a scalar needs a numeric FillValue, found %s", tostring(arg.value))
  end
  if not ({ scalar = 1, vector = 1, ["local"] = 1, symbol = 1 })[memory] then
    fail(where, "MemoryType %s is not Scalar, Vector, Local or Symbol", memory)
  end
  return arg
end

-- ---- the kernel's signature against the arguments ----

local c_types = {
  char = "char", ["unsigned char"] = "uchar", uchar = "uchar", short = "short",
  ["unsigned short"] = "ushort", ushort = "ushort", int = "int", ["unsigned int"] = "uint",
  unsigned = "uint", uint = "uint", long = "long", ["long long"] = "long",
  ["unsigned long"] = "ulong", ["unsigned long long"] = "ulong", ulong = "ulong",
  int8_t = "char", uint8_t = "uchar", int16_t = "short", uint16_t = "ushort", int32_t = "int",
  uint32_t = "uint", int64_t = "long", uint64_t = "ulong", half = "half", __half = "half",
  float = "float", double = "double", bool = "uchar",
}

-- The parameters of the kernel `name` in source: {text, pointer, type}
-- (type nil where it is no built-in type: a macro, a struct), or nil when
-- the source has no such function or its list cannot be read.
local function signature(source, name)
  name = name:match("^[%w_]+")
  local from = 1
  while true do
    local s, e = source:find("[%s%*]" .. name .. "%s*%(", from)
    if not s then return nil end
    local before = source:sub(math.max(1, s - 200), s)
    local depth, i = 1, e + 1
    while depth > 0 and i <= #source do
      local c = source:sub(i, i)
      depth = depth + (c == "(" and 1 or c == ")" and -1 or 0)
      i = i + 1
    end
    local list = source:sub(e + 1, i - 2)
    local after = source:match("^%s*(.)", i)
    if before:match("void%s*$") and after == "{" then
      local params = {}
      list = list:gsub("/%*.-%*/", ""):gsub("//[^\n]*", "")
      if list:match("^%s*$") or list:match("^%s*void%s*$") then return params end
      for text in (list .. ","):gmatch("%s*([^,]-)%s*,") do
        local decl = text:gsub("__%w+__", " "):gsub("__%w+", " ")
          :gsub("%f[%w_](const)%f[^%w_]", " "):gsub("%f[%w_](restrict)%f[^%w_]", " ")
          :gsub("%f[%w_](volatile)%f[^%w_]", " ")
        local pointer = decl:find("[%*%[]") ~= nil
        local words = decl:gsub("[%*%[%]%d]*$", ""):gsub("[%*%[%]]", " ")
        words = words:gsub("%s+[%w_]+%s*$", "") -- the parameter's name
        words = words:gsub("^%s+", ""):gsub("%s+$", ""):gsub("%s+", " ")
        local base, n = words:match("^(%a+)(%d*)$")
        local ty = c_types[words] or (base and c_types[base] and n ~= "" and c_types[base])
        params[#params + 1] = { text = text, pointer = pointer, type = ty,
                                components = tonumber(n) or 1 }
      end
      return params
    end
    from = e
  end
end

-- What the file's arguments get wrong about the kernel's parameters.
local function check_signature(problem, source)
  local params = signature(source, problem.kernel_name)
  local file = problem.file:match("[^/]*$")
  if not params then
    problem.defects[#problem.defects + 1] = ("%s: %s defines no kernel %s"):format(
      problem.path, file, problem.kernel_name)
    return
  end
  local passed = {}
  for _, a in ipairs(problem.args) do
    local cuda_extra = problem.language == "CUDA" and (a.memory == "local" or a.memory == "symbol")
    if not cuda_extra then passed[#passed + 1] = a end
  end
  local texts, names = {}, {}
  for i, p in ipairs(params) do texts[i] = p.text end
  for i, a in ipairs(passed) do names[i] = a.name end
  local function defect(fmt, ...)
    problem.defects[#problem.defects + 1] = problem.path .. ": " .. fmt:format(...)
  end
  if #passed ~= #params then
    defect("KernelSpecification.Arguments passes %d (%s); the kernel %s in %s takes %d (%s)",
      #passed, table.concat(names, ", "), problem.kernel_name, file, #params,
      table.concat(texts, ", "))
  end
  for i = 1, math.min(#passed, #params) do
    local a, p = passed[i], params[i]
    local what = a.memory == "scalar" and "scalar" or "vector"
    local shape = a.components > 1 and a.type .. a.components or a.type
    if (what == "vector") ~= p.pointer then
      defect("Arguments[%d] (%s) is a %s %s where %s in %s takes `%s`", i, a.name, shape, what,
        problem.kernel_name, file, p.text)
    elseif p.type and p.type ~= a.type and not (a.type == "uchar" and p.type == "char") then
      defect("Arguments[%d] (%s) is a %s %s where %s in %s takes `%s`", i, a.name, shape, what,
        problem.kernel_name, file, p.text)
    end
  end
end

-- ---- the whole problem ----

local function dirname(path) return path:match("^(.*)/[^/]*$") or "." end

local function read_budget(doc, problem)
  for _, b in ipairs(list_of(lookup(doc, "Budget"))) do
    local kind, value = lookup(b, "Type"), lookup(b, "BudgetValue")
    if type(value) ~= "number" then fail(problem.path, "Budget %s has no BudgetValue", tostring(kind)) end
    if kind == "ConfigurationCount" then problem.stop.count = math.tointeger(value) or math.ceil(value)
    elseif kind == "TuningDuration" then problem.stop.seconds = value
    elseif kind == "ConfigurationFraction" then problem.stop.fraction = value
    else fail(problem.path, "Budget Type %s is not ConfigurationCount, TuningDuration or " ..
      "ConfigurationFraction", tostring(kind)) end
  end
end

local searchers = {
  random = "random", randomsearch = "random", bruteforce = "exhaustive",
  exhaustive = "exhaustive", simulatedannealing = "annealing", annealing = "annealing",
  geneticalgorithm = "genetic", genetic = "genetic", pso = "pso", particleswarm = "pso",
  differentialevolution = "differential", mcmc = "mcmc", greedy = "greedy",
  bestfirst = "bestfirst", staged = "staged",
}

local function read_search(doc, problem)
  local s = lookup(doc, "Search")
  if type(s) ~= "table" then return end
  local name = tostring(lookup(s, "Name") or "")
  local ours = searchers[name:lower():gsub("[%s_%-]", "")]
  if not ours then
    problem.notes[#problem.notes + 1] = ("Search %s has no ktlua counterpart: the " ..
      "default searcher is used"):format(name)
    return
  end
  problem.search = ours
  local attributes = lookup(s, "Attributes") or {}
  if #attributes > 0 then -- the searcher's options: {"annealing", alpha = 0.9}
    problem.search = { ours }
    for _, a in ipairs(attributes) do
      local key, value = lookup(a, "Name"), lookup(a, "Value")
      problem.search[tostring(key)] = tonumber(value) or value
    end
  end
end

-- BAT's BenchmarkConfig.iterations: the timed runs of each configuration.
local function read_benchmark(doc, problem)
  local iterations = lookup(lookup(doc, "BenchmarkConfig") or {}, "iterations")
  if iterations ~= nil then
    problem.repeats = integer_of(iterations, problem.path, "BenchmarkConfig.iterations")
  end
end

local function read_kernel(doc, problem)
  local spec = lookup(doc, "KernelSpecification")
  if type(spec) ~= "table" then fail(problem.path, "no KernelSpecification") end
  problem.language = lookup(spec, "Language")
  if not ({ CUDA = 1, OpenCL = 1 })[problem.language] then
    fail(problem.path, "Language %s: ktlua runs CUDA and OpenCL kernels", tostring(problem.language))
  end
  problem.kernel_name = lookup(spec, "KernelName")
  local file = lookup(spec, "KernelFile")
  if type(problem.kernel_name) ~= "string" or type(file) ~= "string" then
    fail(problem.path, "KernelSpecification needs KernelName and KernelFile")
  end
  problem.file = file:sub(1, 1) == "/" and file or dirname(problem.path) .. "/" .. file
  problem.options = table.concat(lookup(spec, "CompilerOptions") or {}, " ")
  problem.problem_size = lookup(spec, "ProblemSize") or {}
  if type(problem.problem_size) ~= "table" then problem.problem_size = { problem.problem_size } end
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
  local shared = lookup(spec, "SharedMemory")
  if shared ~= nil and shared ~= 0 then
    -- a defect that leaves the space readable: kt.t1 refuses to build it
    local ok, f, _, v = pcall(compile, shared, problem, problem.path .. ": SharedMemory")
    if ok then problem.shared = f or v else problem.defects[#problem.defects + 1] = f end
  end
  for i, a in ipairs(lookup(spec, "Arguments") or {}) do
    problem.args[i] = read_argument(a, i, problem)
  end
  problem.references = {}
  for i, r in ipairs(lookup(spec, "ReferenceArguments") or {}) do
    problem.references[i] = {
      name = lookup(r, "Name"), target = lookup(r, "TargetName"),
      fill = tostring(lookup(r, "FillType")), value = lookup(r, "FillValue"),
      source = lookup(r, "DataSource"), seed = lookup(r, "RandomSeed"),
      method = lookup(r, "ValidationMethod"), threshold = lookup(r, "ValidationThreshold"),
    }
  end
  local dev = lookup(spec, "Device")
  if type(dev) == "table" then
    local p, d = lookup(dev, "PlatformId"), lookup(dev, "DeviceId")
    problem.device = problem.language == "CUDA" and ("cuda:" .. (d or 0))
      or ("opencl:" .. (p or 0) .. ":" .. (d or 0))
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

function t1.t1_read(path)
  if type(path) ~= "string" then error("t1_read: expected the path of a T1 file", 2) end
  local json = kt().json
  local ok, doc = pcall(json.read, path)
  if not ok then error(doc, 0) end
  doc = without_nulls(doc, json.null)
  if type(doc) ~= "table" then fail(path, "a T1 file is a JSON object") end
  local problem = { path = path, params = {}, values = {}, constraints = {}, args = {},
                    stop = {}, notes = {}, defects = {} }
  local general = lookup(doc, "General") or {}
  problem.name = lookup(general, "BenchmarkName")
  read_space(doc, problem)
  read_kernel(doc, problem)
  read_budget(doc, problem)
  read_search(doc, problem)
  read_benchmark(doc, problem)
  problem.name = problem.name or problem.kernel_name
  local f = io.open(problem.file, "rb")
  if f then
    problem.source = f:read("a")
    f:close()
    check_signature(problem, problem.source)
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
  else
    problem.notes[#problem.notes + 1] = ("the kernel file %s is not there"):format(problem.file)
  end
  return problem
end

-- ---- building the kernel ----

local function read_data_file(path, arg, count)
  local f, why = io.open(path, "rb")
  if not f then fail(arg.where, "cannot read the data file %s: %s", path, why) end
  local data = f:read("a")
  f:close()
  local out = {}
  if arg.fill == "BinaryRaw" then return data end
  for word in data:gmatch("%S+") do
    local v = tonumber(word)
    if not v then fail(arg.where, "%s holds '%s', not a number", path, word) end
    out[#out + 1] = v
    if #out > count then break end
  end
  if #out ~= count then
    fail(arg.where, "%s holds %d numbers, the argument %d", path, #out, count)
  end
  return out
end

-- Fills an array of n elements as the argument's FillType says.
local function fill(array, arg, n, dir)
  local kind = arg.fill:lower()
  local value = type(arg.value) == "number" and arg.value or nil
  if kind == "constant" or kind == "uninitialized" then
    array:fill(value or 0)
  elseif kind == "random" then
    local hi = value or 1
    local float = arg.type == "float" or arg.type == "double" or arg.type == "half"
    array:random(arg.seed or 1, 0, float and hi or math.max(0, math.floor(hi)))
  elseif kind == "generator" then
    local f = kt()._expression(tostring(arg.source or "i"))
    local env = {}
    array:fill(function(i)
      env.i = i
      return f(env)
    end)
  elseif kind == "binaryraw" or kind == "file" then
    if type(arg.source) ~= "string" then fail(arg.where, "FillType %s needs a DataSource", arg.fill) end
    local path = arg.source:sub(1, 1) == "/" and arg.source or dir .. "/" .. arg.source
    local data = read_data_file(path, arg, n)
    if type(data) == "string" then
      if #data ~= array.bytes then
        fail(arg.where, "%s has %d bytes, the argument %d", path, #data, array.bytes)
      end
      local fmt = ({ char = "b", uchar = "B", short = "h", ushort = "H", int = "i4", uint = "I4",
                     long = "i8", ulong = "I8", float = "f", double = "d" })[arg.type]
      if not fmt then fail(arg.where, "BinaryRaw of %s is not supported", arg.type) end
      local size = fmt:match("%d") and tonumber(fmt:match("%d")) or string.packsize(fmt)
      array:fill(function(i) return (string.unpack("<" .. fmt, data, i * size + 1)) end)
    else
      array:fill(function(i) return data[i + 1] end)
    end
  else
    fail(arg.where, "FillType %s is not supported (Constant, Random, Generator, BinaryRaw, " ..
      "or a file of numbers)", arg.fill)
  end
end

local function make_argument(k, arg, problem, arrays, source)
  if arg.memory == "scalar" then
    local v = arg.value
    if arg.type ~= "float" and arg.type ~= "double" and arg.type ~= "half" then
      v = math.tointeger(v) or fail(arg.where, "FillValue %s is not an integer", tostring(v))
    end
    return k.scalar(arg.type, v)
  end
  local n = arg.size * arg.stride
  if arg.memory == "local" then return k.localmem(arg.type, n) end
  local array = k.array(arg.type, n)
  fill(array, arg, n, dirname(problem.path))
  arrays[arg.name] = array
  if arg.memory == "symbol" then return k.symbol(arg.name, array) end
  local access = arg.access:lower()
  local a = access == "readonly" and array:input()
    or access == "writeonly" and array:output() or array:inout()
  return a, arg.constant and problem.language == "CUDA" and source:find(arg.name, 1, true)
    and k.symbol(arg.name, array) or nil
end

local function add_reference(k, ref, problem, arrays)
  local target = arrays[ref.target]
  if not target then
    fail(problem.path, "ReferenceArguments %s: TargetName %s is no vector argument",
      tostring(ref.name), tostring(ref.target))
  end
  local expected = target:copy()
  fill(expected, { fill = ref.fill, value = ref.value, source = ref.source, seed = ref.seed,
                   type = target.type, where = problem.path .. ": ReferenceArguments " ..
                   tostring(ref.name) }, #expected, dirname(problem.path))
  local method = ({ AbsoluteDifference = "absolute", SideBySideComparison = "absolute",
                    SideBySideRelativeComparison = "relative" })[ref.method or "AbsoluteDifference"]
  k:reference(target, expected, { method = method, tolerance = ref.threshold })
end

local function size_list(sizes)
  local out = {}
  for d, s in ipairs(sizes) do out[d] = s.value or 1 end
  return out
end

local function add_modifiers(k, sizes, kind)
  for d, s in ipairs(sizes) do
    if s.fn then
      local fn = s.fn
      k:modifier(kind .. "_" .. dims[d]:lower(), function(_, cfg) return fn(cfg) end)
    end
  end
end

-- kt.t1(path[, {tuner =, device =}]) -> kernel, tune options, problem (the
-- data of kt.t1_read, with .tuner and .arrays by name).
function t1.t1(path, opts)
  opts = opts or {}
  local problem = type(path) == "table" and path or t1.t1_read(path)
  if #problem.defects > 0 and not opts.force then
    error(table.concat(problem.defects, "\n"), 0)
  end
  local K = kt()
  local tuner = opts.tuner or K.tuner(opts.device or problem.device)
  local source = problem.source
  if not source then fail(problem.path, "the kernel file %s cannot be read", problem.file) end
  local arrays, args = {}, {}
  for _, arg in ipairs(problem.args) do
    local a, symbol = make_argument(K, arg, problem, arrays, source)
    args[#args + 1] = a
    if symbol then args[#args + 1] = symbol end
  end
  if problem.shared and problem.language == "CUDA" then
    args[#args + 1] = K.localmem("char", problem.shared)
  end
  local k = tuner:kernel{
    name = problem.kernel_name, source = source, options = problem.options,
    notation = problem.notation, global = size_list(problem.global),
    group = size_list(problem.group), args = args,
  }
  for _, p in ipairs(problem.params) do k:param(p[1], p[2]) end
  for i, c in ipairs(problem.constraints) do
    local ok, err = pcall(k.constraint, k, c)
    if not ok then fail(problem.path, "Conditions[%d]: %s", i, err) end
  end
  add_modifiers(k, problem.group, "group")
  add_modifiers(k, problem.global, "global")
  for _, ref in ipairs(problem.references) do add_reference(k, ref, problem, arrays) end
  problem.tuner, problem.arrays, problem.kernel = tuner, arrays, k
  local options = { stop = next(problem.stop) and problem.stop or nil, search = problem.search,
                    repeats = problem.repeats }
  return k, options, problem
end

return t1
