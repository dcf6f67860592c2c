-- The recorded datasets (design.md section 7) in ../shared/datasets, beside
-- the checkout, or in the folder KTLUA_DATASETS names. Specs that need one
-- are pending where they are not.
local dir = os.getenv("KTLUA_DATASETS") or "../shared/datasets"

local datasets = {}

-- The path of a dataset file, or nil and why it is not there.
function datasets.path(name)
  local path = dir .. "/" .. name
  local f = io.open(path, "rb")
  if not f then return nil, path .. " is not there (the datasets go beside the checkout, or KTLUA_DATASETS names them)" end
  f:close()
  return path
end

return datasets
