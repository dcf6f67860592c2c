/*
** result_formats.c: what the readers of the formats share: parameter
** values from JSON, parameters gathered from records, timestamps (telling
** a file's format is result_detect.c's).
*/
#define _DEFAULT_SOURCE /* timegm */
#include "result_formats.h"

#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- values ---- */

int kt_value_from_json(const kt_jvalue *j, kt_value *v) {
  if (!j) return -1;
  switch (j->type) {
    case KT_JNUMBER:
      if (j->integer) *v = (kt_value){KT_VINT, {.i = j->u.num.i}, false};
      else *v = (kt_value){KT_VFLOAT, {.f = j->u.num.f}, false};
      return 0;
    case KT_JSTRING: *v = (kt_value){KT_VSTRING, {.s = (char *)j->u.str}, false}; return 0;
    case KT_JBOOL: *v = (kt_value){KT_VINT, {.i = j->u.b}, true}; return 0;
    default: return -1;
  }
}

int kt_param_value_index(const kt_param *p, const kt_value *v, uint32_t *out) {
  for (size_t k = 0; k < p->nvalues; k++)
    if (kt_value_equal(&p->values[k], v)) {
      *out = (uint32_t)k;
      return 0;
    }
  return -1;
}

/* A float as Python's str() writes it (the shortest text that reads back,
** with ".0" on whole numbers, exponents below 1e-4 and from 1e16). */
void kt_python_float(double x, char *buf, size_t size) {
  if (isnan(x) || isinf(x)) {
    snprintf(buf, size, "%s", isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
    return;
  }
  int digits = 1;
  for (; digits < 17; digits++) {
    snprintf(buf, size, "%.*e", digits - 1, x);
    if (strtod(buf, NULL) == x) break;
  }
  int exp = x == 0 ? 0 : atoi(strchr(buf, 'e') + 1);
  if (exp < -4 || exp >= 16) {
    snprintf(buf, size, "%.*e", digits - 1, x);
    return;
  }
  int decimals = digits - 1 - exp;
  snprintf(buf, size, "%.*f", decimals > 0 ? decimals : 0, x);
  if (!strchr(buf, '.')) strncat(buf, ".0", size - strlen(buf) - 1);
}

void kt_json_param_value(FILE *f, const kt_value *v) {
  char buf[64];
  if (v->type != KT_VFLOAT || !isfinite(v->u.f)) {
    kt_json_value(f, v);
    return;
  }
  kt_python_float(v->u.f, buf, sizeof buf);
  fputs(buf, f);
}

/* ---- parameters gathered from records ---- */

struct acc_param {
  const char *name; /* the document's */
  kt_value *values;
  size_t n, cap;
};

static struct acc_param *acc_find(kt_param_acc *a, const char *name, kt_error *err) {
  for (size_t i = 0; i < a->n; i++)
    if (strcmp(a->params[i].name, name) == 0) return &a->params[i];
  if (kt_grow(&a->params, &a->cap, a->n + 1, sizeof *a->params, err)) return NULL;
  struct acc_param *p = &a->params[a->n++];
  *p = (struct acc_param){name, NULL, 0, 0};
  return p;
}

/* Every value is kept (but a repeat of the last) and sorted and made
** distinct once, in n log n: a parameter may take a value per record. */
int kt_param_acc_note(kt_param_acc *a, const char *name, const kt_value *v, kt_error *err) {
  struct acc_param *p = acc_find(a, name, err);
  if (!p) return -1;
  if (p->n && kt_value_equal(&p->values[p->n - 1], v)) return 0;
  if (kt_grow(&p->values, &p->cap, p->n + 1, sizeof *p->values, err)) return -1;
  p->values[p->n++] = *v;
  return 0;
}

/* Numbers ascending (false before 0 where they meet), then strings;
** values that kt_value_equal calls equal compare equal. */
static int value_order(const void *pa, const void *pb) {
  const kt_value *a = pa, *b = pb;
  double x, y;
  bool na = kt_value_number(a, &x), nb = kt_value_number(b, &y);
  if (na != nb) return na ? -1 : 1;
  if (!na) return strcmp(a->u.s, b->u.s);
  if (x != y) return x < y ? -1 : 1;
  return (int)b->boolean - (int)a->boolean;
}

int kt_sorted_value_index(const kt_param *p, const kt_value *v, uint32_t *out) {
  const kt_value *at = bsearch(v, p->values, p->nvalues, sizeof *v, value_order);
  if (!at) return -1;
  *out = (uint32_t)(at - p->values);
  return 0;
}

kt_results *kt_param_acc_results(kt_param_acc *a, const char *task,
                                 const char *const *kernels, size_t nkernels,
                                 const char *device, kt_error *err) {
  kt_space *space = kt_space_new(err);
  int rc = space ? 0 : -1;
  for (size_t i = 0; i < a->n && rc == 0; i++) {
    struct acc_param *p = &a->params[i];
    qsort(p->values, p->n, sizeof *p->values, value_order);
    size_t kept = 0;
    for (size_t k = 0; k < p->n; k++)
      if (kept == 0 || value_order(&p->values[kept - 1], &p->values[k]) != 0)
        p->values[kept++] = p->values[k];
    rc = kt_space_add_param(space, p->name, p->values, kept, err);
  }
  kt_results *r = rc == 0 ? kt_results_new(task, space, kernels, nkernels, device, err) : NULL;
  kt_space_free(space);
  return r;
}

void kt_param_acc_clear(kt_param_acc *a) {
  for (size_t i = 0; i < a->n; i++) free(a->params[i].values);
  free(a->params);
  memset(a, 0, sizeof *a);
}

kt_results *kt_results_fill(kt_results *r, size_t n, kt_record_read read, void *ud,
                            kt_error *err) {
  uint32_t *vi = r ? kt_calloc(r->nparams + 1, sizeof *vi, err) : NULL;
  int rc = vi ? 0 : -1;
  for (size_t i = 0; i < n && rc == 0; i++) rc = read(ud, r, i, vi, err);
  free(vi);
  if (rc) {
    kt_results_release(r);
    return NULL;
  }
  return r;
}

/* ---- timestamps ---- */

/* n decimal digits at *p (advanced past them) as *out; -1 when they are not. */
static int digits_at(const char **p, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++, (*p)++) {
    if (**p < '0' || **p > '9') return -1;
    v = v * 10 + (**p - '0');
  }
  *out = v;
  return 0;
}

/* The zone after the seconds: "+HH:MM", "Z", " UTC" or none (UTC). */
static int zone_offset(const char *z, long *seconds) {
  int hh, mm;
  *seconds = 0;
  if (!*z || strcmp(z, "Z") == 0 || strcmp(z, " UTC") == 0) return 0;
  const char *p = z + 1;
  if ((*z != '+' && *z != '-') || digits_at(&p, 2, &hh) || *p++ != ':' || digits_at(&p, 2, &mm) ||
      *p || hh > 23 || mm > 59)
    return -1;
  *seconds = (*z == '-' ? -1 : 1) * (hh * 3600L + mm * 60L);
  return 0;
}

/* ".ddd" (digits only: no sign, no exponent) as a fraction of a second. */
static int fraction(const char **p, double *frac) {
  *frac = 0;
  if (**p != '.') return 0;
  double scale = 0.1;
  const char *first = ++*p;
  for (; **p >= '0' && **p <= '9'; (*p)++, scale /= 10) *frac += (**p - '0') * scale;
  return *p == first ? -1 : 0;
}

/* Each field in its range, the day one of its month's (timegm would carry
** "02-31" into March): gmtime gives the same date back. */
static bool valid_date(const struct tm *want, time_t t) {
  struct tm got;
  return want->tm_mon >= 0 && want->tm_mon <= 11 && want->tm_mday >= 1 && want->tm_mday <= 31 &&
         want->tm_hour <= 23 && want->tm_min <= 59 && want->tm_sec <= 60 &&
         gmtime_r(&t, &got) && got.tm_year == want->tm_year && got.tm_mon == want->tm_mon &&
         (got.tm_mday == want->tm_mday || want->tm_sec == 60); /* a leap second's carry */
}

/* Exactly "YYYY-MM-DD HH:MM:SS", 'T' or ' ' between, a fraction of
** digits, a zone: anything else (a field out of range, "23:03:9.3e18") is
** no timestamp, whose time is unknown rather than a guess. */
double kt_time_parse(const char *text) {
  struct tm tm = {0};
  const char *p = text;
  char sep = 0;
  if (!p || digits_at(&p, 4, &tm.tm_year) || *p++ != '-' || digits_at(&p, 2, &tm.tm_mon) ||
      *p++ != '-' || digits_at(&p, 2, &tm.tm_mday) || ((sep = *p++) != ' ' && sep != 'T') ||
      digits_at(&p, 2, &tm.tm_hour) || *p++ != ':' || digits_at(&p, 2, &tm.tm_min) ||
      *p++ != ':' || digits_at(&p, 2, &tm.tm_sec))
    return 0;
  double frac;
  long offset;
  if (fraction(&p, &frac) || zone_offset(p, &offset)) return 0;
  struct tm want = tm;
  want.tm_year = tm.tm_year -= 1900;
  want.tm_mon = tm.tm_mon -= 1;
  time_t t = timegm(&tm);
  if (t == (time_t)-1 || !valid_date(&want, t)) return 0;
  return (double)t - (double)offset + frac;
}

/* Up to the end of year 9999: "%Y" stays four digits, gmtime cannot fail. */
#define LAST_SECOND 253402300799.0

int kt_time_format(double t, char *buf, size_t size) {
  if (!(t > 0 && t < LAST_SECOND + 1)) return -1; /* NaN too */
  time_t whole = (time_t)floor(t);
  long micro = lround((t - (double)whole) * 1e6);
  if (micro >= 1000000) {
    whole++;
    micro -= 1000000;
  }
  struct tm tm;
  char day[32];
  if ((double)whole > LAST_SECOND || !gmtime_r(&whole, &tm) ||
      strftime(day, sizeof day, "%Y-%m-%d %H:%M:%S", &tm) == 0)
    return -1;
  int n = snprintf(buf, size, "%s.%06ld+00:00", day, micro);
  return n > 0 && (size_t)n < size ? 0 : -1;
}
