-- bench/searchers/record/expdist.lua: BAT's expdist (bat/benchmarks/expdist/
-- expdist.cu, CUDA, double precision: the Bhattacharyya cross term of two
-- sets of 16,384 2-D points, each block's part written out) on BAT's space
-- (expdist.py: block_size_x 32-1024, tile_size_x 1-8, use_shared_mem 0/1; 96
-- configurations) made wider with the kernel's other parameters, as Kernel
-- Tuner's expdist tunes them: block_size_y 1-8 (up to 1024 threads),
-- tile_size_y 1 or 2, and use_column (the blocks of a column walk over the
-- second set; n_y_blocks 16, 64 or 256 of them; use_shared_mem 2, double
-- buffered, only there): 3,168 configurations. BAT's file includes
-- <cub/cub.cuh> for cub::BlockReduce; record/cub_block_reduce.h stands in for
-- it (NVRTC has no toolkit headers). BAT's 32,768 points are 4 times the work.
local kt = require "ktlua"
local lib = require "record.lib"

return {expdist = function(tuner, opt)
  local n = opt.n or 16384
  local src, found = lib.read(opt.bat .. "/expdist/expdist.cu"):gsub("#include <cub/cub.cuh>", "")
  assert(found == 1, "expdist.cu: no #include <cub/cub.cuh> to stand in for")
  local a = kt.array("double", 2 * n):random(1, -1, 1)
  local b = a:copy()
  local noise = kt.array("double", 2 * n):random(2, -1e-5, 1e-5)
  for i = 0, 2 * n - 1 do b[i] = b[i] + noise[i] end
  local max_blocks = (n // 32) * n -- blocks of 32 x 1 threads, tiles of 1
  local k = tuner:kernel{source = src, prelude = lib.read(lib.here .. "/cub_block_reduce.h"), name = "ExpDist",
    global = {n, n}, group = {1, 1}, round_global = true,
    args = {a:input(), b:input(), kt.int(n), kt.int(n), kt.array("double", n):random(3, 0.001, 0.02):input(),
      kt.array("double", n):random(4, 0.001, 0.02):input(), kt.array("double", max_blocks):output()}}
  k:param("block_size_x", {1024, 512, 256, 128, 64, 32}, {group_x = "mul"})
  k:param("block_size_y", {1, 2, 4, 8}, {group_y = "mul"})
  k:param("tile_size_x", {1, 2, 3, 4, 5, 6, 7, 8}, {global_x = "div_ceil"})
  k:param("tile_size_y", {1, 2})
  k:param("use_shared_mem", {0, 1, 2})
  k:param("loop_unroll_factor_x", {1})
  k:param("loop_unroll_factor_y", {1})
  k:param("use_column", {0, 1})
  k:param("n_y_blocks", {1, 16, 64, 256})
  -- y: a block row per tile of rows, or n_y_blocks of them with use_column
  k:modifier("global_y", ("n_y_blocks * block_size_y if use_column else (%d + block_size_y * tile_size_y - 1) //" ..
    " (block_size_y * tile_size_y) * block_size_y"):format(n))
  k:constraint({"block_size_x", "block_size_y"}, lib.threads(32, 1024))
  k:constraint("not (use_column == 0 and n_y_blocks > 1) and not (use_column == 1 and n_y_blocks == 1)")
  k:constraint("not (use_column == 0 and use_shared_mem == 2)")
  return k, {n, n}
end}
