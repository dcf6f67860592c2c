-- What the searcher specs share about replayed tunings.
local replays = {}

-- The configurations' indices, in the order the tuning evaluated them.
function replays.indices(results)
  local list = {}
  for i = 1, #results do list[i] = results[i].index end
  return list
end

return replays
