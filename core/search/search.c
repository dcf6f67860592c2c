/*
** search.c: the registry of built-in searchers, options and stop
** conditions.
**
** Searchers (tune options: search = "name" or {"name", seed = 1, option = value}):
**
**   exhaustive    every configuration in index order (the default of tuner:tune)
**   random        seeded random order without repetition
**   bestfirst     best-first local search in episodes (the default before
**                 2026-12-08). Options:
**                 sample (16), width (8), patience (4), ahead (8), model (1),
**                 restart (0), guess (0), pool (64), adapt (0), across (0)
**   greedy        greedy descent with restarts (adjacent, then Hamming
**                 neighbourhood): sample (16), adjacent (1), model (1)
**   annealing     simulated annealing: t0 (0.1), alpha (0.99), t_min (0.001),
**                 adjacent (0)
**   mcmc          Metropolis walk at a fixed temperature: temperature (0.05),
**                 adjacent (0)
**   genetic       genetic algorithm: population (10, or below 1 a fraction of
**                 the space), crossover (1), mutation (0.2), elite (2),
**                 stagnation (0: off)
**   differential  differential evolution: population (10), f (0.8), cr (0.9)
**   pso           particle swarm: swarm (20), w (0.5), c1 (2), c2 (1)
**   staged        OCLoptimizer's staged search: stages ("A,B;C" or
**                 {{"A", "B"}, {"C"}}), keep (1), tolerance (0), rounds (0),
**                 explore (1)
**   model         Falch and Elster's model-based search (a neural network
**                 ensemble, FANN): sample (24), k (11), hidden (50), t (0.05),
**                 epochs (100), ahead (8)
**   portfolio     several searchers sharing one budget, each proposal from a
**                 member drawn by who found the best: members
**                 ("bestfirst,greedy,annealing"), floor (0.1), fade (0.99),
**                 ahead (8), share (1), bandit (0: members drawn by Thompson
**                 sampling on their share of new bests)
**   profile       KTT's profile-based search, steered by hardware counters
**                 (CUDA, tune option profile): batch (2), neighbors (100),
**                 random (10), distance (2), exp (8), react (0.7),
**                 cutoff (-0.25)
**   forest        sequential model-based search, a random forest fitted to
**                 the tuning's results: RECOMMENDED, the default with a
**                 budget. Options: sample (8), trees (10), leaf (2), top (2),
**                 apart (4), pairs (1), pool (256), explore (0), kappa (0),
**                 refit (0.25), clip (0.5), ahead (8)
**
** Each file search_<name>.c documents its algorithm and options. Every
** searcher draws from the tuning's seed only (staged only once its stages
** are done) and keeps fewer proposals in flight than the least lookahead
** (loop.h), so a seed gives the same search on every machine. None of them counts:
** the budget is the loop's (stop conditions below), so a search with a
** larger budget begins with exactly the proposals of a smaller one.
** Searchers written in Lua are tables with init/next/report (see
** bindings/lk_search.c and doc/searchers.md).
**
** Which to use: forest. Judged by leave-one-family-out on the 38 recorded
** spaces of bench/searchers/spaces and ../shared/datasets (11 kernel
** families; bench/searchers/lofo.lua, bench/RESULTS.md) it reaches on
** average 0.928, 0.971 and 0.989 of the optimum within 1%, 2% and 5% of the
** valid configurations (bestfirst 0.889, 0.956, 0.984) and loses to
** annealing or random-restart hill climbing in no held-out family beyond a
** standard error. It is the default of a tuning with a budget
** (kt_search_default); without one a tuning tries everything, in index
** order.
*/
#include "search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "neighbors.h"
#include "result.h"

int kt_search_exhaustive_init(kt_searcher *s, const kt_search_opts *o, kt_error *err);
int kt_search_random_init(kt_searcher *s, const kt_search_opts *o, kt_error *err);
int kt_search_greedy_init(kt_searcher *s, const kt_search_opts *o, kt_error *err);
int kt_search_bestfirst_init(kt_searcher *s, const kt_search_opts *o, kt_error *err);
int kt_search_annealing_init(kt_searcher *s, const kt_search_opts *o, kt_error *err);
int kt_search_mcmc_init(kt_searcher *s, const kt_search_opts *o, kt_error *err);
int kt_search_genetic_init(kt_searcher *s, const kt_search_opts *o, kt_error *err);
int kt_search_differential_init(kt_searcher *s, const kt_search_opts *o, kt_error *err);
int kt_search_pso_init(kt_searcher *s, const kt_search_opts *o, kt_error *err);
int kt_search_staged_init(kt_searcher *s, const kt_search_opts *o, kt_error *err);
int kt_search_model_init(kt_searcher *s, const kt_search_opts *o, kt_error *err);
int kt_search_portfolio_init(kt_searcher *s, const kt_search_opts *o, kt_error *err);
int kt_search_profile_init(kt_searcher *s, const kt_search_opts *o, kt_error *err);
int kt_search_forest_init(kt_searcher *s, const kt_search_opts *o, kt_error *err);

static const struct {
  const char *name;
  int (*init)(kt_searcher *s, const kt_search_opts *o, kt_error *err);
} builtins[] = {
    {"exhaustive", kt_search_exhaustive_init},
    {"random", kt_search_random_init},
    {"greedy", kt_search_greedy_init},
    {"bestfirst", kt_search_bestfirst_init},
    {"annealing", kt_search_annealing_init},
    {"mcmc", kt_search_mcmc_init},
    {"genetic", kt_search_genetic_init},
    {"differential", kt_search_differential_init},
    {"pso", kt_search_pso_init},
    {"staged", kt_search_staged_init},
    {"model", kt_search_model_init},
    {"portfolio", kt_search_portfolio_init},
    {"profile", kt_search_profile_init},
    {"forest", kt_search_forest_init},
};

#define NBUILTINS (sizeof builtins / sizeof builtins[0])

const char *kt_searcher_names(void) {
  return "exhaustive, random, greedy, bestfirst, annealing, mcmc, genetic, differential, pso, "
         "staged, model, portfolio, profile, forest";
}

const char *kt_search_default(const kt_stop *s) {
  return s->count || s->fraction > 0 || s->seconds > 0 ? "forest" : "exhaustive";
}

kt_searcher *kt_searcher_new(const char *name, const kt_search_opts *o, kt_error *err) {
  static const kt_search_opts none = {0, NULL, 0};
  for (size_t i = 0; i < NBUILTINS; i++) {
    if (strcmp(builtins[i].name, name) != 0) continue;
    kt_searcher *s = kt_calloc(1, sizeof *s, err);
    if (!s) return NULL;
    if (builtins[i].init(s, o ? o : &none, err)) {
      free(s);
      return NULL;
    }
    return s;
  }
  return kt_fail(err, "unknown searcher '%s' (expected one of: %s)", name,
                 kt_searcher_names()), NULL;
}

kt_searcher *kt_searcher_wrap(const kt_searcher_ops *ops, void *state, kt_error *err) {
  kt_searcher *s = kt_calloc(1, sizeof *s, err);
  if (!s) {
    ops->destroy(state);
    return NULL;
  }
  s->ops = ops;
  s->state = state;
  return s;
}

void kt_searcher_free(kt_searcher *s) {
  if (!s) return;
  if (s->ops && s->ops->destroy) s->ops->destroy(s->state);
  free(s);
}

/* ---- stop conditions ---- */

static uint64_t budget(const kt_stop *s, uint64_t space) {
  uint64_t limit = UINT64_MAX;
  if (s->count) limit = s->count;
  if (s->fraction > 0) {
    double f = ceil(s->fraction * (double)space);
    uint64_t byf = f < 1 ? 1 : f >= (double)UINT64_MAX ? UINT64_MAX : (uint64_t)f;
    if (byf < limit) limit = byf;
  }
  return limit;
}

int kt_stop_state_init(kt_stop_state *st, const kt_stop *s, uint64_t space, kt_error *err) {
  *st = (kt_stop_state){0, space, 0, NAN, 0, NULL, 0, 0};
  if (s->min_improvement > 0 && s->window > 0) {
    /* A window longer than the space is as long as the space. */
    uint64_t window = s->window < space ? s->window : space;
    if (window >= SIZE_MAX / sizeof *st->history)
      return kt_fail(err, "stop: the improvement window is too long");
    if (!(st->history = kt_alloc((size_t)(window + 1) * sizeof *st->history, err))) return -1;
    st->window = window;
    st->history[0] = NAN;
  }
  return 0;
}

void kt_stop_state_clear(kt_stop_state *st) {
  free(st->history);
  st->history = NULL;
}

void kt_stop_state_record(kt_stop_state *st, const kt_result *r) {
  st->evaluated++;
  st->since_best++;
  if (r->status != KT_OK) st->failed++;
  double cost = kt_result_cost(r); /* the time, unless an objective says otherwise */
  if (isfinite(cost) && !(cost >= st->best_ns)) {
    st->best_ns = cost;
    st->since_best = 0;
  }
  if (st->history) st->history[st->evaluated % (st->window + 1)] = st->best_ns;
}

uint64_t kt_stop_remaining(const kt_stop *s, const kt_stop_state *st) {
  uint64_t limit = budget(s, st->space);
  return st->evaluated >= limit ? 0 : limit - st->evaluated;
}

/* The best improved by less than the fraction over the window; having
** found nothing at all counts as no improvement. */
static bool improvement_below(const kt_stop *s, const kt_stop_state *st) {
  if (!st->history || st->evaluated < st->window) return false;
  double then = st->history[(st->evaluated - st->window) % (st->window + 1)], now = st->best_ns;
  if (isnan(now)) return true;
  if (isnan(then)) return false;
  return (then - now) / fabs(then) < s->min_improvement; /* a maximised cost is negative */
}

const char *kt_stop_reached(const kt_stop *s, const kt_stop_state *st) {
  if (s->count && st->evaluated >= s->count) return "count";
  if (s->fraction > 0 && st->evaluated >= budget(&(kt_stop){.fraction = s->fraction}, st->space))
    return "fraction";
  if (s->seconds > 0 && st->elapsed_ns >= s->seconds * 1e9) return "seconds";
  if (s->target_ns > 0 && st->best_ns <= s->target_ns) return "target";
  if (s->no_improvement && st->since_best >= s->no_improvement) return "no_improvement";
  if (improvement_below(s, st)) return "min_improvement";
  if (s->failures && st->failed >= s->failures) return "failures";
  return NULL;
}
