-- Tab at the prompt: fields of ktlua objects (t.device, a.length), and the
-- common part of ambiguous names inserted (kt.devi becomes kt.device).
local kt = require "ktlua"
local complete = require "ktlua.complete"
local shell = require "spec.support.shell"
local files = require "spec.support.files"

local function set(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

describe("ktlua.complete", function()
  it("offers the fields of ktlua objects after a dot, not after a colon", function()
    -- completion reads globals: busted runs specs in an environment of their own
    _G.tuner, _G.array = kt.tuner("cpu"), kt.array("float", 8)
    finally(function()
      _G.tuner:close()
      _G.tuner, _G.array = nil, nil
    end)
    local fields = set(complete("tuner."))
    for _, k in ipairs { "device", "isolated", "devices", "renewals", "tune", "kernel" } do
      assert.is_true(fields["tuner." .. k], k)
    end
    fields = set(complete("array."))
    for _, k in ipairs { "length", "type", "bytes", "fill" } do
      assert.is_true(fields["array." .. k], k)
    end
    assert.are.same({ "tuner.device", "tuner.devices" }, complete("tuner.dev"))
    assert.are.same({ "array.length" }, complete("array.le"))
    local methods = set(complete("array:"))
    assert.is_nil(methods["array:length"])
    assert.is_true(methods["array:fill"])
  end)

  it("offers only the module's public names: none of its internal ones", function()
    _G.kt = kt -- completion reads globals
    finally(function() _G.kt = nil end)
    local names = complete("kt.")
    local public = set(names)
    for _, name in ipairs(names) do
      assert.is_nil(name:find("^kt%._"), name) -- kt._expression: for ktlua's own modules
    end
    assert.is_nil(public["kt.MAX"]) -- ktlua.values' own limits
    assert.is_nil(public["kt.TRIAL"])
    for _, name in ipairs { "kt.array", "kt.tuner", "kt.divisors", "kt.t1_read", "kt.version" } do
      assert.is_true(public[name], name)
    end
    assert.are.same({}, complete("kt._"))
    assert.are.same({ "_G", "_VERSION" }, complete("_")) -- Lua's own globals stay
  end)

  it("lists, for every ktlua class, fields its objects answer", function()
    local t = kt.tuner("cpu")
    finally(function() t:close() end)
    local k = t:kernel { source = "__kernel void k(__global float *x) { x[0] = 1.0f; }", name = "k",
      global = { 1 } }
    local objects = {
      tuner = t, kernel = k, array = kt.array("float", 4), arg = kt.scalar("int", 3),
      type = kt.struct("pair", { { "a", "float" }, { "b", "int" } }),
    }
    for what, object in pairs(objects) do
      local listed = getmetatable(object).fields
      assert.is_table(listed, what)
      for _, name in ipairs(listed) do
        -- a field a kind of object lacks reads nil (an argument's symbol)
        assert.has_no.errors(function() return object[name] end, what .. "." .. name)
      end
    end
    assert.are.equal(4, objects.array.length)
    assert.are.equal("pair", objects.type.name)
    assert.matches("typedef struct pair", objects.type:declaration())
    assert.are.equal("scalar", objects.arg.kind)
  end)
end)

local tmux = require "spec.support.tmux"
local have_tmux = tmux.available
local server = tmux.server("ktlua_complete")
local TMUX = server.cmd
local function session(name, home) return server.session(name, home, 160) end

describe("Tab at the prompt", function()
  teardown(function() os.execute(TMUX .. " kill-server 2>/dev/null") end)
  if not have_tmux then
    pending("tmux is not installed (scripts/setup.sh installs it)")
    return
  end
  local home

  before_each(function()
    home = files.tmpname()
    assert(os.execute("mkdir -p " .. home))
  end)
  after_each(function() os.execute("rm -rf " .. home) end)

  it("completes the fields of ktlua objects", function()
    local s = session("ktlua_fields", home)
    finally(s.close)
    s.wait("Tab completes")
    s.type('a = kt.array("float", 8)')
    s.press("Enter")
    s.wait("ktlua> a = kt%.array%(\"float\", 8%)\nktlua>")
    s.type("a.len")
    s.press("Tab")
    s.press("Enter")
    assert.matches("ktlua> a%.length\n8\n", s.wait("ktlua> a%.length\n8\n"))
    s.type('tu = kt.tuner("cpu")')
    s.press("Enter")
    s.wait("ktlua> tu = kt%.tuner%(\"cpu\"%)\nktlua>")
    s.type("tu.isol")
    s.press("Tab")
    s.press("Enter")
    assert.matches("ktlua> tu%.isolated\n%a+\n", s.wait("ktlua> tu%.isolated\n%a+\n"))
  end)

  it("lists only the module's public names", function()
    local s = session("ktlua_public", home)
    finally(s.close)
    s.wait("Tab completes")
    s.type("kt.")
    s.press("Tab")
    s.press("Tab")
    local screen = s.wait("kt%.version")
    assert.matches("kt%.array ", screen)
    assert.is_nil(screen:find("kt._", 1, true), screen)
    assert.is_nil(screen:find("kt.MAX", 1, true), screen)
  end)

  it("inserts the part that ambiguous names share", function()
    local s = session("ktlua_common", home)
    finally(s.close)
    s.wait("Tab completes")
    s.type("type(kt.devi")
    s.press("Tab")
    s.press("Tab") -- nothing more to insert: the candidates are listed
    assert.matches("kt%.device +kt%.devices", s.wait("kt%.device +kt%.devices"))
    s.type("s)")
    s.press("Enter")
    local shown = 'ktlua> type%(kt%.devices%)\n"function"\n'
    assert.matches(shown, s.wait(shown))
  end)
end)
