-- bench/searchers/record/dedisp.lua: BAT's dedispersion kernel
-- (bat/benchmarks/dedisp/dedispersion.cu, CUDA) on 8192 samples, 512 DMs, 256
-- channels of the same band; a sub-range of BAT's space, 6,762 configurations.
local kt = require "ktlua"
local lib = require "record.lib"

return {dedisp = function(tuner, opt)
  local samples, dms, channels = 8192, 512, 256
  local min_freq, bw, dt = 1425.0, 0.1953125 * 1536 / channels, 0.00004096
  local max_freq = min_freq + (channels - 1) * bw
  local shifts = kt.array("float", channels)
  for ch = 0, channels - 1 do
    local f = min_freq + ch * bw
    shifts[ch] = ch == channels - 1 and 0 or 4148.808 * (1 / f ^ 2 - 1 / max_freq ^ 2) / dt
  end
  local max_shift = math.ceil((dms - 1) * 0.02 * shifts[0]) + 2
  local src = lib.read(opt.bat .. "/dedisp/dedispersion.cu"):gsub('#include "dedispersion.h"', "")
    :gsub("#pragma unroll loop_unroll_factor_channel",
      "\n#if loop_unroll_factor_channel > 0\n#pragma unroll loop_unroll_factor_channel\n#endif\n")
  local prelude = ("#define nr_dms %d\n#define nr_samples %d\n#define nr_channels %d\n#define max_shift %d\n" ..
    "#define nr_samples_per_channel (nr_samples+max_shift)\n#define dm_first 0.0f\n#define dm_step 0.02f\n")
    :format(dms, samples, channels, max_shift)
  local input = kt.array("uchar", (samples + max_shift) * channels):random(3, 0, 255)
  local output = kt.array("float", dms * samples)
  local k = tuner:kernel{source = src, prelude = prelude, name = "dedispersion_kernel", global = {samples, dms},
    group = {1, 1}, round_global = true, args = {input:input(), output:output(), shifts:input()}}
  k:param("block_size_x", {1, 2, 4, 8, 16, 32, 64, 128}, {group_x = "mul"})
  k:param("block_size_y", {4, 8, 16, 32}, {group_y = "mul"})
  k:param("block_size_z", {1})
  k:param("tile_size_x", {1, 2, 4, 8}, {global_x = "div"})
  k:param("tile_size_y", {1, 2, 4, 8}, {global_y = "div"})
  k:param("tile_stride_x", {0, 1})
  k:param("tile_stride_y", {0, 1})
  k:param("loop_unroll_factor_channel", {0, 4})
  k:param("blocks_per_sm", {0, 1, 4})
  k:constraint({"block_size_x", "block_size_y"}, lib.threads(32, 1024))
  k:constraint({"tile_size_x", "tile_stride_x"}, function(t, s) return t > 1 or s == 0 end)
  k:constraint({"tile_size_y", "tile_stride_y"}, function(t, s) return t > 1 or s == 0 end)
  return k, {samples, dms}
end}
