-- The statuses of a tuning's results in the order of the space: statuses[i]
-- belongs to configuration index i - 1, whatever order they were tried in.
return function(results)
  local s = {}
  for i = 1, #results do s[results[i].index + 1] = results[i].status end
  return s
end
