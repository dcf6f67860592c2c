/*
** permutation.h: a seeded random permutation of [0, n) computed one
** element at a time in O(1) memory (a Feistel network on the next power
** of four, walked until it lands inside the range), so that random search
** over a space of billions needs no shuffled list.
*/
#ifndef KT_PERMUTATION_H
#define KT_PERMUTATION_H

#include <stdint.h>

typedef struct kt_permutation {
  uint64_t n;
  unsigned half_bits;
  uint64_t keys[4];
} kt_permutation;

void kt_permutation_init(kt_permutation *p, uint64_t n, uint64_t seed);
/* The i-th element of the permutation, for i < n. */
uint64_t kt_permutation_at(const kt_permutation *p, uint64_t i);

#endif
