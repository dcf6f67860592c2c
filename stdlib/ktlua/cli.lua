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

-- The options every tuning script takes, with those of the script
-- (defaults, which may also change these: { search = "bestfirst" }):
--   --device=ID --search=NAME --count=N --seconds=S --seed=N --repeats=N
--   --progress --early_stop --energy --output=FILE --live=PAGE
--   (--energy: tune option energy = true; --live: live = PAGE)
-- opt.tune is the options table for tuner:tune they make: the searcher,
-- the budget (stop.count, stop.seconds; 0 is no limit) and the rest.
local tuning_defaults = { device = "default", search = "", count = 0, seconds = 0, seed = 0,
  repeats = 0, progress = false, early_stop = false, energy = false, output = "", live = "" }

local function check_budget(opt)
  for _, name in ipairs { "count", "seed", "repeats" } do
    local v = opt[name]
    if math.type(v) ~= "integer" or v < 0 then
      error(("option --%s: expected a whole number >= 0, got %s"):format(name, tostring(v)), 0)
    end
  end
  if not (opt.seconds >= 0 and opt.seconds < math.huge) then
    error(("option --seconds: expected a number of seconds >= 0, got %s"):format(tostring(opt.seconds)), 0)
  end
end

function cli.tuning(args, defaults, about)
  local all = {}
  for k, v in pairs(tuning_defaults) do all[k] = v end
  for k, v in pairs(defaults or {}) do all[k] = v end
  local opt = cli.options(args, all, about)
  check_budget(opt)
  local stop = {}
  if opt.count > 0 then stop.count = opt.count end
  if opt.seconds > 0 then stop.seconds = opt.seconds end
  opt.tune = { search = opt.search ~= "" and opt.search or nil, stop = next(stop) and stop or nil,
    seed = opt.seed > 0 and opt.seed or nil, repeats = opt.repeats > 0 and opt.repeats or nil,
    progress = opt.progress or nil, early_stop = opt.early_stop or nil, energy = opt.energy or nil,
    output = opt.output ~= "" and opt.output or nil, live = opt.live ~= "" and opt.live or nil }
  return opt
end

return cli
