-- ktlua.report: results for people to read: the table results:print()
-- shows, the line per configuration of `progress = true`, and the value
-- printer of the REPL.

local report = {}

-- Text from results (a name, a value, an error: a results file may hold
-- anything) as the terminal gets it: a control character as \ddd, so that
-- none is a command to the terminal.
local function printable(s)
  return (tostring(s):gsub("%c", function(c) return ("\\%d"):format(c:byte()) end))
end

local function fmt_value(v)
  if math.type(v) == "float" then return ("%g"):format(v) end
  return printable(v)
end

local function fmt_ms(ms)
  if ms == nil then return "-" end
  if ms >= 100 then return ("%.1f"):format(ms) end
  if ms >= 1 then return ("%.3f"):format(ms) end
  return ("%.4f"):format(ms)
end

-- How far a result's runs spread around its time: half the middle half of
-- its samples (the interquartile range), as a fraction of their median;
-- nil for fewer than 3 samples (a CSV file keeps none).
function report.spread(r)
  local s = {}
  for i, v in ipairs(r.samples_ms or {}) do s[i] = v end
  if #s < 3 then return nil end
  table.sort(s)
  local function at(q)
    local pos = 1 + (#s - 1) * q
    local lo = math.floor(pos)
    return s[lo] + (s[math.min(lo + 1, #s)] - s[lo]) * (pos - lo)
  end
  local median = at(0.5)
  return median > 0 and (at(0.75) - at(0.25)) / 2 / median or nil
end

-- "±3.1%", or "-" where the spread is unknown.
function report.fmt_spread(r)
  local f = report.spread(r)
  if not f then return "-" end
  return f < 0.095 and ("±%.1f%%"):format(100 * f) or ("±%.0f%%"):format(100 * f)
end

local function fmt_sizes(s)
  if not s then return "-" end
  return table.concat(s, "x")
end

-- "WG=64 VEC=4", parameters in declaration order.
function report.config(config, params)
  local parts = {}
  for _, p in ipairs(params) do parts[#parts + 1] = p.name .. "=" .. fmt_value(config[p.name]) end
  return table.concat(parts, " ")
end

-- A cell's width on the terminal: its characters (a spread's ±), or its
-- bytes where it is no UTF-8.
local function width(s) return utf8.len(s) or #s end

local function pad(s, n, right)
  s = tostring(s)
  local w = width(s)
  if w >= n then return s end
  return right and (" "):rep(n - w) .. s or s .. (" "):rep(n - w)
end

local function render(rows, right)
  local widths = {}
  for _, row in ipairs(rows) do
    for c, cell in ipairs(row) do widths[c] = math.max(widths[c] or 0, width(tostring(cell))) end
  end
  local lines = {}
  for _, row in ipairs(rows) do
    local cells = {}
    for c, cell in ipairs(row) do cells[c] = pad(cell, widths[c], right[c]) end
    lines[#lines + 1] = table.concat(cells, "  ")
  end
  return table.concat(lines, "\n")
end

local function first_line(s)
  if not s then return "" end
  s = s:match("^[^\n]*")
  if #s > 70 then s = s:sub(1, 67) .. "..." end
  return printable(s)
end

-- What a result is ranked by: its time, or the objective's value (a
-- metric), negated when maximised; results without one come last.
local function coster(results)
  local objective, sign = results.objective, results.maximize and -1 or 1
  if objective == "kernel" or objective == "kernel+host" then
    return function(r) return r.time_ms or math.huge end
  end
  return function(r)
    local v = r.metrics and r.metrics[objective]
    return v and sign * v or math.huge
  end
end

-- Rows sorted best first (fastest, unless an objective says otherwise),
-- failures after in the order evaluated.
local function ordered(list, cost)
  local sorted = {}
  for i, r in ipairs(list) do sorted[i] = r end
  table.sort(sorted, function(a, b)
    local fa, fb = a.status == "ok", b.status == "ok"
    if fa ~= fb then return fa end
    if fa and cost(a) ~= cost(b) then return cost(a) < cost(b) end
    return a.index < b.index
  end)
  return sorted
end

-- The metrics' names over the rows, in order of first appearance.
local function metric_names(rows)
  local names, seen = {}, {}
  for _, r in ipairs(rows) do
    local m = r.metrics or {}
    local here = {}
    for name in pairs(m) do here[#here + 1] = name end
    table.sort(here)
    for _, name in ipairs(here) do
      if not seen[name] then seen[name], names[#names + 1] = true, name end
    end
  end
  return names
end

local function table_rows(results, shown, params)
  local header = { "#" }
  local right = { true }
  for _, p in ipairs(params) do header[#header + 1] = p.name; right[#header] = true end
  local metrics = metric_names(shown)
  header[#header + 1] = "status"
  for _, h in ipairs({ "time_ms", table.unpack(metrics) }) do
    header[#header + 1] = printable(h)
    right[#header] = true
  end
  header[#header + 1] = "runs"
  right[#header] = true
  header[#header + 1] = "spread"
  right[#header] = true
  local devices = false -- a tuning over several devices: which ran each
  for _, r in ipairs(shown) do devices = devices or r.device ~= nil end
  if devices then header[#header + 1] = "device" end
  for _, h in ipairs({ "global", "group", "note" }) do header[#header + 1] = h end
  local rows = { header }
  for _, r in ipairs(shown) do
    local row = { r.index }
    for _, p in ipairs(params) do row[#row + 1] = fmt_value(r.config[p.name]) end
    row[#row + 1] = r.status
    row[#row + 1] = fmt_ms(r.time_ms)
    for _, name in ipairs(metrics) do
      local v = r.metrics and r.metrics[name]
      row[#row + 1] = v and ("%.6g"):format(v) or "-"
    end
    row[#row + 1] = #r.samples_ms
    row[#row + 1] = r.status == "ok" and report.fmt_spread(r) or ""
    if devices then row[#row + 1] = r.device and printable(r.device) or "-" end
    row[#row + 1] = fmt_sizes(r.global)
    row[#row + 1] = fmt_sizes(r.group)
    row[#row + 1] = r.status ~= "ok" and first_line(r.error) or ""
    rows[#rows + 1] = row
  end
  return rows, right
end

local function status_counts(statuses)
  local parts = {}
  for _, name in ipairs({ "ok", "compile_failed", "launch_failed", "runtime_failed", "timeout",
                          "invalid_output", "too_many_threads", "out_of_bounds",
                          "generator_failed", "too_much_local_memory", "compile_deferred" }) do
    if (statuses[name] or 0) > 0 then parts[#parts + 1] = ("%d %s"):format(statuses[name], name) end
  end
  return table.concat(parts, ", ")
end

-- "removed for the device: 35 group_size, 12 divisible", or nil when none was.
local function pruned_counts(pruned)
  local parts = {}
  for _, name in ipairs({ "group_dims", "group_size", "local_memory", "divisible" }) do
    if (pruned[name] or 0) > 0 then parts[#parts + 1] = ("%d %s"):format(pruned[name], name) end
  end
  return #parts > 0 and "removed for the device: " .. table.concat(parts, ", ") or nil
end

-- "vadd on GPU: 11 of 32 configurations (staged search, stopped: count)", of
-- what the results know: those read from a file may not know their device,
-- space, searcher or why they stopped (a CSV file, a journal, another tool's).
local function headline(results, s)
  local function known(v) return v ~= nil and v ~= "" end
  local line = printable(results.task)
  if known(results.device) then line = line .. " on " .. printable(results.device) end
  line = line .. (": %d"):format(s.evaluated)
  if s.space_valid > 0 then line = line .. (" of %d"):format(s.space_valid) end
  line = line .. (s.evaluated == 1 and s.space_valid == 0 and " configuration" or " configurations")
  local how = {}
  if known(results.searcher) then how[#how + 1] = printable(results.searcher) .. " search" end
  if known(s.stopped) then how[#how + 1] = "stopped: " .. printable(s.stopped) end
  return #how > 0 and line .. " (" .. table.concat(how, ", ") .. ")" or line
end

-- results:print{all = false, top = 20, out = io.stdout}
-- The kernels' time, beside the host's time above rather than a part of it:
-- kernels run while the host waits for them, but also while a launcher's
-- host steps run and side by side on several queues. The timed runs' are
-- a part of every launch's (device_ms); where no device time was measured
-- here (a replay, results read from a file), only the timed runs'.
-- With the objective kernel+host, the timed runs' samples hold the
-- launchers' host steps too, and are said so.
local function device_line(s, objective)
  local host = objective == "kernel+host"
  local timed = host and "the timed runs %s ms, with the launchers' host steps"
    or "%s ms of them in the timed runs (the rest: warm-ups, checks, references)"
  if s.device_ms > 0 then
    return ("device: %s ms of kernels, " .. timed):format(fmt_ms(s.device_ms), fmt_ms(s.kernel_ms))
  end
  return (host and "kernels and host steps: %s ms in the timed runs" or "kernels: %s ms in the timed runs")
    :format(fmt_ms(s.kernel_ms))
end

function report.print(results, opts)
  opts = opts or {}
  if type(opts) ~= "table" then
    error("results:print: expected a table of options {all =, top =, out =}, got " .. type(opts), 3)
  end
  local out = opts.out or io.stdout
  local list, params, s = results:list(), results.params, results:summary()
  local sorted = ordered(list, coster(results))
  local limit = opts.all and #sorted or (opts.top or (#sorted <= 30 and #sorted or 20))
  local shown = {}
  for i = 1, math.min(limit, #sorted) do shown[i] = sorted[i] end
  out:write(headline(results, s), "\n")
  out:write(("  %s\n"):format(status_counts(s.statuses)))
  local pruned = pruned_counts(s.pruned)
  if pruned then out:write(("  %s\n"):format(pruned)) end
  if s.inputs_changed > 0 then
    out:write(("  inputs found changed and restored %d times:\n"):format(s.inputs_changed))
    for line in s.inputs_log:gmatch("[^\n]+") do out:write("    ", printable(line), "\n") end
  end
  -- the program cache's notes (programs it did not keep) are ktlua's own: shown whole
  local other = false
  for line in (s.device_log or ""):gmatch("[^\n]+") do
    if line:match("^program cache: ") then out:write("  ", printable(line), "\n") else other = true end
  end
  if other then out:write("  the device process wrote on stderr (summary().device_log)\n") end
  local rows, right = table_rows(results, shown, params)
  out:write(render(rows, right), "\n")
  if #shown < #sorted then out:write(("  ... %d more (results:print{all = true})\n"):format(#sorted - #shown)) end
  local best = results:best()
  if best then
    local objective = results.objective
    local by = (objective ~= "kernel" and objective ~= "kernel+host" and best.metrics
                and best.metrics[objective]) and ("  %s %.6g"):format(objective, best.metrics[objective]) or ""
    out:write(("best: %s  %s ms%s\n"):format(report.config(best.config, params), fmt_ms(best.time_ms),
                                              printable(by)))
  else
    out:write("best: none (no configuration ran correctly)\n")
  end
  out:write(("time: wall %s ms = setup %s + build %s + waiting for the device %s + data %s"
    .. " + validation %s + launcher %s + searcher %s + framework %s ms\n"):format(
    fmt_ms(s.wall_ms), fmt_ms(s.setup_ms), fmt_ms(s.build_ms), fmt_ms(s.wait_ms),
    fmt_ms(s.data_ms), fmt_ms(s.validation_ms), fmt_ms(s.launcher_ms), fmt_ms(s.searcher_ms),
    fmt_ms(s.framework_ms)))
  out:write(device_line(s, results.objective), "\n")
  if (s.resumed or 0) > 0 then
    out:write(("  %d configurations from the journal, measured by an earlier run: not in these "
      .. "times\n"):format(s.resumed))
  end
end

-- ---- a busy machine ----

-- The load average over the last minute, and the processors this process
-- may use; nil where /proc does not say.
local function load_average()
  local f = io.open("/proc/loadavg")
  local line = f and f:read("l")
  if f then f:close() end
  return line and tonumber(line:match("^(%S+)")), (require("ktlua.watch").processors())
end

-- Whether the tuning acts on a busy machine, as a CPU device's result r
-- and the results so far say: its timed runs stopped at 10 as its device's
-- threads waited for a processor (r.crowded), or ktlua gave PoCL fewer
-- threads than it counts (results.device_threads). Nothing is said of a
-- machine where the tuning does nothing different.
function report.busy(r, results)
  if not r.waited_ms then return false end -- no CPU device, or no wait at all
  return r.crowded or results.device_threads ~= nil
end

-- The line that says so: the load, the waits, what the tuning does.
function report.busy_line(r, results)
  local load, cpus = load_average()
  local line = ("the machine is busy (load average %.1f on %d processor%s"):format(load or 0,
    cpus or 0, cpus == 1 and "" or "s")
  local span = 0
  for _, k in ipairs({ "data", "validation", "launcher", "wait" }) do span = span + (r.overheads_ms[k] or 0) end
  if span > 0 then
    line = line .. ("; the device's threads waited %d%% of a configuration's runs for a processor")
      :format(math.min(100, math.floor(100 * r.waited_ms / span + 0.5)))
  end
  line = line .. ")"
  local threads = results.device_threads
  if threads then
    line = line .. ("; PoCL runs %d thread%s, the processors free when its device process started "
      .. "(POCL_MAX_PTHREAD_COUNT sets them)"):format(threads, threads == 1 and "" or "s")
  end
  return line .. "; a configuration whose threads wait that long stops at 10 timed runs (more "
    .. "would time the other jobs), and each time's spread is shown (±: half the middle half of "
    .. "its runs)"
end

-- progress = true: one line per configuration as it finishes; the first
-- time the tuning acts on a busy machine, a line on stderr says so.
function report.progress(r, results, said)
  local best = results:best()
  local line = ("[%d] %s  %s"):format(#results, report.config(r.config, results.params), r.status)
  if r.time_ms then line = line .. "  " .. fmt_ms(r.time_ms) .. " ms" end
  if r.status == "ok" and report.spread(r) then line = line .. " " .. report.fmt_spread(r) end
  if r.crowded then line = line .. " (busy: " .. #r.samples_ms .. " runs)" end
  if best then line = line .. ("  (best %s ms)"):format(fmt_ms(best.time_ms)) end
  if r.device then line = line .. "  on " .. printable(r.device) end -- a tuning over several devices
  if said and not said.busy and report.busy(r, results) then
    said.busy = true
    io.stdout:flush()
    io.stderr:write("ktlua: ", report.busy_line(r, results), "\n")
  end
  io.stdout:write(line, "\n")
  io.stdout:flush()
end

local function fmt_duration(s)
  if s < 60 then return ("%.1fs"):format(s) end
  if s < 3600 then return ("%dm%02ds"):format(s // 60, math.floor(s % 60)) end
  return ("%dh%02dm"):format(s // 3600, math.floor(s % 3600) // 60)
end

-- How many configurations the tuning may evaluate: the space, or less by
-- stop.count and stop.fraction (rounded up, as the tuning rounds it).
local function budget(stop, space)
  -- a sampled space (doc/spaces.md, "Spaces too large to list") has no count: 0
  local n = space > 0 and space or math.maxinteger
  if stop and stop.count then n = math.min(n, stop.count) end
  if stop and stop.fraction then n = math.min(n, math.ceil(stop.fraction * space)) end
  return math.max(n, 1)
end

-- The terminal's width, once per meter; nil when it does not say (0).
local function columns()
  local p = io.popen("{ stty size </dev/tty; } 2>/dev/null")
  local size = p and p:read("a") or ""
  if p then p:close() end
  local n = tonumber(size:match("%d+%s+(%d+)"))
  return n and n > 0 and n or nil
end

-- The standard progress (progress = true, and on a terminal ktlua's default
-- for a script). Elsewhere than on a terminal, report.progress's line per
-- configuration. On a terminal, one line redrawn in place, at most ten times
-- a second: configurations done of the budget, the percentage, the time
-- elapsed and left, the statuses so far, the best time and configuration.
-- Called with no result, it ends the line (the tuning has ended).
function report.meter(stop, terminal, out)
  out = out or io.stdout
  if not terminal then
    local said = {}
    return function(r, results) if r then report.progress(r, results, said) end end
  end
  local clock = require("ktlua").clock
  local start, drawn_at, width = clock(), -1, columns()
  local total, done, counts, order, best, params = nil, 0, {}, {}, nil, nil
  local said, busy = nil, false -- the busy machine's line, once; whether the last result was
  local function compose()
    local elapsed = clock() - start
    local left = done > 0 and elapsed / done * (total - done) or nil
    if left and stop and stop.seconds then
      left = math.min(left, math.max(stop.seconds - elapsed, 0))
    end
    local parts = {}
    for _, status in ipairs(order) do parts[#parts + 1] = status .. " " .. counts[status] end
    local text = ("%d/%d %3d%%  %s elapsed, %s left%s  %s"):format(done, total,
      math.floor(100 * done / total), fmt_duration(elapsed), left and fmt_duration(left) or "?",
      busy and "  busy: 10 runs" or "", table.concat(parts, ", "))
    if best then
      local spread = report.spread(best) and " " .. report.fmt_spread(best) or ""
      text = text .. ("  best %s ms%s %s"):format(fmt_ms(best.time_ms), spread,
                                                  report.config(best.config, params))
    end
    return width and text:sub(1, width - 1) or text -- a wrapped line would not redraw
  end
  local undrawn = false -- results since the last redraw
  local function draw()
    out:write("\r", compose(), "\27[K")
    out:flush()
    drawn_at, undrawn = clock(), false
  end
  return function(r, results)
    if not r then
      if undrawn then draw() end
      if total then out:write("\n"); out:flush() end
      return
    end
    total = total or budget(stop, results:summary().space_valid)
    done = done + 1
    if not counts[r.status] then order[#order + 1] = r.status end
    counts[r.status] = (counts[r.status] or 0) + 1
    local cost = coster(results) -- the fastest, unless an objective says otherwise
    if r.status == "ok" and not r.cut_short and (not best or cost(r) < cost(best)) then best = r end
    params, undrawn = results.params, true
    busy = r.crowded
    if not said and report.busy(r, results) then -- said once, above the line the meter redraws
      said = true
      out:write("\r", "ktlua: ", report.busy_line(r, results), "\27[K\n")
      drawn_at = -1
    end
    if clock() - drawn_at >= 0.1 or done >= total then draw() end
  end
end

local function fmt_bytes(n)
  if not n then return "-" end
  local units = { "B", "KiB", "MiB", "GiB", "TiB" }
  local u = 1
  while n >= 1024 and u < #units do n, u = n / 1024, u + 1 end
  return (u == 1 and "%d %s" or "%.1f %s"):format(n, units[u])
end

-- ktlua --devices: every device with the properties a tuner cares about.
function report.devices(list, why, out)
  out = out or io.stdout
  if #list == 0 then
    out:write("no devices found", why and why ~= "" and (" (" .. why .. ")") or "", "\n")
    return
  end
  for _, d in ipairs(list) do
    out:write(("%s  %s (%s, %s)\n"):format(d.id, d.name, d.type, d.vendor))
    local rows = {
      { "platform", d.platform }, { "version", d.version }, { "driver", d.driver_version },
      { "compute units", d.compute_units }, { "clock", d.clock_mhz and (d.clock_mhz .. " MHz") },
      { "max work-group", d.max_group_size and
        (d.max_group_size .. " (per dimension " .. table.concat(d.max_group_dims or {}, " x ") .. ")") },
      { "work-group multiple", d.group_multiple },
      { "local memory", d.local_memory and fmt_bytes(d.local_memory) },
      { "global memory", d.global_memory and fmt_bytes(d.global_memory) },
      { "constant memory", d.constant_memory and fmt_bytes(d.constant_memory) },
      { "max allocation", d.max_alloc and fmt_bytes(d.max_alloc) },
      { "compute capability", d.compute_capability and
        (d.compute_capability .. (d.arch and (" (compiled for " .. d.arch .. ")") or "")) },
      { "multiprocessors", d.multiprocessors },
      { "warp size", d.warp_size },
      { "shared per block", d.shared_per_block_optin and
        (fmt_bytes(d.shared_per_block or 0) .. " (" .. fmt_bytes(d.shared_per_block_optin) .. " opt-in)") },
      { "shared per SM", d.shared_per_sm and fmt_bytes(d.shared_per_sm) },
      { "registers", d.registers_per_block and
        (d.registers_per_block .. " per block, " .. (d.registers_per_sm or "?") .. " per SM") },
      { "L2 cache", d.l2_cache and fmt_bytes(d.l2_cache) },
      { "memory bus", d.memory_bus_width and
        (d.memory_bus_width .. " bits at " .. (d.memory_clock_mhz or "?") .. " MHz") },
    }
    for _, row in ipairs(rows) do
      if row[2] ~= nil then out:write(("  %-20s %s\n"):format(row[1], tostring(row[2]))) end
    end
    if d.extensions and d.extensions ~= "" then
      -- every name, wrapped at whole names under 100 columns
      local names = {}
      for name in d.extensions:gmatch("%S+") do names[#names + 1] = name end
      local line = ("  %-20s %d:"):format("extensions", #names)
      for _, name in ipairs(names) do
        if #line + 1 + #name > 100 then
          out:write(line, "\n")
          line = (" "):rep(23)
        end
        line = line .. " " .. name
      end
      out:write(line, "\n")
    end
  end
  -- Why a backend lists nothing (no driver, no library, ...).
  if why and why ~= "" then out:write("not available: ", why, "\n") end
end

-- A readable rendering of any value, for the REPL.
function report.inspect(v, indent, seen)
  indent, seen = indent or "", seen or {}
  if type(v) == "string" then return ("%q"):format(v) end
  if type(v) ~= "table" then return tostring(v) end
  if seen[v] then return "<cycle>" end
  seen[v] = true
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) == type(b) and (type(a) == "number" or type(a) == "string") then return a < b end
    return type(a) == "number"
  end)
  if #keys == 0 then return "{}" end
  local n, simple = #v, true
  for _, k in ipairs(keys) do
    if type(v[k]) == "table" then simple = false end
  end
  if simple and n == #keys and n <= 16 then
    local parts = {}
    for i = 1, n do parts[i] = report.inspect(v[i], indent, seen) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  local inner, parts = indent .. "  ", {}
  for _, k in ipairs(keys) do
    local key = type(k) == "string" and k:match("^[%a_][%w_]*$") and k or "[" .. report.inspect(k) .. "]"
    parts[#parts + 1] = inner .. key .. " = " .. report.inspect(v[k], inner, seen)
  end
  return "{\n" .. table.concat(parts, ",\n") .. "\n" .. indent .. "}"
end

return report
