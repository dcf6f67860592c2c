/*
** array.c: typed host arrays.
*/
#include "array.h"

#include <stdlib.h>
#include <string.h>

#include "rng.h"

kt_array *kt_array_new(const kt_type *type, size_t length, kt_error *err) {
  if (length == 0) return kt_fail(err, "array length must be positive"), NULL;
  if (length > SIZE_MAX / type->size / 2)
    return kt_fail(err, "array of %zu elements is too large", length), NULL;
  kt_array *a = kt_calloc(1, sizeof *a, err);
  if (!a) return NULL;
  size_t bytes = (length * type->size + 63) / 64 * 64;
  a->data = aligned_alloc(64, bytes);
  if (!a->data) {
    free(a);
    return kt_fail(err, "out of memory for an array of %zu bytes", bytes), NULL;
  }
  memset(a->data, 0, bytes);
  a->refs = 1;
  a->type = type;
  a->length = length;
  kt_type_retain(type);
  return a;
}

kt_array *kt_array_clone(const kt_array *a, kt_error *err) {
  kt_array *c = kt_array_new(a->type, a->length, err);
  if (c) memcpy(c->data, a->data, kt_array_bytes(a));
  return c;
}

void kt_array_retain(kt_array *a) {
  if (a) a->refs++;
}

void kt_array_release(kt_array *a) {
  if (!a || --a->refs > 0) return;
  kt_type_release(a->type);
  free(a->data);
  free(a);
}

size_t kt_array_bytes(const kt_array *a) { return a->length * a->type->size; }

void *kt_array_at(const kt_array *a, size_t i) {
  return (char *)a->data + i * a->type->size;
}

static void random_element(kt_rng *rng, kt_kind kind, void *p, double lo,
                           double hi) {
  if (kt_kind_is_float(kind)) {
    kt_elem_set_float(kind, p, lo + (hi - lo) * kt_rng_double(rng));
    return;
  }
  /* the bounds as integers first: a double beyond them (or NaN) has no
  ** integer, and converting it would be undefined */
  uint64_t a = (uint64_t)kt_float_to_int(lo, kind), b = (uint64_t)kt_float_to_int(hi, kind);
  uint64_t span = b - a + 1; /* 0: all 2^64 values */
  uint64_t off = span ? kt_rng_below(rng, span) : kt_rng_next(rng);
  kt_elem_set_int(kind, p, (int64_t)(a + off));
}

/* Struct arrays get every scalar of every field randomised. */
void kt_array_random(kt_array *a, uint64_t seed, double lo, double hi) {
  kt_rng rng;
  kt_rng_seed(&rng, seed);
  a->changes++;
  const kt_type *t = a->type;
  for (size_t i = 0; i < a->length; i++) {
    char *e = kt_array_at(a, i);
    if (t->kind != KT_STRUCT) {
      random_element(&rng, t->kind, e, lo, hi);
      continue;
    }
    for (size_t f = 0; f < t->nfields; f++) {
      const kt_field *fd = &t->fields[f];
      size_t fs = kt_type_scalar(fd->kind)->size;
      for (size_t j = 0; j < fd->count; j++)
        random_element(&rng, fd->kind, e + fd->offset + j * fs, lo, hi);
    }
  }
}
