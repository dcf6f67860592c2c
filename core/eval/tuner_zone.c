/*
** tuner_zone.c: the zone of a known pattern that follows every device
** copy of an array (verify.c checks it), below both tuner.c, which makes
** the copies, and verify.c, which uploads them again.
*/
#include <stdlib.h>

#include "tuner_int.h"

/* A quarter of the array: a tile's overshoot, say (device memory is
** plentiful while tuning). */
#define ZONE_MIN 4096
#define ZONE_MAX (64u << 20)

size_t tuner_zone_bytes(size_t bytes) {
  size_t z = bytes / 4;
  return z < ZONE_MIN ? ZONE_MIN : z > ZONE_MAX ? ZONE_MAX : z;
}

/* The pattern's first n bytes, made once per tuner (a check reads zones
** of megabytes, several times a tuning). */
const unsigned char *tuner_zone_pattern(kt_tuner *t, size_t n, kt_error *err) {
  if (n <= t->npattern) return t->pattern;
  unsigned char *p = realloc(t->pattern, n);
  if (!p) return kt_fail(err, "out of memory making a zone's pattern"), NULL;
  for (size_t i = t->npattern; i < n; i++) p[i] = (unsigned char)TUNER_ZONE_BYTE(i);
  t->pattern = p;
  t->npattern = n;
  return p;
}

int tuner_fill_zone(kt_tuner *t, devarray *d, kt_error *err) {
  const unsigned char *p = tuner_zone_pattern(t, d->zone, err);
  if (!p) return -1;
  return t->be->buffer_write(t->ctx, 0, d->buf, kt_array_bytes(d->array), d->zone, p, true, err);
}
