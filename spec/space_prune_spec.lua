-- Pruning from the device: work-group limits per dimension and in all,
-- local memory, and global sizes that the work-group must divide.
local kt = require "ktlua"

local tuner = kt.tuner()
local dev = tuner.device
local src = "__kernel void k(__global float *a) {}"

local NONE = { group_dims = 0, group_size = 0, local_memory = 0, divisible = 0 }

local function with(t)
  local out = {}
  for k, v in pairs(NONE) do out[k] = v end
  for k, v in pairs(t) do out[k] = v end
  return out
end

-- A 2-D kernel whose work-group is LX x LY.
local function groups()
  local k = tuner:kernel{ source = src, name = "k", global = { 16384, 16384 }, group = { 1, 1 } }
  k:param("LX", kt.pow2(1, 16384), { group_x = "mul" })
  k:param("LY", kt.pow2(1, 16384), { group_y = "mul" })
  return k
end

-- What pruning groups() for this device should leave, counted here.
local function expected_groups()
  local sides = kt.pow2(1, 16384)
  local dims, most = dev.max_group_dims, dev.max_group_size
  local in_dims, in_size = 0, 0
  for _, x in ipairs(sides) do
    for _, y in ipairs(sides) do
      if x <= dims[1] and y <= dims[2] then
        in_dims = in_dims + 1
        if x * y <= most then in_size = in_size + 1 end
      end
    end
  end
  return #sides * #sides, in_dims, in_size
end

describe("pruning from the device", function()
  it("removes work-groups beyond the device's limits per dimension and in all", function()
    local all, in_dims, in_size = expected_groups()
    local k = groups()
    assert.are.equal(all, k:space():count())
    assert.are.same(NONE, k:space():pruned())
    local s = k:space(dev)
    assert.are.equal(in_size, s:count())
    assert.are.same(with { group_dims = all - in_dims, group_size = in_dims - in_size }, s:pruned())
    for _, cfg in s:configs() do assert.is_true(cfg.LX * cfg.LY <= dev.max_group_size) end
  end)

  it("takes the device as an id too; k:space() still counts the space as defined", function()
    local all, _, in_size = expected_groups()
    local k = groups()
    assert.are.equal(in_size, k:space(dev.id):count())
    assert.are.equal(all, k:space():count())
  end)

  it("removes configurations whose local memory is more than the device has", function()
    local k = tuner:kernel{ source = src, name = "k", global = 64 }
    k:param("TILE", kt.pow2(1, 4096))
    k:param("VEC", { 1, 2, 4 })
    k:local_memory("TILE * TILE * VEC * BYTES", { BYTES = 4 })
    local kept = 0
    for _, t in ipairs(kt.pow2(1, 4096)) do
      for _, v in ipairs { 1, 2, 4 } do
        if t * t * v * 4 <= dev.local_memory then kept = kept + 1 end
      end
    end
    local s = k:space(dev)
    assert.are.equal(kept, s:count())
    assert.are.same(with { local_memory = 13 * 3 - kept }, s:pruned())
  end)

  it("removes global sizes that the work-group does not divide, where OpenCL needs it", function()
    local function divisible(def)
      def.source, def.name, def.group = src, "k", 1
      local k = tuner:kernel(def)
      k:param("WG", { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }, { group_x = "mul" })
      return k:space(dev)
    end
    local s = divisible { global = 100 }
    assert.are.equal(5, s:count()) -- 1, 2, 4, 5, 10
    assert.are.same(with { divisible = 5 }, s:pruned())
    assert.are.equal(10, divisible{ global = 100, round_global = true }:count())
    assert.are.equal(10, divisible{ global = 100, notation = "cuda" }:count())
  end)

  it("follows thread modifiers that divide the global size", function()
    local k = tuner:kernel{ source = src, name = "k", global = 4096, group = 1 }
    k:param("WG", { 64, 128, 256, 8192 }, { group_x = "mul" })
    k:param("VEC", { 1, 2, 4, 8, 16, 32, 64 }, { global_x = "div" })
    local kept, removed_size, removed_div = 0, 0, 0
    for _, wg in ipairs { 64, 128, 256, 8192 } do
      for _, vec in ipairs { 1, 2, 4, 8, 16, 32, 64 } do
        if wg > dev.max_group_size or wg > dev.max_group_dims[1] then
          removed_size = removed_size + 1
        elseif (4096 // vec) % wg ~= 0 then
          removed_div = removed_div + 1
        else
          kept = kept + 1
        end
      end
    end
    local s = k:space(dev)
    assert.are.equal(kept, s:count())
    local p = s:pruned()
    assert.are.equal(removed_size, p.group_dims + p.group_size)
    assert.are.equal(removed_div, p.divisible)
  end)

  it("follows thread sizes given by expressions, as it follows the same modifiers", function()
    local ops = tuner:kernel{ source = src, name = "k", global = 4096, group = 1 }
    ops:param("WG", { 64, 128, 256, 8192 }, { group_x = "mul" })
    ops:param("VEC", { 1, 2, 4, 8, 16, 32, 64 }, { global_x = "div" })
    local exprs = tuner:kernel{ source = src, name = "k", global = 1, group = 1 }
    exprs:param("WG", { 64, 128, 256, 8192 })
    exprs:param("VEC", { 1, 2, 4, 8, 16, 32, 64 })
    exprs:modifier("group_x", "WG")
    exprs:modifier("global_x", "4096 // VEC")
    local a, b = ops:space(dev), exprs:space(dev)
    assert.are.equal(a:count(), b:count())
    assert.are.same(a:pruned(), b:pruned())
    assert.is_true(b:pruned().divisible > 0)
  end)

  it("reads every parameter under a function modifier, and calls it on this thread", function()
    local k = tuner:kernel{ source = src, name = "k", global = 8192, group = 1 }
    k:param("WG", { 1, 2, 4, dev.max_group_size * 2 })
    k:param("OTHER", { 1, 2, 3 })
    k:modifier("group_x", function(size, cfg) return size * cfg.WG end)
    local s = k:space(dev)
    assert.are.equal(9, s:count())
    assert.are.equal(3, s:pruned().group_dims + s:pruned().group_size)
    local bad = tuner:kernel{ source = src, name = "bad", global = 8, group = 1 }
    bad:param("WG", { 1, 2 })
    bad:modifier("group_x", function() error("boom") end)
    local ok, err = pcall(function() return bad:space(dev):count() end)
    assert.is_false(ok)
    assert.matches("kernel bad: work%-group size per dimension: kernel bad, local size x: .*boom", err)
  end)

  it("can be switched off kind by kind, or all at once", function()
    local all, in_dims, in_size = expected_groups()
    local k = groups()
    k:prune{ group_dims = false }
    assert.are.same(with { group_size = all - in_size }, k:space(dev):pruned())
    k:prune{ group_dims = true, group_size = false }
    assert.are.equal(all, k:space():count()) -- a change of settings drops the old constraints
    assert.are.same(with { group_dims = all - in_dims }, k:space(dev):pruned())
    k:prune(false)
    assert.are.same(NONE, k:space(dev):pruned())
    assert.are.equal(all, k:space():count())
    k:prune(true)
    assert.are.equal(in_size, k:space(dev):count())
  end)

  it("counts what each kind removed so that the counts add up", function()
    local k = tuner:kernel{ source = src, name = "k", global = 1000, group = 1 }
    k:param("WG", kt.pow2(1, 8192), { group_x = "mul" })
    k:param("T", kt.pow2(1, 1024))
    k:local_memory("WG * T * 64")
    local before = k:space():count()
    local s = k:space(dev)
    local p, removed = s:pruned(), 0
    for _, n in pairs(p) do removed = removed + n end
    assert.are.equal(before - s:count(), removed)
    assert.is_true(p.divisible > 0)
    assert.is_true(p.local_memory > 0)
  end)

  it("happens when tuning, leaving the statuses of what remains as they were", function()
    local function tune(prune)
      local out = kt.array("int", 12)
      local k = tuner:kernel{ source = "__kernel void w(__global int *o) { o[get_global_id(0)] = 1; }",
                              name = "w", global = 12, group = 1, args = { out:output() } }
      k:param("WG", { 1, 2, 3, 5, 6 }, { group_x = "mul" }) -- 5 does not divide 12
      k:prune(prune)
      local statuses = {}
      for _, r in ipairs(tuner:tune(k, { repeats = 1 }):list()) do
        statuses[r.config.WG] = r.status
      end
      return statuses, k:space():pruned()
    end
    local pruned, counts = tune(true)
    assert.are.same({ [1] = "ok", [2] = "ok", [3] = "ok", [6] = "ok" }, pruned)
    assert.are.same(with { divisible = 1 }, counts)
    local unpruned = tune(false)
    assert.are.equal("launch_failed", unpruned[5])
    unpruned[5] = nil
    assert.are.same(pruned, unpruned)
  end)

  it("says so when the device's limits, not the constraints, leave nothing to tune", function()
    local k = tuner:kernel{ source = src, name = "k", global = 10, group = 1,
                            args = { kt.array("float", 10):output() } }
    k:param("WG", { 4, 8 }, { group_x = "mul" })
    assert.has_error(function() tuner:tune(k) end, "task k: the limits of " .. dev.id
      .. " removed every configuration (divisible 2); k:prune{...} switches a check off")
    k:constraint({ "WG" }, function(wg) return wg > 100 end)
    assert.has_error(function() tuner:tune(k) end, "task k: no configuration satisfies the constraints")
  end)

  it("is counted in the results, their summary, their printout and their JSON file", function()
    local out = kt.array("int", 12)
    local k = tuner:kernel{ source = "__kernel void w(__global int *o) { o[get_global_id(0)] = 1; }",
                            name = "w", global = 12, group = 1, args = { out:output() } }
    k:param("WG", { 1, 2, 3, 5, 7, 6 }, { group_x = "mul" }) -- 5 and 7 do not divide 12
    local path = os.tmpname()
    local results = tuner:tune(k, { repeats = 1, output = path .. ".json" })
    assert.are.same(with { divisible = 2 }, results:summary().pruned)
    assert.are.same(with { divisible = 2 }, kt.load(path .. ".json"):summary().pruned)
    os.remove(path .. ".json")
    local printed = {}
    results:print{ out = { write = function(_, ...) for _, x in ipairs{...} do printed[#printed + 1] = x end end } }
    assert.matches("\n  removed for the device: 2 divisible\n", table.concat(printed))
    k:prune(false)
    assert.are.same(NONE, tuner:tune(k, { repeats = 1 }):summary().pruned)
    os.remove(path)
  end)

  it("rejects bad settings with clear errors", function()
    local k = tuner:kernel{ source = src, name = "k", global = 64 }
    k:param("TILE", { 1, 2 })
    assert.has_error(function() k:local_memory("TILE > 2") end,
      "local memory 'TILE > 2': the expression is a condition; it should give the bytes of " ..
      "local memory a work-group uses")
    assert.has_error(function() k:local_memory("TILE * X") end,
      "local memory 'TILE * X': at character 8: unknown parameter 'X'")
    assert.has_error(function() k:local_memory("TILE *") end,
      "local memory 'TILE *': at character 7: expected a value, found the end of the expression")
    assert.has_error(function() k:prune{ dvisible = false } end,
      "prune options: unknown field 'dvisible' (expected one of: group_dims, group_size, " ..
      "local_memory, divisible)")
    assert.has_error(function() k:prune{ divisible = 1 } end,
      "prune options.divisible: expected a boolean, got number")
    assert.has_error(function() k:prune() end)
    local other = tuner:kernel{ source = src, name = "other", global = 64 }
    assert.has_error(function() k:local_memory(other, "TILE") end)
    assert.has_error(function() k:space("opencl:9:9") end)
  end)
end)
