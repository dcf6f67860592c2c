-- ktlua.t1_signature: a kernel's parameter list, read from its source, and
-- what a T1 file's arguments get wrong about it. The source is read as
-- written, not preprocessed: comments are blanked, and between `void` and
-- the kernel's name, preprocessor lines (with their continuations),
-- attributes (__launch_bounds__(...), __attribute__((...)), [[...]]) and
-- macros (__noinline__, KERNEL_BOUNDS(256)) are passed over.
local c = require "ktlua.t1_common"
local sig = {}

local c_types = {
  char = "char", ["unsigned char"] = "uchar", uchar = "uchar", short = "short",
  ["unsigned short"] = "ushort", ushort = "ushort", int = "int", ["unsigned int"] = "uint",
  unsigned = "uint", uint = "uint", long = "long", ["long long"] = "long",
  ["unsigned long"] = "ulong", ["unsigned long long"] = "ulong", ulong = "ulong",
  int8_t = "char", uint8_t = "uchar", int16_t = "short", uint16_t = "ushort", int32_t = "int",
  uint32_t = "uint", int64_t = "long", uint64_t = "ulong", half = "half", __half = "half",
  float = "float", double = "double", bool = "uchar",
}

local bytes_of = { char = 1, uchar = 1, short = 2, ushort = 2, int = 4, uint = 4, long = 8,
                   ulong = 8, half = 2, float = 4, double = 8 }

-- The source with its comments as blanks (line ends kept, so that a `#`
-- still begins its line).
local function uncommented(source)
  return (source:gsub("/%*.-%*/", function(s) return (s:gsub("[^\n]", " ")) end)
    :gsub("//[^\n]*", function(s) return (" "):rep(#s) end))
end

-- text without the preprocessor line (and the lines it continues) or the
-- attribute or macro at its end; nil when it ends in none of them.
local function drop_last(text)
  local last_start = text:match("()[^\n]*$")
  local start = last_start
  while start > 1 and text:sub(1, start - 2):match("\\%s*$") do -- a continued line
    start = text:sub(1, start - 2):match("()[^\n]*$")
  end
  if text:sub(start):match("^%s*#") then return text:sub(1, start - 1) end
  if text:match("%]%]$") then return text:match("^(.*)%[%[.-%]%]$") end
  if text:sub(-1) == ")" then -- a call: __launch_bounds__(...), MACRO(...)
    local depth, i = 0, #text
    repeat
      local ch = text:sub(i, i)
      depth = depth + (ch == ")" and 1 or ch == "(" and -1 or 0)
      i = i - 1
    until depth == 0 or i < 1
    if depth ~= 0 then return nil end
    local head, word = text:sub(1, i):match("^(.-)([%a_][%w_]*)%s*$")
    if word and (word:match("^__") or word:match("^[%u_][%u%d_]*$")) then return head end
    return nil
  end
  local head, word = text:match("^(.-)([%a_][%w_]*)$")
  if word and word ~= "void" and (word:match("^__") or word:match("^[%u_][%u%d_]*$")) then
    return head
  end
  return nil
end

-- Whether the text before a name ends as a kernel's declaration does:
-- `void`, once what may stand between is passed over.
local function declares(before)
  for _ = 1, 64 do
    before = before:gsub("%s+$", "")
    if before:match("%f[%w_]void$") then return true end
    local shorter = drop_last(before)
    if not shorter then return false end
    before = shorter
  end
  return false
end

-- The first non-blank character after i, past preprocessor lines.
local function next_char(source, i)
  while true do
    local at, ch = source:match("^%s*()(.)", i)
    if ch ~= "#" or not source:sub(1, at - 1):match("\n[ \t]*$") then return ch end
    repeat -- the directive and the lines it continues
      local eol = source:find("\n", at, true)
      if not eol then return nil end
      local continued = source:sub(at, eol - 1):match("\\%s*$")
      at = eol + 1
    until not continued
    i = at
  end
end

local function parameters(list)
  local params = {}
  if list:match("^%s*$") or list:match("^%s*void%s*$") then return params end
  for text in (list .. ","):gmatch("%s*([^,]-)%s*,") do
    text = text:gsub("%s+", " ")
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

-- The parameters of the kernel `name` in source: {text, pointer, type}
-- (type nil where it is no built-in type: a macro, a struct), or nil when
-- the source has no such function or its list cannot be read.
function sig.signature(source, name)
  name = name:match("^[%w_]+")
  source = uncommented(source)
  local from = 1
  while true do
    local s, e = source:find("%f[%w_]" .. name .. "%s*%(", from)
    if not s then return nil end
    local depth, i = 1, e + 1
    while depth > 0 and i <= #source do
      local ch = source:sub(i, i)
      depth = depth + (ch == "(" and 1 or ch == ")" and -1 or 0)
      i = i + 1
    end
    if depth == 0 and next_char(source, i) == "{"
        and declares(source:sub(math.max(1, s - 4096), s - 1)) then
      return parameters(source:sub(e + 1, i - 2))
    end
    from = e
  end
end

-- What the file's arguments get wrong about the kernel's parameters: a
-- defect where the kernel cannot take them; a note where a vector's
-- elements differ from what the kernel's pointer reads, which gets the
-- vector's bytes (as Kernel Tuner and KTT pass them, with a warning).
function sig.check(problem, source)
  local params = sig.signature(source, problem.kernel_name)
  local file = problem.file:match("[^/]*$")
  if not params then
    problem.defects[#problem.defects + 1] = ("%s: KernelName %s: %s defines no such kernel"):format(
      problem.path, c.show(problem.kernel_name), file)
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
    local article = shape:match("^[aeiou]") and "an" or "a"
    if (what == "vector") ~= p.pointer then
      defect("Arguments[%d] (%s) is %s %s %s where %s in %s takes `%s`", i, a.name, article, shape,
        what, problem.kernel_name, file, p.text)
    elseif p.type and p.type ~= a.type and not (a.type == "uchar" and p.type == "char") then
      if what == "scalar" then
        defect("Arguments[%d] (%s) is %s %s scalar where %s in %s takes `%s`", i, a.name, article,
          shape, problem.kernel_name, file, p.text)
      else
        problem.notes[#problem.notes + 1] = ("Arguments[%d] (%s) is %s %s vector where %s in %s " ..
          "takes `%s`: the kernel gets its %d bytes as %d %s elements"):format(i, a.name, article,
          shape, problem.kernel_name, file, p.text, a.bytes, a.bytes // bytes_of[p.type], p.type)
      end
    end
  end
end

return sig
