-- The metrics of stored configurations in kt.db (core/db/db_metrics.c):
-- energy, counters and users' metrics round trip through the database, its
-- best and its exports; the stored best goes by the objective; databases of
-- version 3 (spec/fixtures/fuzz/db_v3.sql) open as they are and are brought
-- up to date; metric names are data everywhere.
local kt = require "ktlua"
local shell = require "spec.support.shell"
local files = require "spec.support.files"
local fuzz = require "spec.support.fuzz"

local sh = shell.must

local sqlite_files = require "spec.support.sqlite_files"
local from_sql, sqlite, remove = sqlite_files.from_sql, sqlite_files.sqlite, sqlite_files.remove

-- Results (as kt.load reads them) of configurations {WG, time_ms, metrics[, status], cut_short =},
-- by objective (maximised with most).
local function results(configs, objective, most)
  local doc = { format = "ktlua-results", version = 1, task = "dbl", device = "dev",
    searcher = "random", kernels = { "dbl" }, backend = "opencl", source = "fnv1a-1", options = "",
    driver = "3.1", objective = objective or "kernel", maximize = most or nil,
    parameters = { { name = "WG", values = fuzz.array({}) } }, results = {} }
  for i, c in ipairs(configs) do
    table.insert(doc.parameters[1].values, c[1])
    doc.results[i] = { index = i - 1, config = { WG = c[1] }, status = c[4] or "ok", time_ms = c[2],
                       metrics = c[3], cut_short = c.cut_short }
  end
  local path = files.tmpname(".json")
  files.write(path, fuzz.json(doc))
  local r = kt.load(path)
  os.remove(path)
  return r
end

-- Names no writer may let become code: SQL, quotes, HTML, Lua, C comments and trigraphs.
local HOSTILE = { "q'uote\"d", "'); DROP TABLE tuned; --", "</script><script>alert(1)</script>",
  "]] os.exit(3) --[[", "line\nend", "*/ int x; /*", "??/ back\\slash", "%s%n", "dram__x.sum" }

describe("kt.db keeps each stored configuration's metrics", function()
  it("gives them back with list and best, in every export", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    db:store(results({ { 8, 0.5, { energy = 0.004, gflops = 12.5 } }, { 16, 0.25, { energy = 0.002 } },
                       { 32, 0.75 } }), { size = { n = 1024 } })
    local list = db:list()
    assert.are.same({ 16, 8, 32 }, { list[1].config.WG, list[2].config.WG, list[3].config.WG })
    assert.are.same({ energy = 0.002 }, list[1].metrics)
    assert.are.same({ energy = 0.004, gflops = 12.5 }, list[2].metrics)
    assert.is_nil(list[3].metrics) -- as a result's: none, no table
    local e = db:best{ kernel = "dbl", device = "dev", size = { n = 2048 } }
    assert.are.same({ "nearest", { energy = 0.002 } }, { e.match, e.metrics })
    local wisdom = kt.json.decode(db:export("json"))
    assert.are.same({ energy = 0.004, gflops = 12.5 }, wisdom.kernels[1].results[2].metrics)
    assert.is_nil(wisdom.kernels[1].results[3].metrics)
    assert.are.same(list, load(db:export("lua"), "export", "t", {})())
    assert.truthy(db:export("header"):find('static const char *const ktlua_dbl_metric_names[] = {"energy"};\n',
      1, true))
    -- a new tuning of the key replaces its metrics with the rows
    db:store(results({ { 64, 0.1 } }), { size = { n = 1024 } })
    assert.are.same({ 64 }, { db:list()[1].config.WG, db:list()[2] })
    assert.is_nil(db:list()[1].metrics)
    assert.are.equal("0\n", sqlite(path, "SELECT count(*) FROM tuned_metrics"))
    db:close()
    remove(path)
  end)

  it("ranks what it stores by the objective, minimised or maximised, leaving out those without a value",
     function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    local configs = { { 8, 0.5, { energy = 0.001, gflop_per_j = 9 } }, { 16, 0.25, { energy = 0.003, gflop_per_j = 3 } },
                      { 32, 0.1 }, { 64, 0.75, { energy = 0.002, gflop_per_j = 5 } } }
    db:store(results(configs, "energy"), { size = { n = 1 } })
    db:store(results(configs, "gflop_per_j", true), { size = { n = 1 } })
    local function ranked(objective)
      local t = {}
      for _, e in ipairs(db:list{ objective = objective }) do t[#t + 1] = e.config.WG end
      return t
    end
    assert.are.same({ 8, 64, 16 }, ranked("energy"))
    assert.are.same({ 8, 64, 16 }, ranked("gflop_per_j"))
    assert.are.equal(0.001, db:best{ kernel = "dbl", device = "dev", size = { n = 1 }, objective = "energy" }
      .metrics.energy)
    -- ties as results:best() breaks them (the first), whatever the times
    local tied = results({ { 8, 0.5, { energy = 0.002 } }, { 16, 0.25, { energy = 0.002 } } }, "energy")
    db:store(tied, { size = { n = 3 } })
    assert.are.same({ 8, 8 }, { tied:best().config.WG, db:list{ size = { n = 3 } }[1].config.WG })
    -- a configuration cut short (early_stop) is never the best, nor stored
    db:store(results({ { 8, 0.5 }, { 16, 0.25 }, { 32, 0.75, cut_short = true } }), { size = { n = 4 } })
    assert.are.equal(2, #db:list{ size = { n = 4 } })
    local ok, err = pcall(db.store, db, results({ { 32, 0.1 }, { 64, nil, { energy = 1 }, "runtime_failed" } },
      "energy"), { size = { n = 2 } })
    assert.is_false(ok)
    assert.matches("db:store: no configuration of dbl came out ok with a value of the objective: nothing to "
      .. "store", err, 1, true)
    db:close()
    remove(path)
  end)

  it("keeps hostile metric names as data: stored, listed and exported as they are", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    local metrics = {}
    for i, name in ipairs(HOSTILE) do metrics[name] = i + 0.5 end
    db:store(results({ { 8, 0.5, metrics } }), { size = { n = 1 } })
    db:close()
    -- nothing ran: the tables are all there, with one row per name
    assert.are.equal(("%d\n"):format(#HOSTILE), sqlite(path, "SELECT count(*) FROM tuned_metrics"))
    db = kt.db(path)
    local e = db:list()[1]
    assert.are.same(metrics, e.metrics)
    assert.are.same(metrics, kt.json.decode(db:export("json")).kernels[1].results[1].metrics)
    assert.are.same(metrics, load(db:export("lua"), "export", "t", {})()[1].metrics)
    -- the header: names in strings, their values in that order, in a program that prints them
    local dir = files.tmpname()
    sh("mkdir -p " .. dir)
    files.write(dir .. "/tuned.h", db:export("header"))
    files.write(dir .. "/main.c", ([[
#include <stdio.h>
#include "tuned.h"
int main(void) {
  for (int i = 0; i < %d; i++)
    printf("%%s=%%g|", ktlua_dbl_metric_names[i], ktlua_dbl_configs[0].metrics[i]);
  return 0;
}]]):format(#HOSTILE))
    sh(("cc -std=c11 -Wall -Werror -o %s/main %s/main.c -lm 2>&1"):format(dir, dir))
    local names = {}
    for name in pairs(metrics) do names[#names + 1] = name end
    table.sort(names)
    local want = {}
    for _, name in ipairs(names) do want[#want + 1] = ("%s=%g|"):format(name, metrics[name]) end
    assert.are.equal(table.concat(want), sh(dir .. "/main"))
    sh("rm -rf " .. dir)
    db:close()
    remove(path)
  end)

  it("says which row of which file holds a metric name with a NUL byte or a value that is no number",
     function()
    local path = from_sql("db_v4_bad_metrics.sql")
    local db = kt.db(path)
    -- (best reads every size of the kernel and device: a row it cannot read could be the nearest)
    for _, call in ipairs({ { db.list, { size = { n = 1 } } }, { db.best, { kernel = "dbl", device = "dev", size = { n = 1 } } } }) do
      local ok, err = pcall(call[1], db, call[2])
      assert.is_false(ok)
      assert.are.equal(path .. ": the name of a metric stored for dbl on dev (rank 1) holds a NUL byte: "
        .. "\"ener\\u0000gy\"", err)
    end
    local ok, err = pcall(db.list, db, { size = { n = 2 } })
    assert.is_false(ok)
    assert.are.equal(path .. ": the metric \"power\" stored for dbl on dev (rank 1) is no number", err)
    db:close()
    remove(path)
  end)
end)

describe("kt.db on a database of version 3, which kept no metrics", function()
  it("reads it as it is, read-only, and brings it up to date when it may write", function()
    local path = from_sql("db_v3.sql")
    local before = files.read(path)
    local db = kt.db(path, { readonly = true })
    local list = db:list()
    assert.are.same({ 2, 16, "energy" }, { #list, list[1].config.WG, list[1].objective })
    assert.is_nil(list[1].metrics)
    db:close()
    assert.are.equal(before, files.read(path))
    db = kt.db(path)
    assert.are.same({ 16, 8 }, { db:list()[1].config.WG, db:list()[2].config.WG })
    assert.are.equal("1802792053\n5\ndevices\nprobe_rows\nprobes\ntuned\ntuned_metrics\n", sqlite(path,
      "PRAGMA application_id; PRAGMA user_version; SELECT name FROM sqlite_master WHERE type = 'table' "
        .. "ORDER BY name"))
    db:store(results({ { 8, 0.5, { energy = 0.001 } }, { 16, 0.25, { energy = 0.002 } } }, "energy"),
      { size = { n = 1024 } })
    local e = db:best{ kernel = "dbl", device = "dev", size = { n = 1024 }, objective = "energy" }
    assert.are.same({ 8, { energy = 0.001 } }, { e.config.WG, e.metrics })
    db:close()
    remove(path)
  end)
end)
