-- Signals in specs, sent on events rather than after sleeps, so that a
-- busy machine changes nothing but how long a spec takes.
local signals = {}

local NUMBERS = { INT = 2, KILL = 9, TERM = 15 }

-- A shell command, run in the background ("&" is the caller's), that
-- sends the signal `name` to the process pid once that process catches it
-- (its handler is installed: the signal's bit in SigCgt of /proc/PID/status),
-- looking every 10 ms for at most 300 s; a process that ends meanwhile
-- gets nothing.
function signals.when_caught(pid, name)
  local n = assert(NUMBERS[name], "signals.when_caught: unknown signal")
  return ("(for _ in $(seq 30000); do "
    .. "m=$(sed -n 's/^SigCgt:[[:space:]]*//p' /proc/%d/status 2>/dev/null); [ -n \"$m\" ] || exit; "
    .. "if [ $(( 0x${m#????????} >> %d & 1 )) = 1 ]; then kill -%s %d; exit; fi; "
    .. "sleep 0.01; done)"):format(pid, n - 1, name, pid)
end

-- Sends the signal `name` to the process pid and returns once it is sent.
-- io.popen, unlike os.execute, leaves SIGINT as it is in the caller while
-- the command runs: a process that signals itself gets the signal before
-- this returns (os.execute would have it ignored).
function signals.send(pid, name)
  assert(NUMBERS[name], "signals.send: unknown signal")
  local p = assert(io.popen(("kill -%s %d"):format(name, pid)))
  p:close()
end

return signals
