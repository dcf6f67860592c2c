-- bench/searchers/record/histogram.lua: the space of record/histogram.cu, a
-- 256-bin histogram of the bytes of n uints (2^25, 128 MiB; 2^18 for a CPU),
-- the counting half of a radix sort's pass (as examples/kernels/radix_sort.*
-- count digits), one source for CUDA and OpenCL: block_size_x 32-1024 (6
-- values), vector_width 1, 2, 4, work_per_thread 1-32 (6), contiguous (only
-- with more than one vector a thread), use_local, copies 1-8 and padding (only
-- in shared memory; padding only with copies): 1,584 configurations. With
-- opt.check the bins are checked against Lua's count.
local kt = require "ktlua"
local lib = require "record.lib"

return {histogram = function(tuner, opt)
  local n = lib.size(opt, 1 << 25, 1 << 18)
  local keys = kt.array("uint", n):random(5)
  local bins = kt.array("uint", 256)
  local k = tuner:kernel{file = lib.here .. "/histogram.cu", prelude = lib.portable, name = "histogram",
    global = n, group = 1, args = {bins:inout(), keys:input()}}
  k:param("block_size_x", {32, 64, 128, 256, 512, 1024}, {group_x = "mul"})
  k:param("vector_width", {1, 2, 4}, {global_x = "div"})
  k:param("work_per_thread", {1, 2, 4, 8, 16, 32}, {global_x = "div"})
  k:param("contiguous", {0, 1})
  k:param("use_local", {0, 1})
  k:param("copies", {1, 2, 4, 8})
  k:param("padding", {0, 1})
  k:constraint({"work_per_thread", "contiguous"}, function(w, c) return w > 1 or c == 0 end)
  k:constraint({"use_local", "copies", "padding"}, function(l, c, p) return (l == 1 or c == 1) and (c > 1 or p == 0) end)
  if opt.check then
    k:reference(bins, function(ref)
      local count = {}
      for b = 0, 255 do count[b] = 0 end
      for i = 0, n - 1 do
        local key = keys[i]
        for _ = 1, 4 do
          count[key & 255] = count[key & 255] + 1
          key = key >> 8
        end
      end
      for b = 0, 255 do ref[b] = count[b] end
    end)
  end
  return k, {n}
end}
