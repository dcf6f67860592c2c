-- bench/searchers/record/md5hash.lua: BAT's MD5Hash (bat/benchmarks/MD5Hash/
-- md5hash_kernel.h, CUDA: a search of the 10^7 keys of 7 bytes of 10 values
-- for a digest) at BAT's size, on a sub-range of its CAFF space (165,888
-- configurations): BLOCK_SIZE 64-1024 by 64 (16 of the CAFF's 32 values),
-- ROUND_STYLE, INLINE_1, INLINE_2, UNROLL_LOOP_1 and WORK_PER_THREAD_FACTOR
-- as the CAFF file has them, UNROLL_LOOP_2 and UNROLL_LOOP_3 at the CAFF's
-- defaults (8 and 4: they unroll the copies of a key found, once a search):
-- 6,912 configurations. What differs from the CAFF file: foundKey is the
-- kernel's `unsigned char *` (the CAFF file says int8, which ktlua run passes as
-- 8 chars alike; BAT's own runner gives an int vector); the CAFF's dynamic shared
-- memory (4096 bytes) is left out, as the kernel declares none.
local kt = require "ktlua"

return {md5hash = function(tuner, opt)
  local keys = 1000000 -- BAT's dataSize: a thread searches WORK_PER_THREAD_FACTOR x 10 keys
  local k = tuner:kernel{file = opt.bat .. "/MD5Hash/md5hash_kernel.h", name = "FindKeyWithDigest_Kernel",
    options = "-std=c++11", notation = "cuda", global = 1, group = 1,
    args = {kt.uint(2745829788), kt.uint(1540754381), kt.uint(615701928), kt.uint(1640371132),
      kt.int(10 * keys), kt.int(7), kt.int(10), kt.array("int", 1):output(), kt.array("uchar", 8):output(),
      kt.array("uint", 4):output()}}
  local bs = {}
  for v = 64, 1024, 64 do bs[#bs + 1] = v end
  k:param("BLOCK_SIZE", bs, {group_x = "mul"})
  k:param("ROUND_STYLE", {0, 1})
  k:param("INLINE_1", {0, 1, 2})
  k:param("INLINE_2", {0, 1, 2})
  k:param("UNROLL_LOOP_1", {1, 2, 4, 8})
  k:param("UNROLL_LOOP_2", {8})
  k:param("UNROLL_LOOP_3", {4})
  k:param("WORK_PER_THREAD_FACTOR", {1, 2, 3, 4, 5, 6})
  k:modifier("global_x", ("(%d // BLOCK_SIZE // WORK_PER_THREAD_FACTOR) + 1"):format(keys)) -- blocks, as BAT's
  return k, {keys}
end}
