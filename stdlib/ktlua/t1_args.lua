-- ktlua.t1_args: a T1 file's Arguments and ReferenceArguments. Every field
-- is checked when the file is read, so that kt.t1_read lists what is wrong
-- as a defect naming the file and the field ("p.json: Arguments[2] (a).Size:
-- 0 is not positive") and kt.t1 builds nothing it has not checked; the data
-- files they name are read then, each a regular file of bounded size.
local c = require "ktlua.t1_common"
local lookup, fail, show = c.lookup, c.fail, c.show

local args = {}

-- The most a KernelFile may hold (KT_SOURCE_MAX, core/base/regular_file.h), and
-- the default of the most an argument's array or a DataSource may (the
-- max_bytes option of kt.t1_read and kt.t1, `ktlua run --max-bytes`).
args.SOURCE_MAX = 64 << 20
args.BYTES_MAX = 16 << 30

-- ---- types ----

local scalar_types = {
  bool = "uchar", int8 = "char", uint8 = "uchar", int16 = "short", uint16 = "ushort",
  int32 = "int", uint32 = "uint", int64 = "long", uint64 = "ulong", int = "int", uint = "uint",
  char = "char", uchar = "uchar", short = "short", ushort = "ushort", long = "long",
  ulong = "ulong", half = "half", float = "float", double = "double",
}

local bytes_of = { char = 1, uchar = 1, short = 2, ushort = 2, int = 4, uint = 4, long = 8,
                   ulong = 8, half = 2, float = 4, double = 8 }

local ranges = { char = { -128, 127 }, uchar = { 0, 255 }, short = { -32768, 32767 },
                 ushort = { 0, 65535 }, int = { -2147483648, 2147483647 },
                 uint = { 0, 4294967295 }, long = { math.mininteger, math.maxinteger },
                 ulong = { 0, 18446744073709551615.0 } }

local function is_float(t) return t == "float" or t == "double" or t == "half" end

-- A T1 type as ktlua's element type and components per element: float4 is
-- four floats; a 3-vector takes 4 places in OpenCL, 3 in CUDA.
local function element_type(name, language, where)
  if name == "custom" then return "uchar", 1, 1 end -- TypeSize bytes an element
  local base, n
  if type(name) == "string" then base, n = name:match("^(%a+)(%d*)$") end
  local t = scalar_types[name] or (base and scalar_types[base]) -- int8 is one char
  n = tonumber(n) or 1
  if scalar_types[name] then n = 1 end
  if not t or n < 1 or n > 16 then
    fail(where, "%s is not one of bool, int8 ... uint64, half, float, double, their " ..
      "vectors (float2, float4, ...) or custom", show(name))
  end
  local stride = (n == 3 and language == "OpenCL") and 4 or n
  return t, n, stride
end

-- A number that an element of type t holds as it is.
local function check_value(v, t, where)
  if v == nil then fail(where, "missing: a %s scalar needs a number", t) end
  if type(v) ~= "number" then fail(where, "%s is not a number", show(v)) end
  if is_float(t) then return v end
  local range = ranges[t]
  if not math.tointeger(v) and v == v and v ~= math.floor(v) then
    fail(where, "%s is not an integer, as %s is", show(v), t)
  end
  if not (v >= range[1] and v <= range[2]) then
    fail(where, "%s is outside %s's range (%.0f to %.0f)", show(v), t, range[1], range[2])
  end
  return math.tointeger(v) or v
end

-- ---- fills ----

local fill_kinds = { constant = true, uninitialized = true, random = true, generator = true,
                     binaryraw = true, file = true }
local raw_formats = { char = "b", uchar = "B", short = "<h", ushort = "<H", int = "<i4",
                      uint = "<I4", long = "<i8", ulong = "<I8", float = "<f", double = "<d" }

-- The numbers of a text file: exactly count of them.
local function numbers_of(data, count, where)
  local out = {}
  for word in data:gmatch("%S+") do
    local v = tonumber(word)
    if not v then fail(where, "holds %s, not a number", show(word)) end
    out[#out + 1] = v
    if #out > count then break end
  end
  if #out ~= count then
    fail(where, "holds %s numbers, the argument %d", #out > count and "more" or tostring(#out),
      count)
  end
  return out
end

-- The DataSource of a BinaryRaw or File fill, read now; an absent file is a
-- note (it may be made before the run: BAT's Python makes MD's) and one of
-- the refusals of kt.t1 (t1_common.refusals).
local function read_source(f, source, where, problem)
  if type(source) ~= "string" or source == "" then
    fail(where, "a %s fill needs a file, found %s", f.fill, show(source))
  end
  where = where .. " " .. show(source)
  local path = source:sub(1, 1) == "/" and source or c.dirname(problem.path) .. "/" .. source
  local data, why, fault = c.kt()._read_regular(path, problem.max_bytes)
  if fault == "absent" then
    local made = problem.bat and "; BAT's Python writes this file when it runs the benchmark " ..
      "(it is not in BAT's tree): run that once, or put the data there" or ""
    f.missing = ("%s: %s%s"):format(where, why, made)
    problem.absent[#problem.absent + 1] = f.missing
    problem.notes[#problem.notes + 1] = ("the data file %s is not there%s"):format(path,
      problem.bat and " (BAT's Python writes it when it runs the benchmark)" or "")
    return
  end
  if not data then fail(where, "%s", why) end
  if f.fill == "file" then
    f.data = numbers_of(data, f.count, where)
  elseif #data ~= f.bytes then
    fail(where, "holds %d bytes, the argument %d", #data, f.bytes)
  else
    f.data = data
  end
end

-- How t (an argument or a reference) fills f = {type =, count =, bytes =}.
local function read_fill(t, f, base, problem)
  local kind, key = lookup(t, "FillType")
  local where = base .. "." .. c.key("FillType", key)
  f.fill = kind == nil and "constant" or type(kind) == "string" and kind:lower()
  if not fill_kinds[f.fill] then
    fail(where, "%s is not Constant, Uninitialized, Random, Generator, BinaryRaw or File",
      show(kind))
  end
  if f.fill == "binaryraw" and not raw_formats[f.type] then
    fail(where, "BinaryRaw of %s is not supported", f.type)
  end
  local value, vkey = lookup(t, "FillValue", "value")
  local vwhere = base .. "." .. c.key("FillValue", vkey)
  if type(value) == "string" then value = tonumber(value) or value end
  if value ~= nil and (f.fill == "constant" or f.fill == "uninitialized") then
    f.value = check_value(value, f.type, vwhere)
  elseif value ~= nil and f.fill == "random" then
    f.value = check_value(value, f.type, vwhere)
    if f.value < 0 then fail(vwhere, "%s is negative: Random fills [0, FillValue)", show(value)) end
  end
  local seed, skey = lookup(t, "RandomSeed")
  if seed ~= nil then
    f.seed = c.integer_of(seed, base .. "." .. c.key("RandomSeed", skey), "RandomSeed")
  end
  local source, dkey = lookup(t, "DataSource", "path")
  f.source = source
  local dwhere = base .. "." .. c.key("DataSource", dkey)
  if f.fill == "generator" then
    if source ~= nil and type(source) ~= "string" then
      fail(dwhere, "%s is no expression", show(source))
    end
    local ok, fn, names = pcall(c.kt()._expression, source or "i")
    if not ok then fail(dwhere, "%s", fn) end
    for _, name in ipairs(names) do
      if name ~= "i" then
        fail(dwhere, "%s reads %s; a Generator reads only i", show(source), name)
      end
    end
    f.generator = fn
    -- what fails for its first or last element (1/0) is a defect now, not
    -- an error once kt.t1 fills the array
    for _, i in ipairs({ 0, math.max((f.count or 1) - 1, 0) }) do
      local fine, err = pcall(fn, { i = i })
      if not fine then
        fail(dwhere, "%s, for i = %d", (tostring(err):gsub("^%[?[%w%.%s\"_]*%]?:%d+: ", "")), i)
      end
    end
  elseif f.fill == "binaryraw" or f.fill == "file" then
    read_source(f, source, dwhere, problem)
  end
end

-- ---- arguments ----

local memories = { scalar = true, vector = true, ["local"] = true, symbol = true }
local accesses = { readonly = "input", writeonly = "output", readwrite = "inout" }

-- The bytes of an argument of size elements of stride components, checked
-- against the limit before they are multiplied.
local function sized(arg, size, where, problem)
  local each = arg.stride * bytes_of[arg.type]
  if size > problem.max_bytes // each then
    fail(where, "%d elements of %d bytes are more than the limit of %d bytes (max_bytes)",
      size, each, problem.max_bytes)
  end
  arg.size, arg.count, arg.bytes = size, size * arg.stride, size * each
end

local function read_size(a, arg, base, problem)
  local size, key = lookup(a, "Size", "length")
  local where = base .. "." .. c.key("Size", key)
  if size == nil then fail(where, "a %s argument needs a Size", arg.memory) end
  local f, _, v = c.compile(size, problem, where)
  if f then fail(where, "%s reads tuning parameters", show(size)) end
  size = c.positive(v, where, "the size")
  if lookup(a, "Type") == "custom" then
    local ts, tkey = lookup(a, "TypeSize")
    size = size * c.positive(ts or 1, base .. "." .. c.key("TypeSize", tkey), "the size")
  end
  sized(arg, size, where, problem)
end

local function read_output(a, base)
  local v, key = lookup(a, "Output")
  if v == nil or v == false then return false end
  if v == true or type(v) == "number" then return v ~= 0 end
  fail(base .. "." .. c.key("Output", key), "%s is not 0, 1, true or false", show(v))
end

-- The argument i of a file: what kt.t1 makes of it, every field checked.
function args.read(a, i, problem)
  local base = ("%s: Arguments[%d]"):format(problem.path, i)
  if type(a) ~= "table" or a[1] ~= nil then fail(base, "expected an object, found %s", show(a)) end
  local name, nkey = lookup(a, "Name")
  if name == nil then name = "argument " .. i
  elseif type(name) ~= "string" or not name:match("^[%a_][%w_]*$") then
    fail(base .. "." .. c.key("Name", nkey), "%s is not an identifier", show(name))
  end
  base = ("%s (%s)"):format(base, name)
  local memory, mkey = lookup(a, "MemoryType")
  local arg = { name = name, where = base }
  arg.memory = memory == nil and "vector" or type(memory) == "string" and memory:lower()
  if not memories[arg.memory] then
    fail(base .. "." .. c.key("MemoryType", mkey), "%s is not Scalar, Vector, Local or Symbol",
      show(memory))
  end
  local ty, tkey = lookup(a, "Type")
  arg.type, arg.components, arg.stride = element_type(ty or "float", problem.language,
    base .. "." .. c.key("Type", tkey))
  local access, akey = lookup(a, "AccessType")
  arg.access = access == nil and "inout" or type(access) == "string" and accesses[access:lower()]
  if not arg.access then
    fail(base .. "." .. c.key("AccessType", akey), "%s is not ReadOnly, WriteOnly or ReadWrite",
      show(access))
  end
  local mem_type, tkey2 = lookup(a, "MemType")
  if mem_type ~= nil and type(mem_type) ~= "string" then
    fail(base .. "." .. c.key("MemType", tkey2), "%s is not a memory type", show(mem_type))
  end
  arg.constant = (mem_type or ""):lower() == "constant"
  arg.output = read_output(a, base)
  if arg.memory == "scalar" then
    local value, vkey = lookup(a, "FillValue", "value")
    if type(value) == "string" then value = tonumber(value) or value end
    arg.value = check_value(value, arg.type, base .. "." .. c.key("FillValue", vkey))
    return arg
  end
  read_size(a, arg, base, problem)
  if arg.memory ~= "local" then read_fill(a, arg, base, problem) end
  return arg
end

-- The reference i, against the arguments read (by name; false: one with defects).
function args.read_reference(r, i, problem, by_name)
  local base = ("%s: ReferenceArguments[%d]"):format(problem.path, i)
  if type(r) ~= "table" or r[1] ~= nil then fail(base, "expected an object, found %s", show(r)) end
  local name = lookup(r, "Name")
  if type(name) == "string" and name:match("^[%w_]+$") then
    base = ("%s (%s)"):format(base, name)
  end
  local target_name, key = lookup(r, "TargetName")
  local target = by_name[target_name]
  if target == false then return nil end -- its argument's defect says what is wrong
  if not target or (target.memory ~= "vector" and target.memory ~= "symbol") then
    fail(base .. "." .. c.key("TargetName", key), "%s is no vector argument", show(target_name))
  end
  local ref = { target = target_name, type = target.type, count = target.count,
                bytes = target.bytes, where = base }
  read_fill(r, ref, base, problem)
  local method, mkey = lookup(r, "ValidationMethod")
  ref.method = ({ AbsoluteDifference = "absolute", SideBySideComparison = "absolute",
                  SideBySideRelativeComparison = "relative" })[method or "AbsoluteDifference"]
  if not ref.method then
    fail(base .. "." .. c.key("ValidationMethod", mkey), "%s is not AbsoluteDifference, " ..
      "SideBySideComparison or SideBySideRelativeComparison", show(method))
  end
  local threshold, tkey = lookup(r, "ValidationThreshold")
  if threshold ~= nil and (type(threshold) ~= "number" or not (threshold >= 0)) then
    fail(base .. "." .. c.key("ValidationThreshold", tkey), "%s is not a number >= 0",
      show(threshold))
  end
  ref.threshold = threshold
  return ref
end

-- ---- building ----

-- Fills array as f (an argument or a reference, read above) says.
local function fill(array, f)
  local kind = f.fill
  if kind == "constant" or kind == "uninitialized" then
    array:fill(f.value or 0)
  elseif kind == "random" then
    local hi = f.value or 1
    array:random(f.seed or 1, 0, is_float(f.type) and hi or math.floor(hi))
  elseif kind == "generator" then
    local fn, env = f.generator, {}
    array:fill(function(i)
      env.i = i
      return fn(env)
    end)
  elseif f.missing then
    error(f.missing, 0)
  elseif kind == "binaryraw" then
    local fmt, data = raw_formats[f.type], f.data
    local size = string.packsize(fmt)
    array:fill(function(i) return (string.unpack(fmt, data, i * size + 1)) end)
  else
    local data = f.data
    array:fill(function(i) return data[i + 1] end)
  end
end

-- An error of building, which no check above foresaw, still names the file
-- and the field: never a place in ktlua's own sources.
local function named(where, err)
  err = tostring(err)
  if err:sub(1, #where) == where then return err end
  return where .. ": " .. err:gsub("^%[?[%w%.%s\"_]*%]?:%d+: ", "")
end

local function make(k, arg, problem, arrays, source)
  if arg.memory == "scalar" then return k.scalar(arg.type, arg.value) end
  if arg.memory == "local" then return k.localmem(arg.type, arg.count) end
  local array = k.array(arg.type, arg.count)
  fill(array, arg)
  arrays[arg.name] = array
  if arg.memory == "symbol" then return k.symbol(arg.name, array) end
  local a = array[arg.access](array)
  return a, arg.constant and problem.language == "CUDA" and source:find(arg.name, 1, true)
    and k.symbol(arg.name, array) or nil
end

-- The argument (and the __constant__ symbol that a CUDA Constant vector
-- also is) that kt.t1 passes.
function args.make(k, arg, problem, arrays, source)
  local ok, a, symbol = pcall(make, k, arg, problem, arrays, source)
  if not ok then error(named(arg.where, a), 0) end
  return a, symbol
end

function args.add_reference(k, ref, arrays)
  local ok, err = pcall(function()
    local target = arrays[ref.target]
    local expected = target:copy()
    fill(expected, ref)
    k:reference(target, expected, { method = ref.method, tolerance = ref.threshold })
  end)
  if not ok then error(named(ref.where, err), 0) end
end

return args
