/*
** stats.c: median, mean and relative standard error.
*/
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double kt_median(const double *x, size_t n) {
  if (n == 0) return NAN;
  double small[64], *tmp = n <= 64 ? small : malloc(n * sizeof *tmp);
  if (!tmp) return NAN;
  memcpy(tmp, x, n * sizeof *tmp);
  qsort(tmp, n, sizeof *tmp, cmp_double);
  double m = n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
  if (tmp != small) free(tmp);
  return m;
}

double kt_mean(const double *x, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += x[i];
  return n ? s / (double)n : NAN;
}

double kt_rse(const double *x, size_t n) {
  if (n < 2) return INFINITY;
  double m = kt_mean(x, n), ss = 0;
  if (m == 0) return INFINITY;
  for (size_t i = 0; i < n; i++) ss += (x[i] - m) * (x[i] - m);
  double sd = sqrt(ss / (double)(n - 1));
  return sd / sqrt((double)n) / fabs(m);
}
