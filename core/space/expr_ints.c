/*
** expr_ints.c: the machine for expressions that keep to integers.
**
** The bytecode becomes a tree whose nodes are C functions; a node reads
** operands that are names or constants directly and calls the function of
** any other. Each call site then sees few targets, which processors
** predict, where the one dispatch of a bytecode loop mispredicts: a check
** costs a few nanoseconds.
*/
#include <stdlib.h>

#include "expr_int.h"

typedef struct inode inode;

typedef struct ictx {
  const int64_t *v;
  kt_error *err;
  bool failed;
} ictx;

typedef enum ikind { K_CONST, K_VAR, K_NODE } ikind;

struct inode {
  int64_t (*eval)(const inode *n, ictx *c);
  ikind kind;
  int64_t k;      /* K_CONST */
  uint32_t var;   /* K_VAR */
  const inode *a, *b, *c; /* c: a conditional's else */
  const inode **args; /* calls: nargs operands */
  int nargs;
  expr_fn fn;
  int op;
  unsigned pos;
  unsigned depth; /* of the subtree: nodes on its longest path */
};

static inline int64_t val(const inode *x, ictx *c) {
  return x->kind == K_VAR ? c->v[x->var] : x->kind == K_CONST ? x->k : x->eval(x, c);
}

/* The first error stops the result, which is then ignored. */
static int64_t overflowed(const inode *n, ictx *c, const char *what) {
  if (!c->failed) expr_overflow(c->err, what ? what : expr_op_name(n->op), n->pos);
  c->failed = true;
  return 0;
}

static int64_t e_add(const inode *n, ictx *c) {
  int64_t r;
  return __builtin_add_overflow(val(n->a, c), val(n->b, c), &r) ? overflowed(n, c, NULL) : r;
}
static int64_t e_sub(const inode *n, ictx *c) {
  int64_t r;
  return __builtin_sub_overflow(val(n->a, c), val(n->b, c), &r) ? overflowed(n, c, NULL) : r;
}
static int64_t e_mul(const inode *n, ictx *c) {
  int64_t r;
  return __builtin_mul_overflow(val(n->a, c), val(n->b, c), &r) ? overflowed(n, c, NULL) : r;
}
static int64_t e_divmod(const inode *n, ictx *c) {
  int64_t a = val(n->a, c), b = val(n->b, c), q;
  if (b == 0) {
    if (!c->failed) expr_by_zero(c->err, n->op, n->pos, false);
    c->failed = true;
    return 0;
  }
  if (n->op == OP_MOD) return floor_mod(a, b);
  return floor_div(a, b, &q) ? q : overflowed(n, c, NULL);
}
static int64_t e_pow(const inode *n, ictx *c) {
  int64_t r;
  return int_pow(val(n->a, c), val(n->b, c), &r) ? r : overflowed(n, c, NULL);
}
static int64_t e_eq(const inode *n, ictx *c) { return val(n->a, c) == val(n->b, c); }
static int64_t e_ne(const inode *n, ictx *c) { return val(n->a, c) != val(n->b, c); }
static int64_t e_lt(const inode *n, ictx *c) { return val(n->a, c) < val(n->b, c); }
static int64_t e_le(const inode *n, ictx *c) { return val(n->a, c) <= val(n->b, c); }
static int64_t e_gt(const inode *n, ictx *c) { return val(n->a, c) > val(n->b, c); }
static int64_t e_ge(const inode *n, ictx *c) { return val(n->a, c) >= val(n->b, c); }
/* Python's and/or give the deciding operand. */
static int64_t e_and(const inode *n, ictx *c) {
  int64_t a = val(n->a, c);
  return a ? val(n->b, c) : a;
}
static int64_t e_or(const inode *n, ictx *c) {
  int64_t a = val(n->a, c);
  return a ? a : val(n->b, c);
}
/* b if a else c */
static int64_t e_if(const inode *n, ictx *c) { return val(n->a, c) ? val(n->b, c) : val(n->c, c); }
static int64_t e_not(const inode *n, ictx *c) { return !val(n->a, c); }
static int64_t e_neg(const inode *n, ictx *c) {
  int64_t r;
  return __builtin_sub_overflow((int64_t)0, val(n->a, c), &r) ? overflowed(n, c, NULL) : r;
}

/* min, max and abs; floor and ceil leave integers as they are. */
static int64_t e_call(const inode *n, ictx *c) {
  int64_t x = val(n->args[0], c);
  for (int k = 1; k < n->nargs; k++) {
    int64_t y = val(n->args[k], c);
    if (n->fn == FN_MIN ? y < x : y > x) x = y;
  }
  if (n->fn != FN_ABS || x >= 0) return x;
  return x == INT64_MIN ? overflowed(n, c, "abs") : -x;
}

static int64_t (*const evals[])(const inode *, ictx *) = {
    [OP_NEG] = e_neg, [OP_NOT] = e_not, [OP_ADD] = e_add, [OP_SUB] = e_sub, [OP_MUL] = e_mul,
    [OP_IDIV] = e_divmod, [OP_MOD] = e_divmod, [OP_EQ] = e_eq, [OP_NE] = e_ne, [OP_LT] = e_lt,
    [OP_LE] = e_le, [OP_GT] = e_gt, [OP_GE] = e_ge, [OP_AND] = e_and, [OP_OR] = e_or,
    [OP_CALL] = e_call, [OP_POW] = e_pow, [OP_JFALSE] = e_if};

/* ---- from bytecode to tree ---- */

/* Once its operands are known. */
static unsigned depth_of(const inode *n) {
  unsigned d = 0;
  const inode *abc[3] = {n->a, n->b, n->c};
  for (int k = 0; k < 3; k++)
    if (abc[k] && abc[k]->depth > d) d = abc[k]->depth;
  for (int k = 0; k < n->nargs; k++)
    if (n->args[k]->depth > d) d = n->args[k]->depth;
  return d + 1;
}

/* && and || wait for their right side: the jump target says where it
** ends. A conditional waits for its value (until its OP_JUMP, end unknown)
** and then for its else (until the jump's target). */
typedef struct pending {
  inode *node;
  uint32_t end;
} pending;

#define END_UNKNOWN UINT32_MAX

static void join_pending(inode **st, int *sp, pending *pd, int *np, size_t pc) {
  while (*np > 0 && pd[*np - 1].end == pc) {
    inode *n = pd[--*np].node;
    *(n->op == OP_JFALSE ? &n->c : &n->b) = st[(*sp)--];
    n->depth = depth_of(n);
    st[++*sp] = n;
  }
}

/* The jump at the end of a conditional's value: the innermost conditional
** waiting (jumps inside its value have ended) gets the value, and waits
** for its else. */
static void value_of_conditional(inode **st, int *sp, pending *pd, int np, uint32_t end) {
  pending *w = &pd[np - 1];
  w->node->b = st[(*sp)--];
  w->end = end;
}

static int make_node(const kt_expr *e, const expr_ins *in, inode *n, inode **st, int *sp,
                     kt_error *err) {
  n->pos = in->pos;
  n->op = in->op;
  n->kind = K_NODE;
  n->eval = evals[in->op];
  if (in->op == OP_CONST) n->kind = K_CONST, n->k = e->consts[in->arg].u.i;
  else if (in->op == OP_VAR) n->kind = K_VAR, n->var = in->arg;
  else if (in->op == OP_NEG || in->op == OP_NOT) n->a = st[(*sp)--];
  else if (in->op == OP_CALL) {
    *sp -= in->nargs;
    if (!(n->args = kt_calloc(in->nargs, sizeof *n->args, err))) return -1;
    for (int k = 0; k < in->nargs; k++) n->args[k] = st[*sp + 1 + k];
    n->nargs = in->nargs;
    n->fn = (expr_fn)in->arg;
  } else {
    n->b = st[(*sp)--];
    n->a = st[(*sp)--];
  }
  n->depth = depth_of(n);
  st[++*sp] = n;
  return 0;
}

/* Whether the ** at pc has a constant exponent >= 0 (the last instruction
** of an operand is its root): then it gives an integer for any integer. */
static bool const_exponent(const kt_expr *e, size_t pc) {
  const expr_ins *prev = &e->code[pc - 1];
  if (prev->op != OP_CONST) return false;
  const kt_value *k = &e->consts[prev->arg];
  return k->type == KT_VINT && k->u.i >= 0;
}

bool expr_keeps_to_ints(const kt_expr *e) {
  for (size_t i = 0; i < e->nconsts; i++)
    if (e->consts[i].type != KT_VINT) return false;
  for (size_t pc = 0; pc < e->ncode; pc++) {
    const expr_ins *in = &e->code[pc];
    if (in->op == OP_DIV || (in->op == OP_CALL && (in->arg == FN_SQRT || in->arg == FN_POW)))
      return false;
    if (in->op == OP_POW && !const_exponent(e, pc)) return false;
  }
  return true;
}

void expr_free_tree(kt_expr *e) {
  if (!e->tree) return;
  for (size_t i = 0; i < e->ncode; i++) free((void *)e->tree[i].args);
  free(e->tree);
  e->tree = NULL;
  e->root = NULL;
}

/* Jumps open at once: one per level of parentheses and more (a || b
** within a conditional's else), which the stack of values does not bound.
** An expression that opens more runs on the bytecode machine. */
#define PENDING_MAX (2 * EXPR_STACK)

int expr_build_tree(kt_expr *e, kt_error *err) {
  expr_free_tree(e);
  if (!expr_keeps_to_ints(e)) return 0;
  if (!(e->tree = kt_calloc(e->ncode, sizeof *e->tree, err))) return -1;
  inode *st[EXPR_STACK] = {NULL};
  pending pd[PENDING_MAX];
  int sp = -1, np = 0, rc = 0;
  bool too_many = false;
  for (size_t pc = 0; pc < e->ncode && rc == 0 && !too_many; pc++) {
    join_pending(st, &sp, pd, &np, pc);
    const expr_ins *in = &e->code[pc];
    inode *n = &e->tree[pc];
    if (in->op == OP_AND || in->op == OP_OR || in->op == OP_JFALSE) {
      if ((too_many = np == PENDING_MAX)) break;
      *n = (inode){.eval = evals[in->op], .kind = K_NODE, .a = st[sp--], .op = in->op};
      pd[np++] = (pending){n, in->op == OP_JFALSE ? END_UNKNOWN : in->arg};
    } else if (in->op == OP_JUMP) {
      value_of_conditional(st, &sp, pd, np, in->arg);
    } else {
      rc = make_node(e, in, n, st, &sp, err);
    }
  }
  if (rc || too_many) {
    expr_free_tree(e);
    return rc;
  }
  join_pending(st, &sp, pd, &np, e->ncode);
  e->root = st[0];
  if (e->root->depth > EXPR_TREE_DEPTH) expr_free_tree(e);
  return 0;
}

int kt_expr_test_ints(const kt_expr *e, const int64_t *vals, kt_error *err) {
  ictx c = {vals, err, false};
  int64_t r = val(e->root, &c);
  return c.failed ? -1 : r != 0;
}
