-- What kt.db trusts: which files are its databases (others are refused,
-- unchanged), reading where nothing can be written, and names that are
-- data (a size name with a quote). The files of spec/fixtures/fuzz/db_*.sql
-- are made into databases by the sqlite3 shell.
local kt = require "ktlua"
local shell = require "spec.support.shell"
local files = require "spec.support.files"
local fuzz = require "spec.support.fuzz"


local sh = shell.must

local sqlite_files = require "spec.support.sqlite_files"
local from_sql, sqlite, remove = sqlite_files.from_sql, sqlite_files.sqlite, sqlite_files.remove

-- A results file of a tuning (without a device): its configurations ok,
-- the first the fastest.
local function results_file(task, configs)
  local doc = { format = "ktlua-results", version = 1, task = task, device = "dev",
    searcher = "random", kernels = { task }, backend = "opencl", source = "fnv1a-1", options = "",
    driver = "3.1", objective = "kernel", parameters = {}, results = {} }
  local values = {}
  for i, c in ipairs(configs) do
    doc.results[i] = { index = i - 1, config = c, status = "ok", time_ms = i / 4 }
    for name, v in pairs(c) do
      values[name] = values[name] or {}
      table.insert(values[name], v)
    end
  end
  for name, v in pairs(values) do table.insert(doc.parameters, { name = name, values = v }) end
  table.sort(doc.parameters, function(a, b) return a.name < b.name end)
  local path = files.tmpname(".json")
  files.write(path, fuzz.json(doc))
  return path
end

local function results(task, configs)
  local path = results_file(task, configs)
  local r = kt.load(path)
  os.remove(path)
  return r
end

describe("kt.db on a file that is not ktlua's", function()
  local cases = {
    { "db_foreign_tuned.sql", "its table 'tuned' has the columns (name TEXT key 1, setting TEXT, "
      .. "value REAL), not ktlua's" },
    { "db_foreign_app.sql", "its SQLite application_id is 0x47504b47, ktlua's 0x6b746c75" },
    { "db_extra_trigger.sql", "it has the trigger 'stored', which ktlua's have not" },
  }
  for _, case in ipairs(cases) do
    it("refuses " .. case[1] .. " before writing anything to it", function()
      local path = from_sql(case[1])
      local before = files.read(path)
      for _, options in ipairs({ {}, { readonly = true } }) do
        local ok, err = pcall(kt.db, path, options)
        assert.is_false(ok)
        assert.are.equal(("%s is not a ktlua database (%s); it was left unchanged"):format(path, case[2]), err)
        assert.are.equal(before, files.read(path))
      end
      remove(path)
    end)
  end

  it("refuses tables, indexes and versions of another program added to a ktlua database", function()
    local path = files.tmpname(".db")
    kt.db(path):close()
    local changes = {
      { "CREATE TABLE notes (x)", "it has the table 'notes', which ktlua's have not" },
      { "CREATE INDEX by_date ON tuned (date)", "it has the index 'by_date', which ktlua's have not" },
      { "ALTER TABLE probes ADD COLUMN extra TEXT", "its table 'probes' has the columns (device TEXT "
        .. "NOT NULL key 1, backend TEXT NOT NULL key 2, driver TEXT NOT NULL, version TEXT NOT NULL, "
        .. "date TEXT NOT NULL, notes TEXT, extra TEXT), not ktlua's" },
      { "DROP TABLE probe_rows", "it has no table 'probe_rows'" },
      { "PRAGMA user_version = 2", "user_version 2, which ktlua never wrote under its application_id" },
      { "PRAGMA application_id = 0", "user_version 5, which ktlua never wrote without its application_id" },
      { "DROP TABLE devices", "it has no table 'devices'" },
      { "DROP TABLE tuned_metrics", "it has no table 'tuned_metrics'" },
    }
    local pristine = files.read(path)
    for _, change in ipairs(changes) do
      files.write(path, pristine)
      sqlite(path, change[1])
      local before = files.read(path)
      local ok, err = pcall(kt.db, path)
      assert.is_false(ok)
      assert.are.equal(("%s is not a ktlua database (%s); it was left unchanged"):format(path, change[2]),
        err)
      assert.are.equal(before, files.read(path))
    end
    files.write(path, pristine)
    sqlite(path, "PRAGMA user_version = 6")
    local ok, err = pcall(kt.db, path)
    assert.is_false(ok)
    assert.are.equal(path .. " was written by a newer ktlua (database version 6; this one reads 5)", err)
    remove(path)
  end)

  it("sets up a new or empty file as ktlua's, with its application_id and version", function()
    local new, empty = files.tmpname(".db"), files.tmpname(".db")
    files.write(empty, "")
    for _, path in ipairs({ new, empty }) do
      kt.db(path):close()
      assert.are.equal("1802792053\n5\nwal\ndevices\nprobe_rows\nprobes\ntuned\ntuned_metrics\n", sqlite(path,
        "PRAGMA application_id; PRAGMA user_version; PRAGMA journal_mode; "
        .. "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"))
      remove(path)
    end
  end)

  it("opens a database of ktlua's first versions (1 and 2), bringing it up to date", function()
    local path = from_sql("db_v1.sql")
    local before = files.read(path)
    local db = kt.db(path, { readonly = true }) -- read as it is
    assert.are.equal(1, #db:list())
    assert.are.same({ nil, "no probe of gpu (opencl) in " .. path }, { db:probe("gpu", "opencl") })
    db:close()
    assert.are.equal(before, files.read(path))
    db = kt.db(path)
    local e = db:best{ kernel = "dbl", device = "dev", size = { n = 1024 } }
    assert.are.same({ "exact", { WG = 16, TAG = "a" }, 0.25 }, { e.match, e.config, e.time_ms })
    db:close()
    assert.are.equal("1802792053\n5\ndevices\nprobe_rows\nprobes\ntuned\ntuned_metrics\n", sqlite(path, "PRAGMA application_id; "
      .. "PRAGMA user_version; SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"))
    remove(path)
    path = from_sql("db_v2_quote_size.sql")
    kt.db(path):close()
    assert.are.equal("1802792053\n5\n", sqlite(path, "PRAGMA application_id; PRAGMA user_version"))
    remove(path)
  end)
end)

-- Runs a command without the rights that let root write where its mode
-- says nobody may (the suite may run as root).
local function unprivileged(cmd)
  if sh("id -u") ~= "0\n" then return cmd end
  return ("capsh --drop=cap_dac_override,cap_dac_read_search,cap_fowner -- -c '%s'"):format(cmd)
end

describe("kt.db where nothing can be written", function()
  local dir, path, script, result
  before_each(function()
    dir = files.tmpname()
    path = dir .. "/tuned.db"
    sh("mkdir " .. dir)
    local db = kt.db(path)
    db:store(results("dbl", { { WG = 8 }, { WG = 16 } }), { size = { n = 256 } })
    db:close()
    script = files.tmpname(".lua")
    result = results_file("dbl", { { WG = 4 } })
    files.write(script, ([[
local kt = require "ktlua"
local db = kt.db(%q, arg[1] == "ro" and { readonly = true } or nil)
print(tostring(db))
local e = db:best{ kernel = "dbl", device = "dev", size = { n = 300 } }
print(#db:list(), e.match, e.config.WG, #db:export("lua") > 0)
print(select(2, pcall(db.store, db, kt.load(%q), { size = { n = 1 } })))
]]):format(path, result))
  end)
  after_each(function()
    sh("chmod -R u+w " .. dir)
    sh("rm -rf " .. dir)
    os.remove(script)
    os.remove(result)
  end)

  -- (A file that cannot be written, in a folder that can, gets the -wal and
  -- -shm files of any reader beside it.)
  local function reads(why, option, beside)
    local before = files.read(path)
    local out = sh(unprivileged(("%s %s %s"):format(shell.ktlua, script, option or "")))
    assert.are.equal(("tuned-configuration database %s (read-only: %s)\n2\tnearest\t8\ttrue\n"
      .. "%s: storing: it was opened read-only (%s)\n"):format(path, why, path, why), out)
    assert.are.equal(before, files.read(path))
    assert.are.equal(beside or "tuned.db\n", sh("ls " .. dir))
  end

  it("reads a database in a folder that cannot be written, and says why it cannot store", function()
    sh("chmod 555 " .. dir)
    reads("the file or its folder is not writable")
    reads("as asked", "ro")
    local out = sh(unprivileged(("%s db export --format=lua %s"):format(shell.ktlua, path)))
    assert.are.equal(2, #assert(load(out))())
  end)

  it("reads a database file that cannot be written", function()
    sh("chmod 444 " .. path)
    reads("the file is not writable", nil, "tuned.db\ntuned.db-shm\ntuned.db-wal\n")
  end)

  it("makes no file when asked to read one that is missing", function()
    local ok, err = pcall(kt.db, dir .. "/missing.db", { readonly = true })
    assert.is_false(ok)
    assert.are.equal(("cannot open the database %s/missing.db: unable to open database file "
      .. "(No such file or directory)"):format(dir), err)
    assert.are.equal("tuned.db\n", sh("ls " .. dir))
  end)

  it("says so where the write-ahead log holds changes it cannot read without writing", function()
    sh(("sqlite3 %s '.dbconfig no_ckpt_on_close on' 'DELETE FROM tuned WHERE rank = 2'"):format(path))
    assert.is_true(files.exists(path .. "-wal"))
    os.remove(path .. "-shm")
    sh("chmod 555 " .. dir)
    local out = shell.run(unprivileged(("%s %s"):format(shell.ktlua, script)))
    assert.matches(("%s: its write%%-ahead log %s%%-wal holds changes not yet in the file, and reading "
      .. "them needs a folder that can be written"):format(path, path):gsub("%.", "%%."), out)
  end)
end)

describe("kt.db names", function()
  it("stores a size whose names hold quotes and backslashes as JSON, and finds it again", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    local size = { ['a"b'] = 4, ["c\\d"] = 1 / 3, ["line\nbreak"] = 2 ^ 60, e = math.maxinteger }
    db:store(results("dbl", { { WG = 8 }, { WG = 16 } }), { size = size })
    local list = db:list()
    assert.are.equal(2, #list)
    assert.are.same(size, list[1].size)
    assert.are.equal(math.maxinteger, list[1].size.e)
    local e = db:best{ kernel = "dbl", device = "dev", size = size }
    assert.are.same({ "exact", 8 }, { e.match, e.config.WG })
    db:close()
    assert.are.equal('{"a\\"b":4,"c\\\\d":0.3333333333333333,"e":9223372036854775807,'
      .. '"line\\nbreak":1.152921504606847e+18}\n', sqlite(path, "SELECT DISTINCT size FROM tuned"))
    remove(path)
  end)

  it("refuses a name with a NUL byte, which would be stored cut short", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    local r = results("dbl", { { WG = 8 } })
    assert.has_error(function() db:store(r, { size = { ["n\0m"] = 4 } }) end,
      "db:store: size: a name holds a NUL byte (after 'n')")
    assert.has_error(function() db:list{ kernel = "dbl\0x" } end,
      "db options.kernel: a name holds a NUL byte (after 'dbl')")
    assert.has_error(function() db:best{ kernel = "dbl", device = "dev", objective = "t\0", size = { n = 1 } } end,
      "db options.objective: a name holds a NUL byte (after 't')")
    assert.are.same({}, db:list())
    db:close()
    remove(path)
  end)

  it("gives configurations back with their booleans and strings", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    db:store(results("dbl", { { FAST = true, TAG = 'q"\\' }, { FAST = false, TAG = "x" } }), { size = { n = 1 } })
    local list = db:list()
    assert.are.same({ { FAST = true, TAG = 'q"\\' }, { FAST = false, TAG = "x" } }, { list[1].config, list[2].config })
    db:close()
    remove(path)
  end)

  it("says which row of which file holds a size an older ktlua stored as invalid JSON (list, best)", function()
    local path = from_sql("db_v2_quote_size.sql")
    local db = kt.db(path)
    local ok, err = pcall(db.list, db)
    assert.is_false(ok)
    local why = path .. ": the size stored for dbl on dev (rank 1) is no JSON object: JSON: line 1, "
      .. "column 11: expected ':' after a member name: \"{\\\"n\\\":4,\\\"q\\\"x\\\":2}\""
    assert.are.equal(why, err)
    -- best as list: the row it cannot read could hold the nearest size
    ok, err = pcall(db.best, db, { kernel = "dbl", device = "dev", size = { n = 64 } })
    assert.is_false(ok)
    assert.are.equal(why, err)
    db:close()
    remove(path)
  end)
end)
