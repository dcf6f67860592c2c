/*
** size_expr.c: thread sizes given by expressions (size_expr.h).
*/
#include "size_expr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "expr.h"

/* Most names an expression may read: its values' pointers live on the stack. */
#define MOST_NAMES 64

typedef struct size_expr {
  kt_expr *e;
  size_t n;
  int param[MOST_NAMES]; /* the parameter of each name the expression reads */
} size_expr;

static void size_expr_free(void *ud) {
  size_expr *x = ud;
  if (x) kt_expr_free(x->e);
  free(x);
}

static int size_of(const kt_config *cfg, int64_t in, int64_t *out, void *ud, kt_error *err) {
  (void)in; /* the expression gives the size itself */
  const size_expr *x = ud;
  const kt_value *vals[MOST_NAMES];
  for (size_t i = 0; i < x->n; i++) vals[i] = kt_config_value(cfg, (size_t)x->param[i]);
  kt_value v;
  if (kt_expr_eval(x->e, vals, &v, err))
    return kt_fail_prefix(err, "thread size '%.80s': ", kt_expr_text(x->e));
  if (v.type == KT_VINT) *out = v.u.i;
  else if (v.type == KT_VFLOAT && v.u.f == floor(v.u.f) && fabs(v.u.f) < 9e18) *out = (int64_t)v.u.f;
  else if (v.type == KT_VFLOAT)
    return kt_fail(err, "thread size '%.80s' gives %g, not an integer", kt_expr_text(x->e), v.u.f);
  else /* a string result points into the expression or the values: nothing to free */
    return kt_fail(err, "thread size '%.80s' gives a string, not an integer", kt_expr_text(x->e));
  return 0;
}

static int check(const kt_space *space, size_expr *x, kt_error *err) {
  if (kt_expr_is_condition(x->e))
    return kt_fail(err, "the expression is a condition; it should give a number of threads");
  x->n = kt_expr_nvars(x->e);
  if (x->n > MOST_NAMES) return kt_fail(err, "the expression reads more than %d names", MOST_NAMES);
  for (size_t i = 0; i < x->n; i++) {
    const char *name = kt_expr_var(x->e, i);
    if ((x->param[i] = kt_space_find(space, name)) < 0)
      return kt_fail(err, "at character %zu: unknown parameter '%s'", kt_expr_var_pos(x->e, i), name);
  }
  return 0;
}

int kt_size_expr_modifier(const kt_space *space, const char *text, const kt_named_value *consts,
                          size_t nconsts, kt_modifier *m, kt_error *err) {
  size_expr *x = kt_calloc(1, sizeof *x, err);
  if (!x) return -1;
  if (!(x->e = kt_expr_parse(text, err)) || kt_expr_bind(x->e, consts, nconsts, err) ||
      check(space, x, err)) {
    size_expr_free(x);
    return kt_fail_prefix(err, "thread size '%.80s%s': ", text, strlen(text) > 80 ? "..." : "");
  }
  m->op = KT_MOD_FN;
  m->fn = size_of;
  m->cb = (kt_callback){x, size_expr_free};
  return 0;
}
