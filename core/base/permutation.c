/*
** permutation.c: Feistel permutation with cycle walking.
*/
#include "permutation.h"

#include "rng.h"

void kt_permutation_init(kt_permutation *p, uint64_t n, uint64_t seed) {
  kt_rng rng;
  kt_rng_seed(&rng, seed);
  p->n = n;
  unsigned bits = 2;
  while (bits < 64 && (1ull << bits) < n) bits++;
  p->half_bits = (bits + 1) / 2;
  for (int i = 0; i < 4; i++) p->keys[i] = kt_rng_next(&rng);
}

static uint64_t round_fn(uint64_t x, uint64_t key) {
  x ^= key;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 31;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 29);
}

static uint64_t feistel(const kt_permutation *p, uint64_t x) {
  unsigned h = p->half_bits;
  uint64_t mask = h >= 64 ? ~0ull : (1ull << h) - 1;
  uint64_t left = (x >> h) & mask, right = x & mask;
  for (int r = 0; r < 4; r++) {
    uint64_t next = left ^ (round_fn(right, p->keys[r]) & mask);
    left = right;
    right = next;
  }
  return (left << h) | right;
}

uint64_t kt_permutation_at(const kt_permutation *p, uint64_t i) {
  uint64_t x = feistel(p, i);
  while (x >= p->n) x = feistel(p, x);
  return x;
}
