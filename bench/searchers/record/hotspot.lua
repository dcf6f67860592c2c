-- bench/searchers/record/hotspot.lua: BAT's hotspot (bat/benchmarks/hotspot/
-- hotspot_kernel.cu, CUDA) on a 4096 x 4096 grid, a sub-range of its CAFF
-- space (349,853 configurations): BLOCK_SIZE_X 16-256 (5 powers of 2),
-- BLOCK_SIZE_Y 1-16 (5), TILE_SIZE_X/Y 1, 2, 4, TEMPORAL_TILING_FACTOR 1, 2,
-- 4, 8 with LOOP_UNROLL_FACTOR_T dividing it, SH_POWER 0/1, BLOCKS_PER_SM 0/1,
-- and the CAFF file's constraints (32 to 1024 threads, shared memory within 48
-- KiB a block and 100 KiB an SM): 5,486 configurations.
-- Two changes: BAT's file sizes the input and output by the block
-- (input_width BLOCK_SIZE_X + 2 MAX_TFACTOR, output_width BLOCK_SIZE_X), so
-- that only the first block reads and writes the grid; here they are the
-- grid's (grid_width, as in Kernel Tuner's hotspot it comes from). And as a
-- launch computes TEMPORAL_TILING_FACTOR time steps, every configuration
-- computes the same 8 steps (8 / TEMPORAL_TILING_FACTOR launches, a launcher):
-- the time is that of 8 steps, whatever the tiling.
local kt = require "ktlua"
local lib = require "record.lib"

return {hotspot = function(tuner, opt)
  local n, steps, pad = opt.n or 4096, 8, 10 -- pad: MAX_TFACTOR
  local src = lib.read(opt.bat .. "/hotspot/hotspot_kernel.cu")
  local fixes = 0
  for name, by in pairs{input_width = "BLOCK_SIZE_X", input_height = "BLOCK_SIZE_Y",
                        output_width = "BLOCK_SIZE_X", output_height = "BLOCK_SIZE_Y"} do
    local grid = by == "BLOCK_SIZE_X" and "grid_width" or "grid_height"
    local fixed
    src, fixed = src:gsub("(#define " .. name .. " %(?)" .. by, "%1" .. grid)
    fixes = fixes + fixed
  end
  -- the inputs: (n + 2 pad)^2, and pad rows and a point more, as the kernel's first point is
  -- (pad - TEMPORAL_TILING_FACTOR) rows and points in and it reads as far past the end
  local side = n + 2 * pad
  local len = side * side + pad * (side + 1)
  local k = tuner:kernel{source = src, name = "calculate_temp", options = "-std=c++11",
    prelude = ("#define grid_width %d\n#define grid_height %d\n"):format(n, n),
    global = {n, n}, group = {1, 1},
    args = {kt.array("float", len):random(1):input(), kt.array("float", len):random(2, 300, 350):input(),
      kt.array("float", n * n):output(), kt.float(0.1), kt.float(0.1), kt.float(3.0517578579),
      kt.float(21.845333099365234)}}
  k:param("BLOCK_SIZE_X", {16, 32, 64, 128, 256}, {group_x = "mul"})
  k:param("BLOCK_SIZE_Y", {1, 2, 4, 8, 16}, {group_y = "mul"})
  k:param("BLOCK_SIZE_Z", {1})
  k:param("TILE_SIZE_X", {1, 2, 4}, {global_x = "div"})
  k:param("TILE_SIZE_Y", {1, 2, 4}, {global_y = "div"})
  k:param("TEMPORAL_TILING_FACTOR", {1, 2, 4, 8})
  k:param("MAX_TFACTOR", {pad})
  k:param("LOOP_UNROLL_FACTOR_T", {1, 2, 4, 8})
  k:param("SH_POWER", {0, 1})
  k:param("BLOCKS_PER_SM", {0, 1})
  k:constraint("BLOCK_SIZE_X * BLOCK_SIZE_Y >= 32 and BLOCK_SIZE_X * BLOCK_SIZE_Y <= 1024")
  k:constraint("TEMPORAL_TILING_FACTOR % LOOP_UNROLL_FACTOR_T == 0")
  local smem = "(BLOCK_SIZE_X * TILE_SIZE_X + TEMPORAL_TILING_FACTOR * 2) * " ..
    "(BLOCK_SIZE_Y * TILE_SIZE_Y + TEMPORAL_TILING_FACTOR * 2) * (2 + SH_POWER) * 4"
  k:constraint(smem .. " <= 49152")
  k:constraint("BLOCKS_PER_SM == 0 or " .. smem .. " * BLOCKS_PER_SM <= 102400")
  k:launcher(function(run, cfg)
    for _ = 1, steps // cfg.TEMPORAL_TILING_FACTOR do run:launch(k) end
  end)
  assert(fixes == 4, "hotspot_kernel.cu: its input and output sizes are not those this was written for")
  return k, {n, n}
end}
