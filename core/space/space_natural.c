/*
** space_natural.c: the numbering of the space as its user defined it
** (space.h). Device constraints (tags 1 and above) can join groups and
** change their order, so the natural numbering has groups of its own,
** planned and generated over the user's constraints alone, beside the
** space's.
*/
#include <stdlib.h>

#include "space_int.h"

bool kt_space_natural_differs(const kt_space *s) {
  for (size_t c = 0; c < s->ncons; c++)
    if (s->cons[c].tag > 0) return true;
  return false;
}

void space_natural_clear(kt_space *s) {
  free_groups(s->natural, s->nnatural);
  s->natural = NULL;
  s->nnatural = 0;
  s->natural_count = 0;
  s->natural_ready = false;
}

/* The groups of the user's constraints, sampled where the space is. */
static int generate_natural(kt_space *s, kt_error *err) {
  if (plan_groups(s, 0, &s->natural, &s->nnatural, err)) return -1;
  size_t left = kt_space_max_bytes(s);
  s->natural_count = 1;
  for (size_t g = 0; g < s->nnatural; g++) {
    group *gr = &s->natural[g];
    int rc = s->sampled ? space_fill_or_sample(s, gr, &left, err)
                        : group_fill(s, gr, true, &left, err);
    if (rc) return -1;
    if (__builtin_mul_overflow(s->natural_count, gr->count, &s->natural_count))
      return kt_fail(err, "the space has more than 2^64 configurations");
  }
  return 0;
}

int kt_space_natural_generate(kt_space *s, kt_error *err) {
  if (!s->generated && kt_space_generate(s, err)) return -1;
  if (s->natural_ready || !kt_space_natural_differs(s)) return 0;
  if (s->generating)
    return kt_fail(err, "the space is being generated: its constraints cannot change or "
                        "generate it");
  space_natural_clear(s);
  s->generating = true;
  int rc = generate_natural(s, err);
  s->generating = false;
  if (rc) {
    space_natural_clear(s);
    return kt_fail_prefix(err, "numbering the space without the device's limits: ");
  }
  s->natural_ready = true;
  return 0;
}

uint64_t kt_space_natural_count(const kt_space *s) {
  if (!kt_space_natural_differs(s)) return s->generated ? s->count : 0;
  return s->natural_ready ? s->natural_count : 0;
}

int kt_space_natural_config(const kt_space *s, uint64_t index, uint32_t *vi, kt_error *err) {
  if (!kt_space_natural_differs(s)) return kt_space_config(s, index, vi, err);
  if (!s->natural_ready) return kt_fail(err, "the space has not been generated");
  return space_groups_config(s, s->natural, s->nnatural, s->natural_count, index, vi, err);
}

int kt_space_natural_index(const kt_space *s, const uint32_t *vi, uint64_t *index) {
  if (!kt_space_natural_differs(s)) return kt_space_index(s, vi, index);
  if (!s->natural_ready) return 1;
  return space_groups_index(s, s->natural, s->nnatural, vi, index);
}
