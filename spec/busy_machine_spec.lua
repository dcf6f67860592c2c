-- A CPU device on a machine busy with other jobs (issue 45): the timed runs
-- of a configuration whose device threads wait for a processor stop at 10
-- (crowded, waited_ms), the progress says the machine is busy and what the
-- tuning does, each time's spread is shown, and PoCL's threads follow the
-- processors free when the device process starts, unless the user set
-- them. The busy machine is made here, whatever else the machine does: a
-- tuning pinned to one processor at nice 5 beside four busy loops pinned
-- there (as busy_limits_spec does), or four busy loops anywhere.
local kt = require "ktlua"
local watch = require "ktlua.watch"
local shell = require "spec.support.shell"
local files = require "spec.support.files"

local script = [[
local kt = require "ktlua"
local repeats = arg[1] == "fixed" and 20 or { rse = 1e-9, min = 3, max = 50 } -- never precise enough
local t = kt.tuner("opencl:0:0", { cache = false })
local n = 1 << 16
local a, c = kt.array("float", n):random(1), kt.array("float", n)
local k = t:kernel{ name = "work", global = n, group = 1, args = { a:input(), c:output() }, source = [=[
__kernel void work(__global const float *a, __global float *c) {
  int i = get_global_id(0);
  float x = a[i];
  for (int j = 0; j < 200; j++) x = x * 0.999f + 0.5f;
  c[i] = x;
}]=] }
k:param("WG", { 32, 64 }, { group_x = "mul" })
local r = t:tune(k, { repeats = repeats, progress = true, output = arg[2] })
for _, x in ipairs(r:list()) do
  print(("result %d %s runs=%d crowded=%s waited=%s"):format(x.index, x.status, #x.samples_ms,
    tostring(x.crowded == true), tostring(x.waited_ms ~= nil and x.waited_ms > 0)))
end
r:print()
]]

local function has(cmd) return shell.run("command -v " .. cmd) ~= "" end

-- Runs the script pinned to processor 0 at nice 5 beside four busy loops pinned there.
local function run_busy(path, ...)
  local loops = "for i in 1 2 3 4; do taskset -c 0 sh -c 'while :; do :; done' >/dev/null 2>&1 & "
    .. "pids=\"$pids $!\"; done; "
  return shell.run(("(pids=; %s nice -n 5 taskset -c 0 %s %s %s; kill $pids 2>/dev/null)")
    :format(loops, shell.ktlua, path, table.concat({ ... }, " ")))
end

describe("a busy machine", function()
  local schedstat = io.open("/proc/thread-self/schedstat")
  if schedstat then schedstat:close() end
  if not schedstat or not has("taskset") then
    return pending("needs /proc's schedstat and taskset")
  end
  local path = files.tmpname(".lua")
  setup(function() files.write(path, script) end)
  teardown(function() os.remove(path) end)

  it("stops a configuration's timed runs at 10 and says why, with each time's spread", function()
    local json = files.tmpname(".json")
    local out = run_busy(path, "adaptive", json)
    assert.matches("result 0 ok runs=10 crowded=true waited=true\n", out)
    assert.matches("result 1 ok runs=10 crowded=true waited=true\n", out)
    -- said once, before the first configuration's line (on stderr)
    assert.matches("^ktlua: the machine is busy %(load average [%d.]+ on 1 processor; the "
      .. "device's threads waited %d+%% of a configuration's runs for a processor%); PoCL runs 1 "
      .. "thread, the processors free when its device process started %(POCL_MAX_PTHREAD_COUNT sets "
      .. "them%); a configuration whose threads wait that long stops at 10 timed runs %(more would "
      .. "time the other jobs%), and each time's spread is shown %(±: half the middle half of its "
      .. "runs%)\n%[1%]", out)
    assert.are.equal(1, shell.count(out, "the machine is busy"))
    assert.matches("\n%[1%] WG=32  ok  [%d.]+ ms ±[%d.]+%% %(busy: 10 runs%)  %(best [%d.]+ ms%)\n", out)
    assert.matches("  runs  spread  global  group  note\n", out)
    assert.matches("  10  +±[%d.]+%%  65536  ", out)
    -- kept in the results file, read back
    local r = kt.load(json)
    for _, x in ipairs(r:list()) do
      assert.is_true(x.crowded)
      assert.is_true(x.waited_ms > 0)
    end
    os.remove(json)
  end)

  it("keeps the number of runs a tuning asks for", function()
    local out = run_busy(path, "fixed")
    assert.matches("result 0 ok runs=20 crowded=false waited=true\n", out)
    assert.matches("result 1 ok runs=20 crowded=false waited=true\n", out)
  end)

  it("gives PoCL's device process the processors free, unless the user set its threads", function()
    local tiny = files.tmpname(".lua")
    files.write(tiny, [[
      local kt = require "ktlua"
      local t = kt.tuner("opencl:0:0")
      local c = kt.array("float", 64)
      local k = t:kernel{ name = "z", global = 64, group = 1, args = { c:output() },
        source = "__kernel void z(__global float *c) { c[get_global_id(0)] = 0; }" }
      k:param("WG", { 1, 2 }, { group_x = "mul" })
      print("threads", t:tune(k, { progress = false }).device_threads, t.device.compute_units)]])
    -- on two processors (pinned, whatever the machine has): four busy loops leave 1 free, and
    -- other jobs can only leave fewer
    local pin = shell.run("nproc --all"):match("^(%d+)") ~= "1" and "taskset -c 0,1 " or ""
    -- four busy loops (at nice 19: they only need to be ready to run), there before the tuner
    local loops = io.popen("pids=; for i in 1 2 3 4; do nice -n 19 sh -c 'while :; do :; done' & "
      .. "pids=\"$pids $!\"; done; echo $pids; wait", "r")
    local pids = loops:read("l")
    assert.matches("^%d+ %d+ %d+ %d+$", pids)
    local t0 = kt.clock()
    repeat
      local f = io.open("/proc/loadavg")
      local running = tonumber(f:read("l"):match("(%d+)/"))
      f:close()
      if running < 5 then watch.wait(0.01) end
    until running >= 5 or kt.clock() - t0 > 60
    local busy = shell.run(pin .. shell.ktlua .. " " .. tiny)
    local user = shell.run("POCL_MAX_PTHREAD_COUNT=2 " .. pin .. shell.ktlua .. " " .. tiny)
    shell.run("kill " .. pids)
    loops:close()
    local threads, counted = busy:match("^threads\t(%w+)\t(%d+)\n$")
    assert(counted, busy)
    if tonumber(counted) > 1 then
      assert.are.equal("1", threads)
    else
      assert.are.equal("nil", threads) -- one thread is all PoCL counts: none fewer
    end
    assert.matches("^threads\tnil\t%d+\n$", user)
    os.remove(tiny)
  end)
end)
