-- The ktlua executable and the module loaded by plain Lua.
local kt = require "ktlua"
local shell = require "spec.support.shell"
local ktlua, run = shell.ktlua, shell.run

describe("the ktlua executable", function()
  it("prints help and version", function()
    local out, code = run(ktlua .. " --help")
    assert.are.equal(0, code)
    assert.matches("usage: ktlua %[options%] %[script.lua %[args...%]%]", out)
    assert.matches("%-%-devices", out)
    out = run(ktlua .. " --version")
    assert.matches("^ktlua %d+%.%d+%.%d+ %(Lua 5%.4", out)
  end)

  it("lists devices", function()
    local out, code = run(ktlua .. " --devices")
    assert.are.equal(0, code)
    assert.matches("opencl:0:0  .-%(cpu, ", out)
    assert.matches("max work%-group%s+%d+", out)
    assert.matches("local memory%s+[%d.]+ [KM]iB", out)
    local listed = {} -- every extension, whole, in lines under 100 columns
    for name in out:match("extensions%s+%d+:(.-)\n%S"):gmatch("%S+") do listed[#listed + 1] = name end
    local all = {}
    for name in kt.device("opencl:0:0").extensions:gmatch("%S+") do all[#all + 1] = name end
    assert.are.same(all, listed)
    for line in out:gmatch("[^\n]+") do
      if not line:find("^not available") then assert.is_true(#line <= 100, line) end
    end
  end)

  it("runs a script with its arguments", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write("local kt = require 'ktlua'\nprint(arg[0] ~= nil, arg[1], arg[2], select('#', ...), kt.version)\n")
    f:close()
    local out, code = run(ktlua .. " " .. path .. " one two")
    os.remove(path)
    assert.are.equal(0, code)
    assert.matches("^true\tone\ttwo\t2\t%d+%.%d+%.%d+", out)
  end)

  it("reports a script's error with its file and line and fails", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write("local x = nil\nprint(x.field)\n")
    f:close()
    local out, code = run(ktlua .. " " .. path)
    os.remove(path)
    assert.are.equal(1, code)
    assert.matches("^ktlua: " .. path:gsub("%p", "%%%0") .. ":2: attempt to index a nil value", out)
  end)

  it("evaluates code and answers at the prompt", function()
    local out = run(ktlua .. " -e 'print(kt.array(\"int\", 3).length)'")
    assert.matches("^3", out)
    out = run("printf 'x = 2\\nx * 21\\nfor i = 1, 2 do\\nprint(i)\\nend\\n' | " .. ktlua)
    assert.matches("^42\n1\n2\n", out)
    out = run("printf 'kt.array(\"int\", 2):totable()\\n' | " .. ktlua)
    assert.matches("^{0, 0}", out)
  end)

  it("rejects unknown options", function()
    local out, code = run(ktlua .. " --frobnicate")
    assert.are.equal(1, code)
    assert.matches("unknown option '%-%-frobnicate'", out)
  end)
end)

describe("the module", function()
  it("loads into plain lua5.4", function()
    local out, code = run("lua5.4 -e \"package.cpath = 'build/?.so;' .. package.cpath; "
      .. "local kt = require 'ktlua'; print(kt.version, #kt.array('float', 5), require('ktlua.report') ~= nil)\"")
    assert.are.equal(0, code)
    assert.matches("^%d+%.%d+%.%d+\t5\ttrue", out)
  end)

  -- Each stdlib module (and the two the C side preloads) required first,
  -- before "ktlua", in a fresh process by prefix (a command that runs the
  -- script first_script writes, with the module's name).
  local function stdlib_names()
    local names = { "ktlua.spawn", "ktlua.split_run" }
    for file in shell.must("ls stdlib/ktlua"):gmatch("([%w_]+)%.lua\n") do
      names[#names + 1] = "ktlua." .. file
    end
    return names
  end
  local function first_script()
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write("local m = require(arg[1]); io.write(type(m), ' ', type(require('ktlua').version))\n")
    f:close()
    return script
  end
  local function required_first(prefix, script)
    local says = {}
    for _, name in ipairs(stdlib_names()) do
      local out, code = run(("%s %s %s"):format(prefix, script, name))
      assert.are.equal(0, code, name .. ": " .. out)
      assert.matches("^%a+ string$", out, 1, name)
      says[name] = out
    end
    return says
  end

  it("lets every stdlib module be required first, from lua5.4 and from the executable", function()
    local script = first_script()
    finally(function() os.remove(script) end)
    assert.is_true(#stdlib_names() >= 20)
    local plain = required_first("lua5.4 -e \"package.cpath = 'build/?.so;' .. package.cpath\"", script)
    assert.are.same(plain, required_first(ktlua, script))
  end)

  it("installs the executable, the module and the stdlib with make install", function()
    local sources = io.open("Makefile") -- not in a bundle
    if sources then sources:close() end
    if not sources or os.getenv("KTLUA_SANITIZED") then
      return pending("needs the sources; the plain run installs once")
    end
    local prefix = os.tmpname()
    os.remove(prefix)
    local out, code = run(("env -u MAKEFLAGS -u MAKELEVEL make -s install PREFIX=%s"):format(prefix))
    assert.are.equal(0, code, out)
    out, code = run(("LUA_CPATH='%s/lib/lua/5.4/?.so' LUA_PATH='%s/share/lua/5.4/?.lua' lua5.4 -e "
      .. "\"local kt = require 'ktlua'; print(#kt.array('int', 3), package.searchpath('ktlua.report', package.path))\"")
      :format(prefix, prefix))
    assert.are.equal(0, code, out)
    assert.are.equal(("3\t%s/share/lua/5.4/ktlua/report.lua\n"):format(prefix), out)
    local script = first_script()
    required_first(("LUA_CPATH='%s/lib/lua/5.4/?.so' LUA_PATH='%s/share/lua/5.4/?.lua' lua5.4")
      :format(prefix, prefix), script)
    os.remove(script)
    out, code = run(prefix .. "/bin/ktlua -e 'print(#kt.devices() > 0)'")
    assert.are.equal(0, code, out)
    assert.are.equal("true\n", out)
    os.execute("rm -rf " .. prefix)
  end)
end)
