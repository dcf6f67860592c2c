/*
** validate_close.c: the "close" comparison, numpy's allclose rule: an
** element matches when |got - expected| <= atol + rtol * |expected|. The
** absolute term covers values near zero, where a relative tolerance alone
** would ask for exact zeros; the relative term covers large values.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "validate.h"

typedef struct close_verdict {
  size_t ndiff, at;
  double got, want;
} close_verdict;

/* NaN matches NaN (as in the other methods), an infinity the same one. */
static bool is_close(double g, double e, double atol, double rtol) {
  if (g == e) return true;
  if (isnan(g) || isnan(e)) return isnan(g) && isnan(e);
  if (isinf(g) || isinf(e)) return false;
  return fabs(g - e) <= atol + rtol * fabs(e);
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
  static void close_##T(const T *g, const T *e, size_t n, double atol, double rtol,    \
                        close_verdict *v) {                                            \
    for (size_t i = 0; i < n; i++)                                                     \
      if (!is_close(g[i], e[i], atol, rtol)) note(v, i, g[i], e[i]);                   \
  }
CLOSE_LOOP(float)
CLOSE_LOOP(double)

static void close_any(const kt_array *got, const kt_array *expected, size_t n, double atol,
                      double rtol, close_verdict *v) {
  kt_kind kind = expected->type->kind;
  for (size_t i = 0; i < n; i++) {
    double g = kt_elem_as_double(kind, kt_array_at(got, i));
    double e = kt_elem_as_double(kind, kt_array_at(expected, i));
    if (!is_close(g, e, atol, rtol)) note(v, i, g, e);
  }
}

int kt_compare_close(const kt_array *got, const kt_array *expected, double atol, double rtol,
                     size_t first, char **why, kt_error *err) {
  *why = NULL;
  const kt_type *t = expected->type;
  size_t n;
  if (kt_compare_extent(got, expected, first, &n, err)) return -1;
  close_verdict v = {0, 0, 0, 0};
  if (t->kind == KT_FLOAT) close_float(got->data, expected->data, n, atol, rtol, &v);
  else if (t->kind == KT_DOUBLE) close_double(got->data, expected->data, n, atol, rtol, &v);
  else close_any(got, expected, n, atol, rtol, &v);
  if (v.ndiff == 0) return 1;
  if ((*why = malloc(320)))
    snprintf(*why, 320,
             "element %zu: got %.9g, expected %.9g (difference %.6g > atol %.6g + rtol %.6g * "
             "%.9g = %.6g); %zu of %zu elements differ",
             v.at, v.got, v.want, fabs(v.got - v.want), atol, rtol, fabs(v.want),
             atol + rtol * fabs(v.want), v.ndiff, n);
  return 0;
}
