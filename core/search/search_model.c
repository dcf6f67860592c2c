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
** weights it has reached, once the configurations within the threshold
** have been measured and the results have grown by the fraction
** `retrain` since it last learnt (at least one result; 0: after every
** threshold's worth), and in any case once they have grown by a quarter
** (at least `ahead`). Learning costs in proportion to the results, so
** `retrain` bounds what it costs per evaluation. A failed configuration
** is learnt as e (2.7) times slower than the slowest success, so that it
** is not predicted fast, nor are its neighbours (surrogate.h).
**
** Spaces of over 2^18 configurations are predicted on a random 2^18 of
** them, drawn once per tuning. Up to `ahead` proposals are in flight.
** Options: sample (24; below 1, a fraction of the valid configurations),
** k (11), hidden (50: 40 to 70, the paper's range), t (0.05), epochs
** (100), retrain (0.25), ahead (8). Needs FANN: without it, the searcher says so.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "indexmap.h"
#include "neighbors.h"
#include "result.h"
#include "search.h"
#include "surrogate.h"

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
  kt_surrogate sg;
  ranked *queue;         /* pool positions to propose, best predicted first */
  size_t nqueue, qnext;
  size_t trained_at;     /* results at the last training; 0 before the first */
  kt_indexmap proposed;
  uint64_t *flights;
  unsigned nflights;
  uint64_t drawn;
} model;

static bool taken(const model *m, uint64_t index) {
  uint64_t unused;
  return kt_walker_explored(&m->w, index, NULL) || kt_indexmap_get(&m->proposed, index, &unused);
}

static void release(model *m) {
  kt_walker_clear(&m->w);
  kt_surrogate_clear(&m->sg);
  free(m->queue);
  m->queue = NULL;
  m->nqueue = m->qnext = m->trained_at = 0;
  kt_indexmap_clear(&m->proposed);
  m->nflights = 0;
  m->drawn = 0;
}

static int md_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  model *m = s->state;
  release(m);
  if (kt_walker_init(&m->w, space, m->seed, err)) return -1;
  m->sample = kt_search_size(m->sample_opt, m->w.count);
  kt_ensemble_opts o = m->net_opts;
  o.seed = m->seed;
  if (kt_surrogate_init(&m->sg, space, &o, m->epochs, 0, err)) return -1;
  return (m->queue = kt_calloc(m->sg.npool + 1, sizeof *m->queue, err)) ? 0 : -1;
}

/* ---- learning and predicting ---- */

static int learn(model *m, kt_error *err) {
  if (kt_surrogate_learn(&m->sg, err)) return -1;
  m->trained_at = m->sg.n;
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
  const kt_surrogate *sg = &m->sg;
  float best = INFINITY;
  for (size_t i = 0; i < sg->npool; i++) best = sg->pred[i] < best ? sg->pred[i] : best;
  float cut = best + (float)(log1p(m->threshold) / sg->sd);
  size_t n = 0, open = 0;
  for (size_t i = 0; i < sg->npool; i++) { /* those within the cut first */
    if (taken(m, sg->pool[i])) continue;
    ranked r = {sg->pred[i], (uint32_t)i};
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
  size_t nres = m->sg.n;
  if (!m->trained_at || nres >= m->trained_at + quarter || (out && nres >= need)) {
    if (learn(m, err)) return -1;
    build_queue(m, m->ahead);
  } else if (out && !m->nflights) {
    build_queue(m, need - nres);
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
  if (m->drawn < m->sample || (!m->sg.nok && m->sg.n >= m->drawn)) return draw(m, out, any);
  if (!m->sg.nok) return 0; /* the model waits for a success */
  if (m->sg.n < m->sample && m->nflights) return 0; /* and for the whole sample */
  if (refresh(m, err)) return -1;
  while (m->qnext < m->nqueue) {
    uint64_t i = m->sg.pool[m->queue[m->qnext++].pos];
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
  return kt_walker_record(&m->w, index, r, err) ||
                 kt_surrogate_add(&m->sg, r->vi, kt_result_cost(r), err)
             ? -1
             : 0;
}

static void md_destroy(void *state) {
  model *m = state;
  release(m);
  free(m->flights);
  free(m);
}

static const kt_searcher_ops model_ops = {"model", md_start, md_next, md_report, md_destroy, NULL, NULL};

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
      option(o, "retrain", 0.25, 0, 100, NUMBER, &retrain, err) ||
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
