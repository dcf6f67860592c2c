/*
** handles.c: open addressing with linear probing (handles.h), at most half
** full.
*/
#include "handles.h"

#include <stdlib.h>

static size_t home(const kt_handles *h, uint32_t id) {
  return (size_t)(id * 2654435761u) & (h->cap - 1); /* Knuth's multiplicative hash */
}

static size_t find(const kt_handles *h, uint32_t id) {
  size_t i = home(h, id);
  while (h->slots[i].p && h->slots[i].id != id) i = (i + 1) & (h->cap - 1);
  return i;
}

static void place(kt_handles *h, uint32_t id, void *p) {
  size_t i = find(h, id);
  if (!h->slots[i].p) h->n++;
  h->slots[i] = (kt_handle_slot){id, p};
}

int kt_handles_put(kt_handles *h, uint32_t id, void *p) {
  if ((h->n + 1) * 2 > h->cap) {
    kt_handles old = *h;
    size_t cap = old.cap ? old.cap * 2 : 64;
    kt_handle_slot *slots = calloc(cap, sizeof *slots);
    if (!slots) return -1;
    *h = (kt_handles){slots, cap, 0};
    for (size_t i = 0; i < old.cap; i++)
      if (old.slots[i].p) place(h, old.slots[i].id, old.slots[i].p);
    free(old.slots);
  }
  place(h, id, p);
  return 0;
}

void *kt_handles_get(const kt_handles *h, uint32_t id) {
  return h->cap ? h->slots[find(h, id)].p : NULL;
}

/* The slots after it in its run move back where a search will find them. */
void *kt_handles_take(kt_handles *h, uint32_t id) {
  if (!h->cap) return NULL;
  size_t i = find(h, id);
  void *p = h->slots[i].p;
  if (!p) return NULL;
  h->slots[i].p = NULL;
  h->n--;
  for (size_t j = (i + 1) & (h->cap - 1); h->slots[j].p; j = (j + 1) & (h->cap - 1)) {
    kt_handle_slot moved = h->slots[j];
    h->slots[j].p = NULL;
    h->n--;
    place(h, moved.id, moved.p);
  }
  return p;
}

void kt_handles_free(kt_handles *h) {
  free(h->slots);
  *h = (kt_handles){NULL, 0, 0};
}
