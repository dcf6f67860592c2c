/*
** surrogate.c: a tuning space's model on the neural network ensemble
** (surrogate.h).
*/
#include "surrogate.h"

#include <math.h>
#include <stdlib.h>

#include "permutation.h"

#define FAILED_PENALTY 1.0 /* in log time, above the slowest success */

static void inputs_of(const kt_surrogate *sg, const uint32_t *vi, float *x) {
  x[0] = 0; /* a space without parameters has one input, always 0 */
  for (size_t p = 0; p < kt_space_nparams(sg->space); p++) {
    size_t nv = kt_space_param(sg->space, p)->nvalues;
    x[p] = nv > 1 ? (float)vi[p] / (float)(nv - 1) : 0.0f;
  }
}

void kt_surrogate_clear(kt_surrogate *sg) {
  kt_ensemble_free(sg->net);
  free(sg->pool), free(sg->px), free(sg->pred);
  free(sg->tx), free(sg->ty), free(sg->tlog), free(sg->vi);
  *sg = (kt_surrogate){0};
}

static int make_pool(kt_surrogate *sg, uint64_t seed, kt_error *err) {
  uint64_t count = kt_space_count(sg->space);
  sg->npool = count < KT_SURROGATE_POOL ? (size_t)count : KT_SURROGATE_POOL;
  if (!(sg->pool = kt_calloc(sg->npool + 1, sizeof *sg->pool, err)) ||
      !(sg->px = kt_calloc(sg->npool * sg->d + 1, sizeof *sg->px, err)) ||
      !(sg->pred = kt_calloc(sg->npool + 1, sizeof *sg->pred, err)))
    return -1;
  kt_permutation perm;
  kt_permutation_init(&perm, count, seed ^ 0x6d6f64656cULL);
  for (size_t i = 0; i < sg->npool; i++) {
    sg->pool[i] = sg->npool == count ? i : kt_permutation_at(&perm, i);
    if (kt_space_config(sg->space, sg->pool[i], sg->vi, err)) return -1;
    inputs_of(sg, sg->vi, sg->px + i * sg->d);
  }
  return 0;
}

int kt_surrogate_init(kt_surrogate *sg, const kt_space *s, const kt_ensemble_opts *o,
                      unsigned epochs, size_t resample, kt_error *err) {
  *sg = (kt_surrogate){0};
  sg->space = s;
  sg->d = kt_space_nparams(s) ? kt_space_nparams(s) : 1;
  sg->epochs = epochs;
  sg->resample = resample;
  if (!(sg->vi = kt_calloc(sg->d + 1, sizeof *sg->vi, err)) ||
      !(sg->net = kt_ensemble_new(sg->d, o, err)) || make_pool(sg, o->seed, err)) {
    kt_surrogate_clear(sg);
    return -1;
  }
  return 0;
}

int kt_surrogate_add(kt_surrogate *sg, const uint32_t *vi, double cost, kt_error *err) {
  if (kt_grow(&sg->tlog, &sg->cap, sg->n + 1, sizeof *sg->tlog, err)) return -1;
  float *tx = realloc(sg->tx, (sg->cap * sg->d + 1) * sizeof *tx), *ty;
  if (!tx) return kt_fail(err, "out of memory");
  sg->tx = tx;
  if (!(ty = realloc(sg->ty, sg->cap * sizeof *ty))) return kt_fail(err, "out of memory");
  sg->ty = ty;
  inputs_of(sg, vi, sg->tx + sg->n * sg->d);
  bool ok = isfinite(cost) && cost > 0;
  sg->tlog[sg->n++] = ok ? log(cost) : INFINITY;
  sg->nok += ok;
  return 0;
}

int kt_surrogate_learn(kt_surrogate *sg, kt_error *err) {
  if (!sg->nok) return kt_fail(err, "a model needs a success to learn from");
  if (sg->sd == 0) { /* normalise by the first successes */
    double sum = 0, sq = 0;
    for (size_t i = 0; i < sg->n; i++)
      if (isfinite(sg->tlog[i])) sum += sg->tlog[i], sq += sg->tlog[i] * sg->tlog[i];
    sg->mu = sum / (double)sg->nok;
    double var = sq / (double)sg->nok - sg->mu * sg->mu;
    sg->sd = var > 1e-12 ? sqrt(var) : 1;
  }
  double worst = -INFINITY;
  for (size_t i = 0; i < sg->n; i++)
    if (isfinite(sg->tlog[i]) && sg->tlog[i] > worst) worst = sg->tlog[i];
  for (size_t i = 0; i < sg->n; i++) {
    double t = isfinite(sg->tlog[i]) ? sg->tlog[i] : worst + FAILED_PENALTY;
    sg->ty[i] = (float)((t - sg->mu) / sg->sd);
  }
  size_t m = sg->resample && sg->resample < sg->n ? sg->resample : sg->n;
  if (kt_ensemble_train(sg->net, sg->tx, sg->ty, sg->n, m, sg->epochs, err)) return -1;
  kt_ensemble_predict(sg->net, sg->px, sg->npool, sg->pred);
  for (size_t i = 0; i < sg->npool; i++) /* a network gone astray predicts nothing fast */
    if (isnan(sg->pred[i])) sg->pred[i] = INFINITY;
  return 0;
}
