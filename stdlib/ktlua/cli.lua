-- ktlua.cli: --name=value options for tuning scripts.
--
--   local opt = require("ktlua.cli").options(arg, {
--     n = 1 << 20,         -- a number: --n=4096
--     device = "default",  -- a string: --device=opencl:0:0
--     progress = false,    -- a flag:   --progress
--   }, "examples/tune_sort.lua: a radix sort")
--
-- The defaults give each option its type. --help prints the options and
-- exits; an unknown option or a value of the wrong type is an error.
local cli = {}

local function usage(defaults, about)
  local names = {}
  for name in pairs(defaults) do names[#names + 1] = name end
  table.sort(names)
  local lines = { about or "options:" }
  for _, name in ipairs(names) do
    local d = defaults[name]
    if type(d) == "boolean" then
      lines[#lines + 1] = ("  --%s"):format(name)
    else
      lines[#lines + 1] = ("  --%s=%s (default %s)"):format(name, type(d) == "number" and "N" or "TEXT", tostring(d))
    end
  end
  return table.concat(lines, "\n")
end

function cli.options(args, defaults, about)
  local opt = {}
  for k, v in pairs(defaults) do opt[k] = v end
  for _, a in ipairs(args or {}) do
    if a == "--help" or a == "-h" then
      print(usage(defaults, about))
      os.exit(0)
    end
    local name, value = a:match("^%-%-([%w_]+)=(.*)$")
    if not name then name = a:match("^%-%-([%w_]+)$") end
    if not name or defaults[name] == nil then
      error(("unknown option '%s'\n%s"):format(a, usage(defaults, about)), 0)
    end
    local d = defaults[name]
    if type(d) == "boolean" then
      if value then error(("option --%s takes no value"):format(name), 0) end
      opt[name] = true
    elseif value == nil then
      error(("option --%s needs a value: --%s=..."):format(name, name), 0)
    elseif type(d) == "number" then
      opt[name] = math.tointeger(tonumber(value)) or tonumber(value)
      if opt[name] == nil then error(("option --%s: '%s' is not a number"):format(name, value), 0) end
    else
      opt[name] = value
    end
  end
  return opt
end

return cli
