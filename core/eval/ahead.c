/*
** ahead.c: the next configuration's kernels made ahead (ahead.h).
*/
#include "ahead.h"

#include <stdlib.h>
#include <string.h>

/* Announced configurations beyond this many are dropped (oldest first):
** the loop keeps fewer in flight. */
#define MOST 4096

typedef struct announced {
  uint64_t index;
  char **sources;
  size_t n;
} announced;

struct kt_ahead {
  announced *ring;
  size_t head, count, cap;
  uint64_t tried; /* the index made ahead for the configuration running now, + 1 */
  bool out_of_order; /* the loop evaluates the first ready one (kt_ahead_out_of_order) */
};

kt_ahead *kt_ahead_new(kt_error *err) { return kt_calloc(1, sizeof(kt_ahead), err); }

static void forget(announced *x) {
  for (size_t i = 0; i < x->n; i++) free(x->sources[i]);
  free(x->sources);
  *x = (announced){0, NULL, 0};
}

static announced *at(kt_ahead *a, size_t k) { return &a->ring[(a->head + k) % a->cap]; }

static void pop(kt_ahead *a) {
  forget(at(a, 0));
  a->head = (a->head + 1) % a->cap;
  a->count--;
}

void kt_ahead_free(kt_ahead *a) {
  if (!a) return;
  while (a->count) pop(a);
  free(a->ring);
  free(a);
}

static int grow(kt_ahead *a, kt_error *err) {
  size_t cap = a->cap ? 2 * a->cap : 64;
  announced *ring = kt_calloc(cap, sizeof *ring, err);
  if (!ring) return -1;
  for (size_t k = 0; k < a->count; k++) ring[k] = *at(a, k);
  free(a->ring);
  a->ring = ring;
  a->head = 0;
  a->cap = cap;
  return 0;
}

int kt_ahead_announce(kt_ahead *a, uint64_t index, char **sources, size_t n, kt_error *err) {
  announced x = {index, sources, n};
  if (a->count == MOST) pop(a);
  if (a->count == a->cap && grow(a, err)) {
    forget(&x);
    return -1;
  }
  *at(a, a->count++) = x;
  return 0;
}

void kt_ahead_out_of_order(kt_ahead *a) { a->out_of_order = true; }

/* Forgets the announcement at position k. */
static void remove_at(kt_ahead *a, size_t k) {
  forget(at(a, k));
  for (; k + 1 < a->count; k++) *at(a, k) = *at(a, k + 1);
  *at(a, a->count - 1) = (announced){0, NULL, 0}; /* moved up: not freed */
  a->count--;
}

static size_t find(const kt_ahead *a, uint64_t index) {
  size_t k = 0;
  while (k < a->count && a->ring[(a->head + k) % a->cap].index != index) k++;
  return k;
}

void kt_ahead_begin(kt_ahead *a, uint64_t index) {
  a->tried = 0;
  size_t k = find(a, index);
  if (k == a->count) return;
  if (a->out_of_order) {
    remove_at(a, k); /* those before it may come later */
    return;
  }
  for (size_t i = 0; i <= k; i++) pop(a);
}

void kt_ahead_withdraw(kt_ahead *a, uint64_t index) {
  size_t k = find(a, index);
  if (k == a->count) return;
  remove_at(a, k);
  if (a->tried == index + 1) a->tried = 0;
}

/* Where x's programs stand: as kt_ahead_state (running_ns may be NULL). */
static int state_of(const announced *x, const tuning *tu, double *running_ns) {
  int state = 2;
  if (running_ns) *running_ns = 0;
  for (size_t ki = 0; ki < x->n && ki < tu->task->nkernels; ki++) {
    const kt_kernel *k = tu->task->kernels[ki];
    double ns = 0;
    if (!x->sources[ki]) continue; /* nothing to compile: it fails before */
    int s = kt_build_state(tu->t->cache, x->sources[ki], k->build_options, k->name,
                           running_ns ? &ns : NULL);
    kt_error ignored; /* a compile that cannot start: kt_build_get says why, at once */
    if (s == 0 && kt_build_prefetch(tu->t->cache, x->sources[ki], k->build_options, k->name,
                                    &ignored) == 0)
      s = 1, ns = 0;
    if (s == 1) state = 1;
    if (s == 1 && running_ns && ns > *running_ns) *running_ns = ns;
  }
  return state;
}

int kt_ahead_state(kt_ahead *a, const tuning *tu, uint64_t index, double *running_ns) {
  uint64_t pos;
  size_t k = find(a, index);
  if (running_ns) *running_ns = 0;
  if (k == a->count || kt_indexmap_get(&tu->known, index, &pos)) return 2;
  return state_of(at(a, k), tu, running_ns);
}

/* The next configuration the loop will evaluate, most likely: the first
** announced one that is not taken from a resumed journal (out of order, the
** loop may take another first: loop.h). */
static announced *next(kt_ahead *a, const tuning *tu) {
  for (size_t k = 0; k < a->count; k++) {
    uint64_t pos;
    if (!kt_indexmap_get(&tu->known, at(a, k)->index, &pos)) return at(a, k);
  }
  return NULL;
}

int tune_ahead_idle(kt_run *run, void *ud, kt_error *err) {
  tuning *tu = ud;
  kt_ahead *a = tu->ahead;
  announced *x = a && !tu->rerun ? next(a, tu) : NULL;
  if (!x || a->tried == x->index + 1) return 0;
  kt_tuner *t = run->tuner;
  uint64_t losses = tuner_losses(t);
  int64_t t0 = kt_now_ns();
  int made = 0;
  kt_error why = {0};
  for (size_t ki = 0; ki < x->n && ki < tu->task->nkernels; ki++) {
    const kt_kernel *k = tu->task->kernels[ki];
    int rc = x->sources[ki]
                 ? kt_build_ahead(t->cache, x->sources[ki], k->build_options, k->name, &why)
                 : 0;
    if (rc < 0) return *err = why, -1;
    made += rc;
  }
  tu->ahead_ns += (double)(kt_now_ns() - t0);
  /* Lost during the warm-up: which of the two took it, the warm-up or the
  ** next kernel, the message cannot tell; the one in flight fails. */
  if (tuner_losses(t) != losses)
    return kt_fail(err, "%s", why.msg[0] ? why.msg : "the device process is gone"), 1;
  tu->results->gap.ahead += (size_t)made;
  /* Every kernel made, or one of them still compiling: tried again at the
  ** next wait of this configuration, if any. */
  if (made == (int)tu->task->nkernels) a->tried = x->index + 1;
  return 0;
}
