/*
** array.h: typed host arrays. Reference counted, because a Lua value, a
** kernel argument and a reference result may all hold the same array.
*/
#ifndef KT_ARRAY_H
#define KT_ARRAY_H

#include "types.h"

typedef struct kt_array {
  int refs;
  const kt_type *type; /* retained */
  size_t length;       /* elements */
  void *data;          /* length * type->size bytes, 64-byte aligned, zeroed */
  uint64_t changes;    /* writes to data through ktlua: a tuning undoes a launcher's */
} kt_array;

kt_array *kt_array_new(const kt_type *type, size_t length, kt_error *err);
kt_array *kt_array_clone(const kt_array *a, kt_error *err);
void kt_array_retain(kt_array *a);
void kt_array_release(kt_array *a);
size_t kt_array_bytes(const kt_array *a);
void *kt_array_at(const kt_array *a, size_t i);

/* Seeded uniform values: floats in [lo, hi), integers in [lo, hi]. */
void kt_array_random(kt_array *a, uint64_t seed, double lo, double hi);

#endif
