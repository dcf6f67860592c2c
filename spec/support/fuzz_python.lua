-- The Python fuzzer (spec/fuzz_spec.lua): expressions of the Python subset
-- (doc/python.md) generated from Python's grammar, evaluated by ktlua and
-- by Python 3 (spec/support/python_expr.py, one process for all of them),
-- compared exactly: the same integer, the same float (bit for bit, the
-- sign of a zero and NaN included: C's libm and Python compute +, -, *, /,
-- sqrt and pow alike, so no ulp is allowed), or an error of the same
-- class. Where Python's integers leave 64 bits ktlua must stop with an
-- error rather than give a number.
local kt = require "ktlua"
local fuzz = require "spec.support.fuzz"

local M = {}

M.python = "/usr/bin/python3"

-- ---- generation ----

local INTS = { 0, 1, 2, 3, 4, 5, 7, 8, 10, 16, 100, 255, 1000, 888599 }
local BIG_INTS = { 2147483647, 2147483648, 4294967296, 3037000499, 3037000500, 9007199254740992,
  9007199254740993, 4611686018427387904, 1000000000000000000, 5258986265376043509, math.maxinteger }
local FLOATS = { "0.0", "0.5", "1.5", "2.5", "7.5", "0.1", "0.2", "0.3", "3.0", "1e-300", "5e-324",
  "1e300", "1e308", "1.7976931348623157e308", "1e999", "9007199254740992.0", "9007199254740994.0",
  "0.3333333333333333", "0.6666666666666666", "1e16", "123.456", "1e-05", ".5", "2.", "1E3" }

-- A float's text that Python and ktlua read as that float (a '.' or an 'e').
local function float_text(x)
  local s = ("%.17g"):format(x)
  if not s:find("[.eEni]") then s = s .. ".0" end
  return s
end

local function int_literal(rng)
  local v
  if rng:chance(0.7) then v = rng:pick(INTS)
  elseif rng:chance(0.95) then v = rng:pick(BIG_INTS)
  else return rng:pick({ "9223372036854775808", "100000000000000000000" }) end -- beyond 64 bits
  if rng:chance(0.1) then return ("0x%X"):format(v) end
  return tostring(v)
end

local function float_literal(rng)
  if rng:chance(0.6) then return rng:pick(FLOATS) end
  return float_text(rng:int(0, 2000) / rng:pick({ 1, 2, 3, 4, 7, 8, 10, 1024, 1e10 }))
end

local NAMES = { "A", "B", "C" }

-- A name's value: an integer or a finite float, often negative.
local function value(rng)
  local v
  if rng:chance(0.6) then v = rng:pick(INTS)
  elseif rng:chance(0.3) then v = rng:pick(BIG_INTS)
  else v = rng:int(0, 400) / rng:pick({ 2, 4, 3, 10, 1 << 20 }) end
  if rng:chance(0.4) then v = -v end
  return v
end

local ARITH = { "+", "-" }
local TERM = { "*", "/", "//", "%", "%", "//" }
local COMPARE = { "==", "!=", "<", "<=", ">", ">=" }
local CALLS = { { "min", 2, 3 }, { "max", 2, 3 }, { "abs", 1, 1 }, { "floor", 1, 1 }, { "ceil", 1, 1 },
  { "sqrt", 1, 1 }, { "pow", 2, 2 } }

-- Python's levels, loosest first: 0 a if c else b, 1 or, 2 and, 3 not,
-- 4 comparisons and in, 5 + -, 6 * / // %, 7 unary -, 8 **, 9 atoms.
local gen

local function spaced(rng, op)
  return rng:chance(0.8) and (" " .. op .. " ") or op
end

local function atom(rng, depth)
  local k = rng:int(depth > 0 and 8 or 5)
  if k <= 2 then return int_literal(rng)
  elseif k == 3 then return float_literal(rng)
  elseif k == 4 then return rng:chance(0.2) and rng:pick({ "True", "False" }) or rng:pick(NAMES)
  elseif k == 5 then return rng:pick(NAMES)
  elseif k <= 7 then
    local f = rng:pick(CALLS)
    local args = {}
    for i = 1, rng:int(f[2], f[3]) do args[i] = gen(rng, 0, depth - 1) end
    return f[1] .. "(" .. table.concat(args, ", ") .. ")"
  end
  return "(" .. gen(rng, 0, depth - 1) .. ")"
end

-- x in [a, b] or a tuple (never '(a)', which Python reads as a itself).
local function membership(rng, depth)
  local items = {}
  for i = 1, rng:int(0, 3) do items[i] = gen(rng, 5, depth - 1) end
  local list
  if rng:chance(0.5) then list = "[" .. table.concat(items, ", ") .. "]"
  else list = "(" .. table.concat(items, ", ") .. (#items == 1 and ",)" or ")") end
  return gen(rng, 5, depth - 1) .. (rng:chance(0.5) and " in " or " not in ") .. list
end

-- An expression that Python reads where the grammar wants `level`: one of
-- a looser level goes in parentheses.
local function construct(rng, level, depth)
  local k = rng:int(0, 9)
  if k == 0 then
    return gen(rng, 1, depth - 1) .. " if " .. gen(rng, 1, depth - 1) .. " else " .. gen(rng, 0, depth - 1), 0
  elseif k == 1 or k == 2 then
    local word = k == 1 and " or " or " and "
    return gen(rng, k + 1, depth - 1) .. word .. gen(rng, k + 1, depth - 1), k
  elseif k == 3 then return "not " .. gen(rng, 3, depth - 1), 3
  elseif k == 4 then
    if rng:chance(0.3) then return membership(rng, depth), 4 end
    local parts = { gen(rng, 5, depth - 1) }
    for _ = 1, rng:int(1, 2) do
      parts[#parts + 1] = spaced(rng, rng:pick(COMPARE))
      parts[#parts + 1] = gen(rng, 5, depth - 1)
    end
    return table.concat(parts), 4
  elseif k == 5 then return gen(rng, 5, depth - 1) .. spaced(rng, rng:pick(ARITH)) .. gen(rng, 6, depth - 1), 5
  elseif k <= 7 then return gen(rng, 6, depth - 1) .. spaced(rng, rng:pick(TERM)) .. gen(rng, 7, depth - 1), 6
  elseif k == 8 then return "-" .. (rng:chance(0.3) and " " or "") .. gen(rng, 7, depth - 1), 7
  end
  -- mostly small exponents: larger ones leave 64 bits at once
  local exponent = rng:chance(0.6) and rng:pick({ "0", "1", "2", "3", "-1", "-2", "0.5", "63", "64" })
    or gen(rng, 7, depth - 1)
  return atom(rng, depth - 1) .. spaced(rng, "**") .. exponent, 8
end

function gen(rng, level, depth)
  if depth <= 0 or rng:chance(0.25) then return atom(rng, 0) end
  local text, own = construct(rng, level, depth)
  if own < level then return "(" .. text .. ")" end
  return text
end

-- Case n: the names' values and the expression.
function M.case(rng)
  local vars = {}
  for _, name in ipairs(NAMES) do vars[name] = value(rng) end
  return vars, gen(rng, 0, rng:int(1, 5))
end

-- ---- the line Python reads ----

local function number_text(v)
  if math.type(v) == "integer" then return "i:" .. v end
  return "f:" .. ("%a"):format(v)
end

function M.line(vars, text)
  local names = {}
  for _, name in ipairs(NAMES) do
    if vars[name] ~= nil then names[#names + 1] = name .. "=" .. number_text(vars[name]) end
  end
  return table.concat(names, ";") .. "|" .. text
end

-- A case line read back: its names and text.
function M.parse_line(line)
  local head, text = line:match("^([^|]*)|(.*)$")
  local vars = {}
  for name, kind, v in head:gmatch("(%w+)=(%a):([^;]+)") do
    vars[name] = kind == "i" and math.tointeger(v) or tonumber(v)
  end
  return vars, text
end

-- Python's results for the case lines, in order (one python3 process).
function M.run_python(dir, lines)
  local input, output = dir .. "/python.cases", dir .. "/python.results"
  fuzz.write(input, table.concat(lines, "\n") .. "\n")
  local ok = os.execute(("%s spec/support/python_expr.py < '%s' > '%s' 2>&1"):format(M.python, input, output))
  local f = assert(io.open(output))
  local results = {}
  for l in f:lines() do results[#results + 1] = l end
  f:close()
  assert(ok, "python_expr.py failed:\n" .. table.concat(results, "\n"))
  assert(#results == #lines, ("python_expr.py gave %d results for %d cases"):format(#results, #lines))
  return results
end

-- ---- ktlua's side ----

local CLASSES = {
  { "integer overflow", "overflow" }, { "does not fit in 64 bits", "overflow" }, { "by zero", "zero" },
  { "0 cannot be raised to a negative power", "zeropow" }, { "is a complex number", "complex" },
  { "too large for a float", "toolarge" }, { "sqrt of the negative", "sqrt" },
  { "has no integer value", "nonint" },
}

local function error_class(msg)
  for _, c in ipairs(CLASSES) do
    if tostring(msg):find(c[1], 1, true) then return c[2] end
  end
  return "other (" .. tostring(msg) .. ")"
end

-- ktlua's result as python_expr.py writes one ("i 3", "f HEX", "e CLASS").
local function result_of(ok, v)
  if not ok then return "e " .. error_class(v) end
  if type(v) == "boolean" then return "i " .. (v and 1 or 0) end
  if math.type(v) == "integer" then return "i " .. v end
  return ("f %a"):format(v), v
end

-- The float of Python's "f HEX REPR".
local function python_float(hex)
  if hex == "inf" then return math.huge elseif hex == "-inf" then return -math.huge
  elseif hex == "nan" then return 0 / 0 end
  return tonumber(hex)
end

local function same(mine, x, theirs)
  local kind, rest = theirs:match("^(%a) (.*)$")
  if kind ~= "f" then return mine == theirs end
  if not x then return false end
  local y = python_float(rest:match("^(%S+)"))
  if x ~= x or y ~= y then return x ~= x and y ~= y end
  return x == y and (x ~= 0 or 1 / x == 1 / y) -- the sign of a zero too
end

-- Whether ktlua's constraint machines agree: a space of the names (one value
-- each) keeps its configuration when the value is true. Integers alone take
-- the integer machine (core/space/expr_ints.c).
local function check_space(vars, text, theirs)
  local params = {}
  for _, name in ipairs(NAMES) do
    if vars[name] ~= nil then params[#params + 1] = { name, { vars[name] } } end
  end
  local ok, n = pcall(function() return kt.space{ params = params, constraints = { text } }:count() end)
  local kind, rest = theirs:match("^(%a) (%S+)")
  if kind == "e" then
    if ok or error_class(n) ~= rest then return ("as a constraint: %s, Python: %s"):format(ok and ("count " .. n) or n, theirs) end
    return nil
  end
  local truth = kind == "i" and tonumber(rest) ~= 0 or (kind == "f" and python_float(rest) ~= 0)
  if not ok then return "as a constraint: " .. n .. ", Python: " .. theirs end
  if n ~= (truth and 1 or 0) then return ("as a constraint: count %d, Python: %s"):format(n, theirs) end
end

-- nil when ktlua gives what Python gave, else what differs.
function M.compare(vars, text, theirs)
  if theirs:match("^x ") then return "no test: " .. theirs end
  local ok, f, names = pcall(kt._expression, text)
  local reads = ok and #names > 0
  if ok then ok, f = pcall(f, vars) end
  local mine, x = result_of(ok, f)
  if not same(mine, x, theirs) then
    return ("ktlua: %s%s, Python: %s"):format(mine, x and (" " .. ("%.17g"):format(x)) or "", theirs)
  end
  if reads then return check_space(vars, text, theirs) end
end

return M
