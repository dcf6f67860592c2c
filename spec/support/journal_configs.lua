-- The configurations a journal of the MPI specs' WG x VEC tuning records, in
-- order ("WG/VEC" each), and whether a list holds each at most once.
local files = require "spec.support.files"

local M = {}

function M.of(journal)
  local list = {}
  for _, line in ipairs(files.lines(journal)) do
    local wg, vec = line:match('"config":{"WG":(%d+),"VEC":(%d+)')
    if wg then list[#list + 1] = wg .. "/" .. vec end
  end
  return list
end

function M.distinct(list)
  local seen = {}
  for _, x in ipairs(list) do
    if seen[x] then return false end
    seen[x] = true
  end
  return true
end

return M
