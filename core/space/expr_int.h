/*
** expr_int.h: the bytecode that expr_parse.c writes and expr.c runs.
**
** The code is postfix: operands push a value, operators pop theirs and
** push the result. && and || are jumps that keep the deciding value (an
** operand, as Python's and/or give), so the right side is only evaluated
** when it matters. Conditions are the integers 1 and 0 on the stack; any
** value is a condition by Python's truth (0, 0.0 and '' are false).
** a if c else b runs c; OP_JFALSE to b; a; OP_JUMP past b; b.
*/
#ifndef KT_EXPR_INT_H
#define KT_EXPR_INT_H

#include "expr.h"

/* The deepest stack an expression may need (nesting beyond is refused). */
#define EXPR_STACK 64
/* The deepest nesting of parentheses, calls and unary operators, which the
** parser follows by recursion on the C stack ("((((A))))" and "- - -A"
** need no stack of values). */
#define EXPR_NESTING 100
/* The deepest tree the integer machine walks by recursion; a deeper one
** (a long chain such as A+B+...+Z) runs on the bytecode machine instead. */
#define EXPR_TREE_DEPTH 1000
/* The most instructions that chained comparisons and 'in' lists may add by
** repeating an operand ("1 <= A <= 2" reads A twice), so that nesting them
** cannot blow an expression up exponentially. */
#define EXPR_COPIES_MAX ((size_t)1 << 20)

typedef enum expr_op {
  OP_CONST, OP_VAR, OP_NEG, OP_NOT,
  OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_IDIV, OP_MOD,
  OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
  OP_AND, OP_OR, /* jump to arg when the top decides, else pop it */
  OP_CALL,       /* function arg with nargs arguments */
  OP_POW,        /* Python's **: integers stay integers for exponents >= 0 */
  OP_JFALSE,     /* pops a value; jumps to arg when it is false */
  OP_JUMP        /* jumps to arg */
} expr_op;

static inline bool expr_is_jump(int op) {
  return op == OP_AND || op == OP_OR || op == OP_JFALSE || op == OP_JUMP;
}

/* Python's truth of a value. */
static inline bool expr_truthy(const kt_value *v) {
  return v->type == KT_VINT ? v->u.i != 0 : v->type == KT_VFLOAT ? v->u.f != 0 : v->u.s[0] != '\0';
}

typedef enum expr_fn { FN_MIN, FN_MAX, FN_ABS, FN_FLOOR, FN_CEIL, FN_SQRT, FN_POW } expr_fn;

typedef struct expr_ins {
  uint8_t op;
  uint8_t nargs;  /* OP_CALL: arguments; OP_VAR: 1 when read as a number */
  uint16_t pos;   /* 1-based character, for errors at run time */
  uint32_t arg;   /* constant, name, jump target or function */
} expr_ins;

typedef struct expr_var {
  char *name;
  size_t pos;
  bool numeric;
} expr_var;

struct kt_expr {
  char *text;
  expr_ins *code;
  size_t ncode, capcode;
  kt_value *consts; /* strings owned */
  size_t nconsts, capconsts;
  expr_var *vars;
  size_t nvars, capvars;
  bool condition;
  struct inode *tree;       /* the machine for integers (expr_ints.c), */
  const struct inode *root; /* a node per instruction */
};

int expr_add_const(kt_expr *e, const kt_value *v, uint32_t *index, kt_error *err);
/* The error of a /, // or % by zero at character pos, on integers or floats. */
int expr_by_zero(kt_error *err, int op, unsigned pos, bool floats);
/* No float constant, no /, sqrt or pow: integers in, integers out. */
bool expr_keeps_to_ints(const kt_expr *e);
/* (Re)builds or frees the tree that kt_expr_test_ints walks: none when the
** expression does not keep to integers or is deeper than EXPR_TREE_DEPTH. */
int expr_build_tree(kt_expr *e, kt_error *err);
void expr_free_tree(kt_expr *e);

/* A string literal at text + pos in Python's syntax (expr_string.c): *len
** is its length in the text, prefix and quotes included; with value, also
** its value (malloc'd, the caller's). Errors name the character. */
int expr_string(const char *text, size_t pos, size_t *len, char **value, kt_error *err);
/* The length of a string prefix (r, u, ...) at s that a quote follows;
** 0 when there is none. */
size_t expr_string_prefix(const char *s);

/* Python's float arithmetic (expr_num.c): % and // (b != 0), int / int
** rounded once (b != 0), ** and pow (errors name the character and what
** computes), and math.floor and math.ceil of a whole float. */
double expr_float_mod(double a, double b);
double expr_float_floordiv(double a, double b);
double expr_int_div(int64_t a, int64_t b);
int expr_float_pow(double x, double y, double *out, unsigned pos, const char *what,
                   kt_error *err);
int expr_float_to_int(double f, const char *what, unsigned pos, int64_t *out, kt_error *err);

/* The error of an integer result beyond 64 bits, at character pos: what
** is the operator or function ("'+'", "abs"). */
int expr_overflow(kt_error *err, const char *what, unsigned pos);
/* The operator's name in errors: "'+'", "'**'", "unary '-'". */
const char *expr_op_name(int op);

/* Tuning parameters are small and positive: 32-bit division is faster
** than 64-bit division on common processors. */
static inline bool small(int64_t a, int64_t b) {
  return (uint64_t)a <= UINT32_MAX && (uint64_t)b <= UINT32_MAX;
}

/* Python's // on integers (b != 0): rounding down; false when the quotient
** does not fit (INT64_MIN // -1). */
static inline bool floor_div(int64_t a, int64_t b, int64_t *q) {
  if (small(a, b)) {
    *q = (uint32_t)a / (uint32_t)b;
    return true;
  }
  if (b == -1) return !__builtin_sub_overflow((int64_t)0, a, q);
  *q = a / b;
  if (a % b != 0 && (a < 0) != (b < 0)) (*q)--;
  return true;
}

/* x ** y for y >= 0; false when it does not fit in 64 bits. */
static inline bool int_pow(int64_t x, int64_t y, int64_t *out) {
  int64_t r = 1;
  while (y > 0) {
    if ((y & 1) && __builtin_mul_overflow(r, x, &r)) return false;
    y >>= 1;
    if (y > 0 && __builtin_mul_overflow(x, x, &x)) return false;
  }
  *out = r;
  return true;
}

/* Python's % on integers (b != 0): the sign of b. */
static inline int64_t floor_mod(int64_t a, int64_t b) {
  if (small(a, b)) return (uint32_t)a % (uint32_t)b;
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && (r < 0) != (b < 0)) r += b;
  return r;
}

#endif
