-- The mpirun command of bench/mpi's drivers (scaling.lua, kills.lua): N
-- ranks that stand for nodes, rank r named node<r> (KTLUA_HOST) with the
-- program cache folder <cache>/node<r> (KTLUA_CACHE), every message between
-- ranks `latency` ms late (KTLUA_MPI_LATENCY_MS), each rank in a network
-- namespace of its own when `netns` names them (scripts/mpi-netns.sh up
-- TAG N: TCP between ranks), else over shared memory; rank 0 runs `script`.
local job = {}

job.env = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
  .. "OMPI_MCA_rmaps_base_oversubscribe=1 "

-- o = {ranks, ktlua, script, args, cache, latency, netns, recovery, mark}
function job.command(o)
  local contexts = {}
  for r = 0, o.ranks - 1 do
    local prefix = o.netns and ("ip netns exec %sn%d "):format(o.netns, r) or ""
    contexts[#contexts + 1] = ("-np 1 -x KTLUA_HOST=node%d -x KTLUA_CACHE=%s/node%d %s%s%s"):format(
      r, o.cache, r, prefix, o.ktlua, r == 0 and (" %s %s"):format(o.script, o.args or "") or "")
  end
  local transport = o.netns and ("ip netns exec %sh env PMIX_MCA_ptl_tcp_if_include=10.44.0.0/24 "
    .. "mpirun --mca btl self,tcp --mca btl_tcp_if_include 10.44.0.0/24 "):format(o.netns)
    or "env OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none mpirun "
  return ("%stimeout 600 %s%s-x KTLUA_MPI_LATENCY_MS=%g %s%s 2>&1"):format(job.env, transport,
    o.recovery and "--enable-recovery " or "", o.latency or 0,
    o.mark and "-x " .. o.mark .. " " or "", table.concat(contexts, " : "))
end

-- Runs a command: its output and exit status.
function job.run(cmd)
  local p = io.popen(cmd .. "; echo \"exit:$?\"")
  local out = p:read("a")
  p:close()
  local code = tonumber(out:match("exit:(%d+)%s*$"))
  return (out:gsub("exit:%d+%s*$", "")), code
end

-- Namespaces for n ranks where root may make them, else nil.
function job.netns_up(n)
  local _, code = job.run("scripts/mpi-netns.sh check")
  if code ~= 0 then return nil end
  local tag = "b" .. io.open("/proc/self/stat"):read("n") % 100000
  local _, up = job.run(("scripts/mpi-netns.sh up %s %d"):format(tag, n))
  return up == 0 and tag or nil
end

function job.netns_down(tag, n)
  if tag then job.run(("scripts/mpi-netns.sh down %s %d"):format(tag, n)) end
end

return job
