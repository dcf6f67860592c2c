-- Seeded searches and problem-size-aware tuning (tuner:tune_sizes).
local kt = require "ktlua"

local tuner = kt.tuner()

local function scaler(n)
  local a, c = kt.array("float", n):fill(1), kt.array("float", n)
  local k = tuner:kernel{ name = "scale", global = n, group = 1, args = { a:input(), c:output() },
    source = "__kernel void scale(__global const float *a, __global float *c) "
          .. "{ int i = get_global_id(0); c[i] = 3.0f * a[i]; }" }
  k:param("WG", { 8, 16, 32, 64, 128 }, { group_x = "mul" })
  k:param("V", { 1, 2, 3 })
  return k
end

describe("seeds", function()
  it("are evaluated first, in order, before the searcher's own proposals", function()
    local r = tuner:tune(scaler(1024), { search = "random", seed = 4, stop = { count = 5 },
      seeds = { { WG = 64, V = 2 }, 3 } })
    assert.are.same({ WG = 64, V = 2 }, r[1].config)
    assert.are.equal(3, r[2].index)
    assert.are.equal(5, #r)
    local seen = {}
    for i = 1, #r do
      assert.is_nil(seen[r[i].index]) -- nothing twice
      seen[r[i].index] = true
    end
  end)

  it("lead a sequential searcher's search without taking its proposals' place", function()
    for _, search in ipairs({ "genetic", "differential", "pso", "annealing", "staged" }) do
      local r = tuner:tune(scaler(256), { search = search, seed = 1, stop = { count = 6 },
        seeds = { { WG = 128, V = 3 } } })
      assert.are.same({ WG = 128, V = 3 }, r[1].config, search)
      assert.are.equal(6, #r, search)
    end
  end)

  it("say which one is wrong", function()
    local k = scaler(64)
    assert.has_error(function() tuner:tune(k, { seeds = { { WG = 3, V = 1 } } }) end,
      "configuration: WG = 3 is not one of its values (8, 16, 32, 64, 128)")
    assert.has_error(function() tuner:tune(k, { seeds = { "fast" } }) end,
      "tune options.seeds[1]: expected a configuration")
    assert.has_error(function() tuner:tune(k, { seeds = { 99 } }) end,
      "tune options.seeds[1]: configuration index out of range")
  end)
end)

describe("tuner:tune_sizes", function()
  it("tunes each size, seeding each with the best of the nearest size tuned before", function()
    local made = {}
    local rs = tuner:tune_sizes(function(size)
      made[#made + 1] = size.n
      return scaler(size.n)
    end, { { n = 512 }, { n = 8192 }, { n = 1024 } }, { search = "random", seed = 2, stop = { count = 4 } })
    assert.are.same({ 512, 8192, 1024 }, made)
    assert.are.equal(3, #rs)
    local function top3(r)
      local ok = {}
      for _, x in ipairs(r:list()) do if x.status == "ok" then ok[#ok + 1] = x end end
      table.sort(ok, function(a, b) return a.time_ms < b.time_ms end)
      return { ok[1].config, ok[2].config, ok[3].config }
    end
    -- 8192's nearest tuned size is 512; 1024's is 512 (log2 distance 1 against 3)
    assert.are.same(top3(rs[1]), { rs[2][1].config, rs[2][2].config, rs[2][3].config })
    assert.are.same(top3(rs[1]), { rs[3][1].config, rs[3][2].config, rs[3][3].config })
    assert.are.equal(4, #rs[2])
  end)

  it("stores each size in the database and seeds from it across runs", function()
    local path = os.tmpname()
    os.remove(path)
    local db = kt.db(path)
    local make = function(size) return scaler(size.n) end
    tuner:tune_sizes(make, { { n = 256 }, { n = 2048 } }, { db = db, stop = { count = 3 } })
    assert.are.equal(6, #db:list{ kernel = "scale" }) -- three ranks of each size
    local stored = db:list{ kernel = "scale", size = { n = 2048 } }
    local rs = tuner:tune_sizes(make, { { n = 4096 } }, { db = db, search = "random", stop = { count = 3 } })
    assert.are.same(stored[1].config, rs[1][1].config) -- the nearest stored size's best first
    db:close()
    os.remove(path)
  end)

  it("seeds with the best by the objective, of this call and stored under it", function()
    local path = os.tmpname()
    os.remove(path)
    local db = kt.db(path)
    local make = function(size) return scaler(size.n) end
    -- the objective favours the smallest WG and V (the slowest, on PoCL), whatever their times
    local options = { db = db, search = "random", seed = 3, stop = { count = 6 }, objective = "small",
                      maximize = true, metrics = { small = function(_, cfg) return -(cfg.WG * 10 + cfg.V) end } }
    local rs = tuner:tune_sizes(make, { { n = 256 }, { n = 512 } }, options)
    local ok = {}
    for _, x in ipairs(rs[1]:list()) do if x.status == "ok" then ok[#ok + 1] = x end end
    table.sort(ok, function(a, b) return a.metrics.small > b.metrics.small end)
    assert.are.same({ ok[1].config, ok[2].config, ok[3].config },
                    { rs[2][1].config, rs[2][2].config, rs[2][3].config })
    local stored = db:list{ kernel = "scale", size = { n = 512 }, objective = "small" }
    assert.are.same(rs[2]:best().config, stored[1].config)
    options.search, options.stop = "exhaustive", { count = 1 }
    rs = tuner:tune_sizes(make, { { n = 1024 } }, options)
    assert.are.same(stored[1].config, rs[1][1].config) -- not the space's first, { WG = 8, V = 1 }
    db:close()
    os.remove(path)
  end)

  it("says what was wrong with its arguments", function()
    assert.has_error(function() tuner:tune_sizes("k", { { n = 1 } }) end,
      "tuner:tune_sizes: expected a function that makes the kernel for a size, got string")
    assert.has_error(function() tuner:tune_sizes(scaler, {}) end,
      "tuner:tune_sizes: expected a list of sizes ({{n = 1024}, {n = 4096}})")
    assert.has_error(function() tuner:tune_sizes(scaler, { { n = -2 } }) end,
      "tuner:tune_sizes: sizes[1]: n = -2 is not a named positive number")
    assert.has_error(function() tuner:tune_sizes(scaler, { { n = 2 } }, { size = { n = 2 } }) end,
      "tuner:tune_sizes: options.size and options.seeds are set for each size")
  end)
end)
