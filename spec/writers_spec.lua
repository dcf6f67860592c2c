-- The writers of names: what a results file or a database holds is data,
-- and no writer lets a name or a value become code (C, Lua, JSON) or lose
-- part of it (CSV). The hostile inputs are kept in
-- spec/fixtures/fuzz/writers_*; spec/fuzz_spec.lua fuzzes the exports.
local kt = require "ktlua"
local shell = require "spec.support.shell"
local files = require "spec.support.files"

local FIX = "spec/fixtures/fuzz/"

-- A database holding the fixtures' results under one size table.
local function hostile_db(fixtures, size)
  local path = files.tmpname(".db")
  local db = kt.db(path)
  for _, name in ipairs(fixtures) do db:store(kt.load(FIX .. name), { size = size }) end
  return db, path
end

-- Compiles main.c with tuned.h beside it, strictly, and runs it: its
-- output and exit status, or the compiler's.
local function compile_run(header, main)
  local dir = files.tmpname()
  assert(os.execute("mkdir -p " .. dir))
  files.write(dir .. "/tuned.h", header)
  files.write(dir .. "/main.c", main)
  local out, code = shell.run(("cc -std=c11 -pedantic -Wall -Wextra -Werror -o %s/main %s/main.c -lm")
    :format(dir, dir))
  if code == 0 then out, code = shell.run(dir .. "/main") end
  os.execute("rm -rf " .. dir)
  return out, code
end

-- The header's line that ends with `what`, captured by pattern before it.
local function find_line(header, pattern, what)
  for line in header:gmatch("[^\n]+") do
    if line:sub(-#what) == what then
      local id = line:sub(1, -#what - 1):match(pattern)
      if id then return id end
    end
  end
  error("no line of the header ends with " .. what)
end

local size_names = kt.json.read(FIX .. "writers_size_names.json")
local sizes = {}
for i, name in ipairs(size_names) do sizes[name] = 2 ^ i // 1 end

describe("the database's exports of hostile names", function()
  local db, path
  setup(function()
    db, path = hostile_db({ "writers_kernel_closes_comment.json", "writers_kernel_a-b.json",
                            "writers_kernel_a_b.json" }, sizes)
  end)
  teardown(function()
    db:close()
    os.remove(path)
  end)

  it("C header: a kernel, parameter, value or size name is never code; each name is in a string", function()
    local header = db:export("header")
    local vadd = find_line(header, "^static const char ktlua_([%w_]+)_name%[%] = $",
                           '"vadd */ int f(void) { return 42; } /*";')
    local member = {}
    for _, p in ipairs({ "size", "int", "defines", "time_ms" }) do
      member[p] = find_line(header, "^  long ([%w_]+); $", "/* " .. p .. " */")
    end
    local names = {}
    for i = 1, #size_names do names[i] = ("ktlua_%s_size_names[%d]"):format(vadd, i - 1) end
    local out, code = compile_run(header, ([[
#include <stdio.h>
#include "tuned.h"
/* were any defined by the header, these would not compile */
int f(void) { return 7; }
int pwned(void) { return 8; }
int main(void) {
  const struct ktlua_%s_config *c = &ktlua_%s_configs[0];
  printf("%%d %%d %%d|%%s|%%s|%%ld %%ld %%ld %%ld %%ld|%%d\n", f(), pwned(), KTLUA_%s_COUNT,
         ktlua_%s_name, c->TAG, c->%s, c->%s, c->%s, c->%s, c->end, c->defines == NULL);
  const char *names[] = {%s};
  for (int i = 0; i < %d; i++) printf("[%%s]", names[i]);
  return 0;
}]]):format(vadd, vadd, vadd:upper(), vadd, member.size, member.int, member.defines, member.time_ms,
            table.concat(names, ", "), #size_names))
    assert.are.equal(0, code, out)
    local sorted = {}
    for i, n in ipairs(size_names) do sorted[i] = n end
    table.sort(sorted)
    assert.are.equal('7 8 1|vadd */ int f(void) { return 42; } /*|??/"; int pwned; //|3 4 5 6 7|1\n['
      .. table.concat(sorted, "][") .. "]", out)
  end)

  it("C header: names that make one identifier, or a member's, each get an identifier of their own", function()
    local header = db:export("header")
    local ab = find_line(header, "^static const char ktlua_([%w_]+)_name%[%] = $", '"a-b";')
    assert.matches("^a_b_%x%x%x%x%x%x%x%x$", ab)
    assert.are.equal("a_b", find_line(header, "^static const char ktlua_([%w_]+)_name%[%] = $", '"a_b";'))
    local out, code = compile_run(header, ([[
#include <stdio.h>
#include "tuned.h"
int main(void) {
  printf("%%s %%ld %%d, %%s %%ld %%d\n", ktlua_a_b_name, ktlua_a_b_configs[0].X, KTLUA_A_B_COUNT,
         ktlua_%s_name, ktlua_%s_configs[0].X, KTLUA_%s_COUNT);
  return 0;
}]]):format(ab, ab, ab:upper()))
    assert.are.equal(0, code, out)
    assert.are.equal("a_b 1 1, a-b 1 1\n", out)
  end)

  it("Lua: every key quoted; it loads in an empty environment as the entries, running nothing", function()
    local text = db:export("lua")
    local looked_up = {}
    local env = setmetatable({}, { __index = function(_, k) looked_up[#looked_up + 1] = k end })
    local entries = assert(load(text, "export", "t", env))()
    assert.are.same({}, looked_up)
    assert.are.same(db:list(), entries)
    assert.are.same(entries, assert(load(text, "export", "t", {}))())
    assert.are.equal(text, (shell.run(("%s db export --format=lua %s"):format(shell.ktlua, path))))
  end)

  it("JSON: the names and values read back", function()
    local wisdom = kt.json.decode(db:export("json"))
    local list = db:list()
    local kernels = {}
    for _, k in ipairs(wisdom.kernels) do kernels[k.kernel] = k end
    for _, e in ipairs(list) do
      local k = assert(kernels[e.kernel], e.kernel)
      local config = {}
      for _, name in ipairs(k.tunable_parameters) do config[name] = e.config[name] end
      assert.are.same(e.config, config)
      local size = {}
      for i, name in ipairs(k.problem_size_names) do size[name] = k.results[1].problem_size[i] end
      assert.are.same(e.size, size)
      local found = 0
      for _, r in ipairs(k.results) do
        if r.rank == e.rank and r.time == e.time_ms then
          found = found + 1
          assert.are.same(e.config, r.config)
        end
      end
      assert.are.equal(1, found)
    end
  end)
end)

describe("the exports of values their languages cannot write plainly", function()
  local entries = { {
    kernel = "k\0\1\r\n\127\255??/\\", device = "d\0e", backend = "opencl", objective = "kernel",
    size = { ["n\0\""] = 4, ["m\\"] = 8.5 }, rank = 1,
    config = { A = math.mininteger, B = 1 / 0, C = -1 / 0, D = 2.0, E = -0.0, F = "x\0y\"??/",
               G = math.maxinteger, ["k\0ey"] = 5 },
    time_ms = 0.125, source = "fnv1a-1", options = "", driver = "", version = "0", date = "",
  } }
  local export = require "ktlua.db_export"

  it("Lua: integers stay integers, floats floats, infinities infinite, bytes whole", function()
    local back = assert(load(export.lua(entries), "export", "t", {}))()
    assert.are.same(entries, back)
    for k, v in pairs(entries[1].config) do assert.are.equal(math.type(v), math.type(back[1].config[k]), k) end
    local nan = export.lua({ setmetatable({ config = { N = 0 / 0 } }, { __index = entries[1] }) })
    local n = assert(load(nan, "export", "t", {}))()[1].config.N
    assert.is_true(n ~= n)
  end)

  it("JSON: null where JSON has no number, bytes escaped (a key's too, \\u0000 and all)", function()
    local k = kt.json.decode(export.json(entries)).kernels[1]
    assert.are.same({ A = math.mininteger, B = kt.json.null, C = kt.json.null, D = 2, E = 0,
                      F = "x\0y\"??/", G = math.maxinteger, ["k\0ey"] = 5 }, k.results[1].config)
    assert.are.same({ "m\\", "n\0\"" }, k.problem_size_names)
  end)

  it("C header: the same values, compiled", function()
    local header = export.header(entries)
    local id = find_line(header, "^static const char ktlua_([%w_]+)_name%[%] = $",
                         '"k\\000\\001\\r\\n\\177\\377\\?\\?/\\\\";')
    local out, code = compile_run(header, ([[
#include <stdio.h>
#include "tuned.h"
int main(void) {
  const struct ktlua_%s_config *c = &ktlua_%s_configs[0];
  printf("%%d %%g %%g %%g %%g %%d %%s %%s %%d %%d\n", c->A == (-9223372036854775807L - 1), c->B, c->C,
         c->D, c->E, c->G == 9223372036854775807L, c->F, ktlua_%s_size_names[1], (int)sizeof ktlua_%s_name,
         c->defines == NULL);
  return 0;
}]]):format(id, id, id, id))
    assert.are.equal(0, code, out)
    assert.are.equal('1 inf -inf 2 -0 1 x n 12 1\n', out)
  end)
end)

describe("CSV", function()
  it("keeps a string value's line ends and every byte of it, and reads it back whole", function()
    local r = kt.load(FIX .. "writers_csv_values.json")
    local csv = files.tmpname(".csv")
    r:write(csv)
    local back = kt.load(csv)
    assert.are.equal(#r, #back)
    for i = 1, #r do assert.are.same(r[i].config, back[i].config) end
    os.remove(csv)
  end)

  it("reports a bad row by the line it starts on", function()
    local csv = files.tmpname(".csv")
    local r = kt.load(FIX .. "writers_csv_values.json")
    r:write(csv)
    local text = files.read(csv):gsub("\n5,", "\n-5,")
    files.write(csv, text)
    local ok, err = pcall(kt.load, csv)
    assert.is_false(ok)
    assert.are.equal(csv .. ": line 9: index '-5' is no configuration index (an integer from 0)", err)
    os.remove(csv)
  end)

  it("Kernel Tuner cache: a key holds its string values whole", function()
    local r = kt.load(FIX .. "writers_csv_values.json")
    local path = files.tmpname(".json")
    r:write(path, "kernel-tuner-cache")
    local text = files.read(path)
    for _, x in ipairs({ "1", "2" }) do assert.truthy(text:find('"' .. ("x"):rep(300) .. x .. ",", 1, true)) end
    os.remove(path)
  end)
end)

describe("the text report", function()
  it("shows a control character of a name, value or error as \\ddd, never to the terminal", function()
    local r = kt.load(FIX .. "writers_terminal.json")
    local f = io.tmpfile()
    r:print{ out = f, all = true }
    f:seek("set")
    local text = f:read("a")
    f:close()
    assert.is_nil(text:find("[\0-\9\11-\31\127]"))
    assert.truthy(text:find("\\27]0;pwned\\7vadd on d\\27[2J:", 1, true))
    assert.truthy(text:find("\\27[31mred", 1, true))
    assert.truthy(text:find("\\27]52;c;cHduZWQ=\\7 boom", 1, true))
  end)
end)

-- Every value a writer writes reads back: a metric of +inf, -inf or NaN
-- was written null, which kt.load refused (results files, journals: a
-- tuning could not be resumed). JSON files, journals, T4 and caches spell
-- them as Python's json does (Infinity, -Infinity, NaN), CSV as C and
-- Python do (inf, -inf, nan), the database as REAL values and the text NaN.
describe("a metric that is no finite number", function()
  local inf, nan = 1 / 0, 0 / 0
  local want = { { up = inf, down = -inf, none = nan, third = 0.30000000000000004 },
                 { up = 1e308, down = -5e-324 }, { none = nan }, {} }

  local function same_number(a, b)
    return type(b) == "number" and ((a ~= a and b ~= b) or (a == b and (a ~= 0 or 1 / a == 1 / b)))
  end

  -- The metrics of results (want[i] for the result whose V is i - 1).
  local function check_metrics(r, what)
    for i = 1, #r do
      local got, m = r[i].metrics or {}, want[r[i].config.V + 1]
      for k, v in pairs(m) do
        assert(same_number(v, got[k]), ("%s: V=%d: %s: %s became %s"):format(what, i - 1, k, v, got[k]))
      end
      for k in pairs(got) do assert(m[k] ~= nil, ("%s: V=%d: %s came from nowhere"):format(what, i - 1, k)) end
    end
  end

  -- What Python's json makes of a file's metrics: "inf -inf nan" for result 1's.
  local function python_reads(path, format)
    local pick = ({ json = "d['results'][0]['metrics']", t4 = "{m['name']: m['value'] for m in "
      .. "d['results'][0]['measurements']}", ["kernel-tuner-cache"] = "d['cache']['0']" })[format]
    return (shell.run(("/usr/bin/python3 -c \"import json, sys; d = json.load(open(sys.argv[1])); "
      .. "m = %s; print(m['up'], m['down'], m['none'])\" %s"):format(pick, path)))
  end

  it("reads back from every writer, with its sign, and NaN as NaN", function()
    local r = kt.load(FIX .. "results_metrics_nonfinite.json")
    check_metrics(r, "kt.load")
    assert.are.same({ 0, inf }, { r:best().config.V, r[1].metrics.up })
    for _, format in ipairs({ "json", "csv", "t4", "kernel-tuner-cache" }) do
      local path = files.tmpname(".out")
      r:write(path, format)
      check_metrics(kt.load(path), format)
      if format ~= "csv" then assert.are.equal("inf -inf nan\n", python_reads(path, format), format) end
      os.remove(path)
    end
  end)

  it("is a number where T4's schema asks for one, as Python reads it", function()
    local r = kt.load(FIX .. "results_metrics_nonfinite.json")
    local path = files.tmpname(".json")
    r:write(path, "t4")
    local out = shell.run(("/usr/bin/python3 spec/support/validate_schema.py %s %s"):format(
      "spec/fixtures/schemas/T4-1.0.0-results-schema.json", path))
    assert.are.equal("valid\n", out)
    os.remove(path)
  end)

  it("is kept by the database and given back by db:list", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    local r = kt.load(FIX .. "results_metrics_nonfinite.json")
    db:store(r, { size = { n = 1 } }) -- the three best: V=0, 1, 2
    db:close()
    db = kt.db(path, { readonly = true })
    local list = db:list()
    db:close()
    os.remove(path)
    assert.are.same({ 0, 1, 2 }, { list[1].config.V, list[2].config.V, list[3].config.V })
    check_metrics(list, "the database")
  end)

  it("is kept by a journal, and the tuning resumes from it", function()
    local tuner = kt.tuner()
    local function counter()
      local c = kt.array("float", 16)
      local k = tuner:kernel{ name = "count", global = 16, args = { c:output() }, source =
        "__kernel void count(__global float *c) { int i = get_global_id(0); c[i] = i + V; }" }
      k:param("V", { 0, 1, 2, 3 })
      return k
    end
    local metrics = { { "up", function() return inf end }, { "down", function() return -inf end } }
    local journal = files.tmpname(".jsonl")
    tuner:tune(counter(), { search = "exhaustive", repeats = 1, journal = journal, metrics = metrics,
                            stop = { count = 2 } })
    -- a NaN too, as a file holds it: no metric of the tuning computes one
    local text = files.read(journal):gsub('"metrics":{', '"metrics":{"none":NaN,')
    files.write(journal, text)
    local r = tuner:tune(counter(), { search = "exhaustive", repeats = 1, journal = journal,
                                      metrics = metrics, resume = true })
    assert.are.equal(4, #r)
    for _, results in ipairs({ r, kt.load(journal) }) do
      for i = 1, 4 do
        local m = results[i].metrics
        assert.are.same({ inf, -inf, i <= 2 }, { m.up, m.down, m.none ~= nil and m.none ~= m.none })
      end
    end
    os.remove(journal)
    tuner:close()
  end)
end)

-- A busy machine's record (issue 45): the PoCL threads ktlua gave the device
-- process (results.device_threads), each result's wait for a processor
-- (waited_ms) and its runs stopped at 10 (crowded).
describe("a busy machine's record", function()
  local function busy_json(threads)
    local result = '{"index":%d,"config":{"V":%d},"status":"%s","time_ms":%s,"samples_ms":[%s],'
      .. '"sizes":[{"global":[16],"local":null}]%s}'
    return '{"format":"ktlua-results","version":1,"task":"t","device":"d","kernels":["k"],'
      .. '"parameters":[{"name":"V","values":[0,1,2]}]' .. (threads or "") .. ',"results":[\n'
      .. result:format(0, 0, "ok", "1.5", "1.5,1.25", ',"crowded":true,"waited_ms":3.5') .. ",\n"
      .. result:format(1, 1, "ok", "2.25", "2.25", ',"waited_ms":0.1') .. ",\n"
      .. result:format(2, 2, "compile_failed", "null", "", "") .. "\n]}\n"
  end

  local function load_text(text)
    local path = files.tmpname(".json")
    files.write(path, text)
    local ok, r = pcall(kt.load, path)
    os.remove(path)
    if ok then return r end
    return nil, r:gsub("^.-: ", "")
  end

  -- {waited_ms, crowded} of the results whose V is 0, 1 and 2
  local function busy(r)
    local t = {}
    for i = 1, #r do t[r[i].config.V + 1] = { r[i].waited_ms or false, r[i].crowded or false } end
    return t
  end
  local want = { { 3.5, true }, { 0.1, false }, { false, false } }

  it("reads back from every writer that has a place for it, exactly", function()
    local r = load_text(busy_json(',"device_threads":3'))
    assert.are.equal(3, r.device_threads)
    assert.are.same(want, busy(r))
    -- JSON and T4 (metadata.ktlua, ktlua_waited_ms and ktlua_crowded) keep all three, and read
    -- back from what they wrote; CSV keeps each row's (columns waited_ms and crowded), not the
    -- results' threads; a Kernel Tuner cache keeps none
    for _, case in ipairs({ { "json", 3, want }, { "t4", 3, want }, { "csv", nil, want },
                            { "kernel-tuner-cache", nil, { { false, false }, { false, false }, { false, false } } } }) do
      local format, threads, results = case[1], case[2], case[3]
      local path = files.tmpname(".out")
      r:write(path, format)
      local back = kt.load(path)
      assert.are.equal(threads, back.device_threads, format)
      assert.are.same(results, busy(back), format)
      local again = files.tmpname(".out")
      back:write(again, format) -- JSON and T4: the same file again
      if threads then assert.are.equal(files.read(path), files.read(again), format) end
      assert.are.same(results, busy(kt.load(again)), format)
      os.remove(path)
      os.remove(again)
    end
    local csv = files.tmpname(".csv")
    r:write(csv)
    assert.are.equal(",error,waited_ms,crowded", files.read(csv):match("^[^\n]*"):match(",error,.*$"))
    assert.truthy(files.read(csv):find("\n0,0,ok,[^\n]*,3.5,true\n1,1,ok,[^\n]*,0.1,\n2,2,"))
    os.remove(csv)
  end)

  it("is unknown (nil) in a file written before ktlua kept it, and in results of no busy machine", function()
    local text = busy_json():gsub(',"crowded":true', ""):gsub(',"waited_ms":[%d.]+', "")
    local r = load_text(text)
    assert.is_nil(r.device_threads)
    assert.are.same({ { false, false }, { false, false }, { false, false } }, busy(r))
    for _, format in ipairs({ "json", "t4", "csv" }) do
      local path = files.tmpname(".out")
      r:write(path, format)
      local written = files.read(path)
      for _, field in ipairs({ "device_threads", "waited_ms", "crowded" }) do
        assert.is_nil(written:find(field, 1, true), format .. ": " .. field)
      end
      os.remove(path)
    end
  end)

  it("that is no count or time is refused, saying which", function()
    for _, bad in ipairs({ "-1", "2.5", '"3"', "1e99" }) do
      local r, err = load_text(busy_json(',"device_threads":' .. bad))
      assert.is_nil(r)
      assert.matches("device_threads is no number of threads", err)
    end
    local r, err = load_text((busy_json():gsub('"waited_ms":3.5', '"waited_ms":-2')))
    assert.is_nil(r)
    assert.matches("waited_ms is out of range", err)
    local good = load_text(busy_json(',"device_threads":3'))
    local t4, csv = files.tmpname(".json"), files.tmpname(".csv")
    good:write(t4, "t4")
    good:write(csv)
    files.write(t4, (files.read(t4):gsub('"device_threads":3', '"device_threads":-3')))
    assert.has_error(function() kt.load(t4) end)
    assert.matches("metadata.ktlua: device_threads is no number of threads", select(2, pcall(kt.load, t4)))
    good:write(t4, "t4")
    files.write(t4, (files.read(t4):gsub('"ktlua_waited_ms":3.5', '"ktlua_waited_ms":"long"')))
    assert.matches("result 1: ktlua_waited_ms is no time", select(2, pcall(kt.load, t4)))
    files.write(csv, (files.read(csv):gsub(",3.5,true\n", ",soon,true\n")))
    assert.matches("line 2: waited_ms is no time", select(2, pcall(kt.load, csv)))
    files.write(csv, (files.read(csv):gsub(",soon,true\n", ",3.5,yes\n")))
    assert.matches("line 2: crowded is \"true\" or empty", select(2, pcall(kt.load, csv)))
    os.remove(t4)
    os.remove(csv)
  end)
end)

-- Every JSON writer writes UTF-8: a name or text holding bytes that are
-- part of no UTF-8 character went through as it was, and Python's json
-- (strict UTF-8) could not read the file. Such a byte is \udcXX now, as
-- Python's surrogateescape holds it; ktlua reads it back as the byte.
describe("a name or text that is not UTF-8", function()
  local STRINGS = { "k\255", "d\254", "v\237\160\128", "\192\175", "\244\144\128\128\195", "\195\169",
                    "m\128", "bad \233 byte" }
  local SCRIPT = [[
import json, sys
out = set()
def walk(v):
    if isinstance(v, str): out.add(v.encode('utf-8', 'surrogateescape').hex())
    elif isinstance(v, list): [walk(x) for x in v]
    elif isinstance(v, dict): [walk(k) or walk(x) for k, x in v.items()]
text = open(sys.argv[1], 'rb').read().decode('utf-8')
for line in text.split('\n') if sys.argv[2] == 'lines' else [text]:
    if line: walk(json.loads(line))
print(' '.join(sorted(out)))
]]

  -- The strings of a JSON file (or of each line of a journal) as Python
  -- reads it, strictly UTF-8, each as its bytes: a set.
  local function python_strings(path, lines)
    local script = files.tmpname(".py")
    files.write(script, SCRIPT)
    local out, code = shell.run(("/usr/bin/python3 %s %s %s"):format(script, path, lines and "lines" or "whole"))
    os.remove(script)
    assert.are.equal(0, code, out)
    local set = {}
    for hex in out:gmatch("%x+") do set[(hex:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end))] = true end
    return set
  end

  local function holds(set, list, what)
    for _, s in ipairs(list) do assert(set[s], ("%s: Python did not read %q"):format(what, s)) end
  end

  it("is written so by the results' writers, which Python reads, and read back whole", function()
    local r = kt.load(FIX .. "writers_invalid_utf8.json")
    for _, format in ipairs({ "json", "t4", "kernel-tuner-cache" }) do
      local path = files.tmpname(".json")
      r:write(path, format)
      assert(utf8.len(files.read(path)), format .. ": not UTF-8")
      holds(python_strings(path), STRINGS, format)
      local back = kt.load(path)
      assert.are.same({ r.task, r.device, r[1].config, r[2].config, r[2].error, r[1].metrics },
        { back.task, back.device, back[1].config, back[2].config, back[2].error, back[1].metrics }, format)
      os.remove(path)
    end
  end)

  it("is written so by kt.json.encode, and read back", function()
    local text = kt.json.encode({ [STRINGS[1]] = STRINGS })
    assert.are.equal('{"k\\udcff":["k\\udcff","d\\udcfe","v\\udced\\udca0\\udc80","\\udcc0\\udcaf",'
      .. '"\\udcf4\\udc90\\udc80\\udc80\\udcc3","\195\169","m\\udc80","bad \\udce9 byte"]}', text)
    assert.are.same({ [STRINGS[1]] = STRINGS }, kt.json.decode(text))
    -- as Python writes them: any other lone surrogate is still no character
    assert.are.equal("\255", kt.json.decode('"\\udcff"'))
    assert.has_error(function() kt.json.decode('"\\udc7f"') end,
      "kt.json.decode: JSON: line 1, column 3: unpaired surrogate in a \\u escape")
  end)

  it("is written so by the database's JSON export", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    db:store(kt.load(FIX .. "writers_invalid_utf8.json"), { size = { ["n\255"] = 4 } })
    local json = files.tmpname(".json")
    files.write(json, db:export("json"))
    db:close()
    os.remove(path)
    holds(python_strings(json), { "k\255", "d\254", "v\237\160\128", "\244\144\128\128\195", "n\255", "m\128" },
      "the wisdom")
    local k = kt.json.decode(files.read(json)).kernels[1]
    assert.are.same({ "k\255", "n\255", "v\237\160\128" }, { k.kernel, k.problem_size_names[1], k.results[1].config.P })
    os.remove(json)
  end)

  it("is written so in a journal, from which the tuning resumes", function()
    local tuner = kt.tuner()
    local c = kt.array("float", 16)
    local k = tuner:kernel{ name = "count", global = 16, args = { c:output() }, source =
      "__kernel void count(__global float *c) { int i = get_global_id(0); c[i] = i; }" }
    k:param("V", { 0, 1, 2 })
    local metrics = { ["m\128"] = function() return 2.5 end }
    local journal = files.tmpname(".jsonl")
    tuner:tune(k, { search = "exhaustive", repeats = 1, journal = journal, metrics = metrics, stop = { count = 2 } })
    holds(python_strings(journal, true), { "m\128" }, "the journal")
    local r = tuner:tune(k, { search = "exhaustive", repeats = 1, journal = journal, metrics = metrics, resume = true })
    assert.are.same({ 3, 2.5, 2.5 }, { #r, r[1].metrics["m\128"], r[3].metrics["m\128"] })
    os.remove(journal)
    tuner:close()
  end)
end)
