/*
** additive.h: a cheap surrogate of a kernel's time: log time as a sum of
** one term per parameter value, each the shrunken mean of the log times of
** the explored configurations with that value. Failed configurations count
** as twice as slow as the slowest success. Searchers use it to decide
** which of many candidates to try first.
*/
#ifndef KT_ADDITIVE_H
#define KT_ADDITIVE_H

#include "indices.h"
#include "space.h"

typedef struct kt_additive {
  size_t nparams;
  size_t *offset;  /* per parameter: where its values' terms start */
  double *sum;     /* per value: summed log time of the successes */
  uint32_t *ok, *failed; /* per value: counts */
  double total;    /* summed log time of all successes */
  uint64_t nok, nfailed;
  double worst;    /* the largest log time seen */
} kt_additive;

int kt_additive_init(kt_additive *m, const kt_space *s, kt_error *err);
void kt_additive_clear(kt_additive *m);
/* Adds an explored configuration; cost is its time, infinite if it failed. */
void kt_additive_add(kt_additive *m, const uint32_t *vi, double cost);
/* The predicted log time of a configuration (0 before anything is added). */
double kt_additive_predict(const kt_additive *m, const uint32_t *vi);
/* Orders configuration indices by predicted time, fastest first (stable:
** equal predictions keep their order). vi is scratch of nparams. */
int kt_additive_order(const kt_additive *m, const kt_space *s, kt_indices *l, uint32_t *vi,
                      kt_error *err);

#endif
