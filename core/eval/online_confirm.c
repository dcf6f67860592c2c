/*
** online_confirm.c: re-measuring an online search's leading candidates
** (online_confirm.h).
*/
#include "online_confirm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "neighbors.h"
#include "stats.h"

void kt_confirm_clear(kt_confirm *c) {
  free(c->cands);
  free(c->times);
  free(c->got);
  memset(c, 0, sizeof *c);
}

/* Whether x belongs before the candidate at position y. */
static bool before(const kt_results *r, size_t x, size_t y) {
  return kt_result_cost(&r->items[x]) < kt_result_cost(&r->items[y]);
}

int kt_confirm_begin(kt_confirm *c, const kt_results *r, size_t candidates, unsigned runs,
                     kt_error *err) {
  memset(c, 0, sizeof *c);
  if (!candidates || !runs) return 0;
  if (!(c->cands = kt_calloc(candidates, sizeof *c->cands, err))) return -1;
  for (size_t i = 0; i < r->n; i++) {
    const kt_result *x = &r->items[i];
    if (x->status != KT_OK || x->cut_short || isnan(kt_result_cost(x))) continue;
    size_t at = c->n < candidates ? c->n++ : candidates; /* insertion, least cost first */
    while (at > 0 && before(r, i, c->cands[at - 1])) {
      if (at < candidates) c->cands[at] = c->cands[at - 1];
      at--;
    }
    if (at < candidates) c->cands[at] = i;
  }
  c->runs = runs;
  c->times = kt_calloc(c->n * runs + 1, sizeof *c->times, err);
  c->got = kt_calloc(c->n + 1, sizeof *c->got, err);
  if (!c->times || !c->got) return kt_confirm_clear(c), -1;
  return 0;
}

long kt_confirm_next(const kt_confirm *c) {
  for (size_t k = 0; k < c->n; k++) {
    size_t j = (c->next + k) % c->n;
    if (c->got[j] < c->runs) return (long)c->cands[j];
  }
  return -1;
}

/* The candidate kt_confirm_next named, by its index in cands. */
static size_t current(const kt_confirm *c) {
  size_t j = c->next;
  while (c->got[j % c->n] >= c->runs) j++;
  return j % c->n;
}

int kt_confirm_record(kt_confirm *c, kt_results *r, const kt_result *ran, kt_error *err) {
  size_t j = current(c);
  kt_result *x = &r->items[c->cands[j]];
  c->next = (j + 1) % c->n;
  if (ran->status != KT_OK) {
    c->got[j] = c->runs;
    return kt_result_set_error(x, ran->status, ran->error);
  }
  double *s = realloc(x->samples_ns, (x->nsamples + 1) * sizeof *s);
  if (!s) return kt_fail(err, "out of memory");
  x->samples_ns = s;
  s[x->nsamples++] = ran->time_ns;
  c->times[j * c->runs + c->got[j]++] = ran->time_ns;
  return 0;
}

int kt_confirm_end(kt_confirm *c, kt_results *r, const kt_metrics *m, kt_error *err) {
  for (size_t j = 0; j < c->n; j++) {
    kt_result *x = &r->items[c->cands[j]];
    if (x->status != KT_OK || c->got[j] == 0) continue;
    x->time_ns = kt_median(&c->times[j * c->runs], c->got[j]);
    if (m && kt_metrics_apply(m, r, x, err)) return -1;
  }
  kt_confirm_clear(c);
  return 0;
}
