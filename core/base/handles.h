/*
** handles.h: objects by the number another process gave them (the device
** server's buffers, programs, kernels and events). Numbers only grow, one
** per object ever made, so they are hashed into as many slots as the live
** objects need, not as the largest number.
*/
#ifndef KT_HANDLES_H
#define KT_HANDLES_H

#include <stddef.h>
#include <stdint.h>

typedef struct kt_handle_slot {
  uint32_t id;
  void *p; /* NULL: a free slot */
} kt_handle_slot;

typedef struct kt_handles {
  kt_handle_slot *slots;
  size_t cap, n; /* cap: 0 or a power of two */
} kt_handles; /* zeroed: empty */

/* Adds p (not NULL) as id, replacing any; -1 when out of memory (h as it was). */
int kt_handles_put(kt_handles *h, uint32_t id, void *p);
/* The object numbered id, or NULL. */
void *kt_handles_get(const kt_handles *h, uint32_t id);
/* Takes it out and returns it, or NULL. */
void *kt_handles_take(kt_handles *h, uint32_t id);
/* Frees the slots (not the objects). */
void kt_handles_free(kt_handles *h);

#endif
