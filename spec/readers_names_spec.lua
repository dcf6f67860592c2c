-- Names and values from files are data: a reader never cuts one at a NUL
-- byte (two names made one, a value made another) nor takes a size for
-- another, and what a message quotes shows whole, control bytes escaped.
-- The fixed hostile files are spec/fixtures/fuzz/names_*.
local kt = require "ktlua"
local shell = require "spec.support.shell"
local files = require "spec.support.files"
local fuzz = require "spec.support.fuzz"

local fixtures = "spec/fixtures/fuzz/"

local sh = shell.must

local function remove(path)
  for _, suffix in ipairs({ "", "-wal", "-shm" }) do os.remove(path .. suffix) end
end

-- Each of load and replay fails with the file's name and why.
local function refused(path, why)
  for _, what in ipairs({ "load", "replay" }) do
    local ok, err = pcall(kt[what], path)
    assert.is_false(ok, what .. " " .. path)
    assert.are.equal(path .. ": " .. why, err)
  end
end

describe("the results readers", function()
  -- What the cut names made of each file before: the result in the comment.
  local cases = {
    -- parameter V and "V\0W": "parameter 'V' is already defined"
    { "names_results_parameter_nul.json",
      'JSON: line 2, column 51: the string "V\\u0000W" holds a NUL byte' },
    -- the value "x\0y" read as "x", one of S's values
    { "names_results_value_nul.json",
      'JSON: line 3, column 26: the string "x\\u0000y" holds a NUL byte' },
    -- metrics gflops and "gflops\0x" made one
    { "names_results_metric_nul.json",
      'JSON: line 4, column 25: the member name "gflops\\u0000x" holds a NUL byte' },
    -- the kernel read as "count"
    { "names_journal_kernel_nul.jsonl",
      'line 1: JSON: line 1, column 65: the string "count\\u0000x" holds a NUL byte' },
    -- T4: A's values 1 and 2, configuration A = 1 ("A\0B" = 2 lost)
    { "names_t4_parameter_nul.json",
      'JSON: line 4, column 72: the member name "A\\u0000B" holds a NUL byte' },
    -- T4: measurements gflops and "gflops\0x" made one
    { "names_t4_metric_nul.json",
      'JSON: line 4, column 253: the string "gflops\\u0000x" holds a NUL byte' },
    -- KTT: parameters "A\0x" = 2 and A = 3 read as one parameter A
    { "names_ktt_parameter_nul.json",
      'JSON: line 3, column 26: the string "A\\u0000x" holds a NUL byte' },
    -- Kernel Tuner cache: "parameter 'A' is already defined"
    { "names_cache_parameter_nul.json",
      'JSON: line 2, column 21: the string "A\\u0000x" holds a NUL byte' },
    -- a global size of -5 read as 2^64 - 5
    { "names_csv_negative_size.csv",
      'line 2: column 6: the global size "-5" is no size (1 to 3 whole numbers from 1, joined '
        .. "by x)" },
  }

  for _, case in ipairs(cases) do
    it("refuses " .. case[1] .. ", saying where and what", function()
      refused(fixtures .. case[1], case[2])
    end)
  end

  it("refuses a results file's name or string holding a NUL byte wherever it stands", function()
    -- every string of a results file, each in turn, given a NUL byte
    local doc = { format = "ktlua-results", version = 1, task = "t", device = "d",
      searcher = "random", kernels = { "k" }, backend = "opencl", source = "s", options = "",
      driver = "3", objective = "kernel",
      parameters = { { name = "S", values = { "x", "y" } } },
      results = { { index = 0, config = { S = "x" }, status = "ok", time_ms = 0.5, error = "e",
        metrics = { gflops = 1 } } } }
    local text = fuzz.json(doc)
    local path = files.tmpname(".json")
    local n = 0
    for at in text:gmatch('()"') do
      -- after each opening or closing quote: strings, member names and the empty one
      local hostile = text:sub(1, at) .. "\\u0000" .. text:sub(at + 1)
      if pcall(kt.json.decode, hostile) then
        files.write(path, hostile)
        local ok, err = pcall(kt.load, path)
        assert.is_false(ok, hostile)
        assert.matches("holds a NUL byte$", err)
        n = n + 1
      end
    end
    os.remove(path)
    assert.is_true(n > 30, n)
  end)

  it("reads a CSV size as whole numbers from 1: no sign, space, 0, nor beyond int64", function()
    local head = "index,V,status,time_ms,samples,global,local,build_ms,data_ms,validation_ms,"
      .. "launcher_ms,wait_ms,searcher_ms,framework_ms,total_ms,error\n"
    local why = "%s: line 2: column %d: the %s size %q is no size (1 to 3 whole numbers from 1, "
      .. "joined by x)"
    local path = files.tmpname(".csv")
    local function read(global, localsize)
      local row = ("0,0,ok,0.25,1,%s,%s,0,0,0,0,0,0,0,0.25,\n"):format(global, localsize)
      files.write(path, head .. row)
      return pcall(kt.load, path)
    end
    for _, bad in ipairs({ "-5", "+5", " 5", "0", "8x0", "8x", "x8", "8xx2", "1x2x3x4", "0x10",
      "8 ", "9223372036854775808", "18446744073709551621", "99999999999999999999999" }) do
      local ok, err = read(bad, 8)
      assert.is_false(ok, bad)
      assert.are.equal(why:format(path, 6, "global", bad), err)
      ok, err = read(8, bad)
      assert.is_false(ok, bad)
      assert.are.equal(why:format(path, 7, "local", bad), err)
    end
    local ok, r = read("9223372036854775807x2x3", "8x1x1")
    assert.is_true(ok, r)
    assert.are.same({ 9223372036854775807, 2, 3 }, r[1].global)
    assert.are.same({ 8, 1, 1 }, r[1].group)
    os.remove(path)
  end)
end)

-- A database of one kernel on one device, its sizes then set by the sqlite3
-- shell: sizes[i] is the JSON text of the i-th configuration's size.
local function database(sizes)
  local path = files.tmpname(".db")
  local db = kt.db(path)
  local doc = { format = "ktlua-results", version = 1, task = "dbl", device = "dev",
    searcher = "random", kernels = { "dbl" }, backend = "opencl", source = "s", options = "",
    driver = "3", objective = "kernel",
    parameters = { { name = "X", values = { 1 } } },
    results = { { index = 0, config = { X = 1 }, status = "ok", time_ms = 0.5 } } }
  local file = files.tmpname(".json")
  files.write(file, fuzz.json(doc))
  for i = 1, #sizes do db:store(kt.load(file), { size = { n = i } }) end
  db:close()
  os.remove(file)
  for i, size in ipairs(sizes) do
    local sql = "UPDATE tuned SET size = '%s', config = '{\"X\":%d}' WHERE size = '{\"n\":%d}'"
    sh(("sqlite3 %s %q"):format(path, sql:format(size, i, i)))
  end
  return path
end

describe("kt.db", function()
  it("keeps a stored size name whole, NUL byte and all, apart from the one before", function()
    -- before, "n\0x" was n: list gave {n = 64}, best an exact match of the wrong row
    local path = database({ '{"n\\u0000x":64}', '{"n":128}' })
    local db = kt.db(path)
    local list = db:list()
    assert.are.same({ { n = 128 }, { ["n\0x"] = 64 } }, { list[1].size, list[2].size })
    local e = db:best{ kernel = "dbl", device = "dev", size = { n = 64 } }
    assert.are.same({ "nearest", 1, { n = 128 } }, { e.match, e.distance, e.size })
    db:close()
    remove(path)
  end)

  it("says which row of which file holds a size it cannot read, in best as in list", function()
    -- before, best left such a row out: a nearer size could be there
    for _, case in ipairs({
      { '{"n":4,"q"x":2}', 'no JSON object: JSON: line 1, column 11: expected \':\' after a member '
        .. 'name: "{\\"n\\":4,\\"q\\"x\\":2}"' },
      { '[64]', 'no JSON object: not an object: "[64]"' },
      { '{"n":-1}', 'no size (an object of positive numbers): "{\\"n\\":-1}"' },
      { '{"n":"x"}', 'no size (an object of positive numbers): "{\\"n\\":\\"x\\"}"' },
    }) do
      local path = database({ '{"n":64}', case[1] })
      local db = kt.db(path)
      local ok, err = pcall(db.best, db, { kernel = "dbl", device = "dev", size = { n = 64 } })
      assert.is_false(ok, case[1])
      assert.are.equal(path .. ": the size stored for dbl on dev (rank 1) is " .. case[2], err)
      if case[2]:find("^no JSON") then
        ok, err = pcall(db.list, db)
        assert.is_false(ok)
        assert.are.equal(path .. ": the size stored for dbl on dev (rank 1) is " .. case[2], err)
      end
      db:close()
      remove(path)
    end
  end)
end)

describe("kt.db's text columns", function()
  it("hold no NUL byte: list and best say which row, which column and the whole text", function()
    -- before, a kernel "dbl\0x" was listed as dbl
    local stored = { kernel = "dbl", backend = "opencl", source = "s", config = '{\\"X\\":1}' }
    for _, col in ipairs({ "kernel", "backend", "source", "config" }) do
      local path = database({ '{"n":64}' })
      local sql = ("UPDATE tuned SET %s = %s || char(0) || 'x'"):format(col, col)
      sh(("sqlite3 %s %q"):format(path, sql))
      local db = kt.db(path)
      local ok, err = pcall(db.list, db)
      assert.is_false(ok)
      assert.are.equal(('%s: the %s stored for dbl on dev (rank 1) holds a NUL byte: "%s\\u0000x"')
        :format(path, col, stored[col]), err)
      if col ~= "kernel" then
        ok, err = pcall(db.best, db, { kernel = "dbl", device = "dev", size = { n = 64 } })
        assert.is_false(ok)
        assert.matches("holds a NUL byte", err)
      end
      db:close()
      remove(path)
    end
  end)
end)

describe("a message that quotes a value or a name", function()
  local tuner = kt.tuner()
  local src = "__kernel void k(__global float *a) { a[get_global_id(0)] = 0; }"
  local function kernel() return tuner:kernel{ source = src, name = "k", global = 64 } end

  it("shows the whole of it, NUL and control bytes escaped", function()
    local k = kernel()
    k:param("S", { "x", "y" })
    k:param("N", { 1, 2 })
    local s = k:space()
    local none, why = s:index{ S = "x\0y", N = 1 }
    assert.is_nil(none)
    assert.are.equal('S = "x\\u0000y" is not one of its values ("x", "y")', why)
    none, why = s:index{ S = "x\n\27[2J\\\"", N = 1 }
    assert.is_nil(none)
    assert.are.equal('S = "x\\n\\u001b[2J\\\\\\"" is not one of its values ("x", "y")', why)
    none, why = s:index{ S = "x", N = 3 }
    assert.are.equal("N = 3 is not one of its values (1, 2)", why)
  end)

  it("shows a string value quoted, control bytes escaped, in the core's messages too", function()
    local k = kernel()
    assert.has_error(function() k:param("S", { "a\27[2J", "a\27[2J" }) end,
      'parameter \'S\' lists the value "a\\u001b[2J" twice')
    local path = files.tmpname(".json")
    files.write(path, '{"format":"ktlua-results","version":1,"task":"t","kernels":["t"],'
      .. '"parameters":[{"name":"S","values":["a\\u001b[2J\\n","b"]}],"results":['
      .. '{"index":0,"config":{"S":"a\\u001b[2J\\n"},"status":"ok","time_ms":1},'
      .. '{"index":0,"config":{"S":"b"},"status":"ok","time_ms":2}]}')
    local ok, err = pcall(kt.load, path)
    assert.is_false(ok)
    assert.are.equal(path .. ': results 1 and 2 contradict each other: index 0 is configuration '
      .. 'S="a\\u001b[2J\\n" in one and S="b" in the other', err)
    os.remove(path)
  end)

  it("takes no name holding a NUL byte for the name before it", function()
    -- before, "S\0z" was S: the configuration was the space's first
    local k = kernel()
    k:param("S", { "x", "y" })
    local s = k:space()
    assert.has_error(function() s:index{ S = "x", ["S\0z"] = 1 } end,
      'configuration names unknown parameter "S\\u0000z"')
    -- before, a struct's field "id\0x" set id
    local a = kt.array(kt.struct("pt", { { "id", "int" } }), 1)
    assert.has_error(function() a[0] = { ["id\0x"] = 5 } end, 'struct pt has no field "id\\u0000x"')
    assert.are.same({ id = 0 }, a[0])
    -- before, a constraint reading p["S\0z"] read S
    k = kernel()
    k:param("S", { "x", "y" })
    local ok, err = pcall(k.constraint, k, function(p) return p["S\0z"] == "x" end)
    assert.is_false(ok)
    assert.matches('the constraint reads p%["S\\u0000z"%]: there is no parameter of that name', err)
  end)
end)
