/*
** copy_wide.c: large copies over threads (copy_wide.h).
*/
#include "copy_wide.h"

#include <pthread.h>
#include <string.h>

#include "cpus.h"

/* A thread's share is at least this, and so many threads at most: beyond
** them the memory bus, not the faults, bounds the copy. */
#define SLICE ((size_t)8 << 20)
#define MOST_THREADS 8

typedef struct slice {
  unsigned char *dst;
  const unsigned char *src;
  size_t bytes;
} slice;

static void *copy_slice(void *p) {
  slice *s = p;
  memcpy(s->dst, s->src, s->bytes);
  return NULL;
}

void kt_copy_wide(void *dst, const void *src, size_t bytes) {
  size_t n = bytes / SLICE;
  if (n > MOST_THREADS) n = MOST_THREADS;
  if (n >= 2 && n > (size_t)kt_cpus_usable()) n = (size_t)kt_cpus_usable();
  if (n < 2) {
    memcpy(dst, src, bytes);
    return;
  }
  slice s[MOST_THREADS];
  pthread_t th[MOST_THREADS];
  size_t per = bytes / n, started = 0;
  for (size_t i = 0; i < n; i++) /* the last slice takes the rest */
    s[i] = (slice){(unsigned char *)dst + i * per, (const unsigned char *)src + i * per,
                   i + 1 < n ? per : bytes - i * per};
  /* slice 0 is this thread's; a slice whose thread did not start is too */
  for (size_t i = 1; i < n; i++)
    if (pthread_create(&th[i], NULL, copy_slice, &s[i]) == 0) started |= (size_t)1 << i;
    else copy_slice(&s[i]);
  copy_slice(&s[0]);
  for (size_t i = 1; i < n; i++)
    if (started & ((size_t)1 << i)) pthread_join(th[i], NULL);
}
