-- The tuned-configuration database (kt.db) and its export.
local kt = require "ktlua"
local shell = require "spec.support.shell"

local tuner = kt.tuner()
local device = tuner.device.name

local files = require "spec.support.files"
local tmpdb, write = files.tmpname, files.write

local double_src = "__kernel void dbl(__global const float *a, __global float *c) "
  .. "{ int i = get_global_id(0); c[i] = a[i] * 2; }"

local function doubler(n, src)
  local a = kt.array("float", n):fill(1)
  local c = kt.array("float", n)
  local k = tuner:kernel{ source = src or double_src, name = "dbl", global = n, group = 1,
                          args = { a:input(), c:output() } }
  k:param("WG", { 8, 16, 32 }, { group_x = "mul" })
  k:param("TAG", { "a", "b" })
  return k
end

describe("kt.db", function()
  it("stores the best of a tuning and gives them back for the exact or the nearest size", function()
    local path = tmpdb()
    local db = kt.db(path)
    local k = doubler(1024)
    local r = tuner:tune(k, { search = "exhaustive" })
    assert.are.equal(db, db:store(r, { size = { n = 1024 }, top = 2 }))
    local list = db:list()
    assert.are.equal(2, #list)
    assert.are.same({ 1, 2 }, { list[1].rank, list[2].rank })
    local best = r:best()
    local e = list[1]
    assert.are.same(best.config, e.config)
    assert.are.equal(best.time_ms, e.time_ms)
    assert.are.same({ n = 1024 }, e.size)
    assert.are.same({ "dbl", device, tuner.device.backend, "kernel", kt.version },
                    { e.kernel, e.device, e.backend, e.objective, e.version })
    assert.matches("^fnv1a%-%x+$", e.source)
    assert.matches("^%d%d%d%d%-%d%d%-%d%dT", e.date)
    local exact = db:best{ kernel = k, device = tuner, size = { n = 1024 } }
    assert.are.same({ "exact", 0, best.config }, { exact.match, exact.distance, exact.config })
    local near = db:best{ kernel = "dbl", device = device, size = { n = 4096 } }
    assert.are.equal("nearest", near.match)
    assert.are.equal(2, near.distance) -- log2(4096) - log2(1024)
    db:close()
    os.remove(path)
  end)

  it("is filled by tuner:tune with db and size, keyed by size; a new tuning replaces its key", function()
    local path = tmpdb()
    local db = kt.db(path)
    tuner:tune(doubler(256), { db = db, size = { n = 256 } })
    tuner:tune(doubler(4096), { db = db, size = { n = 4096 } })
    tuner:tune(doubler(4096), { db = db, size = { n = 4096 } })
    assert.are.equal(12, #db:list()) -- the best 10 of each size: all 6 configurations
    assert.are.equal(6, #db:list{ kernel = "dbl", device = tuner, size = { n = 4096 } })
    local e = db:best{ kernel = "dbl", device = tuner, size = { n = 300 } }
    assert.are.same({ n = 256 }, e.size)
    assert.has_error(function() tuner:tune(doubler(64), { db = db }) end,
      "tune options: db and size go together (the database keys what it stores by the problem size)")
    db:close()
    os.remove(path)
  end)

  it("reports a changed kernel as stale rather than use what it stored", function()
    local path = tmpdb()
    local db = kt.db(path)
    tuner:tune(doubler(512), { db = db, size = { n = 512 } })
    local changed = doubler(512, double_src:gsub("%* 2", "* 2.0f"))
    local e, why = db:best{ kernel = changed, device = tuner, size = { n = 512 } }
    assert.is_nil(e)
    assert.matches("^stale: dbl on .* was tuned for another source %(fnv1a%-%x+, now fnv1a%-%x+%)$", why)
    e = db:best{ kernel = changed, device = tuner, size = { n = 512 }, stale = true }
    assert.is_true(e.stale)
    assert.is_false(db:best{ kernel = "dbl", device = tuner, size = { n = 512 } }.stale)
    db:close()
    os.remove(path)
  end)

  it("says what is missing or wrong", function()
    local path = tmpdb()
    local db = kt.db(path)
    local e, why = db:best{ kernel = "dbl", device = "no such device", size = { n = 1 } }
    assert.is_nil(e)
    assert.are.equal("no configuration of dbl on no such device is stored", why)
    assert.has_error(function() db:best{ kernel = "dbl", device = tuner, size = { n = -1 } } end,
      "db options.size: expected a table of named positive numbers ({n = 4096}); n = -1 is not one")
    assert.has_error(function() db:best{ kernel = "dbl", device = tuner, size = 4096 } end,
      "db options.size: expected a table of named positive numbers ({n = 4096}), got number")
    assert.has_error(function() db:best{ kernel = "dbl", device = tuner } end,
      "db:best: expected kernel, device and size")
    assert.has_error(function() db:best{ kernel = "dbl", size = { n = 1 }, colour = 1 } end)
    local r = tuner:tune(doubler(64))
    assert.has_error(function() db:store(r, { size = {} }) end,
      "db:store: size: expected a table of named positive numbers ({n = 4096}), got {}")
    assert.has_error(function() db:store(r, { size = { n = 64 }, top = 0 }) end,
      "db:store options.top: expected a positive number of configurations")
    db:close()
    assert.has_error(function() db:list() end)
    os.remove(path)
  end)

  it("is named when tuner:tune is given something else, or closed by the tuning's callback", function()
    local path = tmpdb()
    local db = kt.db(path)
    assert.has_error(function() tuner:tune(doubler(64), { db = 3, size = { n = 64 } }) end,
      "tune options.db: expected a database (kt.db), got number")
    local out = tmpdb() .. ".json"
    assert.has_error(function()
      tuner:tune(doubler(64), { db = db, size = { n = 64 }, output = out, progress = function() db:close() end })
    end, "tune options.db: the database has been closed")
    assert.are.equal(6, #kt.load(out)) -- the results were written first
    assert.are.equal("tuned-configuration database (closed)", tostring(db))
    os.remove(out)
    os.remove(path)
  end)

  it("refuses a file that is not a SQLite database, and loses nothing of it", function()
    local path = tmpdb()
    write(path, ("not a database\n"):rep(100))
    local ok, err = pcall(kt.db, path)
    assert.is_false(ok)
    assert.matches("is not a SQLite database %(file is not a database%)", err)
    local f = io.open(path)
    assert.are.equal(("not a database\n"):rep(100), f:read("a"))
    f:close()
    os.remove(path)
  end)

  it("waits for a writer that holds it, then says it stayed locked", function()
    local path = tmpdb()
    kt.db(path):close()
    -- The sqlite3 shell holds a write lock until the file go exists (at most 300 s).
    local go = path .. ".go"
    local r = tuner:tune(doubler(64))
    local lock = io.popen(("printf 'BEGIN EXCLUSIVE;\\nSELECT 1;\\n.shell for _ in $(seq 30000); do "
      .. "[ -e %s ] && break; sleep 0.01; done\\nCOMMIT;\\n' | sqlite3 %s"):format(go, path))
    lock:read("l") -- "1": the lock is held
    local db = kt.db(path, { timeout = 0.2 })
    local ok, err = pcall(db.store, db, r, { size = { n = 64 } })
    files.write(go, "")
    lock:close()
    os.remove(go)
    assert.is_false(ok)
    assert.matches("storing: the database stayed locked by another process for 0.2 s", err)
    db:store(r, { size = { n = 64 } }) -- free again
    assert.are.equal(3, #db:list())
    db:close()
    os.remove(path)
  end)

  it("takes writes from several processes at once", function()
    local path = tmpdb()
    kt.db(path):close()
    local script = os.tmpname()
    write(script, ([[
local kt = require "ktlua"
local who = tonumber(arg[1])
local tuner = kt.tuner()
local db = kt.db(%q)
local a, c = kt.array("float", 64):fill(1), kt.array("float", 64)
local k = tuner:kernel{ source = "__kernel void dbl(__global const float *a, __global float *c) "
  .. "{ int i = get_global_id(0); c[i] = a[i] * 2; }", name = "dbl", global = 64,
  args = { a:input(), c:output() } }
k:param("X", { 1, 2 })
local r = tuner:tune(k)
for i = 1, 15 do db:store(r, { size = { n = i, who = who } }) end
print("done")
]]):format(path))
    local p1 = io.popen(shell.ktlua .. " " .. script .. " 1 2>&1")
    local p2 = io.popen(shell.ktlua .. " " .. script .. " 2 2>&1")
    local out1, out2 = p1:read("a"), p2:read("a")
    p1:close()
    p2:close()
    os.remove(script)
    assert.are.equal("done\n", out1)
    assert.are.equal("done\n", out2)
    local db = kt.db(path)
    assert.are.equal(60, #db:list()) -- 2 processes x 15 sizes x 2 ranks
    db:close()
    os.remove(path)
  end)
end)

describe("ktlua db export", function()
  local path = tmpdb()
  setup(function()
    local db = kt.db(path)
    tuner:tune(doubler(256), { db = db, size = { n = 256 } })
    tuner:tune(doubler(8192), { db = db, size = { n = 8192 } })
    db:close()
  end)
  teardown(function() os.remove(path) end)

  it("writes a C header that a program compiles against and selects by nearest size", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir))
    local out, code = shell.run(("%s db export --format=header -o %s/tuned.h %s"):format(shell.ktlua, dir, path))
    assert.are.equal(0, code, out)
    write(dir .. "/main.c", [[
#include <stdio.h>
#include "tuned.h"
int main(int argc, char **argv) {
  double size[1] = {atof(argv[2])};
  const struct ktlua_dbl_config *c = ktlua_dbl_select(argv[1], size);
  printf("%g %ld %s %s\n", c->size[0], c->WG, c->TAG, c->defines);
  return 0;
}]])
    out, code = shell.run(("cc -std=c11 -Wall -Werror -include stdlib.h -o %s/main %s/main.c -lm")
      :format(dir, dir))
    assert.are.equal(0, code, out)
    local db = kt.db(path)
    for _, case in ipairs({ { 300, 256 }, { 5000, 8192 }, { 1e6, 8192 } }) do
      local want = db:best{ kernel = "dbl", device = device, size = { n = case[1] } }
      out = shell.run(("%s/main %q %d"):format(dir, device, case[1]))
      assert.are.equal(("%d %d %s -DTAG=%s -DWG=%d\n"):format(case[2], want.config.WG,
        want.config.TAG, want.config.TAG, want.config.WG), out)
    end
    db:close()
    os.execute("rm -rf " .. dir)
  end)

  it("writes JSON wisdom and a Lua table with every stored configuration", function()
    local json = shell.run(("%s db export --format=json %s"):format(shell.ktlua, path))
    assert.matches('^{"format":"ktlua%-wisdom","version":1', json)
    assert.matches('"problem_size_names":%["n"%]', json)
    local _, n = json:gsub('"device_name":', "")
    assert.are.equal(12, n) -- every configuration of two sizes: tuner:tune stores the best 10
    local lua = shell.run(("%s db export --format=lua %s"):format(shell.ktlua, path))
    local entries = assert(load(lua))()
    assert.are.equal(12, #entries)
    local db = kt.db(path)
    assert.are.same(db:list(), entries)
    assert.are.equal(lua, db:export("lua"))
    db:close()
  end)

  it("says what was wrong with its arguments", function()
    local out, code = shell.run(shell.ktlua .. " db export --format=yaml " .. path)
    assert.are_not.equal(0, code)
    assert.matches("unknown format 'yaml' %(header, json or lua%)", out)
    out, code = shell.run(shell.ktlua .. " db export /no/such.db")
    assert.are_not.equal(0, code)
    assert.matches("ktlua db export: /no/such.db does not exist", out)
    out = shell.run(shell.ktlua .. " --help")
    assert.matches("ktlua db export %[%-%-format=header|json|lua%] %[%-o FILE%] DB", out)
  end)
end)
