-- A series of tunings that each lose a rank at a seeded moment (issue 44):
-- 4 ranks that stand for nodes (own host names and program caches, 5 ms
-- on the wire), the tuning of bench/mpi/nodes.lua on the devices of ranks
-- 1-3, one of them killed (SIGKILL) once it reported its K-th result and J
-- more came; each run's final set of configurations and statuses is
-- compared with a kill-free run's, its journal must hold each configuration
-- once, and no process of the job may be left.
--   build/ktlua bench/mpi/kills.lua [--runs=10] [--seed=44] [--latency=5] [--netns]
--     [--configs=12]
package.path = "bench/mpi/?.lua;" .. package.path
local job = require "job"
local o = require("ktlua.cli").options(arg, { runs = 10, seed = 44, latency = 5, netns = false,
  configs = 12 })
local ktlua = arg[-1] or "build/ktlua"
local devices = "--device=mpi:1:opencl:0:0,mpi:2:opencl:0:0,mpi:3:opencl:0:0"
local tag = o.netns and job.netns_up(4)
assert(not o.netns or tag, "--netns: cannot make network namespaces here (root and `ip` needed)")
local mark = "KTLUA_KILLS_MARK=" .. io.open("/proc/self/stat"):read("n")
local work = os.tmpname()
os.remove(work)
os.execute("mkdir -p " .. work)

local function left()
  local out = job.run("grep -lsa '" .. mark .. "' /proc/[0-9]*/environ")
  local n = 0
  for _ in out:gmatch("environ") do n = n + 1 end
  return n
end

-- Processes of the job still there once it ended, waited for at most 60 s
-- (a killed rank's device processes end with it).
local function left_after()
  for _ = 1, 600 do
    if left() == 0 then return 0 end
    os.execute("sleep 0.1")
  end
  return left()
end

local function run(args, journal, recovery)
  local t0 = os.time()
  os.remove(journal)
  local out, code = job.run(job.command{ ranks = 4, ktlua = ktlua, script = "bench/mpi/nodes.lua",
    args = ("%s --configs=%d --journal=%s %s"):format(devices, o.configs, journal, args),
    cache = work .. "/cache", latency = o.latency, netns = tag, recovery = recovery, mark = mark })
  local seen, count, twice = {}, 0, 0
  for line in io.lines(journal) do
    local key = line:match('"config":({[^}]*})')
    if key then
      count = count + 1
      if seen[key] then twice = twice + 1 end
      seen[key] = true
    end
  end
  return { out = out, code = code, set = out:match("set ([^\n]*)"), count = count, twice = twice,
           left = left_after(), s = os.time() - t0, hosts = out:match("hosts ([^\n]*)") }
end

-- The namespaces go whatever happens.
local ok, err = pcall(function()
  local base = run("", work .. "/base.jsonl")
  assert(base.code == 0 and base.set, base.out)
  print(("kill-free: %d configurations, %d s, ran %s"):format(base.count, base.s,
    base.out:match("ran ([^\n]*)")))
  print(("%-4s %-7s %-6s %-6s %-10s %-8s %-12s %-5s %s"):format("run", "victim", "after", "then",
    "same set", "journal", "twice", "left", "seconds (rank alive after)"))
  math.randomseed(o.seed)
  local good = 0
  for i = 1, o.runs do
    local v, k, j = math.random(1, 3), math.random(1, 2), math.random(0, 2)
    local r = run(("--victim=%d --after=%d --then=%d"):format(v, k, j), ("%s/kill%d.jsonl"):format(work, i), true)
    local same = r.set == base.set
    if same and r.count == base.count and r.twice == 0 and r.left == 0 then good = good + 1 end
    print(("%-4d %-7d %-6d %-6d %-10s %-8d %-12d %-5d %d (%s)"):format(i, v, k, j, tostring(same),
      r.count, r.twice, r.left, r.s, r.hosts or "?"))
  end
  print(("%d of %d runs: the kill-free set, each configuration once, nothing left"):format(good, o.runs))
  job.run("rm -rf " .. work)
end)
job.netns_down(tag, 4)
assert(ok, err)
