-- Every example runs in the suite, at a small size, and validates.
local shell = require "spec.support.shell"
local ktlua, run = shell.ktlua, shell.run

describe("examples", function()
  it("tune_vectoradd.lua tunes and validates", function()
    local out, code = run(ktlua .. " examples/tune_vectoradd.lua 4096")
    assert.are.equal(0, code, out)
    -- 4096 / 16 = 256 work-items cannot fill a group of 512: 24 of 25 remain
    assert.matches("vadd on .-: 24 of 24 configurations", out)
    assert.matches("24 ok", out)
    assert.matches("best: WG=%d+ VEC=%d+", out)
  end)
end)
