-- ktlua.split: kt.split(options), one kernel's range split across devices
-- (Erdem et al.): each device runs a part of the range at the same time,
-- with its own tuned configuration, and the shares are set so that the
-- parts finish together.
--
-- The contract: kernel(tuner, part) makes the kernel of one part, on that
-- part's tuner, for the items [part.offset, part.offset + part.count) of
-- the range (the kernel takes the offset as an argument, kt.int(part.offset),
-- or a #define; its global size covers part.count items), using
-- part.array(a) (that device's own copy of a) for every array. Each output
-- array holds the same number of elements per item of the range; ktlua
-- copies each part's slice of it into the output and checks the whole.
--
-- How the shares are found: each device's configuration is tuned on the
-- whole range (tuner:tune with options.tune) unless options.configs gives
-- them; its speed (items per ms) gives the first shares, in proportion;
-- then each step runs the parts at once (once untimed, then options.repeats
-- times: the median of the slowest part's kernel time), takes each part's measured speed and
-- shares again, until the shares stay put or options.refine steps have run.
-- Each device alone is measured the same way, and the best of every
-- measured sharing (a device alone included) is the answer.
--
-- A step's time is on the host clock, as devices share no other: the
-- parts upload what changed and build their kernels, then are let go
-- together (core/eval/split.c), and the time runs from then until the last
-- part's execution has ended (launch messages, restoring outputs, kernels,
-- waits). Each part's kernel time (device events) is kept beside it, and
-- the wall time of the whole run (uploads and reading back each part's
-- whole copy of the outputs too).
local split = {}

local OPTIONS = {
  devices = true, range = true, quantum = true, kernel = true, outputs = true, tune = true,
  configs = true, speeds = true, repeats = true, refine = true, time_limit = true,
  allow_same = true, counts = true,
}

-- Errors of split itself start with "split " and get the caller's place
-- (split.split adds it); errors of the script's functions keep theirs.
local function fail(msg, ...) error("split " .. msg:format(...), 0) end

local function is_array(v)
  if type(v) ~= "userdata" then return false end
  local ok, n = pcall(function() return v.length end)
  return ok and math.type(n) == "integer"
end

local function positive_int(v) return math.type(v) == "integer" and v > 0 end

-- Shares of range, multiples of quantum, in proportion to speeds; the
-- quanta that rounding down leaves go to the largest remainders.
function split.shares(range, speeds, quantum)
  quantum = quantum or 1
  local units, total = range // quantum, 0
  for _, s in ipairs(speeds) do total = total + s end
  local counts, rest, given = {}, {}, 0
  for i, s in ipairs(speeds) do
    local exact = units * s / total
    counts[i] = math.floor(exact)
    rest[i] = { i = i, frac = exact - counts[i] }
    given = given + counts[i]
  end
  table.sort(rest, function(a, b) return a.frac > b.frac or (a.frac == b.frac and a.i < b.i) end)
  for j = 1, units - given do counts[rest[j].i] = counts[rest[j].i] + 1 end
  for i = 1, #counts do counts[i] = counts[i] * quantum end
  return counts
end

local function check_speeds(speeds, n)
  if speeds == nil then return end
  if type(speeds) ~= "table" or #speeds ~= n then
    fail("options.speeds: expected a number per device (%d)", n)
  end
  for i, s in ipairs(speeds) do
    if type(s) ~= "number" or s <= 0 or s ~= s or s == math.huge then
      fail("options.speeds[%d]: expected a positive number, got %s", i, tostring(s))
    end
  end
end

-- Each output as {array =, per =, reference =, tolerance =}.
-- counts = {...}: shares given, each a multiple of the quantum, summing to the range.
local function check_counts(counts, n, range, quantum)
  if counts == nil then return end
  if type(counts) ~= "table" or #counts ~= n then
    fail("options.counts: expected a share per device (%d)", n)
  end
  local sum = 0
  for i, c in ipairs(counts) do
    if math.type(c) ~= "integer" or c < 0 or c % quantum ~= 0 then
      fail("options.counts[%d]: expected a multiple of the quantum (%d) from 0, got %s", i, quantum,
           tostring(c))
    end
    sum = sum + c
  end
  if sum ~= range then fail("options.counts: the shares sum to %d, not the range (%d)", sum, range) end
end

local function check_outputs(outputs, range)
  if type(outputs) ~= "table" or #outputs == 0 then
    fail("options.outputs: expected a list of the output arrays ({c} or {{c, reference = fn}})")
  end
  local list = {}
  for i, o in ipairs(outputs) do
    local entry = type(o) == "table" and { array = o[1], reference = o.reference,
      tolerance = o.tolerance } or { array = o }
    local a = entry.array
    if not is_array(a) then fail("options.outputs[%d]: expected an array", i) end
    if a.length % range ~= 0 then
      fail("options.outputs[%d]: its %d elements are not a whole number per item of the range (%d)",
           i, a.length, range)
    end
    entry.per = a.length // range
    local ref = entry.reference
    if ref ~= nil and type(ref) ~= "function" and not is_array(ref) then
      fail("options.outputs[%d].reference: expected a function(ref) or an array", i)
    end
    if entry.tolerance == nil then
      entry.tolerance = (a.type == "float" or a.type == "double" or a.type == "half") and 1e-4 or 0
    end
    list[i] = entry
  end
  return list
end

local function is_tuner(v)
  return type(v) == "userdata" and tostring(v):find("^tuner on ") ~= nil
end

-- A tuner per device: the tuners given, or opened here (closed at the end).
local function open_devices(kt, devices, allow_same)
  if type(devices) ~= "table" or #devices < 2 then
    fail("options.devices: expected a list of at least two devices (ids such as \"cuda:0\", "
         .. "device tables or tuners)")
  end
  local tuners, opened, seen = {}, {}, {}
  for i, d in ipairs(devices) do
    local t = d
    if not is_tuner(d) then
      local ok, got = pcall(kt.tuner, d)
      if not ok then
        for _, o in ipairs(opened) do o:close() end
        fail("options.devices[%d]: %s", i, tostring(got):gsub("^[^:]*:%d+: ", ""))
      end
      t, opened[#opened + 1] = got, got
    end
    local id = t.device.id
    local again = seen[id] and (not allow_same or seen[t])
    if again then
      for _, o in ipairs(opened) do o:close() end
      if seen[t] then fail("options.devices[%d]: the same tuner as devices[%d]", i, seen[t]) end
      fail("options.devices[%d]: %s is devices[%d] again (allow_same = true runs two parts on "
           .. "one device, for tests)", i, id, seen[id])
    end
    seen[id], seen[t], tuners[i] = i, i, t
  end
  return tuners, opened
end

-- The expected contents of each output, computed once.
local function expected_outputs(outputs)
  for _, o in ipairs(outputs) do
    if type(o.reference) == "function" then
      o.expected = o.array:copy()
      o.reference(o.expected)
    elseif o.reference then
      if o.reference.length ~= o.array.length then
        fail("options.outputs: a reference of %d elements for an output of %d", o.reference.length,
             o.array.length)
      end
      o.expected = o.reference
    end
  end
end

local function new_part(self, i, offset, count)
  local copies = self.copies[i]
  return { index = i, device = self.tuners[i].device, offset = offset, count = count,
    array = function(a)
      if not is_array(a) then error("part.array: expected an array", 2) end
      copies[a] = copies[a] or a:copy()
      return copies[a]
    end }
end

local function make_kernel(self, i, offset, count)
  local part = new_part(self, i, offset, count)
  local k = self.kernel(self.tuners[i], part)
  if type(k) ~= "userdata" then
    fail("options.kernel: expected it to return the part's kernel, got %s", type(k))
  end
  return k, part
end

-- Tunes device i on the whole range: its best configuration and time.
local function tune_device(self, i)
  local k, part = make_kernel(self, i, 0, self.range)
  for _, o in ipairs(self.outputs) do
    if o.expected then k:reference(part.array(o.array), o.expected, { tolerance = o.tolerance }) end
  end
  local results = self.tuners[i]:tune(k, self.tune)
  local best, why = results:best()
  if not best then fail("device %s: %s", self.tuners[i].device.id, why) end
  return best.config, best.time_ms
end

local function now() return require("ktlua").clock() end

local function median(xs)
  table.sort(xs)
  local n = #xs
  return n % 2 == 1 and xs[(n + 1) // 2] or (xs[n // 2] + xs[n // 2 + 1]) / 2
end

-- Runs the parts at once; fails on a part that did not come out ok.
local function run_parts(self, parts, which)
  local results = require("ktlua.split_run").run(parts, self.time_limit)
  for j, res in ipairs(results) do
    local i = which[j]
    if res.status ~= "ok" then
      fail("part %d on %s: %s%s", i, self.tuners[i].device.id, res.status,
           res.error and (": " .. res.error) or "")
    end
  end
  return results
end

-- Runs the parts of counts at once, once untimed (a warm-up, unless
-- repeats is 1), then repeats times: the medians of the time until the
-- last part ended, of each part's (nil: no share) and kernel time, and of
-- the whole run's wall time.
local function measure(self, counts, repeats)
  repeats = repeats or self.repeats
  local parts, which, offset = {}, {}, 0
  for i, c in ipairs(counts) do
    if c > 0 then
      local k = make_kernel(self, i, offset, c)
      parts[#parts + 1] = { self.tuners[i], k, self.configs[i] }
      which[#parts] = i
    end
    offset = offset + c
  end
  if repeats > 1 then run_parts(self, parts, which) end
  local spans, times, kernels, walls = {}, {}, {}, {}
  for r = 1, repeats do
    local span, t0 = 0, now()
    local results = run_parts(self, parts, which)
    walls[r] = (now() - t0) * 1e3
    for j, res in ipairs(results) do
      local i = which[j]
      times[i], kernels[i] = times[i] or {}, kernels[i] or {}
      times[i][r], kernels[i][r] = res.end_ms, res.time_ms
      span = math.max(span, res.end_ms)
    end
    spans[r] = span
  end
  local part_ms, kernel_ms = {}, {}
  for i in pairs(times) do part_ms[i], kernel_ms[i] = median(times[i]), median(kernels[i]) end
  return { time_ms = median(spans), parts_ms = part_ms, kernels_ms = kernel_ms,
           wall_ms = median(walls) }
end

-- Copies each part's slice of every output into it, then checks it.
local function combine(self, counts)
  local offset = 0
  for i, c in ipairs(counts) do
    for _, o in ipairs(self.outputs) do
      local copy = self.copies[i][o.array]
      if c > 0 and not copy then
        fail("options.kernel: part %d did not use part.array(output %s)", i, o.array.type)
      end
      for e = offset * o.per, (offset + c) * o.per - 1 do o.array[e] = copy[e] end
    end
    offset = offset + c
  end
  for n, o in ipairs(self.outputs) do
    if o.expected then
      for e = 0, o.array.length - 1 do
        local got, want = o.array[e], o.expected[e]
        if not (math.abs(got - want) <= o.tolerance) then
          return "invalid_output", ("output %d, element %d: %s instead of %s"):format(n, e,
            tostring(got), tostring(want))
        end
      end
    end
  end
  return "ok"
end

local function same(a, b)
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- Measures counts and keeps it as a step (and as the best so far).
local function step(self, counts, kind)
  local s = measure(self, counts)
  s.counts, s.kind = counts, kind
  self.steps[#self.steps + 1] = s
  if not self.best or s.time_ms < self.best.time_ms then self.best = s end
  return s
end

local function find_shares(self, speeds)
  local n = #self.tuners
  for i = 1, n do
    local alone = {}
    for j = 1, n do alone[j] = i == j and self.range or 0 end
    local s = step(self, alone, "alone")
    self.alone_ms[i] = s.time_ms
    speeds[i] = speeds[i] or self.range / s.time_ms
  end
  local counts = split.shares(self.range, speeds, self.quantum)
  for _ = 1, self.refine do
    local s = step(self, counts, "split")
    for i, c in ipairs(counts) do
      if c > 0 and s.parts_ms[i] > 0 then speeds[i] = c / s.parts_ms[i] end
    end
    local next_counts = split.shares(self.range, speeds, self.quantum)
    if same(next_counts, counts) then break end
    counts = next_counts
  end
end

local function check_options(opts)
  if type(opts) ~= "table" then fail("options: expected a table") end
  for key in pairs(opts) do
    if not OPTIONS[key] then fail("options: unknown option '%s'", tostring(key)) end
  end
  if not positive_int(opts.range) then fail("options.range: expected a positive integer") end
  local q = opts.quantum or 1
  if not positive_int(q) or opts.range % q ~= 0 then
    fail("options.quantum: expected a positive integer that divides the range (%d), got %s",
         opts.range, tostring(q))
  end
  if type(opts.kernel) ~= "function" then
    fail("options.kernel: expected a function(tuner, part) returning the part's kernel")
  end
  for _, key in ipairs { "repeats", "refine" } do
    local v = opts[key]
    if v ~= nil and (math.type(v) ~= "integer" or v < (key == "repeats" and 1 or 0)) then
      fail("options.%s: expected an integer of at least %d", key, key == "repeats" and 1 or 0)
    end
  end
  local tl = opts.time_limit
  if tl ~= nil and (type(tl) ~= "number" or tl <= 0) then
    fail("options.time_limit: expected a positive number of seconds")
  end
  if opts.tune ~= nil and type(opts.tune) ~= "table" then fail("options.tune: expected a table") end
end

-- The answer: each part's device, share and configuration, the split's
-- time, each device's time alone and every step measured.
local function answer(self, status, why)
  local parts, offset = {}, 0
  for i, c in ipairs(self.best.counts) do
    parts[i] = { device = self.tuners[i].device.id, offset = offset, count = c,
      config = self.configs[i], time_ms = self.best.parts_ms[i],
      kernel_ms = self.best.kernels_ms[i], alone_ms = self.alone_ms[i],
      tuned_ms = self.tuned_ms[i] }
    offset = offset + c
  end
  local alone, alone_wall
  for _, s in ipairs(self.steps) do
    if s.kind == "alone" and (not alone or s.time_ms < alone) then alone = s.time_ms end
    if s.kind == "alone" and (not alone_wall or s.wall_ms < alone_wall) then alone_wall = s.wall_ms end
  end
  return { parts = parts, counts = self.best.counts, time_ms = self.best.time_ms,
    wall_ms = self.best.wall_ms, best_alone_ms = alone, best_alone_wall_ms = alone_wall, speedup = alone and alone / self.best.time_ms, steps = self.steps,
    status = status, error = why }
end

local function run_split(opts, tuners, opened, where)
  local self = { tuners = tuners, range = opts.range, quantum = opts.quantum or 1,
    kernel = opts.kernel, tune = opts.tune or {}, repeats = opts.repeats or 5,
    refine = opts.refine or 4, time_limit = opts.time_limit, steps = {}, copies = {},
    configs = {}, alone_ms = {}, tuned_ms = {} }
  local ok, result = pcall(function()
    self.outputs = check_outputs(opts.outputs, self.range)
    check_speeds(opts.speeds, #tuners)
    check_counts(opts.counts, #tuners, self.range, self.quantum)
    if opts.configs ~= nil and (type(opts.configs) ~= "table" or #opts.configs ~= #tuners) then
      fail("options.configs: expected a configuration per device (%d)", #tuners)
    end
    for i = 1, #tuners do self.copies[i] = {} end
    expected_outputs(self.outputs)
    local speeds = {}
    for i = 1, #tuners do
      if opts.configs then
        self.configs[i] = opts.configs[i]
      else
        self.configs[i], self.tuned_ms[i] = tune_device(self, i)
        speeds[i] = self.range / self.tuned_ms[i]
      end
      if opts.speeds then speeds[i] = opts.speeds[i] end
    end
    if opts.counts then step(self, opts.counts, "given") else find_shares(self, speeds) end
    measure(self, self.best.counts, 1) -- its outputs are the ones combined
    return answer(self, combine(self, self.best.counts))
  end)
  for _, t in ipairs(opened) do t:close() end
  if not ok then
    error(type(result) == "string" and result:find("^split ") and where .. result or result, 0)
  end
  return result
end

function split.split(opts)
  local info = debug.getinfo(3, "Sl") -- the script's call of kt.split (C) of this
  local where = info and info.currentline > 0 and (info.short_src .. ":" .. info.currentline .. ": ")
                or ""
  local ok, got, opened = pcall(function()
    check_options(opts)
    return open_devices(require "ktlua", opts.devices, opts.allow_same)
  end)
  if not ok then error(type(got) == "string" and got:find("^split ") and where .. got or got, 0) end
  return run_split(opts, got, opened, where)
end


return split
