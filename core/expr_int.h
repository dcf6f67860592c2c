/*
** expr_int.h: the bytecode that expr_parse.c writes and expr.c runs.
**
** The code is postfix: operands push a value, operators pop theirs and
** push the result. && and || are jumps that keep the deciding value, so
** the right side is only evaluated when it matters. Conditions are the
** integers 1 and 0 on the stack.
*/
#ifndef KT_EXPR_INT_H
#define KT_EXPR_INT_H

#include "expr.h"

/* The deepest stack an expression may need (nesting beyond is refused). */
#define EXPR_STACK 64

typedef enum expr_op {
  OP_CONST, OP_VAR, OP_NEG, OP_NOT,
  OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_IDIV, OP_MOD,
  OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
  OP_AND, OP_OR, /* jump to arg when the top decides, else pop it */
  OP_CALL        /* function arg with nargs arguments */
} expr_op;

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
};

int expr_add_const(kt_expr *e, const kt_value *v, uint32_t *index, kt_error *err);

#endif
