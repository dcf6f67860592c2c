-- Waiting in specs for an event (a file made, a compile over, a screen
-- shown), never for a time: a busy machine makes a spec slower, not wrong.
local wait = {}

-- Asks ready() every 10 ms until it gives a true value, and returns that;
-- nil once `seconds` (default 300) have passed without one.
function wait.until_true(ready, seconds)
  local deadline = os.time() + (seconds or 300)
  repeat
    local got = ready()
    if got then return got end
    os.execute("sleep 0.01")
  until os.time() > deadline
  return nil
end

-- Returns once no program of tuner's cache is compiling (queued or on a
-- compile thread); fails after 300 s.
function wait.compiles_over(tuner)
  assert(wait.until_true(function() return tuner:cache().compiling == 0 end),
         "compiles still running after 300 s")
end

return wait
