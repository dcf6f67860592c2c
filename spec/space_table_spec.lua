-- kt.space{...}: a space from a table, with no tuner and no device
-- process, viewed as k:space() views a kernel's.
local kt = require "ktlua"

local function vadd_space()
  return kt.space{ params = { { "WG", { 32, 64 } }, { "VEC", { 1, 2, 4 } } },
                   constraints = { "WG * VEC <= 128" } }
end

describe("kt.space", function()
  it("builds and counts a space without a tuner", function()
    local s = vadd_space()
    assert.are.equal(5, s:count())
    assert.are.equal(5, #s)
    assert.are.equal(6, s:count_all())
    assert.are.equal("space: 2 parameters, 1 constraints", tostring(s))
    local seen = {}
    for i, cfg in s:configs() do
      assert.is_true(cfg.WG * cfg.VEC <= 128)
      assert.are.equal(i, s:index(cfg))
      seen[#seen + 1] = cfg.WG .. "x" .. cfg.VEC
    end
    assert.are.same({ "32x1", "32x2", "32x4", "64x1", "64x2" }, seen)
    assert.are.same({ WG = 64, VEC = 2 }, s:config(4))
    assert.is_nil(s:index{ WG = 64, VEC = 4 })
    assert.are.same({ { name = "WG", values = { 32, 64 } }, { name = "VEC", values = { 1, 2, 4 } } },
                    s:params())
  end)

  it("is the same view as a kernel's space, neighbours and all", function()
    local tuner = kt.tuner("cpu")
    local k = tuner:kernel{ name = "k", source = "__kernel void k(void) {}", global = 256 }
    k:param("WG", { 32, 64 })
    k:param("VEC", { 1, 2, 4 })
    k:constraint("WG * VEC <= 128")
    local s, ks = vadd_space(), k:space()
    assert.are.equal(getmetatable(ks), getmetatable(s))
    for i = 0, s:count() - 1 do
      assert.are.same(ks:config(i), s:config(i))
      assert.are.same(ks:neighbors(i), s:neighbors(i))
    end
    tuner:close()
  end)

  it("takes constraints as k:constraint does: Lua functions and constants", function()
    local s = kt.space{ params = { { "A", { 1, 2, 3, 4 } }, { "B", { 1, 2, 3, 4 } } },
                        constraints = { { { "A", "B" }, function(a, b) return a < b end },
                                        { "A + B <= N", { N = 5 } } } }
    assert.are.equal(4, s:count()) -- 1 2, 1 3, 1 4, 2 3
    assert.are.same({ A = 2, B = 3 }, s:config(3))
  end)

  it("prunes for a device from the sizes it is given", function()
    local s = kt.space{ params = { { "WG", { 32, 8192 }, { group_x = "mul" } },
                                   { "VEC", { 1, 2 }, { global_x = "div" } } },
                        global = 1024, device = "cpu" }
    assert.are.equal(2, s:count())
    assert.are.equal(2, s:pruned().group_dims)
    s = kt.space{ params = { { "WG", { 16, 32, 48 }, { group_x = "mul" } } }, global = 80,
                  device = "cpu" }
    assert.are.equal(1, s:count())
    assert.are.equal(2, s:pruned().divisible)
    -- Without a global size nothing divides, and without a device nothing is pruned.
    s = kt.space{ params = { { "WG", { 16, 32, 48 }, { group_x = "mul" } } }, device = "cpu" }
    assert.are.equal(3, s:count())
    s = kt.space{ params = { { "WG", { 32, 8192 }, { group_x = "mul" } } } }
    assert.are.equal(2, s:count())
    local lm = kt.device("cpu").local_memory
    s = kt.space{ params = { { "BYTES", { 1024, lm, lm + 1 } } }, local_memory = "BYTES",
                  device = kt.device("cpu") }
    assert.are.equal(2, s:count())
    assert.are.equal(1, s:pruned().local_memory)
  end)

  it("names what is wrong in the table", function()
    local function err(def)
      local ok, e = pcall(kt.space, def)
      assert.is_false(ok)
      return e
    end
    assert.matches("bad argument #1 to '.-space' %(table expected, got string%)", err("WG"))
    assert.are.equal("kt.space: unknown field 'param' (expected one of: params, constraints, "
                     .. "global, group, round_global, local_memory, device)", err{ param = {} })
    assert.matches("%(params: expected a list of {name, values%[, modifiers%]} or a map " ..
                   "{name = values}%)$", err{})
    assert.matches("%(params%[2%]: expected {name, values%[, modifiers%]}%)$",
                   err{ params = { { "A", { 1 } }, { { 1, 2 } } } })
    assert.are.equal("kt.space: params[1]: a parameter needs at least one value",
                     err{ params = { { "WG", {} } } })
    assert.are.equal("kt.space: constraints[1]: constraint 'WG +': at character 5: expected a "
                     .. "value, found the end of the expression",
                     err{ params = { { "WG", { 1 } } }, constraints = { "WG +" } })
    assert.matches("%(constraints%[1%]: expected an expression or {names, function}, got number%)$",
                   err{ params = { { "WG", { 1 } } }, constraints = { 5 } })
    assert.matches("^kt.space: device: no device 'nope'",
                   err{ params = { { "WG", { 1 } } }, device = "nope" })
  end)
end)
