-- What the fuzzers share: a seeded generator, JSON text from Lua values,
-- byte-level mutations, and the file a case is written to before it runs
-- (so that a case that crashes the process is left behind to reproduce).
--
-- KTLUA_FUZZ_SEED (default 1) and KTLUA_FUZZ_CASES (default: the count the
-- spec gives; the API fuzzer runs a tenth as many) choose the cases;
-- KTLUA_FUZZ_CASE=N runs case N alone, as a crash report names it; KTLUA_FUZZ_DIR is where cases are written
-- (default: a fresh folder under /tmp).
local fuzz = {}

-- ---- the generator: xorshift64*, the same on every machine ----

local Rng = {}
Rng.__index = Rng

function fuzz.rng(seed, case)
  -- splitmix64 of (seed, case), so that each case stands alone
  local x = (seed * 0x9E3779B97F4A7C15 + case * 0xBF58476D1CE4E5B9) ~ 0x94D049BB133111EB
  x = (x ~ (x >> 30)) * 0xBF58476D1CE4E5B9
  x = (x ~ (x >> 27)) * 0x94D049BB133111EB
  x = x ~ (x >> 31)
  return setmetatable({ s = x ~= 0 and x or 1 }, Rng)
end

function Rng:next()
  local x = self.s
  x = x ~ (x >> 12)
  x = x ~ (x << 25)
  x = x ~ (x >> 27)
  self.s = x
  return (x * 0x2545F4914F6CDD1D) >> 1 -- 63 bits, never negative
end

-- An integer in [lo, hi] (or [1, lo]).
function Rng:int(lo, hi)
  if not hi then lo, hi = 1, lo end
  return lo + self:next() % (hi - lo + 1)
end

function Rng:chance(p) return self:next() % 1000000 < p * 1000000 end
function Rng:pick(list) return list[self:int(#list)] end

-- ---- settings ----

function fuzz.settings(default_cases)
  local function env_int(name, dflt)
    local v = os.getenv(name)
    return v and v ~= "" and math.tointeger(tonumber(v)) or dflt
  end
  local only = env_int("KTLUA_FUZZ_CASE", nil)
  local dir, made = os.getenv("KTLUA_FUZZ_DIR"), false
  if not dir or dir == "" then
    dir, made = os.tmpname(), true
    os.remove(dir)
  end
  os.execute("mkdir -p '" .. dir .. "'")
  local cases = env_int("KTLUA_FUZZ_CASES", nil)
  return {
    seed = env_int("KTLUA_FUZZ_SEED", 1),
    first = only or 1,
    last = only or cases or default_cases,
    only = only, cases = cases, -- as the environment gave them
    dir = dir,
    made = made, -- dir is ours to remove once every case has passed
  }
end

-- Writes what case n of fuzzer `what` is about to do, so that a crash
-- leaves it behind: `dir/what.case` names the seed and case, the case's
-- own files lie beside it.
function fuzz.note(s, what, n, text)
  local f = assert(io.open(s.dir .. "/" .. what .. ".case", "w"))
  f:write(("-- %s fuzzer, KTLUA_FUZZ_SEED=%d KTLUA_FUZZ_CASE=%d\n"):format(what, s.seed, n))
  if text then f:write(text, "\n") end
  f:close()
end

function fuzz.write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- ---- values that parsers and the API find hard ----

fuzz.numbers = {
  0, 1, -1, 2, 3, 7, 64, 255, 256, 1024, 65535, 65536, 2 ^ 31 // 1, -2 ^ 31 // 1, 2 ^ 32 // 1,
  (1 << 53) + 1, math.maxinteger, math.mininteger, 0.5, -0.0, 1e-320, 1e300, -1e300, 1e308,
  3.25, 1 / 3,
}

-- Number texts a Lua number cannot write.
fuzz.number_texts = {
  "1e999", "-1e999", "1e-999", "9223372036854775808", "-9223372036854775809",
  "18446744073709551616", "1E2", "-0", "0.0e0", "123456789012345678901234567890", "1.5e300",
}

fuzz.strings = {
  "", "a", "X", "block_x", "float", "ok", "timeout", "compile_failed", "InvalidConfig",
  "CompilationFailedConfig", "RuntimeFailedConfig", "a,b", 'q"q', "line\nbreak", "tab\there",
  "\0nul", "é", "\xff\xfe", ("x"):rep(300), "1,2,3", "-", "null", "__proto__", "A B",
}

function Rng:number()
  if self:chance(0.5) then return self:int(0, 16) end
  return self:pick(fuzz.numbers)
end

function Rng:string()
  if self:chance(0.3) then return self:pick({ "a", "b", "c", "X", "Y" }) end
  return self:pick(fuzz.strings)
end

-- ---- JSON text ----

-- A Lua value as JSON. Tables are objects unless they have `[1]` or are
-- marked {json_array = true}; fuzz.raw(text) goes in as it is. Keys come
-- in the order given by `order` (a list of keys), else in pairs order.
local RAW = {}
function fuzz.raw(text) return setmetatable({ text = text }, RAW) end
function fuzz.array(t) t.json_array = true return t end

local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    local named = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\t"] = "\\t" }
    return named[c] or ("\\u%04x"):format(c:byte())
  end) .. '"'
end

local function number_text(x)
  if math.type(x) == "integer" then return tostring(x) end
  if x ~= x or x == math.huge or x == -math.huge then return "null" end
  return ("%.17g"):format(x)
end

function fuzz.json(v)
  local t = type(v)
  if v == nil then return "null"
  elseif t == "boolean" then return tostring(v)
  elseif t == "number" then return number_text(v)
  elseif t == "string" then return quote(v)
  elseif getmetatable(v) == RAW then return v.text
  end
  local parts = {}
  if v.json_array or v[1] ~= nil then
    for i = 1, #v do parts[i] = fuzz.json(v[i]) end
    return "[" .. table.concat(parts, ",") .. "]"
  end
  local keys = v.order
  if not keys then
    keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  end
  for _, k in ipairs(keys) do
    if k ~= "order" and v[k] ~= nil then parts[#parts + 1] = quote(tostring(k)) .. ":" .. fuzz.json(v[k]) end
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- ---- byte-level mutations ----

local tokens = {
  "{", "}", "[", "]", '"', ":", ",", "null", "true", "false", "-", "0", "1e999", "\\u0000",
  "\\ud800", '\\"', "\n", " ", "[[[[[[[[", "{\"a\":", "\xff", "1.", ".5", "NaN", "-Infinity",
}

local function mutate_once(rng, s)
  local n = #s
  local at = rng:int(1, n + 1)
  local kind = rng:int(1, 7)
  if kind == 1 and n > 0 then -- a byte changed
    return s:sub(1, at - 1) .. string.char(rng:int(0, 255)) .. s:sub(at + 1)
  elseif kind == 2 then -- a span removed
    return s:sub(1, at - 1) .. s:sub(at + rng:int(1, 16))
  elseif kind == 3 then -- a span repeated
    local len = rng:int(1, 32)
    return s:sub(1, at + len - 1) .. s:sub(at, at + len - 1) .. s:sub(at + len)
  elseif kind == 4 then -- cut short
    return s:sub(1, at - 1)
  elseif kind == 5 then -- a digit made another
    local d = s:find("%d", at)
    if d then return s:sub(1, d - 1) .. rng:pick({ "0", "9", "-1", "99999999999", "1e308" }) .. s:sub(d + 1) end
  end
  return s:sub(1, at - 1) .. rng:pick(tokens) .. s:sub(at)
end

-- The text with a few mutations, or (sometimes) as it is.
function fuzz.mutate(rng, s)
  if rng:chance(0.6) then return s end
  for _ = 1, rng:int(1, 4) do s = mutate_once(rng, s) end
  return s
end

return fuzz
