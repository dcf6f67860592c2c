-- Launchers: transfers that do not block (run:read / run:write with
-- {async = true}) and events between queues (run:event, run:wait), through
-- the device process (core/eval/run_async.c, core/device/remote_async.c).
local kt = require "ktlua"

local tuner = kt.tuner()

-- o[i] = o[i] * MUL + add
local axpb = [[__kernel void axpb(__global int *o, int add) {
  int i = get_global_id(0); o[i] = o[i] * MUL + add; }]]

local function axpb_kernel(o, n, muls)
  local k = tuner:kernel{ source = axpb, name = "axpb", global = n, args = { o:inout(), kt.int(1) } }
  k:param("MUL", muls or { 2, 3 })
  return k
end

describe("a launcher's transfers that do not block", function()
  it("write on one queue, and a kernel on another waits for them through an event", function()
    local n = 4096
    local a = kt.array("int", n):fill(1)
    local host, back = kt.array("int", n):fill(5), kt.array("int", n)
    local k = axpb_kernel(a, n)
    local seen = {}
    k:launcher(function(run, cfg)
      run:write(a, host, { queue = 1, async = true })
      host:fill(-1)                        -- the write took a copy: this is not sent
      local written = run:event(1)
      run:wait(written, 0)                 -- queue 0 starts after queue 1's write
      run:launch(k)                        -- a = 5 * MUL + 1
      run:read(a, back, { queue = 0, async = true })
      run:sync(0)
      seen[#seen + 1] = cfg.MUL .. ":" .. back[0] .. "," .. back[n - 1]
      host:fill(5)
    end)
    k:reference(a, function(ref) ref:fill(11) end)
    local r = tuner:tune(k, { repeats = 2 })
    assert.are.same({ "ok", "invalid_output" }, { r[1].status, r[2].status })
    assert.matches("got 16, expected 11", r[2].error)
    assert.are.equal(1, r[1].launches)
    assert.is_true(r[1].time_ms > 0)
    for _, s in ipairs(seen) do
      local mul, first, last = s:match("^(%d):(%d+),(%d+)$")
      assert.are.equal(5 * tonumber(mul) + 1, tonumber(first))
      assert.are.equal(first, last)
    end
  end)

  it("read into the staging area keep their data while other transfers go through it", function()
    -- Isolated, a read that does not block lands in the device process's staging area; a
    -- transfer that blocks (or another read, or a write that does not) would reuse that area,
    -- so the read is taken first, and each array gets its own data.
    local n = 4096
    local a, b = kt.array("int", n):fill(1), kt.array("int", n):fill(1)
    local back_a, back_b, host = kt.array("int", n), kt.array("int", n), kt.array("int", n):fill(9)
    local k = tuner:kernel{ source = axpb, name = "axpb", global = n, args = { a:inout(), kt.int(1) } }
    k:param("MUL", { 2 })
    local seen
    k:launcher(function(run)
      run:launch(k)                                       -- a = 3
      run:read(a, back_a, { queue = 0, async = true })
      run:write(b, host)                                  -- blocks: b = 9 through the staging area
      run:read(b, back_b, { queue = 1, async = true })
      run:write(b, host, { queue = 1, async = true })     -- a copy through the staging area
      run:sync(1)
      run:sync(0)
      seen = { back_a[0], back_a[n - 1], back_b[0], back_b[n - 1] }
    end)
    assert.are.equal("ok", tuner:run(k, { MUL = 2 }).status)
    assert.are.same({ 3, 3, 9, 9 }, seen)
  end)

  it("read into their array when the queue is synchronised, at the latest when the launcher returns", function()
    local a, back = kt.array("int", 16):fill(1), kt.array("int", 16)
    local k = axpb_kernel(a, 16)
    local log = {}
    k:launcher(function(run)
      run:launch(k, { queue = 2 })
      run:read(a, back, { queue = 2, async = true })
      log[#log + 1] = back[0]              -- not yet: the queue was not synchronised
    end)
    tuner:run(k, { MUL = 2 })
    assert.are.same({ 0 }, log)
    assert.are.same(3, back[0])            -- the launcher returned: every queue finished
    assert.are.same(3, back[15])
  end)

  it("time the launches of every queue, ordered by events", function()
    local a, b = kt.array("int", 64):fill(1), kt.array("int", 64):fill(1)
    local k = axpb_kernel(a, 64)
    k:launcher(function(run)
      run:launch(k, { queue = 1 })         -- a = 3 (MUL = 2)
      run:wait(run:event(1), 2)
      run:args(k, { b:inout(), kt.int(0) })
      run:launch(k, { queue = 2 })         -- b = 2, after a's launch
      run:copy(b, a, 8, { queue = 2 })     -- b[0..7] = 3
    end)
    k:reference(b, function(ref) ref:fill(function(i) return i < 8 and 3 or 2 end) end)
    local r = tuner:tune(k, { repeats = 2 })
    assert.are.equal("ok", r[1].status, r[1].error)
    assert.are.equal(2, r[1].launches)
    assert.is_true(r[1].time_ms > 0)
  end)
end)

describe("a launcher's bad queue or event", function()
  local a, back = kt.array("int", 4):fill(1), kt.array("int", 4)
  local k = axpb_kernel(a, 4, { 2 })

  local function fails_with(launcher)
    k:launcher(function(run) run:launch(k) launcher(run) end)
    local r = tuner:tune(k, { repeats = 1 })
    assert.are.equal("runtime_failed", r[1].status)
    return (r[1].error:match("^[^\n]*"))
  end

  it("is an error that fails the configuration and names what was wrong", function()
    assert.matches(": queue 16 is out of range %(0 to 15%)$",
      fails_with(function(run) run:write(a, back, { queue = 16, async = true }) end))
    assert.matches(": queue 99 is out of range %(0 to 15%)$",
      fails_with(function(run) run:read(a, back, { queue = 99, async = true }) end))
    assert.matches(": event: queue 20 is out of range %(0 to 15%)$",
      fails_with(function(run) run:event(20) end))
    assert.matches(": wait: queue 17 is out of range %(0 to 15%)$",
      fails_with(function(run) run:wait(run:event(1), 17) end))
    assert.matches(": bad argument #2 to 'wait' %(number expected, got no value%)$",
      fails_with(function(run) run:wait(run:event(1)) end))
    assert.matches(": bad argument #1 to 'wait' %(event %(from run:event%) expected, got table%)$",
      fails_with(function(run) run:wait({}, 0) end))
    assert.matches(": bad argument #1 to 'event' %(a queue is a number from 0%)$",
      fails_with(function(run) run:event(-1) end))
    assert.matches(": read.async: expected a boolean, got number$",
      fails_with(function(run) run:read(a, back, { async = 1 }) end))
  end)

  it("refuses an event of another execution", function()
    local kept
    local msg = fails_with(function(run)
      if kept then run:wait(kept, 0) end
      kept = run:event(1)
    end)
    assert.matches(": bad argument #1 to 'wait' %(the event belongs to another execution %(an event "
      .. "lasts until its launcher returns%)%)$", msg)
    assert.are.equal("run event 0 (queue 1)", tostring(kept))
  end)
end)
