-- A tuning over several devices starts every device at once (core/multi/fleet.c,
-- core/eval/verdict_later.c): while the first device computes the references, the
-- others run their first configuration and keep its outputs, judged once the
-- references are in. The reference kernel here includes a named pipe, so its
-- compile waits until a writer opens the pipe: the watcher below opens it only when
-- a configuration has run (its kernel prints "ran X=.." on the device process's
-- stdout), which no device does before the references unless it starts early.
local shell = require "spec.support.shell"
local files = require "spec.support.files"

local script = [[
local kt = require "ktlua"
local gate, order = arg[1], {}
for x in arg[2]:gmatch("%d+") do order[#order + 1] = tonumber(x) end
local two = kt.tuner{ "opencl:0:0", "opencl:0:1" }
local n = 64
local c = kt.array("int", n)
local k = two:kernel{ name = "k", global = n, args = { c:output() }, source = [=[
__kernel void k(__global int *c) {
  if (get_global_id(0) == 0) printf("ran X=%d\n", X);
  c[get_global_id(0)] = X;
}]=] }
k:param("X", { 1, 2, 3, 4 })
local ref = two:kernel{ name = "ref", global = n, args = { c:output() },
  source = '#include "' .. gate .. '"\n__kernel void ref(__global int *c) { c[get_global_id(0)] = 1; }' }
k:reference(c, { kernel = ref })
local searcher = { init = function(self) self.at = 1 end, next = function(self, want)
  local got = {}
  while #got < want and self.at <= #order do got[#got + 1] = order[self.at]; self.at = self.at + 1 end
  return got
end, report = function() end }
local r = two:tune(k, { search = searcher, repeats = 1, progress = false })
for i = 1, #r do io.write(("result X=%d %s %s\n"):format(r[i].config.X, r[i].status, r[i].device)) end
]]

-- Runs the tuning in the given order of indices; returns its output, its exit
-- status and the first "ran" line, after which the watcher opened the gate.
local function run(order)
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir " .. dir .. " && mkfifo " .. dir .. "/gate"))
  files.write(dir .. "/early.lua", script)
  -- 120 s: a hang guard only (the gate never opened); the gate is opened
  -- read-write at the end so that no compile is left waiting on it.
  local out = shell.run(([[
(KTLUA_CACHE=off POCL_DEVICES="pthread pthread" timeout 120 %s %s/early.lua %s/gate %q 2>&1
 echo "status $?") | while IFS= read -r line; do
  printf '%%s\n' "$line"
  case $line in ran*) [ -e %s/opened ] || { echo "$line" > %s/opened; : > %s/gate; } ;; esac
done
: 1<> %s/gate]]):format(shell.ktlua, dir, dir, order, dir, dir, dir, dir))
  local opened = files.exists(dir .. "/opened") and files.read(dir .. "/opened") or ""
  os.execute("rm -rf " .. dir)
  return out, tonumber(out:match("status (%d+)")), opened:match("ran X=(%d+)")
end

local count = shell.count

describe("a tuning over several devices, before the references are in", function()
  it("runs the other device's first configuration, and finds it wrong once they are in", function()
    -- the first proposal goes to the first device, the second (X = 2) to the other
    local out, status, first = run("0 1 2 3")
    assert.are.equal(0, status, out)
    assert.are.equal("2", first, out)
    assert.matches("result X=2 invalid_output opencl:0:1\n", out, 1, true)
    assert.matches("result X=1 ok opencl:0:[01]\n", out)
    assert.are.equal(2, count(out, "result X=[34] invalid_output opencl:0:[01]\n"), out)
  end)

  it("and a right one right", function()
    local out, status, first = run("1 0 2 3")
    assert.are.equal(0, status, out)
    assert.are.equal("1", first, out)
    assert.matches("result X=1 ok opencl:0:1\n", out, 1, true)
    assert.are.equal(3, count(out, "result X=[234] invalid_output opencl:0:[01]\n"), out)
  end)
end)
