-- One tuning across MPI ranks that stand for nodes, losing one (issue 44):
-- 4 ranks, each with a host name (KTLUA_HOST) and a program cache folder
-- (KTLUA_CACHE) of its own, 5 ms on the wire for every message between
-- ranks, each rank in a network namespace of its own (an address of its
-- own, TCP between ranks) where the spec may make them (root:
-- scripts/mpi-netns.sh; MPI_NODES_NETNS=off leaves them out), else on the
-- host over shared memory. The 5 ms are the kernel's (tc netem on each
-- rank's interface) where it has netem, else ktlua's (KTLUA_MPI_LATENCY_MS).
-- The tuning (bench/mpi/nodes.lua) runs on the devices of ranks 1-3; rank
-- 0 keeps the searcher and the journal. Kills come at seeded moments, so
-- the verdict is the same on any machine: the final set of configurations
-- and statuses is the kill-free run's, the journal holds each
-- configuration once, and no process of the job is left.
local shell = require "spec.support.shell"
local files = require "spec.support.files"
local wait = require "spec.support.wait"

local version = shell.run(shell.ktlua .. " --version")
local built = version:match("MPI: Open MPI") ~= nil
local have_mpirun = select(2, shell.run("command -v mpirun")) == 0
local script = "bench/mpi/nodes.lua"
local devices = "--device=mpi:1:opencl:0:0,mpi:2:opencl:0:0,mpi:3:opencl:0:0"
local RANKS = 4

local env = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
  .. "OMPI_MCA_rmaps_base_oversubscribe=1 "
if os.getenv("KTLUA_SANITIZED") then
  env = env .. ("LSAN_OPTIONS=%q "):format((os.getenv("LSAN_OPTIONS") or "") .. ":fast_unwind_on_malloc=0")
end

local pid = io.open("/proc/self/stat"):read("n")
local tag = "k" .. pid % 100000          -- this file's namespaces (plain and sanitized differ)
local netns = built and have_mpirun and os.getenv("MPI_NODES_NETNS") ~= "off" and
  select(2, shell.run("scripts/mpi-netns.sh check")) == 0
local work = files.tmpname("-nodes")     -- the ranks' cache folders, journals
local mark = "KTLUA_NODES_MARK=" .. pid  -- every process of the jobs has it
local root = shell.run("pwd"):match("[^\n]+") -- the checkout's folder
local latency = "-x KTLUA_MPI_LATENCY_MS=5 " -- none once netem delays the packets

-- mpirun over 4 ranks, rank r named node<r> with the cache folder
-- <cache>/node<r> (or one folder for all: opts.shared), its arguments after
-- the script; opts.recovery: --enable-recovery (a lost rank does not end
-- the job); opts.before: ktlua's options before the script; opts.exe[r],
-- opts.args[r]: rank r's executable and arguments (by default ktlua, and
-- none but rank 0's).
local function mpirun(args, opts)
  opts = opts or {}
  local cache = opts.cache or work .. "/cache"
  local contexts = {}
  for r = 0, RANKS - 1 do
    local folder = opts.shared and cache or ("%s/node%d"):format(cache, r)
    local prefix = netns and ("ip netns exec %sn%d "):format(tag, r) or ""
    local own = r == 0 and (" %s %s %s"):format(opts.before or "", script, args) or ""
    contexts[#contexts + 1] = ("-np 1 -x KTLUA_HOST=node%d -x KTLUA_CACHE=%s %s%s%s"):format(
      r, folder, prefix, (opts.exe or {})[r] or shell.ktlua, opts.args and opts.args[r] and " " .. opts.args[r] or own)
  end
  local transport = netns and ("ip netns exec %sh env PMIX_MCA_ptl_tcp_if_include=10.44.0.0/24 "
    .. "mpirun --mca btl self,tcp --mca btl_tcp_if_include 10.44.0.0/24 "):format(tag)
    or "env OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none mpirun "
  -- `timeout 600` only ends a hang.
  return shell.run(("%stimeout 600 %s%s%s-x %s %s"):format(env, transport,
    opts.recovery and "--enable-recovery " or "", latency, mark, table.concat(contexts, " : ")))
end

-- The processes of the jobs still there (their environment has the mark).
local function left()
  local out = shell.run("grep -lsa '" .. mark .. "' /proc/[0-9]*/environ")
  return shell.count(out, "environ")
end

local function all_gone()
  return wait.until_true(function() return left() == 0 end, 120)
end

local journal_configs = require "spec.support.journal_configs"
local configs_of, distinct = journal_configs.of, journal_configs.distinct

local function entries(folder)
  return shell.count(shell.run("ls " .. folder .. " 2>/dev/null"), "%.ktp")
end

describe("MPI ranks as nodes", function()
  if not built or not have_mpirun then
    it("is pending", function()
      pending(not built and "this ktlua was built without MPI (no Open MPI headers)"
              or "mpirun is not installed")
    end)
    return
  end
  if not netns then
    it("puts each rank in a network namespace of its own", function()
      pending(os.getenv("MPI_NODES_NETNS") == "off" and "MPI_NODES_NETNS=off" or "network "
        .. "namespaces cannot be made here (root and `ip` are needed): the ranks talk over "
        .. "shared memory")
    end)
  end
  setup(function()
    shell.must("mkdir -p " .. work)
    if netns then
      local said = shell.must(("scripts/mpi-netns.sh up %s %d 5"):format(tag, RANKS))
      if said:match("^netem 5") then latency = "" end
    end
  end)
  teardown(function()
    if netns then shell.run(("scripts/mpi-netns.sh down %s %d"):format(tag, RANKS)) end
    shell.run("rm -rf " .. work)
  end)

  local baseline -- the kill-free run's final set

  it("tunes on every node's device, compiling and keeping each program where it runs", function()
    local journal = work .. "/base.jsonl"
    local out, code = mpirun(devices .. " --journal=" .. journal)
    assert.are.equal(0, code, out)
    assert.matches("count 12\n", out)
    baseline = out:match("set ([^\n]*)")
    assert.are.equal(12, shell.count(baseline, "=ok"), out)
    -- Each rank is a node of its own: its own name, the first of it.
    assert.matches("hosts 0:node0 1:node1:0:true 2:node2:0:true 3:node3:0:true\n", out)
    local ran = 0
    for _, count in out:match("ran ([^\n]*)"):gmatch("(mpi:%d:opencl:0:0)=(%d+)") do
      ran = ran + tonumber(count)
    end
    assert.are.equal(12, ran, out)
    -- Rank 0 ran nothing and compiled nothing; every other node kept the
    -- programs of its device (its first configuration's at least, and its
    -- comparison kernel) in its own folder: 12 configurations and three
    -- comparison kernels, some compiled ahead on more than one node.
    assert.are.equal(0, entries(work .. "/cache/node0"))
    local kept = 0
    for r = 1, 3 do
      local n = entries(("%s/cache/node%d"):format(work, r))
      assert.is_true(n >= 2, ("node%d kept %d programs"):format(r, n))
      kept = kept + n
    end
    assert.is_true(kept >= 15, out)
    assert.are.equal(12, #configs_of(journal))
    assert.is_true(distinct(configs_of(journal)))
    assert.is_true(all_gone(), "processes of the job are left")
  end)

  it("shares one cache folder among the nodes: what four wrote at once loads on every one", function()
    local cache = work .. "/shared"
    local out, code = mpirun("", { cache = cache, shared = true })
    assert.are.equal(0, code, out)
    assert.matches("count 12\n", out)
    out, code = mpirun("", { cache = cache, shared = true })
    assert.are.equal(0, code, out)
    assert.matches("summary compiles=0 cached=%d+", out)
    assert.are.equal(baseline, out:match("set ([^\n]*)"))
  end)

  -- Seeded moments: the rank, its result after which the kill comes, and
  -- how many more results from any rank come first. The sanitized run takes
  -- the first three of the plain run's ten (each kill waits out MPI's
  -- heartbeat: the suite's time).
  math.randomseed(44)
  for run = 1, shell.ktlua:find("asan", 1, true) and 3 or 10 do
    local victim, after, later = math.random(1, 3), math.random(1, 2), math.random(0, 2)
    it(("finishes when rank %d is killed after its result %d and %d more (run %d): the same "
        .. "results, each once, nothing left"):format(victim, after, later, run), function()
      local journal = ("%s/kill%d.jsonl"):format(work, run)
      local out = mpirun(("%s --journal=%s --victim=%d --after=%d --then=%d"):format(devices,
        journal, victim, after, later), { recovery = true })
      assert.matches("nodes.lua: SIGKILL to rank " .. victim, out, 1, true)
      assert.matches("count 12\n", out)
      assert.are.equal(baseline, out:match("set ([^\n]*)"), out)
      local configs = configs_of(journal)
      assert.are.equal(12, #configs, out)
      assert.is_true(distinct(configs), out)
      assert.is_true(all_gone(), "processes of the job are left")
    end)
  end

  it("goes on from rank 0's journal when rank 0 is killed: the job ends, a resume finishes", function()
    local journal = work .. "/rank0.jsonl"
    local out, code = mpirun(devices .. " --self_after=5 --journal=" .. journal)
    assert.are_not.equal(0, code, out)
    assert.matches("nodes.lua: SIGKILL to rank 0", out, 1, true)
    local before = configs_of(journal)
    assert.is_true(#before >= 5 and #before < 12, out)
    assert.is_true(all_gone(), "processes of the job are left")
    out, code = mpirun(devices .. " --journal=" .. journal, { before = "--resume" })
    assert.are.equal(0, code, out)
    assert.are.equal(baseline, out:match("set ([^\n]*)"), out)
    local after = configs_of(journal)
    assert.are.equal(12, #after)
    assert.is_true(distinct(after))
    for i = 1, #before do assert.are.equal(before[i], after[i]) end
    assert.is_true(all_gone(), "processes of the job are left")
  end)
  -- Bad input, refused before anything is tuned: the message names the rank
  -- and what differs, the job ends, nothing is left.
  local function refused(opts, says)
    local out, code = mpirun(devices, opts)
    assert.are_not.equal(0, code, out)
    assert.matches(says, out, 1, true)
    assert.is_nil(out:match("count %d+"), out)
    assert.is_true(all_gone(), "processes of the job are left")
  end

  it("refuses a rank of another ktlua version, naming it", function()
    -- The same ktlua, its version string changed in the executable.
    local exe = work .. "/ktlua-0.1.9"
    local f = assert(io.open(shell.ktlua, "rb"))
    local bytes = f:read("a")
    f:close()
    local version = shell.run(shell.ktlua .. " --version"):match("^ktlua ([%d%.]+)")
    local patched, n = bytes:gsub("ktlua " .. version:gsub("%.", "%%.") .. "\0", "ktlua 0.1.9\0")
    assert.are.equal(1, n)
    files.write(exe, patched)
    shell.must("chmod +x " .. exe)
    refused({ exe = { [2] = exe } }, ("MPI rank 2 (on node2) runs ktlua 0.1.9, rank 0 ktlua %s: "
      .. "every rank needs the same ktlua"):format(version))
  end)

  it("refuses a rank started with another script, or one it cannot read", function()
    local other = work .. "/other.lua"
    files.write(other, "print('another script')\n")
    refused({ args = { [1] = script, [3] = other } }, "MPI rank 3 (on node3) was started with "
      .. "another script: " .. other)
    refused({ args = { [1] = work .. "/absent.lua" } }, "MPI rank 1 (on node1) was started with "
      .. "the script " .. work .. "/absent.lua, which it cannot read: it is not there")
  end)
  it("ends a job of one rank as MPI wants (mpirun's status is the script's)", function()
    local out, code = shell.run(("%s%s env OMPI_MCA_btl=self,vader timeout 600 mpirun -np 1 %s "
      .. "-e 'print(kt.mpi().size)'"):format(env, mark, shell.ktlua))
    assert.are.equal(0, code, out)
    assert.are.equal("1\n", out)
  end)

  -- doc/scaling.md's commands for a cluster, as written but for the hosts.
  it("runs doc/scaling.md's mpirun command, on two ranks of this host, and its resume", function()
    local doc = files.read("doc/scaling.md")
    local line = assert(doc:match("\n(mpirun %-np 8 %-%-host gpu01:4,gpu02:4 ktlua [^\n]+)\n"))
    local dir = work .. "/doc"
    shell.must(("mkdir -p %s && cp %s %s/tune.lua"):format(dir, script, dir))
    local function run(cmd)
      cmd = cmd:gsub("%-np 8 %-%-host %S+", "-np 2 --host localhost:2"):gsub(" ktlua ", " "
        .. (shell.ktlua:sub(1, 1) == "/" and shell.ktlua or root .. "/" .. shell.ktlua) .. " ")
      return shell.run(("cd %s && %s%s OMPI_MCA_btl=self,vader timeout 600 %s"):format(dir, env,
        mark, cmd))
    end
    local out, code = run(line)
    assert.are.equal(0, code, out)
    assert.matches("count 12\n", out)
    local journal = files.lines(dir .. "/vadd.jsonl")
    local resume = assert(doc:match("`(ktlua %-%-resume %-%-journal=DIR tune%.lua)`"))
    out, code = run(line:gsub("ktlua .*$", (resume:gsub("DIR", "."))))
    assert.are.equal(0, code, out)
    assert.matches("count 12\n", out)
    assert.are.equal(#journal, #files.lines(dir .. "/vadd.jsonl"))
    assert.is_true(all_gone(), "processes of the job are left")
  end)

  it("has a Slurm batch script that the shell reads", function()
    local batch = assert(files.read("doc/scaling.md"):match("```\n(#!/bin/sh\n#SBATCH.-)```"))
    files.write(work .. "/tune.sh", batch)
    shell.must("sh -n " .. work .. "/tune.sh")
    if select(2, shell.run("command -v srun")) ~= 0 then
      pending("Slurm is not installed here: the batch script is read, not run")
    end
  end)
end)
