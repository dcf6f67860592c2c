/*
** expr.h: expressions over named values, as constraints and sizes are
** written ("MWG % (MDIMC*VWM) == 0", "(MWG + NWG) * KWG * 4"). A text is
** parsed once into bytecode for a small stack machine that evaluates it
** without allocating, in nanoseconds rather than the cost of a Lua call.
**
** Syntax (the C and the Lua spellings are both accepted):
**   numbers     12  0x1F  1.5  2e3        strings  "float"  'float'
**   booleans    true  false               names    parameters or constants
**   booleans    also True  False (Python)
**   arithmetic  + - * / // % ** and unary -
**   comparison  == != ~= < <= > >=        (chained as in Python:
**               1 <= A <= 8 is 1 <= A and A <= 8)
**   membership  A in [1, 2, 4]  A not in (3, 5)
**   logic       && and   || or   ! not    (short-circuit; and/or give the
**               deciding operand, as Python's; not binds as in Python:
**               not A == 1 is not (A == 1))
**   conditional a if c else b            (Python's: below or, right to left)
** Any value is a condition by Python's truth (0, 0.0 and '' are false),
** and a condition is the number 1 or 0.
**   functions   min(a, b, ...) max(a, b, ...) abs(x) floor(x) ceil(x)
**               sqrt(x) pow(x, y)
** ** is Python's: right to left, above unary minus on its left (-2 ** 2 is
** -4); integers with an exponent >= 0 give integers, other operands a
** float, as pow does.
** Numbers are Lua 5.4's integers and floats, computed as Python computes
** them (expr_num.c): integers stay integers under + - * // %, while / and
** pow give floats; // rounds down and % takes the sign of the divisor, on
** floats too (Python's float // and %, not floor(a / b)); int / int is
** rounded once. Errors are Python's, and where Python would go on with an
** integer beyond 64 bits ktlua stops: such a result (Python's have no
** bound; Lua's wrap around), floor or ceil beyond them (or of inf, nan), a
** /, // or % by zero (integer or float), 0 to a negative power, a
** negative number to a fractional power (finite ones: Python's complex
** numbers), a float ** beyond the floats and sqrt of a negative number
** are errors that name the character. An 'in' list is evaluated whole.
** Strings are Python's literals (expr_string.c).
** Types are checked when parsing: arithmetic and ordering take numbers
** (conditions are numbers), strings are only compared for (in)equality;
** a string that and, or or a conditional gives where a number is needed
** is an error at run time.
*/
#ifndef KT_EXPR_H
#define KT_EXPR_H

#include "kt.h"

typedef struct kt_expr kt_expr;

/* A name with a value, for constants that an expression may use. */
typedef struct kt_named_value {
  const char *name;
  kt_value value;
} kt_named_value;

/* A parse error says at which character (1-based) and why. */
kt_expr *kt_expr_parse(const char *text, kt_error *err);
void kt_expr_free(void *e);
/* Parses the longest expression from text + start, stopping before the
** first token that cannot continue it (a ',', a ']', a name such as 'for');
** *end is that token's offset. Positions in errors count from text. With
** no_if, the expression is no conditional (a if c else b) but what Python
** reads after a comprehension's 'if', which an 'if' ends. */
kt_expr *kt_expr_parse_part(const char *text, size_t start, size_t *end, bool no_if,
                            kt_error *err);

const char *kt_expr_text(const kt_expr *e);
/* true when the expression is a condition (true or false), false when it
** computes a number (or a string). */
bool kt_expr_is_condition(const kt_expr *e);

/* The names the expression reads, in order of first use. */
size_t kt_expr_nvars(const kt_expr *e);
const char *kt_expr_var(const kt_expr *e, size_t i);
/* The character (1-based) where the name is first used. */
size_t kt_expr_var_pos(const kt_expr *e, size_t i);
/* Whether the name is used as a number somewhere (not only compared). */
bool kt_expr_var_numeric(const kt_expr *e, size_t i);

/* Replaces the names that consts lists by their values; the names left
** keep their order and are numbered from 0 again. Unused constants are
** ignored. */
int kt_expr_bind(kt_expr *e, const kt_named_value *consts, size_t n, kt_error *err);

/* vals[i] is the value of name i. Conditions give the integer 1 or 0. */
int kt_expr_eval(const kt_expr *e, const kt_value *const *vals, kt_value *out,
                 kt_error *err);
/* A condition: 1 when true, 0 when false, -1 on error. */
int kt_expr_test(const kt_expr *e, const kt_value *const *vals, kt_error *err);

/* Whether the expression keeps to integers when its names are integers
** (no /, sqrt or pow, no float or string constant) and is not deeper than
** the integer machine goes: then kt_expr_test_ints may evaluate it on
** integers alone, several times faster, with the same results. */
bool kt_expr_integer(const kt_expr *e);
int kt_expr_test_ints(const kt_expr *e, const int64_t *vals, kt_error *err);

/* Parameter values written as a Python list ("[2**i for i in range(5, 11)]",
** "[1] + list(range(2, 8, 2))"): list literals, range(), list(), + and
** comprehensions, evaluated by expr_list.c without running Python. *out
** (strings included) is the caller's, freed by kt_values_free. At most
** KT_LIST_MAX values; errors name the character. */
#define KT_LIST_MAX ((size_t)1 << 20)
int kt_expr_list(const char *text, kt_value **out, size_t *n, kt_error *err);
void kt_values_free(kt_value *v, size_t n);

#endif
