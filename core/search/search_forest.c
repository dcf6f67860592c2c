/*
** search_forest.c: search guided by a random forest fitted to what this
** tuning has measured: sequential model-based optimisation, as SMAC
** (Hutter et al. 2011), ytopt and BaCO (Hellsten et al. 2023) do it, sized
** for budgets of tens to thousands of evaluations (bench/RESULTS.md, issue 40).
**
** The search first measures `sample` random configurations. From then on a
** random forest (forest.h: `trees` regression trees, each on a bootstrap
** resample of at most RESAMPLE results) predicts the logarithm of the cost
** from the parameters' value indices, and the spread of its trees says how
** unsure it is. With `clip` q below 1 the forest learns the log costs
** capped at their q-quantile among the successes, and a failed
** configuration as that cap: it resolves the fast region finely, and learns
** where configurations fail (or are slow) as one "not fast" region to stay
** away from; with q = 1 it learns the log costs as they are, and a failure
** as e times slower than the slowest success.
**
** Each proposal is the candidate of the highest expected improvement over
** the best measured (Jones et al. 1998: for y ~ N(m, s^2), the forest's mean
** m and spread s, E[max(best - y, 0)]; with `kappa` K > 0 the lowest
** m - K s instead), ties going to the lower mean. The candidates are
** - the neighbours of the `top` best configurations measured, each (with
**   `apart` D) at least D parameters away from every better one of them:
**   the best, and the best elsewhere, so that the search climbs in a second
**   basin too, as a hill climber's restarts do; neighbours are those one
**   parameter away, and with `pairs` those that move two parameters each
**   to an adjacent value (a step along a diagonal, where a product of two
**   parameters is bounded): local moves, where the forest has most data;
** - `pool` random configurations not yet measured: global ones, where it is
**   least sure.
** A share `explore` of the proposals is a random configuration instead.
**
** Cost. The forest is fitted again after every result while there are
** fewer than EVERY of them (a small budget needs the model's every word),
** then once the results have grown by the fraction `refit` since the last
** fit (a geometric schedule: with 0.25, about 4 ln(n / EVERY) fits more in
** n evaluations), each tree on at most RESAMPLE of them, so that a fit
** costs a bounded amount. Candidates are predicted when they join (the
** neighbours of a new best, listed with their value indices at hand) and
** at a fit, tree by tree; at a fit the random ones are kept but a share
** RENEW, drawn anew, and the neighbours of configurations no longer among
** the best leave. A proposal then costs a scan of the candidates. On a
** space of 100,000 configurations that is about 12, 8 and 5 µs of CPU per
** evaluation at budgets of 1%, 2% and 5% (bench/overhead/searcher_cpu.lua,
** a busy machine; 8 trees: 11, 7 and 4 µs).
**
** Up to `ahead` proposals are in flight (so that a device compiles them
** together). After each result those not yet evaluated are taken back (the
** loop's withdraw) and chosen again with that result in: a proposal's
** random draws depend on the seed and its number alone, so the search
** evaluates what it would one proposal at a time, whatever `ahead` and the
** lookahead; what it does not propose again was compiled for nothing
** (results:summary().withdrawn).
**
** With a prior (search.h: configurations that did well on other devices
** or sizes, weighted), the prior counts as `trust` fast results among the
** tuning's own (search_forest_prior.c): `trust` pseudo-results, allotted
** to the prior's configurations by their weights (a parameter it does not
** say drawn at random), each learnt as fast as the best measured so far
** (until the configuration is measured: then its own result); they weigh
** less as the tuning's own results come in (16 of 24 rows after 8 results,
** 16 of 116 after 100). Those the space holds are candidates until
** measured. Before the first fit, the sample is guessed: each of its
** configurations the one of GUESS random draws most like the prior (its
** values weighted by the prior's weights). Without a prior, or with trust
** 0, the search is what it was.
**
** Options: sample (8; below 1, a fraction of the valid configurations),
** trees (10), leaf (2: the fewest results in a leaf), top (2), apart (4;
** 0: the best `top` wherever they are), pairs (1), pool (256), explore (0),
** kappa (0: expected improvement), refit (0.25), clip (0.5), ahead (8),
** trust (16; 0: a prior is ignored).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forest.h"
#include "indexmap.h"
#include "neighbors.h"
#include "result.h"
#include "search.h"
#include "search_forest.h"

/* The share of the parameters a split chooses among (Breiman's mtry). */
#define MTRY_SHARE 0.5
/* The most results one tree learns from. */
#define RESAMPLE 256
/* The share of the random candidates drawn anew at each fit. */
#define RENEW 0.5
/* Below this many results the forest is fitted again after every one. */
#define EVERY 32
/* With clip 1: how much slower than the slowest success (in log cost) a
** failure is learnt. */
#define FAILED_PENALTY 1.0

#define mix kt_forest_mix
#define in_flight kt_forest_in_flight

/* The log of a cost (a maximised objective's is negative: minus the log
** of the value), INFINITY for a failure. */
static double log_cost(double cost) {
  if (!isfinite(cost)) return INFINITY;
  if (cost > 0) return log(cost);
  if (cost < 0) return -log(-cost);
  return -700;
}

/* ---- candidates ---- */

/* The standard normal density and distribution at z (the distribution by
** Abramowitz and Stegun 26.2.17, within 7.5e-8): one exp for both. */
static void normal(double z, double *pdf, double *cdf) {
  double e = exp(-0.5 * z * z);
  *pdf = e * 0.3989422804014327;
  double t = 1 / (1 + 0.2316419 * fabs(z));
  double tail = *pdf * t * (0.319381530 + t * (-0.356563782 + t * (1.781477937 +
                t * (-1.821255978 + t * 1.330274429))));
  *cdf = z >= 0 ? 1 - tail : tail;
}

static double acquisition(const fsearch *f, double mu, double sd) {
  if (f->kappa > 0) return -(mu - f->kappa * sd);
  double imp = f->ybest - mu;
  if (!(sd > 1e-12)) return imp > 0 ? imp : 0;
  double pdf, cdf;
  normal(imp / sd, &pdf, &cdf);
  return imp * cdf + sd * pdf;
}

static void predict(fsearch *f, size_t i) {
  cand *c = &f->cands[i];
  c->mu = kt_forest_predict(&f->model, f->cvi + i * f->w.nparams, &c->sd);
  c->acq = acquisition(f, c->mu, c->sd);
}

/* A candidate joins (unless measured or one already): of value indices vi,
** or when vi is NULL as its index says. */
static int add_kind(fsearch *f, uint64_t index, const uint32_t *vi, int kind, uint64_t owner,
                    kt_error *err) {
  size_t P = f->w.nparams;
  uint64_t at;
  if (kt_walker_explored(&f->w, index, NULL) || (kt_indexmap_get(&f->in_cands, index, &at) && at))
    return 0;
  if (kt_grow(&f->cands, &f->capcands, f->ncands + 1, sizeof *f->cands, err) ||
      kt_grow(&f->cvi, &f->capcvi, (f->ncands + 1) * P + 1, sizeof *f->cvi, err) ||
      kt_indexmap_put(&f->in_cands, index, f->ncands + 1, err))
    return -1;
  if (vi) memcpy(f->cvi + f->ncands * P, vi, P * sizeof *vi);
  else if (kt_space_config(f->w.space, index, f->cvi + f->ncands * P, err)) return -1;
  f->cands[f->ncands] = (cand){index, owner, 0, 0, 0, kind == KT_FCAND_RANDOM, kind == KT_FCAND_PRIOR};
  predict(f, f->ncands++);
  return 0;
}

static int add_cand(fsearch *f, uint64_t index, const uint32_t *vi, bool random, uint64_t owner,
                    kt_error *err) {
  return add_kind(f, index, vi, random ? KT_FCAND_RANDOM : KT_FCAND_NEAR, owner, err);
}

/* The prior's configurations the space holds, not yet measured, as
** candidates (search_forest_prior.c). */
static int add_prior_cands(fsearch *f, kt_error *err) {
  for (size_t r = 0; r < f->nprior; r++)
    if (f->pindex[r] != UINT64_MAX &&
        add_kind(f, f->pindex[r], f->pvi + r * f->w.nparams, KT_FCAND_PRIOR, 0, err))
      return -1;
  return 0;
}

/* Candidate i leaves (the last takes its place). */
static void drop_cand(fsearch *f, size_t i) {
  kt_error ignored; /* both keys are in the map: nothing to allocate */
  size_t P = f->w.nparams, last = --f->ncands;
  uint64_t index = f->cands[i].index;
  f->cands[i] = f->cands[last];
  memmove(f->cvi + i * P, f->cvi + last * P, P * sizeof *f->cvi);
  if (i != last) kt_indexmap_put(&f->in_cands, f->cands[i].index, i + 1, &ignored);
  kt_indexmap_put(&f->in_cands, index, 0, &ignored);
}

/* A candidate measured leaves the candidates. */
static void remove_cand(fsearch *f, uint64_t index) {
  uint64_t at;
  if (kt_indexmap_get(&f->in_cands, index, &at) && at) drop_cand(f, (size_t)at - 1);
}

/* vj as a candidate if it is in the space. */
static int try_neighbour(fsearch *f, const uint32_t *vj, uint64_t owner, kt_error *err) {
  uint64_t index;
  return kt_space_index(f->w.space, vj, &index) ? 0 : add_cand(f, index, vj, false, owner, err);
}

/* The neighbours of a configuration among the best, as candidates: one
** parameter changed to any other value; with pairs, two parameters each
** to an adjacent value. */
static int add_neighbours(fsearch *f, uint64_t index, kt_error *err) {
  size_t P = f->w.nparams;
  uint32_t *vi = f->w.vi, *vj = f->w.vj;
  if (kt_space_config(f->w.space, index, vi, err)) return -1;
  memcpy(vj, vi, P * sizeof *vj);
  for (size_t p = 0; p < P; p++) {
    uint32_t nv = (uint32_t)kt_space_param(f->w.space, p)->nvalues;
    for (uint32_t v = 0; v < nv; v++) {
      if (v == vi[p]) continue;
      vj[p] = v;
      if (try_neighbour(f, vj, index, err)) return -1;
    }
    vj[p] = vi[p];
  }
  for (size_t p = 0; f->pairs && p < P; p++)
    for (size_t q = p + 1; q < P; q++)
      for (int dp = -1; dp <= 1; dp += 2)
        for (int dq = -1; dq <= 1; dq += 2) {
          int64_t a = (int64_t)vi[p] + dp, b = (int64_t)vi[q] + dq;
          if (a < 0 || b < 0 || a >= (int64_t)kt_space_param(f->w.space, p)->nvalues ||
              b >= (int64_t)kt_space_param(f->w.space, q)->nvalues)
            continue;
          vj[p] = (uint32_t)a;
          vj[q] = (uint32_t)b;
          int rc = try_neighbour(f, vj, index, err);
          vj[p] = vi[p];
          vj[q] = vi[q];
          if (rc) return -1;
        }
  return 0;
}

/* A random configuration not taken; 1 when there is none now. */
static int draw_any(fsearch *f, uint64_t *out) {
  for (int t = 0; t < 64; t++) {
    if (kt_random_unexplored(&f->w, out)) return 1;
    if (!in_flight(f, *out)) return 0;
  }
  return 1; /* what is left is in flight */
}

/* Whether a configuration is among the best `top`. */
static bool among_best(const fsearch *f, uint64_t index) {
  for (size_t i = 0; i < f->nbest; i++)
    if (f->best[i].index == index) return true;
  return false;
}

/* After a fit: the neighbours of configurations no longer among the best
** leave, and a share RENEW of the random candidates, to be drawn anew (at
** each fit: fresh global candidates while the forest changes most); those
** left are predicted anew; the neighbours of the best are listed (those
** not candidates yet join), and new random ones up to `pool`. */
static int rebuild(fsearch *f, kt_error *err) {
  kt_rng_seed(&f->w.rng, mix(f->seed, f->nfits, 2));
  size_t kept = 0;
  for (size_t i = f->ncands; i-- > 0;) {
    const cand *c = &f->cands[i];
    if (c->random ? kt_rng_double(&f->w.rng) < RENEW : !c->prior && !among_best(f, c->owner))
      drop_cand(f, i);
    else kept += c->random;
  }
  if (kt_grow(&f->scratch, &f->capscratch, 2 * f->ncands + 1, sizeof *f->scratch, err)) return -1;
  kt_forest_predict_many(&f->model, f->cvi, f->ncands, f->scratch, f->scratch + f->ncands);
  for (size_t i = 0; i < f->ncands; i++) {
    cand *c = &f->cands[i];
    c->mu = f->scratch[i];
    c->sd = f->scratch[f->ncands + i];
    c->acq = acquisition(f, c->mu, c->sd);
  }
  for (size_t i = 0; i < f->nbest; i++)
    if (add_neighbours(f, f->best[i].index, err)) return -1;
  for (size_t i = kept; i < f->pool; i++) {
    uint64_t c;
    if (kt_random_unexplored(&f->w, &c)) break;
    if (add_cand(f, c, NULL, true, 0, err)) return -1;
  }
  return f->nprior ? add_prior_cands(f, err) : 0;
}

/* The acquisition of every candidate again (the best has changed). */
static void rescore(fsearch *f) {
  for (size_t i = 0; i < f->ncands; i++)
    f->cands[i].acq = acquisition(f, f->cands[i].mu, f->cands[i].sd);
}

/* ---- the forest ---- */

static int by_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The most a fit learns for a log cost, and what it learns for a failure:
** with clip q < 1 the q-quantile of the successes' log costs; else e times
** the slowest success. */
static int target_cap(fsearch *f, double *cap, kt_error *err) {
  if (f->clip >= 1) {
    *cap = f->ymax + FAILED_PENALTY;
    return 0;
  }
  double *ok = kt_calloc(f->nok + 1, sizeof *ok, err);
  if (!ok) return -1;
  size_t k = 0;
  for (size_t i = 0; i < f->n; i++)
    if (isfinite(f->y[i])) ok[k++] = f->y[i];
  qsort(ok, k, sizeof *ok, by_double);
  *cap = ok[(size_t)floor(f->clip * (double)(k - 1))];
  free(ok);
  return 0;
}

/* Fits the forest to every result and rebuilds the candidates. */
static int fit(fsearch *f, kt_error *err) {
  double cap;
  if (kt_grow(&f->target, &f->captarget, f->n + 1, sizeof *f->target, err) ||
      target_cap(f, &cap, err))
    return -1;
  for (size_t i = 0; i < f->n; i++) f->target[i] = f->y[i] < cap ? f->y[i] : cap;
  size_t rows = f->n, extra = 0;
  if (f->nprior && kt_forest_prior_rows(f, &extra, err)) return -1;
  if (kt_forest_fit(&f->model, f->x, f->target, rows + extra, mix(f->seed, f->nfits, 1), err))
    return -1;
  f->fitted_at = f->n;
  f->nfits++;
  return rebuild(f, err);
}

static unsigned distance(const fsearch *f, size_t a, size_t b) {
  size_t P = f->w.nparams;
  unsigned d = 0;
  for (size_t p = 0; p < P; p++) d += f->x[a * P + p] != f->x[b * P + p];
  return d;
}

/* With apart D: the best `top` successes each at least D parameters from
** every better one of them, listed again from all results. */
static int enter_apart(fsearch *f, kt_error *err) {
  ranked old[64];
  size_t nold = f->nbest < 64 ? f->nbest : 64;
  memcpy(old, f->best, nold * sizeof *old);
  f->nbest = 0;
  while (f->nbest < f->top) {
    size_t at = SIZE_MAX;
    for (size_t r = 0; r < f->n; r++) {
      if (!isfinite(f->y[r]) || (at != SIZE_MAX && !(f->y[r] < f->y[at]))) continue;
      bool far = true;
      for (size_t k = 0; k < f->nbest && far; k++)
        far = distance(f, r, (size_t)f->best[k].row) >= f->apart;
      if (far) at = r;
    }
    if (at == SIZE_MAX) break;
    f->best[f->nbest++] = (ranked){f->rowindex[at], f->y[at], at};
  }
  for (size_t k = 0; f->model.fitted && k < f->nbest; k++) {
    bool was = false;
    for (size_t j = 0; j < nold && !was; j++) was = old[j].index == f->best[k].index;
    if (!was && add_neighbours(f, f->best[k].index, err)) return -1;
  }
  return 0;
}

/* Enters a success among the best `top`; its neighbours become candidates. */
static int enter_best(fsearch *f, uint64_t index, double y, kt_error *err) {
  if (!f->top || (f->nbest == f->top && !(y < f->best[f->nbest - 1].y))) return 0;
  if (f->apart) return enter_apart(f, err);
  size_t at = f->nbest < f->top ? f->nbest++ : f->nbest - 1;
  while (at > 0 && y < f->best[at - 1].y) {
    f->best[at] = f->best[at - 1];
    at--;
  }
  f->best[at] = (ranked){index, y, f->n - 1};
  return f->model.fitted ? add_neighbours(f, index, err) : 0;
}

/* ---- the searcher ---- */

static void forget(fsearch *f) {
  kt_forest_prior_clear(f);
  kt_walker_clear(&f->w);
  kt_forest_clear(&f->model);
  kt_indexmap_clear(&f->in_cands);
  f->n = f->nok = f->ncands = f->nbest = f->fitted_at = 0;
  f->nfits = f->nflights = 0;
  f->heard = 0;
  f->ybest = INFINITY;
  f->ymax = -INFINITY;
}

static int fo_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  fsearch *f = s->state;
  forget(f);
  if (kt_walker_init(&f->w, space, f->seed, err) ||
      kt_forest_init(&f->model, space, f->ntrees, f->leaf, MTRY_SHARE, err))
    return -1;
  f->model.resample = RESAMPLE;
  f->sample = kt_search_size(f->sample_opt, f->w.count);
  return 0;
}

/* Whether candidate a comes before b: the higher acquisition, then the
** lower mean. */
static bool before(const cand *a, const cand *b) {
  return a->acq > b->acq || (a->acq == b->acq && a->mu < b->mu);
}

/* The best m candidates not in flight into f->picks (positions in cands),
** best first, in one scan; their number. */
static size_t pick(fsearch *f, size_t m) {
  size_t n = 0;
  for (size_t i = 0; i < f->ncands && m; i++) {
    const cand *c = &f->cands[i];
    if (n == m && !before(c, &f->cands[f->picks[m - 1]])) continue;
    if (in_flight(f, c->index)) continue; /* measured ones have left */
    size_t at = n < m ? n++ : m - 1;
    while (at > 0 && before(c, &f->cands[f->picks[at - 1]])) {
      f->picks[at] = f->picks[at - 1];
      at--;
    }
    f->picks[at] = i;
  }
  return n;
}

/* Up to `ahead` in flight: the k-th proposal of the tuning (heard + in
** flight) is random in the sample, before the first fit, and at the share
** explore (a draw seeded by the seed and k alone); else the best candidate
** left. */
static int fo_next(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  fsearch *f = s->state;
  (void)err;
  *got = 0;
  size_t room = f->ahead - f->nflights < max ? f->ahead - f->nflights : max;
  size_t npicks = f->model.fitted ? pick(f, room) : 0, used = 0;
  while (*got < room) {
    uint64_t k = f->heard + f->nflights, *o = &out[*got];
    kt_rng_seed(&f->w.rng, mix(f->seed, k, 0));
    bool random = k < f->sample || !f->model.fitted || kt_rng_double(&f->w.rng) < f->explore;
    bool any = false;
    while (!random && !any && used < npicks) {
      *o = f->cands[f->picks[used++]].index;
      any = !in_flight(f, *o); /* a random draw of this call may have taken it */
    }
    if (!any && (random && f->nprior && !f->model.fitted ? kt_forest_guess(f, o)
                                                         : draw_any(f, o)))
      break;
    f->flights[f->nflights++] = *o;
    (*got)++;
  }
  return 0;
}

static int fo_report(kt_searcher *s, uint64_t index, const kt_result *r, kt_error *err) {
  fsearch *f = s->state;
  f->heard++;
  for (unsigned i = 0; i < f->nflights; i++)
    if (f->flights[i] == index) {
      f->flights[i] = f->flights[--f->nflights];
      break;
    }
  if (kt_walker_explored(&f->w, index, NULL)) return 0; /* heard before */
  size_t P = f->w.nparams;
  double y = log_cost(kt_result_cost(r));
  if (kt_walker_record(&f->w, index, r, err) ||
      kt_grow(&f->x, &f->capx, (f->n + 1) * P + 1, sizeof *f->x, err) ||
      kt_grow(&f->y, &f->capy, f->n + 1, sizeof *f->y, err) ||
      kt_grow(&f->rowindex, &f->caprowindex, f->n + 1, sizeof *f->rowindex, err))
    return -1;
  f->rowindex[f->n] = index;
  memcpy(f->x + f->n * P, r->vi, P * sizeof *f->x);
  f->y[f->n++] = y;
  remove_cand(f, index);
  if (isfinite(y)) {
    f->nok++;
    if (y > f->ymax) f->ymax = y;
    if (y < f->ybest) {
      f->ybest = y;
      rescore(f);
    }
    if (enter_best(f, index, y, err)) return -1;
  }
  size_t step = f->fitted_at < EVERY ? 1 : (size_t)ceil(f->refit * (double)f->fitted_at);
  if (f->nok && f->n >= f->sample && (!f->fitted_at || f->n >= f->fitted_at + (step ? step : 1)))
    return fit(f, err);
  return 0;
}

/* Every proposal not yet evaluated is taken back, to be chosen again with
** the latest result in. */
static int fo_withdraw(kt_searcher *s, const uint64_t *pending, size_t n, size_t *keep,
                       kt_error *err) {
  fsearch *f = s->state;
  (void)err;
  for (size_t k = 0; k < n; k++)
    for (unsigned i = 0; i < f->nflights; i++)
      if (f->flights[i] == pending[k]) {
        f->flights[i] = f->flights[--f->nflights];
        break;
      }
  *keep = 0;
  return 0;
}

static void fo_destroy(void *state) {
  fsearch *f = state;
  forget(f);
  free(f->x);
  free(f->y);
  free(f->rowindex);
  free(f->target);
  free(f->best);
  free(f->cands);
  free(f->cvi);
  free(f->flights);
  free(f->picks);
  free(f->scratch);
  free(f);
}

static int fo_prior(kt_searcher *s, const kt_prior *p, kt_error *err) {
  return kt_forest_prior(s->state, p, err);
}

static const kt_searcher_ops forest_ops = {"forest", fo_start, fo_next, fo_report, fo_destroy,
                                           fo_withdraw, fo_prior};

int kt_search_forest_init(kt_searcher *s, const kt_search_opts *o, kt_error *err) {
  static const char *const allowed[] = {"sample", "trees", "leaf", "top", "apart", "pairs",
                                        "pool", "explore", "kappa", "refit", "clip", "ahead",
                                        "trust", NULL};
  double sample, trees, leaf, top, apart, pairs, pool, explore, kappa, refit, clip, ahead, trust;
  if (kt_search_opts_check(o, "forest", allowed, err) ||
      kt_search_opt_whole(o, "forest", "sample", 8, 1e-9, 1e9, true, &sample, err) ||
      kt_search_opt_whole(o, "forest", "trees", 10, 1, 256, false, &trees, err) ||
      kt_search_opt_whole(o, "forest", "leaf", 2, 1, 1e6, false, &leaf, err) ||
      kt_search_opt_whole(o, "forest", "top", 2, 0, 64, false, &top, err) ||
      kt_search_opt_whole(o, "forest", "apart", 4, 0, 1e6, false, &apart, err) ||
      kt_search_opt_whole(o, "forest", "pairs", 1, 0, 1, false, &pairs, err) ||
      kt_search_opt_whole(o, "forest", "pool", 256, 0, 1e6, false, &pool, err) ||
      kt_search_opt_number(o, "forest", "explore", 0, 0, 1, &explore, err) ||
      kt_search_opt_number(o, "forest", "kappa", 0, 0, 1e6, &kappa, err) ||
      kt_search_opt_number(o, "forest", "refit", 0.25, 0, 1e6, &refit, err) ||
      kt_search_opt_number(o, "forest", "clip", 0.5, 1e-9, 1, &clip, err) ||
      kt_search_opt_whole(o, "forest", "ahead", 8, 1, 1024, false, &ahead, err) ||
      kt_search_opt_whole(o, "forest", "trust", 16, 0, 4096, false, &trust, err))
    return -1;
  fsearch *f = kt_calloc(1, sizeof *f, err);
  if (!f) return -1;
  *f = (fsearch){.seed = o->seed, .sample_opt = sample, .explore = explore, .refit = refit,
                 .kappa = kappa, .clip = clip, .ntrees = (unsigned)trees, .leaf = (unsigned)leaf,
                 .top = (unsigned)top, .pairs = (unsigned)pairs, .pool = (unsigned)pool,
                 .apart = (unsigned)apart, .ahead = (unsigned)ahead, .trust = (unsigned)trust,
                 .ybest = INFINITY,
                 .ymax = -INFINITY};
  kt_indexmap_init(&f->in_cands);
  f->flights = kt_calloc(f->ahead, sizeof *f->flights, err);
  f->best = kt_calloc(f->top + 1, sizeof *f->best, err);
  f->picks = kt_calloc(f->ahead, sizeof *f->picks, err);
  if (!f->flights || !f->best || !f->picks) {
    fo_destroy(f);
    return -1;
  }
  s->ops = &forest_ops;
  s->state = f;
  return 0;
}
