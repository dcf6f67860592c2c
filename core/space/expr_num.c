/*
** expr_num.c: the arithmetic on floats (and int / int) as Python 3 does
** it, operator by operator, so that a constraint or a T1 value computed
** here is the number Python computes (spec/fuzz_spec.lua compares the two
** on generated expressions). C's operators and Lua's part from Python in
** the sign of a float %, in float // (Python rounds the exact quotient of
** fmod, not the rounded a / b), in int / int beyond 2^53 (Python rounds
** the exact quotient once) and at infinities.
*/
#include <math.h>

#include "expr_int.h"

/* Python's float_rem: fmod, then the sign of the divisor (b != 0); a zero
** takes the divisor's sign too (0.0 % -5 is -0.0). */
double expr_float_mod(double a, double b) {
  double m = fmod(a, b);
  if (m == 0) return copysign(0.0, b);
  if ((b < 0) != (m < 0)) m += b;
  return m;
}

/* Python's _float_div_mod: the quotient of the exact a - fmod(a, b),
** snapped to the nearest whole number (b != 0). floor(a / b) would round
** a / b first: 1 // 0.1 is 9.0 in Python, floor(1 / 0.1) 10. */
double expr_float_floordiv(double a, double b) {
  double m = fmod(a, b);
  double div = (a - m) / b;
  if (m != 0 && (b < 0) != (m < 0)) div -= 1.0; /* NaN is no zero: it goes this way too */
  if (div == 0) return copysign(0.0, a / b);
  double q = floor(div);
  if (div - q > 0.5) q += 1.0;
  return q;
}

#define TWO_53 ((uint64_t)1 << 53)
#define TWO_55 ((uint64_t)1 << 55)

static uint64_t magnitude(int64_t v) { return v < 0 ? -(uint64_t)v : (uint64_t)v; }

/* a / b on integers rounded once, as Python's true division (b != 0):
** converting each to a double first would round three times. The
** quotient is taken to at least 56 bits, a bit below the rounding place
** set when anything remains (sticky), and the conversion of that integer
** to a double rounds it to nearest, ties to even. */
double expr_int_div(int64_t a, int64_t b) {
  uint64_t x = magnitude(a), y = magnitude(b);
  /* exact operands: one rounding (and 0 / -5 is -0.0, as in Python) */
  if ((x <= TWO_53 && y <= TWO_53) || x == 0) return (double)a / (double)b;
  uint64_t q = x / y, r = x % y;
  int shift = 0;
  while (q < TWO_55) { /* r < y <= 2^63: 2r fits */
    r <<= 1;
    q <<= 1;
    if (r >= y) q |= 1, r -= y;
    shift++;
  }
  double f = ldexp((double)(q | (r != 0)), -shift);
  return (a < 0) != (b < 0) ? -f : f;
}

/* x ** y on floats, and pow(x, y): where Python raises an error rather
** than give a number, so does this. Infinities and NaN give C99's values,
** which are Python's (0.0 ** -inf is inf, (-inf) ** 0.5 is inf). */
int expr_float_pow(double x, double y, double *out, unsigned pos, const char *what,
                   kt_error *err) {
  bool finite = isfinite(x) && isfinite(y);
  if (finite && x == 0 && y < 0)
    return kt_fail(err, "at character %u: %s: 0 cannot be raised to a negative power", pos, what);
  if (finite && x < 0 && y != floor(y))
    return kt_fail(err, "at character %u: %s: a negative number to a fractional power "
                        "((%g) ** %g) is a complex number", pos, what, x, y);
  double r = pow(x, y);
  if (finite && isinf(r))
    return kt_fail(err, "at character %u: %s: the result is too large for a float", pos, what);
  *out = r;
  return 0;
}

/* math.floor and math.ceil of a float: an integer, or an error where
** Python's would not fit in 64 bits or where Python raises one (an
** infinity, NaN). f is already whole. */
int expr_float_to_int(double f, const char *what, unsigned pos, int64_t *out, kt_error *err) {
  if (isnan(f) || isinf(f))
    return kt_fail(err, "at character %u: %s: the float %s has no integer value", pos, what,
                   isnan(f) ? "nan" : f > 0 ? "inf" : "-inf");
  if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0))
    return expr_overflow(err, what, pos);
  *out = (int64_t)f;
  return 0;
}
