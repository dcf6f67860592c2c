-- Every example runs in the suite, at a small size, and validates.
local shell = require "spec.support.shell"
local ktlua, run = shell.ktlua, shell.run

describe("examples", function()
  it("tune_vectoradd.lua tunes and validates", function()
    local out, code = run(ktlua .. " examples/tune_vectoradd.lua --n=4096")
    assert.are.equal(0, code, out)
    -- 4096 / 16 = 256 work-items cannot fill a group of 512: 24 of 25 remain
    assert.matches("vadd on .-: 24 of 24 configurations", out)
    assert.matches("24 ok", out)
    assert.matches("best: WG=%d+ VEC=%d+", out)
  end)
end)

describe("launcher examples", function()
  it("tune_reduction.lua sums with atomics and with iterated launches, and validates", function()
    local out, code = run(ktlua .. " examples/tune_reduction.lua --n=8192 --repeats=1")
    assert.are.equal(0, code, out)
    assert.matches("reduce on .-: 175 of 175 configurations", out)
    assert.matches("\n  175 ok\n", out)
  end)

  it("tune_sort.lua sorts in eight passes of three kernels, and validates", function()
    local out, code = run(ktlua .. " examples/tune_sort.lua --n=4096 --repeats=1")
    assert.are.equal(0, code, out)
    -- 4096 keys: every NUM_GROUPS divides them; WG * VEC must fit a block
    assert.matches("radix_sort on .-: (%d+) of %1 configurations", out)
    assert.matches("\n  %d+ ok\n", out)
    assert.matches("best: WG=%d+ VEC=%d+ NUM_GROUPS=%d+", out)
  end)

  it("tune_particles.lua reshapes structs in Lua between two kernels, and validates", function()
    local out, code = run(ktlua .. " examples/tune_particles.lua --n=2048 --repeats=1")
    assert.are.equal(0, code, out)
    assert.matches("particles on .-: 64 of 64 configurations", out)
    assert.matches("\n  64 ok\n", out)
  end)
end)
