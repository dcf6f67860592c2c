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

-- A stored best that now computes a wrong output (the kernel's source, a
-- header it includes or its compiler options changed since it was tuned) is
-- invalid where the kernel has a reference, with the validation's own reason,
-- and the command exits with 2. The T1 files are copies in a folder of their
-- own, changed as a library's kernel would be.
describe("ktlua db recheck of a stored best whose output is now wrong", function()
  local device = kt.tuner().device
  local who = quote(("saxpy on %s (%s) {x=4096}"):format(device.name, device.backend))
  local FIXTURES = "spec/fixtures/t1/"
  local SUM = "y[i + v] = a * x[i + v] + y[i + v];"

  -- A folder with the T1 file (its options those given), vadd.cl (through
  -- fix, a function of its text) and the expected output.
  local function folder(options, fix)
    local dir = files.tmpname("")
    shell.must("mkdir " .. dir)
    local t1 = files.read(FIXTURES .. "vadd_T1.json")
    if options then t1 = t1:gsub('"CompilerOptions": %b[]', '"CompilerOptions": ' .. options) end
    files.write(dir .. "/vadd_T1.json", t1)
    files.write(dir .. "/vadd.cl", ((fix or function(s) return s end)(files.read(FIXTURES .. "vadd.cl"))))
    files.write(dir .. "/vadd_expected.bin", files.read(FIXTURES .. "vadd_expected.bin"))
    return dir
  end

  local function tune(dir)
    local path = dir .. "/tuned.db"
    shell.must(("%s run %s/vadd_T1.json --db=%s --count=2 > /dev/null"):format(ktlua, dir, path))
    local db = kt.db(path, { readonly = true })
    local e = db:list{ kernel = "saxpy" }[1]
    db:close()
    return path, e
  end

  local function set_source(dir, text)
    files.write(dir .. "/vadd.cl", (files.read(FIXTURES .. "vadd.cl"):gsub(quote(SUM), (text:gsub("%%", "%%%%")))))
  end

  -- The last element made wrong: 4095 % 7 == 0, so y is 2 * 0 + 1 there.
  local WRONG_LAST = "y[i + v] = a * x[i + v] + y[i + v] + (i + v == 4095 ? 1.0f : 0.0f);"
  local WHY_LAST = "invalid_output: element 4095: got 2, expected 1 (absolute difference 1 > tolerance 0.0001); "
    .. "1 of 4096 elements differ"

  it("rechecks an entry whose source changed, without --all, and says it invalid with the element, got and "
    .. "expected; exit 2", function()
    local dir = folder('["-cl-fast-relaxed-math"]')
    local path, e = tune(dir)
    assert.matches("^fnv1a%-%x+$", e.source)
    set_source(dir, WRONG_LAST)
    local out, code = recheck(path)
    assert.are.equal(2, code)
    local line = out:match(who .. ": invalid [^\n]*\n")
    assert.is_truthy(line, out)
    local new = line:match("; source " .. quote(e.source) .. " %-> (fnv1a%-%x+)%): ")
    assert.is_truthy(new, line)
    assert.are_not.equal(e.source, new)
    assert.are.equal(("%s on %s (%s) {x=4096}: invalid (was %.4g ms; source %s -> %s): %s\n")
      :format("saxpy", device.name, device.backend, e.time_ms, e.source, new, WHY_LAST), line)
    assert.matches("ktlua db recheck: 1 stored best regressed %(slower or invalid%)\n", out)
    -- nothing was stored over it: the old time and source stay, and db:best still says it stale
    local db = kt.db(path, { readonly = true })
    local now = db:list{ kernel = "saxpy" }[1]
    assert.are.same({ e.time_ms, e.source, e.driver, e.date }, { now.time_ms, now.source, now.driver, now.date })
    db:close()
    -- the source back as it was: nothing changed, nothing rechecked
    set_source(dir, SUM)
    out, code = recheck(path)
    assert.are.equal(0, code)
    assert.matches(who .. ": not rechecked %(was [%d.e%-]+ ms; nothing changed%)\n", out)
    shell.must("rm -r " .. dir)
  end)

  it("says every element wrong where all are, as the tuner's validation counts them", function()
    local dir = folder('["-cl-fast-relaxed-math"]')
    local path, e = tune(dir)
    set_source(dir, "y[i + v] = 2.0f + a * x[i + v] + y[i + v];")
    local out, code = recheck(path, "--all")
    assert.are.equal(2, code)
    assert.matches(who .. quote((": invalid (was %.4g ms; source %s -> "):format(e.time_ms, e.source))
      .. "fnv1a%-%x+" .. quote("): invalid_output: element 0: got 3, expected 1 (absolute difference 2 > "
      .. "tolerance 0.0001); 4096 of 4096 elements differ\n"), out)
    shell.must("rm -r " .. dir)
  end)

  it("sees a changed header only with --all (the stored source hash is of the kernel's own text)", function()
    local dir = folder(nil, function(s)
      return '#include "axpy.h"\n' .. s:gsub(quote("a * x[i + v] + y[i + v]"), "AXPY(a, x[i + v], y[i + v])")
    end)
    files.write(dir .. "/vadd_T1.json", (files.read(dir .. "/vadd_T1.json")
      :gsub('"CompilerOptions": %b[]', ('"CompilerOptions": ["-I%s"]'):format(dir))))
    files.write(dir .. "/axpy.h", "#define AXPY(a, x, y) ((a) * (x) + (y))\n")
    local path, e = tune(dir)
    files.write(dir .. "/axpy.h", "#define AXPY(a, x, y) ((a) * (x) + (y) + ((x) == 6.0f ? 1.0f : 0.0f))\n")
    local out, code = recheck(path)
    assert.are.equal(0, code)
    assert.matches(who .. ": not rechecked %(was [%d.e%-]+ ms; nothing changed%)\n", out)
    out, code = recheck(path, "--all")
    assert.are.equal(2, code)
    -- x[i] = i % 7 is 6 first at element 6, where y is 2 * 6 + 1
    assert.matches(who .. quote((": invalid (was %.4g ms; nothing changed): invalid_output: element 6: got 14, "
      .. "expected 13 (absolute difference 1 > tolerance 0.0001); 585 of 4096 elements differ\n"):format(e.time_ms)),
      out)
    shell.must("rm -r " .. dir)
  end)

  it("rechecks an entry whose compiler options changed: invalid where they change the output", function()
    local dir = folder('["-cl-fast-relaxed-math"]', function(s)
      return s:gsub(quote(SUM), "y[i + v] = a * x[i + v] + y[i + v] + OFFSET;")
    end)
    files.write(dir .. "/vadd_T1.json", (files.read(dir .. "/vadd_T1.json")
      :gsub('"CompilerOptions": %b[]', '"CompilerOptions": ["-DOFFSET=0.0f"]')))
    local path, e = tune(dir)
    files.write(dir .. "/vadd_T1.json", (files.read(dir .. "/vadd_T1.json"):gsub("OFFSET=0%.0f", "OFFSET=0.5f")))
    local out, code = recheck(path)
    assert.are.equal(2, code)
    local new = e.options:gsub("OFFSET=0%.0f", "OFFSET=0.5f")
    assert.are_not.equal(e.options, new)
    assert.matches(who .. quote((": invalid (was %.4g ms; compiler options '%s' -> '%s'): invalid_output: "
      .. "element 0: got 1.5, expected 1 (absolute difference 0.5 > tolerance 0.0001); 4096 of 4096 elements "
      .. "differ\n"):format(e.time_ms, e.options, new)), out)
    -- options that leave the output right: timed, faster than a stored thousand seconds, exit 0;
    -- not stored over (another tuning's options), so it stays stale and is rechecked each time
    files.write(dir .. "/vadd_T1.json", (files.read(dir .. "/vadd_T1.json"):gsub("%-DOFFSET=0%.5f", "-DOFFSET=0.0f -cl-fast-relaxed-math")))
    sqlite(path, "UPDATE tuned SET time_ms = 1e6 WHERE rank = 1")
    out, code = recheck(path)
    assert.are.equal(0, code)
    assert.matches(who .. ": faster %([%d.e%-]+ ms, was 1e%+06 ms; compiler options '" .. quote(e.options)
      .. "' %-> '[^']+'%)\n", out)
    local db = kt.db(path, { readonly = true })
    local now = db:list{ kernel = "saxpy" }[1]
    db:close()
    assert.are.equal(e.options, now.options)
    assert.is_true(now.time_ms < 1e6) -- measured again, and kept
    -- still tuned for other options: rechecked again (whatever its time now), not left
    out = recheck(path)
    assert.matches(who .. ": %a+ %([%d.e%-]+ ms, was [%d.e%-]+ ms; compiler options '" .. quote(e.options)
      .. "' %-> '[^']+'%)\n", out)
    shell.must("rm -r " .. dir)
  end)
end)

describe("db:recheck of a stored best whose output is now wrong", function()
  local N = 64
  local function scale(tuner, factor, reference)
    local a, c = kt.array("float", N), kt.array("float", N)
    for i = 0, N - 1 do a[i] = i end
    local k = tuner:kernel{ name = "scale", global = N, group = 1, args = { a:input(), c:output() },
      source = ("__kernel void scale(__global const float *a, __global float *c) "
        .. "{ int i = get_global_id(0); c[i] = (i == 5 ? %s : 3.0f) * a[i]; }"):format(factor) }
    k:param("WG", { 8, 16 }, { group_x = "mul" })
    if reference then k:reference(c, function(ref) for i = 0, N - 1 do ref[i] = 3 * i end end) end
    return k
  end

  it("says an entry invalid with the reference's reason where the kernel has one, and times it where not",
     function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    local tuner = kt.tuner()
    tuner:tune(scale(tuner, "3.0f", true), { db = db, size = { n = N }, progress = false })
    local e = db:list{ kernel = "scale" }[1]
    local report, why = db:recheck{ kernel = scale(tuner, "4.0f", true), tuner = tuner }
    assert.is_nil(why)
    assert.are.equal(1, #report)
    local item = report[1]
    assert.are.equal("invalid", item.verdict)
    assert.are.equal("invalid_output", item.status)
    assert.are.equal("element 5: got 20, expected 15 (absolute difference 5 > tolerance 0.0001); 1 of 64 "
      .. "elements differ", item.error)
    assert.are.equal(1, #item.changed)
    assert.matches("^source " .. quote(e.source) .. " %-> fnv1a%-%x+$", item.changed[1])
    assert.are.same(e.config, item.config)
    assert.are.equal(e.time_ms, item.old_ms)
    assert.is_nil(item.new_ms)
    -- the same kernel without a reference: nothing says its output is wrong; timed, not invalid
    item = db:recheck{ kernel = scale(tuner, "4.0f", false), tuner = tuner }[1]
    assert.are.equal("ok", item.status)
    assert.is_true(item.new_ms > 0)
    assert.are_not.equal("invalid", item.verdict)
    assert.matches("^source ", item.changed[1])
    -- the source as it was: nothing changed, not rechecked
    item = db:recheck{ kernel = scale(tuner, "3.0f", true), tuner = tuner }[1]
    assert.are.equal("not rechecked", item.verdict)
    assert.are.same({}, item.changed)
    db:close()
    -- an entry that knows no source (as one stored from a peer's recording): nothing to compare
    sqlite(path, "UPDATE tuned SET source = ''")
    db = kt.db(path)
    item = db:recheck{ kernel = scale(tuner, "4.0f", true), tuner = tuner }[1]
    assert.are.equal("not rechecked", item.verdict)
    assert.are.same({}, item.changed)
    item = db:recheck{ kernel = scale(tuner, "4.0f", true), tuner = tuner, all = true }[1]
    assert.are.equal("invalid", item.verdict)
    assert.are.equal("invalid_output", item.status)
    db:close()
    remove(path)
  end)
end)
