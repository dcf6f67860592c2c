-- ktlua.oclopts_parse: reading OCLoptimizer's annotated kernels
-- (doc/annotations.md). A small C tokenizer that keeps every token's place
-- (so that rewriting copies the user's text between tokens as it is), the
-- `#pragma oclopts` lines, and the for loops they stand before: the shapes
-- of loop that can be unrolled, and the extents of C statements.
-- Errors are "where:line:column: what", where is the file name given.
local M = {}

-- The work done, in steps (a token lexed, a comment or blank skipped, a
-- token visited by a scan or written out): what spec/oclopts_spec.lua
-- counts to show that reading a source and writing a configuration's
-- program take work linear in their lengths, whatever their shapes.
M.work = { steps = 0 }
local W = M.work

local PUNCT3 = { ["<<="] = true, [">>="] = true, ["..."] = true }
local PUNCT2 = {}
for p in ("-> ++ -- << >> <= >= == != && || *= /= %= += -= &= ^= |= ##"):gmatch("%S+") do
  PUNCT2[p] = true
end

local function fail(where, line, col, msg)
  error(("%s:%d:%d: %s"):format(where, line, col, msg), 0)
end
M.fail = fail

-- The end of a directive starting at i: its last character before an
-- unescaped newline (backslash-newline continues it).
local function directive_end(src, i)
  while true do
    local nl = src:find("\n", i, true)
    if not nl then return #src end
    if src:sub(nl - 1, nl - 1) ~= "\\" and src:sub(nl - 2, nl - 1) ~= "\\\r" then return nl - 1 end
    i = nl + 1
  end
end

local function quoted_end(src, i, where, line, col)
  local q = src:sub(i, i)
  local j = i + 1
  while j <= #src do
    local c = src:sub(j, j)
    if c == "\\" then j = j + 2
    elseif c == q then return j
    elseif c == "\n" then break
    else j = j + 1 end
  end
  fail(where, line, col, "unterminated " .. (q == '"' and "string" or "character constant"))
end

local function number_end(src, i)
  local j = i
  while true do
    local _, e = src:find("^[%w_.]+", j)
    j = (e or j - 1) + 1
    if src:sub(j - 1, j - 1):match("[eEpP]") and src:sub(j, j):match("[+-]") then
      j = j + 1
    else
      return j - 1
    end
  end
end

local CLOSE = { ["("] = ")", ["["] = "]", ["{"] = "}" }
local OPEN = { [")"] = "(", ["]"] = "[", ["}"] = "{" }

M.LINE_MAX = 2147483647 -- the largest line a #line may set (C11 6.10.4)

-- The line that the `#line N` directive tok sets, or nil for another
-- directive. A number C does not allow is an error here, as in C's
-- preprocessors, naming the directive's line.
local function line_set(tok, where)
  local digits, after = tok.t:match("^#%s*line%s+(%d+)(.?)")
  if not digits then return nil end
  if after ~= "" and not after:match('[%s"]') then
    fail(where, tok.line, tok.col, ("#line %s%s...: expected a line number (digits), then a file name or nothing"):format(digits, after))
  end
  local v = math.tointeger(tonumber(digits))
  if not v or v > M.LINE_MAX then
    fail(where, tok.line, tok.col, ("#line %s: the line number is out of range (at most %d)"):format(digits, M.LINE_MAX))
  end
  return v
end

-- Tokens {k = "id" | "num" | "str" | "pp" | "punct", t = text, s, e
-- (offsets in src), line, col}. Comments and blanks are not tokens.
-- toks.match[i] is the index of the bracket closing the one at i (a
-- bracket is matched with its own kind alone, as M.match did by counting).
-- Every step costs what it reads: a comment or a directive is searched
-- within itself, never from the start of the source.
function M.lex(src, where)
  local toks, i, n, line, bol = {}, 1, #src, 1, 1
  local match, open = {}, { ["("] = {}, ["["] = {}, ["{"] = {} }
  -- the lines of src[a..b]; the start of the line after its last newline
  -- (searched within that part alone, forwards: a pattern such as
  -- ".*()\n" tries every start again)
  local function newlines(a, b)
    local part = src:sub(a, b)
    local nl = part:find("\n", 1, true)
    while nl do
      line, bol = line + 1, a + nl
      nl = part:find("\n", nl + 1, true)
    end
  end
  local at_line_start = true
  while i <= n do
    W.steps = W.steps + 1
    local c, col = src:sub(i, i), i - bol + 1
    local j, kind
    if c == "\n" then
      line, bol, at_line_start, i = line + 1, i + 1, true, i + 1
    elseif c:match("%s") then
      i = i + 1
    elseif src:sub(i, i + 1) == "//" then
      i = (src:find("\n", i, true) or n + 1)
    elseif src:sub(i, i + 1) == "/*" then
      local _, e = src:find("*/", i + 2, true)
      if not e then fail(where, line, col, "unterminated comment") end
      newlines(i, e)
      i = e + 1
    else
      if c == "#" and at_line_start then j, kind = directive_end(src, i), "pp"
      elseif c:match("[%a_]") then j, kind = select(2, src:find("^[%w_]+", i)), "id"
      elseif c:match("%d") or (c == "." and src:sub(i + 1, i + 1):match("%d")) then
        j, kind = number_end(src, i), "num"
      elseif c == '"' or c == "'" then j, kind = quoted_end(src, i, where, line, col), "str"
      else
        kind = "punct"
        j = PUNCT3[src:sub(i, i + 2)] and i + 2 or PUNCT2[src:sub(i, i + 1)] and i + 1 or i
      end
      local tok = { k = kind, t = src:sub(i, j), s = i, e = j, line = line, col = col }
      toks[#toks + 1] = tok
      if kind == "punct" and open[tok.t] then
        local stack = open[tok.t]
        stack[#stack + 1] = #toks
      elseif kind == "punct" and OPEN[tok.t] then
        local stack = open[OPEN[tok.t]]
        if #stack > 0 then match[table.remove(stack)] = #toks end
      elseif kind == "pp" then
        newlines(i, j)
        local set = line_set(tok, where)
        if set then line = set - 1 end -- the lines after it are numbered from it, as in C
      end
      at_line_start, i = false, j + 1
    end
  end
  toks.match = match
  return toks
end

-- ---- statements ----

-- The index of the token closing the bracket at i (found by the lexer).
function M.match(toks, i, where)
  local j = toks.match[i]
  if j then return j end
  fail(where, toks[i].line, toks[i].col, ("'%s' is never closed"):format(toks[i].t))
end

local function is(toks, i, text) return toks[i] and toks[i].k ~= "str" and toks[i].t == text end
M.is = is

local statement_end

-- The index of the last token of the statement beginning at i, found once
-- (a loop's body, a jam's statements and the jumps ask again).
function M.statement_end(toks, i, where)
  local known = toks.statement_ends or {}
  toks.statement_ends = known
  local e = known[i]
  if not e then
    e = statement_end(toks, i, where)
    known[i] = e
  end
  return e
end

function statement_end(toks, i, where)
  local t = toks[i]
  if not t then
    local last = toks[#toks]
    fail(where, last and last.line or 1, last and last.col or 1, "a statement is missing at the end")
  end
  if t.k == "pp" then return M.statement_end(toks, i + 1, where) end
  if is(toks, i, "{") then return M.match(toks, i, where) end
  if t.k == "id" and (t.t == "for" or t.t == "while" or t.t == "switch") and is(toks, i + 1, "(") then
    return M.statement_end(toks, M.match(toks, i + 1, where) + 1, where)
  end
  if t.k == "id" and t.t == "if" and is(toks, i + 1, "(") then
    local e = M.statement_end(toks, M.match(toks, i + 1, where) + 1, where)
    if is(toks, e + 1, "else") then return M.statement_end(toks, e + 2, where) end
    return e
  end
  if t.k == "id" and t.t == "do" then
    local e = M.statement_end(toks, i + 1, where)
    if not (is(toks, e + 1, "while") and is(toks, e + 2, "(")) then
      fail(where, t.line, t.col, "'do' without its 'while (...)'")
    end
    local c = M.match(toks, e + 2, where)
    return is(toks, c + 1, ";") and c + 1 or c
  end
  local j = i
  while toks[j] do
    W.steps = W.steps + 1
    if toks[j].k == "punct" and CLOSE[toks[j].t] then j = M.match(toks, j, where)
    elseif is(toks, j, ";") then return j
    elseif is(toks, j, "}") then break end
    j = j + 1
  end
  fail(where, t.line, t.col, "a statement here has no ';'")
end

-- The statements of the block whose '{' is at i: list of {first, last}.
function M.block_statements(toks, i, where)
  local close, list, j = M.match(toks, i, where), {}, i + 1
  while j < close do
    W.steps = W.steps + 1
    local e = M.statement_end(toks, j, where)
    list[#list + 1] = { j, e }
    j = e + 1
  end
  return list
end

-- Jumps of the statement tokens a..b that belong to the loop they are in
-- (not to a loop or switch nested in them): { ["break"] = tok, ["continue"] = tok, goto = tok }.
function M.own_jumps(toks, a, b, where, found, in_switch)
  found = found or {}
  local j = a
  while j <= b do
    W.steps = W.steps + 1
    local t = toks[j]
    if t.k == "id" and (t.t == "for" or t.t == "while" or t.t == "do") then
      j = M.statement_end(toks, j, where) -- their jumps are theirs
    elseif t.k == "id" and t.t == "switch" and is(toks, j + 1, "(") then
      local e = M.statement_end(toks, j, where)
      M.own_jumps(toks, M.match(toks, j + 1, where) + 1, e, where, found, true)
      j = e
    elseif t.k == "id" and (t.t == "continue" or t.t == "goto" or (t.t == "break" and not in_switch)) then
      found[t.t] = found[t.t] or t
    end
    j = j + 1
  end
  return found
end

-- ---- the annotations ----

M.MAX_FACTOR = 1024 -- a program per factor, each with this many copies of the loop at most

local KINDS = { unroll = "unroll", unrollandjam = "unrollandjam", unroll_and_jam = "unrollandjam" }

-- text with its /* */ comments made blanks, one after the other (the
-- pattern "/%*.-%*/" would search the rest of the text again from each
-- '/*' that none closes); one left open stays, as the pattern left it.
local function block_comments(text)
  local out, i = {}, 1
  while true do
    local a = text:find("/*", i, true)
    local _, e = a and text:find("*/", a + 2, true)
    if not e then
      out[#out + 1] = text:sub(i)
      return table.concat(out)
    end
    out[#out + 1] = text:sub(i, a - 1) .. " "
    i = e + 1
  end
end

-- The words of a directive, its comments and continuations dropped.
local function words(text)
  text = block_comments((text:gsub("\\\r?\n", " "))):gsub("//.*", "")
  local list = {}
  for w in text:gmatch("%S+") do list[#list + 1] = w end
  return list
end

-- Is the directive token an oclopts pragma? (its words after "oclopts")
function M.oclopts_words(tok)
  local text = tok.t:gsub("^#%s*", "#")
  if not text:match("^#pragma%s+oclopts%f[%s%z]") then return nil end
  return words((text:gsub("^#pragma%s+oclopts", "")))
end

-- A whole number of at most max; past it (or past 64 bits) the error is
-- too_large with the number as written.
local function whole(w, what, fail_at, max, too_large)
  if not (w and w:match("^%d+$")) then
    fail_at(("%s: expected a whole number, got %s"):format(what, w and ("'" .. w .. "'") or "nothing"))
  end
  local v = math.tointeger(tonumber(w))
  if not v or v > max then fail_at(too_large:format(w)) end
  return v
end

-- The annotation of pragma token tok: {kind, init, limit, step, tolerance
-- (percent or nil), number (or nil), line, col}.
function M.annotation(tok, where)
  local function fail_at(msg) fail(where, tok.line, tok.col, "#pragma oclopts: " .. msg) end
  local w = M.oclopts_words(tok)
  local kind = KINDS[w[1] or ""]
  if not kind then
    fail_at(("expected 'unroll' or 'unrollandjam', got %s"):format(w[1] and ("'" .. w[1] .. "'") or "nothing"))
  end
  local a = { kind = kind, line = tok.line, col = tok.col }
  local factor = "%s: unroll factors go up to " .. M.MAX_FACTOR .. ", got %%s"
  local any = "%s: %%s is out of range (at most " .. math.maxinteger .. ")"
  a.init = whole(w[2], "init", fail_at, math.maxinteger, factor:format("init"))
  a.limit = whole(w[3], "end", fail_at, math.maxinteger, factor:format("end"))
  a.step = whole(w[4], "step", fail_at, math.maxinteger, any:format("step"))
  if a.init < 1 then fail_at("init: an unroll factor is at least 1, got 0") end
  if a.step <= 0 then fail_at(("step: expected a step > 0, got %d"):format(a.step)) end
  if a.init > a.limit then fail_at(("init %d is past end %d"):format(a.init, a.limit)) end
  if a.limit > M.MAX_FACTOR then fail_at(factor:format("end"):format(a.limit)) end
  local i = 5
  while w[i] do
    local key, value = w[i], w[i + 1]
    if key ~= "tolerance" and key ~= "number" then
      fail_at(("expected 'tolerance T' or 'number N' after the step, got '%s'"):format(key))
    end
    if a[key] then fail_at(("'%s' is given twice"):format(key)) end
    if key == "number" then
      a.number = whole(value, "number", fail_at, math.maxinteger, any:format("number"))
      if a.number < 1 then fail_at("number: keep at least 1 version") end
    else
      local t = value and value:match("^%d+%.?%d*$") and tonumber(value)
      if not t then fail_at(("tolerance: expected a percentage >= 0, got %s"):format(value and ("'" .. value .. "'") or "nothing")) end
      if t == math.huge then fail_at(("tolerance: %s is out of range (past the largest float)"):format(value)) end
      a.tolerance = t
    end
    i = i + 2
  end
  return a
end

-- ---- the loops ----

local LOW = {} -- operators that bind looser than '<' or '+': not in a bound or a step
for p in ("&& || & | ^ ? , = += -= *= /= %= <<= >>= &= ^= |= < <= > >= == !="):gmatch("%S+") do LOW[p] = true end
local LOW_OR_SUM = { ["+"] = true, ["-"] = true }
for p in pairs(LOW) do LOW_OR_SUM[p] = true end
local ASSIGN = {}
for p in ("= += -= *= /= %= <<= >>= &= ^= |= ++ --"):gmatch("%S+") do ASSIGN[p] = true end

-- The depth-0 tokens of a..b that are in set, the first one.
local function first_at_depth0(toks, a, b, set, where)
  local j = a
  while j <= b do
    W.steps = W.steps + 1
    local t = toks[j]
    if t.k == "punct" and CLOSE[t.t] then j = M.match(toks, j, where)
    elseif t.k == "punct" and set[t.t] then return j end
    j = j + 1
  end
end

local function text(src, toks, a, b) return src:sub(toks[a].s, toks[b].e) end

local function parse_init(L, toks, a, b, c)
  if a > b then return end -- for (; i < n; i++)
  if first_at_depth0(toks, a, b, { [","] = true }, c.where) then
    c.fail("the loop's init sets more than one variable")
  end
  local eq = first_at_depth0(toks, a, b, { ["="] = true }, c.where)
  if not eq or eq == a or eq == b then c.fail("the loop's init must set its variable: 'i = ...' or 'int i = ...'") end
  for j = a, eq - 1 do
    if toks[j].k ~= "id" then c.fail(("the loop's init must set its variable, found '%s'"):format(toks[j].t)) end
  end
  L.var, L.declared = toks[eq - 1].t, eq - 1 > a
end

local function parse_cond(L, toks, a, b, c)
  if a > b or toks[a].k ~= "id" or (L.var and toks[a].t ~= L.var) then
    c.fail(("the loop's condition must begin with its variable%s"):format(L.var and (" " .. L.var) or ""))
  end
  L.var = L.var or toks[a].t
  local op = toks[a + 1] and toks[a + 1].t
  if a + 1 > b or not (op == "<" or op == "<=" or op == ">" or op == ">=") or a + 2 > b then
    c.fail(("the loop's condition must compare %s with <, <=, > or >= to a bound"):format(L.var))
  end
  local low = first_at_depth0(toks, a + 2, b, LOW, c.where)
  if low then c.fail(("the loop's bound holds '%s': write the condition as %s %s bound"):format(toks[low].t, L.var, op)) end
  L.op, L.dir, L.limit = op, (op:sub(1, 1) == "<") and 1 or -1, text(c.src, toks, a + 2, b)
  L.limit_at = { a + 2, b }
end

local function parse_incr(L, toks, a, b, c)
  local v = L.var
  local function name(j) return toks[j] and toks[j].k == "id" and toks[j].t == v end
  local n, step, dir = b - a + 1, nil, nil
  if n == 2 and ((name(a) and (is(toks, a + 1, "++") or is(toks, a + 1, "--"))) or
                 (name(a + 1) and (is(toks, a, "++") or is(toks, a, "--")))) then
    step, dir = "1", (toks[a].t == "--" or toks[a + 1].t == "--") and -1 or 1
  elseif n >= 3 and name(a) and (is(toks, a + 1, "+=") or is(toks, a + 1, "-=")) then
    step, dir = text(c.src, toks, a + 2, b), toks[a + 1].t == "+=" and 1 or -1
    L.step_at = { a + 2, b }
  elseif n >= 5 and name(a) and is(toks, a + 1, "=") and name(a + 2) and (is(toks, a + 3, "+") or is(toks, a + 3, "-")) then
    step, dir = text(c.src, toks, a + 4, b), toks[a + 3].t == "+" and 1 or -1
    L.step_at = { a + 4, b }
  end
  if not step then c.fail(("the loop's increment must be %s++, %s--, %s += step or %s -= step"):format(v, v, v, v)) end
  local assigned = toks[a + 1].t == "=" -- i = i - a + b is (i - a) + b: one term only
  if n >= 3 and first_at_depth0(toks, assigned and a + 4 or a + 2, b, assigned and LOW_OR_SUM or LOW, c.where) then
    c.fail("the loop's step must be a single term (put it in parentheses)")
  end
  if dir ~= L.dir then c.fail(("the loop steps away from its bound (%s with %s)"):format(L.op, dir > 0 and "an increase" or "a decrease")) end
  L.step, L.step_lit = step, step:match("^%d+$") and math.tointeger(tonumber(step))
end

-- Where each name is assigned (=, +=, ..., ++, --; not a member after '.'
-- or '->'): toks.assigned[name] lists the tokens in order, found once for
-- every loop to look up its variable.
local function assignments(toks)
  if toks.assigned then return toks.assigned end
  local assigned = {}
  for j, t in ipairs(toks) do
    W.steps = W.steps + 1
    if t.k == "id" and not (is(toks, j - 1, ".") or is(toks, j - 1, "->")) and
       ((toks[j + 1] and toks[j + 1].k == "punct" and ASSIGN[toks[j + 1].t]) or is(toks, j - 1, "++") or is(toks, j - 1, "--")) then
      local list = assigned[t.t] or {}
      assigned[t.t] = list
      list[#list + 1] = j
    end
  end
  toks.assigned = assigned
  return assigned
end

-- The first of the sorted token indices list within a..b, if any.
local function first_within(list, a, b)
  local lo, hi = 1, #list + 1
  while lo < hi do
    W.steps = W.steps + 1
    local mid = (lo + hi) // 2
    if list[mid] < a then lo = mid + 1 else hi = mid end
  end
  return list[lo] and list[lo] <= b and list[lo] or nil
end

-- Fails where the body changes the loop variable, or jumps out of it.
local function check_body(L, toks, c)
  local j = first_within(assignments(toks)[L.var] or {}, L.body, L.body_end)
  if j then c.fail(("the loop's body changes %s (line %d)"):format(L.var, toks[j].line)) end
  local jumps = M.own_jumps(toks, L.body, L.body_end, c.where)
  for _, word in ipairs { "break", "goto" } do
    if jumps[word] then c.fail(("the loop's body leaves it with '%s' (line %d)"):format(word, jumps[word].line)) end
  end
  L.continues = jumps["continue"] ~= nil
end

-- The for loop at toks[f], as rewriting needs it: var, declared, op, dir,
-- limit, step (text; their tokens limit_at, step_at, none for a step of
-- 1), step_lit, the token ranges init/cond/incr, body ..
-- body_end, braced, continues. c = {src, where, fail(msg)}.
function M.loop(toks, f, c)
  if not (toks[f] and toks[f].k == "id" and toks[f].t == "for" and is(toks, f + 1, "(")) then
    c.fail(("expected a for loop after the pragma, found %s"):format(toks[f] and ("'" .. toks[f].t .. "'") or "the end of the source"))
  end
  local close = M.match(toks, f + 1, c.where)
  local semis, j = {}, f + 2
  while j < close do
    W.steps = W.steps + 1
    if toks[j].k == "punct" and CLOSE[toks[j].t] then j = M.match(toks, j, c.where)
    elseif is(toks, j, ";") then semis[#semis + 1] = j end
    j = j + 1
  end
  if #semis ~= 2 then c.fail("the for loop's header needs exactly two ';'") end
  local L = { f = f, close = close, init = { f + 2, semis[1] - 1 }, cond = { semis[1] + 1, semis[2] - 1 },
              incr = { semis[2] + 1, close - 1 } }
  parse_init(L, toks, f + 2, semis[1] - 1, c)
  parse_cond(L, toks, semis[1] + 1, semis[2] - 1, c)
  parse_incr(L, toks, semis[2] + 1, close - 1, c)
  L.body, L.body_end = close + 1, M.statement_end(toks, close + 1, c.where)
  L.braced = is(toks, L.body, "{")
  check_body(L, toks, c)
  return L
end

return M
