-- Online tuning: tuner:online and on:step().
local kt = require "ktlua"
local shell = require "spec.support.shell"

local tuner = kt.tuner()

-- y = x + 1 on the application's data; BAD = 1 does not compile, HANG = 1
-- never ends.
local function plus_one(n)
  local x = kt.array("float", n):fill(1)
  local y = kt.array("float", n)
  local k = tuner:kernel{ name = "plus", global = n, group = 1, args = { x:input(), y:output() },
    source = [[
__kernel void plus(__global const float *x, __global float *y) {
  int i = get_global_id(0);
#if BAD
  syntax error
#endif
#if HANG
  while (x[0] > 0.0f) { }
#endif
  y[i] = x[i] + 1.0f;
}]] }
  k:param("WG", { 1, 2, 4, 8 }, { group_x = "mul" })
  return k, x, y
end

describe("an online tuning", function()
  it("gives the application its outputs at every step, trying the search's configurations", function()
    local k, x, y = plus_one(64)
    local on = tuner:online(k, { search = "exhaustive", confirm = false })
    local seen = {}
    for s = 1, 6 do
      local step = on:step()
      assert.are.equal(s + 1, y[63]) -- each step ran on the data the step before left
      x:copy_from(y)
      seen[s] = step
    end
    for s = 1, 4 do
      assert.is_true(seen[s].searching)
      assert.are.equal(s - 1, seen[s].tried)
      assert.are.equal(seen[s].tried, seen[s].ran)
      assert.are.equal("ok", seen[s].status)
    end
    assert.is_false(seen[5].searching) -- the space is explored: the best from now on
    assert.is_true(seen[5].done)
    assert.are.same(on:best().config, seen[6].config)
    assert.are.equal(on:best().index, seen[6].ran)
    assert.is_true(on:done())
    assert.are.equal(4, #on:results())
    assert.are.equal("space explored", on:results().stopped)
  end)

  it("runs a step whose configuration failed again with the best known, or the fallback", function()
    local k, x, y = plus_one(32)
    k:param("BAD", { 1, 0 })
    local on = tuner:online(k, { search = "exhaustive", fallback = { WG = 8, BAD = 0 } })
    local first = on:step() -- WG=1 BAD=1: does not compile
    assert.are.same({ true, "compile_failed", true }, { first.searching, first.status, first.fell_back })
    assert.matches("undeclared identifier 'syntax'", first.error)
    assert.are.same({ WG = 8, BAD = 0 }, first.config)
    assert.are.equal(2, y[0])
    local second = on:step() -- WG=1 BAD=0 works
    assert.are.same({ "ok", false }, { second.status, second.fell_back })
    x:copy_from(y)
    local third = on:step() -- WG=2 BAD=1 fails: the best known runs
    assert.is_true(third.fell_back)
    assert.are.same({ WG = 1, BAD = 0 }, third.config)
    assert.are.equal(3, y[0])
  end)

  it("with validate, checks the search's steps against the reference on the step's data", function()
    local x = kt.array("int", 32):fill(10)
    local k = tuner:kernel{ name = "inc", global = 32, args = { x:inout() },
      source = "__kernel void inc(__global int *x) { int i = get_global_id(0); x[i] = x[i] + V; }" }
    k:param("V", { 1, 2 })
    k:reference(x, function(ref) for i = 0, 31 do ref[i] = x[i] + 1 end end)
    local on = tuner:online(k, { search = "exhaustive", validate = true })
    assert.are.equal("ok", on:step().status)
    assert.are.equal(11, x[0])
    local step = on:step() -- V = 2 is wrong: nothing of it is read back, V = 1 runs the step
    assert.are.same({ "invalid_output", true, 1 }, { step.status, step.fell_back, step.config.V })
    assert.matches("^element 0: got 13, expected 12", step.error)
    assert.are.equal(12, x[0])
    assert.has_error(function() tuner:online(tuner:kernel{ name = "inc", global = 32,
      args = { x:inout() }, source = "__kernel void inc(__global int *x) { }" }, { validate = true }) end,
      "online options.validate: the kernel has no reference (k:reference)")
  end)

  it("says why a step has no outputs when nothing has worked and no fallback was given", function()
    local k, x, y = plus_one(16)
    k:param("BAD", { 1 })
    local on = tuner:online(k, { search = "exhaustive" })
    y:fill(-1)
    local ok, err = pcall(on.step, on)
    assert.is_false(ok)
    assert.matches("task plus: no configuration has run correctly yet and no fallback was given, so "
      .. "this step has no outputs: .*undeclared identifier 'syntax'", err)
    assert.are.equal(-1, y[0]) -- untouched
  end)

  it("leaves the arrays as they were when a step fails after its run (a metric's error)", function()
    local k, x, y = plus_one(16)
    local fail = false
    local on = tuner:online(k, { search = "exhaustive", metrics = { m = function()
      if fail then error("no metric today") end
      return 1
    end } })
    assert.are.same({ "ok", 2 }, { on:step().status, y[0] })
    y:fill(-1)
    fail = true
    local ok, err = pcall(on.step, on)
    assert.is_false(ok)
    assert.matches("no metric today", err)
    assert.are.same({ -1, -1 }, { y[0], y[15] })
    fail = false
    local step = on:step()
    assert.are.same({ true, "ok", 2 }, { step.searching, step.status, y[0] })
  end)

  it("survives a configuration that hangs: the step falls back and the search goes on", function()
    local k, x, y = plus_one(16)
    k:param("HANG", { 0, 1 })
    local on = tuner:online(k, { search = "exhaustive", time_limit = 0.5 })
    assert.are.equal("ok", on:step().status)
    local step = on:step()
    assert.are.same({ "timeout", true }, { step.status, step.fell_back })
    assert.are.equal(2, y[0])
    assert.are.equal("ok", on:step().status)
  end)

  it("continues from its journal when the application starts again", function()
    local path = os.tmpname()
    os.remove(path)
    local k = plus_one(16)
    local on = tuner:online(k, { search = "random", seed = 5, journal = path })
    local before = {}
    for s = 1, 2 do before[s] = on:step().tried end
    on = nil
    collectgarbage()
    local again = tuner:online(k, { search = "random", seed = 5, journal = path, resume = true })
    local after = again:step()
    assert.are.equal(3, #again:results()) -- two from the journal, one run now
    assert.are_not.equal(before[1], after.tried) -- nothing the journal holds runs again
    assert.are_not.equal(before[2], after.tried)
    os.remove(path)
  end)

  it("stores its best in the database when its search ends, and starts from it next time", function()
    local path = os.tmpname()
    os.remove(path)
    local db = kt.db(path)
    local k = plus_one(16)
    local on = tuner:online(k, { search = "exhaustive", db = db, size = { n = 16 } })
    repeat local step = on:step() until step.done
    local stored = db:best{ kernel = k, device = tuner, size = { n = 16 } }
    assert.are.same(on:best().config, stored.config)
    -- the kernel is in use while an online tuning of it lives
    assert.has_error(function() tuner:tune(k) end)
    on = nil
    collectgarbage()
    local next_run = tuner:online(k, { search = "random", seed = 9, db = db, size = { n = 16 } })
    local first = next_run:step()
    assert.are.same(stored.config, first.config) -- the stored best is tried first
    next_run:close() -- (which stores its best: it holds the database until then)
    db:close()
    os.remove(path)
  end)

  it("holds its database open until it has stored its best there, and closes when that fails", function()
    local path = os.tmpname()
    os.remove(path)
    kt.db(path):close() -- made, for the read-only one below
    local db = kt.db(path)
    local k = plus_one(16)
    local on = tuner:online(k, { search = "exhaustive", db = db, size = { n = 16 }, confirm = false })
    on:step()
    local ok, err = pcall(db.close, db)
    assert.is_false(ok)
    assert.matches("the database is in use by an online tuning %(tuner:online%), which stores its best "
      .. "there when its search ends: close it after on:close%(%)", err)
    repeat local step = on:step() until step.done
    assert.are.same(on:best().config, db:best{ kernel = k, device = tuner, size = { n = 16 } }.config)
    db:close() -- stored: let go
    on:close()
    local ro = kt.db(path, { readonly = true })
    on = tuner:online(k, { search = "exhaustive", db = ro, size = { n = 16 }, confirm = false })
    on:step()
    ok, err = pcall(on.close, on)
    assert.is_false(ok)
    assert.matches("storing: it was opened read%-only %(as asked%)$", err)
    assert.are.equal("online tuning (released)", tostring(on)) -- closed all the same
    ro:close()
    assert.are.equal(4, #tuner:tune(k, { search = "exhaustive" }))
    os.remove(path)
  end)

  it("goes by the objective and metrics given, as tuner:tune does", function()
    local k, x, y = plus_one(16)
    local on = tuner:online(k, { search = "exhaustive", objective = "wg", maximize = true,
      metrics = { wg = function(r, cfg) return cfg.WG * 10 end,
                  ms = function(r) return r.time_ms end } })
    for _ = 1, 4 do assert.is_true(on:step().searching) end
    local last = on:step()
    assert.are.same({ false, 8 }, { last.searching, last.config.WG }) -- the largest WG is best
    local rs = on:results()
    assert.are.same({ "wg", true }, { rs.objective, rs.maximize })
    for i = 1, 4 do
      assert.are.equal(rs[i].config.WG * 10, rs[i].metrics.wg)
      assert.are.equal(rs[i].time_ms, rs[i].metrics.ms)
    end
    assert.are.same({ 8, 80 }, { on:best().config.WG, on:best().metrics.wg })
    assert.are.equal(y[0], 2)
    assert.has_error(function() tuner:online(k, { objective = "kernel+host" }) end,
      "online options.objective: 'kernel+host' is not measured online (a step's time is the "
      .. "kernel's)")
    assert.has_error(function() tuner:online(k, { objective = "gflops" }) end,
      "tune options.objective: expected 'kernel', 'kernel+host', the name of a metric or a "
      .. "function(result, cfg), got 'gflops'")
    assert.has_error(function() tuner:online(k, { maximize = true }) end,
      "tune options.maximize: give the objective to maximise")
  end)

  it("rejects options it does not know and configurations that are not in its space", function()
    local k = plus_one(16)
    assert.has_error(function() tuner:online(k, { repeats = 3 }) end,
      "online options: unknown field 'repeats' (expected one of: search, seed, stop, journal, "
      .. "resume, time_limit, lookahead, fallback, db, size, validate, metrics, objective, "
      .. "maximize, confirm)")
    assert.has_error(function() tuner:online(k, { fallback = { WG = 3 } }) end,
      "online options.fallback: WG = 3 is not one of its values (1, 2, 4, 8)")
    assert.has_error(function() tuner:online(k, { fallback = { WG = 1, V = 1 } }) end,
      'online options.fallback: configuration names unknown parameter "V"')
    assert.has_error(function() tuner:online(k, { db = kt.db(os.tmpname()) }) end,
      "tune options: db and size go together (the database keys what it stores by the problem size)")
    assert.has_error(function() tuner:online(k, { db = 3, size = { n = 16 } }) end,
      "tune options.db: expected a database (kt.db), got number")
  end)

  it("needs no options", function()
    local k, x, y = plus_one(16)
    local on = tuner:online(k)
    local step = on:step()
    assert.are.same({ true, "ok", 2 }, { step.searching, step.status, y[0] })
    on:close()
  end)
end)

-- x[i] += 1 on the application's data, checked against x + 1: V = 2 adds 2
-- (always wrong); LATE = 1 adds 2 once x reaches late_from (14: right during
-- the search below, wrong when its leading candidates run again). With a
-- launcher, it launches the kernel once and counts its calls.
local function increment(launched, late_from)
  local x = kt.array("int", 32):fill(10)
  local k = tuner:kernel{ name = "inc", global = 32, args = { x:inout() }, source = ([[
__kernel void inc(__global int *x) {
  int i = get_global_id(0);
  x[i] = x[i] + ((V == 2 || (LATE && x[i] >= %d)) ? 2 : 1);
}]]):format(late_from or 14) }
  k:param("V", { 2, 1 })
  k:param("LATE", { 0, 1 })
  local refs = { n = 0 }
  k:reference(x, function(ref)
    refs.n = refs.n + 1
    for i = 0, 31 do ref[i] = x[i] + 1 end
  end)
  if launched then
    k:launcher(function(run)
      launched.n = launched.n + 1
      run:launch(k)
    end)
  end
  return k, x, refs
end

-- The steps of an online tuning of increment() with validate, through its
-- search, the confirmation of its leading candidates (one of which turns
-- wrong), its best, on:stop() and on:close(). Each step's outputs are the
-- application's: x grows by exactly 1 a step, whatever ran it.
local function validated_phases(launched)
  local k, x, refs = increment(launched)
  local on = tuner:online(k, { search = "exhaustive", validate = true, fallback = { V = 1, LATE = 0 } })
  local steps, fell_back = {}, 0
  local function step()
    local s = on:step()
    steps[#steps + 1] = s
    if s.fell_back then fell_back = fell_back + 1 end
    assert.are.equal(10 + #steps, x[0], "step " .. #steps)
    assert.are.equal(10 + #steps, x[31], "step " .. #steps)
    return s
  end
  -- the search: V = 2 is wrong and falls back (to the fallback, as nothing has worked yet)
  local want = { { 2, 0, "invalid_output" }, { 2, 1, "invalid_output" }, { 1, 0, "ok" }, { 1, 1, "ok" } }
  for i, w in ipairs(want) do
    local s = step()
    assert.are.same({ true, false, i - 1, w[3], w[3] ~= "ok", false },
      { s.searching, s.confirming, s.tried, s.status, s.fell_back, s.done })
    assert.are.same(w[3] == "ok" and { V = w[1], LATE = w[2] } or { V = 1, LATE = 0 }, s.config)
    if w[3] ~= "ok" then
      assert.are.equal(("element 0: got %d, expected %d"):format(10 + i + 1, 10 + i),
        s.error:match("^element 0: got %d+, expected %d+"))
    end
  end
  -- the confirmation: both candidates run again (3 times each) in turn; LATE = 1
  -- is wrong now, takes that failure and runs no more: 4 steps, one fallen back
  local late
  for i = 1, 4 do
    local s = step()
    assert.are.same({ false, true, i == 4 }, { s.searching, s.confirming, s.done })
    if s.tried == 3 then
      late = 10 + #steps - 1 -- its input
      assert.are.same({ "invalid_output", true, 2, { V = 1, LATE = 0 } },
        { s.status, s.fell_back, s.ran, s.config })
      assert.are.equal(("element 0: got %d, expected %d"):format(late + 2, late + 1),
        s.error:match("^element 0: got %d+, expected %d+"))
    else
      assert.are.same({ "ok", false, 2, 2, { V = 1, LATE = 0 } },
        { s.status, s.fell_back, s.tried, s.ran, s.config })
    end
  end
  assert.is_not_nil(late)
  assert.is_true(on:done())
  local rs = on:results()
  assert.are.same({ "invalid_output", "invalid_output", "ok", "invalid_output" },
    { rs[1].status, rs[2].status, rs[3].status, rs[4].status })
  assert.are.same({ 0, 0, 4, 1 }, { #rs[1].samples_ms, #rs[2].samples_ms, #rs[3].samples_ms,
    #rs[4].samples_ms })
  assert.are.equal(("element 0: got %d, expected %d"):format(late + 2, late + 1),
    rs[4].error:match("^element 0: got %d+, expected %d+"))
  local best = on:best()
  assert.are.same({ 2, { V = 1, LATE = 0 } }, { best.index, best.config })
  -- the best runs every step now, unchecked
  local s = step()
  assert.are.same({ false, false, "ok", false, 2, true }, { s.searching, s.confirming, s.status,
    s.fell_back, s.ran, s.done })
  assert.is_nil(s.tried)
  on:stop() -- ended already: nothing changes
  s = step()
  assert.are.same({ "ok", 2, { V = 1, LATE = 0 } }, { s.status, s.ran, s.config })
  assert.are.same(best.config, on:best().config)
  assert.are.equal(4, #on:results())
  on:close()
  on:close() -- again: nothing
  local ok, err = pcall(on.step, on)
  assert.is_false(ok)
  assert.matches("the online tuning has been closed %(on:close%(%)%)", err)
  -- the references were computed for the checked steps alone: the search's and the confirmation's
  assert.are.same({ 10, 8, 3 }, { #steps, refs.n, fell_back })
  return k, x
end

describe("an online tuning with validate", function()
  it("checks its search's and its confirmation's steps, then runs the best, stops and closes", function()
    local k = validated_phases()
    assert.are.equal(4, #tuner:tune(k, { search = "exhaustive" })) -- released by on:close()
  end)

  it("does the same through a launcher, which runs each step and each step's fallback", function()
    local launched = { n = 0 }
    validated_phases(launched)
    assert.are.equal(10 + 3, launched.n)
  end)

  it("runs its best after on:stop() in the middle of the confirmation, and is freed unclosed", function()
    local k, x = increment(nil, 0) -- V = 1, LATE = 0 alone is right: the one candidate
    local on = tuner:online(k, { search = "exhaustive", validate = true, fallback = { V = 1, LATE = 0 } })
    for _ = 1, 5 do on:step() end -- the search, and the confirmation's first step
    assert.is_false(on:done())
    on:stop()
    assert.is_true(on:done())
    local s = on:step()
    assert.are.same({ false, false, "ok", 2 }, { s.searching, s.confirming, s.status, s.ran })
    assert.are.equal(16, x[0])
    assert.are.same({ 2, 2 }, { #on:results()[3].samples_ms, on:best().index }) -- one run again
    on = nil
    collectgarbage()
    collectgarbage()
    assert.are.equal(4, #tuner:tune(k, { search = "exhaustive" }))
  end)
end)

describe("an online tuning's lifetime", function()
  it("cannot be stepped, stopped or closed by its own step's callbacks: the step goes on", function()
    local k, x = increment()
    local on, said = nil, {}
    local function try(what)
      local ok, err = pcall(on[what], on)
      said[#said + 1] = ok and "ok" or err:match("%((.*)%)$") or err
    end
    k:launcher(function(run)
      try("step")
      try("stop")
      try("close")
      run:launch(k)
    end)
    k:reference(x, function(ref)
      try("close")
      for i = 0, 31 do ref[i] = x[i] + 1 end
    end)
    on = tuner:online(k, { search = "exhaustive", validate = true, fallback = { V = 1, LATE = 0 } })
    local step = on:step() -- V = 2 fails, the fallback runs: two runs and a reference
    assert.are.same({ "invalid_output", true, 11 }, { step.status, step.fell_back, x[0] })
    -- (the step tried again from the fallback's launcher once freed this step's error)
    assert.are.equal("element 0: got 12, expected 11", step.error:match("^element 0: got %d+, expected %d+"))
    local refused = "the online tuning is in a step (this is one of its callbacks): %s it after "
      .. "on:step() returns"
    local busy = "the tuner is in use: a tuning or a run is in progress on it"
    local stop, close = refused:format("stop"), refused:format("close")
    assert.are.same({ close, busy, stop, close, busy, stop, close }, said)
    assert.is_false(on:done())
    assert.are.same({ "invalid_output", "ok" }, { on:step().status, on:step().status })
    on:close()
  end)

  it("holds its tuner, which closes once the online tuning has", function()
    local own = kt.tuner()
    local k = plus_one(16)
    local on = own:online(k, { search = "exhaustive" })
    on:step()
    local ok, err = pcall(own.close, own)
    assert.is_false(ok)
    assert.matches("the tuner is in use by an online tuning %(tuner:online%): close it after "
      .. "on:close%(%)", err)
    assert.are.equal("ok", on:step().status) -- the tuner is still there
    on:close()
    own:close()
    assert.are.equal("tuner (closed)", tostring(own))
  end)

  for _, how in ipairs({ "stop", "close", "collect" }) do
    it("ends (" .. how .. ") from another tuning's callback on its tuner, which runs to its end "
      .. "and leaves its arrays as it found them", function()
      local k = increment()
      -- the other tuning's launcher writes its input: the tuning puts it back at its end
      local other, input = plus_one(16)
      other:launcher(function(run)
        input[0] = -5
        run:launch(other)
      end)
      local on = tuner:online(k, { search = "exhaustive", validate = true,
        fallback = { V = 1, LATE = 0 } })
      for _ = 1, 3 do on:step() end -- V = 2 twice, then V = 1 LATE = 0: the best so far
      local r = tuner:tune(other, { search = "exhaustive", progress = function()
        if how == "stop" then on:stop()
        elseif how == "close" then on:close()
        elseif on then
          on = nil
          collectgarbage()
        end
      end })
      assert.are.same({ 4, "ok", "ok", "ok", "ok" }, { #r, r[1].status, r[2].status, r[3].status,
        r[4].status })
      assert.are.equal(1, input[0])
      if how == "stop" then
        assert.is_true(on:done())
        assert.are.same({ "ok", { V = 1, LATE = 0 } }, { on:step().status, on:best().config })
        on:close()
      end
      collectgarbage()
      assert.are.equal(4, #tuner:tune(k, { search = "exhaustive" })) -- released
    end)
  end
end)

describe("examples/online_heat.lua", function()
  it("tunes its stencil while the simulation runs, and the plate cools as it should", function()
    local out, code = shell.run(shell.ktlua .. " examples/online_heat.lua --n=32 --steps=40 --count=12")
    assert.are.equal(0, code, out)
    assert.matches("heat 32x32, 40 steps on .-: 12 configurations tried online", out)
    assert.matches("largest error against the discrete solution: [%d.e%-]+ %(peak 0%.%d+%)", out)
    out, code = shell.run(shell.ktlua .. " examples/online_heat.lua --n=32 --steps=40 --count=12 --offline")
    assert.are.equal(0, code, out)
    assert.matches("12 configurations tried before the steps", out)
  end)
end)
