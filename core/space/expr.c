/*
** expr.c: expressions after parsing: their names, constants bound by the
** caller, and the stack machine that evaluates them.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expr_int.h"

void kt_expr_free(void *ud) {
  kt_expr *e = ud;
  if (!e) return;
  for (size_t i = 0; i < e->nconsts; i++)
    if (e->consts[i].type == KT_VSTRING) free(e->consts[i].u.s);
  for (size_t i = 0; i < e->nvars; i++) free(e->vars[i].name);
  free(e->consts);
  free(e->vars);
  expr_free_tree(e);
  free(e->code);
  free(e->text);
  free(e);
}

const char *kt_expr_text(const kt_expr *e) { return e->text; }
bool kt_expr_is_condition(const kt_expr *e) { return e->condition; }
size_t kt_expr_nvars(const kt_expr *e) { return e->nvars; }
const char *kt_expr_var(const kt_expr *e, size_t i) { return e->vars[i].name; }
size_t kt_expr_var_pos(const kt_expr *e, size_t i) { return e->vars[i].pos; }
bool kt_expr_var_numeric(const kt_expr *e, size_t i) { return e->vars[i].numeric; }

int expr_add_const(kt_expr *e, const kt_value *v, uint32_t *index, kt_error *err) {
  if (kt_grow(&e->consts, &e->capconsts, e->nconsts + 1, sizeof *e->consts, err)) return -1;
  kt_value *c = &e->consts[e->nconsts];
  *c = *v;
  if (v->type == KT_VSTRING && !(c->u.s = kt_strdup(v->u.s, err))) return -1;
  *index = (uint32_t)e->nconsts++;
  return 0;
}

/* ---- constants ---- */

static const kt_named_value *find_const(const kt_named_value *consts, size_t n,
                                        const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(consts[i].name, name) == 0) return &consts[i];
  return NULL;
}

/* Reads of name `from` become reads of constant k (k >= 0) or of name k. */
static void redirect(kt_expr *e, uint32_t from, bool to_const, uint32_t k) {
  for (size_t pc = 0; pc < e->ncode; pc++) {
    expr_ins *in = &e->code[pc];
    if (in->op != OP_VAR || in->arg != from) continue;
    in->arg = k;
    if (to_const) in->op = OP_CONST;
  }
}

int kt_expr_bind(kt_expr *e, const kt_named_value *consts, size_t n, kt_error *err) {
  size_t kept = 0;
  for (size_t i = 0; i < e->nvars; i++) {
    expr_var *v = &e->vars[i];
    const kt_named_value *c = find_const(consts, n, v->name);
    if (!c) {
      redirect(e, (uint32_t)i, false, (uint32_t)kept);
      e->vars[kept++] = *v;
      continue;
    }
    if (v->numeric && c->value.type == KT_VSTRING)
      return kt_fail(err, "at character %zu: '%s' is used as a number but is the string "
                          "constant \"%s\"", v->pos, v->name, c->value.u.s);
    uint32_t k;
    if (expr_add_const(e, &c->value, &k, err)) return -1;
    redirect(e, (uint32_t)i, true, k);
    free(v->name);
  }
  e->nvars = kept;
  return expr_build_tree(e, err);
}

/* ---- numbers: Lua 5.4's integers and floats, Python's arithmetic (expr_num.c) ---- */

static double num(const kt_value *v) { return v->type == KT_VINT ? (double)v->u.i : v->u.f; }
static bool ints(const kt_value *a, const kt_value *b) {
  return a->type == KT_VINT && b->type == KT_VINT;
}
static kt_value vint(int64_t i) { return (kt_value){.type = KT_VINT, .u.i = i}; }
static kt_value vfloat(double f) { return (kt_value){.type = KT_VFLOAT, .u.f = f}; }


/* An integer against a float, exactly as Lua compares them (converting
** the integer would round above 2^53): -1, 0 or 1, or 2 when f is NaN. */
static int order_int_float(int64_t i, double f) {
  if (isnan(f)) return 2;
  if (f >= 9223372036854775808.0) return -1;
  if (f < -9223372036854775808.0) return 1;
  double whole = floor(f);
  int64_t fi = (int64_t)whole;
  if (i != fi) return i < fi ? -1 : 1;
  return f > whole ? -1 : 0;
}

/* -1, 0, 1, or 2 when unordered (NaN). */
static int order(const kt_value *a, const kt_value *b) {
  if (ints(a, b)) return a->u.i < b->u.i ? -1 : a->u.i > b->u.i;
  if (a->type == KT_VINT) return order_int_float(a->u.i, b->u.f);
  if (b->type == KT_VINT) {
    int o = order_int_float(b->u.i, a->u.f);
    return o == 2 ? 2 : -o;
  }
  return a->u.f < b->u.f ? -1 : a->u.f > b->u.f ? 1 : a->u.f == b->u.f ? 0 : 2;
}

static bool less(const kt_value *a, const kt_value *b) { return order(a, b) == -1; }

static bool less_equal(const kt_value *a, const kt_value *b) {
  int o = order(a, b);
  return o == -1 || o == 0;
}

static bool equal(const kt_value *a, const kt_value *b) {
  if (a->type == KT_VSTRING || b->type == KT_VSTRING)
    return a->type == b->type && strcmp(a->u.s, b->u.s) == 0;
  return order(a, b) == 0;
}

/* ---- the machine ---- */

static int arith_ints(const expr_ins *in, int64_t *a, int64_t b, kt_error *err);

static int float_pow(double x, double y, kt_value *out, unsigned pos, const char *what,
                     kt_error *err) {
  out->type = KT_VFLOAT;
  return expr_float_pow(x, y, &out->u.f, pos, what, err);
}

static int arith(const expr_ins *in, kt_value *a, const kt_value *b, kt_error *err) {
  bool float_pow_op = in->op == OP_POW && b->type == KT_VINT && b->u.i < 0; /* 2 ** -1 */
  if (ints(a, b) && in->op != OP_DIV && !float_pow_op)
    return arith_ints(in, &a->u.i, b->u.i, err);
  double x = num(a), y = num(b);
  switch ((expr_op)in->op) {
    case OP_ADD: *a = vfloat(x + y); return 0;
    case OP_SUB: *a = vfloat(x - y); return 0;
    case OP_MUL: *a = vfloat(x * y); return 0;
    case OP_POW: return float_pow(x, y, a, in->pos, "'**'", err);
    default: break;
  }
  if (y == 0) return expr_by_zero(err, in->op, in->pos, true); /* int / int is "division" too */
  if (in->op == OP_DIV) *a = vfloat(ints(a, b) ? expr_int_div(a->u.i, b->u.i) : x / y);
  else *a = vfloat(in->op == OP_IDIV ? expr_float_floordiv(x, y) : expr_float_mod(x, y));
  return 0;
}

static bool compare(expr_op op, const kt_value *a, const kt_value *b) {
  switch (op) {
    case OP_EQ: return equal(a, b);
    case OP_NE: return !equal(a, b);
    case OP_LT: return less(a, b);
    case OP_LE: return less_equal(a, b);
    case OP_GT: return less(b, a);
    default: return less_equal(b, a);
  }
}

/* The function's arguments are args[0 .. n-1]; the result goes to args[0]. */
static int call(const expr_ins *in, kt_value *args, kt_error *err) {
  kt_value *x = &args[0];
  switch ((expr_fn)in->arg) {
    case FN_MIN:
    case FN_MAX:
      for (int k = 1; k < in->nargs; k++)
        if (in->arg == FN_MIN ? less(&args[k], x) : less(x, &args[k])) *x = args[k];
      break;
    case FN_ABS:
      if (x->type == KT_VFLOAT) *x = vfloat(fabs(x->u.f));
      else if (x->u.i == INT64_MIN) return expr_overflow(err, "abs", in->pos);
      else if (x->u.i < 0) x->u.i = -x->u.i;
      break;
    case FN_FLOOR:
    case FN_CEIL:
      if (x->type == KT_VFLOAT) {
        double whole = in->arg == FN_FLOOR ? floor(x->u.f) : ceil(x->u.f);
        const char *what = in->arg == FN_FLOOR ? "floor" : "ceil";
        if (expr_float_to_int(whole, what, in->pos, &x->u.i, err)) return -1;
        x->type = KT_VINT;
      }
      break;
    case FN_SQRT:
      if (num(x) < 0)
        return kt_fail(err, "at character %u: sqrt of the negative number %g", (unsigned)in->pos,
                       num(x));
      *x = vfloat(sqrt(num(x)));
      break;
    case FN_POW: return float_pow(num(x), num(&args[1]), x, in->pos, "pow", err);
  }
  return 0;
}

/* An operand that the types allowed when parsing but is a string now
** (the value of an and, or or conditional expression, Python's values). */
static int not_a_number(const expr_ins *in, const kt_value *v, kt_error *err) {
  return kt_fail(err, "at character %u: %s takes numbers, not the string \"%s\"",
                 (unsigned)in->pos, in->op == OP_CALL ? "the function" : expr_op_name(in->op),
                 v->u.s);
}

/* Whether the instruction takes numbers and one of its n operands at v is
** a string: then err is set. */
static bool strings_refused(const expr_ins *in, const kt_value *v, int n, kt_error *err) {
  if (in->op == OP_EQ || in->op == OP_NE) return false;
  for (int k = 0; k < n; k++)
    if (v[k].type == KT_VSTRING) return not_a_number(in, &v[k], err), true;
  return false;
}

static int load(const kt_expr *e, const expr_ins *in, const kt_value *v, kt_value *to,
                kt_error *err) {
  if (in->nargs && v->type == KT_VSTRING)
    return kt_fail(err, "at character %u: %s is the string \"%s\" where a number is needed",
                   (unsigned)in->pos, e->vars[in->arg].name, v->u.s);
  *to = *v;
  return 0;
}

int kt_expr_eval(const kt_expr *e, const kt_value *const *vals, kt_value *out,
                 kt_error *err) {
  kt_value st[EXPR_STACK];
  int sp = -1;
  for (size_t pc = 0; pc < e->ncode; pc++) {
    const expr_ins *in = &e->code[pc];
    switch ((expr_op)in->op) {
      case OP_CONST: st[++sp] = e->consts[in->arg]; break;
      case OP_VAR: if (load(e, in, vals[in->arg], &st[++sp], err)) return -1; break;
      case OP_NEG:
        if (strings_refused(in, &st[sp], 1, err)) return -1;
        if (st[sp].type == KT_VFLOAT) st[sp].u.f = -st[sp].u.f;
        else if (__builtin_sub_overflow((int64_t)0, st[sp].u.i, &st[sp].u.i))
          return expr_overflow(err, expr_op_name(OP_NEG), in->pos);
        break;
      case OP_NOT: st[sp] = vint(!expr_truthy(&st[sp])); break;
      case OP_AND: if (!expr_truthy(&st[sp])) pc = in->arg - 1; else sp--; break;
      case OP_OR: if (expr_truthy(&st[sp])) pc = in->arg - 1; else sp--; break;
      case OP_JFALSE: if (!expr_truthy(&st[sp--])) pc = in->arg - 1; break;
      case OP_JUMP: pc = in->arg - 1; break;
      case OP_CALL:
        sp -= in->nargs - 1;
        if (strings_refused(in, &st[sp], in->nargs, err) || call(in, &st[sp], err)) return -1;
        break;
      case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
        sp--;
        if (strings_refused(in, &st[sp], 2, err)) return -1;
        st[sp] = vint(compare((expr_op)in->op, &st[sp], &st[sp + 1]));
        break;
      default:
        sp--;
        if (strings_refused(in, &st[sp], 2, err) || arith(in, &st[sp], &st[sp + 1], err))
          return -1;
        break;
    }
  }
  *out = st[0];
  return 0;
}

int kt_expr_test(const kt_expr *e, const kt_value *const *vals, kt_error *err) {
  kt_value v;
  if (kt_expr_eval(e, vals, &v, err)) return -1;
  return expr_truthy(&v);
}

/* ---- the machine for integers alone ---- */

bool kt_expr_integer(const kt_expr *e) { return e->root != NULL; }

static int arith_ints(const expr_ins *in, int64_t *a, int64_t b, kt_error *err) {
  bool fits;
  switch ((expr_op)in->op) {
    case OP_ADD: fits = !__builtin_add_overflow(*a, b, a); break;
    case OP_SUB: fits = !__builtin_sub_overflow(*a, b, a); break;
    case OP_MUL: fits = !__builtin_mul_overflow(*a, b, a); break;
    case OP_POW: fits = int_pow(*a, b, a); break;
    default:
      if (b == 0) return expr_by_zero(err, in->op, in->pos, false);
      if (in->op == OP_MOD) {
        *a = floor_mod(*a, b);
        return 0;
      }
      fits = floor_div(*a, b, a);
  }
  return fits ? 0 : expr_overflow(err, expr_op_name(in->op), in->pos);
}
