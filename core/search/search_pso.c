/*
** search_pso.c: particle swarm optimisation. Each particle has a position
** and a velocity with one coordinate per parameter, in value-index units;
** it evaluates the valid configuration nearest its position
** (kt_nearest). Every step pulls its velocity towards its own best
** configuration and the swarm's:
**   v = w v + c1 r1 (own best - x) + c2 r2 (swarm best - x);  x = x + v
** with r1, r2 uniform in [0, 1). A particle that lands on a configuration
** already explored learns its result at no cost; when two rounds of the
** swarm land only on explored ones, the swarm has converged and every
** particle starts again from a random unexplored configuration (the
** swarm's best is kept).
**
** Options: swarm (20), w (0.5), c1 (2), c2 (1).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "neighbors.h"
#include "result.h"
#include "search.h"

typedef struct pso {
  kt_walker w;
  uint64_t seed;
  unsigned size;
  double inertia, c1, c2;
  double *x, *v, *own;   /* size x nparams each: position, velocity, own best */
  double *own_cost;      /* size */
  double *best;          /* nparams: the swarm's best */
  double best_cost;
  bool *placed;          /* size: the particle has a position */
  unsigned turn;         /* the particle to move next */
  int pending;           /* the particle whose proposal awaits its result, or -1 */
  unsigned fresh, stale; /* proposals in this round; rounds without any */
} pso;

static void learn(pso *p, unsigned i, uint64_t index, double cost) {
  size_t np = p->w.nparams;
  if (!(cost < p->own_cost[i])) return;
  kt_space_config(p->w.space, index, p->w.vj, NULL);
  p->own_cost[i] = cost;
  for (size_t j = 0; j < np; j++) p->own[i * np + j] = p->w.vj[j];
  if (cost < p->best_cost) {
    p->best_cost = cost;
    memcpy(p->best, p->own + i * np, np * sizeof *p->best);
  }
}

static void place(pso *p, unsigned i, uint64_t index) {
  size_t np = p->w.nparams;
  kt_space_config(p->w.space, index, p->w.vj, NULL);
  for (size_t j = 0; j < np; j++) {
    p->x[i * np + j] = p->w.vj[j];
    p->v[i * np + j] = 2 * kt_rng_double(&p->w.rng) - 1;
  }
  p->own_cost[i] = INFINITY;
  p->placed[i] = true;
}

static uint64_t fly(pso *p, unsigned i) {
  size_t np = p->w.nparams;
  double *x = p->x + i * np, *v = p->v + i * np, *own = p->own + i * np;
  bool has_own = isfinite(p->own_cost[i]), has_best = isfinite(p->best_cost);
  for (size_t j = 0; j < np; j++) {
    double r1 = kt_rng_double(&p->w.rng), r2 = kt_rng_double(&p->w.rng);
    v[j] = p->inertia * v[j] + (has_own ? p->c1 * r1 * (own[j] - x[j]) : 0) +
           (has_best ? p->c2 * r2 * (p->best[j] - x[j]) : 0);
    double top = (double)kt_space_param(p->w.space, j)->nvalues - 1;
    x[j] = fmin(fmax(x[j] + v[j], 0), top);
  }
  return kt_nearest(&p->w, x);
}

static int ps_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  pso *p = s->state;
  kt_walker_clear(&p->w);
  if (kt_walker_init(&p->w, space, p->seed, err)) return -1;
  size_t np = p->w.nparams ? p->w.nparams : 1, n = p->size * np;
  free(p->x);
  free(p->placed);
  p->x = kt_calloc(4 * n + p->size + np, sizeof *p->x, err);
  p->placed = kt_calloc(p->size, sizeof *p->placed, err);
  if (!p->x || !p->placed) return -1;
  p->v = p->x + n;
  p->own = p->v + n;
  p->own_cost = p->own + n;
  p->best = p->own_cost + p->size;
  p->best_cost = INFINITY;
  p->turn = p->fresh = p->stale = 0;
  p->pending = -1;
  return 0;
}

/* The end of a round of the swarm; after two without a new configuration,
** every particle starts again. */
static void end_round(pso *p) {
  p->stale = p->fresh ? 0 : p->stale + 1;
  p->fresh = 0;
  if (p->stale >= 2) {
    memset(p->placed, 0, p->size * sizeof *p->placed);
    p->stale = 0;
  }
}

static int ps_next(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  (void)err;
  pso *p = s->state;
  *got = 0;
  if (max == 0) return 0;
  for (;;) {
    unsigned i = p->turn;
    if (++p->turn == p->size) {
      p->turn = 0;
      end_round(p);
    }
    if (!p->placed[i]) {
      if (kt_random_unexplored(&p->w, out)) return 0; /* all explored */
      place(p, i, *out);
    } else {
      *out = fly(p, i);
      double cost;
      if (kt_walker_explored(&p->w, *out, &cost)) {
        learn(p, i, *out, cost);
        continue;
      }
    }
    p->pending = (int)i;
    p->fresh++;
    *got = 1;
    return 0;
  }
}

static int ps_report(kt_searcher *s, uint64_t index, const kt_result *r, kt_error *err) {
  pso *p = s->state;
  if (kt_walker_record(&p->w, index, r, err)) return -1;
  if (p->pending >= 0) learn(p, (unsigned)p->pending, index, kt_result_cost(r));
  p->pending = -1;
  return 0;
}

static void ps_destroy(void *state) {
  pso *p = state;
  kt_walker_clear(&p->w);
  free(p->x);
  free(p->placed);
  free(p);
}

static const kt_searcher_ops pso_ops = {"pso", ps_start, ps_next, ps_report, ps_destroy, NULL, NULL};

int kt_search_pso_init(kt_searcher *s, const kt_search_opts *o, kt_error *err) {
  static const char *const allowed[] = {"swarm", "w", "c1", "c2", NULL};
  double size, inertia, c1, c2;
  if (kt_search_opts_check(o, "pso", allowed, err) ||
      kt_search_opt_whole(o, "pso", "swarm", 20, 1, 1e6, false, &size, err) ||
      kt_search_opt_number(o, "pso", "w", 0.5, 0, 10, &inertia, err) ||
      kt_search_opt_number(o, "pso", "c1", 2, 0, 10, &c1, err) ||
      kt_search_opt_number(o, "pso", "c2", 1, 0, 10, &c2, err))
    return -1;
  pso *p = kt_calloc(1, sizeof *p, err);
  if (!p) return -1;
  *p = (pso){.seed = o->seed, .size = (unsigned)size, .inertia = inertia, .c1 = c1, .c2 = c2};
  s->ops = &pso_ops;
  s->state = p;
  return 0;
}
