/*
** result_csv.c: results back from the CSV files ktlua writes (result_io.c):
** each row's index, configuration, status, time, sizes, overheads and the
** first line of its error. A CSV file keeps less than JSON: not the
** samples (their number only), not the names of its task and device (but
** each row's device id, in a tuning over several devices, whether early
** stop cut it short, and a CPU device's waited_ms and crowded), nor the
** PoCL threads ktlua gave a device process (device_threads), nor
** the values of a parameter that no row took; a parameter's values are
** those its rows took, numbers in ascending order, then strings.
*/
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "result.h"

/* The columns after the kernels' sizes, as result_io.c writes them. */
static const char *const tail[] = {"build_ms",    "data_ms",   "validation_ms",
                                   "launcher_ms", "wait_ms",   "searcher_ms",
                                   "framework_ms", "total_ms", "error"};
#define NTAIL (sizeof tail / sizeof *tail)
#define NOVERHEADS (NTAIL - 1)

typedef struct cell {
  char *s;
  bool quoted; /* a string value, or a text */
} cell;

typedef struct row {
  cell *cells;
  size_t n;
  size_t line; /* where it starts: a quoted text may hold line ends */
} row;

/* Where the columns are: index, nparams values, status, time_ms, samples,
** two per kernel, the tail. */
typedef struct layout {
  size_t nparams, nkernels, status;
  size_t nmetrics;   /* columns after the error: a metric each (metrics.h) */
  const row *header; /* their names */
} layout;

/* ---- cells ---- */

/* Splits a record (NUL-terminated, changed in place: quotes unescaped)
** into its cells. */
static int split_line(char *p, row *out, kt_error *err) {
  size_t cap = 0;
  out->cells = NULL;
  out->n = 0;
  for (;;) {
    cell c = {p, *p == '"'};
    char *w = p;
    if (c.quoted) {
      c.s = w = ++p;
      for (;;) {
        if (!*p) return kt_fail(err, "a quoted text has no closing quote");
        if (p[0] == '"' && p[1] != '"') break;
        if (p[0] == '"') p++; /* "" is one quote */
        *w++ = *p++;
      }
      p++; /* the closing quote */
    } else {
      while (*p && *p != ',') p++;
      w = p;
    }
    if (*p && *p != ',') return kt_fail(err, "text after a closing quote");
    char next = *p;
    *w = '\0';
    if (kt_grow(&out->cells, &cap, out->n + 1, sizeof *out->cells, err)) return -1;
    out->cells[out->n++] = c;
    if (!next) return 0;
    p++;
  }
}

static const char *cell_at(const row *r, size_t i) { return i < r->n ? r->cells[i].s : ""; }

static bool named(const row *h, size_t i, const char *name) {
  return strcmp(cell_at(h, i), name) == 0;
}

/* ---- the header ---- */

static bool kernel_pair(const row *h, size_t i) {
  const char *g = cell_at(h, i), *l = cell_at(h, i + 1);
  if (strcmp(g, "global") == 0) return strcmp(l, "local") == 0;
  size_t n = strlen(g);
  return n > 7 && strcmp(g + n - 7, "_global") == 0 && strlen(l) == n - 1 &&
         strncmp(g, l, n - 7) == 0 && strcmp(l + n - 7, "_local") == 0;
}

static bool tail_at(const row *h, size_t at) {
  for (size_t t = 0; t < NTAIL; t++)
    if (!named(h, at + t, tail[t])) return false;
  return true;
}

static int read_layout(const row *h, layout *lo, kt_error *err) {
  if (h->n < 4 + NTAIL || !named(h, 0, "index"))
    return kt_fail(err, "line 1 is no header of ktlua's results");
  /* The last run of the tail's names: metrics may come after it. */
  size_t end = h->n - NTAIL;
  while (end > 4 && !tail_at(h, end)) end--;
  if (!tail_at(h, end))
    for (size_t t = 0; t < NTAIL; t++)
      if (!named(h, h->n - NTAIL + t, tail[t]))
        return kt_fail(err, "line 1: expected the column %s", tail[t]);
  for (size_t s = 1; s + 3 <= end; s++) {
    if (!named(h, s, "status") || !named(h, s + 1, "time_ms") || !named(h, s + 2, "samples"))
      continue;
    size_t k = s + 3;
    while (k + 1 < end && kernel_pair(h, k)) k += 2;
    if (k != end) continue;
    *lo = (layout){s - 1, (k - s - 3) / 2, s, h->n - NTAIL - end, h};
    return 0;
  }
  return kt_fail(err, "line 1: no columns status, time_ms, samples followed by sizes");
}

/* ---- values ---- */

static int cell_value(const cell *c, kt_value *v) {
  char *end;
  if (c->quoted) {
    *v = (kt_value){.type = KT_VSTRING, .u.s = c->s};
    return 0;
  }
  if (strcmp(c->s, "true") == 0 || strcmp(c->s, "false") == 0) {
    *v = (kt_value){KT_VINT, {.i = c->s[0] == 't'}, true};
    return 0;
  }
  errno = 0;
  long long i = strtoll(c->s, &end, 10);
  if (*c->s && !*end && errno == 0) {
    *v = (kt_value){.type = KT_VINT, .u.i = i};
    return 0;
  }
  double f = strtod(c->s, &end);
  if (!*c->s || *end) return -1;
  *v = (kt_value){.type = KT_VFLOAT, .u.f = f};
  return 0;
}

/* Numbers in ascending order, then strings. */
static int compare_values(const void *pa, const void *pb) {
  const kt_value *a = pa, *b = pb;
  double x, y;
  bool na = kt_value_number(a, &x), nb = kt_value_number(b, &y);
  if (na != nb) return na ? -1 : 1;
  if (!na) return strcmp(a->u.s, b->u.s);
  if (x != y && !isnan(x) && !isnan(y)) return x < y ? -1 : 1;
  return (int)a->boolean - (int)b->boolean;
}

/* The distinct values of column col over the rows, sorted, into a new
** parameter of space. */
static int add_param(kt_space *space, const row *rows, size_t nrows, size_t col, kt_error *err) {
  kt_value *v = kt_calloc(nrows + 1, sizeof *v, err);
  if (!v) return -1;
  size_t n = 0;
  int rc = 0;
  for (size_t i = 1; i < nrows && rc == 0; i++) {
    if (col >= rows[i].n || cell_value(&rows[i].cells[col], &v[n]))
      rc = kt_fail(err, "line %zu: %s has no value", rows[i].line, rows[0].cells[col].s);
    n++;
  }
  if (rc == 0) {
    qsort(v, n, sizeof *v, compare_values);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
      if (kept == 0 || !kt_value_equal(&v[kept - 1], &v[i])) v[kept++] = v[i];
    rc = kt_space_add_param(space, rows[0].cells[col].s, v, kept, err);
  }
  free(v);
  return rc;
}

/* ---- rows ---- */

/* A finite number: a time (strtod would take "inf", "nan" and 1e999). */
static int number(const cell *c, double *out) {
  char *end;
  *out = strtod(c->s, &end);
  return *c->s && !*end && isfinite(*out) ? 0 : -1;
}

/* A metric's value: a number, or inf, -inf or nan as result_io.c writes
** them; a number beyond a double (1e999) is none. */
static int metric_number(const cell *c, double *out) {
  char *end;
  errno = 0;
  *out = strtod(c->s, &end);
  return *c->s && !*end && !(isinf(*out) && errno == ERANGE) ? 0 : -1;
}

/* A size as result_io.c writes it: 1 to 3 whole numbers from 1, joined by
** 'x', each at most what a size_t and an int64 hold (as the JSON reader
** takes them). No sign or space: strtoull takes "-5" as 2^64 - 5. */
static int read_size(const char *s, size_t out[3], int *dims) {
  const uint64_t max = SIZE_MAX < INT64_MAX ? SIZE_MAX : INT64_MAX;
  int d = 0;
  out[0] = out[1] = out[2] = 1;
  while (*s && d < 3) {
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9') return -1;
    unsigned long long x = strtoull(s, &end, 10);
    if (x == 0 || x > max || errno || (*end && *end != 'x')) return -1;
    out[d++] = (size_t)x;
    s = end;
    if (*s == 'x' && !*++s) return -1; /* "8x" */
  }
  *dims = d;
  return *s || d == 0 ? -1 : 0;
}

/* A bad size: its column and the cell, quoted. */
static int bad_size(size_t col, bool local, const char *cell, kt_error *err) {
  char shown[128];
  return kt_fail(err, "column %zu: the %s size %s is no size (1 to 3 whole numbers from 1, "
                 "joined by x)", col + 1, local ? "local" : "global",
                 kt_quote(cell, strlen(cell), shown, sizeof shown));
}

static int read_sizes(const row *rw, const layout *lo, kt_result *res, kt_error *err) {
  size_t nk = lo->nkernels, col = lo->status + 3;
  if (!(res->sizes = kt_calloc(nk + 1, sizeof *res->sizes, err))) return -1;
  res->nkernels = nk;
  for (size_t k = 0; k < nk; k++) {
    kt_sizes *z = &res->sizes[k];
    const char *global = cell_at(rw, col + 2 * k), *local = cell_at(rw, col + 2 * k + 1);
    int ldims;
    if (!*global) continue; /* a configuration that never got its sizes */
    if (read_size(global, z->global, &z->dims)) return bad_size(col + 2 * k, false, global, err);
    memcpy(z->items, z->global, sizeof z->items);
    if (*local && read_size(local, z->local, &ldims))
      return bad_size(col + 2 * k + 1, true, local, err);
    if (!*local) z->local[0] = 0;
  }
  return 0;
}

static int read_outcome(const row *rw, const layout *lo, kt_result *res, kt_error *err) {
  int s = kt_status_from_name(cell_at(rw, lo->status));
  if (s < 0) return kt_fail(err, "no known status");
  res->status = (kt_status)s;
  res->time_ns = NAN;
  double ms;
  if (s == KT_OK && number(&rw->cells[lo->status + 1], &ms)) return kt_fail(err, "ok but no time_ms");
  if (s == KT_OK) res->time_ns = ms * 1e6;
  size_t at = lo->status + 3 + 2 * lo->nkernels;
  double over[NOVERHEADS];
  for (size_t i = 0; i < NOVERHEADS; i++)
    over[i] = number(&rw->cells[at + i], &ms) ? 0 : ms * 1e6;
  res->over = (kt_overheads){over[0], over[1], over[2], over[3],
                             over[4], over[5], over[6], over[7]};
  const char *error = rw->cells[at + NOVERHEADS].s;
  if (*error && !(res->error = kt_strdup(error, err))) return -1;
  for (size_t m = 0; m < lo->nmetrics; m++) {
    const cell *c = &rw->cells[at + NTAIL + m];
    const char *name = cell_at(lo->header, at + NTAIL + m);
    if (!*c->s) continue; /* none */
    if (strcmp(name, "device") == 0) { /* the last column of a tuning over several devices */
      if (!(res->device = kt_strdup(c->s, err))) return -1;
      continue;
    }
    if (strcmp(name, "cut_short") == 0 || strcmp(name, "crowded") == 0) { /* where a row is */
      if (strcmp(c->s, "true")) return kt_fail(err, "%s is \"true\" or empty", name);
      *(strcmp(name, "cut_short") == 0 ? &res->cut_short : &res->crowded) = true;
      continue;
    }
    if (strcmp(name, "waited_ms") == 0) { /* a CPU device's wait for a processor, where any */
      if (number(c, &ms) || ms < 0) return kt_fail(err, "waited_ms is no time");
      res->waited_ns = ms * 1e6;
      continue;
    }
    if (metric_number(c, &ms)) return kt_fail(err, "metric %s is not a number", name);
    if (kt_result_set_metric(res, name, ms, err)) return -1;
  }
  return read_sizes(rw, lo, res, err);
}

/* The value index of each parameter's cell: the values are sorted. */
static int read_config(const row *rw, const kt_results *r, uint32_t *vi, kt_error *err) {
  for (size_t p = 0; p < r->nparams; p++) {
    kt_value v;
    const kt_param *par = &r->params[p];
    if (cell_value(&rw->cells[1 + p], &v)) return kt_fail(err, "%s has no value", par->name);
    const kt_value *at = bsearch(&v, par->values, par->nvalues, sizeof v, compare_values);
    if (!at) return kt_fail(err, "%s has a value that is not one of its values", par->name);
    vi[p] = (uint32_t)(at - par->values);
  }
  return 0;
}

static int read_row(const row *rw, const layout *lo, kt_results *r, uint32_t *vi, kt_error *err) {
  char *end;
  const char *index = cell_at(rw, 0);
  errno = 0;
  long long i = strtoll(index, &end, 10);
  if (!*index || *end || errno || i < 0)
    return kt_fail(err, "index '%s' is no configuration index (an integer from 0)", index);
  size_t ncols = lo->status + 3 + 2 * lo->nkernels + NTAIL + lo->nmetrics;
  if (rw->n != ncols) return kt_fail(err, "%zu columns where the header has %zu", rw->n, ncols);
  if (read_config(rw, r, vi, err)) return -1;
  kt_result *res = kt_results_add(r, (uint64_t)i, vi, err);
  return res ? read_outcome(rw, lo, res, err) : -1;
}

/* ---- files ---- */

static kt_results *results_of(const row *rows, size_t nrows, const layout *lo, kt_error *err) {
  kt_space *space = kt_space_new(err);
  const char **kernels = kt_calloc(lo->nkernels + 1, sizeof *kernels, err);
  int rc = space && kernels ? 0 : -1;
  for (size_t p = 0; p < lo->nparams && rc == 0; p++) rc = add_param(space, rows, nrows, 1 + p, err);
  for (size_t k = 0; k < lo->nkernels && rc == 0; k++) {
    const char *g = rows[0].cells[lo->status + 3 + 2 * k].s;
    /* "NAME_global"; one kernel's columns are "global" and do not name it */
    kernels[k] = lo->nkernels == 1 ? "?" : g;
    if (lo->nkernels > 1) rows[0].cells[lo->status + 3 + 2 * k].s[strlen(g) - 7] = '\0';
  }
  kt_results *r = rc == 0 ? kt_results_new("results", space, kernels, lo->nkernels, "", err) : NULL;
  uint32_t *vi = r ? kt_calloc(lo->nparams + 1, sizeof *vi, err) : NULL;
  for (size_t i = 1; vi && i < nrows; i++)
    if (read_row(&rows[i], lo, r, vi, err)) {
      kt_fail_prefix(err, "line %zu: ", rows[i].line);
      kt_results_release(r);
      r = NULL;
      break;
    }
  free(vi);
  free(kernels);
  kt_space_free(space);
  return r;
}

bool kt_results_csv_is(const char *text, size_t len) {
  return len >= 6 && memcmp(text, "index,", 6) == 0;
}

/* The end of the record at p: its line end outside quotes (a quoted text
** may hold line ends, and "" is a quote in it), or its NUL; the lines it
** spans are counted in *lines. */
static char *record_end(char *p, size_t *lines) {
  bool quoted = false;
  for (; *p && (quoted || *p != '\n'); p++) {
    if (*p == '"') quoted = !quoted;
    if (*p == '\n') (*lines)++;
  }
  return p;
}

/* The records of text (a copy, changed in place) as rows of cells. */
static int split_rows(char *text, row **rows, size_t *nrows, kt_error *err) {
  size_t cap = 0, line = 1;
  for (char *rec = text; *rec;) {
    size_t first = line;
    char *end = record_end(rec, &line), *next = *end ? end + 1 : end;
    if (*end) line++;
    *end = '\0';
    if (end > rec && end[-1] == '\r') end[-1] = '\0';
    if (*rec) {
      if (kt_grow(rows, &cap, *nrows + 1, sizeof **rows, err)) return -1;
      row *r = &(*rows)[(*nrows)++];
      r->line = first;
      if (split_line(rec, r, err)) return kt_fail_prefix(err, "line %zu: ", first);
    }
    rec = next;
  }
  return 0;
}

kt_results *kt_results_from_csv(const char *text, size_t len, kt_error *err) {
  char *copy = kt_alloc(len + 1, err);
  if (!copy) return NULL;
  memcpy(copy, text, len);
  copy[len] = '\0';
  row *rows = NULL;
  size_t nrows = 0;
  layout lo = {0, 0, 0, 0, NULL};
  kt_results *r = NULL;
  if (split_rows(copy, &rows, &nrows, err) == 0 &&
      (nrows ? read_layout(&rows[0], &lo, err) : kt_fail(err, "no header")) == 0)
    r = results_of(rows, nrows, &lo, err);
  for (size_t i = 0; i < nrows; i++) free(rows[i].cells);
  free(rows);
  free(copy);
  return r;
}
