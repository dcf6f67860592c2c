-- ktlua.db_header: the tuned-configuration database as a C header
-- (`ktlua db export --format=header`). Names come from the database, and
-- so from any results file that was stored in it: they are data, and no
-- name or value can become code. A name is written
--   * in a string literal where the program needs it (ktlua_K_name, the
--     size names), escaped: quotes, backslashes, '?' (no trigraph), and
--     every byte outside printable ASCII as an octal escape;
--   * in a comment as printable ASCII that cannot end the comment, open
--     another, splice a line or form a trigraph;
--   * as an identifier (a kernel's in ktlua_K_*, a parameter's as a
--     member) as is when it is one that cannot clash: letters, digits and
--     '_', at most 40 bytes, for a member not starting with a digit, not a
--     C or C++ keyword, not a member or macro the header or its includes
--     have; any other name becomes its letters, digits and '_' (others as
--     '_', cut to 40 bytes) then '_' and the 8 hex digits of its FNV-1a
--     hash, so that two names never meet in one identifier (a counter
--     follows in the unlikely case that they still do).
local E = require("ktlua.db_entries")

local header = {}

-- ---- text ----

local string_escapes = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\t"] = "\\t",
                         ["\r"] = "\\r", ["?"] = "\\?" }

local function c_string(s)
  return '"' .. tostring(s):gsub('[%z\1-\31"\\?\127-\255]', function(c)
    return string_escapes[c] or ("\\%03o"):format(c:byte())
  end) .. '"'
end

-- Replaces pattern by repl until none is left (each replacement puts a
-- backslash between two characters, so none makes another).
local function until_none(s, pattern, repl)
  local n
  repeat s, n = s:gsub(pattern, repl) until n == 0
  return s
end

-- Text for inside /* */: printable ASCII, without */, /*, ?? or a line end.
local function comment_text(s)
  s = tostring(s):gsub("\\", "\\\\")
  s = s:gsub("[^ -~]", function(c) return ("\\%03o"):format(c:byte()) end)
  s = until_none(s, "%*/", "*\\/")
  s = until_none(s, "/%*", "/\\*")
  return until_none(s, "%?%?", "?\\?")
end

local function c_number(v)
  if E.is_integer(v) then
    return v == math.mininteger and "(-9223372036854775807 - 1)" or tostring(v)
  end
  if v ~= v then return "NAN" end
  if v == math.huge or v == -math.huge then return v > 0 and "HUGE_VAL" or "-HUGE_VAL" end
  local s = E.number_text(v)
  return s:find("[%.eE]") and s or s .. ".0"
end

-- ---- identifiers ----

local function set(words)
  local t = {}
  for w in words:gmatch("%S+") do t[w] = true end
  return t
end

-- C (to C23) and C++ keywords, and what the header's includes (math.h,
-- string.h) and a program's errno.h define as object-like macros.
local RESERVED = set([[
auto break case char const continue default do double else enum extern float for goto if inline
int long register restrict return short signed sizeof static struct switch typedef union unsigned
void volatile while alignas alignof bool constexpr false nullptr static_assert thread_local true
typeof typeof_unqual asm and and_eq bitand bitor catch char8_t char16_t char32_t class compl
concept consteval constinit const_cast co_await co_return co_yield decltype delete dynamic_cast
explicit export friend mutable namespace new noexcept not not_eq operator or or_eq private
protected public reinterpret_cast requires static_cast template this throw try typeid typename
using virtual wchar_t xor xor_eq
NULL NAN INFINITY HUGE_VAL HUGE_VALF HUGE_VALL math_errhandling errno
device backend size defines time_ms metrics]])

local function member_usable(name)
  return #name <= 40 and name:find("^[%a_][%w_]*$") ~= nil and not RESERVED[name]
    and not name:find("^_[%u_]") and not name:find("^KTLUA_") and not name:find("^FP_")
    and not name:find("^M_") and not name:find("^MATH_")
end

local function kernel_usable(name) return #name <= 40 and name:find("^[%w_]+$") ~= nil end

local function fnv1a(s)
  local h = 0x811c9dc5
  for i = 1, #s do h = ((h ~ s:byte(i)) * 0x01000193) & 0xffffffff end
  return ("%08x"):format(h)
end

-- The identifier of each name (a table by name), unique in a scope whose
-- identifiers compare as key(id) does; names usable as they are keep them
-- whatever the other names.
local function identifiers(names, usable, key, first_letter)
  local ids, taken = {}, {}
  for _, name in ipairs(names) do
    if usable(name) and not taken[key(name)] then
      ids[name], taken[key(name)] = name, true
    end
  end
  for _, name in ipairs(names) do
    if not ids[name] then
      local base = name:gsub("[^%w_]", "_"):sub(1, 40) .. "_" .. fnv1a(name)
      if first_letter and not base:find("^%a") then base = "p" .. base end
      local id, n = base, 1
      while taken[key(id)] do
        n = n + 1
        id = base .. "_" .. n
      end
      ids[name], taken[key(id)] = id, true
    end
  end
  return ids
end

local function same(s) return s end

-- ---- the header ----

-- "-DWG=128 -DVEC=2": the compiler options that give the parameters; nil
-- when one cannot be written as an option of its own (a name that is not
-- an identifier, a value with a space, quote, backslash or control
-- character).
local function defines(config, names)
  local parts = {}
  for _, name in ipairs(names) do
    local v = config[name]
    if v ~= nil then
      local text = type(v) == "string" and v or c_number(v)
      if not name:find("^[%a_][%w_]*$") or text:find("[%s%c\"'\\]") then return nil end
      parts[#parts + 1] = ("-D%s=%s"):format(name, text)
    end
  end
  return table.concat(parts, " ")
end

local c_types = { long = "long ", double = "double ", string = "const char *" }

-- The entries of the best (rank 1) of each size with the first entry's
-- size names.
local function best_rows(entries, sizes)
  local rows = {}
  for _, e in ipairs(entries) do
    if e.rank == 1 and #E.sorted_keys(e.size) == #sizes then
      local ok = true
      for _, s in ipairs(sizes) do ok = ok and e.size[s] ~= nil end
      if ok then rows[#rows + 1] = e end
    end
  end
  return rows
end

-- The names of the metrics the rows have (their union, sorted).
local function metric_names(rows)
  local seen = {}
  for _, e in ipairs(rows) do
    for name in pairs(e.metrics or {}) do seen[name] = true end
  end
  return E.sorted_keys(seen)
end

local function row_text(e, names, kind, sizes, metrics)
  local fields = { c_string(e.device), c_string(e.backend) }
  local size = {}
  for _, s in ipairs(sizes) do size[#size + 1] = c_number(e.size[s]) end
  fields[#fields + 1] = "{" .. (#size > 0 and table.concat(size, ", ") or "0") .. "}"
  for _, n in ipairs(names) do
    local v = e.config[n]
    if v == nil then fields[#fields + 1] = "0"
    elseif kind[n] == "string" then fields[#fields + 1] = c_string(tostring(v))
    else fields[#fields + 1] = c_number(v) end
  end
  local d = defines(e.config, names)
  fields[#fields + 1] = d and c_string(d) or "0"
  fields[#fields + 1] = c_number(e.time_ms + 0.0)
  if #metrics > 0 then
    local values = {}
    for i, m in ipairs(metrics) do values[i] = c_number((e.metrics or {})[m] or 0 / 0) end
    fields[#fields + 1] = "{" .. table.concat(values, ", ") .. "}"
  end
  return "  {" .. table.concat(fields, ", ") .. "},"
end

local function quoted_list(names, quote)
  local t = {}
  for i, n in ipairs(names) do t[i] = quote(n) end
  return table.concat(t, ", ")
end

local SELECT = [[
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
}]]

-- The identifiers of a kernel K are ktlua_K_name, ktlua_K_size_names,
-- ktlua_K_metric_names, ktlua_K_config, ktlua_K_configs, ktlua_K_select and
-- KTLUA_K_COUNT: no suffix ends another, so distinct K give distinct
-- identifiers.
local function kernel_text(out, kernel, id, entries)
  local names, kind = E.parameters(entries)
  local members = identifiers(names, member_usable, same, true)
  local sizes = E.sorted_keys(entries[1].size)
  local rows = best_rows(entries, sizes)
  local metrics = metric_names(rows)
  local function described(n)
    return members[n] == n and n or ("%s (%s)"):format(members[n], comment_text(n))
  end
  out[#out + 1] = ("\n/* %s: parameters %s; problem size %s. */"):format(comment_text(kernel),
    quoted_list(names, described), quoted_list(sizes, comment_text))
  out[#out + 1] = ("static const char ktlua_%s_name[] = %s;"):format(id, c_string(kernel))
  out[#out + 1] = ("static const char *const ktlua_%s_size_names[] = {%s};"):format(id,
    #sizes > 0 and quoted_list(sizes, c_string) or "0")
  if #metrics > 0 then
    out[#out + 1] = ("static const char *const ktlua_%s_metric_names[] = {%s};"):format(id,
      quoted_list(metrics, c_string))
  end
  out[#out + 1] = ("struct ktlua_%s_config {"):format(id)
  out[#out + 1] = "  const char *device;  /* the device's name, as it gives it */"
  out[#out + 1] = "  const char *backend;"
  out[#out + 1] = ("  double size[%d];     /* in the order of ktlua_%s_size_names */")
    :format(math.max(#sizes, 1), id)
  for _, n in ipairs(names) do
    out[#out + 1] = ("  %s%s;%s"):format(c_types[kind[n]], members[n],
      members[n] == n and "" or " /* " .. comment_text(n) .. " */")
  end
  out[#out + 1] = "  const char *defines; /* compiler options that set the parameters, or NULL */"
  out[#out + 1] = "  double time_ms;"
  if #metrics > 0 then
    out[#out + 1] = ("  double metrics[%d]; /* in the order of ktlua_%s_metric_names; NAN: none */")
      :format(#metrics, id)
  end
  out[#out + 1] = "};"
  out[#out + 1] = ("static const struct ktlua_%s_config ktlua_%s_configs[] = {"):format(id, id)
  for _, e in ipairs(rows) do out[#out + 1] = row_text(e, names, kind, sizes, metrics) end
  if #rows == 0 then out[#out + 1] = "  {0}," end -- C has no empty array
  out[#out + 1] = "};"
  out[#out + 1] = ("#define KTLUA_%s_COUNT %d"):format(id:upper(), #rows)
  out[#out + 1] = SELECT:format(id, id, id, id:upper(), id, id, #sizes)
end

function header.write(entries, source)
  local out = {
    ("/* Tuned configurations, exported by ktlua %s%s. Generated: do not edit. */")
      :format(require("ktlua").version, source and " from " .. comment_text(source) or ""),
    "#ifndef KTLUA_TUNED_H", "#define KTLUA_TUNED_H", "", "#include <math.h>", "#include <string.h>",
  }
  local groups, order = E.by_kernel(entries)
  local ids = identifiers(order, kernel_usable, string.upper, false)
  for _, kernel in ipairs(order) do kernel_text(out, kernel, ids[kernel], groups[kernel]) end
  out[#out + 1] = "\n#endif"
  return table.concat(out, "\n") .. "\n"
end

return header
