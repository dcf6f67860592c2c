-- Early stop (tune options.early_stop, core/eval/measure.c): a configuration clearly slower than the
-- best so far after its first timed runs is repeated no further, and is never the best.
local kt = require "ktlua"
local files = require "spec.support.files"

local tuner = kt.tuner()

-- Work proportional to ITER, on a few work-items, so that times are far apart.
local src = [[
__kernel void spin(__global float *c, int n) {
  int i = get_global_id(0);
  float x = i;
  for (int k = 0; k < ITER * 200000; k++) x = x * 0.999f + 1.0f;
  c[i] = x;
}]]

local function spin(iters)
  local c = kt.array("float", 4)
  local k = tuner:kernel{ source = src, name = "spin", global = 4, args = { c:output(), kt.int(4) } }
  k:param("ITER", iters)
  return k
end

local function best_of(r)
  local b = r:best()
  return b and b.config.ITER
end

describe("early stop", function()
  it("never cuts the eventual best, and cuts clearly slower ones after their first runs", function()
    -- In this order: 8 sets the best; 128 is 16 times slower (cut); 1 becomes the best (never
    -- cut: it is faster); 16 and 32 are far slower than it (cut). Each ratio is 8 or more: a
    -- loaded machine (2 cores, two busy loops and the suite's jobs) made one configuration's
    -- times 3 times another's, enough to spoil a ratio of 4 against the factor 1.5. The spread
    -- allowed is wide for it too.
    local k = spin({ 8, 128, 1, 16, 32 })
    local plain = tuner:tune(k, { repeats = 6 })
    local early = tuner:tune(k, { repeats = 6, early_stop = { runs = 2, factor = 1.5, spread = 10 } })
    assert.are.equal(1, best_of(plain))
    assert.are.equal(best_of(plain), best_of(early))
    local cut = {}
    for i = 1, #early do
      local x = early[i]
      assert.are.equal("ok", x.status)
      if x.cut_short then
        cut[#cut + 1] = x.config.ITER
        assert.are.equal(2, #x.samples_ms) -- its samples are kept
      else
        assert.are.equal(6, #x.samples_ms)
      end
      assert.is_nil(plain[i].cut_short)
    end
    assert.are.same({ 128, 16, 32 }, cut)
    assert.is_nil(early:best().cut_short)
  end)

  it("widens its bound by the best's own spread, times noise", function()
    -- The same order as above: with noise = 1e9 the bound is the best's time times a billion
    -- times its runs' relative spread, which six runs timed to the nanosecond never make 0.
    local k = spin({ 8, 128, 1, 16, 32 })
    local r = tuner:tune(k, { repeats = 6, early_stop = { runs = 2, factor = 1.5, spread = 10, noise = 1e9 } })
    for i = 1, #r do
      assert.is_nil(r[i].cut_short, r[i].config.ITER)
      assert.are.equal(6, #r[i].samples_ms)
    end
  end)

  it("is never the best, also when the results are written and read back", function()
    local k = spin({ 8, 1, 64 })
    local path = files.tmpname(".json")
    local r = tuner:tune(k, { repeats = 4, early_stop = { factor = 1.5, spread = 10 } })
    assert.is_true(r[3].cut_short)
    r:write(path)
    local back = kt.load(path)
    assert.is_true(back[3].cut_short)
    assert.is_nil(back[2].cut_short)
    assert.are.equal(1, best_of(back))
    os.remove(path)
    -- CSV keeps it in a column of its own, written only where a row was cut short.
    path = files.tmpname(".csv")
    r:write(path)
    local header = files.read(path):match("^[^\n]*")
    -- (then, on a CPU device, its waits for a processor: issue 45)
    assert.truthy(header:gsub(",waited_ms", ""):gsub(",crowded", ""):find(",error,cut_short$"))
    back = kt.load(path)
    assert.is_true(back[3].cut_short)
    assert.is_nil(back[2].cut_short)
    assert.are.equal(1, best_of(back))
    os.remove(path)
  end)

  it("cuts as the rule says with the timed runs one at a time too", function()
    local k = spin({ 1, 64 })
    local r = tuner:tune(k, { repeats = 5, pipeline = false, early_stop = { runs = 3, factor = 1.5, spread = 10 } })
    assert.is_nil(r[1].cut_short)
    assert.are.equal(5, #r[1].samples_ms)
    assert.is_true(r[2].cut_short)
    assert.are.equal(3, #r[2].samples_ms)
  end)

  it("rejects bad options, naming the expected values", function()
    local k = spin({ 1 })
    local cases = {
      { { factor = 0.5 }, "tune options.early_stop.factor: expected a number above 1, got 0.5" },
      { { spread = -1 }, "tune options.early_stop.spread: expected a number of 0 or more, got -1.0" },
      { { runs = 0 }, "tune options.early_stop.runs: expected an integer of 1 or more, got 0" },
      { { noise = -1 }, "tune options.early_stop.noise: expected a number of 0 or more, got -1.0" },
      { "yes", "tune options.early_stop: expected true, false or {runs =, factor =, spread =, noise =}, got string" },
    }
    for _, c in ipairs(cases) do
      local ok, e = pcall(tuner.tune, tuner, k, { early_stop = c[1] })
      assert.is_false(ok)
      assert.are.equal(c[2], e:match("tune options%.early_stop.*$"))
    end
    local ok, e = pcall(tuner.tune, tuner, k, { early_stop = { ratio = 2 } })
    assert.is_false(ok)
    assert.matches("ratio", e)
  end)
end)
