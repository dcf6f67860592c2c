-- ktlua.values: the value lists that tuning spaces keep asking for, also
-- found in the ktlua module itself:
--   kt.divisors(n)            the divisors of n, ascending
--   kt.pow2(lo, hi)           the powers of two from lo to hi
--   kt.multiples(k, lo, hi)   the multiples of k from lo to hi
-- Arguments are positive integers; a range with no value in it is an
-- error, since a parameter needs at least one value. So is a list longer
-- than values.MAX (said before it is built), and a number that divisors
-- cannot factor by trial division up to values.TRIAL (every n below
-- TRIAL^2 = 2^48 factors, in a tenth of a second at most).

local values = { MAX = 1 << 20, TRIAL = 1 << 24 }

local function check(fname, i, v)
  if math.type(v) ~= "integer" or v < 1 then
    local got = type(v) == "number" and tostring(v) or type(v)
    error(("bad argument #%d to '%s' (positive integer expected, got %s)"):format(i, fname, got), 3)
  end
end

-- Raised by the generators themselves (a call, not a tail call), so that
-- the position is their caller's.
local function none(fname, what)
  error(("%s: %s"):format(fname, what), 3)
end

-- The prime factors of n as {p, e} pairs, by trial division. What is left
-- after the divisors up to TRIAL is 1 or a prime when it is below TRIAL^2;
-- otherwise the factoring gives up (nil).
local function factors(n)
  local list, m, d = {}, n, 2
  while d * d <= m do
    if d > values.TRIAL then return nil, m end
    if m % d == 0 then
      local e = 0
      repeat m, e = m // d, e + 1 until m % d ~= 0
      list[#list + 1] = { d, e }
    end
    d = d == 2 and 3 or d + 2
  end
  if m > 1 then list[#list + 1] = { m, 1 } end
  return list
end

function values.divisors(n)
  check("divisors", 1, n)
  local primes, left = factors(n)
  if not primes then
    error(("divisors: %d is too large to factor: it keeps a part %d with no factor up to %d")
      :format(n, left, values.TRIAL), 2)
  end
  local list = { 1 }
  for _, pe in ipairs(primes) do
    local p, e, count = pe[1], pe[2], #list
    local power = 1
    for _ = 1, e do
      power = power * p
      for i = 1, count do list[#list + 1] = list[i] * power end
    end
  end
  table.sort(list)
  return list
end

function values.pow2(lo, hi)
  check("pow2", 1, lo)
  check("pow2", 2, hi)
  local list, p = {}, 1
  while p < lo and p <= math.maxinteger // 2 do p = p * 2 end
  while p >= lo and p <= hi do
    list[#list + 1] = p
    if p > math.maxinteger // 2 then break end
    p = p * 2
  end
  if #list == 0 then none("pow2", ("no power of two from %d to %d"):format(lo, hi)) end
  return list
end

function values.multiples(k, lo, hi)
  check("multiples", 1, k)
  check("multiples", 2, lo)
  check("multiples", 3, hi)
  -- q * k for q from first to last, computed without overflowing
  local first, last = lo // k, hi // k
  if first * k < lo then first = first + 1 end
  local count = last - first + 1
  if count > values.MAX then
    error(("multiples: %d to %d holds %d multiples of %d, more than a list takes (%d)")
      :format(lo, hi, count, k, values.MAX), 2)
  end
  if count < 1 then none("multiples", ("no multiple of %d from %d to %d"):format(k, lo, hi)) end
  local list = {}
  for q = first, last do list[#list + 1] = q * k end
  return list
end

return values
