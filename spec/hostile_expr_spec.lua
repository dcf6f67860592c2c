-- Hostile inputs to the expression engine, the Python list evaluator and
-- kt.json (issue 32, items 3, 4 and 14): every recursion that the input
-- controls is bounded or a loop, strings keep their NUL bytes or refuse
-- them, and arithmetic departs from Python only by raising an error.
local kt = require "ktlua"

local function list_error(text)
  local ok, err = pcall(kt.python_list, text)
  assert.is_false(ok, text)
  return err
end

local function range(a, b)
  local t = {}
  for i = a, b do t[#t + 1] = i end
  return t
end

-- The values of A that the expression keeps, over a space of A alone.
local function kept(values, expr)
  local out = {}
  for _, cfg in kt.space{ params = { { "A", values } }, constraints = { expr } }:configs() do
    out[#out + 1] = cfg.A
  end
  return out
end

local function space_error(values, expr)
  local ok, err = pcall(function() return kept(values, expr) end)
  assert.is_false(ok, expr)
  return err
end

describe("nesting that the input controls (issue 32, item 3)", function()
  it("evaluates 100,000 if clauses in a loop, not on the C stack", function()
    assert.are.same(range(1, 7), kt.python_list("[x for x in range(8) " .. string.rep("if x ", 100000) .. "]"))
    assert.are.same(range(1, 7), kt.python_list("[x for x in range(8) " .. string.rep("if x ", 40000) .. "]"))
    assert.are.same({}, kt.python_list("[x for x in range(8) if x < 0 " .. string.rep("if 1 // 0 ", 1000) .. "]"))
  end)

  it("reads the issue's input from a T1 file", function()
    local p = kt.t1_read("spec/fixtures/fuzz/expr_if_clauses_T1.json.gz")
    assert.are.same(range(1, 7), p.values.WG)
  end)

  it("bounds the conditions a comprehension tests, and what it reads again", function()
    assert.matches("at character 45: the comprehension tests more than 4194304 conditions",
      list_error("[x for x in range(1000000) if x if x if x if x if x]"))
    -- the inner comprehension (4,000 characters) is read for each of 100,000 values of a
    assert.matches("at character 37: the list reads more than 67108864 characters in all %(a " ..
      "comprehension reads its clauses for each value%)",
      list_error("[x for a in range(100000) for x in [" .. ("1 + "):rep(1000) .. "1 for z in [1]]]"))
  end)

  it("bounds parentheses, unary operators, ** and calls, naming the character", function()
    local nests = "nests more than 100 levels deep %(parentheses, calls and unary operators%)"
    assert.matches("at character 102: the expression " .. nests,
      list_error("[" .. ("("):rep(100000) .. "1" .. (")"):rep(100000) .. "]"))
    assert.matches("at character 202: the expression " .. nests, list_error("[" .. ("- "):rep(100000) .. "1]"))
    assert.matches("at character 402: the expression " .. nests,
      list_error("[" .. ("not "):rep(100000) .. "True]"))
    assert.matches("at character 322: the expression nests too deeply: more than 64 operands wait " ..
      "for their operators", list_error("[" .. ("2 ** "):rep(100000) .. "1]"))
    assert.matches("at character 632: the expression nests too deeply",
      list_error("[" .. ("1 + (2 ** "):rep(100000) .. "1]"))
    assert.matches("at character %d+: the expression " .. nests,
      list_error("[" .. ("max("):rep(100000) .. "1" .. (")"):rep(100000) .. "]"))
    assert.matches("at character %d+: the expression " .. nests,
      list_error("[1 in [" .. ("("):rep(100000) .. "1" .. (")"):rep(100000) .. "]]"))
  end)

  it("runs long chains of operators and comparisons as loops", function()
    assert.are.same({ 100001 }, kt.python_list("[" .. ("1 + "):rep(100000) .. "1]"))
    assert.are.same({ 1 }, kt.python_list("[" .. ("True or "):rep(100000) .. "True]"))
    assert.are.same({ 1 }, kt.python_list("[" .. ("1 <= "):rep(1000) .. "1]"))
    assert.are.same({ 2 }, kept({ 1, 2 }, ("A > 1 and "):rep(20000) .. "A > 0"))
  end)

  it("bounds nested lists and comprehensions", function()
    assert.matches("the lists nest more than 64 levels deep",
      list_error(("list("):rep(100000) .. "[1]" .. (")"):rep(100000)))
    assert.matches("the lists nest more than 64 levels deep",
      list_error(("("):rep(100000) .. "[1]" .. (")"):rep(100000)))
    assert.matches("the lists nest more than 64 levels deep",
      list_error(("[1] + list("):rep(100000) .. "[1]" .. (")"):rep(100000)))
    assert.matches("at character 769: the lists nest more than 64 levels deep",
      list_error(("[x for x in "):rep(100) .. "[1]" .. ("]"):rep(100)))
    -- each level looks for its ']' at the end of the text: 1.2 MB, again and again
    assert.matches("the list reads more than 67108864 characters in all",
      list_error(("[x for x in "):rep(100000) .. "[1]" .. ("]"):rep(100000)))
    assert.matches("comprehensions nest more than 16 names deep",
      list_error("[1" .. (" for i in range(1)"):rep(100000) .. "]"))
    assert.matches("at character 2: expected a value, found '%['", list_error(("["):rep(100000)))
  end)

  it("bounds JSON nesting in the reader and the encoder, cycles included", function()
    local deep = "JSON: line 1, column 513: arrays and objects nested more than 512 deep"
    assert.has_error(function() kt.json.decode(("["):rep(100000) .. ("]"):rep(100000)) end,
      "kt.json.decode: " .. deep)
    assert.matches('column 2561: arrays and objects nested more than 512 deep',
      select(2, pcall(kt.json.decode, ('{"a":'):rep(100000))))
    local ok = ("["):rep(512) .. "1" .. ("]"):rep(512)
    assert.are.equal(ok, kt.json.encode(kt.json.decode(ok)))
    local t = {}
    for _ = 1, 100000 do t = { t } end
    assert.has_error(function() kt.json.encode(t) end,
      "kt.json.encode: the value" .. ("[1]"):rep(512) .. " nests tables more than 512 deep")
    local cycle = { a = {} }
    cycle.a.b = { cycle }
    assert.has_error(function() kt.json.encode(cycle) end,
      "kt.json.encode: the value.a.b[1] holds itself (JSON has no cycles)")
    -- the path to a value is written out only for an error: long keys cost their length
    local key = ("k"):rep(100000)
    local long = { x = 0 / 0 }
    for _ = 1, 3 do long = { [key] = long } end
    assert.has_error(function() kt.json.encode(long) end,
      "kt.json.encode: the value" .. ("." .. key):rep(3) .. ".x is not a finite number (JSON has none)")
  end)
end)

describe("strings with NUL bytes (issue 32, item 4)", function()
  it("encodes keys and values whole, sorted bytewise", function()
    assert.are.equal('{"\\u0000abc":1,"b":2,"c":3}', kt.json.encode({ ["\0abc"] = 1, b = 2, c = 3 }))
    assert.are.equal('{"a":1,"a\\u0000":2,"a\\u0000b":"x\\u0000y"}',
      kt.json.encode({ a = 1, ["a\0"] = 2, ["a\0b"] = "x\0y" }))
    assert.are.equal('["\\u0000"]', kt.json.encode({ "\0" }))
    assert.are.equal('{"1":"i","x":"s"}', kt.json.encode({ [1] = "i", x = "s" }))
  end)

  it("decodes \\u0000 in keys and values", function()
    local d = kt.json.decode('{"a\\u0000b": 1, "a": 2, "v": "x\\u0000y"}')
    assert.are.equal(1, d["a\0b"])
    assert.are.equal(2, d.a)
    assert.are.equal("x\0y", d.v)
    local t = { ["\0abc"] = 1, b = { ["\0"] = "\0\0" } }
    assert.are.same(t, kt.json.decode(kt.json.encode(t)))
  end)

  it("refuses a key that is both an integer and a string", function()
    assert.has_error(function() kt.json.encode({ [1] = 1, ["1"] = 2, x = 3 }) end,
      "kt.json.encode: the value has the key 1 both as an integer and as a string (one name in JSON)")
  end)

  it("refuses NUL bytes where C reads a string", function()
    assert.matches("bad argument #1 to '[^']*python_list' %(holds a NUL byte at character 4 %(C strings end there%)%)",
      list_error("[1]\0 + [2]"))
    assert.matches("holds a NUL byte at character 2", select(2, pcall(kt._expression, "A\0 + 1")))
    assert.matches("holds a NUL byte at character 6",
      select(2, pcall(kt.space, { params = { { "A", { 1 } } }, constraints = { "A > 0\0 or A < 0" } })))
    assert.matches("holds a NUL byte at character 2",
      select(2, pcall(kt.space, { params = { { "A\0B", { 1 } } } })))
    assert.matches("value 2 holds a NUL byte",
      select(2, pcall(kt.space, { params = { { "A", { "x", "x\0y" } } } })))
    assert.matches("a constant's name or value holds a NUL byte",
      select(2, pcall(kt.space, { params = { { "A", { 1 } } }, constraints = { { "A == N", { N = "x\0y" } } } })))
    assert.matches("'S' holds a NUL byte", select(2, pcall(kt._expression("S == 'x'"), { S = "x\0y" })))
    local s = kt.space{ params = { { "S", { "x", "y" } } } } -- "x\0y" is not "x"
    assert.is_nil(s:index{ S = "x\0y" })
    assert.are.equal(0, s:index{ S = "x" })
    assert.matches("a string may not hold a NUL character", list_error("['\\0']"))
    assert.matches("a string may not hold a NUL character", list_error("['\\x00']"))
  end)
end)

describe("the Python subset's arithmetic (issue 32, item 14)", function()
  local overflow = "integer overflow in %s: the result does not fit in 64 bits"
  it("makes integer overflow an error naming the character, in both machines", function()
    local cases = {
      { "[2**64]", 3, "'**'" }, { "[9223372036854775807 + 1]", 22, "'+'" },
      { "[-9223372036854775807 - 2]", 23, "'-'" }, { "[2**62 * 4]", 8, "'*'" },
      { "[-(-9223372036854775807 - 1)]", 2, "unary '-'" },
      { "[(-9223372036854775807 - 1) // -1]", 29, "'//'" },
      { "[abs(-9223372036854775807 - 1)]", 2, "abs" },
    }
    for _, c in ipairs(cases) do
      assert.matches(("at character %d: " .. overflow):format(c[2], c[3]:gsub("[%*%+%-]", "%%%0")),
        list_error(c[1]), c[1])
    end
    assert.are.same({ -9223372036854775807 - 1 }, kt.python_list("[(-2) ** 63]"))
    assert.are.same({ 4611686018427387904 }, kt.python_list("[2 ** 62]"))
    assert.matches("the integer 9223372036854775808 does not fit in 64 bits", list_error("[9223372036854775808]"))
    -- the integer machine (conditions on integers) and the bytecode machine agree
    for _, e in ipairs({ "A * A > 0", "A * A > 0 and 1.5 > 1", "A + A > 0", "-A * 3 < 0", "A ** 3 > 0" }) do
      assert.are.same({ 3 }, kept({ 3 }, e), e)
      assert.matches("at character %d+: integer overflow in ", space_error({ 3, 4611686018427387904 }, e), e)
    end
    assert.matches("at character 1: integer overflow in abs",
      space_error({ 1, -9223372036854775807 - 1 }, "abs(A) > 0"))
  end)

  it("makes a division by zero an error for integers and floats, as Python does", function()
    assert.matches("at character 3: division by zero", list_error("[1/0]"))
    assert.matches("at character 5: division by zero", list_error("[1.0/0.0]"))
    assert.matches("at character 6: float floor division by zero", list_error("[1.5 // 0]"))
    assert.matches("at character 4: float modulo by zero", list_error("[1 % 0.0]"))
    assert.matches("at character 4: integer division by zero", list_error("[1 // 0]"))
    assert.matches("at character 4: integer modulo by zero", list_error("[1 % 0]"))
    assert.matches("at character 4: '%*%*': 0 cannot be raised to a negative power", list_error("[0 ** -1]"))
    assert.matches("at character 6: '%*%*': 0 cannot be raised to a negative power", list_error("[0.0 ** -2]"))
    assert.matches("pow: 0 cannot be raised to a negative power", list_error("[pow(0, -1)]"))
    assert.matches("a negative number to a fractional power %(%(%-8%) %*%* 0.5%) is a complex number",
      list_error("[(-8) ** 0.5]"))
    assert.matches("'%*%*': the result is too large for a float", list_error("[10.0 ** 400]"))
    assert.matches("sqrt of the negative number %-1", list_error("[sqrt(-1)]"))
    assert.matches("at character 3: division by zero", space_error({ 1 }, "A / 0 > 1"))
    assert.matches("at character 3: float modulo by zero", space_error({ 1 }, "A % 0.0 == 1"))
    assert.are.same({ 0.5, 1 }, kt.python_list("[2 ** -1, 1.0 ** -5]"))
  end)

  it("reads Python's string escapes and prefixes", function()
    assert.are.same({ "a\nb", 'c"d', "e'f]", "g\\nh", "iA\u{e9}\u{1F600}", "A\\q", "x", 'y\\"z', "\t\\", "ab" },
      kt.python_list([==[['a\nb', "c\"d", 'e\'f]', r'g\nh', 'i\x41\u00e9\U0001F600', '\101\q', u'x', R"y\"z", '\t\\', 'a\
b']]==]))
    assert.are.same({ "a]" }, kt.python_list([==[[x for x in ['a]', 'b'] if x == 'a]']]==]))
    assert.are.same({ 2 }, kept({ 1, 2 }, [==["\x41" == 'A' and A > 1]==]))
    local unsupported = {
      ["[b'x']"] = "at character 2: bytes literals %(b'...'%) are not supported",
      ["[f'x']"] = "at character 2: f%-strings %(f'...'%) are not supported",
      ["['''x''']"] = "at character 2: triple%-quoted strings are not supported",
      ["['\\N{DASH}']"] = "at character 3: \\N{...} escapes are not supported",
      ["['\\ud800']"] = "at character 3: the escape gives no Unicode character %(U%+D800%)",
      ["['\\x4']"] = "at character 3: truncated \\xhh escape",
      ["[ur'x']"] = "at character 2: 'ur' is no string prefix",
      ["['a\nb']"] = "at character 2: unterminated string",
      ["['abc\\']"] = "at character 2: unterminated string",
    }
    for text, why in pairs(unsupported) do assert.matches(why, list_error(text), text) end
  end)

  it("scopes comprehensions as Python 3 does", function()
    assert.are.same({ 0, 1, 2 }, kt.python_list("[y for y in [z for z in range(3)]]"))
    assert.matches("at character 2: unknown name 'z'", list_error("[z for y in [z for z in range(3)]]"))
    assert.matches("at character 38: unknown name 'z'", list_error("[y for y in [z for z in range(3)] if z]"))
    assert.are.same({ 0, 1, 10 }, -- x = 1: y in [0, 2]
      kt.python_list("[x * 10 + y for x in range(2) for y in [z * x + z for z in range(2)] if y < 2]"))
    assert.are.same({ 0, 1, 1, 2 }, kt.python_list("[x + y for x in range(2) for y in [x for x in range(2)]]"))
    assert.matches("at character 25: unknown name 'y'", list_error("[x for x in range(2) if y for y in range(2)]"))
  end)
end)

describe("Python's arithmetic, operator by operator (issue 39, item 5)", function()
  -- The value of a constant expression, as a T1 file's value is computed.
  local function value(text) return kt.python_list("[" .. text .. "]")[1] end
  -- A float and the sign of a zero: -0.0 == 0.0 in Lua.
  local function same_float(want, got, text)
    assert.are.equal("float", math.type(got), text)
    assert.are.equal(want, got, text)
    if want == 0 then assert.are.equal(1 / want, 1 / got, text .. ": the sign of the zero") end
  end

  it("gives a float % the sign of the divisor, zeros included", function()
    local cases = { ["-7.5 % -2"] = -1.5, ["7.5 % -2"] = -0.5, ["-7.5 % 2"] = 0.5, ["-7 % 2.5"] = 0.5,
      ["0.0 % -5"] = -0.0, ["-0.0 % 5"] = 0.0, ["6.0 % -3"] = -0.0, ["-5.0 % 1e999"] = math.huge }
    for text, want in pairs(cases) do same_float(want, value(text), text) end
    -- T1 values, constraints on floats and constraints on integers alike
    assert.are.same({ -7.5 }, kept({ -7.5, -6.5, 7.5 }, "A % -2 == -1.5"))
    assert.are.same({ -7, 7 }, kept({ -7, -6, 7 }, "A % -2 == -1"))
  end)

  it("floors // as Python does, from the exact remainder rather than a rounded quotient", function()
    local cases = { ["1 // 0.1"] = 9.0, ["-5.0 // 1e999"] = -1.0, ["5.0 // 1e999"] = 0.0, ["0.5 // -1e999"] = -1.0,
      ["7 // -2.0"] = -4.0, ["9007199254740992 // 2.5"] = 3602879701896396.0, ["-0.0 // 5"] = -0.0 }
    for text, want in pairs(cases) do same_float(want, value(text), text) end
    local nan = value("1e999 // 2")
    assert.is_true(nan ~= nan, "inf // 2 is nan")
    assert.are.same({ 1 }, kept({ 1, 2 }, "A // 0.1 == 9 * A"))
  end)

  it("rounds int / int once, as Python's true division (not each operand, then the quotient)", function()
    same_float(5918289650760.403, value("5258986265376043509 / 888599"), "beyond 2^53")
    same_float(-3.0744573456182584e+18, value("-9223372036854775807 / 3"), "the least integer + 1")
    same_float(-0.0, value("0 / -5"), "0 / -5")
    same_float(-0.0, value("0 / -1000000000000000000"), "0 / -10^18")
    assert.are.same({ 888599 }, kept({ 888598, 888599 }, "5258986265376043509 / A == 5918289650760.403"))
  end)

  it("gives infinite powers their IEEE values, as Python does, and refuses only finite ones", function()
    same_float(math.huge, value("(-1e999) ** 0.5"), "(-inf) ** 0.5")
    same_float(math.huge, value("0.0 ** -1e999"), "0.0 ** -inf")
    same_float(math.huge, value("pow(0, -1e999)"), "pow(0, -inf)")
    same_float(-math.huge, value("(-1e999) ** 3"), "(-inf) ** 3")
    assert.matches("at character 4: '%*%*': 0 cannot be raised to a negative power", list_error("[0 ** -1e308]"))
    assert.matches("is a complex number", list_error("[(-1e308) ** 0.5]"))
  end)

  it("makes floor and ceil of a float an integer or an error, never a float", function()
    assert.are.equal(math.mininteger, value("floor(-9223372036854775808.0)"))
    assert.matches("at character 2: integer overflow in floor: the result does not fit in 64 bits", list_error("[floor(1e300)]"))
    assert.matches("at character 2: integer overflow in ceil", list_error("[ceil(9223372036854775808.0)]"))
    assert.matches("at character 2: ceil: the float %-inf has no integer value", list_error("[ceil(-1e999)]"))
    assert.matches("at character 2: floor: the float nan has no integer value", list_error("[floor(1e999 - 1e999)]"))
    assert.matches("integer overflow in floor", space_error({ 1e300 }, "floor(A) > 0"))
  end)

  it("evaluates every item of an 'in' list, as Python builds the list first", function()
    assert.matches("at character 13: integer division by zero", list_error("[1 in [1, 1 // 0]]"))
    assert.matches("at character 17: integer division by zero", list_error("[1 not in (1, 1 // 0)]"))
    assert.matches("at character 4: integer division by zero", list_error("[1 // 0 in []]"))
    assert.are.same({ 0, 1 }, kt.python_list("[1 in [], 1 not in ()]"))
    -- the integer machine and the bytecode machine alike
    assert.matches("at character 12: integer division by zero", space_error({ 1 }, "A in [1, A // 0]"))
    assert.matches("at character 12: float modulo by zero", space_error({ 1 }, "A in [1, A % 0.0]"))
    assert.matches("at character 3: integer division by zero", space_error({ 1 }, "A // 0 not in []"))
    assert.are.same({ 2 }, kept({ 1, 2 }, "A in [0, 2, 2, 3]"))
    assert.are.same({ 1 }, kept({ 1, 2 }, "A not in [0, 2, 2, 3] and A not in []"))
  end)
end)
