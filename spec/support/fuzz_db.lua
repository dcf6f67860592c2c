-- The database fuzzer (spec/fuzz_spec.lua). A store case: results of a
-- tuning with hostile names and values (a ktlua results file, read by
-- kt.load) stored under hostile sizes in a fresh kt.db, then listed, and
-- looked up by exact key and by nearest size: what comes back is what was
-- stored, and bad input is a Lua error that says what was wrong. A damage
-- case: a ktlua database file cut short, given another program's tables or
-- another version or application_id, or with bytes changed: opening and
-- reading it succeed or fail naming the file, and it stays byte-identical.
local kt = require "ktlua"
local fuzz = require "spec.support.fuzz"
local files = require "spec.support.files"

local M = {}

-- Names that writers of SQL, JSON, C or Lua find hard (no NUL: results
-- files are read as C strings; NUL goes into sizes and queries below).
M.names = {
  'q"q', "back\\slash", '\\"', "\\u0000", "line\nbreak", "cr\rlf", "tab\there", "é", "日本語",
  "\xff\xfe", "'; DROP TABLE tuned; --", "%s%d%n", '{"n":1}', "[1]", "", " ", "null", "--[[", "]]",
  "*/", "\"\\\n\t", ("x"):rep(3000), ('"\\'):rep(200), "\u{10FFFF}", "\xed\xa0\x80",
}

function M.name(rng)
  local pick = rng:int(1, 10)
  if pick <= 5 then return rng:pick(M.names) end
  if pick <= 7 then return rng:string():gsub("%z", "") end
  local bytes = {}
  for i = 1, rng:int(0, 12) do bytes[i] = string.char(rng:int(1, 255)) end
  return table.concat(bytes)
end

-- Size values: positive and finite, integers and floats of every kind.
M.size_values = { 1, 2, 3, 7, 64, 1024, 65536, 2 ^ 31 // 1, math.maxinteger, 0.5, 1 / 3, 1e-320,
                  5e-324, 1e300, 1e308, 3.25, 4.0, 2.0 ^ 60, (1 << 53) + 1 }
-- What a size may not hold: {key, value, the error's end}.
local bad_sizes = {
  { "n", 0, "n = 0 is not one" }, { "n", -1, "n = -1 is not one" },
  { "n", 0 / 0, "is not one" }, { "n", math.huge, "n = inf is not one" },
  { "n", "4096", "n = 4096 is not one" }, { 1, 64, "1 = 64 is not one" },
  { "a\0b", 4, "a name holds a NUL byte (after 'a')" },
}

-- Distinct values for a parameter: hostile strings, numbers, booleans.
local function param_values(rng)
  local values, seen = {}, {}
  for _ = 1, rng:int(1, 4) do
    local kind, v = rng:int(1, 4), nil
    if kind == 1 then v = M.name(rng)
    elseif kind == 2 then v = rng:pick(fuzz.numbers)
    elseif kind == 3 then v = rng:chance(0.5)
    else v = rng:pick(M.size_values) end
    local key = type(v) == "boolean" and (v and 1.0 or 0.0) or type(v) == "number" and v + 0.0 or v
    if not seen[key] and not (type(v) == "number" and v ~= v) then
      seen[key] = true
      values[#values + 1] = v
    end
  end
  return values
end

-- A results document: parameters P1..Pn, distinct configurations with
-- distinct times (ranks are then the order of times), some failed, ok
-- ones with metrics of hostile names.
function M.results(rng)
  local params = {}
  for i = 1, rng:int(1, 3) do
    params[i] = { name = "P" .. i .. (rng:chance(0.2) and ("_"):rep(rng:int(1, 300)) or ""),
                  values = param_values(rng) }
  end
  local kernel = M.name(rng)
  local doc = {
    format = "ktlua-results", version = 1, task = kernel, kernels = { kernel }, searcher = "random",
    device = M.name(rng), backend = rng:chance(0.6) and "opencl" or M.name(rng),
    source = M.name(rng), options = M.name(rng), driver = M.name(rng),
    objective = "kernel", parameters = params, results = {},
  }
  local scale = rng:pick({ 1e-6, 1, 1e6 })
  local n, used = rng:int(1, 8), {}
  for i = 1, n do
    local config, index, stride = {}, 0, 1
    for _, p in ipairs(params) do
      local at = rng:int(1, #p.values)
      config[p.name] = p.values[at]
      index = index + (at - 1) * stride
      stride = stride * #p.values
    end
    if not used[index] then
      used[index] = true
      local ok = rng:chance(0.8)
      local metrics = ok and rng:chance(0.7) and {} or nil
      for _ = 1, metrics and rng:int(1, 3) or 0 do metrics[M.name(rng)] = rng:int(-1000, 1000) / 8 end
      doc.results[#doc.results + 1] = { index = index, config = config,
        status = ok and "ok" or rng:pick({ "timeout", "compile_failed" }),
        time_ms = ok and rng:int(1, 1000) * scale + i * 1e-3 * scale or nil,
        error = not ok and M.name(rng) or nil, metrics = metrics }
    end
  end
  return doc
end

-- A size table of names given, values drawn.
function M.size(rng, names)
  local size = {}
  for _, name in ipairs(names) do size[name] = rng:pick(M.size_values) end
  return size
end

function M.size_names(rng)
  local names, seen = {}, {}
  for _ = 1, rng:int(1, 3) do
    local name = M.name(rng)
    if not seen[name] then
      seen[name] = true
      names[#names + 1] = name
    end
  end
  return names
end

-- A folder for the databases of the cases written to dir: in /dev/shm
-- (memory) where there is one, else dir.
function M.scratch(dir)
  local shm = "/dev/shm/ktlua_fuzz_db_" .. dir:gsub("[^%w]", "_")
  if os.execute("test -d /dev/shm -a -w /dev/shm && mkdir -p '" .. shm .. "'") then return shm end
  return dir
end

-- ---- checking ----

local function same(a, b)
  if type(a) ~= "table" or type(b) ~= "table" then return a == b end
  for k, v in pairs(a) do if not same(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

local function show(v)
  if math.type(v) == "float" then return ("%.17g"):format(v) end
  if type(v) ~= "table" then return type(v) == "string" and ("%q"):format(v) or tostring(v) end
  local parts = {}
  for k, x in pairs(v) do parts[#parts + 1] = ("[%s] = %s"):format(show(k), show(x)) end
  table.sort(parts)
  return "{ " .. table.concat(parts, ", ") .. " }"
end

local function expect_same(want, got, what)
  if not same(want, got) then error(("%s: expected %s, got %s"):format(what, show(want), show(got)), 0) end
end

local function expect(cond, what) if not cond then error(what, 0) end end

-- The key's fields, as the results and the file gave them.
local function key_of(r, doc)
  return { kernel = r.task, device = r.device, backend = doc.backend, objective = r.objective }
end

-- The log2 distance of two sizes of the same names (their names in the
-- byte order the database sums them in), or nil.
local function distance(a, b)
  local names = {}
  for k in pairs(a) do names[#names + 1] = k end
  table.sort(names)
  local sum = 0
  for _, k in ipairs(names) do
    if b[k] == nil then return nil end
    local d = math.log(a[k], 2) - math.log(b[k], 2)
    sum = sum + d * d
  end
  for k in pairs(b) do if a[k] == nil then return nil end end
  return math.sqrt(sum)
end

-- What a size reads back as: whole floats below 9e15 are integers.
local function stored_size(size)
  local t = {}
  for k, v in pairs(size) do
    t[k] = math.type(v) == "float" and v == math.floor(v) and v < 9e15 and math.tointeger(v) or v
  end
  return t
end

local function check_entry(e, key, doc, size, rank, result)
  local where = ("rank %d"):format(rank)
  expect_same({ key.kernel, key.device, key.backend, key.objective, doc.source, doc.options, doc.driver },
    { e.kernel, e.device, e.backend, e.objective, e.source, e.options, e.driver }, where .. " key")
  expect_same(stored_size(size), e.size, where .. " size")
  expect_same(rank, e.rank, where .. " rank")
  expect_same(result.config, e.config, where .. " config")
  expect_same(result.time_ms, e.time_ms, where .. " time")
  expect_same(result.metrics, e.metrics, where .. " metrics")
end

-- The results' ok ones, fastest first.
local function ranked(r)
  local ok = {}
  for i = 1, #r do if r[i].status == "ok" then ok[#ok + 1] = r[i] end end
  table.sort(ok, function(a, b) return a.time_ms < b.time_ms end)
  return ok
end

-- Stores r under a size; returns what was stored (nil when it was refused
-- as it should be).
local function store(rng, db, r, size, top)
  local bad = rng:chance(0.15) and rng:pick(bad_sizes)
  if bad then
    local wrong = {}
    for k, v in pairs(size) do wrong[k] = v end
    wrong[bad[1]] = bad[2]
    local ok, err = pcall(db.store, db, r, { size = wrong, top = top })
    expect(not ok and type(err) == "string" and err:find("db:store: size: ", 1, true) == 1
      and err:sub(-#bad[3]) == bad[3], "a bad size " .. show(wrong) .. " gave " .. tostring(err))
    return nil
  end
  local ok, err = pcall(db.store, db, r, { size = size, top = top })
  if #ranked(r) == 0 then
    expect(not ok and err:find("came out ok: nothing to store", 1, true), "storing no ok result: " .. tostring(err))
    return nil
  end
  expect(ok, "db:store raised " .. tostring(err))
  return size
end

-- A store case: dir holds its files (results.json, tuned.db).
function M.store_case(rng, dir)
  local doc = M.results(rng)
  local rpath, path = dir .. "/results.json", dir .. "/tuned.db"
  fuzz.write(rpath, fuzz.json(doc))
  for _, suffix in ipairs({ "", "-wal", "-shm" }) do os.remove(path .. suffix) end
  local loaded, r = pcall(kt.load, rpath)
  if not loaded then
    expect(type(r) == "string" and r:find(rpath, 1, true), "kt.load raised " .. tostring(r))
    return
  end
  local db = kt.db(path)
  local key, ok_results = key_of(r, doc), ranked(r)
  local top = rng:int(1, 4)
  local names, sizes = M.size_names(rng), {}
  for _ = 1, rng:int(1, 3) do
    local size = store(rng, db, r, M.size(rng, names), top)
    if size then sizes[#sizes + 1] = size end
  end
  local stored = math.min(top, #ok_results)
  -- each size's rows, by exact key
  local distinct = {}
  for _, size in ipairs(sizes) do
    local list = db:list{ kernel = key.kernel, device = key.device, backend = key.backend,
                          objective = key.objective, size = size }
    expect_same(stored, #list, "rows of a size")
    for rank, e in ipairs(list) do check_entry(e, key, doc, size, rank, ok_results[rank]) end
    local e = db:best{ kernel = key.kernel, device = key.device, backend = key.backend,
                       objective = key.objective, size = size }
    expect(e, "no best of a stored size")
    expect_same({ "exact", 0 }, { e.match, e.distance }, "exact match")
    check_entry(e, key, doc, size, 1, ok_results[1])
    distinct[fuzz.json(stored_size(size))] = size
  end
  local n = 0
  for _ in pairs(distinct) do n = n + 1 end
  expect_same(n * stored, #db:list(), "all rows")
  -- the nearest of the stored sizes to another
  if n > 0 then
    local near = M.size(rng, names)
    local least, at = math.huge, {}
    for text, size in pairs(distinct) do
      local d = distance(stored_size(size), stored_size(near))
      if d < least then least, at = d, {} end
      if d == least then at[text] = true end
    end
    local e = db:best{ kernel = key.kernel, device = key.device, backend = key.backend,
                       objective = key.objective, size = near }
    expect(e and at[fuzz.json(e.size)], "nearest to " .. show(near) .. ": got " .. show(e and e.size))
    expect_same(least, e.distance, "the nearest's distance")
    expect_same(least == 0 and "exact" or "nearest", e.match, "the nearest's match")
  end
  -- names with a NUL byte in a lookup
  local ok, err = pcall(db.list, db, { kernel = key.kernel .. "\0" .. M.name(rng) })
  expect(not ok and err:find("db options.kernel: a name holds a NUL byte", 1, true),
    "a kernel name with a NUL byte: " .. tostring(err))
  db:close()
end

-- ---- damage ----

-- SQL that makes a ktlua database another program's too.
M.foreign_sql = {
  "CREATE TABLE notes (x)", "CREATE INDEX by_date ON tuned (date)",
  "CREATE VIEW best AS SELECT * FROM tuned WHERE rank = 1",
  "CREATE TRIGGER t AFTER INSERT ON tuned BEGIN DELETE FROM probes; END",
  "ALTER TABLE tuned ADD COLUMN extra", "DROP TABLE probes", "ALTER TABLE tuned RENAME TO tuned2",
  "ALTER TABLE probe_rows RENAME COLUMN value TO v", "CREATE TABLE \"tuned \"\"x\" (kernel)",
}

local function set_u32(bytes, at, v)
  v = v & 0xffffffff
  return bytes:sub(1, at - 1) .. string.pack(">I4", v) .. bytes:sub(at + 4)
end

-- A ktlua database with some rows (made once per folder).
local function pristine(dir)
  local path = dir .. "/pristine.db"
  if not files.exists(path) then
    local db = kt.db(path)
    local doc = { format = "ktlua-results", version = 1, task = "k", kernels = { "k" }, device = "d",
      searcher = "random", backend = "opencl", source = "s", options = "", driver = "v",
      objective = "kernel", parameters = { { name = "X", values = { 1, 2, 3 } } }, results = {} }
    for i = 1, 3 do doc.results[i] = { index = i - 1, config = { X = i }, status = "ok", time_ms = i } end
    fuzz.write(dir .. "/pristine.json", fuzz.json(doc))
    local r = kt.load(dir .. "/pristine.json")
    for n = 1, 40 do db:store(r, { size = { n = n, ["pad" .. ("x"):rep(200)] = 1 } }) end
    db:close()
  end
  return files.read(path)
end

-- The damaged file's bytes, whether it must be refused, and what was done.
local function damage(rng, dir, path)
  local bytes = pristine(dir)
  local kind = rng:int(1, 5)
  if kind == 1 then
    local at = rng:int(1, #bytes - 1)
    return bytes:sub(1, at), false, "cut to " .. at .. " bytes"
  elseif kind == 2 then
    local v = rng:pick({ 0, 1, 2, 3, 4, 6, -1, 0x7fffffff }) -- any but this version, 5
    return set_u32(bytes, 61, v), true, "user_version " .. v
  elseif kind == 3 then
    local v = rng:pick({ 0, 1, 0x47504b47, 0x6b746c74, -1 })
    return set_u32(bytes, 69, v), true, "application_id " .. v
  elseif kind == 4 then
    local sql = rng:pick(M.foreign_sql)
    files.write(path, bytes)
    local p = io.popen(("sqlite3 %s '%s' 2>&1"):format(path, sql:gsub("'", "'\\''")))
    local out = p:read("a")
    p:close()
    expect(out == "", sql .. ": " .. out)
    return files.read(path), true, sql
  end
  for _ = 1, rng:int(1, 8) do
    local at = rng:int(1, #bytes)
    bytes = bytes:sub(1, at - 1) .. string.char(rng:int(0, 255)) .. bytes:sub(at + 1)
  end
  return bytes, false, "bytes changed"
end

-- An error of ours: a string that names the file.
local function names_file(err, path) return type(err) == "string" and err:find(path, 1, true) ~= nil end

function M.damage_case(rng, dir, note)
  local path = dir .. "/damaged.db"
  for _, suffix in ipairs({ "", "-wal", "-shm" }) do os.remove(path .. suffix) end
  local bytes, refused, what = damage(rng, dir, path)
  note(what)
  files.write(path, bytes)
  local opened, db = pcall(kt.db, path, rng:chance(0.3) and { readonly = true } or nil)
  expect(opened or names_file(db, path), what .. ": kt.db raised " .. tostring(db))
  expect(not (refused and opened), what .. ": opened")
  if opened then
    local calls = {
      function() return db:list() end,
      function() return db:best{ kernel = "k", device = "d", size = { n = 3, ["pad" .. ("x"):rep(200)] = 1 } } end,
      function() return db:probe("d", "opencl") end,
      function() return db:export("lua") end,
    }
    for i, call in ipairs(calls) do
      local ok, err = pcall(call)
      expect(ok or names_file(err, path), ("%s: call %d raised %s"):format(what, i, tostring(err)))
    end
    db:close()
  end
  expect(files.read(path) == bytes, what .. ": the file changed")
end

return M
