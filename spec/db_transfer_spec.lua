-- Tuned once, reused everywhere (issue 42): transfer from other devices and
-- sizes (ktlua.transfer, the searcher's prior), a database of version 5
-- (compiler, origin, devices), peer recordings stored under the device they
-- name, stale entries after a driver or compiler upgrade, and rechecking.
local kt = require "ktlua"
local files = require "spec.support.files"
local sqlite_files = require "spec.support.sqlite_files"
local transfer = require "ktlua.transfer"

local from_sql, sqlite, remove = sqlite_files.from_sql, sqlite_files.sqlite, sqlite_files.remove
local CACHE = "spec/fixtures/small_cache.json" -- "Test GPU": block_x, block_y, unroll; 24 configurations

local tuner = kt.tuner()

local scale_src = "__kernel void scale(__global const float *a, __global float *c) "
  .. "{ int i = get_global_id(0); c[i] = 3.0f * a[i]; }"

local function scaler(n)
  local a, c = kt.array("float", n):fill(1), kt.array("float", n)
  local k = tuner:kernel{ name = "scale", source = scale_src, global = n, group = 1,
    args = { a:input(), c:output() } }
  k:param("WG", { 8, 16, 32, 64 }, { group_x = "mul" })
  return k
end

-- The small cache's records as a peer's results, for a device of that name.
local function store_peer(db, device, backend, size, kernel)
  db:store(kt.load(CACHE), { size = size or { n = 1024 }, kernel = kernel or "small", device = device,
    backend = backend or "cuda", top = 3 })
end

local function best_config(path)
  local best
  for _, r in ipairs(kt.load(path):list()) do
    if r.status == "ok" and (not best or r.time_ms < best.time_ms) then best = r end
  end
  return best.config
end

describe("kt.db of version 5", function()
  it("brings a database of version 4 up to date: compiler, origin and devices, read as it is read-only",
     function()
    local path = from_sql("db_v4.sql")
    local before = files.read(path)
    local db = kt.db(path, { readonly = true })
    local e = db:list()[1]
    assert.are.same({ 16, "", "", "3.1" }, { e.config.WG, e.compiler, e.origin, e.driver })
    assert.are.same({}, db:devices())
    db:close()
    assert.are.equal(before, files.read(path))
    db = kt.db(path)
    e = db:best{ kernel = "dbl", device = "dev", size = { n = 1024 } }
    assert.are.same({ 16, "", "", { energy = 0.001 } }, { e.config.WG, e.compiler, e.origin, e.metrics })
    assert.are.equal("5\ncompiler\norigin\n", sqlite(path, "PRAGMA user_version; SELECT name FROM "
      .. "pragma_table_info('tuned') WHERE name IN ('compiler', 'origin') ORDER BY name"))
    assert.are.equal("devices\n", sqlite(path, "SELECT name FROM sqlite_master WHERE name = 'devices'"))
    db:close()
    remove(path)
  end)

  it("keeps the compiler and the device's properties of a tuning, and the origin it is given", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    tuner:tune(scaler(256), { db = db, size = { n = 256 }, origin = "script:mine.lua", progress = false })
    local e = db:list()[1]
    assert.are.same({ kt.compiler_version(tuner.device), "script:mine.lua", tuner.device.driver_version },
      { e.compiler, e.origin, e.driver })
    assert.truthy(#e.compiler > 0)
    local d = db:devices()
    assert.are.same({ 1, tuner.device.name, tuner.device.backend, tuner.device.compute_units },
      { #d, d[1].device, d[1].backend, d[1].properties.compute_units })
    assert.is_nil(d[1].properties.extensions) -- long, and no help in telling devices apart
    db:close()
    remove(path)
  end)
end)

describe("kt.db with a peer's recording", function()
  it("stores it under the device, backend and kernel named, and says what is missing", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    local ok, err = pcall(db.store, db, kt.load(CACHE), { size = { n = 1 } })
    assert.is_false(ok)
    assert.are.equal("db:store: the results do not say on what backend they are of (a recording of "
      .. "another tuner's: name it, db:store(results, {size = ..., backend = \"cuda\" or \"opencl\"}))", err)
    store_peer(db, "NVIDIA GeForce RTX 3090")
    local e = db:best{ kernel = "small", device = "NVIDIA GeForce RTX 3090", size = { n = 1024 } }
    assert.are.same({ "exact", "cuda", best_config(CACHE), "" }, { e.match, e.backend, e.config, e.source })
    db:close()
    remove(path)
  end)
end)

describe("db:best after an upgrade", function()
  it("says an entry is stale where the device's driver or compiler changed, and db:touch renews it", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    store_peer(db, "GPU A", "cuda")
    local e = db:list()[1]
    db:touch(e, { driver = "535.1", compiler = "NVRTC 12.2" })
    local dev = { name = "GPU A", backend = "cuda", driver_version = "580.2", c_version = "NVRTC 12.2" }
    local size = { n = 1024 }
    assert.are.same({ nil, "stale: small on GPU A was tuned with the driver 535.1 (now 580.2)" },
      { db:best{ kernel = "small", device = dev, size = size } })
    dev.driver_version, dev.c_version = "535.1", "NVRTC 13.0"
    assert.are.same({ nil, "stale: small on GPU A was tuned with the compiler NVRTC 12.2 (now NVRTC 13.0)" },
      { db:best{ kernel = "small", device = dev, size = size } })
    assert.is_true(db:best{ kernel = "small", device = dev, size = size, stale = true }.stale)
    -- the name alone says nothing of drivers: not stale
    assert.is_false(db:best{ kernel = "small", device = "GPU A", size = size }.stale)
    assert.is_true(db:touch(e, { driver = "535.1", compiler = "NVRTC 13.0", time_ms = 0.5 }))
    e = db:best{ kernel = "small", device = dev, size = size }
    assert.are.same({ false, 0.5, "NVRTC 13.0" }, { e.stale, e.time_ms, e.compiler })
    assert.are.equal(3, #db:list()) -- every rank kept
    db:close()
    remove(path)
  end)
end)

describe("transfer", function()
  it("answers db:best for a device not in the database from the most alike one, saying which", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    store_peer(db, "NVIDIA GeForce RTX 3090", "cuda")
    store_peer(db, "AMD Radeon RX 7900 XTX", "opencl")
    local q = { kernel = "small", device = "NVIDIA GeForce RTX 2080 Ti", size = { n = 1024 } }
    assert.are.same({ nil, "no configuration of small on NVIDIA GeForce RTX 2080 Ti is stored" },
      { db:best(q) })
    q.nearest = true
    local e = db:best(q)
    assert.are.same({ "alike", "NVIDIA GeForce RTX 3090" }, { e.match, e.device })
    assert.truthy(e.similarity > 0 and e.similarity < 1)
    -- the same card through the other API is more alike than any other card
    q.device = { name = "AMD Radeon RX 7900 XTX", backend = "cuda" }
    e = db:best(q)
    assert.are.same({ "alike", "AMD Radeon RX 7900 XTX", "opencl", 0.9 }, { e.match, e.device, e.backend, e.similarity })
    db:close()
    remove(path)
  end)

  it("tells how alike two devices are from their names, properties and probes", function()
    local sim = transfer.similarity
    local function dev(name, cu, clock, vendor, gbs)
      return { name = name, backend = "cuda", properties = { compute_units = cu, clock_mhz = clock,
        vendor = vendor, type = "gpu" }, probe = gbs and { rows = { { kind = "sweep", name = "copy",
        size = 256, value = gbs } } } }
    end
    local a = dev("GPU A", 132, 1980, "NVIDIA")
    assert.are.equal(1, sim(a, a))
    assert.are.equal(0.9, sim(a, { name = "GPU A", backend = "opencl" }))
    assert.truthy(sim(a, dev("GPU B", 132, 1755, "NVIDIA")) > sim(a, dev("GPU C", 28, 1755, "NVIDIA")))
    assert.truthy(sim(a, dev("GPU C", 28, 1755, "NVIDIA")) > sim(a, dev("GPU D", 28, 1755, "AMD")))
    -- where both were probed, their measured bandwidths count too
    local p, near, far = dev("GPU A", 132, 1980, "NVIDIA", 3000), dev("GPU E", 132, 1980, "NVIDIA", 2900),
      dev("GPU F", 132, 1980, "NVIDIA", 300)
    assert.truthy(sim(p, near) > sim(p, far))
    -- names alone: shared words count
    assert.truthy(sim({ name = "NVIDIA GeForce RTX 3090" }, { name = "NVIDIA GeForce RTX 2080 Ti" })
      > sim({ name = "NVIDIA GeForce RTX 3090" }, { name = "AMD Radeon RX 7900" }))
  end)

  it("ranks what it learnt by how alike the devices and sizes are, keeping what the space holds", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    store_peer(db, "NVIDIA GeForce RTX 3090", "cuda", { n = 1024 })
    store_peer(db, "NVIDIA GeForce RTX 3090", "cuda", { n = 8192 })
    store_peer(db, "AMD Radeon RX 7900 XTX", "opencl", { n = 1024 })
    local rec = kt.replay(CACHE)
    local plan = transfer.plan(db, { kernel = "small", device = "NVIDIA GeForce RTX 3090", backend = "opencl",
      size = { n = 2048 }, space = rec:space(), seeds = 2 })
    local from = {}
    for i, g in ipairs(plan.from) do from[i] = g.device .. " " .. g.size.n end
    -- (a size 512 times off would rank below the other card's at 1024)
    assert.are.same({ "NVIDIA GeForce RTX 3090 1024", "NVIDIA GeForce RTX 3090 8192",
      "AMD Radeon RX 7900 XTX 1024" }, from)
    assert.are.same({ 2, 9 }, { #plan.seeds, #plan.prior })
    assert.are.same(best_config(CACHE), plan.seeds[1])
    assert.is_true(plan.prior[1].weight > plan.prior[#plan.prior].weight)
    -- a configuration the space does not hold is no seed; in the prior, it says only
    -- the values the space has (two at least)
    local small = kt.space{ params = { { "block_x", { 32, 64 } }, { "block_y", { 1 } }, { "unroll", { 0, 1 } } } }
    plan = transfer.plan(db, { kernel = "small", device = "x", backend = "cuda", space = small })
    for _, c in ipairs(plan.seeds) do assert.truthy(small:index(c)) end
    local partial = 0
    for _, p in ipairs(plan.prior) do
      local n = 0
      for name, v in pairs(p.config) do
        n = n + 1
        assert.truthy((name == "block_x" and (v == 32 or v == 64)) or (name == "block_y" and v == 1)
          or (name == "unroll" and (v == 0 or v == 1)), name)
      end
      assert.truthy(n >= 2)
      if n < 3 then partial = partial + 1 end
    end
    assert.truthy(partial > 0)
    -- one the space's constraints leave out is no seed, but still says which values won
    local tight = kt.space{ params = { { "block_x", { 16, 32, 64, 128 } }, { "block_y", { 1, 2, 4 } },
      { "unroll", { 0, 1 } } }, constraints = { "block_x * block_y <= 32" } }
    plan = transfer.plan(db, { kernel = "small", device = "x", backend = "cuda", space = tight })
    local left_out = 0
    for _, p in ipairs(plan.prior) do if not tight:index(p.config) then left_out = left_out + 1 end end
    for _, c in ipairs(plan.seeds) do assert.truthy(tight:index(c)) end
    assert.are.same({ 9, true }, { #plan.prior, left_out > 0 })
    db:close()
    remove(path)
  end)

  it("seeds tuner:tune with what was tuned on other devices, after the caller's own seeds", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    local k = scaler(256)
    tuner:tune(k, { db = db, size = { n = 256 }, seeds = { { WG = 32 } }, stop = { count = 1 },
      progress = false })
    local e = db:list()[1]
    assert.are.equal(32, e.config.WG)
    local r = tuner:tune(k, { transfer = db, seeds = { { WG = 8 } }, stop = { count = 2 }, progress = false })
    assert.are.same({ 8, 32 }, { r:list()[1].config.WG, r:list()[2].config.WG })
    local ok, err = pcall(tuner.tune, tuner, k, { transfer = { db = db, fast = true } })
    assert.is_false(ok)
    assert.matches("tune options.transfer: unknown field 'fast' %(db, seeds, size%)", err)
    db:close()
    remove(path)
  end)
end)

describe("rec:tune with seeds and a prior", function()
  it("evaluates the seeds first and refuses a prior it cannot read, saying which", function()
    local rec = kt.replay(CACHE)
    local r = rec:tune{ seeds = { { block_x = 64, block_y = 2, unroll = 1 } }, stop = { count = 1 } }
    assert.are.same({ block_x = 64, block_y = 2, unroll = 1 }, r:list()[1].config)
    local ok, err = pcall(rec.tune, rec, { prior = { { config = { block_x = 64, block_y = 2, unroll = 1 },
      weight = -1 } } })
    assert.is_false(ok)
    assert.matches("tune options.prior%[1%]%.weight: expected a positive number, got %-1", err)
    ok, err = pcall(rec.tune, rec, { prior = { { block_x = 48, block_y = 2, unroll = 1 } } })
    assert.is_false(ok)
    assert.matches("tune options.prior%[1%]: block_x = 48 is not one of its values", err)
  end)

  it("gives a searcher written in Lua the prior, before any result", function()
    local rec = kt.replay(CACHE)
    local s = {}
    function s:init(space) self.space, self.heard = space, {} end
    function s:prior(list)
      for _, p in ipairs(list) do self.heard[#self.heard + 1] = { self.space:index(p.config), p.weight } end
    end
    function s:next()
      local h = table.remove(self.heard, 1)
      return h and { h[1] } or nil
    end
    local cfg = { block_x = 64, block_y = 2, unroll = 1 }
    local r = rec:tune{ search = s, prior = { { config = cfg, weight = 2 } } }
    assert.are.same({ 1, cfg }, { #r, r:list()[1].config })
    -- a prior may leave out a parameter it does not say: the searcher hears it so
    local heard
    local t = {}
    function t:prior(list) heard = list end
    function t:next() return nil end
    rec:tune{ search = t, prior = { { block_x = 64, unroll = 1 } } }
    assert.are.same({ { config = { block_x = 64, unroll = 1 }, weight = 1 } }, heard)
  end)

  it("lets bestfirst guess its first configurations from the prior", function()
    local rec = kt.replay(CACHE)
    local best = best_config(CACHE)
    for seed = 1, 5 do
      local r = rec:tune{ search = "bestfirst", seed = seed, prior = { best }, stop = { count = 1 } }
      -- its first guess: of 64 random draws among the 24, the one most like the prior's
      assert.are.same(best, r:list()[1].config)
      r = rec:tune{ search = { "bestfirst", trust = 0 }, seed = seed, prior = { best }, stop = { count = 24 } }
      local plain = rec:tune{ search = "bestfirst", seed = seed, stop = { count = 24 } }
      for i, x in ipairs(plain:list()) do assert.are.same(x.config, r:list()[i].config) end
    end
  end)
end)

describe("db:recheck", function()
  it("times again what changed, says what changed, and leaves what did not", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    local k = scaler(256)
    tuner:tune(k, { db = db, size = { n = 256 }, progress = false })
    local report = db:recheck{ kernel = k, tuner = tuner }
    assert.are.same({ 1, "not rechecked", {} }, { #report, report[1].verdict, report[1].changed })
    db:touch(db:list()[1], { driver = "0.0-old", compiler = kt.compiler_version(tuner.device) })
    assert.matches("^stale: scale on .* was tuned with the driver 0.0%-old",
      select(2, db:best{ kernel = k, device = tuner, size = { n = 256 } }))
    report = db:recheck{ kernel = k, tuner = tuner, noise = 9 }
    local item = report[1]
    assert.are.same({ "driver 0.0-old -> " .. tuner.device.driver_version }, item.changed)
    assert.truthy(item.verdict == "unchanged" or item.verdict == "faster" or item.verdict == "slower")
    assert.truthy(item.new_ms > 0)
    if item.verdict ~= "slower" then -- measured again: no longer stale
      assert.is_false(db:best{ kernel = k, device = tuner, size = { n = 256 } }.stale)
    end
    local ok, err = pcall(db.recheck, db, { kernel = "scale", tuner = tuner })
    assert.is_false(ok)
    assert.matches("db:recheck: kernel: expected the kernel", err)
    db:close()
    remove(path)
  end)

  it("says a stored best that no longer compiles is invalid", function()
    local path = files.tmpname(".db")
    local db = kt.db(path)
    local a, c = kt.array("float", 64):fill(1), kt.array("float", 64)
    local k = tuner:kernel{ name = "picky", global = 64, group = 1, args = { a:input(), c:output() },
      source = "#if V == 2\n#error V = 2 no longer compiles\n#endif\n" .. scale_src:gsub("scale", "picky") }
    k:param("V", { 1, 2 })
    tuner:tune(k, { db = db, size = { n = 64 }, seeds = { { V = 1 } }, stop = { count = 1 }, progress = false })
    -- an entry of V = 2, as if an older compiler had built it
    db:touch(db:list()[1], { driver = "0.0-old" })
    sqlite(path, "UPDATE tuned SET config = '{\"V\":2}' WHERE rank = 1")
    local item = db:recheck{ kernel = k, tuner = tuner }[1]
    assert.are.same({ "invalid", 2 }, { item.verdict, item.config.V })
    assert.are_not.equal("ok", item.status)
    -- tuned again, seeded with the old best, and stored
    item = db:recheck{ kernel = k, tuner = tuner, retune = true, stop = { count = 2 } }[1]
    assert.are.equal("invalid", item.verdict)
    assert.truthy(item.retuned_ms > 0)
    assert.are.equal(2, item.results:list()[1].config.V) -- the old best first
    local e = db:best{ kernel = k, device = tuner, size = { n = 64 } }
    assert.are.same({ 1, false }, { e.config.V, e.stale })
    db:close()
    remove(path)
  end)
end)
