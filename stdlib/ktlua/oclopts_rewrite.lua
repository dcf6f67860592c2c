-- ktlua.oclopts_rewrite: the program of one configuration of an annotated
-- kernel (doc/annotations.md).
--
-- M.prepare reads the source once: its tokens, each annotated loop's shape
-- and, for an unroll-and-jam, its statements, its inner loop and the names
-- it renames; every check that does not depend on the factors is made
-- there, in work linear in the source. M.generate writes a configuration's
-- program from those tokens in one walk, reading nothing again: each
-- annotated loop is rewritten where it stands, and the loops annotated
-- inside it within each of its copies, under the substitutions of the
-- copies around them (a loop variable stepped on, a jam's names renamed),
-- composed as rewriting the outer loop first and then its copies would
-- compose them. Its work is linear in the program it writes.
local P = require "ktlua.oclopts_parse"
local is = P.is
local W = P.work

local M = {}

local MAX_PASSES = 4096 -- rewrites of annotated loops (copies included) per program

-- What errors of annotation a say: where it is, and its kind.
local function context(src, where, a)
  return { src = src, where = where, fail = function(msg)
    P.fail(where, a.line, a.col, ("#pragma oclopts %s: %s"):format(a.kind, msg))
  end }
end

-- ---- reading the source once ----

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
    W.steps = W.steps + 1
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

-- L.jam: the statements of the unroll-and-jam L's body, which of them is
-- the inner loop (a loop too), and the names declared beside it.
local function read_jam(G, L)
  local toks, c = G.toks, context(G.src, G.where, L.a)
  if not L.braced then c.fail("unroll-and-jam needs the loop's body in braces") end
  local stmts = P.block_statements(toks, L.body, G.where)
  local at_inner, f = inner_loop(toks, stmts, c)
  local inner = G.loops[f - 1] or P.loop(toks, f, c)
  if inner.kind == "unrollandjam" then -- its body would be the copies, blocks with no loop
    P.fail(G.where, inner.a.line, inner.a.col, ("#pragma oclopts unrollandjam: the unroll-and-jam on line %d "
      .. "jams this loop (its body becomes the copies of its body): annotate it with unroll"):format(L.a.line))
  end
  if stmts[#stmts][2] >= L.body_end then
    c.fail(("a statement of its body (line %d) runs past the body's end: are its brackets balanced?"):format(toks[stmts[#stmts][1]].line))
  end
  local names = {}
  for i, s in ipairs(stmts) do if i ~= at_inner then declared(toks, s[1], s[2], G.where, names) end end
  check_jam(L, inner, toks, stmts, at_inner, names, c)
  L.jam = { stmts = stmts, at_inner = at_inner, inner = inner, names = names }
end

-- Fails where an annotated loop among tokens a..b (a statement, a block)
-- runs past b, as brackets of different kinds that interleave can make
-- it (a program written from it would repeat or lose text); descend(L)
-- looks into each such loop.
local function check_within(G, a, b, descend)
  local j = a
  while j <= b do
    W.steps = W.steps + 1
    local p = G.next_pragma[j]
    if not p or p > b then return end
    local L = G.loops[p]
    if L.body_end > b then
      context(G.src, G.where, L.a).fail(("the loop runs past the statement or block it is in (to line %d): "
        .. "are its brackets balanced?"):format(G.toks[L.body_end].line))
    end
    if descend then descend(L) end
    j = L.body_end + 1
  end
end

-- Every annotated loop nested within what holds it: the statements and
-- blocks that a program copies (each loop looked into once).
local function check_nesting(G)
  local function descend(L)
    if L.jam then
      for _, s in ipairs(L.jam.stmts) do check_within(G, s[1], s[2]) end
      check_within(G, L.jam.inner.body, L.jam.inner.body_end)
    end
    check_within(G, L.body, L.body_end, descend)
  end
  check_within(G, 1, #G.toks, descend)
end

-- The source read once: {src, where, toks, anns (the annotations in
-- order), uses (its identifiers), loops (pragma token -> its loop, with
-- ann, kind, a), pragmas (their tokens in order), newlines (of each),
-- next_pragma (token -> the first pragma from it)}.
function M.prepare(src, where)
  local toks = P.lex(src, where)
  local G = { src = src, where = where, toks = toks, anns = {}, uses = {}, loops = {}, pragmas = {}, newlines = {} }
  for j, t in ipairs(toks) do
    W.steps = W.steps + 1
    if t.k == "id" then G.uses[t.t] = true end
    if t.k == "pp" and P.oclopts_words(t) then
      local a = P.annotation(t, where)
      G.anns[#G.anns + 1] = a
      local L = P.loop(toks, j + 1, context(src, where, a)) -- the loop's shape, checked once
      L.ann, L.kind, L.a = #G.anns, a.kind, a
      G.loops[j], G.pragmas[#G.pragmas + 1] = L, j
      G.newlines[j] = ("\n"):rep(select(2, t.t:gsub("\n", "")))
    end
  end
  for _, j in ipairs(G.pragmas) do
    if G.loops[j].kind == "unrollandjam" then read_jam(G, G.loops[j]) end
  end
  local next_pragma, p = {}, math.huge -- for each token, the first annotated pragma from it
  for j = #toks, 1, -1 do
    if G.loops[j] then p = j end
    next_pragma[j] = p
  end
  G.next_pragma = next_pragma
  check_nesting(G)
  return G
end

-- ---- writing a configuration's program ----

-- The text between tokens j and j + 1 as written.
local function gap(G, j) return G.src:sub(G.toks[j].e + 1, G.toks[j + 1].s - 1) end

-- Tokens a..b with the text between them as written; identifiers that env
-- names (not after '.' or '->') replaced. With no substitution, one span.
local function plain(G, a, b, env, out)
  if b < a then return end
  local toks = G.toks
  W.steps = W.steps + 1
  if not next(env) then
    out[#out + 1] = G.src:sub(toks[a].s, toks[b].e)
    return
  end
  for j = a, b do
    W.steps = W.steps + 1
    local t = toks[j]
    if j > a then out[#out + 1] = G.src:sub(toks[j - 1].e + 1, t.s - 1) end
    local r = t.k == "id" and env[t.t]
    out[#out + 1] = (r and not (is(toks, j - 1, ".") or is(toks, j - 1, "->"))) and r or t.t
  end
end

local function plain_text(G, range, env)
  if not range or range[1] > range[2] then return "" end
  local out = {}
  plain(G, range[1], range[2], env, out)
  return table.concat(out)
end

-- text with the identifiers S names replaced, as a later rewrite of the
-- copy that holds it would replace them.
local function substitute(G, text, S)
  local toks = P.lex(text, G.where)
  local out = {}
  for j, t in ipairs(toks) do
    W.steps = W.steps + 1
    if j > 1 then out[#out + 1] = text:sub(toks[j - 1].e + 1, t.s - 1) end
    local r = t.k == "id" and S[t.t]
    out[#out + 1] = (r and not (is(toks, j - 1, ".") or is(toks, j - 1, "->"))) and r or t.t
  end
  return table.concat(out)
end

-- Whether text holds one of the names S replaces (or a longer name).
local function mentions(text, S)
  for name in pairs(S) do
    if text:find(name, 1, true) then return true end
  end
  return false
end

-- The substitution of a copy (S) within one made under env: a name env
-- replaces becomes its replacement with S applied, as in the text. (A
-- copy is composed within at most a dozen others: past them a program
-- holds more than 4096 rewritten loops, MAX_PASSES.)
local function compose(G, env, S)
  if not S then return env end
  local c = {}
  for name, text in pairs(env) do
    W.steps = W.steps + 1
    c[name] = mentions(text, S) and substitute(G, text, S) or text
  end
  for name, text in pairs(S) do
    if env[name] == nil then c[name] = text end
  end
  return c
end

-- The first annotated pragma at or after token j (math.huge if none).
local function next_pragma(G, j)
  W.steps = W.steps + 1
  return G.next_pragma[j] or math.huge
end

local rewrite

-- Tokens a..b under env, each annotated loop among them rewritten (its
-- pragma gone, the lines it took kept).
local function render(R, a, b, env, out)
  local G = R.G
  local j = a
  while j <= b do
    local p = next_pragma(G, j)
    if p > b then return plain(G, j, b, env, out) end
    plain(G, j, p - 1, env, out)
    if p > j then out[#out + 1] = gap(G, p - 1) end
    out[#out + 1] = G.newlines[p] .. gap(G, p)
    local L = G.loops[p]
    rewrite(R, L, env, out)
    j = L.body_end + 1
    if j <= b then out[#out + 1] = gap(G, j - 1) end
  end
end

-- k steps of the loop, as text (a product past 64 bits stays a product).
local function steps(inst, k)
  local lit = inst.step_lit
  if lit and lit <= math.maxinteger // k then return tostring(k * lit) end
  return ("%d * (%s)"):format(k, inst.step)
end

-- The loop variable k steps on.
local function at(inst, k)
  return ("(%s %s %s)"):format(inst.var, inst.dir > 0 and "+" or "-", steps(inst, k))
end

-- A loop as one configuration writes it: its header's parts under env,
-- and body(S, out), which writes its body under env and then S.
local function instance(R, L, env, body)
  local G = R.G
  local step = L.step_at and plain_text(G, L.step_at, env) or "1"
  return { var = env[L.var] or L.var, init = plain_text(G, L.init, env), cond = plain_text(G, L.cond, env),
           incr = plain_text(G, L.incr, env), limit = plain_text(G, L.limit_at, env), step = step,
           step_lit = step:match("^%d+$") and math.tointeger(tonumber(step)), op = L.op, dir = L.dir,
           continues = L.continues, line = G.toks[L.body_end].line, kind = L.kind, a = L.a, ann = L.ann,
           body = body or function(S, out) render(R, L.body, L.body_end, compose(G, env, S), out) end }
end

-- One more annotated loop rewritten: past MAX_PASSES, an error that says
-- where the program grew too large.
local function count(R, inst)
  R.count = R.count + 1
  if R.count > MAX_PASSES then
    P.fail(R.G.where, inst.a.line, inst.a.col, ("#pragma oclopts %s: more than %d annotated loops to rewrite "
      .. "(their copies included): lower the factors"):format(inst.kind, MAX_PASSES))
  end
end

-- "{ init;" and the loop over whole groups of u iterations.
local function unrolled_header(inst, u)
  local init = inst.init ~= "" and (inst.init .. ";") or ""
  return ("{ %s\nfor (; %s %s %s %s %s; %s %s %s) {"):format(init, inst.var, inst.dir > 0 and "+" or "-",
    steps(inst, u - 1), inst.op, inst.limit, inst.var, inst.dir > 0 and "+=" or "-=", steps(inst, u))
end

-- The iterations left over (fewer than u), then the end of the block.
local function remainder(inst, out)
  out[#out + 1] = ("\nfor (; %s; %s) "):format(inst.cond, inst.incr)
  inst.body(nil, out)
  out[#out + 1] = (" }\n#line %d\n"):format(inst.line)
end

-- u copies of the body, copy k with the variable stepped on k times; a
-- copy whose 'continue' is the loop's own runs in a do-while(0), where
-- 'continue' ends just that copy.
local function unroll(inst, u, out)
  out[#out + 1] = unrolled_header(inst, u)
  for k = 0, u - 1 do
    out[#out + 1] = inst.continues and "\ndo " or "\n"
    inst.body(k > 0 and { [inst.var] = at(inst, k) } or nil, out)
    if inst.continues then out[#out + 1] = " while (0);" end
  end
  out[#out + 1] = "\n}"
  remainder(inst, out)
end

-- ---- unroll and jam ----

local function used(R, name) return R.G.uses[name] or R.generated[name] end

-- The substitutions of copies 0 .. u-1 (0: env): the outer variable
-- stepped on, the variables declared beside the inner loop renamed
-- (name_jam1, ...; a name the program holds gets '_' until it is new).
local function jam_substs(R, L, inst, env, u)
  local renamed = {}
  for name in pairs(L.jam.names) do renamed[#renamed + 1] = env[name] or name end
  local substs, new_names = { [0] = env }, {}
  for k = 1, u - 1 do
    local S = { [inst.var] = at(inst, k) }
    for _, name in ipairs(renamed) do
      local new = ("%s_jam%d"):format(name, k)
      while used(R, new) do new = new .. "_" end
      S[name], new_names[#new_names + 1] = new, new
    end
    substs[k] = compose(R.G, env, S)
  end
  for _, name in ipairs(new_names) do R.generated[name] = true end
  return substs
end

-- The inner loop, its body the u copies' bodies side by side; a loop
-- annotated with unroll is then unrolled as it stands.
local function jammed(R, L, env, substs, u, out)
  local G, C = R.G, L.jam.inner
  local first = L.jam.stmts[L.jam.at_inner][1]
  local function body(S, o)
    o[#o + 1] = "{"
    for k = 0, u - 1 do
      o[#o + 1] = C.continues and "\ndo " or "\n"
      render(R, C.body, C.body_end, compose(G, substs[k], S), o)
      if C.continues then o[#o + 1] = " while (0);" end
    end
    o[#o + 1] = "\n}"
  end
  local header = "for (" .. plain_text(G, { C.f + 2, C.close - 1 }, env) .. ") "
  local annotated = G.loops[C.f - 1] == C
  if C.f > first then -- the directives before it, then a line of their own
    out[#out + 1] = "\n"
    plain(G, first, annotated and C.f - 2 or C.f - 1, env, out)
    if annotated then
      if C.f - 2 >= first then out[#out + 1] = gap(G, C.f - 2) end
      out[#out + 1] = "\n\n"
      local inst = instance(R, C, env, body)
      inst.continues = false -- its copies' own continues are in their do-while(0)s
      count(R, inst)
      if R.factors[C.ann] > 1 then return unroll(inst, R.factors[C.ann], out) end
      out[#out + 1] = header
      return body(nil, out)
    end
    out[#out + 1] = "\n"
  end
  out[#out + 1] = "\n" .. header
  body(nil, out)
end

local function jam(R, L, env, u, out)
  local inst = instance(R, L, env)
  local substs = jam_substs(R, L, inst, env, u)
  local stmts = L.jam.stmts
  local function copies(first, last)
    for k = 0, u - 1 do
      for i = first, last do
        out[#out + 1] = "\n"
        render(R, stmts[i][1], stmts[i][2], substs[k], out)
      end
    end
  end
  out[#out + 1] = unrolled_header(inst, u)
  copies(1, L.jam.at_inner - 1)
  jammed(R, L, env, substs, u, out)
  copies(L.jam.at_inner + 1, #stmts)
  out[#out + 1] = "\n}"
  remainder(inst, out)
end

-- The annotated loop L (from its 'for') under env, by its factor; a
-- factor of 1 leaves it as written.
function rewrite(R, L, env, out)
  count(R, L)
  local u = R.factors[L.ann]
  if u == 1 then return render(R, L.f, L.body_end, env, out) end
  if L.kind == "unroll" then return unroll(instance(R, L, env), u, out) end
  jam(R, L, env, u, out)
end

-- The text of prepared source G with every annotated loop rewritten:
-- factors[i] is annotation i's.
function M.generate(G, factors)
  local toks = G.toks
  if #G.pragmas == 0 then return G.src end
  local R = { G = G, factors = factors, count = 0, generated = {} }
  local out = { G.src:sub(1, toks[1].s - 1) }
  render(R, 1, #toks, {}, out)
  out[#out + 1] = G.src:sub(toks[#toks].e + 1)
  return table.concat(out)
end

return M
