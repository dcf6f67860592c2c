-- Seeded fuzzing, part of the suite: the readers (journals, results files,
-- Kernel Tuner caches, T4 and KTT results; what they accept is written as
-- JSON, CSV, T4 and a cache and read again), expression constraints, the
-- expressions' values against Python 3's, and the API (spec/support/
-- fuzz_api.lua), online tuning among it and on its own. Each fuzzer runs a
-- bounded number of cases here and many more under `make fuzz`
-- (KTLUA_FUZZ_SEED, KTLUA_FUZZ_CASES: see spec/support/fuzz.lua). A document that once broke a reader is kept in
-- spec/fixtures/fuzz/ and read here every time; what the API fuzzer found
-- is in spec/release_spec.lua, what the online fuzzer found in
-- spec/online_spec.lua.
local kt = require "ktlua"
local fuzz = require "spec.support.fuzz"
local docs = require "spec.support.fuzz_docs"
local api = require "spec.support.fuzz_api"

local sanitized = os.getenv("KTLUA_SANITIZED") == "1"
-- Cases per fuzzer here: the plain and the sanitized run of the suite
-- together stay within about a minute.
local settings = fuzz.settings(sanitized and 150 or 300)
local api_cases = sanitized and 25 or 50

-- The cases' folder goes when it was made here and no case failed.
teardown(function()
  if settings.made and not settings.failed then os.execute("rm -rf '" .. settings.dir .. "'") end
end)

-- An error of ours: a string that names the file.
local function refused(err, path)
  return type(err) == "string" and err:find(path, 1, true) ~= nil
end

-- The fields of each record of a CSV text (quoted fields may hold commas
-- and doubled quotes).
local function csv_records(text)
  local records, fields, i = {}, {}, 1
  while i <= #text do
    local c = text:sub(i, i)
    if c == '"' then
      local j = i + 1
      while true do
        local q = assert(text:find('"', j, true), "an unterminated quoted field")
        if text:sub(q + 1, q + 1) == '"' then j = q + 2 else i = q + 1 break end
      end
      c = text:sub(i, i)
    else
      local j = text:find("[,\n]", i) or #text + 1
      i = j
      c = text:sub(i, i)
    end
    fields[#fields + 1] = true
    if c == "\n" or c == "" then
      records[#records + 1] = #fields
      fields = {}
    elseif c ~= "," then
      error("a quoted field followed by " .. c)
    end
    i = i + 1
  end
  return records
end

local read = require("spec.support.files").read

-- Two results' metrics alike: NaN as NaN, each infinity with its sign.
local function same_metrics(a, b, where)
  a, b = a or {}, b or {}
  for k, v in pairs(a) do
    local w = b[k]
    assert(v == w or (v ~= v and w ~= w), ("%s: metric %s: %s became %s"):format(where, k, v, w))
  end
  for k in pairs(b) do assert(a[k] ~= nil, ("%s: metric %s came from nowhere"):format(where, k)) end
end

-- What kt.load accepts reads back the same from the JSON it writes, and
-- its CSV has a row per result with the header's fields.
local function check_load(path)
  local ok, r = pcall(kt.load, path)
  if not ok then
    assert(refused(r, path), "kt.load raised " .. tostring(r))
    return
  end
  local n = #r
  for i = 1, n do assert(r[i].status) end
  r:best()
  r:summary()
  r:list()
  local out = settings.dir .. "/out"
  r:write(out .. ".json")
  local again = kt.load(out .. ".json")
  assert.are.equal(n, #again)
  for i = 1, n do
    assert.are.same({ r[i].index, r[i].status, r[i].config, r[i].error },
      { again[i].index, again[i].status, again[i].config, again[i].error })
    same_metrics(r[i].metrics, again[i].metrics, "result " .. i)
  end
  r:write(out .. ".csv")
  local rows = csv_records(read(out .. ".csv"))
  assert.are.equal(n + 1, #rows)
  for i = 2, #rows do assert.are.equal(rows[1], rows[i], "fields of CSV row " .. i) end
  -- the exchange formats keep each result's configuration, status and error
  local formats = { "t4" }
  if #r.params > 0 then formats[2] = "kernel-tuner-cache" end
  for _, format in ipairs(formats) do
    local wrote, why = pcall(r.write, r, out .. ".json", format)
    -- a cache keeps one entry per configuration, each naming a thing once
    if not wrote then
      assert(format == "kernel-tuner-cache" and (why:match("would be one entry of a Kernel Tuner "
        .. "cache") or why:match("a Kernel Tuner cache entry has a field of that name")), why)
      goto next
    end
    again = kt.load(out .. ".json")
    assert.are.equal(n, #again, format)
    for i = 1, n do
      assert.are.same({ r[i].status, r[i].config, r[i].error },
        { again[i].status, again[i].config, again[i].error }, format)
    end
    ::next::
  end
end

-- What kt.replay accepts can be explored and tuned.
local function check_replay(rng, path)
  local ok, rec = pcall(kt.replay, path)
  if not ok then
    assert(refused(rec, path), "kt.replay raised " .. tostring(rec))
    return
  end
  local n = rec:count()
  rec:optimum()
  assert.are.equal(n, #rec:records())
  local s = rec:space()
  assert.are.equal(n, s:count())
  for _ = 1, 3 do
    local i = rng:int(0, n - 1)
    assert.are.equal(i, s:index(s:config(i)))
  end
  local search = rng:pick({ "random", "exhaustive", "bestfirst", "greedy", "annealing", "mcmc",
                            "genetic", "differential", "pso" })
  local r = rec:tune{ search = search, seed = rng:int(0, 99), stop = { count = rng:int(1, 8) } }
  assert.is_true(#r >= 1)
  rec:score(r)
end

-- Runs case(n) for n from first to last; a failure names its case.
local function run_cases(first, last, case)
  for n = first, last do
    local ok, err = pcall(case, n)
    if not ok then
      settings.failed = true
      error(("case %d (KTLUA_FUZZ_SEED=%d KTLUA_FUZZ_CASE=%d, its files in %s): %s")
        :format(n, settings.seed, n, settings.dir, tostring(err)), 0)
    end
  end
end

local function parse_case(n)
  local rng = fuzz.rng(settings.seed, n)
  local kind, text = docs.generate(rng)
  text = fuzz.mutate(rng, text)
  local path = settings.dir .. "/parse" .. (kind == "journal" and ".jsonl" or ".json")
  fuzz.note(settings, "parse", n, "-- " .. kind .. ": " .. path)
  fuzz.write(path, text)
  check_load(path)
  check_replay(rng, path)
end

describe("the parser fuzzer", function()
  -- What each kept case found, and what ktlua says of it now (its error,
  -- or nothing when it is read).
  local kept = {
    ["journal_no_parameters.jsonl"] = { -- memcpy(NULL, ..., 0)
      replay = "a recorded space needs at least one parameter" },
    ["journal_negative_index.jsonl"] = { -- a negative double cast to uint64_t
      load = "line 2: index -1 is no configuration index (an integer from 0)" },
    ["journal_negative_size.jsonl"] = { load = "line 2: sizes[1] has no global size" },
    ["journal_huge_counts.jsonl"] = {}, -- casts out of range: now unknown, or 0
    ["journal_number_out_of_range.jsonl"] = { -- inf, written back as null
      load = "line 2: JSON: line 1, column 156: number out of range" },
    ["journal_time_out_of_range.jsonl"] = { load = "line 2: time_ms is out of range" },
    ["kt_cache_time_out_of_range.json"] = {
      load = "cache entry '1' has a time out of range",
      replay = "cache entry '1' has a time out of range" },
    ["results_kernel_names.json"] = {}, -- kernel names broke the CSV header
    -- a name twice in an object, records that contradict each other
    -- (results_trust_spec.lua)
    ["results_two_parameters.json"] = {
      load = 'JSON: line 2, column 1: the member name "parameters" appears twice in an object' },
    ["results_two_values.json"] = {
      load = 'JSON: line 4, column 28: the member name "V" appears twice in an object' },
    ["results_journal_two_statuses.jsonl"] = {
      load = 'line 2: JSON: line 1, column 58: the member name "status" appears twice in an object' },
    ["results_t4_two_times.json"] = {
      load = 'JSON: line 5, column 99: the member name "runtimes" appears twice in an object' },
    ["results_cache_two_entries.json"] = {
      load = 'JSON: line 6, column 1: the member name "16" appears twice in an object' },
    ["results_index_contradicts.json"] = { load = "results 1 and 2 contradict each other: "
      .. "index 0 is configuration V=0 in one and V=2 in the other" },
    ["results_index_replaces_other.jsonl"] = { load = "lines 3 and 4 contradict each other: "
      .. "index 1 is configuration V=1 in one and V=2 in the other" },
    ["results_again_takes_index.jsonl"] = { load = "lines 3 and 4 contradict each other: "
      .. "configuration V=1 has index 1 in one and 2 in the other" },
    -- one configuration under two indices: kt.load took both, the replay one silently
    ["results_journal_two_indices.jsonl"] = { load = "lines 3 and 4 contradict each other: "
      .. "configuration V=1 has index 1 in one and 2 in the other" },
    ["results_two_indices.json"] = {}, -- a results file may: kept, and said (results_trust_spec.lua)
    -- numbers beyond the integers they become (UBSan): unknown, or refused
    ["results_ktt_huge_usage.json"] = {},
    ["results_ktt_ok_no_time.json"] = { load = "result 1: Ok but no TotalDuration" },
    ["results_launch_count_huge.jsonl"] = { load = "line 2: launched[1] is not a kernel's launch" },
    ["results_launch_kernel_fraction.jsonl"] = {
      load = "line 2: launched[1] is not a kernel's launch" },
    ["results_huge_checks.json"] = {},
    ["results_ktt_grid_overflow.json"] = {
      load = "result 1: ComputationResults[1]: its grid of blocks overflows a size" },
    -- timestamps that name no time, formatted from what gmtime_r left (ASan): unknown now
    -- (results_trust_spec.lua)
    ["results_t4_timestamps.json"] = {},
    -- metrics of +inf, -inf and NaN, which kt.load refused when written null (writers_spec.lua)
    ["results_metrics_nonfinite.json"] = {},
  }

  -- Kept cases that are no results files, read by the spec that owns their prefix.
  local elsewhere = {
    "^writers_", -- spec/writers_spec.lua
    "^db_",      -- the database fuzzer, below
    "^t1_",      -- spec/t1_hostile_spec.lua
    "^expr_",    -- spec/hostile_expr_spec.lua
    "^peer_",    -- spec/peer_expr_spec.lua
    "^python_",  -- the Python fuzzer, below
    "^names_",   -- spec/readers_names_spec.lua
    "^include_", -- spec/program_cache_includes_spec.lua
  }
  local function owned_elsewhere(name)
    for _, prefix in ipairs(elsewhere) do if name:match(prefix) then return true end end
    return false
  end

  it("reads every kept case that once broke a reader, as it should", function()
    local dir = "spec/fixtures/fuzz/"
    local listing = io.popen("ls " .. dir)
    for name in listing:lines() do
      if owned_elsewhere(name) then goto next end
      local want = assert(kept[name], name .. " is kept but not described")
      local path = dir .. name
      for _, what in ipairs({ "load", "replay" }) do
        local ok, err = pcall(kt[what], path)
        local expected = want[what] or (what == "replay" and want.load)
        if expected then assert.are.equal(path .. ": " .. expected, err) else assert.is_true(ok, err) end
      end
      check_load(path)
      check_replay(fuzz.rng(1, 1), path)
      ::next::
    end
    listing:close()
  end)

  it(("reads seeded documents, intact and damaged (seed %d, cases %d to %d)")
    :format(settings.seed, settings.first, settings.last), function()
    run_cases(settings.first, settings.last, parse_case)
  end)
end)

-- Expressions: what the parser accepts generates its space, or stops
-- with a message (a division by zero, say).
local function expression_case(tuner, n)
  local rng = fuzz.rng(settings.seed, n)
  local text = fuzz.mutate(rng, docs.expression(rng))
  fuzz.note(settings, "expression", n, ("-- %q"):format(text))
  local k = tuner:kernel{ source = "__kernel void k(__global float *a) {}", name = "k", global = 8 }
  k:param("A", { 1, 2, 3, 4 })
  k:param("B", { 0, 1, 2 })
  k:param("S", { "float", "x" })
  local ok, err = pcall(k.constraint, k, text, rng:chance(0.3) and { N = rng:pick({ 2, "x" }) } or nil)
  if not ok then
    assert.are.equal("string", type(err))
    return
  end
  local counted, count = pcall(function() return k:space():count() end)
  assert(counted or type(count) == "string", "counting raised " .. tostring(count))
  if counted then assert.is_true(count <= 24) end
end

describe("the expression fuzzer", function()
  it(("parses and evaluates seeded expressions (seed %d, cases %d to %d)")
    :format(settings.seed, settings.first, settings.last), function()
    local tuner = kt.tuner()
    run_cases(settings.first, settings.last, function(n) expression_case(tuner, n) end)
  end)
end)

-- Expressions of the Python subset, evaluated by ktlua and by Python 3
-- (spec/support/fuzz_python.lua; one python3 process for all the cases):
-- the same integer, the same float bit for bit, or an error of the same
-- class, where Python's integers leave 64 bits too. A case costs a tenth
-- of the parser's: 500 here (250 sanitized), KTLUA_FUZZ_CASES under make fuzz.
describe("the Python fuzzer", function()
  local py = require "spec.support.fuzz_python"
  local has_python = os.execute(py.python .. " -c 'import ast' 2>/dev/null")
  local last = (settings.only or settings.cases) and settings.last
    or settings.first + (sanitized and 250 or 500) - 1
  local KEPT = "spec/fixtures/fuzz/python_expr_cases.txt"

  it("gives what Python 3 gave for each kept case (" .. KEPT .. ")", function()
    local lines, recorded = {}, {}
    for l in io.lines(KEPT) do
      if not l:match("^#") then
        local case, result = l:match("^([^\t]*)\t(.*)$")
        lines[#lines + 1], recorded[#recorded + 1] = case, result
        local vars, text = py.parse_line(case)
        local why = py.compare(vars, text, result)
        assert(not why, case .. ": " .. tostring(why))
      end
    end
    assert.is_true(#lines >= 40)
    if has_python then -- and Python says it still
      assert.are.same(recorded, py.run_python(settings.dir, lines))
    end
  end)

  it(("evaluates seeded expressions as Python 3 does (seed %d, cases %d to %d)")
    :format(settings.seed, settings.first, last), function()
    if not has_python then
      return pending(py.python .. " is not installed: ktlua's expressions are not compared with Python's")
    end
    local cases, lines = {}, {}
    for n = settings.first, last do
      local vars, text = py.case(fuzz.rng(settings.seed, n))
      cases[#cases + 1], lines[#lines + 1] = { vars, text }, py.line(vars, text)
    end
    local results = py.run_python(settings.dir, lines)
    run_cases(settings.first, last, function(n)
      local i = n - settings.first + 1
      local vars, text = table.unpack(cases[i])
      fuzz.note(settings, "python", n, "-- " .. lines[i] .. "\n-- Python: " .. results[i])
      local why = py.compare(vars, text, results[i])
      assert(not why, ("case %d: %s\n  %s"):format(n, lines[i], tostring(why)))
    end)
  end)
end)

-- The API and online fuzzers' cases first .. last: each a world (its calls
-- logged in NAME.log) started, online too where opts say so, then steps
-- random calls.
local function run_worlds(name, last, steps, opts)
  run_cases(settings.first, last, function(n)
    local log = settings.dir .. "/" .. name .. ".log"
    fuzz.note(settings, name, n, "-- the calls: " .. log)
    os.remove(log)
    local w = api.world(fuzz.rng(settings.seed, n), kt.tuner, log, settings.dir, opts)
    w:start()
    if opts and opts.online then w:start_online() end
    for _ = 1, steps do w:step() end
    local bad = api.finish(w)
    assert(not bad, bad)
  end)
end

-- The API: a case is a sequence of random calls on one world.
describe("the API fuzzer", function()
  -- A case costs about what a hundred of the others do: a tenth as many
  -- under KTLUA_FUZZ_CASES (all of them when KTLUA_FUZZ_CASE names one).
  local count = api_cases
  if settings.only then count = 1
  elseif settings.cases then count = math.max(1, settings.cases // 10) end
  local last = settings.first + count - 1
  it(("survives seeded sequences of calls (seed %d, cases %d to %d)")
    :format(settings.seed, settings.first, last), function()
    run_worlds("api", last, 12)
  end)
end)

-- Online tuning: sequences of calls three in four of which are online
-- tunings' (tuner:online with options right and wrong, on:step, best,
-- results, done, stop, close, released by hand, from callbacks too), on the
-- world's own kernel mostly, whose steps' outputs are checked
-- (spec/support/fuzz_api.lua). A case costs about what one and a half of
-- the API fuzzer's do: a fifth as many of them here, a tenth of
-- KTLUA_FUZZ_CASES as the API fuzzer; FUZZ_ONLY=online make fuzz runs this
-- fuzzer alone.
describe("the online fuzzer", function()
  local count = api_cases // 5
  if settings.only then count = 1
  elseif settings.cases then count = math.max(1, settings.cases // 10) end
  local last = settings.first + count - 1
  it(("survives seeded sequences of online calls (seed %d, cases %d to %d)")
    :format(settings.seed, settings.first, last), function()
    run_worlds("online", last, 30, { online = true })
  end)
end)

-- The writers of names: the database's exports (C header, Lua, JSON) of
-- hostile names and values (spec/support/fuzz_writers.lua). The headers
-- are compiled together, a batch at a time; a case in eight goes through
-- a results file and a database first. A case costs about what three of
-- the parser's do: a third as many here, unless KTLUA_FUZZ_CASES or
-- KTLUA_FUZZ_CASE says which.
describe("the writers fuzzer", function()
  local writers = require "spec.support.fuzz_writers"
  local export = require "ktlua.db_export"
  local last = (settings.only or settings.cases) and settings.last
    or settings.first + (sanitized and 50 or 100) - 1
  it(("exports seeded hostile names as data (seed %d, cases %d to %d)")
    :format(settings.seed, settings.first, last), function()
    local batch = {}
    local function compile()
      local n, out = writers.compile(batch)
      batch = {}
      if n then
        error(("the header of case %d (KTLUA_FUZZ_CASE=%d) does not compile:\n%s"):format(n, n, out), 0)
      end
    end
    run_cases(settings.first, last, function(n)
      local rng = fuzz.rng(settings.seed, n)
      fuzz.note(settings, "writers", n, ("-- its header: %s/writers-%d.h"):format(settings.dir, n))
      local entries, texts
      if rng:chance(0.125) then
        entries, texts = writers.stored(rng, settings.dir)
      else
        entries = writers.entries(rng)
        texts = { header = export.header(entries, writers.name(rng)), lua = export.lua(entries),
                  json = export.json(entries) }
      end
      writers.check_lua(entries, texts.lua)
      writers.check_json(entries, texts.json)
      batch[#batch + 1] = writers.header_case(entries, settings.dir, n, texts.header)
      if #batch == 100 or n == last then compile() end
    end)
  end)
end)

-- The database (spec/support/fuzz_db.lua): hostile names and values stored
-- and read back; damaged database files refused or read, never changed.
describe("the database fuzzer", function()
  local fuzz_db = require "spec.support.fuzz_db"
  -- Its databases lie in memory where it can (each commit syncs a file on
  -- disk: 50 ms a case), the folder named in a failing case's note.
  local scratch = fuzz_db.scratch(settings.dir)
  teardown(function()
    if scratch ~= settings.dir and not settings.failed then os.execute("rm -rf '" .. scratch .. "'") end
  end)

  it("refuses, unchanged, each kept database that is not ktlua's (spec/fixtures/fuzz/db_*.sql)", function()
    local listing = io.popen("ls spec/fixtures/fuzz/db_*.sql")
    local n = 0
    for name in listing:lines() do
      local path = scratch .. "/kept.db"
      for _, suffix in ipairs({ "", "-wal", "-shm" }) do os.remove(path .. suffix) end
      assert(os.execute(("sqlite3 %s < %s > /dev/null"):format(path, name)))
      local before = read(path)
      local ok, db = pcall(kt.db, path)
      if name:find("db_v%d") then -- ktlua's own, of an earlier version (or rows changed: db_v4_bad_metrics)
        assert.is_true(ok, db)
        db:close()
      else
        assert.is_false(ok)
        assert.matches("is not a ktlua database %(.*%); it was left unchanged$", db)
        assert.are.equal(before, read(path))
      end
      n = n + 1
    end
    listing:close()
    assert.are.equal(8, n)
  end)

  it(("stores and reads back seeded hostile results (seed %d, cases %d to %d)")
    :format(settings.seed, settings.first, settings.last), function()
    run_cases(settings.first, settings.last, function(n)
      fuzz.note(settings, "db", n, "-- files: " .. scratch .. "/results.json, tuned.db")
      fuzz_db.store_case(fuzz.rng(settings.seed, n), scratch)
    end)
  end)

  it(("refuses or reads seeded damaged databases, leaving them as they were (seed %d, cases %d to %d)")
    :format(settings.seed, settings.first, settings.last), function()
    run_cases(settings.first, settings.last, function(n)
      fuzz_db.damage_case(fuzz.rng(settings.seed, n), scratch, function(what)
        fuzz.note(settings, "db_damage", n, "-- " .. what .. ": " .. scratch .. "/damaged.db")
      end)
    end)
  end)
end)
