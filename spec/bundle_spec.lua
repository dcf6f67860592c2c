-- make bundle: a folder that runs ktlua and its specs with nothing from
-- the system's Lua (the GPU machines have none).
local run = require("spec.support.shell").run

describe("make bundle", function()
  local dir = os.tmpname()
  os.remove(dir)
  local bundle = dir .. "/bundle"
  -- Only the bundle's own modules and libraries (and Lua's default ./?.lua),
  -- as on a machine without Lua.
  local isolated = ("env -i PATH=/usr/bin:/bin LUA_PATH='%s/share/lua/?.lua;%s/share/lua/?/init.lua;./?.lua' "
    .. "LUA_CPATH='%s/lib/lua/?.so' LD_LIBRARY_PATH=%s/lib "):format(bundle, bundle, bundle, bundle)

  setup(function()
    local out, code = run("env -u MAKEFLAGS -u MAKELEVEL make -s bundle BUNDLE=" .. bundle)
    assert(code == 0, out)
  end)

  teardown(function() os.execute("rm -rf " .. dir) end)

  it("holds the launcher, the executable, busted, examples, specs and gpu-check.sh", function()
    for _, path in ipairs({ "ktlua", "bin/ktlua", "bin/busted", "lib/libOpenCL.so.1", "lib/lua/lfs.so",
                            "lib/lua/system/core.so", "lib/lua/term/core.so", "share/lua/busted/runner.lua",
                            "share/lua/luassert/init.lua", "share/lua/pl/path.lua", "stdlib/ktlua/report.lua",
                            "examples/tune_vectoradd.lua", "examples/kernels/vadd.cu",
                            "spec/cuda_spec.lua", "spec/support/output.lua", "gpu-check.sh" }) do
      assert.is_not_nil(io.open(bundle .. "/" .. path), path)
    end
    local size = tonumber((run("du -sk " .. bundle)):match("^(%d+)"))
    assert.is_true(size < 60 * 1024, size .. " KiB")
  end)

  it("runs ktlua from a clean environment through the launcher", function()
    local out, code = run("env -i PATH=/usr/bin:/bin " .. bundle .. "/ktlua -e 'print(package.path)'")
    assert.are.equal(0, code, out)
    local own = bundle .. "/share/lua/?.lua;" .. bundle .. "/share/lua/?/init.lua;"
    assert.are.equal(own, out:sub(1, #own))
    out, code = run("env -i PATH=/usr/bin:/bin " .. bundle .. "/ktlua --devices")
    assert.are.equal(0, code, out)
    assert.matches("opencl:0:0  ", out, 1, true)
  end)

  it("runs busted with the bundle's modules alone", function()
    local out, code = run("cd " .. bundle .. " && " .. isolated .. "bin/ktlua bin/busted "
      .. "-o spec/support/output.lua spec/cuda_spec.lua")
    assert.are.equal(0, code, out)
    assert.matches("%d+ passed, 0 failed", out)
  end)
end)
