/*
** validate.c: element-wise and summed comparisons.
*/
#include "validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const method_names[] = {"absolute", "relative", "sum"};

const char *kt_cmp_method_name(kt_cmp_method m) { return method_names[m]; }

int kt_cmp_method_from_name(const char *name) {
  for (int i = 0; i < 3; i++)
    if (strcmp(method_names[i], name) == 0) return i;
  return -1;
}

/* How far apart two elements are under an element-wise method; 0 for an
** exact match, infinity when only one of them is NaN. */
static double distance(kt_kind kind, const void *g, const void *e, kt_cmp_method m,
                       double *gv, double *ev) {
  if (!kt_kind_is_float(kind) && memcmp(g, e, kt_type_scalar(kind)->size) == 0) {
    *gv = *ev = kt_elem_as_double(kind, e);
    return 0;
  }
  *gv = kt_elem_as_double(kind, g);
  *ev = kt_elem_as_double(kind, e);
  if (isnan(*gv) || isnan(*ev)) return isnan(*gv) && isnan(*ev) ? 0 : INFINITY;
  if (*gv == *ev) return 0;
  double d = fabs(*gv - *ev);
  if (m == KT_CMP_RELATIVE && *ev != 0) d /= fabs(*ev);
  return d;
}

static char *describe(size_t at, double gv, double ev, double d, kt_cmp_method m,
                      double tol, size_t ndiff, size_t n) {
  char *why = malloc(320);
  if (why)
    snprintf(why, 320,
             "element %zu: got %.9g, expected %.9g (%s difference %.3g > tolerance %.3g); "
             "%zu of %zu elements differ",
             at, gv, ev, method_names[m], d, tol, ndiff, n);
  return why;
}

int kt_compare_arrays(const kt_array *got, const kt_array *expected, kt_cmp_method method,
                      double tolerance, size_t first, char **why, kt_error *err) {
  *why = NULL;
  const kt_type *t = expected->type;
  if (got->type->size != t->size || got->length != expected->length)
    return kt_fail(err, "cannot compare %s[%zu] with %s[%zu]", got->type->name, got->length,
                   t->name, expected->length);
  if (t->kind == KT_STRUCT)
    return kt_fail(err, "arrays of struct %s need a custom comparator (option 'compare')",
                   t->name);
  size_t n = first && first < expected->length ? first : expected->length;
  size_t ndiff = 0, at = 0;
  double sum = 0, gat = 0, eat = 0, dat = 0;
  for (size_t i = 0; i < n; i++) {
    double gv, ev;
    double d = distance(t->kind, kt_array_at(got, i), kt_array_at(expected, i), method, &gv, &ev);
    if (method == KT_CMP_SUM) {
      sum += d;
      if (d > 0 && ndiff++ == 0) at = i, gat = gv, eat = ev, dat = d;
    } else if (d > tolerance) {
      if (ndiff++ == 0) at = i, gat = gv, eat = ev, dat = d;
    }
  }
  if (method == KT_CMP_SUM) {
    if (sum <= tolerance) return 1;
    *why = malloc(320);
    if (*why)
      snprintf(*why, 320,
               "sum of absolute differences %.6g > tolerance %.3g; first difference at "
               "element %zu: got %.9g, expected %.9g (%.3g); %zu of %zu elements differ",
               sum, tolerance, at, gat, eat, dat, ndiff, n);
    return 0;
  }
  if (ndiff == 0) return 1;
  *why = describe(at, gat, eat, dat, method, tolerance, ndiff, n);
  return 0;
}
