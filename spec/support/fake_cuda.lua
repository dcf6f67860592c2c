-- The stand-in CUDA driver (spec/support/fake_cuda.c), for specs that run
-- ktlua's CUDA paths on a machine without a GPU.
local kt = require "ktlua"
local shell = require "spec.support.shell"

local fake_cuda = {}

-- nil where it can stand in here, else why not.
function fake_cuda.missing()
  local _, why = kt.devices()
  local built = not why:find("ktlua was built without the CUDA headers", 1, true)
  local nvrtc_ok = pcall(kt.cuda_compile, { source = "" })
  local _, no_cc = shell.run("command -v cc")
  if built and nvrtc_ok and no_cc == 0 then return nil end
  return "needs the CUDA headers at build time, NVRTC and a C compiler"
end

-- Makes dir and builds the driver there as dir/libcuda.so.1.
function fake_cuda.build(dir)
  shell.must(("mkdir -p %s && cc -std=c11 -shared -fPIC -o %s/libcuda.so.1 spec/support/fake_cuda.c")
    :format(dir, dir))
end

-- Makes dir and builds the stand-in NVML there as dir/libnvidia-ml.so.1
-- (spec/support/fake_nvml.c: energy and power for the stand-in driver's GPU).
function fake_cuda.build_nvml(dir)
  shell.must(("mkdir -p %s && cc -std=c11 -shared -fPIC -o %s/libnvidia-ml.so.1 spec/support/fake_nvml.c")
    :format(dir, dir))
end

-- Builds the stand-in CUPTI (spec/support/fake_cupti.c) as dir/libcupti.so against the
-- toolkit's CUPTI headers; nil where it builds, else why not.
function fake_cuda.build_cupti(dir)
  local inc = (os.getenv("CUDA_HOME") or "/usr/local/cuda") .. "/include"
  local out, code = shell.run(("mkdir -p %s && cc -std=c11 -shared -fPIC -I%s -Icore/device/cupti_shim "
    .. "-o %s/libcupti.so spec/support/fake_cupti.c"):format(dir, inc, dir))
  if code ~= 0 then return "the stand-in CUPTI does not build (no CUPTI headers?): " .. out end
  return nil
end

return fake_cuda
