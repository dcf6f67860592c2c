/*
** search.c: the registry of built-in searchers, options and stop
** conditions.
*/
#include "search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kt_search_exhaustive_init(kt_searcher *s, const kt_search_opts *o, kt_error *err);
int kt_search_random_init(kt_searcher *s, const kt_search_opts *o, kt_error *err);

static const struct {
  const char *name;
  int (*init)(kt_searcher *s, const kt_search_opts *o, kt_error *err);
} builtins[] = {
    {"exhaustive", kt_search_exhaustive_init},
    {"random", kt_search_random_init},
};

#define NBUILTINS (sizeof builtins / sizeof builtins[0])

const char *kt_searcher_names(void) { return "exhaustive, random"; }

kt_searcher *kt_searcher_new(const char *name, const kt_search_opts *o, kt_error *err) {
  static const kt_search_opts none = {0, NULL, 0};
  for (size_t i = 0; i < NBUILTINS; i++) {
    if (strcmp(builtins[i].name, name) != 0) continue;
    kt_searcher *s = kt_calloc(1, sizeof *s, err);
    if (!s) return NULL;
    if (builtins[i].init(s, o ? o : &none, err)) {
      free(s);
      return NULL;
    }
    return s;
  }
  return kt_fail(err, "unknown searcher '%s' (expected one of: %s)", name,
                 kt_searcher_names()), NULL;
}

kt_searcher *kt_searcher_wrap(const kt_searcher_ops *ops, void *state, kt_error *err) {
  kt_searcher *s = kt_calloc(1, sizeof *s, err);
  if (!s) {
    ops->destroy(state);
    return NULL;
  }
  s->ops = ops;
  s->state = state;
  return s;
}

void kt_searcher_free(kt_searcher *s) {
  if (!s) return;
  if (s->ops && s->ops->destroy) s->ops->destroy(s->state);
  free(s);
}

int kt_search_opts_check(const kt_search_opts *o, const char *searcher,
                         const char *const *allowed, kt_error *err) {
  for (size_t i = 0; i < o->noptions; i++) {
    bool known = false;
    for (const char *const *a = allowed; *a && !known; a++) known = strcmp(*a, o->options[i].name) == 0;
    if (!known) {
      char list[512] = "none";
      size_t used = 0;
      for (const char *const *a = allowed; *a && used < sizeof list; a++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                 a == allowed ? "" : ", ", *a);
      return kt_fail(err, "searcher '%s' has no option '%s' (its options: %s)", searcher,
                     o->options[i].name, list);
    }
  }
  return 0;
}

double kt_search_opt(const kt_search_opts *o, const char *name, double dflt) {
  for (size_t i = 0; i < o->noptions; i++)
    if (strcmp(o->options[i].name, name) == 0) return o->options[i].value;
  return dflt;
}

static uint64_t budget(const kt_stop *s, uint64_t space) {
  uint64_t limit = UINT64_MAX;
  if (s->count) limit = s->count;
  if (s->fraction > 0) {
    double f = ceil(s->fraction * (double)space);
    uint64_t byf = f < 1 ? 1 : f >= (double)UINT64_MAX ? UINT64_MAX : (uint64_t)f;
    if (byf < limit) limit = byf;
  }
  return limit;
}

uint64_t kt_stop_remaining(const kt_stop *s, const kt_stop_state *st) {
  uint64_t limit = budget(s, st->space);
  return st->evaluated >= limit ? 0 : limit - st->evaluated;
}

const char *kt_stop_reached(const kt_stop *s, const kt_stop_state *st) {
  if (s->count && st->evaluated >= s->count) return "count";
  if (s->fraction > 0 && st->evaluated >= budget(&(kt_stop){0, s->fraction, 0, 0}, st->space))
    return "fraction";
  if (s->seconds > 0 && st->elapsed_ns >= s->seconds * 1e9) return "seconds";
  if (s->target_ns > 0 && st->best_ns <= s->target_ns) return "target";
  return NULL;
}
