-- Time limits on a machine busy with other jobs (core/base/run_delay.c): the
-- waits of a CPU device's process for a processor, and of a launcher's Lua
-- code, stretch the limit instead of failing the configuration. Each test
-- pins a tuning to one processor, measures its configuration there, then
-- runs it with a limit of twice that at a lower priority (nice 5) beside
-- four busy loops pinned to the same processor, where it gets a few
-- percent of the processor: ten times as long and more, whatever else the
-- machine is doing.
local shell = require "spec.support.shell"
local files = require "spec.support.files"

local script = [[
local kt = require "ktlua"
local limit, what = tonumber(arg[1]), arg[2]
-- Each run compiles its program: the kernel runs ten times as long, so that a limit on the old
-- terms (twice the longest compile for the kernel's own compile at its first launch) fails it.
local t = kt.tuner("opencl:0:0", { cache = false })
local o = kt.array("float", 1)
local k = t:kernel{ name = "spin", global = 1, group = 1, args = { o:output() }, source = [=[
__kernel void spin(__global float *o) {
  float x = 0;
  for (int i = 0; i < N; i++) x = x * 0.9999f + 1.0f;
  o[0] = x;
}]=] }
k:param("N", { what == "kernel" and 200000000 or 1 })
if what == "launcher" then
  k:launcher(function(run)
    run:launch(k)
    local x = 0
    for i = 1, 2000000 do x = x + i % 7 end
    return x
  end)
end
local r = t:tune(k, { repeats = 1, progress = false, time_limit = limit > 0 and limit or nil,
                     objective = what == "launcher" and "kernel+host" or nil })
print(r[1].status, ("%.6f"):format(r[1].time_ms or 0)) -- a launcher's: its kernel's and its host time
]]

-- Runs the script pinned to processor 0; with busy, at nice 5 beside four busy loops pinned there.
local function run(path, limit, what, busy)
  local loops = busy and "for i in 1 2 3 4; do taskset -c 0 sh -c 'while :; do :; done' >/dev/null 2>&1 & "
    .. "pids=\"$pids $!\"; done; " or ""
  local out = shell.run(("(pids=; %s %s taskset -c 0 %s %s %s %s; kill $pids 2>/dev/null)")
    :format(loops, busy and "nice -n 5" or "", shell.ktlua, path, limit, what))
  return out:match("([%w_]+)\t([%d.]+)\n$")
end

describe("a time limit on a busy machine", function()
  local schedstat = io.open("/proc/thread-self/schedstat")
  if schedstat then schedstat:close() end
  local taskset = shell.run("command -v taskset") ~= ""
  if not schedstat or not taskset then
    return pending("needs /proc's schedstat and taskset")
  end
  local path = files.tmpname(".lua")
  setup(function() files.write(path, script) end)
  teardown(function() os.remove(path) end)

  for _, what in ipairs({ "kernel", "launcher" }) do
    it("stretches by the processor's other jobs, not the verdict (" .. what .. ")", function()
      local status, ms = run(path, 0, what, false)
      assert.are.equal("ok", status)
      local limit = 2 * tonumber(ms) / 1000 + 0.05
      status = run(path, limit, what, true)
      assert.are.equal("ok", status, ("limit %.3f s"):format(limit))
    end)
  end
end)
