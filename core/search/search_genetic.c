/*
** search_genetic.c: a genetic algorithm over value indices. Generation 0
** is random configurations. Each next generation keeps the `elite`
** fastest members and fills the rest with children: two parents chosen by
** tournaments of two, uniform crossover (each parameter from either
** parent) with probability `crossover` (else a copy of the first parent),
** then each parameter mutated to a random value with probability
** `mutation`. A child that breaks a constraint becomes the nearest valid
** configuration (kt_nearest); one already explored becomes a random
** unexplored neighbour of itself (or any unexplored configuration), so
** that every child costs an evaluation that teaches something.
**
** Options: population (10; below 1, a fraction of the valid configurations,
** at least 2), crossover (1), mutation (0.2), elite (2), stagnation (0:
** off; else the search ends after that many generations without a faster
** configuration).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "neighbors.h"
#include "result.h"
#include "search.h"

typedef struct genetic {
  kt_walker w;
  uint64_t seed;
  double population, crossover, mutation;
  unsigned elite_opt, stagnation;
  unsigned size, elite;
  bool *chosen;         /* size: taken into the elite */
  uint32_t *pop, *next; /* size x nparams value indices: this generation, the next */
  double *cost, *next_cost;
  uint32_t *members_mem; /* what pop and next point into, swapped each generation */
  double *costs_mem;
  double *point;        /* nparams: a child as a point, for kt_nearest */
  bool first;           /* generation 0 is being filled */
  unsigned filled;      /* members of the generation being filled */
  int pending;          /* the member whose result is awaited, or -1 */
  double best;
  unsigned stagnant;
} genetic;

static unsigned tournament(genetic *g) {
  unsigned a = (unsigned)kt_rng_below(&g->w.rng, g->size);
  unsigned b = (unsigned)kt_rng_below(&g->w.rng, g->size);
  return g->cost[b] < g->cost[a] ? b : a;
}

/* A child into w->vi: crossover and mutation of two tournament winners. */
static void breed(genetic *g) {
  size_t np = g->w.nparams;
  const uint32_t *p1 = g->pop + tournament(g) * np, *p2 = g->pop + tournament(g) * np;
  bool cross = kt_rng_double(&g->w.rng) < g->crossover;
  for (size_t j = 0; j < np; j++) {
    g->w.vi[j] = cross && kt_rng_double(&g->w.rng) < 0.5 ? p2[j] : p1[j];
    uint32_t nv = (uint32_t)kt_space_param(g->w.space, j)->nvalues;
    if (nv > 1 && kt_rng_double(&g->w.rng) < g->mutation) {
      uint32_t v = (uint32_t)kt_rng_below(&g->w.rng, nv - 1);
      g->w.vi[j] = v < g->w.vi[j] ? v : v + 1;
    }
  }
}

/* The child as a valid, unexplored configuration; 1 when none is left. */
static int child(genetic *g, uint64_t *out, kt_error *err) {
  breed(g);
  if (kt_space_index(g->w.space, g->w.vi, out)) {
    for (size_t j = 0; j < g->w.nparams; j++) g->point[j] = g->w.vi[j];
    *out = kt_nearest(&g->w, g->point);
  }
  if (!kt_walker_explored(&g->w, *out, NULL)) return 0;
  int rc = kt_neighbor_random(&g->w, *out, KT_HAMMING, true, out, err);
  return rc > 0 ? kt_random_unexplored(&g->w, out) : rc;
}

static void set_member(genetic *g, uint32_t *members, double *costs, unsigned i,
                       const uint32_t *vi, double cost) {
  memcpy(members + i * g->w.nparams, vi, g->w.nparams * sizeof *vi);
  costs[i] = cost;
}

/* Starts filling the next generation with the elite. */
static void begin_generation(genetic *g) {
  g->filled = 0;
  memset(g->chosen, 0, g->size * sizeof *g->chosen);
  for (unsigned e = 0; e < g->elite; e++) {
    int fastest = -1;
    for (unsigned i = 0; i < g->size; i++)
      if (!g->chosen[i] && (fastest < 0 || g->cost[i] < g->cost[fastest])) fastest = (int)i;
    g->chosen[fastest] = true;
    set_member(g, g->next, g->next_cost, g->filled++, g->pop + (unsigned)fastest * g->w.nparams,
               g->cost[fastest]);
  }
}

static void end_generation(genetic *g) {
  uint32_t *members = g->pop;
  double *costs = g->cost;
  g->pop = g->next;
  g->cost = g->next_cost;
  g->next = members;
  g->next_cost = costs;
  double fastest = INFINITY;
  for (unsigned i = 0; i < g->size; i++) fastest = fmin(fastest, g->cost[i]);
  g->stagnant = fastest < g->best ? 0 : g->stagnant + 1;
  g->best = fmin(g->best, fastest);
  begin_generation(g);
}

static int ga_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  genetic *g = s->state;
  kt_walker_clear(&g->w);
  if (kt_walker_init(&g->w, space, g->seed, err)) return -1;
  g->size = kt_search_size(g->population, g->w.count);
  if (g->size < 2) g->size = 2;
  g->elite = g->elite_opt < g->size ? g->elite_opt : g->size - 1;
  size_t np = g->w.nparams ? g->w.nparams : 1;
  free(g->chosen);
  if (!(g->chosen = kt_calloc(g->size, sizeof *g->chosen, err))) return -1;
  free(g->members_mem);
  free(g->costs_mem);
  g->members_mem = kt_calloc(2 * g->size * np, sizeof *g->members_mem, err);
  g->costs_mem = kt_calloc(2 * g->size + np, sizeof *g->costs_mem, err);
  if (!g->members_mem || !g->costs_mem) return -1;
  g->pop = g->members_mem;
  g->cost = g->costs_mem;
  g->next = g->pop + g->size * np;
  g->next_cost = g->cost + g->size;
  g->point = g->next_cost + g->size;
  g->first = true;
  g->filled = g->stagnant = 0;
  g->pending = -1;
  g->best = INFINITY;
  return 0;
}

static int ga_next(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  genetic *g = s->state;
  *got = 0;
  if (max == 0 || (g->stagnation && g->stagnant >= g->stagnation)) return 0;
  int rc = g->first ? kt_random_unexplored(&g->w, out) : child(g, out, err);
  if (rc) return rc < 0 ? -1 : 0;
  g->pending = (int)g->filled;
  *got = 1;
  return 0;
}

static int ga_report(kt_searcher *s, uint64_t index, const kt_result *r, kt_error *err) {
  genetic *g = s->state;
  if (kt_walker_record(&g->w, index, r, err)) return -1;
  if (g->pending < 0) return 0;
  g->pending = -1;
  kt_space_config(g->w.space, index, g->w.vj, NULL);
  if (g->first) {
    set_member(g, g->pop, g->cost, g->filled, g->w.vj, kt_result_cost(r));
    if (++g->filled == g->size) {
      g->first = false;
      g->best = INFINITY;
      for (unsigned i = 0; i < g->size; i++) g->best = fmin(g->best, g->cost[i]);
      begin_generation(g);
    }
    return 0;
  }
  set_member(g, g->next, g->next_cost, g->filled, g->w.vj, kt_result_cost(r));
  if (++g->filled == g->size) end_generation(g);
  return 0;
}

static void ga_destroy(void *state) {
  genetic *g = state;
  kt_walker_clear(&g->w);
  free(g->members_mem);
  free(g->costs_mem);
  free(g->chosen);
  free(g);
}

static const kt_searcher_ops genetic_ops = {"genetic", ga_start, ga_next, ga_report, ga_destroy, NULL, NULL};

int kt_search_genetic_init(kt_searcher *s, const kt_search_opts *o, kt_error *err) {
  static const char *const allowed[] = {"population", "crossover", "mutation", "elite",
                                        "stagnation", NULL};
  double population, crossover, mutation, elite, stagnation;
  if (kt_search_opts_check(o, "genetic", allowed, err) ||
      kt_search_opt_whole(o, "genetic", "population", 10, 1e-9, 1e6, true, &population, err) ||
      kt_search_opt_number(o, "genetic", "crossover", 1, 0, 1, &crossover, err) ||
      kt_search_opt_number(o, "genetic", "mutation", 0.2, 0, 1, &mutation, err) ||
      kt_search_opt_whole(o, "genetic", "elite", 2, 0, 1e6, false, &elite, err) ||
      kt_search_opt_whole(o, "genetic", "stagnation", 0, 0, 1e9, false, &stagnation, err))
    return -1;
  genetic *g = kt_calloc(1, sizeof *g, err);
  if (!g) return -1;
  *g = (genetic){.seed = o->seed, .population = population, .crossover = crossover,
                 .mutation = mutation, .elite_opt = (unsigned)elite,
                 .stagnation = (unsigned)stagnation};
  s->ops = &genetic_ops;
  s->state = g;
  return 0;
}
