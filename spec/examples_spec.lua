-- Every example runs in the suite, at a small size, and validates.
local shell = require "spec.support.shell"
local ktlua, run = shell.ktlua, shell.run

describe("examples", function()
  it("tune_vectoradd.lua tunes and validates", function()
    local out, code = run(ktlua .. " examples/tune_vectoradd.lua --n=4096")
    assert.are.equal(0, code, out)
    assert.matches("vadd on .-: 25 of 25 configurations", out)
    assert.matches("\n  25 ok\n", out)
    assert.matches("best: WG=%d+ VEC=%d+", out)
    -- any size: whole vectors (VEC 1 to 8 divide 1000), global sizes rounded up to whole groups
    out, code = run(ktlua .. " examples/tune_vectoradd.lua --n=1000")
    assert.are.equal(0, code, out)
    assert.matches("vadd on .-: 20 of 20 configurations", out)
    assert.matches("\n  20 ok\n", out)
  end)
end)

describe("launcher examples", function()
  it("tune_reduction.lua sums with atomics and with iterated launches, and validates", function()
    local out, code = run(ktlua .. " examples/tune_reduction.lua --n=8192 --repeats=1")
    assert.are.equal(0, code, out)
    assert.matches("reduce on .-: 175 of 175 configurations", out)
    assert.matches("\n  175 ok\n", out)
    -- any size: VEC must divide 1000 (1, 2, 4, 8), and the launcher sizes every launch
    out, code = run(ktlua .. " examples/tune_reduction.lua --n=1000 --repeats=1")
    assert.are.equal(0, code, out)
    assert.matches("reduce on .-: 140 of 140 configurations", out)
    assert.matches("\n  140 ok\n", out)
  end)

  it("tune_sort.lua sorts in eight passes of three kernels, and validates", function()
    local out, code = run(ktlua .. " examples/tune_sort.lua --n=4096 --repeats=1")
    assert.are.equal(0, code, out)
    -- 4096 keys: every NUM_GROUPS divides them; WG * VEC must fit a block
    assert.matches("radix_sort on .-: (%d+) of %1 configurations", out)
    assert.matches("\n  %d+ ok\n", out)
    assert.matches("best: WG=%d+ VEC=%d+ NUM_GROUPS=%d+", out)
    -- blocks of ceil(1000 / NUM_GROUPS) keys, the last one shorter
    out, code = run(ktlua .. " examples/tune_sort.lua --n=1000 --repeats=1")
    assert.are.equal(0, code, out)
    assert.matches("radix_sort on .-: 2 of 2 configurations", out)
    assert.matches("\n  2 ok\n", out)
  end)

  it("tune_particles.lua reshapes structs in Lua between two kernels, and validates", function()
    local out, code = run(ktlua .. " examples/tune_particles.lua --n=2000 --repeats=1")
    assert.are.equal(0, code, out)
    assert.matches("particles on .-: 64 of 64 configurations", out)
    assert.matches("\n  64 ok\n", out)
  end)
end)

describe("annotated examples (OCLoptimizer's pragmas, doc/annotations.md)", function()
  it("tune_annotated_vadd.lua tunes the work-group size, then the unroll factor, and validates", function()
    local out, code = run(ktlua .. " examples/tune_annotated_vadd.lua --n=10000")
    assert.are.equal(0, code, out)
    -- 4 work-group sizes, then 8 factors on the best (one of them seen): 11
    assert.matches("vadd on .-: 11 of 32 configurations %(staged search, stopped: searcher finished%)", out)
    assert.matches("\n  11 ok\n", out)
  end)

  it("tune_annotated_matvec.lua rewrites two annotated loops (unroll-and-jam, unroll) and validates", function()
    local out, code = run(ktlua .. " examples/tune_annotated_matvec.lua --rows=300 --cols=37")
    assert.are.equal(0, code, out)
    local seen = tonumber(out:match("matvec on .-: (%d+) of 32 configurations %(staged search, stopped: searcher finished%)"))
    assert.is_truthy(seen, out)
    assert.is_true(seen >= 2 + 4 + 4 - 2, out) -- WG, then each annotation's values on what survived
    assert.matches("\n  " .. seen .. " ok\n", out)
    out, code = run(ktlua .. " examples/tune_annotated_matvec.lua --rows=64 --cols=8 --search=genetic --count=6")
    assert.are.equal(0, code, out)
    assert.matches("matvec on .-: 6 of 32 configurations %(genetic search, stopped: count%)", out)
  end)

  it("tune_annotated_paper.lua tunes the paper's form breadth first: the work sizes, then each annotation", function()
    local file = os.tmpname()
    finally(function() os.remove(file) end)
    local out, code = run(ktlua .. " examples/tune_annotated_paper.lua --n=100 --output=" .. file .. ".json")
    finally(function() os.remove(file .. ".json") end)
    assert.are.equal(0, code, out)
    -- 3 x 3 work sizes, then the 4 jam factors and the 8 unroll factors on the best (one of each seen): 19
    assert.matches("matvec on .-: 19 of 288 configurations %(staged search, stopped: searcher finished%)", out)
    assert.matches("\n  19 ok\n", out)
    -- in that order, each stage on the fastest of the one before
    local r = require("ktlua").load(file .. ".json")
    local function configs(from, to, fields)
      local list = {}
      for i = from, to do
        local v = {}
        for j, f in ipairs(fields) do v[j] = r[i].config[f] end
        list[#list + 1] = table.concat(v, " ")
      end
      table.sort(list)
      return list
    end
    -- the one of stage that the next stage went on with (whose fields match
    -- the next stage's first result), no slower than any other
    local function fastest(stage, fields, next_one)
      local kept
      for _, e in ipairs(stage) do
        local same = true
        for _, f in ipairs(fields) do same = same and e.config[f] == next_one.config[f] end
        if same then kept = e end
      end
      assert.is_table(kept)
      for _, e in ipairs(stage) do assert.is_true(kept.time_ms <= e.time_ms) end
      return kept
    end
    assert.are.same({ "1 1 128 16", "1 1 128 4", "1 1 128 64", "1 1 32 16", "1 1 32 4", "1 1 32 64", "1 1 64 16",
      "1 1 64 4", "1 1 64 64" }, configs(1, 9, { "UNROLL_JAM_1", "UNROLL_2", "WG", "GROUPS" }))
    local sizes = fastest({ table.unpack(r, 1, 9) }, { "WG", "GROUPS" }, r[10])
    local at = sizes.config.WG .. " " .. sizes.config.GROUPS
    assert.are.same({ "2 1 " .. at, "3 1 " .. at, "4 1 " .. at },
      configs(10, 12, { "UNROLL_JAM_1", "UNROLL_2", "WG", "GROUPS" }))
    local jam = fastest({ sizes, r[10], r[11], r[12] }, { "UNROLL_JAM_1" }, r[13]).config.UNROLL_JAM_1
    local unrolls = {}
    for u = 2, 8 do unrolls[#unrolls + 1] = ("%d %d %s"):format(jam, u, at) end
    assert.are.same(unrolls, configs(13, 19, { "UNROLL_JAM_1", "UNROLL_2", "WG", "GROUPS" }))
  end)
end)
