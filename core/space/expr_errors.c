/*
** expr_errors.c: the errors that both machines of expressions give
** (expr.c, the stack machine; expr_ints.c, the tree for integers), below
** both so that neither calls the other for them.
*/
#include "expr_int.h"

const char *expr_op_name(int op) {
  static const char *const names[] = {
      [OP_ADD] = "'+'", [OP_SUB] = "'-'", [OP_MUL] = "'*'", [OP_DIV] = "'/'", [OP_IDIV] = "'//'",
      [OP_MOD] = "'%'", [OP_POW] = "'**'", [OP_NEG] = "unary '-'", [OP_LT] = "'<'",
      [OP_LE] = "'<='", [OP_GT] = "'>'", [OP_GE] = "'>='"};
  const char *name = op >= 0 && (size_t)op < sizeof names / sizeof names[0] ? names[op] : NULL;
  return name ? name : "an operator";
}

int expr_overflow(kt_error *err, const char *what, unsigned pos) {
  return kt_fail(err, "at character %u: integer overflow in %s: the result does not fit in "
                      "64 bits", pos, what);
}

/* Python's ZeroDivisionError, in its words. */
int expr_by_zero(kt_error *err, int op, unsigned pos, bool floats) {
  const char *what = op == OP_DIV   ? "division"
                     : op == OP_MOD ? floats ? "float modulo" : "integer modulo"
                     : floats       ? "float floor division"
                                    : "integer division";
  return kt_fail(err, "at character %u: %s by zero", pos, what);
}
