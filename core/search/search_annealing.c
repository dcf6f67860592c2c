/*
** search_annealing.c: simulated annealing over the neighbourhood walk of
** metropolis.h. The temperature starts at t0 and is multiplied by alpha
** after every evaluation; once below t_min the walk reheats to t0 and goes
** back to the fastest configuration seen. Temperatures are in units of
** relative slowdown: at temperature 0.1 a move to a configuration 10%
** slower is accepted with probability 1/e.
**
** Options: t0 (0.1), alpha (0.99), t_min (0.001), adjacent (0: Hamming
** neighbourhood; 1: adjacent).
*/
#include <stdlib.h>

#include "metropolis.h"
#include "search.h"

typedef struct annealing {
  kt_metropolis walk;
  uint64_t seed;
  double t0, alpha, t_min, temperature;
} annealing;

static int sa_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  annealing *a = s->state;
  a->temperature = a->t0;
  return kt_metropolis_start(&a->walk, space, a->seed, err);
}

static int sa_next(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  return kt_metropolis_next(&((annealing *)s->state)->walk, out, max, got, err);
}

static int sa_report(kt_searcher *s, uint64_t index, const kt_result *r, kt_error *err) {
  annealing *a = s->state;
  if (kt_metropolis_report(&a->walk, index, r, a->temperature, err)) return -1;
  a->temperature *= a->alpha;
  if (a->temperature < a->t_min) {
    a->temperature = a->t0;
    kt_metropolis_return_to_best(&a->walk);
  }
  return 0;
}

static void sa_destroy(void *state) {
  annealing *a = state;
  kt_metropolis_clear(&a->walk);
  free(a);
}

static const kt_searcher_ops annealing_ops = {"annealing", sa_start, sa_next, sa_report,
                                             sa_destroy, NULL, NULL};

int kt_search_annealing_init(kt_searcher *s, const kt_search_opts *o, kt_error *err) {
  static const char *const allowed[] = {"t0", "alpha", "t_min", "adjacent", NULL};
  double t0, alpha, t_min, adjacent;
  if (kt_search_opts_check(o, "annealing", allowed, err) ||
      kt_search_opt_number(o, "annealing", "t0", 0.1, 1e-9, 1e9, &t0, err) ||
      kt_search_opt_number(o, "annealing", "alpha", 0.99, 1e-9, 1 - 1e-9, &alpha, err) ||
      kt_search_opt_number(o, "annealing", "t_min", 0.001, 1e-12, t0, &t_min, err) ||
      kt_search_opt_whole(o, "annealing", "adjacent", 0, 0, 1, false, &adjacent, err))
    return -1;
  annealing *a = kt_calloc(1, sizeof *a, err);
  if (!a) return -1;
  *a = (annealing){.seed = o->seed, .t0 = t0, .alpha = alpha, .t_min = t_min};
  a->walk.hood = adjacent != 0 ? KT_ADJACENT : KT_HAMMING;
  s->ops = &annealing_ops;
  s->state = a;
  return 0;
}
