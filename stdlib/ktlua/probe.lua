-- ktlua.probe: a device probe record (kt.probe, db:probe) and its summary.
--
-- A record holds rows (one measurement each: kind, name, size, reps, mean_ns,
-- rse, capped, value) and, derived from them here:
--   launch_ns       the launch floor: an empty kernel's device time (launch_host_ns:
--                   launch and wait, on the host clock)
--   transfer        transfer.h2d.pinned = {latency_ns =, gbs =} (and d2h, pageable):
--                   the time of the smallest transfer, the rate of the largest
--   memory_gbs      the best rate of the memory-bound copy (bytes read and written
--                   per ns), best_group the work-group size that reached it
--   ops             Gop/s of each operation (fp32_add ... int32_mul)
--   capped          rows whose repetitions reached the cap above the rse target
local M = {}

local methods = {}
local meta = { __index = methods }

local function summarise(rec)
  local t, ops = { h2d = {}, d2h = {} }, {}
  local smallest, largest = {}, {}
  rec.capped = 0
  for _, r in ipairs(rec.rows) do
    if r.capped then rec.capped = rec.capped + 1 end
    if r.kind == "h2d" or r.kind == "d2h" then
      local key = r.kind .. "." .. r.name
      t[r.kind][r.name] = t[r.kind][r.name] or {}
      if not smallest[key] or r.size < smallest[key].size then smallest[key] = r end
      if not largest[key] or r.size > largest[key].size then largest[key] = r end
    elseif r.kind == "launch" then
      if r.name == "event" then rec.launch_ns = r.value else rec.launch_host_ns = r.value end
    elseif r.kind == "sweep" then
      if not rec.memory_gbs or r.value > rec.memory_gbs then
        rec.memory_gbs, rec.best_group = r.value, r.size
      end
    elseif r.kind == "op" then
      ops[r.name] = r.value
    end
  end
  for key, r in pairs(smallest) do
    local kind, name = key:match("^(%w+)%.(%w+)$")
    t[kind][name].latency_ns = r.mean_ns
    t[kind][name].gbs = largest[key].value
  end
  rec.transfer, rec.ops = t, ops
  return setmetatable(rec, meta)
end

-- A record from its rows (and device, backend, driver, date, notes).
function M.record(rec)
  return summarise(rec)
end

local units = { h2d = "GB/s", d2h = "GB/s", sweep = "GB/s", launch = "ns", op = "Gop/s" }

local function bytes(n)
  if n >= 1 << 20 and n % (1 << 20) == 0 then return (n >> 20) .. " MiB" end
  if n >= 1024 and n % 1024 == 0 then return (n >> 10) .. " KiB" end
  return n .. " B"
end

-- rec:predict(cost[, {model =}]): the time in ms of that work (ktlua.cost).
function methods.predict(rec, c, opts)
  return require("ktlua.cost").time(rec, c, opts)
end

-- The rows as a table for people (to a file, default io.stdout).
function methods.print(rec, f)
  f = f or io.stdout
  f:write(("probe of %s (%s), %s\n"):format(rec.device, rec.backend, rec.date))
  f:write(("%-7s %-10s %10s %6s %12s %7s %12s\n"):format("kind", "name", "size", "reps",
    "mean", "rse", "value"))
  for _, r in ipairs(rec.rows) do
    local size = (r.kind == "h2d" or r.kind == "d2h") and bytes(r.size)
      or r.kind == "sweep" and ("group " .. r.size) or r.kind == "op" and tostring(r.size) or ""
    f:write(("%-7s %-10s %10s %6d %9.3f us %6.2f%%%s %8.4g %s\n"):format(r.kind, r.name, size,
      r.reps, r.mean_ns / 1e3, r.rse * 100, r.capped and "!" or " ", r.value, units[r.kind] or ""))
  end
  for _, n in ipairs(rec.notes or {}) do f:write("note: ", n, "\n") end
  if rec.capped > 0 then
    f:write(("%d rows reached the cap of repetitions above the rse target (marked !)\n")
      :format(rec.capped))
  end
end

-- `ktlua --probe[=DEVICE] [--probe-db=DB] [--probe-quick]`
function M.main(o)
  local kt = require "ktlua"
  local db = o.db and kt.db(o.db)
  local rec = kt.probe(o.device, { db = db, quick = o.quick })
  rec:print()
  local h2d, d2h = rec.transfer.h2d.pinned or {}, rec.transfer.d2h.pinned or {}
  print(("summary: launch %.3g us, copy %.4g GB/s (group %s), pinned h2d %.4g GB/s, "
    .. "d2h %.4g GB/s, fp32 %.4g Gflop/s"):format((rec.launch_ns or 0) / 1e3, rec.memory_gbs or 0,
    tostring(rec.best_group), h2d.gbs or 0, d2h.gbs or 0,
    math.max(rec.ops.fp32_add or 0, rec.ops.fp32_mul or 0, 2 * (rec.ops.fp32_fma or 0))))
  if db then
    print(("stored in %s"):format(o.db))
    db:close()
  end
end

return M
