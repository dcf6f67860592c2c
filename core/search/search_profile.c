/*
** search_profile.c: KTT's profile-based searcher (Filipovic et al., "Using
** hardware performance counters to speed up autotuning convergence on
** GPUs", JPDC 2022), steered by the hardware counters of the
** configurations it has seen (tune option profile; search = "profile"
** alone profiles the counters of bottlenecks.h).
**
** It runs batches of `batch` configurations, the first drawn at random.
** Once a batch is in, the fastest configuration so far is analysed
** (bottlenecks.h): its bottlenecks say which counters should go down or
** up, and by how much (the change c_j). The candidates are up to
** `neighbors` unexplored configurations within `distance` changed
** parameters of it and `random` random ones. Each is scored by how its
** counters move the wanted way:
**   s = sum_j sign(c_j (p_j - a_j)) |c_j| 2 |p_j - a_j| / (p_j + a_j)
** with p the candidate's predicted counters and a the fastest one's
** (measured).
** Scores below `cutoff` weigh 0.0001; the others are mapped to [0, 2]
** (1 - s/min below 0, 1 + s/max above) and raised to `exp`. The next
** batch is drawn from the candidates by weight, without repetition.
**
** The predictions: KTT predicts counters with a model trained beforehand
** on another GPU or input. Here the model learns as the search goes, from
** the configurations profiled so far: what the score needs is the effect
** of changing a parameter's value on each counter, which it takes as the
** change of the mean log(1 + counter) of the configurations with each
** value (an additive model, additive.h's sums), added up over the changed
** parameters; a value not yet profiled has no known effect. KTT
** profiles only the fastest of each batch, where here each configuration
** has its counters, as the tuning collects them.
**
** Options: batch (2), neighbors (100), random (10), distance (2),
** exp (8), react (0.7: a pipe busier than that is a bottleneck),
** cutoff (-0.25): KTT's defaults.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "additive.h"
#include "bottlenecks.h"
#include "metrics.h"
#include "neighbors.h"
#include "result.h"
#include "search.h"

typedef struct profile_opts {
  unsigned batch, neighbors, random, distance;
  double exp, react, cutoff;
} profile_opts;

typedef struct profile {
  profile_opts o;
  uint64_t seed;
  kt_walker w;
  kt_additive model[KT_PC_COUNT];
  bool started;
  uint64_t best;      /* the fastest configuration with counters ... */
  double best_cost;   /* ... its cost (INFINITY: none yet) ... */
  double best_pc[KT_PC_COUNT]; /* ... and its counters (NAN: unknown) */
  kt_indices queue;   /* the batch still to propose */
  size_t next;
  kt_indices cand;    /* scratch: candidates */
  double *score;
} profile;

static void pf_destroy(void *state) {
  profile *p = state;
  kt_walker_clear(&p->w);
  for (int i = 0; i < KT_PC_COUNT; i++) kt_additive_clear(&p->model[i]);
  kt_indices_clear(&p->queue);
  kt_indices_clear(&p->cand);
  free(p->score);
  free(p);
}

static int pf_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  profile *p = s->state;
  kt_walker_clear(&p->w);
  for (int i = 0; i < KT_PC_COUNT; i++) kt_additive_clear(&p->model[i]);
  p->queue.n = p->next = 0;
  p->best_cost = INFINITY;
  p->started = true;
  if (kt_walker_init(&p->w, space, p->seed, err)) return -1;
  for (int i = 0; i < KT_PC_COUNT; i++)
    if (kt_additive_init(&p->model[i], space, err)) return -1;
  return 0;
}

/* ---- what results say ---- */

static int pf_report(kt_searcher *s, uint64_t index, const kt_result *r, kt_error *err) {
  profile *p = s->state;
  if (kt_walker_record(&p->w, index, r, err)) return -1;
  if (r->status != KT_OK) return 0;
  bool any = false;
  double pc[KT_PC_COUNT];
  if (kt_space_config(p->w.space, index, p->w.vi, err)) return -1;
  for (int i = 0; i < KT_PC_COUNT; i++) {
    double v = pc[i] = kt_result_metric(r, kt_profile_counters[i]);
    if (isnan(v) || v < 0) continue;
    kt_additive_add(&p->model[i], p->w.vi, v + 1);
    any = true;
  }
  double cost = kt_result_cost(r);
  if (any && cost < p->best_cost) {
    p->best = index;
    p->best_cost = cost;
    memcpy(p->best_pc, pc, sizeof pc);
  }
  return 0;
}

/* ---- candidates and their scores ---- */

static bool listed(const kt_indices *l, uint64_t x) {
  for (size_t i = 0; i < l->n; i++)
    if (l->items[i] == x) return true;
  return false;
}

/* Unexplored neighbours of the fastest, then random ones. */
static int candidates(profile *p, kt_error *err) {
  kt_indices near = {0};
  p->cand.n = 0;
  int rc = kt_neighbors(&p->w, p->best, p->o.distance, KT_HAMMING, &near, err);
  if (rc == 0) kt_indices_shuffle(&near, &p->w.rng);
  for (size_t i = 0; rc == 0 && i < near.n && p->cand.n < p->o.neighbors; i++)
    if (!kt_walker_explored(&p->w, near.items[i], NULL))
      rc = kt_indices_push(&p->cand, near.items[i], err);
  kt_indices_clear(&near);
  size_t want = p->cand.n + p->o.random;
  for (unsigned tries = 0; rc == 0 && p->cand.n < want && tries < 4 * p->o.random; tries++) {
    uint64_t x;
    if (kt_random_unexplored(&p->w, &x)) break;
    if (!listed(&p->cand, x)) rc = kt_indices_push(&p->cand, x, err);
  }
  return rc;
}

/* The mean log counter of the configurations with value at of the model
** (NAN: none seen). */
static double value_mean(const kt_additive *m, size_t at) {
  return m->ok[at] ? m->sum[at] / m->ok[at] : NAN;
}

/* A candidate's counters, predicted from the fastest's (best_vi): each
** parameter whose value it changes moves each counter by the change of
** the mean log counter between the two values. Values no profiled
** configuration had move nothing: a candidate that changes only such
** values has counters unknown (NAN), which neither draws nor repels. */
static void predict(const profile *p, const uint32_t *best_vi, const uint32_t *vi, double *pc) {
  for (int i = 0; i < KT_PC_COUNT; i++) {
    const kt_additive *m = &p->model[i];
    double shift = 0;
    bool known = false;
    for (size_t q = 0; q < m->nparams; q++) {
      if (vi[q] == best_vi[q]) continue;
      double d = value_mean(m, m->offset[q] + vi[q]) - value_mean(m, m->offset[q] + best_vi[q]);
      if (isnan(d)) continue;
      shift += d;
      known = true;
    }
    pc[i] = known && !isnan(p->best_pc[i]) ? (p->best_pc[i] + 1) * exp(shift) - 1 : NAN;
  }
}

static double raw_score(const double *change, const double *pc, const double *actual) {
  double s = 0;
  for (int j = 0; j < KT_PC_COUNT; j++) {
    double d = pc[j] - actual[j], sum = pc[j] + actual[j];
    if (change[j] == 0 || isnan(d) || !(sum > 0)) continue;
    double term = fabs(change[j]) * 2 * fabs(d) / sum;
    s += change[j] * d > 0 ? term : -term;
  }
  return s;
}

/* KTT's weights from the raw scores. */
static void weigh(const profile *p, double *score, size_t n) {
  double lo = 0, hi = 0;
  for (size_t i = 0; i < n; i++) lo = fmin(lo, score[i]), hi = fmax(hi, score[i]);
  for (size_t i = 0; i < n; i++) {
    double s = score[i];
    if (s < p->o.cutoff) s = 0;
    else s = pow(s < 0 ? 1 - s / lo : s > 0 ? 1 + s / hi : 1, p->o.exp);
    score[i] = s < 1e-4 ? 1e-4 : s;
  }
}

static int score_candidates(profile *p, kt_error *err) {
  double pc[KT_PC_COUNT], change[KT_PC_COUNT];
  double *sc = realloc(p->score, (p->cand.n ? p->cand.n : 1) * sizeof *sc);
  if (!sc) return kt_fail(err, "out of memory");
  p->score = sc;
  if (kt_space_config(p->w.space, p->best, p->w.vi, err)) return -1;
  kt_profile_changes(p->best_pc, p->o.react, change);
  for (size_t i = 0; i < p->cand.n; i++) {
    if (kt_space_config(p->w.space, p->cand.items[i], p->w.vj, err)) return -1;
    predict(p, p->w.vi, p->w.vj, pc);
    sc[i] = raw_score(change, pc, p->best_pc);
  }
  weigh(p, sc, p->cand.n);
  return 0;
}

/* Draws the batch from the candidates by weight, without repetition. */
static int draw_batch(profile *p, kt_error *err) {
  size_t n = p->cand.n;
  for (unsigned k = 0; k < p->o.batch && n > 0; k++) {
    double total = 0, at;
    for (size_t i = 0; i < n; i++) total += p->score[i];
    at = kt_rng_double(&p->w.rng) * total;
    size_t i = 0;
    while (i + 1 < n && (at -= p->score[i]) >= 0) i++;
    if (kt_indices_push(&p->queue, p->cand.items[i], err)) return -1;
    p->cand.items[i] = p->cand.items[--n]; /* drawn: out of the pool */
    p->score[i] = p->score[n];
  }
  return 0;
}

static int random_batch(profile *p, kt_error *err) {
  for (unsigned k = 0; k < p->o.batch; k++) {
    uint64_t x;
    if (kt_random_unexplored(&p->w, &x)) break;
    if (!listed(&p->queue, x) && kt_indices_push(&p->queue, x, err)) return -1;
  }
  return 0;
}

static int new_batch(profile *p, kt_error *err) {
  p->queue.n = p->next = 0;
  if (isinf(p->best_cost)) return random_batch(p, err);
  if (candidates(p, err) || score_candidates(p, err)) return -1;
  return draw_batch(p, err);
}

/* One at a time: a batch is made once the results of the last are in. */
static int pf_next(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  profile *p = s->state;
  *got = 0;
  const kt_indices *q = &p->queue;
  while (p->next < q->n && kt_walker_explored(&p->w, q->items[p->next], NULL))
    p->next++; /* evaluated meanwhile (a resumed journal) */
  if (max > 0 && p->next >= p->queue.n && new_batch(p, err)) return -1;
  if (max > 0 && p->next < p->queue.n) out[(*got)++] = p->queue.items[p->next++];
  return 0;
}

static const kt_searcher_ops profile_ops = {"profile", pf_start, pf_next, pf_report, pf_destroy, NULL, NULL};

static int read_opts(const kt_search_opts *o, profile_opts *po, kt_error *err) {
  static const char *const allowed[] = {"batch", "neighbors", "random", "distance", "exp",
                                        "react", "cutoff", NULL};
  double batch, neighbors, random, distance;
  const char *me = "profile";
  if (kt_search_opts_check(o, me, allowed, err) ||
      kt_search_opt_whole(o, me, "batch", 2, 1, 1e6, false, &batch, err) ||
      kt_search_opt_whole(o, me, "neighbors", 100, 0, 1e7, false, &neighbors, err) ||
      kt_search_opt_whole(o, me, "random", 10, 0, 1e7, false, &random, err) ||
      kt_search_opt_whole(o, me, "distance", 2, 1, 16, false, &distance, err) ||
      kt_search_opt_number(o, me, "exp", 8, 0, 64, &po->exp, err) ||
      kt_search_opt_number(o, me, "react", 0.7, 0, 0.99, &po->react, err) ||
      kt_search_opt_number(o, me, "cutoff", -0.25, -1e9, 0, &po->cutoff, err))
    return -1;
  po->batch = (unsigned)batch, po->neighbors = (unsigned)neighbors;
  po->random = (unsigned)random, po->distance = (unsigned)distance;
  if (po->neighbors + po->random == 0)
    return kt_fail(err, "searcher 'profile': neighbors and random are both 0: no candidates");
  return 0;
}

int kt_search_profile_init(kt_searcher *s, const kt_search_opts *o, kt_error *err) {
  profile_opts po;
  if (read_opts(o, &po, err)) return -1;
  profile *p = kt_calloc(1, sizeof *p, err);
  if (!p) return -1;
  p->o = po;
  p->seed = o->seed;
  s->ops = &profile_ops;
  s->state = p;
  return 0;
}
