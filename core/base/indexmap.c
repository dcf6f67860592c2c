/*
** indexmap.c: open addressing with linear probing; keys are stored plus
** one so that zero marks an empty slot.
*/
#include "indexmap.h"

#include <stdlib.h>

void kt_indexmap_init(kt_indexmap *m) {
  m->keys = m->values = NULL;
  m->n = m->cap = 0;
}

void kt_indexmap_clear(kt_indexmap *m) {
  free(m->keys);
  free(m->values);
  kt_indexmap_init(m);
}

static size_t slot_of(uint64_t key, size_t cap) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  return (size_t)key & (cap - 1);
}

static void insert(uint64_t *keys, uint64_t *values, size_t cap, uint64_t key,
                   uint64_t value) {
  size_t i = slot_of(key, cap);
  while (keys[i] && keys[i] != key + 1) i = (i + 1) & (cap - 1);
  keys[i] = key + 1;
  values[i] = value;
}

static int rehash(kt_indexmap *m, size_t cap, kt_error *err) {
  uint64_t *keys = kt_calloc(cap, sizeof *keys, err);
  uint64_t *values = kt_calloc(cap, sizeof *values, err);
  if (!keys || !values) {
    free(keys);
    free(values);
    return -1;
  }
  for (size_t i = 0; i < m->cap; i++)
    if (m->keys[i]) insert(keys, values, cap, m->keys[i] - 1, m->values[i]);
  free(m->keys);
  free(m->values);
  m->keys = keys;
  m->values = values;
  m->cap = cap;
  return 0;
}

int kt_indexmap_put(kt_indexmap *m, uint64_t key, uint64_t value, kt_error *err) {
  if ((m->n + 1) * 2 > m->cap && rehash(m, m->cap ? m->cap * 2 : 64, err)) return -1;
  size_t i = slot_of(key, m->cap);
  while (m->keys[i] && m->keys[i] != key + 1) i = (i + 1) & (m->cap - 1);
  if (!m->keys[i]) m->n++;
  m->keys[i] = key + 1;
  m->values[i] = value;
  return 0;
}

bool kt_indexmap_get(const kt_indexmap *m, uint64_t key, uint64_t *value) {
  if (!m->cap) return false;
  size_t i = slot_of(key, m->cap);
  while (m->keys[i]) {
    if (m->keys[i] == key + 1) {
      *value = m->values[i];
      return true;
    }
    i = (i + 1) & (m->cap - 1);
  }
  return false;
}
