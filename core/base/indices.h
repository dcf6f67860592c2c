/*
** indices.h: a growable list of configuration indices, which searchers
** and models order and shuffle.
*/
#ifndef KT_INDICES_H
#define KT_INDICES_H

#include "kt.h"
#include "rng.h"

typedef struct kt_indices {
  uint64_t *items;
  size_t n, cap;
} kt_indices;

int kt_indices_push(kt_indices *l, uint64_t x, kt_error *err);
void kt_indices_clear(kt_indices *l);
void kt_indices_shuffle(kt_indices *l, kt_rng *rng);

/* Shuffles x[0..n) in place (Fisher-Yates). */
void kt_shuffle_u64(kt_rng *rng, uint64_t *x, size_t n);

#endif
