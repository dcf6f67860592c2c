/*
** metropolis.h: the random walk that simulated annealing and Markov-chain
** Monte Carlo share. From the current configuration the walk proposes a
** random unexplored neighbour; a faster one is always accepted, a slower
** one with probability exp(-(slower / current - 1) / temperature), a
** failed one never. Where every neighbour is explored the walk jumps to a
** random unexplored configuration. The searchers differ in how the
** temperature changes.
*/
#ifndef KT_METROPOLIS_H
#define KT_METROPOLIS_H

#include "neighbors.h"

typedef struct kt_metropolis {
  kt_walker w;
  kt_neighborhood hood;
  bool has_current;
  uint64_t current;
  double cost;
  uint64_t best;     /* the fastest configuration seen */
  double best_cost;
} kt_metropolis;

int kt_metropolis_start(kt_metropolis *m, const kt_space *s, uint64_t seed, kt_error *err);
void kt_metropolis_clear(kt_metropolis *m);
/* The next proposal (as a searcher's next: *got is 0 once everything is
** explored). */
int kt_metropolis_next(kt_metropolis *m, uint64_t *out, size_t max, size_t *got, kt_error *err);
/* Hears how a configuration went and decides whether the walk moves there. */
int kt_metropolis_report(kt_metropolis *m, uint64_t index, const kt_result *r,
                         double temperature, kt_error *err);
/* Moves the walk back to the fastest configuration seen (a reheat). */
void kt_metropolis_return_to_best(kt_metropolis *m);

#endif
