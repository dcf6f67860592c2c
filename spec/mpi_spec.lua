-- One tuning over the devices of several MPI ranks (core/mpi*.c): every
-- run is `mpirun --oversubscribe -np N ktlua script.lua` on PoCL, with
-- Open MPI's shared-memory transport only (no network probing).
local shell = require "spec.support.shell"
local files = require "spec.support.files"

local version = shell.run(shell.ktlua .. " --version")
local built = version:match("MPI: Open MPI") ~= nil
local have_mpirun = select(2, shell.run("command -v mpirun")) == 0

-- Open MPI's environment: root allowed (CI containers), shared memory
-- between ranks of one host; sanitized runs unwind slowly so that Open
-- MPI's own allocations show its frames (spec/support/lsan.supp).
local env = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader "
  .. "OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1 "
if os.getenv("KTLUA_SANITIZED") then
  env = env .. ("LSAN_OPTIONS=%q "):format((os.getenv("LSAN_OPTIONS") or "") .. ":fast_unwind_on_malloc=0")
end

-- A small exhaustive tuning (9 configurations) whose best is fixed by a
-- metric, so that every way of running it must find the same one. Its
-- arguments: --device=SPEC, --journal=FILE, --kill_rank_after=N (SIGKILL
-- to the last rank at the first result from another rank after N results,
-- when the last rank has a configuration in flight), --kill_all_after=N (to
-- every rank after N results), --interrupt_after=N (SIGINT to rank 0, as
-- Ctrl-C without MPI, after N results).
local script = [[
local kt = require "ktlua"
local opt = {}
for _, a in ipairs(arg) do
  local k, v = a:match("^%-%-([%w_]+)=(.*)$")
  if k then opt[k] = v end
end
local function device(d)
  if d and d:find(",") then
    local list = {}
    for id in d:gmatch("[^,]+") do list[#list + 1] = id end
    return list
  end
  return d
end
local mpi = kt.mpi()
local tuner = kt.tuner(device(opt.device))
local n = 4096
local a = kt.array("float", n):fill(function(i) return i end)
local b = kt.array("float", n):random(42)
local c = kt.array("float", n)
local k = tuner:kernel{ name = "vadd", global = n, group = 1,
  args = { a:input(), b:input(), c:output(), kt.int(n) }, source = [=[
__kernel void vadd(__global const float *a, __global const float *b, __global float *c, int n) {
  int i = get_global_id(0) * VEC;
  for (int v = 0; v < VEC; v++) if (i + v < n) c[i + v] = a[i + v] + b[i + v];
}]=] }
k:param("WG", { 16, 32, 64 }, { group_x = "mul" })
k:param("VEC", { 1, 2, 4 }, { global_x = "div" })
k:reference(c, function(ref) for i = 0, n - 1 do ref[i] = a[i] + b[i] end end)
local calls, killed = 0, false
local r = tuner:tune(k, { search = "exhaustive", journal = opt.journal,
  metrics = { score = function(res) return (res.config.WG - 32) ^ 2 + res.config.VEC end },
  objective = "score",
  progress = function(res)
    calls = calls + 1
    local pids = {}
    for _, p in ipairs(kt.mpi().ranks) do pids[#pids + 1] = p.pid end
    local last = (res.device or ""):match("^mpi:(%d+):") == tostring(mpi.size - 1)
    if not killed and tonumber(opt.kill_rank_after) and calls >= tonumber(opt.kill_rank_after)
       and not last then
      killed = true
      os.execute("kill -9 " .. pids[#pids])
    elseif tonumber(opt.kill_all_after) == calls then
      os.execute("kill -9 " .. table.concat(pids, " ") .. " $PPID") -- $PPID: this rank 0
    elseif tonumber(opt.interrupt_after) == calls then
      require("spec.support.signals").send(io.open("/proc/self/stat"):read("n"), "INT")
    end
  end })
local seen, used, failed = {}, {}, {}
for i = 1, #r do
  local x = r[i]
  local key = x.config.WG .. "/" .. x.config.VEC
  assert(not seen[key], "evaluated twice: " .. key)
  seen[key] = true
  used[x.device or "none"] = (used[x.device or "none"] or 0) + 1
  if x.status ~= "ok" then failed[#failed + 1] = x.status .. ": " .. tostring(x.error) end
end
local list = {}
for d, count in pairs(used) do list[#list + 1] = d .. "=" .. count end
table.sort(list)
local alive = {}
for rank, p in ipairs(mpi.size > 1 and kt.mpi().ranks or {}) do alive[#alive + 1] = rank .. "=" .. tostring(p.alive) end
print("size " .. mpi.size .. " tuner " .. tuner.device.id)
print("count " .. #r .. " best " .. r:best().config.WG .. "/" .. r:best().config.VEC)
print("used " .. table.concat(list, " "))
print("failed " .. #failed .. " " .. table.concat(failed, "; "))
print("alive " .. table.concat(alive, " "))
]]

local path = files.tmpname(".lua")
files.write(path, script)

-- `timeout 600` only ends a hang: sanitized three-rank tunings on a loaded 2-core machine with
-- PoCL's cache off ran past 120 s.
local function mpirun(np, args, opts)
  opts = opts or {}
  local cmd = ("%s%stimeout 600 mpirun %s-np %d %s %s %s"):format(env, opts.env or "",
    opts.recovery and "--enable-recovery " or "", np, shell.ktlua, opts.before or "",
    opts.script or path) .. " " .. (args or "")
  return shell.run(cmd)
end

local journal_configs = require "spec.support.journal_configs"
local results_of, distinct = journal_configs.of, journal_configs.distinct

describe("MPI", function()
  if not built or not have_mpirun then
    it("is pending", function()
      pending(not built and "this ktlua was built without MPI (no Open MPI headers)"
              or "mpirun is not installed")
    end)
    return
  end
  teardown(function() os.remove(path) end)

  it("says it is built in", function()
    assert.matches("; MPI: Open MPI v%d", version)
  end)

  it("tunes over every rank's device: each configuration once, the same best as alone", function()
    local out, code = shell.run(shell.ktlua .. " " .. path)
    assert.are.equal(0, code, out)
    assert.matches("size 1 tuner opencl:0:0\ncount 9 best 32/1\nused none=9\nfailed 0", out)
    out, code = mpirun(2)
    assert.are.equal(0, code, out)
    assert.matches("size 2 tuner opencl:0:0\ncount 9 best 32/1\n", out)
    assert.matches("failed 0 \nalive 1=true", out)
    local total = 0
    for dev, count in out:gmatch("([%w:]+)=(%d+)") do
      if dev:match("opencl") then
        assert.is_truthy(dev == "opencl:0:0" or dev == "mpi:1:opencl:0:0", dev)
        total = total + tonumber(count)
      end
    end
    assert.are.equal(9, total)
  end)

  it("runs on the other ranks' devices alone when asked, each rank's picked by its local rank", function()
    local out, code = mpirun(3, "--device=mpi:1:opencl:0:1,mpi:2:opencl:0:2",
                             { env = 'POCL_DEVICES="pthread pthread pthread" ' })
    assert.are.equal(0, code, out)
    assert.matches("size 3 tuner mpi:1:opencl:0:1\ncount 9 best 32/1\n", out)
    local one, two = out:match("used mpi:1:opencl:0:1=(%d+) mpi:2:opencl:0:2=(%d+)\n")
    assert.are.equal(9, tonumber(one) + tonumber(two), out)
    assert.matches("failed 0 \nalive 1=true 2=true", out)
    -- kt.mpi_devices: rank r gets the device at its local rank.
    local info = files.tmpname(".lua")
    files.write(info, [[
local kt = require "ktlua"
local m = kt.mpi()
print(m.size, m.rank, m.built, table.concat(kt.mpi_devices(), ","))
for r, p in ipairs(m.ranks) do print(r, p.local_rank, math.type(p.pid), p.alive) end
]])
    out, code = mpirun(3, "", { script = info, env = 'POCL_DEVICES="pthread pthread pthread" ' })
    os.remove(info)
    assert.are.equal(0, code, out)
    assert.matches("3\t0\ttrue\topencl:0:0,mpi:1:opencl:0:1,mpi:2:opencl:0:2\n"
                   .. "1\t1\tinteger\ttrue\n2\t2\tinteger\ttrue\n", out)
  end)

  it("says which rank has no such device, and the job ends", function()
    local out, code = mpirun(2, "--device=opencl:0:7")
    assert.are_not.equal(0, code)
    assert.matches("MPI rank 0 %(on [^)]+%) has no device 'opencl:0:7'; it sees: opencl:0:0 %(", out)
    -- Rank 2 sees no OpenCL platform at all (an ICD directory with none).
    out, code = shell.run(("%stimeout 600 mpirun -np 2 %s %s : -np 1 -x OCL_ICD_VENDORS=/nonexistent %s %s")
                          :format(env, shell.ktlua, path, shell.ktlua, path))
    assert.are_not.equal(0, code)
    assert.matches("MPI rank 2 %(on [^)]+%) has no device 'default'; it sees: no devices at all", out)
  end)

  it("refuses an unknown device and a device given twice", function()
    local out, code = mpirun(2, "--device=opencl:0:0,mpi:1:opencl:0:9")
    assert.are_not.equal(0, code)
    assert.matches("kt.tuner devices%[2%]: [^\n]*no device 'mpi:1:opencl:0:9': no device has that id; the devices here: "
                   .. "opencl:0:0 %([^)]*%), mpi:1:opencl:0:0 %(", out)
    out, code = mpirun(2, "--device=mpi:1:opencl:0:0,mpi:1:opencl:0:0")
    assert.are_not.equal(0, code)
    assert.matches("device mpi:1:opencl:0:0 is given twice %(devices 1 and 2%)", out)
  end)

  it("restarts another rank's device process after a crash and past a time limit", function()
    local faults = files.tmpname(".lua")
    files.write(faults, [[
local kt = require "ktlua"
local tuner = kt.tuner("mpi:1:opencl:0:0")
local n = 1024
local a = kt.array("float", n):fill(function(i) return i end)
local c = kt.array("float", n)
local k = tuner:kernel{ name = "w", global = n, args = { a:input(), c:output(), kt.int(n) }, source = [=[
__kernel void w(__global const float *a, __global float *c, int n) {
  int i = get_global_id(0);
#if W == 2
  __global int *wild = (__global int *)((ulong)c ^ 0x7f0000000000UL);
  wild[i * 1000003] = 1;
#endif
#if W == 3
  while (a[0] == 0.0f || n > 0) { }
#endif
  c[i] = a[i] * 2.0f;
}]=] }
k:param("W", { 1, 2, 3, 4 })
k:reference(c, function(ref) for i = 0, n - 1 do ref[i] = a[i] * 2 end end)
local r = tuner:tune(k, { repeats = 1, progress = false, time_limit = 1 })
for i = 1, #r do print(r[i].config.W, r[i].status, r[i].error) end
]])
    local out, code = mpirun(2, "", { script = faults })
    os.remove(faults)
    assert.are.equal(0, code, out)
    assert.matches("1\tok\tnil\n2\truntime_failed\tthe device process on MPI rank 1 died of signal %d+ "
                   .. "[^\n]*\n3\ttimeout\tthe configuration ran past its time limit %([%d.]+ s%); its "
                   .. "device process was stopped\n4\tok\tnil\n", out)
  end)

  it("finishes the tuning on the other ranks when one is killed, nothing lost", function()
    local journal = files.tmpname(".jsonl")
    local out = mpirun(3, "--kill_rank_after=2 --journal=" .. journal, { recovery = true })
    assert.matches("size 3 tuner opencl:0:0\ncount 9 best 32/1\n", out)
    -- The configuration in flight on the dead rank ran again on another.
    assert.matches("failed 0 \nalive 1=true 2=false", out)
    local configs = results_of(journal)
    os.remove(journal)
    assert.are.equal(9, #configs)
    assert.is_true(distinct(configs))
  end)

  it("is left out of build/ktlua-nompi (make bundle's), which refuses to run under mpirun", function()
    local out, code = shell.run("env -u MAKEFLAGS -u MAKELEVEL make -s build/ktlua-nompi")
    assert.are.equal(0, code, out)
    out = shell.run("build/ktlua-nompi --version")
    assert.matches("; MPI: not built in %(no mpi.h at build time%)%)", out)
    out, code = shell.run(env .. "timeout 600 mpirun -np 2 build/ktlua-nompi " .. path)
    assert.are_not.equal(0, code)
    assert.matches("ktlua: this ktlua was built without MPI %(no Open MPI headers%), so under "
                   .. "mpirun each of the 2 ranks would tune alone", out)
    out, code = shell.run("build/ktlua-nompi " .. path)
    assert.are.equal(0, code, out)
    assert.matches("size 1 tuner opencl:0:0\ncount 9 best 32/1\n", out)
  end)

  it("stops on SIGINT to rank 0 once the configurations in flight are in, as without MPI", function()
    local journal = files.tmpname(".jsonl")
    local out, code = mpirun(3, "--interrupt_after=3 --journal=" .. journal)
    assert.are_not.equal(0, code)
    assert.matches("interrupted: finishing the configuration in flight", out, 1, true)
    local n = tonumber(out:match("tuning of vadd interrupted after (%d+) configurations"))
    assert.is_true(n and n >= 3 and n <= 5, out) -- the third, and what was in flight
    local configs = results_of(journal)
    os.remove(journal)
    assert.are.equal(n, #configs)
    assert.is_true(distinct(configs))
  end)

  it("resumes from rank 0's journal after the whole job was killed", function()
    local journal = files.tmpname(".jsonl")
    local out, code = mpirun(3, "--kill_all_after=4 --journal=" .. journal)
    assert.are_not.equal(0, code)
    local before = results_of(journal)
    assert.are.equal(4, #before, out)
    out, code = mpirun(3, "--journal=" .. journal, { before = "--resume" })
    assert.are.equal(0, code, out)
    assert.matches("count 9 best 32/1\n", out)
    local after = results_of(journal)
    os.remove(journal)
    assert.are.equal(9, #after)
    assert.is_true(distinct(after))
    for i = 1, 4 do assert.are.equal(before[i], after[i]) end
  end)
end)
