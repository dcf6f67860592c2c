-- A ktlua prompt on a real terminal: a detached tmux session, for specs
-- that type at it. Each spec file gets a tmux server of its own (tmux's
-- default one is shared with whatever else runs tmux on the machine, which
-- may kill it between two commands).
local shell = require "spec.support.shell"

local tmux = {}

tmux.available = shell.run("command -v tmux") ~= ""

-- Key names that are pressed; anything else given to keys() is typed.
local KEYS = { Tab = true, Enter = true, Up = true, Home = true, ["C-u"] = true, ["C-d"] = true }

-- A server named after tag: server.cmd (the tmux command for it),
-- server.session(name, home[, width]) and server.kill().
function tmux.server(tag)
  local server = { cmd = ("tmux -L %s_%d_%d"):format(tag, os.time(), math.random(1, 1 << 30)) }
  local TMUX = server.cmd

  -- ktlua in a new session with home as HOME.
  function server.session(name, home, width)
    os.execute((TMUX .. " kill-session -t %s 2>/dev/null"):format(name))
    assert(os.execute((TMUX .. " new-session -d -s %s -x %d -y 40 'HOME=%s %s'")
      :format(name, width or 120, home, shell.ktlua)))
    local s = {}
    function s.keys(...)
      for _, k in ipairs({ ... }) do
        assert(os.execute((TMUX .. " send-keys -t %s %s %q"):format(name, KEYS[k] and "" or "-l", k)))
      end
    end
    function s.type(text) s.keys(text) end
    function s.press(key) assert(os.execute((TMUX .. " send-keys -t %s %s"):format(name, key))) end
    -- The screen once it shows pattern; an error, with the screen, if it has not within 120 s
    -- (a busy machine). tmux drops the spaces that end a line.
    function s.wait(pattern)
      local screen
      for _ = 1, 1200 do
        screen = shell.run((TMUX .. " capture-pane -p -t %s"):format(name))
        if screen:find(pattern) then return screen end
        os.execute("sleep 0.1")
      end
      error(("the screen did not show %q within 120 s; it shows:\n%s"):format(pattern, screen), 2)
    end
    function s.close() os.execute((TMUX .. " kill-session -t %s 2>/dev/null"):format(name)) end
    return s
  end

  function server.kill() os.execute(TMUX .. " kill-server 2>/dev/null") end
  return server
end

return tmux
