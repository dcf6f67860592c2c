/*
** copy_wide.c: large copies over threads (copy_wide.h).
*/
#include "copy_wide.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cpus.h"

/* A thread's share is at least this, and so many threads at most: beyond
** them the memory bus, not the faults, bounds the copy. */
#define SLICE ((size_t)4 << 20)
#define MOST_THREADS 8

typedef struct slice {
  unsigned char *dst;
  const unsigned char *src;
  size_t bytes;
} slice;

struct kt_wide_copy {
  size_t n;
  slice s[MOST_THREADS];
  pthread_t th[MOST_THREADS];
  bool started[MOST_THREADS];
};

static void *copy_slice(void *p) {
  slice *s = p;
  memcpy(s->dst, s->src, s->bytes);
  return NULL;
}

/* How many slices: one where threads would not pay. */
static size_t slices(size_t bytes) {
  size_t n = bytes / SLICE, cpus = (size_t)kt_cpus_usable();
  if (n > MOST_THREADS) n = MOST_THREADS;
  if (n > cpus) n = cpus;
  return n < 2 ? 1 : n;
}

static void split(kt_wide_copy *c, void *dst, const void *src, size_t bytes) {
  size_t per = bytes / c->n;
  for (size_t i = 0; i < c->n; i++) /* the last slice takes the rest */
    c->s[i] = (slice){(unsigned char *)dst + i * per, (const unsigned char *)src + i * per,
                      i + 1 < c->n ? per : bytes - i * per};
}

/* Starts slices [from, n) on threads; one whose thread did not start is
** copied here. */
static void start(kt_wide_copy *c, size_t from) {
  for (size_t i = from; i < c->n; i++) {
    c->started[i] = pthread_create(&c->th[i], NULL, copy_slice, &c->s[i]) == 0;
    if (!c->started[i]) copy_slice(&c->s[i]);
  }
}

static void join(kt_wide_copy *c, size_t from) {
  for (size_t i = from; i < c->n; i++)
    if (c->started[i]) pthread_join(c->th[i], NULL);
}

void kt_copy_wide(void *dst, const void *src, size_t bytes) {
  kt_wide_copy c = {.n = slices(bytes)};
  if (c.n == 1) {
    memcpy(dst, src, bytes);
    return;
  }
  split(&c, dst, src, bytes);
  start(&c, 1); /* slice 0 is this thread's */
  copy_slice(&c.s[0]);
  join(&c, 1);
}

kt_wide_copy *kt_copy_wide_start(void *dst, const void *src, size_t bytes) {
  kt_wide_copy *c = bytes >= SLICE ? calloc(1, sizeof *c) : NULL;
  if (!c) {
    memcpy(dst, src, bytes);
    return NULL;
  }
  c->n = slices(bytes);
  split(c, dst, src, bytes);
  start(c, 0);
  return c;
}

void kt_copy_wide_wait(kt_wide_copy *c) {
  if (!c) return;
  join(c, 0);
  free(c);
}
