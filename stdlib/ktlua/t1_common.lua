-- ktlua.t1_common: what the T1 reader's modules (ktlua.t1, ktlua.t1_args)
-- share: keys in either case, errors that name the file and the field,
-- values from a file shown safely, and the expressions of sizes.
local c = {}

function c.kt() return require "ktlua" end

-- "KernelSpecification" or "kernelSpecification": the value and the key found.
function c.lookup(t, ...)
  if type(t) ~= "table" then return nil end
  for _, name in ipairs({ ... }) do
    if t[name] ~= nil then return t[name], name end
    local lower = name:lower()
    for k, v in pairs(t) do
      if type(k) == "string" and k:lower() == lower then return v, k end
    end
  end
  return nil
end

-- A field as messages name it: canonical, or an alias as the file spells it
-- (BAT's length for Size).
function c.key(canonical, found)
  return found and found:lower() ~= canonical:lower() and found or canonical
end

-- where is "FILE: FIELD": every error of a file's content says both.
function c.fail(where, fmt, ...)
  error(("%s: " .. fmt):format(where, ...), 0)
end

-- A value from a file as a message shows it: a string quoted, its control
-- bytes escaped and its length cut; a JSON list or object by its kind.
function c.show(v)
  if type(v) == "string" then
    local s = v:sub(1, 80):gsub("[%c\\]", function(ch) return ("\\%03d"):format(ch:byte()) end)
    return "'" .. s .. (#v > 80 and "...'" or "'")
  elseif type(v) == "table" then
    return (v[1] ~= nil or next(v) == nil) and "a list" or "an object"
  end
  return tostring(v)
end

-- A JSON list, one object taken as a list of one, nothing as an empty list.
function c.list_of(v, where)
  if v == nil then return {} end
  if type(v) ~= "table" then c.fail(where, "expected a list, found %s", c.show(v)) end
  if v[1] == nil and next(v) ~= nil then return { v } end
  return v
end

function c.integer_of(v, where, what)
  local n = (type(v) == "number" or type(v) == "string") and math.tointeger(tonumber(v))
  if not n then c.fail(where, "%s %s is not an integer", what, c.show(v)) end
  return n
end

function c.positive(v, where, what)
  local n = c.integer_of(v, where, what)
  if n < 1 then c.fail(where, "%s %d is not positive", what, n) end
  return n
end

-- The size under which `ktlua run --db` stores a problem's tuning (kt.db):
-- its ProblemSize as {x =, y =, z =} (the first three), {n = 1} without one.
function c.db_size(problem)
  local size, names = {}, { "x", "y", "z" }
  for i, v in ipairs(problem.problem_size or {}) do
    local n = math.tointeger(tonumber(v))
    if names[i] and n and n > 0 then size[names[i]] = n end
  end
  return next(size) and size or { n = 1 }
end

-- Why kt.t1, and so `ktlua run` and `ktlua run --check`, refuse a problem
-- of kt.t1_read: its defects (with force, those that leave nothing to
-- build), then the files it names that are not there. One list, so that
-- the check fails for what the run refuses.
function c.refusals(problem, force)
  local out = {}
  for _, d in ipairs(force and problem.broken or problem.defects) do out[#out + 1] = d end
  for _, a in ipairs(problem.absent) do out[#out + 1] = a end
  return out
end

function c.dirname(path) return path:match("^(.*)/[^/]*$") or "." end

-- ---- expressions ----

-- "ProblemSize[0]" and "max(filter_width)" (the largest value of a
-- parameter) become numbers; the rest is an expression of expr.h.
local function substitute(text, problem_size, params)
  text = text:gsub("ProblemSize%s*%[%s*(%d+)%s*%]", function(i)
    local v = problem_size[tonumber(i) + 1]
    return v and tostring(v) or nil
  end)
  return (text:gsub("(%a+)%(%s*([%a_][%w_]*)%s*%)", function(fn, name)
    local p = params[name]
    if not p or (fn ~= "max" and fn ~= "min") then return nil end
    local best = p[1]
    for _, v in ipairs(p) do
      if type(v) ~= type(best) then return nil end
      if (fn == "max" and v > best) or (fn == "min" and v < best) then best = v end
    end
    return tostring(best)
  end))
end

-- An expression (a string or a number) over the tuning parameters: the
-- function of a configuration, its names, its value when it reads none, and
-- the expression's text as expr.h reads it.
function c.compile(v, problem, where)
  if math.type(v) == "integer" then return nil, {}, v end
  if type(v) ~= "string" then
    c.fail(where, "expected an integer or an expression, found %s", c.show(v))
  end
  local text = substitute(v, problem.problem_size, problem.values)
  local ok, f, names = pcall(c.kt()._expression, text)
  if not ok then c.fail(where, "%s", f) end
  for _, name in ipairs(names) do
    if not problem.values[name] then
      c.fail(where, "'%s' reads %s, which is no tuning parameter", v, name)
    end
  end
  if #names == 0 then
    local value
    ok, value = pcall(f, {})
    if not ok then c.fail(where, "%s", value) end
    return nil, names, value, text
  end
  return f, names, nil, text
end

return c
