-- ktlua.db_entries: what the export formats (ktlua.db_export, ktlua.db_header)
-- share about the entries db:list gives: their grouping by kernel, their
-- parameters, and numbers as text that reads back the same.
local entries = {}

function entries.is_integer(v) return math.type(v) == "integer" end

-- The shortest of %.15g, %.16g and %.17g that reads back as v, for a
-- finite float; the callers spell infinities and NaN in their own language.
function entries.number_text(v)
  if entries.is_integer(v) then return tostring(v) end
  for digits = 15, 17 do
    local s = ("%." .. digits .. "g"):format(v)
    if tonumber(s) == v or digits == 17 then return s end
  end
end

-- Entries grouped by kernel, in the database's order.
function entries.by_kernel(list)
  local groups, order = {}, {}
  for _, e in ipairs(list) do
    if not groups[e.kernel] then
      groups[e.kernel] = {}
      order[#order + 1] = e.kernel
    end
    table.insert(groups[e.kernel], e)
  end
  return groups, order
end

function entries.sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

-- The parameters of a kernel's entries (their union, sorted) and each
-- one's C type: long for integers, double for other numbers, strings.
function entries.parameters(list)
  local kind = {}
  for _, e in ipairs(list) do
    for name, v in pairs(e.config) do
      local k = type(v) == "string" and "string" or entries.is_integer(v) and "long" or "double"
      if kind[name] and kind[name] ~= k then
        k = (kind[name] == "string" or k == "string") and "string" or "double"
      end
      kind[name] = k
    end
  end
  return entries.sorted_keys(kind), kind
end

return entries
