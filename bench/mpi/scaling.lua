-- Configurations per second of one tuning over MPI ranks that stand for
-- nodes (issue 44): 1, 2 and 4 ranks, each with its own host name and
-- program cache, with and without latency on the wire (KTLUA_MPI_LATENCY_MS),
-- over shared memory, or over TCP between network namespaces (--netns, as
-- root). The tuning is bench/mpi/nodes.lua's (24 configurations, each its
-- own compile, 3 repeats) on one device per rank (kt.tuner() under mpirun),
-- with empty caches (--warm: run once first, so that every program loads).
--   build/ktlua bench/mpi/scaling.lua [--rounds=3] [--latency=5] [--netns] [--warm]
-- On one host with PoCL every rank's device is the same CPU device: more
-- ranks add no processors, so the figures show what the ranks and the wire
-- cost, not what more nodes would gain.
package.path = "bench/mpi/?.lua;" .. package.path
local job = require "job"
local o = require("ktlua.cli").options(arg, { rounds = 3, latency = 5, netns = false,
  warm = false, ranks = "1,2,4" })
local ktlua = arg[-1] or "build/ktlua"

local tag = o.netns and job.netns_up(4)
assert(not o.netns or tag, "--netns: cannot make network namespaces here (root and `ip` needed)")

local function once(ranks, latency, round)
  local cache = os.tmpname()
  os.remove(cache)
  local cmd = job.command{ ranks = ranks, ktlua = ktlua, script = "bench/mpi/nodes.lua",
    args = "--configs=24", cache = cache, latency = latency, netns = tag }
  if o.warm then job.run(cmd) end
  local out, code = job.run(cmd)
  job.run("rm -rf " .. cache)
  assert(code == 0 and out:match("count 24"), out)
  local wall = tonumber(out:match("wall_ms=(%d+)")) / 1e3
  local ran = out:match("ran ([^\n]*)")
  return 24 / wall, ran, round
end

-- The namespaces go whatever happens.
local ok, err = pcall(function()
  print(("%-6s %-11s %12s %12s  %s"):format("ranks", "latency ms", "configs/s", "best of", "ran (best round)"))
  for ranks in o.ranks:gmatch("%d+") do
    ranks = tonumber(ranks)
    for _, latency in ipairs({ 0, o.latency }) do
      local best, where = 0, ""
      for round = 1, o.rounds do
        local rate, ran = once(ranks, latency, round)
        if rate > best then best, where = rate, ran end
      end
      print(("%-6d %-11g %12.2f %12d  %s"):format(ranks, latency, best, o.rounds, where))
    end
  end
end)
job.netns_down(tag, 4)
assert(ok, err)
