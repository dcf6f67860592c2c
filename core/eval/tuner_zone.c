/*
** tuner_zone.c: the zone of a known pattern that follows every device
** copy of an array (verify.c checks it), below both tuner.c, which makes
** the copies, and verify.c, which uploads them again.
*/
#include <stdlib.h>
#include <string.h>

#include "tuner_int.h"

/* A quarter of the array: a tile's overshoot, say (device memory is
** plentiful while tuning). */
#define ZONE_MIN 4096
#define ZONE_MAX (64u << 20)
/* TUNER_ZONE_BYTE(i) depends on i only modulo PERIOD (i * 37 in a byte);
** SEED is a multiple of it. */
#define PERIOD 256
#define SEED ((size_t)64 << 10)

size_t tuner_zone_bytes(size_t bytes) {
  size_t z = bytes / 4;
  return z < ZONE_MIN ? ZONE_MIN : z > ZONE_MAX ? ZONE_MAX : z;
}

/* The pattern's first n bytes, made once per tuner (a check reads zones
** of megabytes, several times a tuning). It repeats every PERIOD bytes,
** so all but its first period are copies. */
const unsigned char *tuner_zone_pattern(kt_tuner *t, size_t n, kt_error *err) {
  if (n <= t->npattern) return t->pattern;
  unsigned char *p = realloc(t->pattern, n);
  if (!p) return kt_fail(err, "out of memory making a zone's pattern"), NULL;
  size_t i = t->npattern;
  for (; i < n && i < PERIOD; i++) p[i] = (unsigned char)TUNER_ZONE_BYTE(i);
  while (i < n) { /* the bytes at i % PERIOD are those due at i, and made */
    size_t len = i - i % PERIOD < n - i ? i - i % PERIOD : n - i;
    memcpy(p + i, p + i % PERIOD, len);
    i += len;
  }
  t->pattern = p;
  t->npattern = n;
  return p;
}

/* Only the zone's first SEED bytes cross the bus: the device copies
** them over the rest, doubling (a zone is a quarter of its array, 16 MiB
** for 64 MiB). */
int tuner_fill_zone(kt_tuner *t, devarray *d, kt_error *err) {
  size_t base = kt_array_bytes(d->array), seed = d->zone < SEED ? d->zone : SEED;
  const unsigned char *p = tuner_zone_pattern(t, seed, err);
  if (!p || t->be->buffer_write(t->ctx, 0, d->buf, base, seed, p, true, err)) return -1;
  for (size_t done = seed; done < d->zone; done *= 2) {
    size_t n = done < d->zone - done ? done : d->zone - done;
    if (t->be->buffer_copy(t->ctx, 0, d->buf, base + done, d->buf, base, n, err)) return -1;
  }
  return 0;
}
