-- Spaces at scale: exact counts of known spaces, the CLBlast Xgemm space
-- against its recorded dataset, indexing, and generation on several
-- threads giving the same space as on one.
local kt = require "ktlua"

local tuner = kt.tuner()
local src = "__kernel void k(__global float *a) {}"
local function kernel() return tuner:kernel{ source = src, name = "k", global = 64 } end

local function range(lo, hi)
  local t = {}
  for v = lo, hi do t[#t + 1] = v end
  return t
end

-- CLBlast's Xgemm parameters as Kernel Tuner's benchmark records them, and
-- its seven divisibility constraints (CLBlast's xgemm tuner): tiles are
-- split evenly over threads and vectors, and the A and B tiles are loaded
-- by re-shaped thread blocks that must tile KWG.
local XGEMM_PARAMS = {
  { "MWG", { 16, 32, 64, 128 } }, { "NWG", { 16, 32, 64, 128 } }, { "KWG", { 32 } },
  { "MDIMC", { 8, 16, 32 } }, { "NDIMC", { 8, 16, 32 } }, { "MDIMA", { 8, 16, 32 } },
  { "NDIMB", { 8, 16, 32 } }, { "KWI", { 2 } }, { "VWM", { 1, 2, 4, 8 } }, { "VWN", { 1, 2, 4, 8 } },
  { "STRM", { 0 } }, { "STRN", { 0 } }, { "SA", { 0, 1 } }, { "SB", { 0, 1 } }, { "PRECISION", { 32 } },
}
local XGEMM_CONSTRAINTS = {
  "KWG % KWI == 0",
  "MWG % (MDIMC*VWM) == 0",
  "NWG % (NDIMC*VWN) == 0",
  "MWG % (MDIMA*VWM) == 0",
  "NWG % (NDIMB*VWN) == 0",
  "KWG % ((MDIMC*NDIMC)/MDIMA) == 0",
  "KWG % ((MDIMC*NDIMC)/NDIMB) == 0",
}
local XGEMM_FUNCTIONS = {
  { { "KWG", "KWI" }, function(kwg, kwi) return kwg % kwi == 0 end },
  { { "MWG", "MDIMC", "VWM" }, function(mwg, mdimc, vwm) return mwg % (mdimc * vwm) == 0 end },
  { { "NWG", "NDIMC", "VWN" }, function(nwg, ndimc, vwn) return nwg % (ndimc * vwn) == 0 end },
  { { "MWG", "MDIMA", "VWM" }, function(mwg, mdima, vwm) return mwg % (mdima * vwm) == 0 end },
  { { "NWG", "NDIMB", "VWN" }, function(nwg, ndimb, vwn) return nwg % (ndimb * vwn) == 0 end },
  { { "KWG", "MDIMC", "NDIMC", "MDIMA" }, function(kwg, mc, nc, ma) return kwg % ((mc * nc) / ma) == 0 end },
  { { "KWG", "MDIMC", "NDIMC", "NDIMB" }, function(kwg, mc, nc, nb) return kwg % ((mc * nc) / nb) == 0 end },
}

local function xgemm(params, with_functions)
  local k = kernel()
  for _, p in ipairs(params) do k:param(p[1], p[2]) end
  if with_functions then
    for _, c in ipairs(XGEMM_FUNCTIONS) do k:constraint(c[1], c[2]) end
  else
    for _, c in ipairs(XGEMM_CONSTRAINTS) do k:constraint(c) end
  end
  return k
end

-- The parameters and the configurations a Kernel Tuner cache file holds.
local function read_dataset(path)
  local p = assert(io.popen("gzip -dc '" .. path .. "'"))
  local text = p:read("a")
  p:close()
  local function number(s) return math.tointeger(tonumber(s)) or tonumber(s) end
  local values = {}
  for name, list in text:match('"tune_params"%s*:%s*(%b{})'):gmatch('"([%w_]+)"%s*:%s*(%b[])') do
    values[name] = {}
    for v in list:gmatch("[-%d.eE]+") do table.insert(values[name], number(v)) end
  end
  local params = {}
  for name in text:match('"tune_params_keys"%s*:%s*(%b[])'):gmatch('"([%w_]+)"') do
    params[#params + 1] = { name, values[name] }
  end
  local configs = {}
  for key in text:match('"cache"%s*:%s*(%b{})'):gmatch('"([-%d.,]+)"%s*:%s*{') do
    local cfg, i = {}, 0
    for v in key:gmatch("[^,]+") do
      i = i + 1
      cfg[params[i][1]] = number(v)
    end
    configs[#configs + 1] = cfg
  end
  return params, configs
end

describe("the CLBlast Xgemm space", function()
  it("has exactly 17,956 valid configurations of 82,944", function()
    local s = xgemm(XGEMM_PARAMS):space()
    assert.are.equal(82944, s:count_all())
    assert.are.equal(17956, s:count())
  end)

  it("is the same with the constraints as Lua functions", function()
    local by_expr, by_fn = xgemm(XGEMM_PARAMS):space(), xgemm(XGEMM_PARAMS, true):space()
    assert.are.equal(17956, by_fn:count())
    for i = 0, 17955, 7 do assert.are.same(by_expr:config(i), by_fn:config(i)) end
  end)

  it("holds exactly the configurations of the recorded RTX 3090 dataset", function()
    local path, why = require("spec.support.datasets").path("gemm_RTX_3090.json.gz")
    if not path then return pending(why) end
    local params, configs = read_dataset(path)
    local s = xgemm(params):space()
    assert.are.equal(82944, s:count_all())
    assert.are.equal(#configs, s:count())
    local seen = {}
    for _, cfg in ipairs(configs) do
      local i = s:index(cfg)
      assert.is_not_nil(i)
      assert.is_nil(seen[i])
      seen[i] = true
      assert.are.same(cfg, s:config(i))
    end
  end)
end)

describe("a large space", function()
  -- GEMM-like tiles over 1..64 with threads and vectors: 2.7e8 combinations.
  local function tiles()
    local k = kernel()
    k:param("MWG", range(1, 64))
    k:param("NWG", range(1, 64))
    k:param("KWG", range(1, 64))
    k:param("MDIMC", range(1, 16))
    k:param("NDIMC", range(1, 16))
    k:param("VWM", { 1, 2, 4, 8 })
    k:param("VWN", { 1, 2, 4, 8 })
    k:constraint("MWG % (MDIMC*VWM) == 0")
    k:constraint("NWG % (NDIMC*VWN) == 0")
    k:constraint("MDIMC*NDIMC <= 64")
    return k
  end

  -- The same count, from how the constraints factor.
  local function tiles_count()
    local per_dim = {}
    for threads = 1, 16 do
      per_dim[threads] = 0
      for wg = 1, 64 do
        for _, vw in ipairs { 1, 2, 4, 8 } do
          if wg % (threads * vw) == 0 then per_dim[threads] = per_dim[threads] + 1 end
        end
      end
    end
    local n = 0
    for m = 1, 16 do
      for nn = 1, 16 do
        if m * nn <= 64 then n = n + per_dim[m] * per_dim[nn] end
      end
    end
    return n * 64
  end

  it("counts exactly without listing its product", function()
    local s = tiles():space()
    assert.are.equal(64 ^ 3 * 16 * 16 * 4 * 4 // 1, s:count_all())
    assert.are.equal(tiles_count(), s:count())
  end)

  it("maps indices to configurations and back", function()
    local s = tiles():space()
    local n = s:count()
    for i = 0, n - 1, n // 997 do
      local cfg = s:config(i)
      assert.are.equal(0, cfg.MWG % (cfg.MDIMC * cfg.VWM))
      assert.are.equal(0, cfg.NWG % (cfg.NDIMC * cfg.VWN))
      assert.is_true(cfg.MDIMC * cfg.NDIMC <= 64)
      assert.are.equal(i, s:index(cfg))
    end
    assert.is_nil(s:index{ MWG = 3, NWG = 1, KWG = 1, MDIMC = 2, NDIMC = 1, VWM = 1, VWN = 1 })
    assert.are.equal(n - 1, s:index(s:config(n - 1)))
  end)

  it("orders configurations with the first parameter varying slowest", function()
    local s = tiles():space()
    local first, last = s:config(0), s:config(s:count() - 1)
    assert.are.same({ MWG = 1, NWG = 1, KWG = 1, MDIMC = 1, NDIMC = 1, VWM = 1, VWN = 1 }, first)
    assert.are.same({ MWG = 64, NWG = 64, KWG = 64, MDIMC = 16, NDIMC = 4, VWM = 4, VWN = 8 }, last)
  end)
end)

describe("generation on several threads", function()
  local function divisible(threads, with_function)
    local k = kernel()
    for _, p in ipairs { "A", "B", "C", "D" } do k:param(p, range(1, 24)) end
    k:constraint("A % B == 0")
    k:constraint("(A + C) % D == 0")
    if with_function then
      k:constraint({ "B", "D" }, function(b, d) return b * d <= 48 end)
    else
      k:constraint("B * D <= 48")
    end
    return k:space():threads(threads)
  end

  it("gives the same configurations at the same indices for any number of threads", function()
    local n = 0
    for a = 1, 24 do for b = 1, 24 do for c = 1, 24 do for d = 1, 24 do
      if a % b == 0 and (a + c) % d == 0 and b * d <= 48 then n = n + 1 end
    end end end end
    local one = divisible(1)
    assert.are.equal(n, one:count())
    for _, threads in ipairs { 2, 3, 7 } do
      local many = divisible(threads)
      assert.are.equal(n, many:count())
      for i = 0, n - 1, 3 do assert.are.same(one:config(i), many:config(i)) end
    end
  end)

  it("calls Lua constraints from the calling thread only", function()
    local one, lua = divisible(1), divisible(4, true)
    assert.are.equal(one:count(), lua:count())
    for i = 0, one:count() - 1, 5 do assert.are.same(one:config(i), lua:config(i)) end
  end)

  it("reports the first error in walk order, as one thread would", function()
    for _, threads in ipairs { 1, 4 } do
      local k = kernel()
      for _, p in ipairs { "A", "B", "C", "D" } do k:param(p, range(0, 20)) end
      k:constraint("A + B + C >= 0 && D // C >= 0")
      k:space():threads(threads)
      assert.has_error(function() k:space():count() end,
        "constraint 'A + B + C >= 0 && D // C >= 0': at character 21: integer division by zero")
    end
  end)

  it("rejects a negative number of threads", function()
    assert.has_error(function() kernel():space():threads(-1) end)
  end)
end)

describe("the memory a space takes", function()
  -- Four 1,000-value parameters that one constraint links: 10^12
  -- configurations, every one valid.
  local function huge()
    local k = tuner:kernel{ source = "__kernel void k(__global int *o) { }", name = "k", global = 1,
                            args = { kt.array("int", 1):output() } }
    for _, p in ipairs { "A", "B", "C", "D" } do k:param(p, range(1, 1000)) end
    k:constraint("A + B + C + D >= 0")
    return k
  end

  it("has a stated limit, past which generation fails before any configuration runs", function()
    local k = huge()
    assert.are.equal(1 << 30, k:space():max_bytes())
    k:space():max_bytes(1 << 20)
    local ran = 0
    for _, threads in ipairs { 1, 4 } do
      k:space():threads(threads)
      local ok, err = pcall(tuner.tune, tuner, k, { stop = { count = 3 }, progress = function() ran = ran + 1 end })
      assert.is_false(ok)
      assert.are.equal("the valid configurations of A, B, C, D (of 1e+12 combinations) take more than "
        .. "1048576 bytes, the space's "
        .. "limit (k:space():max_bytes(n) raises it); search = \"random\" with a budget (stop = {count = n} or "
        .. "{seconds = s}) samples a space too large to list, and k:space():estimate() counts it", err)
    end
    assert.are.equal(0, ran)
    assert.has_error(function() k:space():max_bytes(-1) end,
      "bad argument #1 to 'max_bytes' (expected a number of bytes (0: the default))")
  end)

  it("counts the limit over the whole space, and a larger one lets it generate", function()
    local function pairs_of(groups)
      local k = kernel()
      for _, p in ipairs { "A", "B", "C", "D" } do k:param(p, range(1, 30)) end
      k:constraint("A >= B")
      if groups == 2 then k:constraint("C >= D") end
      return k:space():max_bytes(2500) -- a walk's first buffer (2 KiB) and one group's tree fit
    end
    assert.are.equal(465 * 900, pairs_of(1):count())
    assert.has_error(function() pairs_of(2):count() end, "the valid configurations of C, D (of 900 "
      .. "combinations) take more than 2500 bytes, the space's "
      .. "limit (k:space():max_bytes(n) raises it); search = \"random\" with a budget (stop = {count = n} or "
        .. "{seconds = s}) samples a space too large to list, and k:space():estimate() counts it")
    assert.are.equal(465 * 465, pairs_of(2):max_bytes(0):count())
  end)

  it("counts past the largest integer as a float", function()
    local k = kernel()
    for i = 1, 63 do k:param("P" .. i, { 0, 1 }) end
    local s = k:space()
    assert.are.equal(2 ^ 63, s:count())
    assert.are.equal("float", math.type(s:count()))
    assert.are.same(s:config(math.maxinteger), s:config(s:index(s:config(math.maxinteger))))
    k:param("P64", { 0, 1 })
    assert.has_error(function() s:count() end, "the space has more than 2^64 valid configurations")
  end)
end)
