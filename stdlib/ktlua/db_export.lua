-- ktlua.db_export: the tuned-configuration database (kt.db) for production:
-- a C header, a JSON file in the shape of Kernel Tuner's and Kernel
-- Launcher's wisdom (device, problem size, configuration, time, and the
-- configuration's metrics where it has some), or a Lua table.
-- `ktlua db export [--format=header|json|lua] [-o FILE] DB` runs main.
local export = {}

local E = require("ktlua.db_entries")
local number_text, sorted_keys = E.number_text, E.sorted_keys

-- ---- C header (ktlua.db_header) ----

function export.header(entries, source) return require("ktlua.db_header").write(entries, source) end

-- ---- JSON ----

-- Through ktlua's one JSON string writer (core/base/json.c), which writes
-- UTF-8 whatever the bytes: one that is part of no character as \udcXX.
local function json_string(s)
  if s == nil then return "null" end
  return require("ktlua").json.encode(s)
end

-- Numbers; JSON has no infinity nor NaN: null.
local function json_value(v)
  if type(v) == "string" or v == nil then return json_string(v) end
  if v ~= v or v == math.huge or v == -math.huge then return "null" end
  return number_text(v)
end

local function json_object(t)
  local parts = {}
  for _, k in ipairs(sorted_keys(t)) do parts[#parts + 1] = json_string(k) .. ":" .. json_value(t[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

function export.json(entries)
  local groups, order = E.by_kernel(entries)
  local kernels = {}
  for _, kernel in ipairs(order) do
    local names = E.parameters(groups[kernel])
    local sizes = sorted_keys(groups[kernel][1].size)
    local results = {}
    for _, e in ipairs(groups[kernel]) do
      local size = {}
      for _, s in ipairs(sizes) do size[#size + 1] = json_value(e.size[s] or 0) end
      results[#results + 1] = ('    {"device_name":%s,"backend":%s,"problem_size":[%s],"config":%s,'
        .. '"time":%s,"rank":%d,"objective":%s,"source":%s,"options":%s,"driver":%s,"compiler":%s,'
        .. '"date":%s%s}')
        :format(json_string(e.device), json_string(e.backend), table.concat(size, ","),
                json_object(e.config), json_value(e.time_ms + 0.0), e.rank, json_string(e.objective),
                json_string(e.source), json_string(e.options), json_string(e.driver),
                json_string(e.compiler or ""), json_string(e.date),
                e.metrics and ',"metrics":' .. json_object(e.metrics) or "")
    end
    local quoted = {}
    for i, n in ipairs(names) do quoted[i] = json_string(n) end
    local snames = {}
    for i, n in ipairs(sizes) do snames[i] = json_string(n) end
    kernels[#kernels + 1] = ('  {"kernel":%s,"tunable_parameters":[%s],"problem_size_names":[%s],'
      .. '"time_unit":"ms","results":[\n%s\n  ]}'):format(json_string(kernel),
      table.concat(quoted, ","), table.concat(snames, ","), table.concat(results, ",\n"))
  end
  return ('{"format":"ktlua-wisdom","version":1,"exported_by":%s,"kernels":[\n%s\n]}\n'):format(
    json_string("ktlua " .. require("ktlua").version), table.concat(kernels, ",\n"))
end

-- ---- Lua ----

-- Text that loads as the value, in any environment (no name is looked
-- up): strings quoted, every key a quoted string, floats that stay floats.
local function lua_number(v)
  if E.is_integer(v) then return v == math.mininteger and "(-9223372036854775807 - 1)" or tostring(v) end
  if v ~= v then return "(0/0)" end
  if v == math.huge or v == -math.huge then return v > 0 and "1e999" or "-1e999" end
  local s = number_text(v)
  return s:find("[%.eE]") and s or s .. ".0"
end

local function lua_value(v)
  if type(v) == "string" then return ("%q"):format(v) end
  if type(v) == "table" then
    local parts = {}
    for _, k in ipairs(sorted_keys(v)) do parts[#parts + 1] = ("[%q] = %s"):format(k, lua_value(v[k])) end
    return "{ " .. table.concat(parts, ", ") .. " }"
  end
  if v == nil then return "nil" end
  return lua_number(v)
end

function export.lua(entries)
  local out = { "-- Tuned configurations, exported by ktlua " .. require("ktlua").version .. ".",
                "return {" }
  local keys = { "kernel", "device", "backend", "objective", "size", "rank", "config", "time_ms",
                 "source", "options", "driver", "compiler", "version", "date", "origin", "metrics" }
  for _, e in ipairs(entries) do
    local parts = {}
    for _, k in ipairs(keys) do
      if e[k] ~= nil then parts[#parts + 1] = ("[%q] = %s"):format(k, lua_value(e[k])) end
    end
    out[#out + 1] = "  { " .. table.concat(parts, ", ") .. " },"
  end
  out[#out + 1] = "}"
  return table.concat(out, "\n") .. "\n"
end

-- ---- the command ----

local usage = [[
usage: ktlua db export [--format=header|json|lua] [-o FILE] DB
       ktlua db recheck DB [--device=ID] [--all] [--retune] [--noise=X] [--repeats=N]
       ktlua db store DB FILE... [--kernel=NAME] [--device=NAME] [--backend=B] [--size=x=N] [--top=N]
  export writes the configurations stored in the database DB (kt.db) as a C
  header with a selection function by nearest size (header, the default), a
  JSON wisdom file (json) or a Lua table (lua), to FILE or standard output;
  recheck times the stored bests again where the driver, compiler, ktlua or
  the kernel's code changed (`ktlua db recheck --help`); store keeps the best of results files (a
  Kernel Tuner cache, KTT's, T4) for transfer (`ktlua db store --help`)
]]

function export.main(args)
  local format, output, path = "header", nil, nil
  if args[1] == "recheck" then return require("ktlua.db_recheck").main(table.move(args, 2, #args, 1, {})) end
  if args[1] == "store" then return require("ktlua.db_store").main(table.move(args, 2, #args, 1, {})) end
  if args[1] == "-h" or args[1] == "--help" then io.write(usage) return end
  if args[1] ~= "export" then error(usage, 0) end
  local i = 2
  while i <= #args do
    local a = args[i]
    if a:match("^%-%-format=") then format = a:match("^%-%-format=(.*)")
    elseif a == "-o" and args[i + 1] then output = args[i + 1]; i = i + 1
    elseif a == "-h" or a == "--help" then io.write(usage); return
    elseif not path and not a:match("^%-") then path = a
    else error(("ktlua db: unexpected argument '%s'\n%s"):format(a, usage), 0) end
    i = i + 1
  end
  if not path then error("ktlua db export: no database given\n" .. usage, 0) end
  if not export[format] or format == "main" then
    error(("ktlua db export: unknown format '%s' (header, json or lua)"):format(format), 0)
  end
  local f = io.open(path, "rb")
  if not f then error(("ktlua db export: %s does not exist"):format(path), 0) end
  f:close()
  local db = require("ktlua").db(path, { readonly = true })
  local text = export[format](db:list(), path:match("[^/]*$"))
  db:close()
  if output then
    local out = assert(io.open(output, "w"))
    out:write(text)
    out:close()
  else
    io.write(text)
  end
end

return export
