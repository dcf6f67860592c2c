/*
** loop.c: the search loop.
*/
#include "loop.h"

#include <stdlib.h>

#include "indexmap.h"

/* A searcher that proposes only configurations already evaluated this
** many times in a row has nothing new to offer. */
#define MAX_REPEATS 10000

typedef struct loop {
  const kt_space *space;
  const kt_loop_opts *o;
  const kt_evaluator *ev;
  kt_results *results;
  kt_indexmap seen; /* index -> position in results */
  uint32_t *vi;
  double clock_ns;  /* KT_CLOCK_RESULTS: the results' summed time */
  kt_stop_state st;
} loop;

/* Evaluates a proposal, or reports the earlier result of a repeated one.
** *fresh says which it was. */
static int handle(loop *l, uint64_t index, double searcher_ns, bool *fresh, kt_error *err) {
  kt_searcher *s = l->o->searcher;
  uint64_t at;
  *fresh = !kt_indexmap_get(&l->seen, index, &at);
  if (*fresh) {
    if (kt_space_config(l->space, index, l->vi, err)) return -1;
    kt_result *res = kt_results_add(l->results, index, l->vi, err);
    if (!res) return -1;
    at = l->results->n - 1;
    if (kt_indexmap_put(&l->seen, index, at, err) || l->ev->evaluate(l->ev->ud, res, err))
      return -1;
    res->over.searcher += searcher_ns;
    l->clock_ns += res->over.total;
    kt_stop_state_record(&l->st, res);
    if (l->o->progress && l->o->progress(l->results, res, l->o->progress_ud, err))
      return kt_fail_prefix(err, "progress: ");
  }
  if (s->ops->report(s, index, &l->results->items[at], err))
    return kt_fail_prefix(err, "searcher %s: ", s->ops->name);
  return 0;
}

static const char *stop_reason(loop *l, kt_stop_state *st, int64_t t0, size_t repeats) {
  st->elapsed_ns = l->o->clock == KT_CLOCK_WALL ? (double)(kt_now_ns() - t0) : l->clock_ns;
  const char *why = kt_stop_reached(&l->o->stop, st);
  if (!why && st->evaluated >= st->space) why = "space explored";
  if (!why && repeats >= MAX_REPEATS) why = "searcher repeats itself";
  return why;
}

static int run(loop *l, kt_error *err) {
  kt_searcher *s = l->o->searcher;
  kt_stop_state *st = &l->st;
  int64_t t0 = kt_now_ns();
  size_t repeats = 0;
  if (s->ops->start(s, l->space, err)) return kt_fail_prefix(err, "searcher %s: ", s->ops->name);
  for (;;) {
    const char *why = stop_reason(l, st, t0, repeats);
    if (why) {
      l->results->stopped = why;
      return 0;
    }
    uint64_t index;
    size_t got = 0;
    int64_t ts = kt_now_ns();
    if (s->ops->next(s, &index, 1, &got, err))
      return kt_fail_prefix(err, "searcher %s: ", s->ops->name);
    if (got == 0) {
      l->results->stopped = "searcher finished";
      return 0;
    }
    if (index >= st->space)
      return kt_fail(err, "searcher %s proposed configuration %llu of a space of %llu",
                     s->ops->name, (unsigned long long)index, (unsigned long long)st->space);
    bool fresh;
    if (handle(l, index, (double)(kt_now_ns() - ts), &fresh, err)) return -1;
    repeats = fresh ? 0 : repeats + 1;
  }
}

int kt_search_loop(const kt_space *space, const kt_loop_opts *o, const kt_evaluator *ev,
                   kt_results *results, kt_error *err) {
  if (!o->searcher) return kt_fail(err, "no searcher given");
  if (!kt_space_generated(space)) return kt_fail(err, "the space has not been generated");
  loop l = {space, o, ev, results, {0}, NULL, 0, {0}};
  kt_indexmap_init(&l.seen);
  if (kt_stop_state_init(&l.st, &o->stop, kt_space_count(space), err)) return -1;
  if (!(l.vi = kt_calloc(kt_space_nparams(space) + 1, sizeof *l.vi, err))) {
    kt_stop_state_clear(&l.st);
    return -1;
  }
  if (!results->searcher) results->searcher = kt_strdup(o->searcher->ops->name, NULL);
  int rc = run(&l, err);
  kt_stop_state_clear(&l.st);
  free(l.vi);
  kt_indexmap_clear(&l.seen);
  return rc;
}
