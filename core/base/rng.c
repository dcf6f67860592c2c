/*
** rng.c: xoshiro256** (Blackman and Vigna), seeded by splitmix64.
*/
#include "rng.h"

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void kt_rng_seed(kt_rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t kt_rng_next(kt_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

uint64_t kt_rng_below(kt_rng *r, uint64_t n) {
  uint64_t limit = -n % n; /* 2^64 mod n: values below it would bias */
  for (;;) {
    uint64_t x = kt_rng_next(r);
    if (x >= limit) return x % n;
  }
}

double kt_rng_double(kt_rng *r) {
  return (double)(kt_rng_next(r) >> 11) * 0x1.0p-53;
}
