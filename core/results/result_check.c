/*
** result_check.c: results read from a file that contradict themselves.
** A configuration index names one configuration of its space: records
** that give one index two configurations cannot both be true, and
** whichever a reader kept would be a lie (a journal's record again
** replaces the record of its index). A journal, which only a tuning
** writes, also gives each configuration one index (resuming finds its
** records by configuration; a resumed tuning whose indices moved writes it
** again whole): one configuration under two indices is refused there. A
** results file may record a configuration twice, as T4 files do (their
** indices are places in the file; results converted from one keep them):
** kt.load keeps each record, a replay the last, and both say so
** (kt_results_note_repeats).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"

typedef struct record {
  const kt_result *x;
  size_t np, at; /* at: position in the results */
} record;

static int same_config(const kt_result *a, const kt_result *b, size_t np) {
  return memcmp(a->vi, b->vi, np * sizeof *a->vi) == 0;
}

static int by_config(const void *a, const void *b) {
  const record *x = a, *y = b;
  int c = memcmp(x->x->vi, y->x->vi, x->np * sizeof *x->x->vi);
  return c ? c : x->at < y->at ? -1 : x->at > y->at;
}

static int by_index(const void *a, const void *b) {
  const record *x = a, *y = b;
  if (x->x->index != y->x->index) return x->x->index < y->x->index ? -1 : 1;
  return x->at < y->at ? -1 : x->at > y->at;
}

/* "A=1, B=\"x\"" */
static void describe(const kt_results *r, const uint32_t *vi, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  for (size_t p = 0; p < r->nparams && n < size; p++) {
    char v[64];
    n += (size_t)snprintf(buf + n, size - n, "%s%s=%s", p ? ", " : "", r->params[p].name,
                          kt_value_show(&r->params[p].values[vi[p]], v, sizeof v));
  }
}

int kt_result_contradicts(const kt_results *r, const kt_result *a, const kt_result *b,
                          size_t wa, size_t wb, const char *unit, kt_error *err) {
  bool same = same_config(a, b, r->nparams);
  if (same == (a->index == b->index)) return 0;
  char ca[256], cb[256];
  describe(r, a->vi, ca, sizeof ca);
  describe(r, b->vi, cb, sizeof cb);
  if (!same)
    return kt_fail(err, "%ss %zu and %zu contradict each other: index %llu is configuration %s in "
                   "one and %s in the other", unit, wa, wb, (unsigned long long)a->index, ca, cb);
  return kt_fail(err, "%ss %zu and %zu contradict each other: configuration %s has index %llu in "
                 "one and %llu in the other", unit, wa, wb, ca, (unsigned long long)a->index,
                 (unsigned long long)b->index);
}

/* Neighbours in the order cmp sorts them by: one index, two
** configurations; one configuration, two indices when by_config. */
static int check_sorted(const kt_results *r, record *recs, int (*cmp)(const void *, const void *),
                        const size_t *where, const char *unit, kt_error *err) {
  qsort(recs, r->n, sizeof *recs, cmp);
  for (size_t i = 1; i < r->n; i++) {
    const record *a = &recs[i - 1], *b = &recs[i];
    bool one_index = a->x->index == b->x->index;
    if ((cmp == by_index) != one_index) continue;
    if (kt_result_contradicts(r, a->x, b->x, where ? where[a->at] : a->at + 1,
                              where ? where[b->at] : b->at + 1, unit, err))
      return -1;
  }
  return 0;
}

/* Moves item `from` to `to` (whose record goes), and where[] alike. */
static void take_place(kt_results *r, size_t *where, size_t to, size_t from) {
  kt_result_clear(&r->items[to]);
  r->items[to] = r->items[from];
  memset(&r->items[from], 0, sizeof r->items[from]);
  if (where) where[to] = where[from];
}

int kt_results_keep_last(kt_results *r, size_t *where, kt_error *err) {
  if (r->n < 2) return 0;
  record *recs = kt_calloc(r->n, sizeof *recs, err);
  bool *gone = recs ? kt_calloc(r->n, sizeof *gone, err) : NULL;
  size_t (*moves)[2] = gone ? kt_calloc(r->n, sizeof *moves, err) : NULL;
  if (!moves) {
    free(recs);
    free(gone);
    return -1;
  }
  for (size_t i = 0; i < r->n; i++) recs[i] = (record){&r->items[i], r->nparams, i};
  qsort(recs, r->n, sizeof *recs, by_config); /* each configuration's records in file order */
  size_t nmoves = 0;
  for (size_t i = 0, j; i < r->n; i = j + 1) {
    for (j = i; j + 1 < r->n && same_config(recs[j + 1].x, recs[i].x, r->nparams); j++)
      gone[recs[j + 1].at] = true;
    if (j > i) memcpy(moves[nmoves++], (size_t[2]){recs[i].at, recs[j].at}, sizeof *moves);
  }
  free(recs);
  for (size_t m = 0; m < nmoves; m++) take_place(r, where, moves[m][0], moves[m][1]);
  size_t n = 0;
  for (size_t i = 0; i < r->n; i++) {
    if (gone[i]) {
      kt_result_clear(&r->items[i]);
      continue;
    }
    r->items[n] = r->items[i];
    if (where) where[n] = where[i];
    n++;
  }
  r->n = n;
  free(gone);
  free(moves);
  return 0;
}

/* A configuration's k records, from recs[i] (sorted by configuration), as
** "configuration V=0 is recorded 2 times (results 1 and 3)". */
static void repeated(const kt_results *r, const record *recs, size_t i, size_t k, char *buf,
                     size_t size) {
  char config[256];
  describe(r, recs[i].x->vi, config, sizeof config);
  size_t first = recs[i].at + 1, last = recs[i + k - 1].at + 1;
  if (k == 2)
    snprintf(buf, size, "configuration %s is recorded 2 times (results %zu and %zu)", config,
             first, last);
  else
    snprintf(buf, size, "configuration %s is recorded %zu times (first as result %zu, last as "
             "result %zu)", config, k, first, last);
}

/* Appends text to r's notice ("; " between). */
static int add_notice(kt_results *r, const char *text, kt_error *err) {
  size_t had = r->notice ? strlen(r->notice) : 0, n = had + strlen(text) + 3;
  char *grown = realloc(r->notice, n);
  if (!grown) return kt_fail(err, "out of memory");
  snprintf(grown + had, n - had, "%s%s", had ? "; " : "", text);
  r->notice = grown;
  return 0;
}

int kt_results_note_repeats(kt_results *r, const char *what, kt_error *err) {
  if (r->n < 2) return 0;
  record *recs = kt_calloc(r->n, sizeof *recs, err);
  if (!recs) return -1;
  for (size_t i = 0; i < r->n; i++) recs[i] = (record){&r->items[i], r->nparams, i};
  qsort(recs, r->n, sizeof *recs, by_config); /* each configuration's records in file order */
  size_t configs = 0, first = r->n, k_first = 0;
  for (size_t i = 0, j; i < r->n; i = j) {
    for (j = i + 1; j < r->n && same_config(recs[j].x, recs[i].x, r->nparams); j++) continue;
    if (j - i < 2) continue;
    configs++;
    if (first == r->n || recs[i].at < recs[first].at) { /* the file's first such */
      first = i;
      k_first = j - i;
    }
  }
  char text[512] = "";
  if (configs) {
    char one[400];
    repeated(r, recs, first, k_first, one, sizeof one);
    if (configs == 1) snprintf(text, sizeof text, "%s: %s", one, what);
    else snprintf(text, sizeof text, "%s, and %zu other configuration%s more than once: %s", one,
                  configs - 1, configs > 2 ? "s" : "", what);
  }
  free(recs);
  return configs ? add_notice(r, text, err) : 0;
}

int kt_results_check_indices(const kt_results *r, bool both, const size_t *where,
                             const char *unit, kt_error *err) {
  if (r->n < 2) return 0;
  record *recs = kt_calloc(r->n, sizeof *recs, err);
  if (!recs) return -1;
  for (size_t i = 0; i < r->n; i++) recs[i] = (record){&r->items[i], r->nparams, i};
  int rc = (both && check_sorted(r, recs, by_config, where, unit, err)) ||
                   check_sorted(r, recs, by_index, where, unit, err)
               ? -1 : 0;
  free(recs);
  return rc;
}
