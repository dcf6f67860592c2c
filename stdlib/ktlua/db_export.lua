-- ktlua.db_export: the tuned-configuration database (kt.db) for production:
-- a C header, a JSON file in the shape of Kernel Tuner's and Kernel
-- Launcher's wisdom (device, problem size, configuration, time), or a Lua
-- table. `ktlua db export [--format=header|json|lua] [-o FILE] DB` runs main.
local export = {}

local function is_integer(v) return math.type(v) == "integer" end

-- The shortest of %.15g, %.16g and %.17g that reads back as v.
local function number_text(v)
  if is_integer(v) then return tostring(v) end
  for digits = 15, 17 do
    local s = ("%." .. digits .. "g"):format(v)
    if tonumber(s) == v or digits == 17 then return s end
  end
end

-- Entries grouped by kernel, in the database's order.
local function by_kernel(entries)
  local groups, order = {}, {}
  for _, e in ipairs(entries) do
    if not groups[e.kernel] then
      groups[e.kernel] = {}
      order[#order + 1] = e.kernel
    end
    table.insert(groups[e.kernel], e)
  end
  return groups, order
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

-- The parameters of a kernel's entries (their union, sorted) and each
-- one's C type: long for integers, double for other numbers, strings.
local function parameters(entries)
  local kind = {}
  for _, e in ipairs(entries) do
    for name, v in pairs(e.config) do
      local k = type(v) == "string" and "string" or is_integer(v) and "long" or "double"
      if kind[name] and kind[name] ~= k then
        k = (kind[name] == "string" or k == "string") and "string" or "double"
      end
      kind[name] = k
    end
  end
  return sorted_keys(kind), kind
end

-- ---- C header ----

local function c_name(s) return (s:gsub("[^%w_]", "_")) end

local function c_string(s)
  return '"' .. s:gsub('[\\"]', "\\%0"):gsub("\n", "\\n") .. '"'
end

local function c_number(v)
  if is_integer(v) then return tostring(v) end
  local s = number_text(v)
  return s:find("[%.eEn]") and s or s .. ".0"
end

-- "-DWG=128 -DVEC=2": the compiler options that give the parameters.
local function defines(config, names)
  local parts = {}
  for _, name in ipairs(names) do
    local v = config[name]
    if v ~= nil then parts[#parts + 1] = ("-D%s=%s"):format(name, type(v) == "string" and v or c_number(v)) end
  end
  return table.concat(parts, " ")
end

local c_types = { long = "long ", double = "double ", string = "const char *" }

local function header_kernel(out, kernel, entries)
  local id = c_name(kernel)
  local names, kind = parameters(entries)
  local sizes = sorted_keys(entries[1].size)
  local rows = {}
  for _, e in ipairs(entries) do
    if e.rank == 1 and #sorted_keys(e.size) == #sizes then
      local ok = true
      for _, s in ipairs(sizes) do ok = ok and e.size[s] ~= nil end
      if ok then rows[#rows + 1] = e end
    end
  end
  out[#out + 1] = ("\n/* %s: parameters %s; problem size %s. */"):format(kernel,
    table.concat(names, ", "), table.concat(sizes, ", "))
  out[#out + 1] = ("struct ktlua_%s_config {"):format(id)
  out[#out + 1] = "  const char *device;  /* the device's name, as it gives it */"
  out[#out + 1] = "  const char *backend;"
  out[#out + 1] = ("  double size[%d];     /* %s */"):format(#sizes, table.concat(sizes, ", "))
  for _, n in ipairs(names) do out[#out + 1] = ("  %s%s;"):format(c_types[kind[n]], c_name(n)) end
  out[#out + 1] = "  const char *defines; /* compiler options that set the parameters */"
  out[#out + 1] = "  double time_ms;"
  out[#out + 1] = "};"
  out[#out + 1] = ("static const struct ktlua_%s_config ktlua_%s_configs[] = {"):format(id, id)
  for _, e in ipairs(rows) do
    local fields = { c_string(e.device), c_string(e.backend) }
    local size = {}
    for _, s in ipairs(sizes) do size[#size + 1] = c_number(e.size[s]) end
    fields[#fields + 1] = "{" .. table.concat(size, ", ") .. "}"
    for _, n in ipairs(names) do
      local v = e.config[n]
      if v == nil then fields[#fields + 1] = "0"
      elseif kind[n] == "string" then fields[#fields + 1] = c_string(tostring(v))
      else fields[#fields + 1] = c_number(v) end
    end
    fields[#fields + 1] = c_string(defines(e.config, names))
    fields[#fields + 1] = c_number(e.time_ms + 0.0)
    out[#out + 1] = "  {" .. table.concat(fields, ", ") .. "},"
  end
  out[#out + 1] = "};"
  out[#out + 1] = ("#define KTLUA_%s_COUNT %d"):format(id:upper(), #rows)
  out[#out + 1] = ([[
/* The configuration stored for the size nearest to size[] (the distance
** of the log2 of each dimension), among those of this device if it has
** any, else among all; NULL when none is stored. */
static inline const struct ktlua_%s_config *ktlua_%s_select(const char *device,
                                                             const double *size) {
  const struct ktlua_%s_config *best = 0;
  double best_distance = 0;
  int best_here = 0;
  for (int i = 0; i < KTLUA_%s_COUNT; i++) {
    const struct ktlua_%s_config *c = &ktlua_%s_configs[i];
    int here = device && strcmp(c->device, device) == 0;
    double d = 0;
    for (int j = 0; j < %d; j++) {
      double x = log2(c->size[j]) - log2(size[j]);
      d += x * x;
    }
    if (!best || here > best_here || (here == best_here && d < best_distance)) {
      best = c;
      best_distance = d;
      best_here = here;
    }
  }
  return best;
}]]):format(id, id, id, id:upper(), id, id, #sizes)
end

function export.header(entries, source)
  local out = {
    ("/* Tuned configurations, exported by ktlua %s%s. Generated: do not edit. */")
      :format(require("ktlua").version, source and " from " .. source or ""),
    "#ifndef KTLUA_TUNED_H", "#define KTLUA_TUNED_H", "", "#include <math.h>", "#include <string.h>",
  }
  local groups, order = by_kernel(entries)
  for _, kernel in ipairs(order) do header_kernel(out, kernel, groups[kernel]) end
  out[#out + 1] = "\n#endif"
  return table.concat(out, "\n") .. "\n"
end

-- ---- JSON ----

local function json_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    local named = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\t"] = "\\t", ["\r"] = "\\r" }
    return named[c] or ("\\u%04x"):format(c:byte())
  end) .. '"'
end

local function json_value(v)
  if type(v) == "string" then return json_string(v) end
  return number_text(v)
end

local function json_object(t)
  local parts = {}
  for _, k in ipairs(sorted_keys(t)) do parts[#parts + 1] = json_string(k) .. ":" .. json_value(t[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

function export.json(entries)
  local groups, order = by_kernel(entries)
  local kernels = {}
  for _, kernel in ipairs(order) do
    local names = parameters(groups[kernel])
    local sizes = sorted_keys(groups[kernel][1].size)
    local results = {}
    for _, e in ipairs(groups[kernel]) do
      local size = {}
      for _, s in ipairs(sizes) do size[#size + 1] = json_value(e.size[s] or 0) end
      results[#results + 1] = ('    {"device_name":%s,"backend":%s,"problem_size":[%s],"config":%s,'
        .. '"time":%s,"rank":%d,"objective":%s,"source":%s,"options":%s,"driver":%s,"date":%s}')
        :format(json_string(e.device), json_string(e.backend), table.concat(size, ","),
                json_object(e.config), json_value(e.time_ms + 0.0), e.rank, json_string(e.objective),
                json_string(e.source), json_string(e.options), json_string(e.driver), json_string(e.date))
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

local function lua_value(v)
  if type(v) == "string" then return ("%q"):format(v) end
  if type(v) == "table" then
    local parts = {}
    for _, k in ipairs(sorted_keys(v)) do parts[#parts + 1] = ("%s = %s"):format(k, lua_value(v[k])) end
    return "{ " .. table.concat(parts, ", ") .. " }"
  end
  return number_text(v)
end

function export.lua(entries)
  local out = { "-- Tuned configurations, exported by ktlua " .. require("ktlua").version .. ".",
                "return {" }
  local keys = { "kernel", "device", "backend", "objective", "size", "rank", "config", "time_ms",
                 "source", "options", "driver", "version", "date" }
  for _, e in ipairs(entries) do
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts + 1] = ("%s = %s"):format(k, lua_value(e[k])) end
    out[#out + 1] = "  { " .. table.concat(parts, ", ") .. " },"
  end
  out[#out + 1] = "}"
  return table.concat(out, "\n") .. "\n"
end

-- ---- the command ----

local usage = [[
usage: ktlua db export [--format=header|json|lua] [-o FILE] DB
  writes the configurations stored in the database DB (kt.db) as a C header
  with a selection function by nearest size (header, the default), a JSON
  wisdom file (json) or a Lua table (lua), to FILE or standard output
]]

function export.main(args)
  local format, output, path = "header", nil, nil
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
