-- ktlua.complete: what Tab offers at the prompt. complete(word) lists the
-- names that can follow it: globals and keywords for a bare word; for
-- `kt.tu`, `tuner:` or `results.su`, the fields and methods (for `:`, the
-- methods) of what the dotted path before names. Nothing is called to
-- find them but plain field reads. A field whose name begins with _ is
-- ktlua's own (kt._expression, for its Lua modules), never offered.
local keywords = { "and", "break", "do", "else", "elseif", "end", "false", "for", "function",
  "goto", "if", "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until",
  "while" }

-- Adds the identifier keys of t (and of the tables its metatable's __index
-- and methods name) to names; for `.`, also the fields a ktlua object's
-- metatable lists (what its __index function answers: t.device, a.length).
local function add_fields(names, value, only_functions)
  local seen = {}
  local function add(t)
    if type(t) ~= "table" or seen[t] then return end
    seen[t] = true
    for k, v in pairs(t) do
      if type(k) == "string" and k:match("^[%a_][%w_]*$") and
         (not only_functions or type(v) == "function") then
        names[k] = true
      end
    end
    local mt = getmetatable(t)
    if type(mt) == "table" then add(rawget(mt, "__index")) end
  end
  if type(value) == "table" then add(value) end
  local mt = getmetatable(value)
  if type(mt) == "table" then
    add(rawget(mt, "__index"))
    add(rawget(mt, "methods"))
    local fields = rawget(mt, "fields")
    if not only_functions and type(fields) == "table" then
      for _, k in ipairs(fields) do
        if type(k) == "string" then names[k] = true end
      end
    end
  end
end

-- The value a dotted path of names reads to, or nil.
local function lookup(path)
  local value = _G
  for name in path:gmatch("[^.]+") do
    if type(value) ~= "table" and type(value) ~= "userdata" then return nil end
    local ok, v = pcall(function() return value[name] end)
    if not ok then return nil end
    value = v
  end
  return value
end

return function(word)
  local path, sep, partial = word:match("^([%a_][%w_.]*)([.:])([%w_]*)$")
  local names = {}
  if path then
    local value = lookup(path)
    if value == nil then return {} end
    add_fields(names, value, sep == ":")
  else
    partial, path, sep = word, "", ""
    add_fields(names, _G)
    for _, k in ipairs(keywords) do names[k] = true end
  end
  local out = {}
  for name in pairs(names) do
    if name:sub(1, #partial) == partial and (sep == "" or name:sub(1, 1) ~= "_") then
      out[#out + 1] = path .. sep .. name
    end
  end
  table.sort(out)
  return out
end
