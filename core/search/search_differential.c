/*
** search_differential.c: differential evolution (DE/rand/1/bin) over value
** indices. The population starts as random configurations. For each
** member in turn, three others a, b, c give a mutant a + f (b - c); the
** trial takes each coordinate from the mutant with probability cr (and at
** least one), else from the member; the valid configuration nearest the
** trial (kt_nearest) replaces the member when it is at least as fast.
** A trial that lands on a configuration already explored is judged at no
** cost; when two sweeps of the population bring nothing new, every member
** but the fastest starts again from a random unexplored configuration.
**
** Options: population (10, at least 4), f (0.8), cr (0.9).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "neighbors.h"
#include "result.h"
#include "search.h"

typedef struct differential {
  kt_walker w;
  uint64_t seed;
  unsigned size;
  double f, cr;
  double *pop;       /* size x nparams: each member's value indices */
  double *cost;      /* size */
  double *trial;     /* nparams */
  unsigned placed;   /* members 0..placed-1 have a configuration */
  unsigned turn;     /* the member whose trial comes next */
  int pending;       /* the member whose result is awaited, or -1 ... */
  bool pending_new;  /* ... for its first configuration, or for a trial */
  unsigned fresh, stale;
} differential;

static void set_member(differential *d, unsigned i, uint64_t index, double cost) {
  size_t np = d->w.nparams;
  kt_space_config(d->w.space, index, d->w.vj, NULL);
  for (size_t j = 0; j < np; j++) d->pop[i * np + j] = d->w.vj[j];
  d->cost[i] = cost;
}

static unsigned other(differential *d, unsigned a, unsigned b, unsigned c) {
  for (;;) {
    unsigned k = (unsigned)kt_rng_below(&d->w.rng, d->size);
    if (k != a && k != b && k != c) return k;
  }
}

static uint64_t make_trial(differential *d, unsigned i) {
  size_t np = d->w.nparams;
  unsigned a = other(d, i, i, i), b = other(d, i, a, a), c = other(d, i, a, b);
  size_t forced = np ? (size_t)kt_rng_below(&d->w.rng, np) : 0;
  for (size_t j = 0; j < np; j++) {
    double mutant = d->pop[a * np + j] + d->f * (d->pop[b * np + j] - d->pop[c * np + j]);
    bool take = j == forced || kt_rng_double(&d->w.rng) < d->cr;
    d->trial[j] = take ? mutant : d->pop[i * np + j];
  }
  return kt_nearest(&d->w, d->trial);
}

static void judge(differential *d, unsigned i, uint64_t index, double cost) {
  if (cost <= d->cost[i] && isfinite(cost)) set_member(d, i, index, cost);
}

static int de_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  differential *d = s->state;
  kt_walker_clear(&d->w);
  if (kt_walker_init(&d->w, space, d->seed, err)) return -1;
  size_t np = d->w.nparams ? d->w.nparams : 1;
  free(d->pop);
  if (!(d->pop = kt_calloc(d->size * np + d->size + np, sizeof *d->pop, err))) return -1;
  d->cost = d->pop + d->size * np;
  d->trial = d->cost + d->size;
  d->placed = d->turn = d->fresh = d->stale = 0;
  d->pending = -1;
  return 0;
}

/* After two sweeps without a new configuration, all but the fastest
** member start again. */
static void end_sweep(differential *d) {
  d->stale = d->fresh ? 0 : d->stale + 1;
  d->fresh = 0;
  if (d->stale < 2) return;
  unsigned fastest = 0;
  for (unsigned i = 1; i < d->size; i++)
    if (d->cost[i] < d->cost[fastest]) fastest = i;
  if (fastest != 0) {
    size_t np = d->w.nparams;
    memcpy(d->pop, d->pop + fastest * np, np * sizeof *d->pop);
    d->cost[0] = d->cost[fastest];
  }
  d->placed = 1;
  d->stale = 0;
}

static int de_next(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  (void)err;
  differential *d = s->state;
  *got = 0;
  if (max == 0) return 0;
  for (;;) {
    if (d->placed < d->size) {
      if (kt_random_unexplored(&d->w, out)) return 0; /* all explored */
      d->pending = (int)d->placed++;
      d->pending_new = true;
      set_member(d, (unsigned)d->pending, *out, INFINITY);
      *got = 1;
      return 0;
    }
    unsigned i = d->turn;
    if (++d->turn == d->size) {
      d->turn = 0;
      end_sweep(d);
    }
    *out = make_trial(d, i);
    double cost;
    if (kt_walker_explored(&d->w, *out, &cost)) {
      judge(d, i, *out, cost);
      continue;
    }
    d->pending = (int)i;
    d->pending_new = false;
    d->fresh++;
    *got = 1;
    return 0;
  }
}

static int de_report(kt_searcher *s, uint64_t index, const kt_result *r, kt_error *err) {
  differential *d = s->state;
  if (kt_walker_record(&d->w, index, r, err)) return -1;
  double cost = kt_result_cost(r);
  if (d->pending >= 0) {
    unsigned i = (unsigned)d->pending;
    if (d->pending_new) d->cost[i] = cost;
    else judge(d, i, index, cost);
  }
  d->pending = -1;
  return 0;
}

static void de_destroy(void *state) {
  differential *d = state;
  kt_walker_clear(&d->w);
  free(d->pop);
  free(d);
}

static const kt_searcher_ops differential_ops = {"differential", de_start, de_next, de_report,
                                                 de_destroy, NULL, NULL};

int kt_search_differential_init(kt_searcher *s, const kt_search_opts *o, kt_error *err) {
  static const char *const allowed[] = {"population", "f", "cr", NULL};
  double size, f, cr;
  if (kt_search_opts_check(o, "differential", allowed, err) ||
      kt_search_opt_whole(o, "differential", "population", 10, 4, 1e6, false, &size, err) ||
      kt_search_opt_number(o, "differential", "f", 0.8, 0, 2, &f, err) ||
      kt_search_opt_number(o, "differential", "cr", 0.9, 0, 1, &cr, err))
    return -1;
  differential *d = kt_calloc(1, sizeof *d, err);
  if (!d) return -1;
  *d = (differential){.seed = o->seed, .size = (unsigned)size, .f = f, .cr = cr};
  s->ops = &differential_ops;
  s->state = d;
  return 0;
}
