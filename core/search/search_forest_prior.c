/*
** search_forest_prior.c: what a prior (search.h) teaches the forest
** searcher (search_forest.c, which says how it is used).
**
** The prior's configurations become `trust` pseudo-results, allotted by
** their weights (systematic sampling over the cumulated weights: a
** configuration of weight share w gets about trust * w of them), each
** with the values the prior leaves out (KT_PRIOR_ANY) drawn at random
** from the searcher's seed and its number alone. A fit learns them as fast
** as the best measured so far, all but those the tuning has measured
** (their own results say how they went). The guesses of the sample score a
** configuration by the prior's weight on each of its values: the sum over
** its parameters of the weights of the prior's configurations that give
** that parameter that value, each over the parameters it says.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search_forest.h"

/* Random draws a guess of the sample chooses among. */
#define GUESS 64

void kt_forest_prior_clear(fsearch *f) {
  free(f->pvi);
  free(f->pscore);
  free(f->pscore_at);
  free(f->pindex);
  f->pvi = NULL;
  f->pscore = NULL;
  f->pscore_at = NULL;
  f->pindex = NULL;
  f->nprior = 0;
}

/* The value scores of the guesses: per parameter and value, the weights
** (over the sum of all) of the prior's configurations saying it, each
** shared among the parameters it says. */
static int value_scores(fsearch *f, const kt_prior *p, double sum, kt_error *err) {
  size_t P = f->w.nparams, total = 0;
  f->pscore_at = kt_calloc(P + 1, sizeof *f->pscore_at, err);
  if (!f->pscore_at) return -1;
  for (size_t q = 0; q < P; q++) {
    f->pscore_at[q] = total;
    total += kt_space_param(f->w.space, q)->nvalues;
  }
  f->pscore_at[P] = total;
  f->pscore = kt_calloc(total + 1, sizeof *f->pscore, err);
  if (!f->pscore) return -1;
  for (size_t i = 0; i < p->n; i++) {
    double w = p->weight[i];
    if (!(w > 0) || !isfinite(w)) continue;
    const uint32_t *vi = p->vi + i * P;
    size_t said = 0;
    for (size_t q = 0; q < P; q++) said += vi[q] != KT_PRIOR_ANY;
    for (size_t q = 0; q < P && said; q++)
      if (vi[q] != KT_PRIOR_ANY && f->pscore_at[q] + vi[q] < f->pscore_at[q + 1])
        f->pscore[f->pscore_at[q] + vi[q]] += w / sum / (double)said;
  }
  return 0;
}

int kt_forest_prior(fsearch *f, const kt_prior *p, kt_error *err) {
  size_t P = f->w.nparams, R = f->trust;
  double sum = 0;
  kt_forest_prior_clear(f);
  for (size_t i = 0; i < p->n; i++)
    if (p->weight[i] > 0 && isfinite(p->weight[i])) sum += p->weight[i];
  if (!R || !P || !(sum > 0)) return 0;
  f->pvi = kt_calloc(R * P, sizeof *f->pvi, err);
  f->pindex = kt_calloc(R, sizeof *f->pindex, err);
  if (!f->pvi || !f->pindex || value_scores(f, p, sum, err)) goto fail;
  kt_rng rng;
  double cum = 0;
  size_t i = 0;
  for (size_t r = 0; r < R; r++) {
    /* the configuration whose cumulated weight passes (r + 1/2) / R */
    double at = ((double)r + 0.5) / (double)R * sum;
    for (; i < p->n; i++) {
      double w = p->weight[i] > 0 && isfinite(p->weight[i]) ? p->weight[i] : 0;
      if (w > 0 && cum + w > at) break;
      cum += w;
    }
    if (i == p->n) i--; /* rounding at the very end: the last one */
    while (i > 0 && !(p->weight[i] > 0 && isfinite(p->weight[i]))) i--;
    kt_rng_seed(&rng, kt_forest_mix(f->seed, r, 4));
    uint32_t *vi = f->pvi + r * P;
    for (size_t q = 0; q < P; q++) {
      uint32_t v = p->vi[i * P + q], nv = (uint32_t)kt_space_param(f->w.space, q)->nvalues;
      vi[q] = v != KT_PRIOR_ANY && v < nv ? v : (uint32_t)kt_rng_below(&rng, nv);
    }
    if (kt_space_index(f->w.space, vi, &f->pindex[r])) f->pindex[r] = UINT64_MAX;
  }
  f->nprior = R;
  return 0;
fail:
  kt_forest_prior_clear(f);
  return -1;
}

int kt_forest_prior_rows(fsearch *f, size_t *extra, kt_error *err) {
  size_t P = f->w.nparams, n = f->n, k = 0;
  *extra = 0;
  if (!isfinite(f->ybest)) return 0;
  if (kt_grow(&f->x, &f->capx, (n + f->nprior) * P + 1, sizeof *f->x, err) ||
      kt_grow(&f->target, &f->captarget, n + f->nprior + 1, sizeof *f->target, err))
    return -1;
  for (size_t r = 0; r < f->nprior; r++) {
    if (f->pindex[r] != UINT64_MAX && kt_walker_explored(&f->w, f->pindex[r], NULL)) continue;
    memcpy(f->x + (n + k) * P, f->pvi + r * P, P * sizeof *f->x);
    f->target[n + k++] = f->ybest;
  }
  *extra = k;
  return 0;
}

static double guess_score(fsearch *f, const uint32_t *vi) {
  double s = 0;
  for (size_t q = 0; q < f->w.nparams; q++) s += f->pscore[f->pscore_at[q] + vi[q]];
  return s;
}

int kt_forest_guess(fsearch *f, uint64_t *out) {
  kt_error ignored; /* a configuration of the space: its values are at hand */
  double best = -1;
  int drawn = 0;
  for (int t = 0; drawn < GUESS && t < 4 * GUESS; t++) {
    uint64_t c;
    if (kt_random_unexplored(&f->w, &c)) break;
    if (kt_forest_in_flight(f, c)) continue;
    drawn++;
    if (kt_space_config(f->w.space, c, f->w.vj, &ignored)) continue;
    double s = guess_score(f, f->w.vj);
    if (s > best) {
      best = s;
      *out = c;
    }
  }
  return best < 0;
}
