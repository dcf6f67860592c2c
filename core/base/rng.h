/*
** rng.h: the one seeded generator of ktlua (xoshiro256**, seeded through
** splitmix64), so that a seed gives the same values on every machine.
*/
#ifndef KT_RNG_H
#define KT_RNG_H

#include <stdint.h>

typedef struct kt_rng {
  uint64_t s[4];
} kt_rng;

void kt_rng_seed(kt_rng *r, uint64_t seed);
uint64_t kt_rng_next(kt_rng *r);
/* Uniform in [0, n), without modulo bias; n > 0. */
uint64_t kt_rng_below(kt_rng *r, uint64_t n);
/* Uniform in [0, 1) with 53 random bits. */
double kt_rng_double(kt_rng *r);

#endif
