/*
** search_random.c: seeded random search without repetition.
*/
#include <stdlib.h>

#include "permutation.h"
#include "search.h"

typedef struct random_search {
  uint64_t seed, next;
  kt_permutation perm;
} random_search;

static int rs_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  (void)err;
  random_search *r = s->state;
  r->next = 0;
  kt_permutation_init(&r->perm, kt_space_count(space), r->seed);
  return 0;
}

static int rs_next(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  (void)err;
  random_search *r = s->state;
  size_t k = 0;
  while (k < max && r->next < r->perm.n) out[k++] = kt_permutation_at(&r->perm, r->next++);
  *got = k;
  return 0;
}

static int rs_report(kt_searcher *s, uint64_t index, const kt_result *res, kt_error *err) {
  (void)s, (void)index, (void)res, (void)err;
  return 0;
}

static const kt_searcher_ops random_ops = {"random", rs_start, rs_next, rs_report, free};

int kt_search_random_init(kt_searcher *s, const kt_search_opts *o, kt_error *err) {
  static const char *const allowed[] = {NULL};
  if (kt_search_opts_check(o, "random", allowed, err)) return -1;
  random_search *r = kt_calloc(1, sizeof *r, err);
  if (!r) return -1;
  r->seed = o->seed;
  s->ops = &random_ops;
  s->state = r;
  return 0;
}
