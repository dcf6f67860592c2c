/*
** search_exhaustive.c: every configuration, in index order.
*/
#include <stdlib.h>

#include "search.h"

typedef struct exhaustive {
  uint64_t next, count;
} exhaustive;

static int ex_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  (void)err;
  exhaustive *e = s->state;
  e->next = 0;
  e->count = kt_space_count(space);
  return 0;
}

static int ex_next(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  (void)err;
  exhaustive *e = s->state;
  size_t k = 0;
  while (k < max && e->next < e->count) out[k++] = e->next++;
  *got = k;
  return 0;
}

static int ex_report(kt_searcher *s, uint64_t index, const kt_result *r, kt_error *err) {
  (void)s, (void)index, (void)r, (void)err;
  return 0;
}

static const kt_searcher_ops exhaustive_ops = {"exhaustive", ex_start, ex_next, ex_report, free, NULL, NULL};

int kt_search_exhaustive_init(kt_searcher *s, const kt_search_opts *o, kt_error *err) {
  static const char *const allowed[] = {NULL};
  if (kt_search_opts_check(o, "exhaustive", allowed, err)) return -1;
  s->ops = &exhaustive_ops;
  s->state = kt_calloc(1, sizeof(exhaustive), err);
  return s->state ? 0 : -1;
}
