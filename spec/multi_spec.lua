-- One tuning over several devices (core/multi/fleet.c): PoCL gives two devices
-- of one model with POCL_DEVICES="pthread pthread". Devices are listed
-- once per process, so every tuning here runs in a child ktlua with that
-- environment.
local kt = require "ktlua"
local shell = require "spec.support.shell"
local files = require "spec.support.files"

local function run(code, devices)
  local path = files.tmpname(".lua")
  files.write(path, code)
  local out, status = shell.run(("POCL_DEVICES=%q %s %s"):format(devices or "pthread pthread",
                                                                 shell.ktlua, path))
  os.remove(path)
  return out, status
end

-- A task of 12 configurations whose work grows with W and V: W = 1, V = 0 (no loop) is by far
-- the fastest on any device. CRASH = 1 with W = 2 crashes its device
-- process; HANG = 1 with W = 3 waits forever; both only where asked.
local task = [[
local kt = require "ktlua"
local n = 2048
local a = kt.array("float", n):fill(function(i) return i end)
local c = kt.array("float", n)
local function task(tuner, opts)
  opts = opts or {}
  local k = tuner:kernel{ name = "w", global = n, args = { a:input(), c:output(), kt.int(n) },
                          options = ("-DCRASH=%d -DHANG=%d"):format(opts.crash or 0, opts.hang or 0),
                          source = [=[
__kernel void w(__global const float *a, __global float *c, int n) {
  int i = get_global_id(0);
#if CRASH == 1 && W == 2 && V == 1
  __global int *wild = (__global int *)((ulong)c ^ 0x7f0000000000UL);
  wild[i * 1000003] = 1;
#endif
#if HANG == 1 && W == 3 && V == 1
  while (a[0] == 0.0f || n > 0) { }
#endif
  float s = 0.0f;
  for (int r = 0; r < (W * (V + 1) - 1) * 3000; r++) s += a[(i + r) % n] * 1e-9f;
  c[i] = a[i] * 2.0f + s * 0.0f;
}]=] }
  k:param("W", { 1, 2, 3, 4 })
  k:param("V", { 0, 1, 2 })
  k:reference(c, function(ref) for i = 0, n - 1 do ref[i] = a[i] * 2 end end)
  return k
end
local function show(r)
  local seen, used = {}, {}
  for i = 1, #r do
    local x = r[i]
    seen[#seen + 1] = x.index
    used[x.device or "none"] = (used[x.device or "none"] or 0) + 1
    io.write(("%d %s %s\n"):format(x.index, x.status, x.device or "none"))
  end
  table.sort(seen)
  io.write("indices ", table.concat(seen, ","), "\n")
  for _, d in ipairs({ "opencl:0:0", "opencl:0:1", "none" }) do
    io.write("used ", d, " ", used[d] or 0, "\n")
  end
  local best = r:best()
  io.write("best ", best and (best.config.W .. "/" .. best.config.V) or "none", "\n")
  io.write("count ", #r, " stopped ", r.stopped, "\n")
end
]]

local count = shell.count

local function used(out, device)
  return tonumber(out:match("used " .. device:gsub("%p", "%%%0") .. " (%d+)"))
end

describe("a tuning over several devices", function()
  it("evaluates each configuration once, on both devices, and finds the best one device finds", function()
    local out, status = run(task .. [[
local two = kt.tuner{ "opencl:0:0", "opencl:0:1" }
print(tostring(two), #two.devices, two.devices[1], two.devices[2])
local r = two:tune(task(two), { repeats = 2, progress = false })
show(r)
two:close()
local one = kt.tuner("opencl:0:0")
io.write("one ")
local r1 = one:tune(task(one), { repeats = 2, progress = false })
print("single best", r1:best().config.W .. "/" .. r1:best().config.V, r1[1].device)
]])
    assert.are.equal(0, status, out)
    assert.matches("tuner on opencl:0:0 and 1 more %(pthread[^)]*%)\t2\topencl:0:0\topencl:0:1", out)
    assert.matches("indices 0,1,2,3,4,5,6,7,8,9,10,11\n", out, 1, true)
    assert.are.equal(12, count(out, "%d+ ok opencl:0:[01]\n"))
    assert.is_true(used(out, "opencl:0:0") >= 1 and used(out, "opencl:0:1") >= 1, out)
    assert.are.equal(0, used(out, "none"))
    assert.matches("count 12 stopped space explored", out, 1, true)
    local best = out:match("\nbest (%d+/%d+)")
    assert.are.equal(best, out:match("single best\t(%d+/%d+)"))
    assert.are.equal("1/0", best)
    assert.matches("single best\t%S+\tnil", out) -- one device: no device per result
  end)

  it("'all' takes every device of the first backend; errors name what is wrong", function()
    local out, status = run([[
local kt = require "ktlua"
local all = kt.tuner("all")
print("all", table.concat(all.devices, " "))
all:close()
local function try(f) local ok, e = pcall(f) print(ok, e) end
try(function() kt.tuner{ "opencl:0:0", "opencl:0:7" } end)
try(function() kt.tuner{ "opencl:0:0", "opencl:0:0" } end)
try(function() kt.tuner{ "opencl:0:0", 42 } end)
try(function() kt.tuner("gpu:all") end)
try(function() kt.tuner({ "opencl:0:0", "opencl:0:1" }, { isolate = false }) end)
local one = kt.tuner{ "opencl:0:1" }
print("one", tostring(one), #one.devices)
]])
    assert.are.equal(0, status, out)
    assert.matches("all\topencl:0:0 opencl:0:1\n", out, 1, true)
    assert.matches("false\t[^\n]*kt.tuner devices%[2%]: [^\n]*opencl:0:7", out)
    assert.matches("false\t[^\n]*kt.tuner: device opencl:0:0 is given twice %(devices 1 and 2%)", out)
    assert.matches("false\t[^\n]*kt.tuner devices%[2%]: [^\n]*device id string or device table", out)
    assert.matches('false\t[^\n]*kt.tuner%("gpu:all"%): this machine has no GPU', out)
    assert.matches("false\t[^\n]*tuner options.isolate: a tuner over several devices needs", out)
    assert.matches("one\ttuner on opencl:0:1 %(pthread[^)]*%)\t1", out)
  end)

  it("runs Lua on one thread at a time: generators, launchers, a Lua searcher, metrics, comparators", function()
    local out, status = run([[
local kt = require "ktlua"
local two = kt.tuner{ "opencl:0:0", "opencl:0:1" }
local n = 256
local a, c = kt.array("float", n):fill(1), kt.array("float", n)
local k = two:kernel{ name = "sum", global = n, args = { a:input(), c:output() },
  source = function(cfg)
    local terms = {}
    for t = 1, cfg.U do terms[t] = "a[i]" end
    return "__kernel void sum(__global const float *a, __global float *c) "
        .. "{ int i = get_global_id(0); c[i] = " .. table.concat(terms, " + ") .. "; }"
  end }
k:param("U", { 1, 2, 3, 4, 5, 6, 7, 8 })
k:param("R", { 1, 2 })
local launches = 0
k:launcher(function(run, cfg)
  for _ = 1, cfg.R do run:launch(k) end
  launches = launches + cfg.R
  run:read(c)
end)
local references = 0
k:reference(c, function(ref) references = references + 1; ref:fill(3) end, { compare = function(got, want)
  return got[0] == want[0], "not 3" end })
local order, heard = { 15, 3, 5, 0, 9, 2, 7, 11, 4, 13, 6, 1, 8, 10, 12, 14 }, {}
local searcher = { next = function(self, want)
  local got = {}
  while #got < want and self.at <= #order do got[#got + 1] = order[self.at]; self.at = self.at + 1 end
  return got
end, report = function(self, index, result) heard[#heard + 1] = index .. result.status end,
init = function(self) self.at = 1 end }
local r = two:tune(k, { search = searcher, repeats = 1, progress = false,
                        metrics = { twice = function(res, cfg) return 2 * cfg.U end } })
local ok, used = 0, {}
for i = 1, #r do
  if r[i].status == "ok" then ok = ok + 1 end
  used[r[i].device] = true
  assert(r[i].status ~= "ok" or r[i].metrics.twice == 2 * r[i].config.U)
end
print("results", #r, "ok", ok, "heard", #heard, "launches>=", launches >= 16, r.stopped)
print("devices", used["opencl:0:0"], used["opencl:0:1"], "best U", r:best().config.U,
      "references", references)
]])
    assert.are.equal(0, status, out)
    assert.matches("results\t16\tok\t2\theard\t16\tlaunches>=\ttrue\tspace explored", out)
    assert.matches("devices\ttrue\ttrue\tbest U\t3\treferences\t1\n", out, 1, true) -- once for both
  end)

  it("runs the example of doc/scaling.md as its comments say", function()
    local page = files.read("doc/scaling.md")
    local code = page:match("## Several devices.-```lua\n(.-)```")
    local out, status = run(code)
    assert.are.equal(0, status, out)
    assert.are.equal("2\topencl:0:0\n8\ttrue\n", out)
  end)

  it("shows progress a line per configuration, with its device", function()
    local out, status = run([[
local kt = require "ktlua"
local tuner = kt.tuner("all")
local a, c = kt.array("float", 64):fill(1), kt.array("float", 64)
local k = tuner:kernel{ name = "twice", global = 64, group = 1, args = { a:input(), c:output() },
  source = "__kernel void twice(__global const float *a, __global float *c) "
        .. "{ int i = get_global_id(0); c[i] = 2.0f * a[i]; }" }
k:param("WG", { 1, 2, 4, 8, 16 }, { group_x = "mul" })
k:reference(c, function(ref) ref:fill(2) end)
tuner:tune(k, { progress = true, repeats = 1 }):print()
]])
    assert.are.equal(0, status, out)
    assert.matches("\n#  WG  status  time_ms  runs  spread  device      global  group  note\n", out, 1, true)
    assert.are.equal(5, count(out, "\n%d   *%d+  ok  +[%d.]+ +1 +%-  opencl:0:[01]  64 "))
    assert.are.equal(5, count(out, "%[%d%] WG=%d+  ok  [%d.]+ ms  %(best [%d.]+ ms%)  on opencl:0:[01]\n"))
    for i = 1, 5 do assert.matches("[" .. i .. "] WG=", out, 1, true) end
  end)

  it("runs a task with a launcher a device at a time (its host arrays are shared), under time limits", function()
    local out, status = run([[
local kt = require "ktlua"
local two = kt.tuner("all")
local n = 4096
local a, c = kt.array("float", n):fill(1), kt.array("float", n)
local k = two:kernel{ name = "slow", global = n, args = { a:input(), c:output() }, source = [=[
__kernel void slow(__global const float *a, __global float *c) {
  int i = get_global_id(0);
  float s = 0.0f;
  for (int r = 0; r < 20000; r++) s += a[(i + r) % 4096] * 1e-9f;
  c[i] = a[i] + X + s * 0.0f;
}]=] }
k:param("X", { 0, 1, 2, 3, 4, 5, 6, 7 })
local active, most = 0, 0
k:launcher(function(run, cfg)
  if cfg.X == 5 then while true do end end -- stuck in Lua: the time limit stops it
  active = active + 1
  most = math.max(most, active)
  run:launch(k)
  run:read(c) -- into the host array that every device's launcher shares
  active = active - 1
end)
local r = two:tune(k, { repeats = 1, progress = false, time_limit = 2 })
local statuses, used = {}, {}
for i = 1, #r do statuses[r[i].index + 1] = r[i].status; used[r[i].device] = true end
print("at most", most, table.concat(statuses, " "), used["opencl:0:0"], used["opencl:0:1"])
]])
    assert.are.equal(0, status, out)
    assert.matches("at most\t1\tok ok ok ok ok timeout ok ok\ttrue\ttrue\n", out, 1, true)
  end)

  it("leaves the arrays' host contents as it found them, from the one copy its devices share", function()
    local out, status = run([[
local kt = require "ktlua"
local three = kt.tuner("all")
local n = 256
local a, c = kt.array("float", n):fill(2), kt.array("float", n):fill(7)
local k = three:kernel{ name = "add", global = n, args = { a:input(), c:output() }, source = [=[
__kernel void add(__global const float *a, __global float *c) {
  int i = get_global_id(0);
  c[i] = a[i] + X;
}]=] }
k:param("X", { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 })
local seen = {}
k:launcher(function(run, cfg)
  run:launch(k)
  run:read(c) -- into the host array: each device's next run starts from the kept contents again
  seen[#seen + 1] = c[0] - cfg.X
end)
local r = three:tune(k, { repeats = 1, progress = false })
local used = {}
for i = 1, #r do used[r[i].device] = (used[r[i].device] or 0) + 1 end
local devices = 0
for _ in pairs(used) do devices = devices + 1 end
print(#r, devices, table.concat(seen, " ", 1, 3), c[0], c[n - 1], a[0], a[n - 1])
]], "pthread pthread pthread")
    assert.are.equal(0, status, out)
    assert.are.equal("12\t3\t2.0 2.0 2.0\t7.0\t7.0\t2.0\t2.0\n", out)
  end)

  it("reports to the searcher every proposal, also one proposed again while it is in flight", function()
    local out, status = run([[
local kt = require "ktlua"
local two = kt.tuner("all")
local c = kt.array("int", 64)
local k = two:kernel{ name = "k", global = 64, args = { c:output() },
  source = "__kernel void k(__global int *c) { c[get_global_id(0)] = X; }" }
k:param("X", { 0, 1, 2, 3, 4, 5, 6, 7 })
local batches = { { 0, 1 }, { 1 }, { 2, 3 }, { 3, 2 }, { 4, 5 }, { 5 }, { 6, 7 }, { 7, 6, 0 } }
local heard, proposed = {}, 0
local searcher = { init = function(self) self.at = 0 end,
  next = function(self, want)
    self.at = self.at + 1
    local b = batches[self.at] or {}
    proposed = proposed + #b
    return b
  end,
  report = function(self, index) heard[index] = (heard[index] or 0) + 1 end }
local r = two:tune(k, { search = searcher, repeats = 1, progress = false })
local total, counts = 0, {}
for x = 0, 7 do total = total + (heard[x] or 0); counts[#counts + 1] = heard[x] or 0 end
print("results", #r, "proposed", proposed, "heard", total, table.concat(counts, " "))
]])
    assert.are.equal(0, status, out)
    assert.matches("results\t8\tproposed\t15\theard\t15\t2 2 2 2 1 2 2 2\n", out, 1, true)
  end)

  it("waits for what is in flight when the searcher proposes only that", function()
    local out, status = run([[
local kt = require "ktlua"
local two = kt.tuner("all")
local c = kt.array("int", 64)
local k = two:kernel{ name = "k", global = 64, args = { c:output() },
  source = "__kernel void k(__global int *c) { c[get_global_id(0)] = X; }" }
k:param("X", { 0, 1, 2, 3, 4, 5 })
local asked = 0
-- at most two configurations without a result; asked for more, it names those again
local searcher = { init = function(self) self.given, self.open = 0, {} end,
  next = function(self, want)
    asked = asked + 1
    local out = {}
    for index in pairs(self.open) do out[#out + 1] = index end
    table.sort(out)
    while #out < want and self.given < 6 and #out < 2 do
      self.open[self.given] = true
      out[#out + 1] = self.given
      self.given = self.given + 1
    end
    while #out > 0 and #out < want do out[#out + 1] = out[1] end
    return out
  end,
  report = function(self, index) self.open[index] = nil end }
local r = two:tune(k, { search = searcher, repeats = 1, progress = false, lookahead = 2 })
print(#r, r.stopped, asked < 100)
]])
    assert.are.equal(0, status, out)
    assert.matches("6\tspace explored\ttrue\n", out, 1, true)
  end)

  it("refuses devices of different models, naming both", function()
    local out, status = run([[
local kt = require "ktlua"
local ok, e = pcall(kt.tuner, { "opencl:0:0", "opencl:0:1" })
print(ok, e)
]], "basic pthread")
    assert.are.equal(0, status, out)
    assert.matches("false\t[^\n]*kt.tuner: devices opencl:0:0 %(basic[^)]*%) and opencl:0:1 "
                   .. "%(pthread[^)]*%) are different models: one tuning runs on devices of one model", out)
  end)

  it("loses only the configuration whose kernel crashed its device process", function()
    local out, status = run(task .. [[
local two = kt.tuner{ "opencl:0:0", "opencl:0:1" }
local r = two:tune(task(two, { crash = 1 }), { repeats = 1, progress = false })
show(r)
for i = 1, #r do if r[i].status ~= "ok" then print("error", r[i].error) end end
]])
    assert.are.equal(0, status, out)
    assert.matches("count 12 stopped space explored", out, 1, true)
    assert.matches("indices 0,1,2,3,4,5,6,7,8,9,10,11\n", out, 1, true)
    assert.are.equal(11, count(out, "%d+ ok opencl:0:[01]\n"))
    assert.are.equal(1, count(out, "4 runtime_failed opencl:0:[01]\n")) -- W = 2, V = 1
    assert.matches("error\tthe device process died of signal %d+", out)
  end)

  it("stops a configuration past its time limit, and the other device goes on", function()
    local out, status = run(task .. [[
local two = kt.tuner{ "opencl:0:0", "opencl:0:1" }
local r = two:tune(task(two, { hang = 1 }), { repeats = 1, progress = false, time_limit = 2 })
show(r)
]])
    assert.are.equal(0, status, out)
    assert.matches("count 12 stopped space explored", out, 1, true)
    assert.are.equal(11, count(out, "%d+ ok opencl:0:[01]\n"))
    assert.are.equal(1, count(out, "7 timeout opencl:0:[01]\n")) -- W = 3, V = 1
  end)

  it("keeps a journal that a later tuning resumes, and writes the device of each result", function()
    local journal, csv, json = files.tmpname(".jsonl"), files.tmpname(".csv"), files.tmpname(".json")
    local code = [[
local two = kt.tuner{ "opencl:0:0", "opencl:0:1" }
local r = two:tune(task(two), { repeats = 1, progress = false, journal = %q, resume = %s,
                                search = { "random", seed = 3 }, stop = { count = %d },
                                output = { %q, %q } })
show(r)
print("devices", #two.devices)
]]
    local out, status = run(task .. code:format(journal, "false", 5, csv, json))
    assert.are.equal(0, status, out)
    assert.matches("count 5 stopped count", out, 1, true)
    assert.are.equal(6, #files.lines(journal))
    local first = kt.load(journal)
    assert.are.equal(5, #first)
    for i = 1, #first do assert.matches("^opencl:0:[01]$", first[i].device) end
    out, status = run(task .. code:format(journal, "true", 12, csv, json))
    assert.are.equal(0, status, out)
    assert.matches("count 12 stopped count", out, 1, true)
    assert.matches("indices 0,1,2,3,4,5,6,7,8,9,10,11\n", out, 1, true)
    assert.are.equal(13, #files.lines(journal)) -- the five resumed are not appended again
    for _, path in ipairs({ csv, json, journal }) do
      local r = kt.load(path)
      assert.are.equal(12, #r)
      for i = 1, #r do assert.matches("^opencl:0:[01]$", r[i].device, nil, path) end
      local by_index = {}
      for i = 1, #r do by_index[r[i].index] = r[i].device end
      for i = 1, #first do assert.are.equal(first[i].device, by_index[first[i].index]) end
    end
    -- one device resumes what two began: it takes their results, devices and all
    out, status = run(task .. code:gsub('kt.tuner{ "opencl:0:0", "opencl:0:1" }', 'kt.tuner("opencl:0:1")')
                                  :format(journal, "true", 12, csv, json))
    assert.are.equal(0, status, out)
    assert.matches("count 12 stopped count", out, 1, true)
    assert.are.equal(13, #files.lines(journal))
    assert.are.equal(12, count(out, "%d+ ok opencl:0:[01]\n"))
    assert.matches("devices\t1\n", out, 1, true)
    os.remove(journal)
    os.remove(csv)
    os.remove(json)
  end)

  it("stops on Ctrl-C once the configurations in flight are in, keeping them in the journal", function()
    local journal = files.tmpname(".jsonl")
    local out, status = run(task .. ([[
local two = kt.tuner{ "opencl:0:0", "opencl:0:1" }
local pid = io.open("/proc/self/stat"):read("n")
local calls = 0
two:tune(task(two), { repeats = 1, journal = %q, progress = function(res, all)
  calls = calls + 1
  assert(#all == calls and all[#all].index == res.index)
  io.write("progress ", calls, " ", res.device, "\n")
  if calls == 3 then
    -- the other device's configuration is in flight meanwhile
    require("spec.support.signals").send(pid, "INT")
  end
end })
print("not reached")
]]):format(journal))
    assert.are.equal(1, status, out)
    assert.matches("interrupted: finishing the configuration in flight", out, 1, true)
    assert.matches("tuning of w interrupted after %d+ configurations", out)
    assert.is_nil(out:find("not reached", 1, true))
    local n = tonumber(out:match("interrupted after (%d+) configurations"))
    assert.is_true(n == 3 or n == 4, out) -- the third, and what was in flight
    assert.are.equal(n, count(out, "progress %d+ opencl:0:[01]\n"))
    assert.are.equal(n + 1, #files.lines(journal))
    os.remove(journal)
  end)
end)
