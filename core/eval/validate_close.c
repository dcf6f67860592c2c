/*
** validate_close.c: the "close" comparisons. "close" is numpy's allclose
** rule with the reference as the scale: an element matches when
** |got - expected| <= atol + rtol * |expected|. "kernel_tuner" is Kernel
** Tuner's default check, np.allclose(expected, got), whose relative term
** scales the kernel's output instead (numpy scales its second argument)
** and where NaN matches nothing (numpy's equal_nan is off). The absolute
** term covers values near zero, the relative term large values.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "validate.h"

/* What every comparison checks first (validate.c's too: it is here, below
** validate.c, which calls this file's kt_compare_close). */
int kt_compare_extent(const kt_array *got, const kt_array *expected, size_t first, size_t *n,
                      kt_error *err) {
  const kt_type *t = expected->type;
  if (got->type->size != t->size || got->length != expected->length)
    return kt_fail(err, "cannot compare %s[%zu] with %s[%zu]", got->type->name, got->length,
                   t->name, expected->length);
  if (t->kind == KT_STRUCT)
    return kt_fail(err, "arrays of struct %s need a custom comparator (option 'compare')",
                   t->name);
  *n = first && first < expected->length ? first : expected->length;
  return 0;
}

typedef struct close_rule {
  double atol, rtol;
  bool by_got;    /* the relative term scales |got|, not |expected| */
  bool nan_equal; /* NaN matches NaN */
} close_rule;

typedef struct close_verdict {
  size_t ndiff, at;
  double got, want;
} close_verdict;

/* An infinity matches only the same infinity. */
static bool is_close(double g, double e, const close_rule *r) {
  if (isnan(g) || isnan(e)) return r->nan_equal && isnan(g) && isnan(e);
  if (g == e) return true;
  if (isinf(g) || isinf(e)) return false;
  return fabs(g - e) <= r->atol + r->rtol * fabs(r->by_got ? g : e);
}

static void note(close_verdict *v, size_t i, double g, double e) {
  if (v->ndiff++ == 0) {
    v->at = i;
    v->got = g;
    v->want = e;
  }
}

/* Typed loops for floats and doubles: outputs of millions of elements. */
#define CLOSE_LOOP(T)                                                                  \
  static void close_##T(const T *g, const T *e, size_t n, const close_rule *r,         \
                        close_verdict *v) {                                            \
    for (size_t i = 0; i < n; i++)                                                     \
      if (!is_close(g[i], e[i], r)) note(v, i, g[i], e[i]);                            \
  }
CLOSE_LOOP(float)
CLOSE_LOOP(double)

static void close_any(const kt_array *got, const kt_array *expected, size_t n,
                      const close_rule *r, close_verdict *v) {
  kt_kind kind = expected->type->kind;
  for (size_t i = 0; i < n; i++) {
    double g = kt_elem_as_double(kind, kt_array_at(got, i));
    double e = kt_elem_as_double(kind, kt_array_at(expected, i));
    if (!is_close(g, e, r)) note(v, i, g, e);
  }
}

static char *describe(const close_rule *r, const close_verdict *v, size_t n) {
  char *why = malloc(360);
  double scale = fabs(r->by_got ? v->got : v->want);
  if (why)
    snprintf(why, 360,
             "element %zu: got %.9g, expected %.9g (difference %.6g > atol %.6g + rtol %.6g * "
             "%.9g%s = %.6g); %zu of %zu elements differ",
             v->at, v->got, v->want, fabs(v->got - v->want), r->atol, r->rtol, scale,
             r->by_got ? " (|got|, as Kernel Tuner scales)" : "", r->atol + r->rtol * scale,
             v->ndiff, n);
  return why;
}

int kt_compare_close(const kt_array *got, const kt_array *expected, kt_cmp_method method,
                     double atol, double rtol, size_t first, char **why, kt_error *err) {
  *why = NULL;
  const kt_type *t = expected->type;
  size_t n;
  if (kt_compare_extent(got, expected, first, &n, err)) return -1;
  bool kt = method == KT_CMP_KERNEL_TUNER;
  close_rule r = {atol, rtol, kt, !kt};
  close_verdict v = {0, 0, 0, 0};
  if (t->kind == KT_FLOAT) close_float(got->data, expected->data, n, &r, &v);
  else if (t->kind == KT_DOUBLE) close_double(got->data, expected->data, n, &r, &v);
  else close_any(got, expected, n, &r, &v);
  if (v.ndiff == 0) return 1;
  *why = describe(&r, &v, n);
  return 0;
}
