/*
** metropolis.c: the Metropolis walk.
*/
#include "metropolis.h"

#include <math.h>

#include "result.h"

int kt_metropolis_start(kt_metropolis *m, const kt_space *s, uint64_t seed, kt_error *err) {
  kt_walker_clear(&m->w);
  m->has_current = false;
  m->best_cost = INFINITY;
  return kt_walker_init(&m->w, s, seed, err);
}

void kt_metropolis_clear(kt_metropolis *m) { kt_walker_clear(&m->w); }

int kt_metropolis_next(kt_metropolis *m, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  *got = 0;
  if (max == 0) return 0;
  if (m->has_current) {
    int rc = kt_neighbor_random(&m->w, m->current, m->hood, true, out, err);
    if (rc < 0) return -1;
    *got = rc == 0;
    if (*got) return 0;
    m->has_current = false; /* a dead end: jump */
  }
  *got = kt_random_unexplored(&m->w, out) == 0;
  return 0;
}

static bool accept(kt_metropolis *m, double cost, double temperature) {
  if (!isfinite(cost)) return false;
  if (!m->has_current || cost <= m->cost) return true;
  if (temperature <= 0) return false;
  return kt_rng_double(&m->w.rng) < exp(-(cost / m->cost - 1) / temperature);
}

int kt_metropolis_report(kt_metropolis *m, uint64_t index, const kt_result *r,
                         double temperature, kt_error *err) {
  double cost = kt_result_cost(r);
  if (kt_walker_record(&m->w, index, r, err)) return -1;
  if (cost < m->best_cost) {
    m->best = index;
    m->best_cost = cost;
  }
  if (accept(m, cost, temperature)) {
    m->has_current = true;
    m->current = index;
    m->cost = cost;
  }
  return 0;
}

void kt_metropolis_return_to_best(kt_metropolis *m) {
  if (!isfinite(m->best_cost)) return;
  m->has_current = true;
  m->current = m->best;
  m->cost = m->best_cost;
}
