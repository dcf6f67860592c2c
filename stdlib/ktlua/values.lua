-- ktlua.values: the value lists that tuning spaces keep asking for, also
-- found in the ktlua module itself:
--   kt.divisors(n)            the divisors of n, ascending
--   kt.pow2(lo, hi)           the powers of two from lo to hi
--   kt.multiples(k, lo, hi)   the multiples of k from lo to hi
-- Arguments are positive integers; a range with no value in it is an
-- error, since a parameter needs at least one value.

local values = {}

local function check(fname, i, v)
  if math.type(v) ~= "integer" or v < 1 then
    local got = type(v) == "number" and tostring(v) or type(v)
    error(("bad argument #%d to '%s' (positive integer expected, got %s)"):format(i, fname, got), 3)
  end
end

local function nonempty(fname, list, what)
  if #list == 0 then error(("%s: %s"):format(fname, what), 3) end
  return list
end

function values.divisors(n)
  check("divisors", 1, n)
  local low, high = {}, {}
  local d = 1
  while d * d <= n do
    if n % d == 0 then
      low[#low + 1] = d
      if d * d ~= n then table.insert(high, 1, n // d) end
    end
    d = d + 1
  end
  table.move(high, 1, #high, #low + 1, low)
  return low
end

function values.pow2(lo, hi)
  check("pow2", 1, lo)
  check("pow2", 2, hi)
  local list, p = {}, 1
  while p < lo do p = p * 2 end
  while p <= hi do
    list[#list + 1] = p
    if p > math.maxinteger // 2 then break end
    p = p * 2
  end
  return nonempty("pow2", list, ("no power of two from %d to %d"):format(lo, hi))
end

function values.multiples(k, lo, hi)
  check("multiples", 1, k)
  check("multiples", 2, lo)
  check("multiples", 3, hi)
  local list = {}
  for m = (lo + k - 1) // k * k, hi, k do list[#list + 1] = m end
  return nonempty("multiples", list, ("no multiple of %d from %d to %d"):format(k, lo, hi))
end

return values
