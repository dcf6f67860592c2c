/*
** validate.c: element-wise and summed comparisons.
*/
#include "validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const method_names[] = {"absolute", "relative", "sum", "close",
                                            "kernel_tuner"};

const char *kt_cmp_method_name(kt_cmp_method m) { return method_names[m]; }

int kt_cmp_method_from_name(const char *name) {
  for (int i = 0; i < (int)(sizeof method_names / sizeof *method_names); i++)
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

/* What a comparison found: how many elements differ, and the first. */
typedef struct verdict {
  size_t ndiff, at;
  double sum, got, want, dist;
} verdict;

static void note(verdict *v, size_t i, double got, double want, double d, bool differs) {
  if (differs && v->ndiff++ == 0) {
    v->at = i;
    v->got = got;
    v->want = want;
    v->dist = d;
  }
}

/* Floats and doubles in a tight loop of their own: outputs of millions of
** elements are compared once per configuration. */
#define COMPARE_FLOATS(T)                                                          \
  static void compare_##T(const T *g, const T *e, size_t n, kt_cmp_method m,       \
                          double tol, verdict *v) {                                \
    for (size_t i = 0; i < n; i++) {                                               \
      double gv = g[i], ev = e[i], d;                                              \
      if (gv == ev) continue;                                                      \
      if (isnan(gv) || isnan(ev)) d = isnan(gv) && isnan(ev) ? 0 : INFINITY;       \
      else d = fabs(gv - ev);                                                      \
      if (m == KT_CMP_RELATIVE && ev != 0 && !isnan(ev)) d /= fabs(ev);           \
      if (m == KT_CMP_SUM) {                                                       \
        v->sum += d;                                                               \
        note(v, i, gv, ev, d, d > 0);                                              \
      } else {                                                                     \
        note(v, i, gv, ev, d, d > tol);                                            \
      }                                                                            \
    }                                                                              \
  }
COMPARE_FLOATS(float)
COMPARE_FLOATS(double)

static void compare_any(const kt_array *got, const kt_array *expected, size_t n,
                        kt_cmp_method m, double tol, verdict *v) {
  kt_kind kind = expected->type->kind;
  for (size_t i = 0; i < n; i++) {
    double gv, ev;
    double d = distance(kind, kt_array_at(got, i), kt_array_at(expected, i), m, &gv, &ev);
    if (m == KT_CMP_SUM) {
      v->sum += d;
      note(v, i, gv, ev, d, d > 0);
    } else {
      note(v, i, gv, ev, d, d > tol);
    }
  }
}

int kt_compare_arrays(const kt_array *got, const kt_array *expected, kt_cmp_method method,
                      double tolerance, size_t first, char **why, kt_error *err) {
  *why = NULL;
  const kt_type *t = expected->type;
  size_t n;
  if (kt_compare_extent(got, expected, first, &n, err)) return -1;
  verdict v = {0, 0, 0, 0, 0, 0};
  if (t->kind == KT_FLOAT) compare_float(got->data, expected->data, n, method, tolerance, &v);
  else if (t->kind == KT_DOUBLE) compare_double(got->data, expected->data, n, method, tolerance, &v);
  else compare_any(got, expected, n, method, tolerance, &v);
  if (method == KT_CMP_SUM) {
    if (v.sum <= tolerance) return 1;
    *why = malloc(320);
    if (*why)
      snprintf(*why, 320,
               "sum of absolute differences %.6g > tolerance %.3g; first difference at "
               "element %zu: got %.9g, expected %.9g (%.3g); %zu of %zu elements differ",
               v.sum, tolerance, v.at, v.got, v.want, v.dist, v.ndiff, n);
    return 0;
  }
  if (v.ndiff == 0) return 1;
  *why = describe(v.at, v.got, v.want, v.dist, method, tolerance, v.ndiff, n);
  return 0;
}

int kt_compare_reference(const kt_array *got, const kt_reference *r, char **why, kt_error *err) {
  if (r->method == KT_CMP_CLOSE || r->method == KT_CMP_KERNEL_TUNER)
    return kt_compare_close(got, r->expected, r->method, r->tolerance, r->rtol, r->first, why,
                            err);
  return kt_compare_arrays(got, r->expected, r->method, r->tolerance, r->first, why, err);
}
