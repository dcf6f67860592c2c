-- bench/searchers/record/fft.lua: BAT's FFT (bat/benchmarks/others/FFT/fft.cu,
-- CUDA: FFT512_device, 512-point FFTs of complex floats, a block of 64
-- threads each) on 65,536 FFTs (256 MiB; BAT's 512 take microseconds). BAT's
-- CAFF space has 21 parameters and 806,215,680,000 configurations; 9 of them
-- name functions FFT512_device never calls (IFFT4, IFFT8, ITWIDDLE_8 and
-- TRANSPOSE_4X4 inlining; the 16-point and 4x4 loads and stores' and
-- ITWIDDLE_8's unrolling): they stay at the CAFF's defaults (1). Of the other
-- 12, this is a sub-range: the five FFT2, FFT4, FFT8, TWIDDLE_8 and
-- TRANSPOSE_8 inlinings 0 (__noinline__) or 2 (__forceinline__; 1, the
-- compiler's choice, left out) and the seven 8-point loops' unrolling 1 or 8
-- (none or all; 2 and 4 left out): 4,096 configurations. PRECISION 32 (the
-- CAFF's BenchmarkConfig; fft.cu reads it, the CAFF file does not define it,
-- so that `ktlua run` would compute in double on float data). fft.cu's
-- #include <math.h> is ktlua's built-in one under NVRTC.
local kt = require "ktlua"

return {fft = function(tuner, opt)
  local ffts = opt.n or 65536
  local k = tuner:kernel{file = opt.bat .. "/others/FFT/fft.cu", name = "FFT512_device", options = "-std=c++11",
    notation = "cuda", global = ffts, group = 64,
    args = {kt.array("float", 2 * 512 * ffts):random(1):inout()}}
  k:param("PRECISION", {32})
  for _, p in ipairs{"FFT2_INLINE", "FFT4_INLINE", "FFT8_INLINE", "TWIDDLE_8_INLINE", "TRANSPOSE_8_INLINE"} do
    k:param(p, {0, 2})
  end
  for _, p in ipairs{"LOAD_8", "LOADX_8", "LOADY_8", "STORE_8", "STOREX_8", "STOREY_8", "TWIDDLE_8"} do
    k:param("LOOP_UNROLL_" .. p, {1, 8})
  end
  for _, p in ipairs{"IFFT4_INLINE", "IFFT8_INLINE", "ITWIDDLE_8_INLINE", "TRANSPOSE_4X4_INLINE",
                     "LOOP_UNROLL_LOADX_16", "LOOP_UNROLL_LOADY_16", "LOOP_UNROLL_STOREX_4X4",
                     "LOOP_UNROLL_STOREY_4X4", "LOOP_UNROLL_ITWIDDLE_8"} do
    k:param(p, {1})
  end
  return k, {512, ffts}
end}
