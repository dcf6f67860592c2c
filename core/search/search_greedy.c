/*
** search_greedy.c: greedy local search with restarts.
**
** A start is the best of `sample` random unexplored configurations. From
** there the search moves to the first neighbour that is faster (first
** improvement), trying the one-change neighbours round robin over the
** parameters (neighbors.h), and with `model` on, those the additive
** surrogate (additive.h) predicts fastest first. With `adjacent` on, it
** first tries the adjacent neighbourhood (a parameter moves to the value
** listed next to its own) and widens to the Hamming one (any other value)
** only when no adjacent move helps: a variable neighbourhood descent,
** cheap on ordered parameters with many values. Where no neighbour is
** faster, the start was a local optimum and the search restarts.
** Configurations already explored are judged by their known result at no
** cost.
**
** Options: sample (16; below 1, a fraction of the valid configurations),
** adjacent (1), model (1).
*/
#include <math.h>
#include <stdlib.h>

#include "additive.h"
#include "neighbors.h"
#include "result.h"
#include "search.h"

typedef struct greedy {
  kt_walker w;
  kt_additive model;
  uint64_t seed;
  double sample_opt;
  unsigned sample;
  bool adjacent, use_model;
  unsigned sampled;      /* configurations drawn for this start */
  uint64_t start;        /* the best of them so far */
  double start_cost;
  bool descending;
  uint64_t current;
  double cost;
  kt_neighborhood hood;
  kt_indices moves;      /* the current configuration's neighbours to try */
  size_t next_move;
} greedy;

static int load_moves(greedy *g, kt_error *err) {
  g->moves.n = g->next_move = 0;
  if (kt_neighbors_mixed(&g->w, g->current, g->hood, &g->moves, err)) return -1;
  return g->use_model ? kt_additive_order(&g->model, g->w.space, &g->moves, g->w.vj, err) : 0;
}

static int move_to(greedy *g, uint64_t index, double cost, kt_error *err) {
  g->current = index;
  g->cost = cost;
  g->descending = true;
  g->hood = g->adjacent ? KT_ADJACENT : KT_HAMMING;
  return load_moves(g, err);
}

static void restart(greedy *g) {
  g->descending = false;
  g->sampled = 0;
  g->start_cost = INFINITY;
}

static int gr_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  greedy *g = s->state;
  kt_walker_clear(&g->w);
  kt_additive_clear(&g->model);
  if (kt_walker_init(&g->w, space, g->seed, err) || kt_additive_init(&g->model, space, err))
    return -1;
  g->sample = kt_search_size(g->sample_opt, g->w.count);
  restart(g);
  return 0;
}

/* Sets *out to the next unexplored neighbour to try, moving to known
** faster ones on the way; *found is false at a local optimum. */
static int next_neighbor(greedy *g, uint64_t *out, bool *found, kt_error *err) {
  *found = false;
  for (;;) {
    while (g->next_move < g->moves.n) {
      uint64_t m = g->moves.items[g->next_move++];
      double c;
      if (!kt_walker_explored(&g->w, m, &c)) {
        *out = m;
        *found = true;
        return 0;
      }
      if (c < g->cost && move_to(g, m, c, err)) return -1;
    }
    if (g->hood == KT_HAMMING) return 0;
    g->hood = KT_HAMMING;
    if (load_moves(g, err)) return -1;
  }
}

static int gr_next(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  greedy *g = s->state;
  *got = 0;
  if (max == 0) return 0;
  for (;;) {
    if (!g->descending && g->sampled < g->sample) {
      g->sampled++;
      *got = kt_random_unexplored(&g->w, out) == 0;
      return 0;
    }
    if (!g->descending) {
      if (isinf(g->start_cost)) restart(g); /* every draw failed: draw again */
      else if (move_to(g, g->start, g->start_cost, err)) return -1;
      continue;
    }
    bool found;
    if (next_neighbor(g, out, &found, err)) return -1;
    if (found) {
      *got = 1;
      return 0;
    }
    restart(g);
  }
}

static int gr_report(kt_searcher *s, uint64_t index, const kt_result *r, kt_error *err) {
  greedy *g = s->state;
  double cost = kt_result_cost(r);
  if (kt_walker_record(&g->w, index, r, err)) return -1;
  kt_additive_add(&g->model, r->vi, cost);
  if (!g->descending && cost < g->start_cost) {
    g->start = index;
    g->start_cost = cost;
  } else if (g->descending && cost < g->cost) {
    return move_to(g, index, cost, err);
  }
  return 0;
}

static void gr_destroy(void *state) {
  greedy *g = state;
  kt_walker_clear(&g->w);
  kt_additive_clear(&g->model);
  kt_indices_clear(&g->moves);
  free(g);
}

static const kt_searcher_ops greedy_ops = {"greedy", gr_start, gr_next, gr_report, gr_destroy, NULL, NULL};

int kt_search_greedy_init(kt_searcher *s, const kt_search_opts *o, kt_error *err) {
  static const char *const allowed[] = {"sample", "adjacent", "model", NULL};
  double sample, adjacent, model;
  if (kt_search_opts_check(o, "greedy", allowed, err) ||
      kt_search_opt_whole(o, "greedy", "sample", 16, 1e-9, 1e9, true, &sample, err) ||
      kt_search_opt_whole(o, "greedy", "adjacent", 1, 0, 1, false, &adjacent, err) ||
      kt_search_opt_whole(o, "greedy", "model", 1, 0, 1, false, &model, err))
    return -1;
  greedy *g = kt_calloc(1, sizeof *g, err);
  if (!g) return -1;
  g->seed = o->seed;
  g->sample_opt = sample;
  g->adjacent = adjacent != 0;
  g->use_model = model != 0;
  s->ops = &greedy_ops;
  s->state = g;
  return 0;
}
