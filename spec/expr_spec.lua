-- Expression constraints: syntax, Lua's arithmetic, type checks, errors
-- that point at a character, and agreement with Lua functions.
local kt = require "ktlua"

local tuner = kt.tuner()
local src = "__kernel void k(__global float *a) {}"
local function kernel() return tuner:kernel{ source = src, name = "k", global = 64 } end

-- The values of a kept by `expr` over the parameter A.
local function kept(values, expr, constants)
  local k = kernel()
  k:param("A", values)
  k:constraint(expr, constants)
  local out = {}
  for _, cfg in k:space():configs() do out[#out + 1] = cfg.A end
  return out
end

local function constraint_error(expr)
  local k = kernel()
  k:param("A", { 1, 2 })
  k:param("B", { 1, 2 })
  k:param("S", { "float", "double" })
  local ok, err = pcall(k.constraint, k, expr)
  assert.is_false(ok, expr)
  return err
end

describe("an expression constraint", function()
  it("finds its parameters and prunes like a function", function()
    local k = kernel()
    k:param("WG", { 32, 64, 128, 256 })
    k:param("VEC", { 1, 2, 4, 8 })
    k:param("UNUSED", { 0, 1 })
    k:constraint("WG*VEC <= 256")
    -- 32: 4, 64: 3, 128: 2, 256: 1 -> 10, times 2
    assert.are.equal(20, k:space():count())
  end)

  it("computes as Lua does: integer and float arithmetic", function()
    local v = { -7, -3, 0, 2, 3, 7 }
    assert.are.same({ -7, -3, 2, 3 }, kept(v, "A // 2 == -4 || A // 2 == -2 || A // 2 == 1"))
    assert.are.same({ -7, -3, 3, 7 }, kept(v, "A % 2 == 1"))      -- the sign of the divisor
    assert.are.same({ -7, -3, 3, 7 }, kept(v, "A % -2 == -1"))
    assert.are.same({ 3, 7 }, kept(v, "A / 2 > 1"))               -- / gives a float
    assert.are.same({ 3 }, kept(v, "A / 2 == 1.5"))
    assert.are.same({ -3, 0, 3 }, kept(v, "A % 3 == 0.0"))         -- 0 == 0.0
    assert.are.same({ -7, 7 }, kept(v, "A * A - 1 == 48"))
    assert.are.same({ 2 }, kept(v, "-A == -2"))
    assert.are.same({ -7, -3, 0, 2, 3 }, kept(v, "5.5 % 2 == 1.5 && A < 5"))
    assert.are.same({ 0, 2, 3, 7 }, kept(v, "-7 // 2.0 == -4 && A >= 0"))
    assert.are.same({ 7 }, kept(v, "A == 0x7"))
    assert.are.same({ 2 }, kept(v, "A == 2e0"))
    assert.are.same({ 0, 2 }, kept(v, "A < .25e1 && A >= 0"))
  end)

  it("compares integers with floats exactly, as Lua does, also beyond 2^53", function()
    local big = { 9007199254740992, 9007199254740993, math.maxinteger, math.mininteger }
    for _, e in ipairs({ "A == 9007199254740992.0", "A > 9007199254740992.0", "A < 9223372036854775808.0",
                         "A >= -9223372036854775808.0", "A <= -9223372036854775808.0", "A > 1e309", "A < -1e309", "A == 1e309 - 1e309", "A ~= 1e309 - 1e309",
                         "9007199254740993 > 9007199254740992.0 and A > 0",
                         "max(A, 9007199254740992.0) == A" }) do
      local expect = {}
      local fn = load("local A = ...; return " .. e:gsub("max", "math.max"))
      for _, a in ipairs(big) do if fn(a) then expect[#expect + 1] = a end end
      assert.are.same(expect, kept(big, e), e)
    end
  end)

  it("has min, max, abs, floor, ceil, sqrt and pow", function()
    local v = { -7, -3, 0, 2, 3, 7 }
    assert.are.same({ -7, -3, 0, 2 }, kept(v, "min(A, 3, 5) < 3"))
    assert.are.same({ 3, 7 }, kept(v, "max(A, 2) > 2"))
    assert.are.same({ -3, 3 }, kept(v, "abs(A) == 3"))
    assert.are.same({ 3 }, kept(v, "floor(A / 2) == 1 && ceil(A / 2) == 2"))
    assert.are.same({ 0, 2, 3 }, kept(v, "A >= 0 && sqrt(A) < 2"))
    assert.are.same({ 7 }, kept(v, "pow(2, A) == 128"))
  end)

  it("short-circuits && and || so that the right side may divide", function()
    local v = { 0, 2, 3, 4 }
    assert.are.same({ 2, 4 }, kept(v, "A != 0 && 8 % A == 0"))
    assert.are.same({ 0, 2, 4 }, kept(v, "A == 0 || 8 % A == 0"))
    assert.are.same({ 2, 4 }, kept(v, "A ~= 0 and not (8 % A ~= 0)"))
    assert.are.same({ 0, 3 }, kept(v, "!(A == 2 || A == 4)"))
    assert.are.same({ 0, 2, 3, 4 }, kept(v, "A >= 0 && (true || false)"))
    assert.are.same({ 3 }, kept(v, "(A > 2) == (A < 4)"))
  end)

  it("compares strings for equality", function()
    local k = kernel()
    k:param("T", { "float", "double", "half" })
    k:param("V", { 1, 2, 4 })
    k:constraint("T != 'double' || V <= 2")
    k:constraint('T == "half" && V == 1 || T != "half"')
    -- float: 3, double: 2, half: 1
    assert.are.equal(6, k:space():count())
  end)

  it("takes constants from a table", function()
    assert.are.same({ 1, 2, 4 }, kept({ 1, 2, 3, 4, 5 }, "N % A == 0", { N = 4096 }))
    assert.are.same({ 2 }, kept({ 1, 2 }, "A * SCALE == 3", { SCALE = 1.5 }))
    assert.are.same({ 1 }, kept({ 1, 2 }, "T == 'float' && A == 1", { T = "float", UNUSED = 7 }))
    local k = kernel()
    k:param("A", { 1 })
    assert.has_error(function() k:constraint("A < N", { N = {} }) end)
    assert.has_error(function() k:constraint("A < N", { [1] = 2 }) end)
  end)

  it("points at the offending character of a parse error", function()
    assert.matches("constraint 'A %% %(B%*2%)%) == 0': at character 10: unexpected '%)' after a " ..
      "complete expression", constraint_error("A % (B*2)) == 0"))
    assert.matches("constraint 'A %+': at character 4: expected a value, found the end of the " ..
      "expression", constraint_error("A +"))
    assert.matches("at character 3: '&' is not an operator: write '&&' %(or 'and'%)",
      constraint_error("A & B"))
    assert.matches("at character 3: '|' is not an operator: write '||' %(or 'or'%)",
      constraint_error("A | B"))
    assert.matches("at character 3: '=' is not an operator: write '==' to compare",
      constraint_error("A = B"))
    assert.matches("at character 3: '%^' is not an operator: write x %*%* y or pow%(x, y%)",
      constraint_error("A ^ 2 > 1"))
    assert.matches("at character 5: unexpected character '@'", constraint_error("A < @"))
    assert.matches("at character 6: 'in' takes a list: %[1, 2%] or %(1, 2%)",
      constraint_error("A in B"))
    assert.matches("at character 9: expected ',' or '%]' in the list at character 6",
      constraint_error("A in [1 2]"))
    assert.matches("at character 13: 'in' does not chain with other comparisons: join them " ..
      "with and", constraint_error("A in [1, 2] == B"))
    assert.matches("at character 7: 'in' does not chain", constraint_error("A < B in [1]"))
    assert.matches("at character 3: unexpected 'not' after a complete expression",
      constraint_error("A not B"))
    assert.matches("at character 7: expected '%)' to close the '%(' at character 1",
      constraint_error("(A < 2"))
    assert.matches("at character 1: unknown function 'mn' %(expected min, max, abs, floor, " ..
      "ceil, sqrt or pow%)", constraint_error("mn(A, B) > 1"))
    assert.matches("at character 1: pow takes 2 arguments", constraint_error("pow(A) > 1"))
    assert.matches("at character 5: malformed number '2x'", constraint_error("A < 2x"))
    assert.matches("at character 6: unterminated string", constraint_error("S == 'float"))
    assert.matches("at character 1: expected a value, found the end of the expression",
      constraint_error(""))
  end)

  it("reads Kernel Tuner's Python syntax: **, in, chained comparisons, True, not", function()
    local v = { 1, 2, 3, 4, 8, 16 }
    assert.are.same({ 2, 3, 4 }, kept(v, "1 < A <= 4"))
    assert.are.same({ 2, 3, 4 }, kept(v, "1 < A and A <= 4"))
    assert.are.same({ 3, 4, 8 }, kept(v, "2 < A < 16 != A + 1 > 3"))   -- four links
    assert.are.same({ 2 }, kept(v, "A == 2 == A"))
    assert.are.same({ 1, 2, 8 }, kept(v, "A in [1, 2, 8]"))
    assert.are.same({ 1, 2, 8 }, kept(v, "A in (1, 2, 8,)"))
    assert.are.same({ 3, 4, 16 }, kept(v, "A not in [1, 2, 8]"))
    assert.are.same({ 2, 4 }, kept(v, "A * 2 in [A + 2, 8]"))
    assert.are.same({}, kept(v, "A in []"))
    assert.are.same(v, kept(v, "A not in []"))
    assert.are.same({ 4, 8, 16 }, kept(v, "2 ** A >= 16"))
    assert.are.same({ 2 }, kept(v, "A ** 2 ** 3 == 256"))         -- right to left: 2 ** 8
    assert.are.same({ 1, 2, 3 }, kept(v, "-A ** 2 > -10"))        -- -(A ** 2)
    assert.are.same({ 2 }, kept(v, "A ** -1 == 0.5"))              -- a float
    assert.are.same({ 2 }, kept(v, "2 ** (A - 3) == 0.5"))
    assert.are.same({ 3, 4, 8, 16 }, kept(v, "A ** 2 // 4 >= 2 and True"))
    assert.are.same({}, kept(v, "A > 0 and False"))
    assert.are.same({ 1, 3, 4, 8, 16 }, kept(v, "not A == 2"))     -- not (A == 2)
    assert.are.same({ 1, 16 }, kept(v, "not 1 < A < 16"))
    assert.are.same({ 3, 16 }, kept(v, "not A in [1, 2, 4, 8]"))
    assert.are.same({ 2, 3, 4, 8, 16 }, kept(v, "not (A < 2)"))
    assert.are.same({ 8 }, kept(v, "not A * 2 + 1 != 17 and A > 1"))
    assert.are.same({ 1, 16 }, kept(v, "min(A, 4) ** 2 in [1, 16] and max(A, 16) // A in [16, 1]"))
    assert.are.same({ 2, 3, 4 }, kept(v, "(A // 2) % 2 == 1 or A == 4"))
    -- Kernel Tuner's own restrictions, as written in its examples
    local k = kernel()
    k:param("block_size_x", { 16, 32, 64, 128 })
    k:param("block_size_y", { 1, 2, 4, 8 })
    k:param("tile_size_x", { 1, 2, 4 })
    k:constraint("32 <= block_size_x*block_size_y <= 256 and tile_size_x in [1, 2]")
    local n = 0
    for _, c in k:space():configs() do
      local t = c.block_size_x * c.block_size_y
      assert.is_true(t >= 32 and t <= 256 and c.tile_size_x <= 2)
      n = n + 1
    end
    assert.are.equal(12 * 2, n) -- 16: 3, 32: 4, 64: 3, 128: 2 block sizes; 2 tiles
  end)

  it("agrees with the integer machine and the bytecode machine on **", function()
    -- a float constant beside ** keeps the bytecode machine; both give the same
    local v = { 0, 1, 2, 3, 5, 7 }
    for _, e in ipairs({ "A ** 3 - A > 20", "3 ** A > 20", "(A - 2) ** 3 < 0", "A ** 0 == 1" }) do
      assert.are.same(kept(v, e), kept(v, e .. " and 1.5 > 1"), e)
    end
    assert.are.same({ 0, 1, 2 }, kept({ 0, 1, 2 }, "A ** 62 >= 0")) -- 2^62 fits in 64 bits
    assert.are.same({ 0, 1, 2 }, kept({ 0, 1, 2 }, "A ** 62 >= 0 and 1.5 > 1"))
    for _, e in ipairs({ "A ** 62 >= 0", "A ** 62 >= 0 and 1.5 > 1" }) do -- 3^62 does not
      assert.has_error(function() kept({ 2, 3 }, e) end, "constraint '" .. e .. "': at character 3: " ..
        "integer overflow in '**': the result does not fit in 64 bits")
    end
  end)

  it("bounds what chains and 'in' lists repeat", function()
    local items = {}
    for i = 2, 5001 do items[#items + 1] = i end
    assert.are.same({ 2 }, kept({ 1, 2 }, "A in [" .. table.concat(items, ", ") .. "]"))
    -- each level copies the one inside it: 2^40 instructions, refused
    local nested = "A < 2"
    for _ = 1, 40 do nested = "(A < 2) == (" .. nested .. ") == (A < 3)" end
    assert.matches("the expression is too long once its chained comparisons and 'in' lists " ..
      "are expanded", constraint_error(nested))
  end)

  it("bounds its nesting, which the parser follows on the C stack", function()
    local nests = "the expression nests more than 100 levels deep %(parentheses, calls and " ..
      "unary operators%)"
    local deep = ("("):rep(20000) .. "A" .. (")"):rep(20000)
    assert.are.equal("constraint '" .. ("("):rep(80) .. "...': at character 101: " ..
      nests:gsub("%%", ""), (constraint_error(deep):gsub("^[^:]*:%d+: ", "")))
    assert.matches("at character 101: " .. nests, constraint_error(("-"):rep(20000) .. "A > 0"))
    assert.matches("at character 401: " .. nests,
      constraint_error(("not "):rep(20000) .. "A > 0"))
    assert.matches("at character 404: " .. nests, -- the 101st call's '('
      constraint_error(("abs("):rep(20000) .. "A" .. (")"):rep(20000) .. " > 0"))
    -- 100 levels are allowed
    assert.are.same({ 2 }, kept({ 1, 2 }, ("("):rep(100) .. "A" .. (")"):rep(100) .. " > 1"))
    assert.are.same({ 2 }, kept({ 1, 2 }, ("- "):rep(100) .. "A > 1"))
  end)

  it("evaluates long chains, too deep for the integer machine's tree, all the same", function()
    -- 100,001 terms: A * 100001 > 200001 keeps A >= 2
    assert.are.same({ 2, 3 }, kept({ 1, 2, 3 }, ("A + "):rep(100000) .. "A > 200001"))
    assert.are.same({ 1, 3 }, kept({ 1, 2, 3 }, ("A != 2 && "):rep(50000) .. "A > 0"))
    assert.are.same({ 3 }, kept({ 1, 2, 3 }, ("A - "):rep(5000) .. "A < -14000"))
  end)

  it("checks types when parsing", function()
    -- conditions and values mix as in Python (peer_expr_spec.lua): A && B, (A > 1) + B,
    -- A == (B > 1) and a bare A + B are constraints
    assert.matches("at character 5: '<' takes numbers, not a string", constraint_error("A < 'x'"))
    assert.matches("at character 6: a number is compared with a string", constraint_error("1 == 'x'"))
    assert.matches("at character 1: 'S' is used as a number but has the string value \"float\"",
      constraint_error("S + 1 > 2"))
    assert.matches("at character 5: unknown parameter 'C'", constraint_error("A < C"))
    assert.matches("constraint '1 < 2': the expression reads no parameter",
      constraint_error("1 < 2"))
  end)

  it("stops generation on an integer division by zero, naming the place", function()
    local k = kernel()
    k:param("A", { 1, 2 })
    k:param("B", { 1, 0 })
    k:constraint("A % B == 0")
    assert.has_error(function() k:space():count() end,
      "constraint 'A % B == 0': at character 3: integer modulo by zero")
    local k2 = kernel()
    k2:param("A", { 4 })
    k2:param("B", { 0 })
    k2:constraint("A // B >= 0")
    assert.has_error(function() k2:space():count() end,
      "constraint 'A // B >= 0': at character 3: integer division by zero")
    assert.has_error(function() kept({ 1 }, "A / 0 > 1e300") end, -- as in Python, not Lua
      "constraint 'A / 0 > 1e300': at character 3: division by zero")
  end)

  it("works beside Lua function constraints", function()
    local k = kernel()
    k:param("A", { 1, 2, 3, 4, 5, 6 })
    k:param("B", { 1, 2, 3, 4, 5, 6 })
    k:param("C", { 1, 2, 3 })
    k:constraint("A % B == 0")
    k:constraint({ "B", "C" }, function(b, c) return b + c <= 6 end)
    local n = 0
    for a = 1, 6 do for b = 1, 6 do for c = 1, 3 do
      if a % b == 0 and b + c <= 6 then n = n + 1 end
    end end end
    assert.are.equal(n, k:space():count())
  end)
end)

-- Random expressions written twice, in the expression syntax and in Lua.
local function generator(seed)
  math.randomseed(seed)
  local names
  local gen = {}
  local function pick(list) return list[math.random(#list)] end
  local function both(e, l) return { e = e, l = l } end
  function gen.positive(d) -- never zero: a safe divisor
    local r = math.random(d > 0 and 4 or 2)
    if r == 1 then local n = pick(names); names.used[n] = true; return both(n, n) end
    if r == 2 then local v = tostring(math.random(1, 4)); return both(v, v) end
    local a, b = gen.positive(d - 1), gen.positive(d - 1)
    local op = r == 3 and "*" or "+"
    return both("(" .. a.e .. op .. b.e .. ")", "(" .. a.l .. op .. b.l .. ")")
  end
  function gen.number(d)
    local r = math.random(d > 0 and 9 or 2)
    if r <= 2 then return gen.positive(0) end
    if r == 7 then local p = gen.positive(d - 1); return both("-" .. p.e, "-" .. p.l) end
    local a = gen.number(d - 1)
    if r == 3 or r == 4 then
      local op = pick { "+", "-", "*" }
      local b = gen.number(d - 1)
      return both(a.e .. " " .. op .. " " .. b.e, a.l .. " " .. op .. " " .. b.l)
    end
    local p = gen.positive(d - 1)
    if r == 5 or r == 6 then
      local op = pick { "%", "//", "/" }
      return both("(" .. a.e .. ") " .. op .. " " .. p.e, "(" .. a.l .. ") " .. op .. " " .. p.l)
    end
    if r == 8 then
      local f = pick { "min", "max" }
      return both(f .. "(" .. a.e .. ", " .. p.e .. ")", "math." .. f .. "(" .. a.l .. ", " .. p.l .. ")")
    end
    return both("floor(" .. a.e .. " / " .. p.e .. ")", "math.floor(" .. a.l .. " / " .. p.l .. ")")
  end
  function gen.condition(d)
    local r = math.random(d > 0 and 6 or 2)
    if r == 1 then
      local op = pick { "==", "!=", "<", "<=", ">", ">=" }
      local a, b = gen.number(d - 1), gen.number(d - 1)
      return both(a.e .. " " .. op .. " " .. b.e, a.l .. " " .. (op == "!=" and "~=" or op) .. " " .. b.l)
    end
    if r == 2 then
      local a, p = gen.number(d - 1), gen.positive(d - 1)
      return both("(" .. a.e .. ") % " .. p.e .. " == 0", "(" .. a.l .. ") % " .. p.l .. " == 0")
    end
    if r == 3 then
      local c = gen.condition(d - 1)
      return both("!(" .. c.e .. ")", "not (" .. c.l .. ")")
    end
    local a, b = gen.condition(d - 1), gen.condition(d - 1)
    local e_op, l_op = table.unpack(pick { { "&&", "and" }, { "||", "or" }, { "and", "and" } })
    return both("(" .. a.e .. ") " .. e_op .. " (" .. b.e .. ")", "(" .. a.l .. ") " .. l_op .. " (" .. b.l .. ")")
  end
  return function(params)
    repeat
      names = { used = {} }
      for _, p in ipairs(params) do names[#names + 1] = p end
      local c = gen.condition(math.random(1, 2))
      local used = {}
      for _, p in ipairs(params) do if names.used[p] then used[#used + 1] = p end end
      if #used > 0 then
        local fn = assert(load("return function(" .. table.concat(used, ", ") .. ") return " .. c.l .. " end"))()
        return c.e, used, fn
      end
    until false
  end
end

describe("expression and Lua function constraints", function()
  it("agree on randomly generated spaces", function()
    local random_constraint = generator(20241122)
    local nontrivial = 0
    for _ = 1, 100 do
      local params = { "P1", "P2", "P3", "P4" }
      local values = {}
      local by_expr, by_fn = kernel(), kernel()
      for _, p in ipairs(params) do
        local list, seen = {}, {}
        for _ = 1, math.random(2, 5) do
          local v = math.random(1, 12)
          if not seen[v] then seen[v] = true; list[#list + 1] = v end
        end
        values[p] = list
        by_expr:param(p, list)
        by_fn:param(p, list)
      end
      local texts = {}
      for i = 1, math.random(1, 2) do
        local text, used, fn = random_constraint(params)
        texts[i] = text
        by_expr:constraint(text)
        by_fn:constraint(used, fn)
      end
      local se, sf = by_expr:space(), by_fn:space()
      local what = table.concat(texts, " ; ")
      assert.are.equal(sf:count(), se:count(), what)
      for i = 0, se:count() - 1 do assert.are.same(sf:config(i), se:config(i), what) end
      if se:count() > 0 and se:count() < se:count_all() then nontrivial = nontrivial + 1 end
    end
    assert.is_true(nontrivial >= 25, "too few spaces that constraints cut but do not empty")
  end)
end)

describe("a function constraint of the whole configuration", function()
  local function k3()
    local k = kernel()
    k:param("MWG", { 16, 32, 64 })
    k:param("VWM", { 1, 2, 4, 8, 32 })
    k:param("X", { 1, 2 })
    return k
  end

  it("finds its parameters on a first call and prunes as the positional form does", function()
    local k, calls = k3(), 0
    k:constraint(function(p)
      calls = calls + 1
      return p.MWG % p.VWM == 0
    end)
    assert.are.equal(1, calls) -- the first call, with the first values
    local n = 0
    for _, c in k:space():configs() do
      assert.are.equal(0, c.MWG % c.VWM)
      n = n + 1
    end
    assert.are.equal(28, n) -- 16: 4, 32: 5, 64: 5 widths, twice
    assert.is_true(calls > 1)
    local p = kernel()
    p:param("A", { 1, 2, 3 })
    p:param("B", { 1, 2 })
    p:constraint(function(c) return c.A > c.B end, { "A", "B" }) -- declared: no first call
    assert.are.equal(3, p:space():count())
    assert.are.equal(3, kt.space{ params = { { "A", { 1, 2, 3 } }, { "B", { 1, 2 } } },
                                  constraints = { function(c) return c.A > c.B end } }:count())
  end)

  it("says when a function with names reads another, or what is no parameter", function()
    local k = k3()
    k:constraint(function(p) return p.X == 1 or p.VWM < 4 end, { "X" })
    local ok, err = pcall(function() return k:space():count() end)
    assert.is_false(ok)
    assert.matches("the constraint reads p.VWM, which is not among its parameters %(\"X\"%): name " ..
      "them all, k:constraint%(f, {\"X\", \"VWM\"}%)", err)
    k = k3()
    k:constraint(function(p) return p.X == 1 or p.VWM < 4 end, { "X", "VWM" })
    assert.are.equal(15 + 3 * 2, k:space():count()) -- X = 1: all; X = 2: widths 1 and 2
    k = k3() -- without names, any parameter (peer_expr_spec.lua)
    k:constraint(function(p) return p.X == 1 or p.VWM < 4 end)  -- X is 1 on the first call
    assert.are.equal(15 + 3 * 2, k:space():count())
    ok, err = pcall(k.constraint, k, function(p) return p.C > 1 end)
    assert.is_false(ok)
    assert.matches("the constraint reads p.C: there is no parameter C %(define the parameters " ..
      "before the constraints that read them%)", err)
    ok, err = pcall(k.constraint, k, function() return true end)
    assert.is_false(ok)
    assert.matches("the constraint read no parameter when called with the first values", err)
  end)
end)
