-- Nothing lost: journals and result files that survive kills, concurrent
-- writers and changed kernels.
local kt = require "ktlua"
local shell = require "spec.support.shell"

local tuner = kt.tuner()

local files = require "spec.support.files"
local tmp, lines, slurp, spit, exists = files.tmpname, files.lines, files.read, files.write, files.exists

-- Waits (at most 300 s: a busy machine) until the file exists: a child
-- process signals that it reached a point by creating it.
local function wait_for(path)
  for _ = 1, 6000 do
    if exists(path) then return true end
    os.execute("sleep 0.05")
  end
  return false
end

local function script(code)
  local path = tmp(".lua")
  spit(path, code)
  return path
end

-- Six configurations, X = 1..6; the source can be changed by `extra`.
local function kernel(extra, name)
  local o = kt.array("int", 4)
  local k = tuner:kernel{ source = "__kernel void k(__global int *o) { o[0] = X" .. (extra or "") .. "; }",
                          name = name or "k", global = 1, args = { o:output() } }
  k:param("X", { 1, 2, 3, 4, 5, 6 })
  return k
end

local function indices(r)
  local t = {}
  for i = 1, #r do t[i] = r[i].index end
  table.sort(t)
  return t
end

describe("a journal", function()
  it("resumed after a kill cut its last line drops that line before appending, and resumes again", function()
    local path = tmp(".jsonl")
    tuner:tune(kernel(), { repeats = 1, journal = path, search = "exhaustive", stop = { count = 3 } })
    -- what a kill in the middle of a record leaves
    spit(path, '{"index":3,"config":{"X":4},"status":"compile_failed","time_ms":null,"error":"' ..
      ("x"):rep(9000), "ab")
    local r = tuner:tune(kernel(), { repeats = 1, journal = path, resume = true, search = "exhaustive",
                                     stop = { count = 5 } })
    assert.are.equal(5, #r)
    assert.are.equal(6, #lines(path))
    r = tuner:tune(kernel(), { repeats = 1, journal = path, resume = true, search = "exhaustive" })
    assert.are.same({ 0, 1, 2, 3, 4, 5 }, indices(r))
    assert.are.equal(7, #lines(path))
    assert.are.same({ 0, 1, 2, 3, 4, 5 }, indices(kt.load(path)))
    os.remove(path)
  end)

  it("keeps a record with a long compiler log on one line", function()
    local path = tmp(".jsonl")
    local k = kernel(" + undeclared_" .. ("y"):rep(16000))
    local r = tuner:tune(k, { repeats = 1, journal = path, stop = { count = 2 } })
    assert.are.equal("compile_failed", r[1].status)
    assert.is_true(#r[1].error > 16000)
    local l = lines(path)
    assert.are.equal(3, #l)
    assert.are.equal(r[1].error, kt.load(path)[1].error)
    os.remove(path)
  end)

  it("that is empty, or cut inside its header, starts afresh when resumed", function()
    local path = tmp(".jsonl")
    for _, text in ipairs({ "", '{"format":"ktlua-journal","version":1,"task":"k","dev' }) do
      spit(path, text)
      local r = tuner:tune(kernel(), { repeats = 1, journal = path, resume = true, stop = { count = 2 } })
      assert.are.equal(2, #r)
      local l = lines(path)
      assert.are.equal(3, #l)
      assert.matches('^{"format":"ktlua%-journal","version":1,"task":"k"', l[1])
    end
    spit(path, "not a journal")
    assert.has_error(function() tuner:tune(kernel(), { journal = path, resume = true }) end,
      "cannot resume from " .. path .. ": it is no ktlua journal")
    assert.are.equal("not a journal", slurp(path))
    os.remove(path)
  end)

  it("is locked: a second tuning on it is refused and leaves it as it is", function()
    local journal, held, go = tmp(".jsonl"), tmp(".held"), tmp(".go")
    local child = script([[
local kt = require "ktlua"
local t = kt.tuner()
local o = kt.array("int", 4)
local k = t:kernel{ source = "__kernel void k(__global int *o) { o[0] = X; }", name = "k", global = 1,
                    args = { o:output() } }
k:param("X", { 1, 2, 3, 4, 5, 6 })
local journal, held, go = ...
t:tune(k, { repeats = 1, journal = journal, progress = function(res, all)
  if #all ~= 2 then return end
  io.open(held, "w"):close()
  for _ = 1, 6000 do -- until the spec says go, at most 300 s
    local f = io.open(go)
    if f then f:close() break end
    os.execute("sleep 0.05")
  end
end })
print("finished")]])
    local p = io.popen(("%s %s %s %s %s 2>&1"):format(shell.ktlua, child, journal, held, go))
    assert.is_true(wait_for(held))
    for _, resume in ipairs({ false, true }) do
      local ok, err = pcall(tuner.tune, tuner, kernel(), { journal = journal, resume = resume })
      assert.is_false(ok)
      assert.matches("the journal " .. journal:gsub("%p", "%%%0") .. " is in use by another tuning$", err)
    end
    spit(go, "")
    local out = p:read("a")
    p:close()
    assert.matches("finished", out)
    assert.are.same({ 0, 1, 2, 3, 4, 5 }, indices(kt.load(journal)))
    assert.are.equal(7, #lines(journal))
    -- released at the end: another tuning takes it
    assert.are.equal(6, #tuner:tune(kernel(), { journal = journal, resume = true }))
    for _, f in ipairs({ journal, held, go, child }) do os.remove(f) end
  end)
end)

describe("a journal's record of a busy machine (issue 45)", function()
  -- {waited_ms, crowded} by configuration index
  local function busy(r)
    local t = {}
    for i = 1, #r do t[r[i].index] = { r[i].waited_ms or false, r[i].crowded or false } end
    return t
  end

  it("reads back as the tuning had it, and a resumed tuning keeps it", function()
    local path = tmp(".jsonl")
    local r = tuner:tune(kernel(), { repeats = 1, journal = path, search = "exhaustive", stop = { count = 3 } })
    -- the threads ktlua gave PoCL (nil on an idle machine), and each result's waits
    local back = kt.load(path)
    assert.are.equal(r.device_threads, back.device_threads)
    assert.are.same(busy(r), busy(back))
    -- as a busy machine leaves it: the header's threads, results that waited, crowded or not,
    -- and a line from which a device process started again had other threads
    local l = lines(path)
    l[1] = l[1]:gsub(',"device_threads":%d+', ""):gsub(',"space":', ',"device_threads":7,"space":', 1)
    l[2] = l[2]:gsub(',"crowded":true', ""):gsub(',"waited_ms":[^,]*', "")
      :gsub('"launches":', '"crowded":true,"launches":', 1):gsub(',"error":', ',"waited_ms":3.5,"error":', 1)
    l[3] = l[3]:gsub(',"crowded":true', ""):gsub(',"waited_ms":[^,]*', "")
      :gsub(',"error":', ',"waited_ms":0.1,"error":', 1)
    l[4] = l[4]:gsub(',"crowded":true', ""):gsub(',"waited_ms":[^,]*', ""):gsub('^{"device_threads":%d+,', "{")
    spit(path, table.concat(l, "\n") .. "\n")
    back = kt.load(path)
    assert.are.equal(7, back.device_threads)
    assert.are.same({ [0] = { 3.5, true }, { 0.1, false }, { false, false } }, busy(back))
    spit(path, table.concat(l, "\n", 1, 3) .. "\n" .. l[4]:gsub("^{", '{"device_threads":5,') .. "\n")
    assert.are.equal(5, kt.load(path).device_threads)
    assert.are.same({ [0] = { 3.5, true }, { 0.1, false }, { false, false } }, busy(kt.load(path)))
    -- resumed: the results it took keep their waits; its first line says its own threads
    -- (0: none), from which the journal reads back as the tuning ended
    r = tuner:tune(kernel(), { repeats = 1, journal = path, resume = true, search = "exhaustive" })
    assert.are.equal(6, #r)
    local took = busy(r)
    assert.are.same({ { 3.5, true }, { 0.1, false }, { false, false } }, { took[0], took[1], took[2] })
    l = lines(path)
    assert.are.equal(7, #l)
    assert.are.equal('{"device_threads":' .. (r.device_threads or 0) .. ',"index":3,', l[5]:match('^{[^{]*"index":3,'))
    back = kt.load(path)
    assert.are.equal(r.device_threads, back.device_threads)
    assert.are.same(busy(r), busy(back))
    os.remove(path)
  end)

  it("that is no number of threads is refused, naming its line", function()
    local path = tmp(".jsonl")
    tuner:tune(kernel(), { repeats = 1, journal = path, stop = { count = 2 } })
    local l = lines(path)
    l[3] = l[3]:gsub('^{"device_threads":%d+,', "{"):gsub("^{", '{"device_threads":-1,')
    spit(path, table.concat(l, "\n") .. "\n")
    assert.has_error(function() kt.load(path) end, path .. ": line 3: device_threads is no number of threads")
    os.remove(path)
  end)
end)

describe("resuming", function()
  local path = tmp(".jsonl")

  before_each(function()
    tuner:tune(kernel(), { repeats = 1, journal = path, search = "exhaustive", stop = { count = 3 } })
  end)

  after_each(function() os.remove(path) end)

  it("refuses a journal of another kernel source, task name or device", function()
    local ok, err = pcall(tuner.tune, tuner, kernel(" + 0"), { journal = path, resume = true })
    assert.is_false(ok)
    assert.matches('cannot resume from .-: it was written for another task: source "fnv1a%-%x+" %(now '
      .. '"fnv1a%-%x+"%); resume = "force" takes its results all the same', err)
    ok, err = pcall(tuner.tune, tuner, kernel(nil, "k2"), { journal = path, resume = true })
    assert.matches('another task: task "k" %(now "k2"%), source', err)
    local text = slurp(path)
    local device = tuner.device.name:gsub("%p", "%%%0")
    spit(path, (text:gsub('("identity":{.-"device":)"' .. device .. '"', '%1"another GPU"')))
    ok, err = pcall(tuner.tune, tuner, kernel(), { journal = path, resume = true })
    assert.matches('another task: device "another GPU" %(now "' .. device .. '"%);', err)
    assert.has_error(function() tuner:tune(kernel(), { journal = path, resume = "yes" }) end,
      'tune options.resume: expected true, false or "force"')
  end)

  it("refuses a journal that records no identity", function()
    local text = slurp(path)
    spit(path, (text:gsub(',"identity":{[^}]*}', "", 1)))
    local ok, err = pcall(tuner.tune, tuner, kernel(), { journal = path, resume = true })
    assert.is_false(ok)
    assert.matches("another task: its header records no identity %(an older ktlua wrote it%)", err)
  end)

  it("with resume = \"force\" takes the results of another task, and says so", function()
    local r = tuner:tune(kernel(" + 0"), { repeats = 1, journal = path, resume = "force", search = "exhaustive" })
    assert.are.same({ 0, 1, 2, 3, 4, 5 }, indices(r))
    assert.are.equal(7, #lines(path))
    assert.matches('^resumed from .-, written for another task: source "fnv1a%-%x+" %(now "fnv1a%-%x+"%)$',
      r.notice)
    assert.is_nil(tuner:tune(kernel(), { repeats = 1, stop = { count = 1 } }).notice)
  end)

  it("through `ktlua --journal=DIR --resume=force` too", function()
    local dir = tmp("")
    os.execute("mkdir " .. dir)
    local child = script([[
local kt = require "ktlua"
local t = kt.tuner()
local k = t:kernel{ source = "__kernel void k(__global int *o) { o[0] = X" .. ... .. "; }", name = "k",
                    global = 1, args = { kt.array("int", 1):output() } }
k:param("X", { 1, 2, 3 })
print(#t:tune(k, { repeats = 1 }))]])
    local function run(option, extra)
      return shell.run(("%s --journal=%s %s %s '%s'"):format(shell.ktlua, dir, option, child, extra))
    end
    assert.are.equal(0, select(2, run("", "")))
    local out, status = run("--resume", " + 0")
    assert.are.equal(1, status)
    assert.matches("it was written for another task: source", out)
    out, status = run("--resume=force", " + 0")
    assert.are.equal(0, status, out)
    assert.matches("^ktlua: resumed from " .. dir:gsub("%p", "%%%0") .. "/k.jsonl, written for another task: "
      .. "source \"fnv1a%-%x+\" %(now \"fnv1a%-%x+\"%)\n3\n$", out)
    os.execute("rm -r " .. dir)
    os.remove(child)
  end)
end)

describe("a tuning stopped by a Lua error", function()
  -- next() proposes a configuration table whose fields raise an error
  local bad = { next = function()
    return { setmetatable({}, { __index = function() error("no such field") end }) }
  end }

  it("releases what it took: its journal and its memory", function()
    local path = tmp(".jsonl")
    for _ = 1, 2 do
      local ok, err = pcall(tuner.tune, tuner, kernel(), { search = bad, journal = path })
      assert.is_false(ok)
      assert.matches("^searcher lua: spec/files_spec.lua:%d+: no such field\n", err)
    end
    assert.are.equal(6, #tuner:tune(kernel(), { repeats = 1, journal = path }))
    os.remove(path)
  end)

  it("gives Ctrl-C back", function()
    local child = script([[
local kt = require "ktlua"
local t = kt.tuner()
local k = t:kernel{ source = "__kernel void k(__global int *o) { o[0] = X; }", name = "k", global = 1,
                    args = { kt.array("int", 1):output() } }
k:param("X", { 1, 2 })
local bad = { next = function() return { setmetatable({}, { __index = function() error("no") end }) } end }
print(pcall(t.tune, t, k, { search = bad }))
-- popen, unlike os.execute, leaves SIGINT as it is while the command runs
local p = io.popen("kill -INT " .. io.open("/proc/self/stat"):read("n"))
p:close()
print("still running")]])
    local out, status = shell.run(shell.ktlua .. " " .. child)
    os.remove(child)
    assert.matches("^false\tsearcher lua: .-: no\n", out)
    assert.is_nil(out:find("still running", 1, true), out)
    assert.is_nil(out:find("interrupted", 1, true), out)
    assert.are.equal(130, status) -- ended by SIGINT
  end)
end)

describe("the output option", function()
  it("is checked before the first configuration", function()
    local ran = 0
    local function tune(output)
      local ok, err = pcall(tuner.tune, tuner, kernel(), { repeats = 1, output = output,
                                                          progress = function() ran = ran + 1 end })
      assert.is_false(ok)
      return err
    end
    assert.matches("tune options.output: cannot write /nonexistent/dir/r.json: No such file or directory$",
      tune("/nonexistent/dir/r.json"))
    local good, dir = tmp(".csv"), tmp(".json")
    os.execute("mkdir " .. dir)
    assert.matches("tune options.output%[2%]: cannot tell the format of 'r.txt': name it .csv or .json$",
      tune({ good, "r.txt" }))
    assert.matches("tune options.output%[2%]: cannot write " .. dir:gsub("%p", "%%%0") .. ": Is a directory$",
      tune({ good, dir }))
    assert.matches("tune options.output: expected a file name or a list of them$", tune(true))
    assert.are.equal(0, ran)
    assert.is_false(exists(good)) -- the check leaves nothing behind
    assert.are.equal(good .. ".tmp-*\n", (shell.run("echo " .. good .. ".tmp-*"))) -- no match
    os.remove(dir)
  end)
end)

describe("a results file", function()
  -- 20,000 results: a rewrite takes long enough to be killed in the middle.
  local function big_journal(path, n)
    local f = assert(io.open(path, "w"))
    f:write('{"format":"ktlua-journal","version":1,"task":"big","device":"d","kernels":["big"],',
      '"parameters":[{"name":"X","values":[')
    for i = 1, n do f:write(i > 1 and "," or "", i) end
    f:write(']}],"space":{"valid":', n, ',"all":', n, '}}\n')
    for i = 1, n do
      f:write(('{"index":%d,"config":{"X":%d},"status":"ok","time_ms":1.5,"samples_ms":[1.5,1.25],'
        .. '"sizes":[{"global":[64],"local":[8]}],"error":null}\n'):format(i - 1, i))
    end
    f:close()
  end

  it("is replaced whole: a kill while it is rewritten leaves the previous one", function()
    local journal, out = tmp(".jsonl"), tmp(".json")
    big_journal(journal, 20000)
    local small = kt.load(journal)
    local child = script([[
local kt = require "ktlua"
local r = kt.load((...))
io.write(io.open("/proc/self/stat"):read("n"), "\n")
io.flush()
while true do r:write(select(2, ...)) end]])
    for round = 1, 4 do
      -- the previous file: one result, or the whole set of the last round
      if round == 1 then
        local one = tmp(".jsonl")
        big_journal(one, 1)
        kt.load(one):write(out)
        os.remove(one)
      end
      local p = io.popen(("exec %s %s %s %s 2>&1"):format(shell.ktlua, child, journal, out))
      local pid = p:read("l")
      os.execute("sleep 0.0" .. round)
      os.execute("kill -KILL " .. pid)
      p:close()
      local n = #kt.load(out)
      assert.is_true(n == 1 or n == #small, "round " .. round .. ": " .. n .. " results")
    end
    os.execute("rm -f " .. out .. ".tmp-*")
    for _, f in ipairs({ journal, out, child }) do os.remove(f) end
  end)

  it("named through a symbolic link replaces the file the link names, and keeps the link", function()
    local one, real, link = tmp(".jsonl"), tmp(".json"), tmp(".json")
    big_journal(one, 3)
    local r = kt.load(one)
    assert.is_true(os.execute(("ln -s %s %s"):format(real, link)))
    r:write(link) -- the link names no file yet
    r:write(link)
    assert.are.equal(3, #kt.load(real))
    assert.are.equal(real .. "\n", (shell.run("readlink " .. link)))
    for _, f in ipairs({ one, real, link }) do os.remove(f) end
  end)
end)

describe("reading a file", function()
  it("stops at a stated limit, or at a byte no text holds, before reading more", function()
    assert.has_error(function() kt.load("/dev/zero") end, "/dev/zero is no text file (it holds a NUL byte)")
    assert.has_error(function() kt.replay("/dev/zero") end, "/dev/zero is no text file (it holds a NUL byte)")
    -- 3 MB of spaces, gzipped into a few KB
    local plain = tmp(".json")
    spit(plain, (" "):rep(3 << 20))
    assert.is_true(os.execute(("gzip -c %s > %s.gz"):format(plain, plain)))
    assert.has_error(function() kt.load(plain .. ".gz", { max_bytes = 1 << 20 }) end,
      plain .. ".gz expands (gunzipped) to more than 1048576 bytes, the limit")
    assert.has_error(function() kt.load(plain, { max_bytes = 1 << 20 }) end,
      plain .. " holds more than 1048576 bytes, the limit")
    assert.has_error(function() kt.load(plain, { max_bytes = 0 }) end,
      "bad argument #2 to 'load' (max_bytes must be a positive number of bytes)")
    assert.has_error(function() kt.load(plain, { limit = 1 }) end,
      "load options: unknown field 'limit' (expected one of: max_bytes, objective, maximize)")
    os.remove(plain)
    os.remove(plain .. ".gz")
  end)
end)

describe("kt.load", function()
  it("reads ktlua's own CSV files back", function()
    local o = kt.array("int", 4)
    local k1 = tuner:kernel{ source = "__kernel void k1(__global int *o) { o[get_global_id(0)] = X; }",
                             name = "k1", global = 4, group = 2, args = { o:output() } }
    local k2 = tuner:kernel{ source = "__kernel void k2(__global int *o) { o[0] += (S[0] == 'a'); }",
                             name = "k2", global = 1, args = { o } }
    local c = tuner:composition{ name = "c", kernels = { k1, k2 } }
    c:param("X", { 1, 2.5, -3 })
    c:param("S", { '"a,b"', '"b"' })
    c:reference(o, function(ref) ref:fill(1); ref[0] = 2 end)
    local csv = tmp(".csv")
    local r = tuner:tune(c, { repeats = 2, output = csv })
    local back = kt.load(csv)
    assert.are.equal(6, #back)
    assert.are.same({ { name = "X", values = { -3, 1, 2.5 } }, { name = "S", values = { '"a,b"', '"b"' } } },
      back.params)
    for i = 1, #r do
      assert.are.same({ r[i].index, r[i].config, r[i].status }, { back[i].index, back[i].config, back[i].status })
      assert.are.same({ { kernel = "k1", global = { 4 }, group = { 2 } }, { kernel = "k2", global = { 1 } } },
        back[i].sizes)
      assert.are.same(r[i].time_ms and ("%.6g"):format(r[i].time_ms),
        back[i].time_ms and ("%.6g"):format(back[i].time_ms))
      assert.are.equal(r[i].error and r[i].error:match("^[^\n]*"), back[i].error)
    end
    assert.are.equal(r[1].overheads_ms.build // 1e-3, back[1].overheads_ms.build // 1e-3)
    assert.are.equal("ok", back[1].status)
    os.remove(csv)
  end)

  it("says what it reads when a file is none of them", function()
    local path = tmp(".txt")
    spit(path, "hello")
    assert.has_error(function() kt.load(path) end,
      path .. ": neither ktlua\'s results (JSON, CSV or journal) nor T4 results, KTT results or a Kernel Tuner cache")
    spit(path, "index,X\n0,1\n")
    assert.has_error(function() kt.load(path) end, path .. ": line 1 is no header of ktlua's results")
    os.remove(path)
  end)

  it("refuses records with impossible indices", function()
    local path = tmp(".jsonl")
    tuner:tune(kernel(), { repeats = 1, journal = path, search = "exhaustive", stop = { count = 2 } })
    local text = slurp(path)
    for _, case in ipairs({ { "-5", "index -5 is no configuration index (an integer from 0)" },
                            { "99999999999", "index 99999999999 is beyond the space's 6 configurations" },
                            { "1.5", "index 1.5 is no configuration index (an integer from 0)" } }) do
      spit(path, (text:gsub('\n{"index":1,', '\n{"index":' .. case[1] .. ',')))
      assert.has_error(function() kt.load(path) end, path .. ": line 3: " .. case[2])
      local ok, err = pcall(tuner.tune, tuner, kernel(), { journal = path, resume = true })
      assert.is_false(ok)
      assert.are.equal(path .. ": line 3: " .. case[2], err)
    end
    os.remove(path)
  end)
end)
