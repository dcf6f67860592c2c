/*
** indexmap.h: a hash map from configuration index to a number (a result's
** position, a visit count), for the sets that searchers and the tuning
** loop keep.
*/
#ifndef KT_INDEXMAP_H
#define KT_INDEXMAP_H

#include "kt.h"

typedef struct kt_indexmap {
  uint64_t *keys;
  uint64_t *values;
  size_t n, cap; /* cap is 0 or a power of two */
} kt_indexmap;

void kt_indexmap_init(kt_indexmap *m);
void kt_indexmap_clear(kt_indexmap *m);
int kt_indexmap_put(kt_indexmap *m, uint64_t key, uint64_t value, kt_error *err);
/* true and *value when present */
bool kt_indexmap_get(const kt_indexmap *m, uint64_t key, uint64_t *value);

#endif
