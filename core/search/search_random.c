/*
** search_random.c: seeded random search without repetition.
**
** On a sampled space (space.h) it walks the same permutation of the
** indices and skips those that break a constraint: rejection sampling
** that never repeats a configuration. Too many misses in a row means the
** constraints are too selective to sample, and says so.
*/
#include <stdio.h>
#include <stdlib.h>

#include "permutation.h"
#include "search.h"

/* Draws in a row that may break a constraint before the search gives up. */
#define MAX_MISSES 1000000

typedef struct random_search {
  uint64_t seed, next, misses;
  kt_permutation perm;
  const kt_space *space;
  uint32_t *vi; /* only for a sampled space */
} random_search;

static void rs_free(void *state) {
  random_search *r = state;
  free(r->vi);
  free(r);
}

static int rs_start(kt_searcher *s, const kt_space *space, kt_error *err) {
  random_search *r = s->state;
  r->next = r->misses = 0;
  r->space = space;
  kt_permutation_init(&r->perm, kt_space_count(space), r->seed);
  free(r->vi);
  r->vi = NULL;
  if (kt_space_sampled(space) && !(r->vi = kt_calloc(kt_space_nparams(space) + 1, sizeof *r->vi, err)))
    return -1;
  return 0;
}

static int too_selective(const random_search *r, kt_error *err) {
  char names[256];
  kt_space_sampled_names(r->space, names, sizeof names);
  return kt_fail(err, "%d draws in a row broke the constraints on %s (%.3g "
                 "combinations, too many to list): they are too selective to sample; narrow "
                 "the parameters' values", MAX_MISSES, names, kt_space_count_all(r->space));
}

/* The next index of the permutation that is a valid configuration;
** returns 1 when none is left. */
static int draw(random_search *r, uint64_t *out, kt_error *err) {
  while (r->next < r->perm.n) {
    uint64_t i = kt_permutation_at(&r->perm, r->next++);
    int ok = r->vi ? kt_space_valid(r->space, i, r->vi, err) : 1;
    if (ok < 0) return -1;
    if (ok) {
      r->misses = 0;
      *out = i;
      return 0;
    }
    if (++r->misses >= MAX_MISSES) return too_selective(r, err);
  }
  return 1;
}

static int rs_next(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err) {
  random_search *r = s->state;
  size_t k = 0;
  int rc = 0;
  while (k < max && (rc = draw(r, &out[k], err)) == 0) k++;
  *got = k;
  return rc < 0 ? -1 : 0;
}

static int rs_report(kt_searcher *s, uint64_t index, const kt_result *res, kt_error *err) {
  (void)s, (void)index, (void)res, (void)err;
  return 0;
}

static const kt_searcher_ops random_ops = {"random", rs_start, rs_next, rs_report, rs_free, NULL, NULL};

bool kt_search_samples(const kt_searcher *s) { return s->ops == &random_ops; }

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
