/*
** additive.c: the additive surrogate.
*/
#include "additive.h"

#include <math.h>
#include <stdlib.h>

/* Prior weight of the overall mean in each value's term: a value seen
** once moves its term only half way to what it saw. */
#define SHRINK 1.0

int kt_additive_init(kt_additive *m, const kt_space *s, kt_error *err) {
  *m = (kt_additive){0};
  m->nparams = kt_space_nparams(s);
  size_t nvalues = 0;
  if (!(m->offset = kt_calloc(m->nparams + 1, sizeof *m->offset, err))) return -1;
  for (size_t p = 0; p < m->nparams; p++) {
    m->offset[p] = nvalues;
    nvalues += kt_space_param(s, p)->nvalues;
  }
  m->sum = kt_calloc(nvalues, sizeof *m->sum, err);
  m->ok = kt_calloc(nvalues, sizeof *m->ok, err);
  m->failed = kt_calloc(nvalues, sizeof *m->failed, err);
  if (!m->sum || !m->ok || !m->failed) {
    kt_additive_clear(m);
    return -1;
  }
  m->worst = -INFINITY;
  return 0;
}

void kt_additive_clear(kt_additive *m) {
  free(m->offset);
  free(m->sum);
  free(m->ok);
  free(m->failed);
  *m = (kt_additive){0};
}

void kt_additive_add(kt_additive *m, const uint32_t *vi, double cost) {
  bool ok = isfinite(cost) && cost > 0;
  double y = ok ? log(cost) : 0;
  for (size_t p = 0; p < m->nparams; p++) {
    size_t at = m->offset[p] + vi[p];
    if (ok) {
      m->sum[at] += y;
      m->ok[at]++;
    } else {
      m->failed[at]++;
    }
  }
  if (ok) {
    m->total += y;
    m->nok++;
    if (y > m->worst) m->worst = y;
  } else {
    m->nfailed++;
  }
}

double kt_additive_predict(const kt_additive *m, const uint32_t *vi) {
  uint64_t n = m->nok + m->nfailed;
  if (n == 0) return 0;
  double fail_y = m->nok ? m->worst + log(2.0) : 1;
  double mean = (m->total + (double)m->nfailed * fail_y) / (double)n, pred = mean;
  for (size_t p = 0; p < m->nparams; p++) {
    size_t at = m->offset[p] + vi[p];
    double seen = m->ok[at] + m->failed[at];
    double term = (m->sum[at] + m->failed[at] * fail_y + SHRINK * mean) / (seen + SHRINK);
    pred += term - mean;
  }
  return pred;
}

typedef struct ranked {
  double pred;
  size_t pos;
  uint64_t index;
} ranked;

static int by_prediction(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->pred != y->pred) return x->pred < y->pred ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

int kt_additive_order(const kt_additive *m, const kt_space *s, kt_indices *l, uint32_t *vi,
                      kt_error *err) {
  if (l->n < 2) return 0;
  ranked *r = kt_calloc(l->n, sizeof *r, err);
  if (!r) return -1;
  for (size_t i = 0; i < l->n; i++) {
    kt_space_config(s, l->items[i], vi, NULL);
    r[i] = (ranked){kt_additive_predict(m, vi), i, l->items[i]};
  }
  qsort(r, l->n, sizeof *r, by_prediction);
  for (size_t i = 0; i < l->n; i++) l->items[i] = r[i].index;
  free(r);
  return 0;
}
