-- ktlua.oclopts_rewrite: the program of one configuration of an annotated
-- kernel (doc/annotations.md). Each annotated loop is rewritten in turn,
-- outermost first, on the text the previous rewrite left: an unrolled
-- loop's copies hold their own copies of an annotated inner loop, and an
-- unroll-and-jam's jammed inner loop keeps its annotation, so that each is
-- rewritten in a later pass. Pragmas are tagged with their annotation's
-- number ("#pragma oclopts @2") before the first pass.
local P = require "ktlua.oclopts_parse"
local is = P.is

local M = {}

local MAX_PASSES = 4096 -- rewrites of annotated loops (copies included) per program

-- Tokens a..b with the text between them as it was; identifiers named in
-- subst (not after '.' or '->') replaced.
local function emit(src, toks, a, b, subst)
  local out = {}
  for j = a, b do
    local t = toks[j]
    if j > a then out[#out + 1] = src:sub(toks[j - 1].e + 1, t.s - 1) end
    local r = subst and t.k == "id" and rawget(subst, t.t)
    out[#out + 1] = (r and not (is(toks, j - 1, ".") or is(toks, j - 1, "->"))) and r or t.t
  end
  if b >= a and toks[b].k == "pp" then out[#out + 1] = "\n" end
  return table.concat(out)
end

-- k steps of the loop, as text.
local function steps(L, k)
  if L.step_lit then return tostring(k * L.step_lit) end
  return ("%d * (%s)"):format(k, L.step)
end

-- The loop variable k steps on.
local function at(L, k)
  return ("(%s %s %s)"):format(L.var, L.dir > 0 and "+" or "-", steps(L, k))
end

-- "{ init;" and the loop over whole groups of u iterations.
local function unrolled_header(L, toks, src, u)
  local init = L.init[1] <= L.init[2] and (emit(src, toks, L.init[1], L.init[2]) .. ";") or ""
  return ("{ %s\nfor (; %s %s %s %s %s; %s %s %s) {"):format(init, L.var, L.dir > 0 and "+" or "-",
    steps(L, u - 1), L.op, L.limit, L.var, L.dir > 0 and "+=" or "-=", steps(L, u))
end

-- The iterations left over (fewer than u), then the end of the block.
local function remainder(L, toks, src)
  return ("\nfor (; %s; %s) %s }\n#line %d\n"):format(emit(src, toks, L.cond[1], L.cond[2]),
    emit(src, toks, L.incr[1], L.incr[2]), emit(src, toks, L.body, L.body_end), toks[L.body_end].line)
end

-- One copy of the statements a..b; a copy whose 'continue' is the loop's
-- own runs in a do-while(0), where 'continue' ends just that copy.
local function copy(src, toks, a, b, subst, wrap)
  local t = emit(src, toks, a, b, subst)
  return "\n" .. (wrap and ("do " .. t .. " while (0);") or t)
end

local function unroll(L, toks, src, u)
  local out = { unrolled_header(L, toks, src, u) }
  for k = 0, u - 1 do
    out[#out + 1] = copy(src, toks, L.body, L.body_end, k > 0 and { [L.var] = at(L, k) }, L.continues)
  end
  out[#out + 1] = "\n}"
  out[#out + 1] = remainder(L, toks, src)
  return table.concat(out)
end

-- ---- unroll and jam ----

local NOT_DECL = {}
for w in ("return goto break continue case default else sizeof if for while do switch"):gmatch("%S+") do
  NOT_DECL[w] = true
end

-- Adds to names the variables the statement a..b declares, if it is a declaration.
local function declared(toks, a, b, where, names)
  local j = a + 1
  while is(toks, j, "*") do j = j + 1 end
  if toks[a].k ~= "id" or NOT_DECL[toks[a].t] or not (toks[j] and toks[j].k == "id") then return end
  local last, skipping
  j = a
  while j <= b do
    local t = toks[j]
    if t.k == "punct" and (t.t == "(" or t.t == "{" or t.t == "[") then
      if not skipping and t.t == "[" and last then names[last], skipping = true, true end
      j = P.match(toks, j, where)
    elseif is(toks, j, ",") or is(toks, j, ";") or is(toks, j, "=") then
      if not skipping and last then names[last] = true end
      skipping, last = is(toks, j, "="), nil
    elseif t.k == "id" and not skipping then
      last = t.t
    end
    j = j + 1
  end
end

-- The substitutions of copy k: the outer variable stepped on, and the
-- variables declared beside the inner loop renamed (name_jam1, ...).
local function jam_substs(L, toks, names, u)
  local used = {}
  for _, t in ipairs(toks) do if t.k == "id" then used[t.t] = true end end
  local substs = {}
  for k = 1, u - 1 do
    local s = { [L.var] = at(L, k) }
    for name in pairs(names) do
      local new = ("%s_jam%d"):format(name, k)
      while used[new] do new = new .. "_" end
      s[name] = new
    end
    substs[k] = s
  end
  return substs
end

-- The one for loop among the statements of L's body: its statement's index.
local function inner_loop(toks, stmts, c)
  local found
  for i, s in ipairs(stmts) do
    local j = s[1]
    while toks[j].k == "pp" and j < s[2] do j = j + 1 end
    if toks[j].k == "id" and toks[j].t == "for" then
      if found then c.fail(("unroll-and-jam needs one for loop in the loop's body, found another on line %d"):format(toks[j].line)) end
      found = { i, j }
    end
  end
  if not found then c.fail("unroll-and-jam needs a for loop in the loop's body, found none") end
  return found[1], found[2]
end

-- Fails where the statements around the inner loop leave the outer one,
-- or the inner loop's header depends on what the copies change.
local function check_jam(L, inner, toks, stmts, at_inner, names, c)
  for i, s in ipairs(stmts) do
    if i ~= at_inner then
      local jumps = P.own_jumps(toks, s[1], s[2], c.where)
      for _, word in ipairs { "break", "continue", "goto" } do
        if jumps[word] then c.fail(("'%s' beside the inner loop (line %d) cannot be jammed"):format(word, jumps[word].line)) end
      end
    end
  end
  for j = inner.f + 2, inner.close - 1 do
    local t = toks[j]
    if t.k == "id" and (t.t == L.var or names[t.t]) then
      c.fail(("the inner loop's header uses %s (line %d): its copies would differ"):format(t.t, t.line))
    end
  end
end

local function jam(L, toks, src, u, c)
  if not L.braced then c.fail("unroll-and-jam needs the loop's body in braces") end
  local stmts = P.block_statements(toks, L.body, c.where)
  local at_inner, f = inner_loop(toks, stmts, c)
  local inner = P.loop(toks, f, c)
  local names = {}
  for i, s in ipairs(stmts) do if i ~= at_inner then declared(toks, s[1], s[2], c.where, names) end end
  check_jam(L, inner, toks, stmts, at_inner, names, c)
  local substs = jam_substs(L, toks, names, u)
  local out = { unrolled_header(L, toks, src, u) }
  local function copies(first, last)
    for k = 0, u - 1 do
      for i = first, last do out[#out + 1] = copy(src, toks, stmts[i][1], stmts[i][2], substs[k]) end
    end
  end
  copies(1, at_inner - 1)
  if f > stmts[at_inner][1] then out[#out + 1] = "\n" .. emit(src, toks, stmts[at_inner][1], f - 1) end
  out[#out + 1] = ("\nfor (%s) {"):format(emit(src, toks, inner.f + 2, inner.close - 1))
  for k = 0, u - 1 do out[#out + 1] = copy(src, toks, inner.body, inner.body_end, substs[k], inner.continues) end
  out[#out + 1] = "\n}"
  copies(at_inner + 1, #stmts)
  out[#out + 1] = "\n}"
  out[#out + 1] = remainder(L, toks, src)
  return table.concat(out)
end

-- ---- passes ----

-- What errors of annotation a say: where it is, and its kind.
local function context(src, where, a)
  return { src = src, where = where, fail = function(msg)
    P.fail(where, a.line, a.col, ("#pragma oclopts %s: %s"):format(a.kind, msg))
  end }
end

-- The first tagged pragma: its token's index and annotation number.
local function first_tag(toks)
  for j, t in ipairs(toks) do
    if t.k == "pp" then
      local n = t.t:match("^#pragma oclopts @(%d+)$")
      if n then return j, tonumber(n) end
    end
  end
end

-- The text with every annotated loop rewritten: factors[i] is annotation i's.
function M.rewrite(tagged, where, anns, factors)
  local text = tagged
  for _ = 1, MAX_PASSES do
    local toks = P.lex(text, where)
    local j, n = first_tag(toks)
    if not j then return text end
    local a, u = anns[n], factors[n]
    local c = context(text, where, a)
    local L = P.loop(toks, j + 1, c)
    local loop = u == 1 and emit(text, toks, L.f, L.body_end)
                 or (a.kind == "unroll" and unroll or jam)(L, toks, text, u, c)
    text = text:sub(1, toks[j].s - 1) .. text:sub(toks[j].e + 1, toks[j + 1].s - 1) .. loop ..
           text:sub(toks[L.body_end].e + 1)
  end
  error(("%s: more than %d annotated loops to rewrite (their copies included): lower the factors"):format(where, MAX_PASSES), 0)
end

-- The annotations of src and its text with their pragmas tagged.
function M.scan(src, where)
  local toks, anns, parts, last = P.lex(src, where), {}, {}, 0
  local uses = {}
  for j, t in ipairs(toks) do
    if t.k == "id" then uses[t.t] = true end
    if t.k == "pp" and P.oclopts_words(t) then
      local a = P.annotation(t, where)
      anns[#anns + 1] = a
      a.index = #anns
      local _, newlines = t.t:gsub("\n", "")
      parts[#parts + 1] = src:sub(last + 1, t.s - 1)
      parts[#parts + 1] = ("#pragma oclopts @%d%s"):format(#anns, ("\n"):rep(newlines))
      last = t.e
      P.loop(toks, j + 1, context(src, where, a)) -- the loop's shape, checked once
    end
  end
  parts[#parts + 1] = src:sub(last + 1)
  return anns, table.concat(parts), uses
end

return M
