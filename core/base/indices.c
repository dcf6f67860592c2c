/*
** indices.c: lists of configuration indices (indices.h).
*/
#include "indices.h"

#include <stdlib.h>

int kt_indices_push(kt_indices *l, uint64_t x, kt_error *err) {
  if (kt_grow(&l->items, &l->cap, l->n + 1, sizeof *l->items, err)) return -1;
  l->items[l->n++] = x;
  return 0;
}

void kt_indices_clear(kt_indices *l) {
  free(l->items);
  *l = (kt_indices){NULL, 0, 0};
}

void kt_shuffle_u64(kt_rng *rng, uint64_t *x, size_t n) {
  for (size_t i = n; i > 1; i--) {
    size_t j = (size_t)kt_rng_below(rng, i);
    uint64_t t = x[i - 1];
    x[i - 1] = x[j];
    x[j] = t;
  }
}

void kt_indices_shuffle(kt_indices *l, kt_rng *rng) { kt_shuffle_u64(rng, l->items, l->n); }
