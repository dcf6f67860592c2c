-- The prompt: through a real terminal (tmux) for line editing, history and
-- Tab, and through a pipe for plain lines.
local shell = require "spec.support.shell"
local files = require "spec.support.files"

local tmux = require "spec.support.tmux"
local have_tmux = tmux.available
local server = tmux.server("ktlua_spec")
local TMUX = server.cmd
local session = server.session

describe("the prompt on a terminal", function()
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

  it("completes names, fields and methods with Tab", function()
    local s = session("ktlua_tab", home)
    s.wait("Tab completes")
    s.keys("kt.vers", "Tab", "Enter")
    local screen = s.wait('"%d+%.%d+%.%d+"')
    assert.matches('ktlua> kt%.version\n"%d+%.%d+%.%d+"', screen)
    s.keys('tu = kt.tuner("cpu")', "Enter")
    s.wait('ktlua> tu = kt%.tuner%("cpu"%)\nktlua>')
    s.keys("tu:tu", "Tab", "Tab")
    screen = s.wait("tu:tune_sizes")
    assert.matches("tu:tune +tu:tune_sizes", screen)
    s.keys("C-u", "results = nil; for i = 1, 2 do", "Enter", "print(i * 10)", "Enter", "end", "Enter")
    screen = s.wait("\n20\n")
    assert.matches("\n10\n20\n", screen)
    s.close()
  end)

  it("edits lines and keeps their history between sessions, bounded", function()
    local lines = {}
    for i = 1, 1100 do lines[i] = ("return %d"):format(i) end
    files.write(home .. "/.ktlua_history", table.concat(lines, "\n") .. "\n")
    local s = session("ktlua_history", home)
    s.wait("Tab completes")
    s.keys("1 + 41", "Enter")
    s.wait("\n42\n")
    s.keys("Up", "Enter") -- the line again, not an escape sequence
    local screen = s.wait("\n42\n.*\n42\n")
    assert.matches("ktlua> 1 %+ 41\n42\nktlua> 1 %+ 41\n42\n", screen)
    assert.is_nil(screen:find("bad binary format", 1, true))
    s.keys("Up", "Home", "-", "Enter") -- line editing: the last line, made "-1 + 41"
    assert.matches("\n40\n", s.wait("\n40\n"))
    s.keys("C-d")
    for _ = 1, 1200 do -- until ktlua has exited, having written its history
      if shell.run(TMUX .. " has-session -t ktlua_history 2>/dev/null; echo $?"):match("1") then break end
      os.execute("sleep 0.1")
    end
    s.close()
    local kept = files.lines(home .. "/.ktlua_history")
    assert.are.equal("-1 + 41", kept[#kept])
    assert.is_true(#kept <= 1000)
    local again = session("ktlua_again", home)
    again.wait("Tab completes")
    again.keys("Up")
    assert.matches("ktlua> %-1 %+ 41", again.wait("ktlua> %-1 %+ 41"))
    again.close()
  end)

  -- The lines typed are in the history file however ktlua ends: os.exit
  -- ends the process without returning from the prompt.
  it("keeps the history when os.exit() ends the prompt", function()
    for i, exit in ipairs { "os.exit()", "os.exit(3, true)" } do
      local s = session("ktlua_exit" .. i, home)
      s.wait("Tab completes")
      s.keys("x = 6 * " .. i, "Enter", exit, "Enter")
      for _ = 1, 1200 do -- until ktlua has exited
        if shell.run(TMUX .. " has-session -t ktlua_exit" .. i .. " 2>/dev/null; echo $?"):match("1") then
          break
        end
        os.execute("sleep 0.1")
      end
      s.close()
      local kept = files.lines(home .. "/.ktlua_history")
      assert.are.same({ "x = 6 * " .. i, exit }, { kept[#kept - 1], kept[#kept] })
    end
    assert.are.equal(4, #files.lines(home .. "/.ktlua_history"))
  end)
end)

describe("the prompt without a terminal", function()
  it("reads lines of any length as they come", function()
    local path = files.tmpname(".txt")
    local sum = {}
    for i = 1, 5000 do sum[i] = "1" end
    files.write(path, "return " .. table.concat(sum, "+") .. "\nx = 6\nx * 7\n")
    local out, code = shell.run(shell.ktlua .. " < " .. path)
    os.remove(path)
    assert.are.equal(0, code, out)
    assert.are.equal("5000\n42\n", out)
  end)
end)
