-- What a peer's user hits first in running a tuning (issue 28, "Runs"):
-- one numbering of the space for results, seeds and k:space().
local kt = require "ktlua"
local statuses = require "spec.support.statuses"

local tuner = kt.tuner()
local dev = tuner.device
local src = "__kernel void k(__global float *a) { a[get_global_id(0)] = 1.0f; }"

-- A (not a size) times G, a work-group size of which the device's limit
-- prunes those above max_group_size: G varies fastest, so every index of
-- A = 2 moves when the limit prunes.
local function sized()
  local k = tuner:kernel{ source = src, name = "k", global = 8192, group = 1 }
  k:args { kt.array("float", 8192) }
  k:param("A", { 1, 2 })
  k:param("G", kt.pow2(1, 2 * dev.max_group_size), { group_x = "mul" })
  return k
end

local function same(a, b) return a.A == b.A and a.G == b.G end

describe("one numbering of the space", function()
  it("k:space() counts the space as defined, also once a device has pruned it", function()
    local k = sized()
    local n = k:space():count()
    local pruned = k:space(dev)
    assert.are.equal(n - 2, pruned:count())
    assert.are.equal(n, k:space():count())
    assert.are.equal(n - 2, pruned:count())
  end)

  it("numbers results as k:space() does, whatever the device pruned", function()
    local k = sized()
    local results = tuner:tune(k, { search = "exhaustive" })
    local s = k:space()
    assert.are.equal(s:count() - 2, #results)
    for _, r in ipairs(results) do
      assert.is_true(same(r.config, s:config(r.index)))
      assert.are.equal(r.index, s:index(r.config))
    end
  end)

  it("runs the configuration a result's index names when it is fed back as a seed", function()
    local k = sized()
    local first = tuner:tune(k, { search = "exhaustive" })
    local last = first[#first] -- A = 2 and the largest G: its index moved with pruning
    assert.are.equal(2, last.config.A)
    -- a fresh kernel, as in the next run of the program that wrote the results
    local again = tuner:tune(sized(), { seeds = { last.index }, stop = { count = 1 } })
    assert.are.equal(1, #again)
    assert.is_true(same(last.config, again[1].config))
    assert.are.equal(last.index, again[1].index)
  end)

  it("reads seed indices in the space as defined before any tuning pruned it", function()
    local k = sized()
    local s = k:space()
    local want = s:config(s:count() - 3) -- A = 2, G at the device's limit
    local results = tuner:tune(k, { seeds = { s:count() - 3 }, stop = { count = 1 } })
    assert.is_true(same(want, results[1].config))
    assert.are.equal(s:count() - 3, results[1].index)
  end)

  it("walks neighbours in the space as defined, leaving the pruned out", function()
    local k = sized()
    k:space(dev)
    local s = k:space()
    local i = s:index { A = 2, G = 1 }
    for _, j in ipairs(s:neighbors(i)) do
      local c = s:config(j)
      assert.is_true(c.G <= dev.max_group_size)
    end
    local ok, e = pcall(s.neighbors, s, s:index { A = 2, G = 2 * dev.max_group_size })
    assert.is_false(ok)
    assert.matches("outside the device's limits", e)
  end)

  it("resumes a journal numbered as the device's limits left the space (older versions)", function()
    local path = os.tmpname()
    local k = sized()
    tuner:tune(k, { search = "exhaustive", journal = path, stop = { count = 20 } })
    -- the journal as a version that numbered the pruned space wrote it
    local pruned, n = k:space(dev), k:space():count()
    local f = assert(io.open(path))
    local text = f:read "a"
    f:close()
    text = text:gsub('"valid":' .. n .. ",", '"valid":' .. (n - 2) .. ",", 1)
    text = text:gsub('"index":%d+,"config":{"A":(%d+),"G":(%d+)}', function(a, g)
      local i = pruned:index { A = tonumber(a), G = tonumber(g) }
      return ('"index":%d,"config":{"A":%s,"G":%s}'):format(i, a, g)
    end)
    f = assert(io.open(path, "w"))
    f:write(text)
    f:close()
    local fresh = sized()
    local all = tuner:tune(fresh, { search = "exhaustive", journal = path, resume = true })
    assert.are.equal(n - 2, #all)
    local s = fresh:space()
    for _, r in ipairs(all) do assert.is_true(same(r.config, s:config(r.index))) end
    -- and written again so that it reads back
    local again = tuner:tune(sized(), { search = "exhaustive", journal = path, resume = true })
    assert.are.equal(n - 2, #again)
    for i, r in ipairs(again) do assert.are.equal(all[i].index, r.index) end
    os.remove(path)
  end)
end)

describe("local memory beyond the device's", function()
  local lim = dev.local_memory

  -- An array of floats is pruned from the source's declaration before any compile
  -- (prune_static_spec.lua); one of a struct, whose size the source does not say to ktlua, is
  -- measured once compiled.
  local function local_array(elem)
    local k = tuner:kernel{ source = [[
      typedef struct { float x; } one;
      __kernel void k(__global float *a) {
        __local ]] .. elem .. [[ buf[N];
        int i = get_local_id(0);
        buf[i] = ]] .. (elem == "one" and "(one){ a[get_global_id(0)] }" or "a[get_global_id(0)]") .. [[;
        barrier(CLK_LOCAL_MEM_FENCE);
        a[get_global_id(0)] = ]] .. (elem == "one" and "buf[(i + 1) % 64].x + buf[N - 1].x" or
                                     "buf[(i + 1) % 64] + buf[N - 1]") .. [[;
      }]], name = "k", global = 64, group = 64 }
    k:args { kt.array("float", 64) }
    k:param("N", { 64, lim // 4 * 2 })
    return k
  end

  it("is refused before the launch with a status of its own (a __local array)", function()
    local r = tuner:tune(local_array("one"), { search = "exhaustive" })
    assert.are.same({ "ok", "too_much_local_memory" }, statuses(r))
    assert.are.equal(("kernel k: a work-group needs %d bytes of local memory, more than the %d "
                      .. "the device has"):format(lim * 2, lim), r[2].error)
    assert.are.equal(0, r[2].launches)
  end)

  it("is pruned before any compile where the source's declaration sizes it", function()
    local k = local_array("float")
    assert.are.equal(1, k:space(tuner.device):pruned().local_memory)
    local r = tuner:tune(k, { search = "exhaustive" })
    assert.are.same({ "ok" }, statuses(r))
  end)

  it("counts the kernel's local-memory arguments too", function()
    local k = tuner:kernel{ source = [[
      __kernel void k(__global float *a, __local float *buf) {
        int i = get_local_id(0);
        buf[i] = a[get_global_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        a[get_global_id(0)] = buf[(i + 1) % 64];
      }]], name = "k", global = 64, group = 64 }
    k:param("N", { 64, lim // 4 + 1 })
    k:args { kt.array("float", 64), kt.localmem("float", function(cfg) return cfg.N end) }
    local r = tuner:tune(k, { search = "exhaustive" })
    assert.are.same({ "ok", "too_much_local_memory" }, statuses(r))
  end)
end)

describe("sizes of fewer dimensions", function()
  local src2 = [[__kernel void k(__global float *a) {
    a[get_global_id(1) * get_global_size(0) + get_global_id(0)] = get_local_size(1); }]]

  it("pads a 1-D group of a 2-D global with 1s, as KTT's DimensionVector does", function()
    local a = kt.array("float", 64 * 4)
    local k = tuner:kernel{ source = src2, name = "k", global = { 64, 4 }, group = 16, args = { a } }
    local r = tuner:tune(k)
    assert.are.equal("ok", r[1].status)
    assert.are.same({ 16, 1 }, r[1].group)
    assert.are.same({ 64, 4 }, r[1].global)
  end)

  it("pads a 1-D global of a 2-D group with 1s", function()
    local a = kt.array("float", 64)
    local k = tuner:kernel{ source = src2, name = "k", global = 64, group = { 16, 1 }, args = { a } }
    local r = tuner:tune(k)
    assert.are.equal("ok", r[1].status)
    assert.are.same({ 64, 1 }, r[1].global)
  end)
end)

describe("an online tuning's release", function()
  local function plus_one(n)
    local x, y = kt.array("float", n):fill(1), kt.array("float", n)
    local k = tuner:kernel{ name = "plus", global = n, group = 1, args = { x:input(), y:output() },
      source = [[__kernel void plus(__global const float *x, __global float *y) {
        int i = get_global_id(0); y[i] = x[i] + 1.0f; }]] }
    k:param("WG", { 1, 2, 4, 8 }, { group_x = "mul" })
    return k
  end

  it("says that an online tuning holds the kernel, and on:close() releases it", function()
    local k = plus_one(64)
    local on = tuner:online(k, { search = "exhaustive" })
    on:step()
    on:stop()
    local ok, e = pcall(tuner.tune, tuner, k)
    assert.is_false(ok)
    assert.matches("task plus is in use by an online tuning %(tuner:online%), which holds it "
                   .. "for its steps even once its search has ended: on:close%(%) releases it", e)
    ok, e = pcall(k.param, k, "V", { 1 })
    assert.is_false(ok)
    assert.matches("in use by an online tuning", e)
    on:close()
    on:close() -- again: nothing
    local r = tuner:tune(k, { search = "exhaustive" })
    assert.are.equal(4, #r)
    ok, e = pcall(on.step, on)
    assert.is_false(ok)
    assert.matches("the online tuning has been closed %(on:close%(%)%)", e)
    assert.matches("released", tostring(on))
  end)

  it("still says a running tuning holds the kernel otherwise", function()
    local k = plus_one(64)
    local other, e = kt.tuner()
    tuner:tune(k, { search = "exhaustive", stop = { count = 1 }, progress = function()
      local ok
      ok, e = pcall(other.tune, other, k)
    end })
    assert.matches("task plus is in use: it is being tuned or run", e)
  end)
end)

describe("an online tuning's best", function()
  local function plus_one(n)
    local x, y = kt.array("float", n):fill(1), kt.array("float", n)
    local k = tuner:kernel{ name = "plus", global = n, group = 1, args = { x:input(), y:output() },
      source = [[__kernel void plus(__global const float *x, __global float *y) {
        int i = get_global_id(0); y[i] = x[i] + 1.0f; }]] }
    k:param("WG", { 1, 2, 4, 8 }, { group_x = "mul" })
    return k, x, y
  end

  local function median(t)
    table.sort(t)
    return #t % 2 == 1 and t[(#t + 1) // 2] or (t[#t // 2] + t[#t // 2 + 1]) / 2
  end

  it("is declared once its leading candidates have run again, by their medians", function()
    local k, x, y = plus_one(64)
    local on = tuner:online(k, { search = "exhaustive", confirm = { candidates = 3, runs = 3 } })
    local steps = {}
    for s = 1, 4 do
      steps[s] = on:step()
      assert.is_true(steps[s].searching)
      x:copy_from(y)
    end
    -- the leading three by the search's one measurement each
    local order = {}
    for _, r in ipairs(on:results()) do order[#order + 1] = r end
    table.sort(order, function(a, b)
      if a.time_ms ~= b.time_ms then return a.time_ms < b.time_ms end
      return a.index < b.index
    end)
    for s = 5, 13 do
      steps[s] = on:step()
      assert.is_false(steps[s].searching)
      assert.is_true(steps[s].confirming)
      assert.are.equal(order[(s - 5) % 3 + 1].index, steps[s].tried)
      assert.are.equal(steps[s].tried, steps[s].ran)
      assert.are.equal(s + 1, y[63]) -- its outputs are the application's
      assert.are.equal(s == 13, steps[s].done)
      x:copy_from(y)
    end
    local last = on:step()
    assert.is_false(last.confirming)
    assert.is_true(last.done)
    local best, fastest = on:best(), math.huge
    for i, r in ipairs(on:results()) do
      local lead = r.index ~= order[4].index
      assert.are.equal(lead and 4 or 1, #r.samples_ms, "result " .. i)
      if lead then
        local again = { r.samples_ms[2], r.samples_ms[3], r.samples_ms[4] }
        assert.are.equal(median(again), r.time_ms)
        fastest = math.min(fastest, r.time_ms)
      end
    end
    assert.are.equal(fastest, best.time_ms)
    assert.are.same(best.config, last.config)
  end)

  it("is declared with the medians so far when the application stops it", function()
    local on = tuner:online(plus_one(64), { search = "exhaustive" })
    for _ = 1, 6 do on:step() end
    assert.is_false(on:done())
    on:stop()
    assert.is_true(on:done())
    local runs = 0
    for _, r in ipairs(on:results()) do runs = runs + #r.samples_ms end
    assert.are.equal(4 + 2, runs)
  end)

  it("refuses confirm options it cannot use", function()
    local k = plus_one(16)
    assert.has_error(function() tuner:online(k, { confirm = { runs = -1 } }) end,
      "online options.confirm.runs: expected 0 to 1000, got -1")
    assert.has_error(function() tuner:online(k, { confirm = { rounds = 2 } }) end)
    assert.has_error(function() tuner:online(k, { confirm = true }) end,
      "online options.confirm: expected a table {candidates =, runs =} or false, got true")
  end)
end)
