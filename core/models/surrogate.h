/*
** surrogate.h: the neural network ensemble (ensemble.h) as a model of a
** tuning space, shared by the searchers that use it (search_model.c, and
** bestfirst's restarts).
**
** It keeps every result (the configuration's value indices scaled to
** [0, 1], and the logarithm of its time), learns the log time normalised
** by the first successes' mean and deviation, a failed configuration as
** e (2.7) times slower than the slowest success, and predicts a pool of
** configurations: the whole space, or for spaces of over 2^18
** configurations a random 2^18 of them, drawn once.
*/
#ifndef KT_SURROGATE_H
#define KT_SURROGATE_H

#include "ensemble.h"
#include "space.h"

#define KT_SURROGATE_POOL (1u << 18)

typedef struct kt_surrogate {
  const kt_space *space;
  size_t d;           /* inputs: one per parameter (one without parameters) */
  kt_ensemble *net;
  unsigned epochs;
  size_t resample;    /* points in each network's resample; 0: as many as the results */
  uint64_t *pool;     /* the configurations predicted */
  float *px, *pred;   /* their inputs and predictions (normalised log time) */
  size_t npool;
  float *tx, *ty;     /* every result's inputs, and the targets of a training */
  double *tlog;       /* every result's log time, INFINITY when it failed */
  size_t n, cap, nok;
  double mu, sd;      /* fixed at the first training */
  uint32_t *vi;       /* scratch */
} kt_surrogate;

int kt_surrogate_init(kt_surrogate *sg, const kt_space *s, const kt_ensemble_opts *o,
                      unsigned epochs, size_t resample, kt_error *err);
void kt_surrogate_clear(kt_surrogate *sg);
/* A result: the configuration's value indices, its time (infinite: failed). */
int kt_surrogate_add(kt_surrogate *sg, const uint32_t *vi, double cost, kt_error *err);
/* Learns from every result so far (at least one success is needed) and
** predicts the pool into sg->pred. */
int kt_surrogate_learn(kt_surrogate *sg, kt_error *err);

#endif
