-- Every Lua snippet of doc/*.md runs as written (README.md's: readme_spec).
-- A snippet that replays a recorded dataset is pending where it is not there;
-- one whose first line is "-- needs a CUDA device" is pending where none is.
local lfs = require "lfs"
local kt = require "ktlua"

local function read(path)
  local f = assert(io.open(path))
  local text = f:read("a")
  f:close()
  return text
end

-- The datasets a snippet names that are not there, as a reason; nil when all are.
local function missing_datasets(code)
  for path in code:gmatch('"(%.%./shared/datasets/[^"]+)"') do
    local f = io.open(path, "rb")
    if not f then return path .. " is not there" end
    f:close()
  end
end

local function has_cuda()
  for _, d in ipairs(kt.devices()) do
    if d.backend == "cuda" then return true end
  end
  return false
end

local pages = {}
for name in lfs.dir("doc") do
  if name:match("%.md$") then pages[#pages + 1] = name end
end
table.sort(pages)

describe("the docs", function()
  local n = 0
  for _, page in ipairs(pages) do
    local i = 0
    for code in read("doc/" .. page):gmatch("```lua\n(.-)```") do
      i, n = i + 1, n + 1
      local label = ("doc/%s snippet %d"):format(page, i)
      local absent = missing_datasets(code)
      if not absent and code:match("^%-%- needs a CUDA device\n") and not has_cuda() then
        absent = "no CUDA device here"
      end
      if absent then
        pending(label .. ": " .. absent)
      else
        it(label .. " runs", function()
          -- Its own globals, and a print that keeps the suite's output readable.
          local env = setmetatable({ print = function() end }, { __index = _G })
          local chunk = assert(load(code, "=" .. label, "t", env))
          chunk()
        end)
      end
    end
  end
  it("have Lua snippets", function() assert.is_true(n >= 5) end)
end)
