-- A tuning's progress: on a terminal (a pty from script(1)), one line
-- redrawn in place, on by default for `ktlua script.lua`; elsewhere a line
-- per configuration with progress = true, and nothing by default.
require "ktlua" -- which preloads ktlua.report
local report = require "ktlua.report"
local shell = require "spec.support.shell"
local ktlua, run = shell.ktlua, shell.run

local SCRIPT = [[
local kt = require "ktlua"
local n = 1024
local a, c = kt.array("float", n):fill(1), kt.array("float", n)
local tuner = kt.tuner("cpu")
local k = tuner:kernel{ name = "twice", global = n, group = 1, args = { a:input(), c:output() },
  source = "__kernel void twice(__global const float *a, __global float *c) "
        .. "{ int i = get_global_id(0); c[i] = 2.0f * a[i]; if (WG == 64) c[i] = 0; }" }
k:param("WG", { 16, 32, 64, 128 }, { group_x = "mul" })
k:param("U", { 1, 2 })
k:reference(c, function(ref) for i = 0, n - 1 do ref[i] = 2 * a[i] end end)
local progress
if arg[1] == "off" then progress = false elseif arg[1] == "on" then progress = true end
local results = tuner:tune(k, { search = "exhaustive", repeats = 1, progress = progress })
print("done", #results)
]]

local path

-- Where the machine is busy enough that ktlua gives PoCL fewer threads
-- (busy_machine_spec), a line says so first: not what these tests look at.
local function unbusy(out)
  return (out:gsub("^\r?ktlua: the machine is busy[^\n]*\n", ""))
end

local function on_terminal(args)
  local out, code = run(("script -qec %q /dev/null"):format(ktlua .. " " .. path .. " " .. args))
  return unbusy(out), code
end

describe("progress", function()
  setup(function()
    path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write(SCRIPT)
    f:close()
  end)
  teardown(function() os.remove(path) end)

  it("is one line redrawn in place on a terminal, by default", function()
    local out, code = on_terminal("")
    assert.are.equal(0, code, out)
    assert.matches("^\r1/8  12%%  [%d.]+s elapsed, [%d.]+s left  ok 1  best [%d.]+ ms WG=16 U=1\27%[K", out)
    -- The last redraw has every configuration; the line ends with the tuning.
    assert.matches("\r8/8 100%%  [%d.]+s elapsed, 0%.0s left  ok 6, invalid_output 2  best [%d.]+ ms "
                   .. "WG=%d+ U=%d\27%[K\r\ndone\t8\r\n$", out)
    assert.is_nil(out:find("[1]", 1, true))
  end)

  it("is silenced by progress = false", function()
    local out, code = on_terminal("off")
    assert.are.equal(0, code, out)
    assert.are.equal("done\t8\r\n", out)
  end)

  it("is a line per configuration with progress = true elsewhere, and nothing by default", function()
    local out, code = run(ktlua .. " " .. path .. " on")
    out = unbusy(out)
    assert.are.equal(0, code, out)
    local lines = {}
    for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
    assert.are.equal(9, #lines)
    assert.matches("^%[1%] WG=16 U=1  ok  [%d.]+ ms  %(best [%d.]+ ms%)$", lines[1])
    assert.matches("^%[5%] WG=64 U=1  invalid_output  %(best [%d.]+ ms%)$", lines[5])
    assert.are.equal("done\t8", lines[9])
    out = run(ktlua .. " " .. path)
    assert.are.equal("done\t8\n", out)
  end)

  it("counts against the budget the stop conditions leave", function()
    local written = {}
    local out = { write = function(_, ...) for _, s in ipairs{...} do written[#written + 1] = s end end,
                  flush = function() end }
    local results = { params = { { name = "WG", values = { 16, 32 } } },
                      summary = function() return { space_valid = 20 } end }
    local meter = report.meter({ fraction = 0.25, count = 10 }, true, out)
    meter({ status = "compile_failed", config = { WG = 16 } }, results)
    meter({ status = "ok", time_ms = 1.5, config = { WG = 32 } }, results)
    meter()
    local text = table.concat(written)
    assert.matches("^\r1/5  20%%  [%d.]+s elapsed, [%d.]+s left  compile_failed 1\27%[K", text)
    assert.matches("\r2/5  40%%  [%d.]+s elapsed, [%d.]+s left  compile_failed 1, ok 1  best 1%.5000? ms "
                   .. "WG=32\27%[K\n$", text)
  end)
end)
