-- What the searcher specs share about replayed tunings.
local assert = require "luassert"

local replays = {}

-- The configurations' indices, in the order the tuning evaluated them.
function replays.indices(results)
  local list = {}
  for i = 1, #results do list[i] = results[i].index end
  return list
end

-- Asserts that the tuning evaluated no configuration twice; the number of
-- those that failed.
function replays.each_once(results)
  local seen, failed = {}, 0
  for i = 1, #results do
    assert.is_nil(seen[results[i].index], "configuration " .. results[i].index .. " twice")
    seen[results[i].index] = true
    if results[i].status ~= "ok" then failed = failed + 1 end
  end
  return failed
end

return replays
