-- ktlua db recheck (issue 42): the regression watch from the command line,
-- over the entries `ktlua run --db` stored. Each entry is said (rechecked,
-- or why not: tuned by a script, its kernel not to be made again), and the
-- exit status tells CI what happened: 0 nothing regressed, 2 an entry is
-- slower or invalid, 3 nothing in the database is of the device, 4 an
-- entry's kernel could not be made again and none regressed. Slower and
-- faster are made sure of by the stored time (a millionth of a nanosecond,
-- a thousand seconds), never by a timing.
local kt = require "ktlua"
local shell = require "spec.support.shell"
local files = require "spec.support.files"
local sqlite_files = require "spec.support.sqlite_files"

local sqlite, remove = sqlite_files.sqlite, sqlite_files.remove
local T1 = "spec/fixtures/t1/vadd_T1.json" -- saxpy, {x = 4096}
local ktlua = shell.ktlua

local function tuned()
  local path = files.tmpname(".db")
  shell.must(("%s run %s --db=%s --count=2 > /dev/null"):format(ktlua, T1, path))
  return path
end

local function recheck(path, opts)
  return shell.run(("%s db recheck %s %s"):format(ktlua, path, opts or ""))
end

local function quote(s) return (s:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0")) end

describe("ktlua db recheck", function()
  local device = kt.tuner().device
  local who = quote(("saxpy on %s (%s) {x=4096}"):format(device.name, device.backend))

  it("says each entry, rechecks what `ktlua run --db` tuned, and leaves what scripts tuned, naming them",
     function()
    local path = tuned()
    local db = kt.db(path)
    local e = db:list()[1]
    assert.matches("^t1:/.*spec/fixtures/t1/vadd_T1%.json$", e.origin)
    assert.are.same({ x = 4096 }, e.size)
    local tuner = kt.tuner()
    local a, c = kt.array("float", 64):fill(1), kt.array("float", 64)
    local k = tuner:kernel{ name = "scale", global = 64, group = 1, args = { a:input(), c:output() },
      source = "__kernel void scale(__global const float *a, __global float *c) "
        .. "{ int i = get_global_id(0); c[i] = 3.0f * a[i]; }" }
    k:param("WG", { 8, 16 }, { group_x = "mul" })
    tuner:tune(k, { db = db, size = { n = 64 }, progress = false })
    db:close()
    local out, code = recheck(path)
    assert.are.equal(0, code)
    assert.matches("\n?" .. who .. ": not rechecked %(was [%d.e%-]+ ms; nothing changed%)\n", out)
    assert.matches(quote(("scale on %s (%s) {n=64}: not rechecked: tuned by a script, it does not say what "
      .. "re-runs it\n"):format(device.name, device.backend)), out)
    assert.matches("1 stored best was not rechecked: tuned by scripts", out)
    out, code = recheck(path, "--all --noise=9")
    assert.are.equal(0, code)
    assert.matches(who .. ": %a+ %([%d.e%-]+ ms, was [%d.e%-]+ ms; nothing changed%)\n", out)
    -- a run that transfers from it tries the stored best first
    local results = files.tmpname(".json")
    shell.must(("%s run %s --transfer=%s --count=1 --output=%s > /dev/null"):format(ktlua, T1, path, results))
    assert.are.same(e.config, kt.load(results):list()[1].config)
    os.remove(results)
    remove(path)
  end)

  it("exits with 2 where an entry became slower or invalid, 0 where it is faster (and keeps the new time)",
     function()
    local path = tuned()
    sqlite(path, "UPDATE tuned SET time_ms = 1e-9 WHERE rank = 1")
    local out, code = recheck(path, "--all")
    assert.are.equal(2, code)
    assert.matches(who .. ": slower %([%d.e%-]+ ms, was 1e%-09 ms; nothing changed%)\n", out)
    assert.matches("ktlua db recheck: 1 stored best regressed %(slower or invalid%)\n", out)
    -- a stored best the space no longer holds (32 <= WG * VEC <= 256 rules WG = 64, VEC = 8 out)
    sqlite(path, "UPDATE tuned SET config = '{\"WG\":64,\"VEC\":8}' WHERE rank = 1")
    out, code = recheck(path, "--all")
    assert.are.equal(2, code)
    assert.matches(who .. ": invalid %(was 1e%-09 ms; nothing changed%): not in the space", out)
    sqlite(path, "UPDATE tuned SET config = '{\"WG\":64,\"VEC\":1}', time_ms = 1e6 WHERE rank = 1")
    out, code = recheck(path, "--all")
    assert.are.equal(0, code)
    assert.matches(who .. ": faster %([%d.e%-]+ ms, was 1e%+06 ms; nothing changed%)\n", out)
    local e = kt.db(path, { readonly = true }):list{ kernel = "saxpy" }[1]
    assert.is_true(e.time_ms < 1e6) -- measured again, and kept
    remove(path)
  end)

  it("rechecks what a driver upgrade changed, and marks it measured again", function()
    local path = tuned()
    sqlite(path, "UPDATE tuned SET driver = '0.0-old', time_ms = 1e6")
    local db = kt.db(path)
    assert.matches("was tuned with the driver 0%.0%-old",
      select(2, db:best{ kernel = "saxpy", device = kt.tuner(), size = { x = 4096 } }))
    db:close()
    local out, code = recheck(path)
    assert.are.equal(0, code)
    assert.matches(who .. quote(": faster (") .. "[%d.e%-]+" .. quote((" ms, was 1e+06 ms; driver 0.0-old -> %s)\n")
      :format(device.driver_version)), out)
    db = kt.db(path)
    assert.is_false(db:best{ kernel = "saxpy", device = kt.tuner(), size = { x = 4096 } }.stale)
    db:close()
    out, code = recheck(path)
    assert.are.equal(0, code)
    assert.matches(who .. ": not rechecked", out)
    remove(path)
  end)

  it("exits with 3 where nothing in the database is of the device, saying so", function()
    local path = tuned()
    sqlite(path, "UPDATE tuned SET device = 'NVIDIA H100 80GB HBM3', backend = 'cuda'")
    local out, code = recheck(path, "--all --device=" .. device.id)
    assert.are.equal(3, code)
    assert.are.equal(("ktlua db recheck: nothing to recheck: %s holds no stored best of %s (%s) that a T1 "
      .. "file re-runs\n"):format(path, device.name, device.backend), out)
    remove(path)
    path = files.tmpname(".db")
    kt.db(path):close()
    out, code = recheck(path)
    assert.are.equal(3, code)
    assert.matches("nothing to recheck: .* holds no stored best of the devices of its T1 files", out)
    remove(path)
  end)

  it("names each entry whose kernel cannot be made again and exits with 4, 2 if another regressed", function()
    local path = tuned()
    sqlite(path, "UPDATE tuned SET origin = 't1:/nonexistent/gone_T1.json'")
    local out, code = recheck(path)
    assert.are.equal(4, code)
    assert.matches(who .. ": not rechecked: its kernel could not be made again from "
      .. "/nonexistent/gone_T1%.json: .*No such file", out)
    assert.matches("ktlua db recheck: 1 stored best could not be rechecked: its kernel could not be made "
      .. "again %(above%)\n", out)
    -- with another, slower, entry: the regression is what the status says
    sqlite(path, "UPDATE tuned SET kernel = 'saxpy_old'")
    shell.must(("%s run %s --db=%s --count=2 > /dev/null"):format(ktlua, T1, path))
    sqlite(path, "UPDATE tuned SET time_ms = 1e-9 WHERE origin LIKE '%vadd_T1.json'")
    out, code = recheck(path, "--all")
    assert.are.equal(2, code)
    assert.matches("saxpy_old on .*: not rechecked: its kernel could not be made again from "
      .. "/nonexistent/gone_T1%.json", out)
    remove(path)
  end)

  it("refuses what it cannot do, with status 1, naming the argument", function()
    local out, code = recheck("", "")
    assert.are.equal(1, code)
    assert.matches("ktlua db recheck: no database given", out)
    out, code = recheck("/nonexistent/x.db")
    assert.are.equal(1, code)
    assert.matches("ktlua db recheck: /nonexistent/x%.db does not exist", out)
    out, code = recheck("/nonexistent/x.db", "--devices=1")
    assert.are.equal(1, code)
    assert.matches("unexpected argument '%-%-devices=1'", out)
    out = shell.must(ktlua .. " db recheck --help")
    assert.matches("Exit status: 0 nothing regressed; 2 an entry is slower or invalid; 3 nothing", out)
  end)
end)

describe("db:recheck", function()
  it("says why where nothing of the kernel is stored for the device", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    local tuner = kt.tuner()
    local k = tuner:kernel{ name = "nothing", source = "__kernel void nothing(void) {}", global = 1 }
    local report, why = db:recheck{ kernel = k, tuner = tuner }
    assert.are.same({}, report)
    assert.are.equal(("nothing to recheck: no stored best of nothing on %s (%s)"):format(tuner.device.name,
      tuner.device.backend), why)
    report, why = db:recheck{ kernel = k, tuner = tuner, size = { n = 4 } }
    assert.matches(" of size {n=4}$", why)
    db:close()
    remove(path)
  end)
end)
