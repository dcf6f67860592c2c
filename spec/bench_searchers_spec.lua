-- bench/searchers/shape.lua: the figures bench/RESULTS.md quotes for a
-- space's shape, on a space small enough to work out by hand
-- (spec/fixtures/shape_tiny_cache.json: x 1..3, y 1..2; (3,2) failed).
local files = require "spec.support.files"
local shell = require "spec.support.shell"

describe("bench/searchers/shape.lua", function()
  it("gives the failed share, the near-optimal counts, the traps, the basin and the costliest parameters", function()
    local out = shell.must(shell.ktlua .. " bench/searchers/shape.lua spec/fixtures/shape_tiny_cache.json")
    -- optimum (1,1) 1.0 ms; (3,1) 1.08 is within 10%; (2,2) 1.25 is a one-change local
    -- minimum over 5% slower (a trap); every other descent ends at the optimum (4 of 5);
    -- without y = 1 the best is 1.25 (0.80), without x = 1 it is 1.08 (0.93)
    assert.truthy(out:find("| shape_tiny_cache | 3x2 | 6 | 0.17 | 1 / 1 / 2 | 2 (1) | 0.80 | y 0.80, x 0.93 |", 1, true), out)
  end)

  it("says how to call it when given no file", function()
    local out, code = shell.run(shell.ktlua .. " bench/searchers/shape.lua")
    assert.are_not.equal(0, code)
    assert.truthy(out:find("usage: shape.lua FILE.json.gz ...", 1, true), out)
  end)
end)

-- bench/searchers/basins.lua on spec/fixtures/twins_cache.json (tile_x, tile_y in
-- {1, 2, 4, 8}, unroll in {0, 1}; oblong tiles slow): every square is a one-change
-- local minimum, and with the pair moves the optimum's basin is the whole space.
describe("bench/searchers/basins.lua", function()
  it("gives the basins without and with pair moves, and where bestfirst's runs end", function()
    local out = shell.must(shell.ktlua ..
      " bench/searchers/basins.lua spec/fixtures/twins_cache.json 25 5 pairs=1:sample=4:twins=1")
    for _, line in ipairs{"one-change moves: 4 local minima among 32 valid configurations",
                          "  1.000  basin    14  8 8 0", "  0.667  basin    10  4 4 0",
                          "  0.500  basin     6  2 2 0", "  0.400  basin     2  1 1 0",
                          "one-change and pair moves: 1 local minima among 32 valid configurations",
                          "  1.000  basin    32  8 8 0",
                          "bestfirst (pairs=1:sample=4:twins=1) at 25% (8 evaluations), 5 runs: mean 1.000",
                          "    5 runs end at 1.000, found at evaluation 6.6 on average: 8 8 0"} do
      assert.truthy(out:find(line, 1, true), line .. "\n" .. out)
    end
  end)

  it("says how to call it when given no file", function()
    local out, code = shell.run(shell.ktlua .. " bench/searchers/basins.lua")
    assert.are_not.equal(0, code)
    assert.truthy(out:find("usage: basins.lua FILE.json.gz [PERCENT [RUNS [OPTION=VALUE:...]]]", 1, true), out)
  end)
end)

-- bench/searchers/record/spaces.lua and record/mm.cu: what the recorded mm
-- spaces measure is a correct product, through either of its code paths.
describe("bench/searchers/record", function()
  it("spaces.lua names what was wrong in its arguments", function()
    local out, code = shell.run(shell.ktlua .. " bench/searchers/record/spaces.lua --kernel=gemm out.json")
    assert.are_not.equal(0, code)
    assert.truthy(out:find("--kernel: unknown kernel 'gemm' (usage: spaces.lua --kernel=mm|dedisp|nbody|triad|pnpoly", 1, true), out)
    out, code = shell.run(shell.ktlua .. " bench/searchers/record/spaces.lua --size=3 out.json")
    assert.are_not.equal(0, code)
    assert.truthy(out:find("unknown argument --size=3 (usage:", 1, true), out)
  end)

  -- The tiling parameters of k, from cfg's four values from `at`: block x, y; tile x, y.
  local function tiled(k, cfg, at)
    k:param("block_size_x", { cfg[at] }, { group_x = "mul" })
    k:param("block_size_y", { cfg[at + 1] }, { group_y = "mul" })
    k:param("tile_size_x", { cfg[at + 2] }, { global_x = "div" })
    k:param("tile_size_y", { cfg[at + 3] }, { global_y = "div" })
  end

  -- Kernel `name` of record/FAMILY.lua as spaces.lua makes it, with opt (its size; check on:
  -- the family's Lua reference) on PoCL, run in the configurations cfgs (tables of values; each
  -- listed parameter's value, the others their first): each must come out ok.
  local function family_checks(family, name, opt, cfgs)
    local kt = require "ktlua"
    package.path = "bench/searchers/?.lua;" .. package.path
    local tuner = kt.tuner("opencl", { compile_workers = 0, cache = false })
    opt.check, opt.backend, opt.bat = true, "opencl", "../shared/bat/benchmarks"
    local k = require("record." .. family)[name](tuner, opt)
    k:prune{ divisible = false }
    local s, seeds = k:space(), {}
    for _, cfg in ipairs(cfgs) do
      local full = {}
      for _, p in ipairs(s:params()) do full[p.name] = cfg[p.name] == nil and p.values[1] or cfg[p.name] end
      seeds[#seeds + 1] = assert(s:index(full), name .. ": a configuration not in the space")
    end
    local r = tuner:tune(k, { repeats = 1, progress = false, seeds = seeds, stop = { count = #seeds } })
    tuner:close()
    assert.are.equal(#cfgs, #r)
    for _, x in ipairs(r) do
      local line = {}
      for p, v in pairs(x.config) do line[#line + 1] = p .. "=" .. tostring(v) end
      assert.are.equal("ok", x.status, name .. " " .. table.concat(line, " ") .. ": " .. tostring(x.error))
    end
  end

  it("reduction.cu (with portable.h) sums its input, by atomics and by the last block (OpenCL)", function()
    family_checks("reduction", "reduction", { n = 1 << 16 }, {
      { block_size_x = 32 }, { block_size_x = 64, vector_width = 4, work_per_thread = 8, contiguous = 1 },
      { block_size_x = 1024, vector_width = 2, work_per_thread = 16, loop_unroll = 1, use_atomics = 1 } })
  end)

  it("coulomb.cu (with portable.h) computes the potential from global, constant and shared memory (OpenCL)", function()
    family_checks("coulomb", "coulomb2d", { n = 48, small = true }, { -- 48: blocks overhang the grid
      { block_size_x = 32, block_size_y = 4, tile_size_x = 2, inner_unroll = 4, use_constant = 1, atoms_soa = 1 },
      { block_size_x = 64, block_size_y = 16, tile_size_x = 8, inner_unroll = 2, use_shared = 1 } })
    family_checks("coulomb", "coulomb3d", { n = 32, small = true }, {
      { block_size_x = 16, block_size_y = 4, tile_size_x = 2, z_iterations = 2, use_shared = 1, atoms_soa = 1 },
      { block_size_x = 32, block_size_y = 1, z_iterations = 4, inner_unroll = 8, use_constant = 1 } })
  end)

  it("histogram.cu (with portable.h) counts the bytes in global and in shared memory (OpenCL)", function()
    family_checks("histogram", "histogram", { n = 1 << 15 }, {
      { block_size_x = 64, vector_width = 4, work_per_thread = 4, contiguous = 1 },
      { block_size_x = 256, vector_width = 2, work_per_thread = 8, use_local = 1, copies = 4, padding = 1 },
      { block_size_x = 128, vector_width = 1, work_per_thread = 2, use_local = 1 } })
  end)

  it("matvec.cu (with portable.h) computes y = A x by threads and by teams, x in shared memory or not (OpenCL)", function()
    family_checks("matvec", "matvec", { n = 64 }, {
      { block_size_x = 1, block_size_y = 32, tile_size_y = 2, vector_width = 4, loop_unroll = 4, use_shared = 1 },
      { block_size_x = 32, block_size_y = 4, tile_size_y = 4, vector_width = 2 },
      { block_size_x = 64, block_size_y = 16, vector_width = 1, use_shared = 1 } })
  end)

  it("particles.cu (with portable.h) moves the particles of each layout 4 steps (OpenCL)", function()
    family_checks("particles", "particles", { n = 4096, layout = 0 }, {
      { block_size_x = 64, work_per_thread = 2, aos_load = 1, steps_per_launch = 2 },
      { block_size_x = 32, work_per_thread = 4, contiguous = 1, aos_load = 2 } })
    family_checks("particles", "particles", { n = 4096, layout = 1 }, { { block_size_x = 128, steps_per_launch = 4 } })
    family_checks("particles", "particles", { n = 4096, layout = 2 },
      { { block_size_x = 256, work_per_thread = 2, contiguous = 1, steps_per_launch = 1 } })
  end)

  it("mm.cu (with portable.h) computes C = A B with and without local memory (OpenCL)", function()
    local kt = require "ktlua"
    local n = 64
    local tuner = kt.tuner("opencl", { compile_workers = 0, cache = false })
    local a, b, c = kt.array("float", n * n):random(1), kt.array("float", n * n):random(2), kt.array("float", n * n)
    local ref = kt.array("float", n * n)
    for i = 0, n - 1 do
      for j = 0, n - 1 do
        local s = 0
        for k = 0, n - 1 do s = s + a[i * n + k] * b[k * n + j] end
        ref[i * n + j] = s
      end
    end
    local prelude = files.read("bench/searchers/record/portable.h") -- the prelude spaces.lua gives them
    -- block x, y; tile x, y; use_local, tile_k, padding
    for _, cfg in ipairs({ { 8, 4, 1, 1, 0, 8, 0 }, { 16, 2, 2, 4, 1, 16, 1 }, { 8, 8, 4, 2, 1, 32, 0 } }) do
      local k = tuner:kernel{ file = "bench/searchers/record/mm.cu", prelude = prelude, name = "mm",
        global = { n, n }, group = { 1, 1 },
        args = { c:output(), a:input(), b:input(), kt.int(n) } }
      tiled(k, cfg, 1)
      k:param("use_local", { cfg[5] })
      k:param("tile_k", { cfg[6] })
      k:param("padding", { cfg[7] })
      k:reference(c, ref, { method = "relative", tolerance = 1e-4 })
      local r = tuner:tune(k, { repeats = 1, progress = false })
      assert.are.equal("ok", r[1].status, table.concat(cfg, ",") .. ": " .. tostring(r[1].error))
    end
    tuner:close()
  end)

  it("stencil.cu and transpose.cu (with portable.h) compute their references (OpenCL)", function()
    local kt = require "ktlua"
    local n = 64
    local tuner = kt.tuner("opencl", { compile_workers = 0, cache = false })
    local prelude = files.read("bench/searchers/record/portable.h")
    local input, out = kt.array("float", n * n):random(1), kt.array("float", n * n)
    local function at(y, x) return (y >= 0 and y < n and x >= 0 and x < n) and input[y * n + x] or 0 end
    local refs = {}
    for name, want in pairs({
      stencil = function(y, x) return 0.2 * (at(y, x) + at(y - 1, x) + at(y + 1, x) + at(y, x - 1) + at(y, x + 1)) end,
      transpose = function(y, x) return input[x * n + y] end,
    }) do
      refs[name] = kt.array("float", n * n)
      for y = 0, n - 1 do for x = 0, n - 1 do refs[name][y * n + x] = want(y, x) end end
    end
    -- name; block x, y; tile x, y; use_shared, padding; tile_contig_y (the stencil's)
    for _, cfg in ipairs({ { "stencil", 16, 2, 1, 1, 0, 0, 0 }, { "stencil", 32, 4, 2, 4, 1, 1, 1 },
                           { "stencil", 16, 8, 4, 2, 0, 0, 1 }, { "transpose", 8, 4, 1, 1, 0, 0 },
                           { "transpose", 16, 4, 2, 4, 1, 1 }, { "transpose", 32, 8, 2, 1, 1, 0 } }) do
      local name = cfg[1]
      local k = tuner:kernel{ file = "bench/searchers/record/" .. name .. ".cu", prelude = prelude, name = name,
        global = { n, n }, group = { 1, 1 }, args = { out:output(), input:input(), kt.int(n) } }
      tiled(k, cfg, 2)
      k:param("use_shared", { cfg[6] })
      k:param("padding", { cfg[7] })
      if cfg[8] then k:param("tile_contig_y", { cfg[8] }) end
      k:reference(out, refs[name], { method = "relative", tolerance = 1e-5 })
      local r = tuner:tune(k, { repeats = 1, progress = false })
      assert.are.equal("ok", r[1].status, table.concat(cfg, ",", 2) .. " " .. name .. ": " .. tostring(r[1].error))
    end
    tuner:close()
  end)
end)

-- bench/transfer/transfer.lua (issue 42) on dedisp's two recordings, one seed: each
-- held out in turn, transferring from the other, whose optimum it shares.
describe("bench/transfer/transfer.lua", function()
  it("holds each device out, transferring from the others, and averages by kernel", function()
    local out = shell.must(shell.ktlua .. " bench/transfer/transfer.lua --seeds=1 --only=dedisp")
    assert.truthy(out:find("| dedisp_H200 | 1 others | ", 1, true), out)
    assert.truthy(out:find("| dedisp_H100_80GB_HBM3 | 1 others | ", 1, true), out)
    -- with transfer: the other GPU's best is this one's optimum, the first seed
    assert.truthy(out:find("| %*%*all%*%* %(mean of 1 kernels%) | | [%d.]+ | [%d.]+ | [%d.]+ | 1%.000 | 1%.000 | 1%.000 | "),
      out)
  end)
end)
