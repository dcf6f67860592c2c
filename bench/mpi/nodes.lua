-- A tuning over the devices of MPI ranks that stand for nodes (issue 44),
-- whose rank 0 may kill a rank on the way: spec/mpi_nodes_spec.lua and
-- bench/mpi/kills.lua run it under mpirun, each rank with its own host
-- name (KTLUA_HOST) and program cache (KTLUA_CACHE).
--   mpirun -np 4 ktlua bench/mpi/nodes.lua [--device=D,D,...] [--journal=FILE]
--     [--victim=R --after=K --then=J]   SIGKILL to rank R once it reported its
--                                       K-th result and J more came from any rank
--     [--self_after=K]                  SIGKILL to rank 0 itself after K results
--     [--configs=12]                    12 or 24 configurations
-- It prints the final set of configurations and statuses ("set ..."), which
-- must not depend on whether or when a rank was lost, and what ran where.
local kt = require "ktlua"
local opt = {}
for _, a in ipairs(arg) do
  local k, v = a:match("^%-%-([%w_]+)=(.*)$")
  if k then opt[k] = v end
end

local function devices(d)
  if not d or not d:find(",") then return d end
  local list = {}
  for id in d:gmatch("[^,]+") do list[#list + 1] = id end
  return list
end

local tuner = kt.tuner(devices(opt.device))
local n = 1 << 14
local a = kt.array("float", n):fill(function(i) return i end)
local b = kt.array("float", n):random(42)
local c = kt.array("float", n)
local k = tuner:kernel{ name = "vadd", global = n, group = 1,
  args = { a:input(), b:input(), c:output(), kt.int(n) }, source = [[
__kernel void vadd(__global const float *a, __global const float *b, __global float *c, int n) {
  int i = get_global_id(0) * VEC;
  for (int v = 0; v < VEC; v++) if (i + v < n) c[i + v] = a[i + v] + b[i + v] + (float)(SALT - SALT);
}]] }
k:param("WG", { 16, 32, 64, 128 }, { group_x = "mul" })
k:param("VEC", { 1, 2, 4 }, { global_x = "div" })
k:param("SALT", tonumber(opt.configs) == 24 and { 1, 2 } or { 1 })
k:reference(c, function(ref) for i = 0, n - 1 do ref[i] = a[i] + b[i] end end)

local victim, after, later = tonumber(opt.victim), tonumber(opt.after), tonumber(opt.then_) or
  tonumber(opt["then"]) or 0
local self_after = tonumber(opt.self_after)
local calls, theirs, since, killed = 0, 0, nil, false

local function kill(pid, why)
  killed = true
  io.stderr:write(("nodes.lua: SIGKILL to %s (pid %d) after %d results\n"):format(why, pid, calls))
  os.execute("kill -9 " .. pid)
end

local function progress(res)
  calls = calls + 1
  if self_after and calls == self_after then
    kill(io.open("/proc/self/stat"):read("n"), "rank 0")
  end
  if not victim or killed then return end
  if (res.device or ""):match("^mpi:(%d+):") == tostring(victim) then theirs = theirs + 1 end
  if theirs >= after and not since then since = calls end
  if since and calls - since >= later then kill(kt.mpi().ranks[victim].pid, "rank " .. victim) end
end

local r = tuner:tune(k, { search = "exhaustive", journal = opt.journal, progress = progress,
                          repeats = 3 })
local set, used = {}, {}
for i = 1, #r do
  local x = r[i]
  set[#set + 1] = ("%d/%d/%d=%s"):format(x.config.WG, x.config.VEC, x.config.SALT, x.status)
  local d = x.device or tuner.device.id
  used[d] = (used[d] or 0) + 1
end
table.sort(set)
local ran, hosts = {}, {}
for d, count in pairs(used) do ran[#ran + 1] = d .. "=" .. count end
table.sort(ran)
local job = kt.mpi()
for rank, p in ipairs(job.ranks) do
  hosts[#hosts + 1] = ("%d:%s:%d:%s"):format(rank, p.host, p.local_rank, tostring(p.alive))
end
print("count " .. #r)
print("set " .. table.concat(set, " "))
print("ran " .. table.concat(ran, " "))
print("hosts 0:" .. job.host .. " " .. table.concat(hosts, " "))
local s = r:summary()
print(("summary compiles=%d cached=%d killed=%s wall_ms=%.0f"):format(s.compiles, s.cached,
  tostring(killed), s.wall_ms))
