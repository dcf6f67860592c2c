/*
** search_mcmc.c: Markov-chain Monte Carlo: the neighbourhood walk of
** metropolis.h at a fixed temperature (in units of relative slowdown: at
** 0.05 a move to a configuration 5% slower is accepted with probability
** 1/e), so that the walk samples fast regions without settling in one.
**
** Options: temperature (0.05), adjacent (0: Hamming neighbourhood; 1:
** adjacent).
*/
#include <stdlib.h>

#include "metropolis.h"
#include "search.h"

typedef struct mcmc {
  kt_metropolis walk;
  uint64_t seed;
  double temperature;
} mcmc;

static int mc_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  mcmc *m = s->state;
  return kt_metropolis_start(&m->walk, space, m->seed, err);
}

static int mc_next(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  return kt_metropolis_next(&((mcmc *)s->state)->walk, out, max, got, err);
}

static int mc_report(kt_searcher *s, uint64_t index, const kt_result *r, kt_error *err) {
  mcmc *m = s->state;
  return kt_metropolis_report(&m->walk, index, r, m->temperature, err);
}

static void mc_destroy(void *state) {
  mcmc *m = state;
  kt_metropolis_clear(&m->walk);
  free(m);
}

static const kt_searcher_ops mcmc_ops = {"mcmc", mc_start, mc_next, mc_report, mc_destroy, NULL, NULL};

int kt_search_mcmc_init(kt_searcher *s, const kt_search_opts *o, kt_error *err) {
  static const char *const allowed[] = {"temperature", "adjacent", NULL};
  double temperature, adjacent;
  if (kt_search_opts_check(o, "mcmc", allowed, err) ||
      kt_search_opt_number(o, "mcmc", "temperature", 0.05, 0, 1e9, &temperature, err) ||
      kt_search_opt_whole(o, "mcmc", "adjacent", 0, 0, 1, false, &adjacent, err))
    return -1;
  mcmc *m = kt_calloc(1, sizeof *m, err);
  if (!m) return -1;
  m->seed = o->seed;
  m->temperature = temperature;
  m->walk.hood = adjacent != 0 ? KT_ADJACENT : KT_HAMMING;
  s->ops = &mcmc_ops;
  s->state = m;
  return 0;
}
