-- Cases for the writers fuzzer (spec/fuzz_spec.lua): database entries, as
-- db:list gives them, whose names and values are hostile (comment closers,
-- quotes, brackets, line ends, NUL, C and Lua keywords, the header's own
-- names, names that make one identifier, long names, code), with metrics
-- that are often no finite number (+inf, -inf, NaN), and the checks
-- of ktlua.db_export's formats: the Lua export loads in an empty
-- environment, looking nothing up, as the entries; the JSON export is
-- UTF-8 and reads back as them (null where JSON has no number); a database keeps the
-- metrics a results file gives it; the header compiles strictly, declares none of the names
-- the data put in code (pwned, f, ktlua_pwned, KTLUA_PWNED) and holds each
-- kernel's and size's name in a string literal.
local kt = require "ktlua"
local export = require "ktlua.db_export"
local E = require "ktlua.db_entries"
local fuzz = require "spec.support.fuzz"

local writers = {}

-- ---- names and values ----

local PIECES = {
  "*/", "/*", "//", "??/", "??=", "?", "\\", "\\\n", '"', "'", "[[", "]]", "]=]", "--", "\n", "\r",
  "\0", "\t", "\127", "\255", "\xc3\xa9", "\xed\xa0\x80", "{", "}", "(", ")", ";", ",", "=", " ", "#",
  "#define", "int", "size", "end", "return", "os.execute", "pwned", "%s", "%d", "a", "b", "_", "-",
  "0", "9", "A", "EOD", "</script>", "&", "\xe2\x80\xa8",
}

local WORDS = {
  "int", "size", "long", "double", "char", "end", "return", "function", "nil", "and", "device",
  "defines", "time_ms", "backend", "NAN", "errno", "NULL", "M_PI", "FP_NAN", "KTLUA_TUNED_H",
  "_Bool", "__x", "_X", "class", "new", "a", "A", "a_b", "a-b", "A_B", "x1", "1x", "", "ktlua",
  "KTLUA_X_COUNT", "pwned", "WG",
}

-- What a name does when its writer lets it be code.
local PAYLOADS = {
  "*/ int pwned; /*", '"; int pwned; //', '??/"; int pwned; //', "\\\nint pwned;",
  "\n#define KTLUA_PWNED 1\n", "*/ typedef int f; /*", "*/ int f(void) { return 42; } /*",
  "]] pwned() --[[", '" .. pwned() .. "', "n = pwned(), m", "\0*/ int pwned; /*",
  'x"; int ktlua_pwned; //', "a */\n#define KTLUA_PWNED\n/* b", "}, pwned = {",
}

local same -- below: two values alike, NaN and the sign of zero too

-- A name like one already taken: its '_' and '-' swapped, its case
-- changed, or a byte more.
local name
local function alike(rng, s)
  local k = rng:int(3)
  if k == 1 then return (s:gsub("[_%-]", { _ = "-", ["-"] = "_" })) end
  if k == 2 then return rng:chance(0.5) and s:upper() or s:lower() end
  return s .. rng:pick({ "_", "-", " ", "." })
end

function writers.name(rng, taken)
  local k = rng:int(10)
  if k <= 3 then return rng:pick(WORDS) end
  if k == 4 then return rng:pick(PAYLOADS) end
  if k == 5 and taken and #taken > 0 then return alike(rng, rng:pick(taken)) end
  if k == 6 then return rng:pick(WORDS) .. ("x"):rep(rng:int(30, 300)) end
  local parts = {}
  for i = 1, rng:int(1, 5) do
    parts[i] = rng:chance(0.2) and string.char(rng:int(0, 255)) or rng:pick(PIECES)
  end
  return table.concat(parts)
end
name = writers.name

-- Distinct names, count of them.
local function names(rng, count)
  local list, seen = {}, {}
  for _ = 1, count * 2 do
    if #list == count then break end
    local n = name(rng, list)
    if not seen[n] then list[#list + 1], seen[n] = n, true end
  end
  return list
end

local SPECIAL = { 1 / 0, -1 / 0, 0 / 0, -0.0, 2.0, 1e308, 5e-324, math.mininteger, math.maxinteger }

local function value(rng)
  local k = rng:int(6)
  if k == 1 then return name(rng) end
  if k == 2 then return rng:pick(SPECIAL) end
  if k == 3 then return rng:number() end
  if k == 4 then return rng:int(-100, 100) * 0.25 end
  return rng:int(1, 1024)
end

local function size_value(rng)
  if rng:chance(0.1) then return rng:pick(SPECIAL) end
  return rng:chance(0.7) and 2 ^ rng:int(0, 40) // 1 or rng:int(1, 1000) * 0.5
end

-- A metric's value: often no finite number (+inf, -inf, NaN), which every
-- writer must write so that it reads back.
local NONFINITE = { 1 / 0, -1 / 0, 0 / 0 }
local function metric_value(rng)
  if rng:chance(0.4) then return rng:pick(NONFINITE) end
  return (rng:chance(0.5) and rng:pick(SPECIAL) or rng:number()) + 0.0 -- metrics are floats
end

-- Metrics, or nil (a configuration without any).
local function metrics(rng, taken)
  if rng:chance(0.3) then return nil end
  local m = {}
  for _, n in ipairs(taken or names(rng, rng:int(1, 4))) do m[n] = metric_value(rng) end
  return m
end

-- Entries of one to three kernels, each with its parameters and size names.
function writers.entries(rng)
  local list = {}
  for _, kernel in ipairs(names(rng, rng:int(1, 3))) do
    local params, sizes = names(rng, rng:int(0, 4)), names(rng, rng:int(1, 3))
    for _ = 1, rng:int(1, 4) do
      local e = { kernel = kernel, size = {}, config = {}, rank = rng:int(1, 3),
                  objective = rng:chance(0.8) and "kernel" or name(rng),
                  time_ms = rng:chance(0.1) and rng:pick(SPECIAL) + 0.0 or rng:int(1, 99999) / 1024 }
      for _, s in ipairs(sizes) do e.size[s] = size_value(rng) end
      for _, p in ipairs(params) do if not rng:chance(0.1) then e.config[p] = value(rng) end end
      for _, field in ipairs({ "device", "backend", "source", "options", "driver", "version", "date" }) do
        e[field] = name(rng)
      end
      e.metrics = metrics(rng)
      list[#list + 1] = e
    end
  end
  return list
end

-- ---- through a database ----

local function identifier(rng)
  local words = { "int", "size", "end", "defines", "time_ms", "device", "and", "NAN", "errno",
                  "KTLUA_TUNED_H", "M_PI", "WG", "x1", "_X", "pwned", "class" }
  return rng:pick(words) .. (rng:chance(0.3) and ("_"):rep(rng:int(1, 3)) .. rng:int(0, 9) or "")
end

-- The same entries as a results file that kt.load reads and db:store
-- keeps: a kernel name without NUL, parameters with names that are
-- identifiers (kt.load wants them) and finite values; size names without
-- NUL (the database refuses those).
function writers.stored(rng, dir)
  local task = name(rng):gsub("%z", "")
  local params = {}
  for _ = 1, rng:int(1, 3) do params[identifier(rng)] = true end
  local order, config = E.sorted_keys(params), {}
  local parameters = {}
  for i, p in ipairs(order) do
    local v = value(rng)
    if type(v) == "number" and (v ~= v or v == 1 / 0 or v == -1 / 0) then v = 1 end
    if type(v) == "string" then v = v:gsub("%z", "") end
    config[p] = v
    parameters[i] = { name = p, values = { v } }
  end
  local size = {}
  for _, s in ipairs(names(rng, rng:int(1, 3))) do size[(s:gsub("%z", ""))] = rng:int(1, 4096) end
  -- metric names without NUL, identifiers (kt.json.encode's placeholders
  -- below stand for the values JSON has no spelling for)
  local kept = metrics(rng, (function()
    local m = {}
    for i = 1, rng:int(1, 3) do m[i] = identifier(rng) end
    return m
  end)())
  local spelled = {}
  for k, v in pairs(kept or {}) do
    spelled[k] = v ~= v and "@NaN@" or v == 1 / 0 and "@Infinity@" or v == -1 / 0 and "@-Infinity@" or v
  end
  local doc = { format = "ktlua-results", version = 1, task = task, device = (name(rng):gsub("%z", "")),
                searcher = "exhaustive", kernels = { "k" }, backend = "opencl",
                source = "fnv1a-0000000000000001", options = "", objective = "kernel",
                parameters = parameters,
                results = { { index = 0, config = config, status = "ok", time_ms = 1.5,
                              metrics = kept and spelled } } }
  local path = dir .. "/writers.json"
  -- ktlua's results files spell them as Python's json does
  fuzz.write(path, (kt.json.encode(doc):gsub('"@(%-?%a+)@"', "%1")))
  local db_path = dir .. "/writers.db"
  os.remove(db_path)
  local db = kt.db(db_path)
  db:store(kt.load(path), { size = size })
  local list = db:list()
  local texts = { header = db:export("header"), lua = db:export("lua"), json = db:export("json") }
  db:close()
  os.remove(db_path)
  assert(#list == 1 and list[1].kernel == task, "the database did not keep the kernel's name")
  same(kept, list[1].metrics, "the metrics the database kept")
  return list, texts
end

-- ---- the Lua export ----

function same(a, b, where)
  if type(a) ~= type(b) then error(("%s: a %s became a %s"):format(where, type(a), type(b)), 0) end
  if type(a) == "table" then
    for k, v in pairs(a) do same(v, b[k], where .. "[" .. ("%q"):format(k) .. "]") end
    for k in pairs(b) do
      if a[k] == nil then error(("%s: %q came from nowhere"):format(where, k), 0) end
    end
  elseif type(a) == "number" then
    local ok = math.type(a) == math.type(b) and (a == b or (a ~= a and b ~= b))
      and (a ~= 0 or 1 / a == 1 / b)
    if not ok then error(("%s: %s became %s"):format(where, a, b), 0) end
  elseif a ~= b then
    error(("%s: %q became %q"):format(where, a, b), 0)
  end
end

function writers.check_lua(entries, text)
  text = text or export.lua(entries)
  local looked_up = {}
  local env = setmetatable({}, { __index = function(_, k) looked_up[#looked_up + 1] = tostring(k) end,
                                 __newindex = function(_, k) looked_up[#looked_up + 1] = tostring(k) end })
  local chunk, why = load(text, "export", "t", env)
  assert(chunk, "the Lua export does not load: " .. tostring(why))
  local back = chunk()
  assert(#looked_up == 0, "the Lua export looked up " .. table.concat(looked_up, ", "))
  same(entries, back, "entries")
end

-- ---- the JSON export ----

local function json_same(a, b, where)
  if type(a) == "number" and (a ~= a or a == 1 / 0 or a == -1 / 0) then
    assert(b == kt.json.null, where .. ": a number JSON cannot hold is not null")
  elseif type(a) == "number" then
    assert(type(b) == "number" and a == b, where .. ": " .. a .. " became " .. tostring(b))
  else
    assert(a == b, ("%s: %q became %q"):format(where, tostring(a), tostring(b)))
  end
end

function writers.check_json(entries, text)
  text = text or export.json(entries)
  local doc = kt.json.decode(text)
  local groups, order = E.by_kernel(entries)
  assert(#doc.kernels == #order, "kernels")
  for i, kernel in ipairs(order) do
    local k = doc.kernels[i]
    json_same(kernel, k.kernel, "kernel " .. i)
    same((E.parameters(groups[kernel])), k.tunable_parameters, "tunable_parameters")
    local sizes = E.sorted_keys(groups[kernel][1].size)
    same(sizes, k.problem_size_names, "problem_size_names")
    for j, e in ipairs(groups[kernel]) do
      local r = k.results[j]
      for _, f in ipairs({ { "device", "device_name" }, { "backend" }, { "rank" }, { "time_ms", "time" },
                           { "objective" }, { "source" }, { "options" }, { "driver" }, { "date" } }) do
        json_same(e[f[1]], r[f[2] or f[1]], f[2] or f[1])
      end
      for s, n in ipairs(sizes) do json_same(e.size[n] or 0, r.problem_size[s], "problem_size") end
      for p, v in pairs(e.config) do json_same(v, r.config[p], ("config[%q]"):format(p)) end
      for p in pairs(r.config) do assert(e.config[p] ~= nil, "config: a parameter from nowhere") end
      assert((e.metrics == nil) == (r.metrics == nil), "metrics where the entry has none, or none")
      for m, v in pairs(e.metrics or {}) do json_same(v, r.metrics[m], ("metrics[%q]"):format(m)) end
      for m in pairs(r.metrics or {}) do assert(e.metrics[m] ~= nil, "metrics: one from nowhere") end
    end
  end
  -- UTF-8 whatever the names' bytes (a byte of no character is \udcXX), read back whole above
  assert(utf8.len(text), "the JSON export is not UTF-8")
end

-- ---- the header ----

local ESCAPES = { n = "\n", r = "\r", t = "\t", ["\\"] = "\\", ['"'] = '"', ["?"] = "?" }

-- The string literals of a line, their values in order.
local function literals(line)
  local out, i = {}, 1
  while true do
    local q = line:find('"', i, true)
    if not q then return out end
    local s, j = {}, q + 1
    while line:sub(j, j) ~= '"' do
      local c = line:sub(j, j)
      assert(c:find("^[ -~]$"), "a byte outside printable ASCII in a string literal")
      if c == "\\" then
        local oct = line:match("^[0-7][0-7]?[0-7]?", j + 1)
        if oct then s[#s + 1], j = string.char(tonumber(oct, 8)), j + 1 + #oct
        else s[#s + 1], j = assert(ESCAPES[line:sub(j + 1, j + 1)], "an unknown escape"), j + 2 end
      else
        s[#s + 1], j = c, j + 1
      end
    end
    out[#out + 1], i = table.concat(s), j + 1
  end
end

-- Checks what the header text of the entries says of names, and writes
-- the program that checks the rest when compiled: case n's header and a
-- main file including it; the main file's path.
function writers.header_case(entries, dir, n, text)
  assert(not text:find("%?%?[=/'()!<>%-]"), "a trigraph")
  local groups, order = E.by_kernel(entries)
  local ids, seen, asserts = {}, {}, {}
  for line in text:gmatch("[^\n]*") do
    local id = line:match("^static const char ktlua_([%w_]+)_name%[%] = \"")
    if id then
      local kernel = literals(line)[1]
      assert(groups[kernel] and not ids[kernel], "a kernel's name string that names no kernel")
      assert(not seen[id:upper()], "two kernels with the identifier " .. id)
      ids[kernel], seen[id:upper()] = id, true
      asserts[#asserts + 1] = ("_Static_assert(sizeof ktlua_%s_name == %d, \"the name's length\");")
        :format(id, #kernel + 1)
    end
    id = line:match("^static const char %*const ktlua_([%w_]+)_size_names%[%] = {")
    if id then
      local kernel
      for k, i in pairs(ids) do if i == id then kernel = k end end
      same(E.sorted_keys(groups[kernel][1].size), literals(line), "size names")
    end
  end
  for _, kernel in ipairs(order) do assert(ids[kernel], "a kernel with no name string") end
  local h = ("%s/writers-%d.h"):format(dir, n)
  local c = ("%s/writers-%d.c"):format(dir, n)
  fuzz.write(h, text)
  fuzz.write(c, ('#include "writers-%d.h"\n%s\n'):format(n, table.concat(asserts, "\n"))
    .. "/* what the data said in code, were it code, would not compile with these */\n"
    .. "typedef int pwned;\ntypedef int f;\ntypedef int ktlua_pwned;\ntypedef int KTLUA_PWNED;\n")
  return c
end

-- Compiles the main files of header_case strictly: nil, or the case that
-- did not compile and what the compiler said.
function writers.compile(paths)
  if #paths == 0 then return nil end
  local p = io.popen("cc -std=c11 -pedantic -Wall -Wextra -Werror -fsyntax-only "
    .. table.concat(paths, " ") .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  if ok then return nil end
  return tonumber(out:match("writers%-(%d+)%.[ch]") or -1), out:sub(1, 3000)
end

return writers
