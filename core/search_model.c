/*
** search_model.c: model-based search after Falch and Elster ("Machine
** learning based auto-tuning for enhanced OpenCL performance
** portability", 2015).
**
** The search first measures `sample` random configurations. An ensemble
** of `k` neural networks (ensemble.h: one hidden layer of `hidden` sigmoid
** units each, every one trained on its own bootstrap resample) then
** learns the logarithm of the time from the configurations' value
** indices, and predicts every configuration of the space. The second
** stage measures the unexplored configurations whose predicted time is
** within a factor 1 + `t` of the predicted best (best first; when none is
** left, the best predicted ones). The ensemble learns again, from the
** weights it has reached, each time the results have grown by a quarter
** since it last learnt (at least `ahead`), and when the configurations
** within the threshold run out. A failed configuration is learnt as
** e (2.7) times slower than the slowest success, so that it is not
** predicted fast, nor are its neighbours.
**
** Spaces of over 2^18 configurations are predicted on a random 2^18 of
** them, drawn once per tuning. Up to `ahead` proposals are in flight.
** Options: sample (24; below 1, a fraction of the valid configurations),
** k (11), hidden (50: 40 to 70, the paper's range), t (0.05), epochs
** (100), ahead (8). Needs FANN: without it, the searcher says so.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ensemble.h"
#include "indexmap.h"
#include "neighbors.h"
#include "permutation.h"
#include "result.h"
#include "search.h"

#define POOL_MAX (1u << 18)
#define FAILED_PENALTY 1.0 /* in log time, above the slowest success */

typedef struct ranked {
  float pred;
  uint32_t pos;
} ranked;

typedef struct model {
  kt_walker w;
  uint64_t seed;
  double sample_opt, threshold, retrain;
  unsigned sample, ahead, epochs;
  kt_ensemble_opts net_opts;
  kt_ensemble *net;
  size_t d;              /* inputs: one per parameter */
  uint64_t *pool;        /* the configurations predicted */
  float *px, *pred;      /* their inputs and predictions */
  size_t npool;
  ranked *queue;         /* pool positions to propose, best predicted first */
  size_t nqueue, qnext;
  float *tx, *ty;        /* every result's inputs, and the targets of a training */
  double *tlog;          /* every result's log time, INFINITY when it failed */
  size_t nres, capres, nok;
  size_t trained_at;     /* results at the last training; 0 before the first */
  double mu, sd;         /* log time normalisation, fixed at the first training */
  kt_indexmap proposed;
  uint64_t *flights;
  unsigned nflights;
  uint64_t drawn;
} model;

static void inputs_of(const model *m, const uint32_t *vi, float *x) {
  for (size_t p = 0; p < m->d; p++) {
    size_t nv = kt_space_param(m->w.space, p)->nvalues;
    x[p] = nv > 1 ? (float)vi[p] / (float)(nv - 1) : 0.0f;
  }
}

static bool taken(const model *m, uint64_t index) {
  uint64_t unused;
  return kt_walker_explored(&m->w, index, NULL) || kt_indexmap_get(&m->proposed, index, &unused);
}

static void release(model *m) {
  kt_walker_clear(&m->w);
  kt_ensemble_free(m->net);
  m->net = NULL;
  free(m->pool), free(m->px), free(m->pred), free(m->queue);
  free(m->tx), free(m->ty), free(m->tlog);
  m->pool = NULL, m->px = m->pred = m->tx = m->ty = NULL, m->queue = NULL, m->tlog = NULL;
  m->npool = m->nqueue = m->qnext = m->nres = m->capres = m->nok = m->trained_at = 0;
  kt_indexmap_clear(&m->proposed);
  m->nflights = 0;
  m->drawn = 0;
}

/* The pool: every configuration, or a random POOL_MAX of them. */
static int make_pool(model *m, kt_error *err) {
  uint64_t count = m->w.count;
  m->npool = count < POOL_MAX ? (size_t)count : POOL_MAX;
  if (!(m->pool = kt_calloc(m->npool ? m->npool : 1, sizeof *m->pool, err)) ||
      !(m->px = kt_calloc(m->npool * m->d + 1, sizeof *m->px, err)) ||
      !(m->pred = kt_calloc(m->npool + 1, sizeof *m->pred, err)) ||
      !(m->queue = kt_calloc(m->npool + 1, sizeof *m->queue, err)))
    return -1;
  kt_permutation perm;
  kt_permutation_init(&perm, count, m->seed ^ 0x6d6f64656cULL);
  for (size_t i = 0; i < m->npool; i++) {
    m->pool[i] = m->npool == count ? i : kt_permutation_at(&perm, i);
    if (kt_space_config(m->w.space, m->pool[i], m->w.vi, err)) return -1;
    inputs_of(m, m->w.vi, m->px + i * m->d);
  }
  return 0;
}

static int md_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  model *m = s->state;
  release(m);
  if (kt_walker_init(&m->w, space, m->seed, err)) return -1;
  m->d = kt_space_nparams(space);
  m->sample = kt_search_size(m->sample_opt, m->w.count);
  kt_ensemble_opts o = m->net_opts;
  o.seed = m->seed;
  if (!(m->net = kt_ensemble_new(m->d ? m->d : 1, &o, err))) return -1;
  return make_pool(m, err);
}

/* ---- learning and predicting ---- */

static int train(model *m, kt_error *err) {
  double worst = -INFINITY;
  if (!m->trained_at) { /* normalise by the first sample's successes */
    double sum = 0, sq = 0;
    for (size_t i = 0; i < m->nres; i++)
      if (isfinite(m->tlog[i])) sum += m->tlog[i], sq += m->tlog[i] * m->tlog[i];
    m->mu = sum / (double)m->nok;
    double var = sq / (double)m->nok - m->mu * m->mu;
    m->sd = var > 1e-12 ? sqrt(var) : 1;
  }
  for (size_t i = 0; i < m->nres; i++)
    if (isfinite(m->tlog[i]) && m->tlog[i] > worst) worst = m->tlog[i];
  for (size_t i = 0; i < m->nres; i++) {
    double t = isfinite(m->tlog[i]) ? m->tlog[i] : worst + FAILED_PENALTY;
    m->ty[i] = (float)((t - m->mu) / m->sd);
  }
  if (kt_ensemble_train(m->net, m->tx, m->ty, m->nres, m->epochs, err)) return -1;
  m->trained_at = m->nres;
  return 0;
}

static int by_prediction(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->pred != y->pred) return x->pred < y->pred ? -1 : 1;
  return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The queue: unexplored configurations predicted within the threshold of
** the best prediction; when there are none, the best predicted `fallback`. */
static void build_queue(model *m, size_t fallback) {
  float best = INFINITY;
  for (size_t i = 0; i < m->npool; i++) best = m->pred[i] < best ? m->pred[i] : best;
  float cut = best + (float)(log1p(m->threshold) / m->sd);
  size_t n = 0, open = 0;
  for (size_t i = 0; i < m->npool; i++) { /* those within the cut first */
    if (taken(m, m->pool[i])) continue;
    ranked r = {m->pred[i], (uint32_t)i};
    m->queue[open++] = r;
    if (r.pred <= cut) {
      m->queue[open - 1] = m->queue[n];
      m->queue[n++] = r;
    }
  }
  if (n == 0) {
    qsort(m->queue, open, sizeof *m->queue, by_prediction);
    n = open < fallback ? open : fallback;
  } else {
    qsort(m->queue, n, sizeof *m->queue, by_prediction);
  }
  m->nqueue = n;
  m->qnext = 0;
}

/* ---- the searcher ---- */

/* Learns again once the queue has run out and the results have grown by
** `retrain` (at least one); and, whatever the queue, once they have grown
** by a quarter (at least `ahead`). While there is too little to learn
** from and nothing in flight, the best predicted come next. */
static int refresh(model *m, kt_error *err) {
  size_t quarter = m->trained_at / 4 > m->ahead ? m->trained_at / 4 : m->ahead;
  size_t grown = (size_t)ceil((double)m->trained_at * m->retrain);
  size_t need = m->trained_at + (grown > 1 ? grown : 1);
  bool out = m->qnext >= m->nqueue;
  if (!m->trained_at || m->nres >= m->trained_at + quarter || (out && m->nres >= need)) {
    if (train(m, err)) return -1;
    kt_ensemble_predict(m->net, m->px, m->npool, m->pred);
    build_queue(m, m->ahead);
  } else if (out && !m->nflights) {
    build_queue(m, need - m->nres);
  }
  return 0;
}

/* A random configuration not yet taken, if any. */
static int draw(model *m, uint64_t *out, bool *any) {
  for (int t = 0; t < 64; t++) {
    if (kt_random_unexplored(&m->w, out)) return 0;
    if (!taken(m, *out)) {
      m->drawn++;
      *any = true;
      return 0;
    }
  }
  return 0; /* what is left is in flight */
}

/* One proposal into *out; *any false when there is none until results
** come back (or none at all, with nothing in flight). */
static int propose(model *m, uint64_t *out, bool *any, kt_error *err) {
  *any = false;
  if (m->drawn < m->sample || (!m->nok && m->nres >= m->drawn)) return draw(m, out, any);
  if (!m->nok) return 0; /* the model waits for a success */
  if (m->nres < m->sample && m->nflights) return 0; /* and for the whole sample */
  if (refresh(m, err)) return -1;
  while (m->qnext < m->nqueue) {
    uint64_t i = m->pool[m->queue[m->qnext++].pos];
    if (!taken(m, i)) {
      *out = i;
      *any = true;
      return 0;
    }
  }
  if (m->nflights) return 0; /* wait for what the model learns from them */
  return draw(m, out, any); /* the pool is explored: a large space goes on at random */
}

static int md_next(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  model *m = s->state;
  *got = 0;
  while (*got < max && m->nflights < m->ahead) {
    bool any;
    if (propose(m, &out[*got], &any, err)) return -1;
    if (!any) break;
    if (kt_indexmap_put(&m->proposed, out[*got], 1, err)) return -1;
    m->flights[m->nflights++] = out[(*got)++];
  }
  return 0;
}

static int md_report(kt_searcher *s, uint64_t index, const kt_result *r, kt_error *err) {
  model *m = s->state;
  for (unsigned i = 0; i < m->nflights; i++)
    if (m->flights[i] == index) {
      m->flights[i] = m->flights[--m->nflights];
      break;
    }
  if (kt_walker_explored(&m->w, index, NULL)) return 0; /* learnt already */
  if (kt_walker_record(&m->w, index, r, err) ||
      kt_grow(&m->tlog, &m->capres, m->nres + 1, sizeof *m->tlog, err))
    return -1;
  size_t cap = m->capres;
  float *tx = realloc(m->tx, cap * m->d * sizeof *tx + 1), *ty;
  if (!tx) return kt_fail(err, "out of memory");
  m->tx = tx;
  if (!(ty = realloc(m->ty, cap * sizeof *ty))) return kt_fail(err, "out of memory");
  m->ty = ty;
  double cost = kt_result_cost(r);
  inputs_of(m, r->vi, m->tx + m->nres * m->d);
  m->tlog[m->nres++] = isfinite(cost) ? log(cost) : INFINITY;
  m->nok += isfinite(cost);
  return 0;
}

static void md_destroy(void *state) {
  model *m = state;
  release(m);
  free(m->flights);
  free(m);
}

static const kt_searcher_ops model_ops = {"model", md_start, md_next, md_report, md_destroy};

typedef enum kind { INTEGER, COUNT_OR_FRACTION, NUMBER } kind;

static const char *const expected[] = {"an integer", "an integer", "a number"};

/* An option in [lo, hi] (a COUNT_OR_FRACTION also in (0, 1)), dflt when
** absent; the error names it and what it takes. */
static int option(const kt_search_opts *o, const char *name, double dflt, double lo, double hi,
                  kind kd, double *out, kt_error *err) {
  *out = dflt;
  for (size_t i = 0; i < o->noptions; i++) {
    if (strcmp(o->options[i].name, name) != 0) continue;
    double v = o->options[i].value;
    bool ok = !o->options[i].text && ((v >= lo && v <= hi && (kd == NUMBER || v == floor(v))) ||
                                      (kd == COUNT_OR_FRACTION && v > 0 && v < 1));
    const char *also = kd == COUNT_OR_FRACTION ? " (or a fraction of the space below 1)" : "";
    if (ok) *out = v;
    else if (o->options[i].text)
      return kt_fail(err, "searcher 'model': %s: expected %s from %.15g to %.15g%s, got '%s'", name,
                     expected[kd], lo, hi, also, o->options[i].text);
    else
      return kt_fail(err, "searcher 'model': %s: expected %s from %.15g to %.15g%s, got %.12g", name,
                     expected[kd], lo, hi, also, v);
  }
  return 0;
}

int kt_search_model_init(kt_searcher *s, const kt_search_opts *o, kt_error *err) {
  static const char *const allowed[] = {"sample", "k",       "hidden", "t",
                                        "epochs", "retrain", "ahead",  NULL};
  double sample, k, hidden, t, epochs, retrain, ahead;
  if (kt_search_opts_check(o, "model", allowed, err) ||
      option(o, "sample", 24, 1, 1e9, COUNT_OR_FRACTION, &sample, err) ||
      option(o, "k", 11, 1, 100, INTEGER, &k, err) ||
      option(o, "hidden", 50, 40, 70, INTEGER, &hidden, err) ||
      option(o, "t", 0.05, 0, 100, NUMBER, &t, err) ||
      option(o, "epochs", 100, 1, 100000, INTEGER, &epochs, err) ||
      option(o, "retrain", 0.1, 0, 100, NUMBER, &retrain, err) ||
      option(o, "ahead", 8, 1, 1024, INTEGER, &ahead, err))
    return -1;
  if (!kt_ensemble_available())
    return kt_fail(err, "searcher 'model' is unavailable: ktlua was built without FANN "
                        "(the neural networks of libfann-dev)");
  model *m = kt_calloc(1, sizeof *m, err);
  if (!m) return -1;
  if (!(m->flights = kt_calloc((size_t)ahead, sizeof *m->flights, err))) {
    free(m);
    return -1;
  }
  m->seed = o->seed;
  m->sample_opt = sample;
  m->threshold = t;
  m->retrain = retrain;
  m->ahead = (unsigned)ahead;
  m->epochs = (unsigned)epochs;
  m->net_opts = (kt_ensemble_opts){(unsigned)k, (unsigned)hidden, 0};
  kt_indexmap_init(&m->proposed);
  s->ops = &model_ops;
  s->state = m;
  return 0;
}
