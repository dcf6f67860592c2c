/*
** search_opts.c: a searcher's options, checked and read (search.h). Below
** the searchers that read them and the registry (search.c) that makes
** the searchers.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "search.h"

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

static const kt_option *find_option(const kt_search_opts *o, const char *name) {
  for (size_t i = 0; i < o->noptions; i++)
    if (strcmp(o->options[i].name, name) == 0) return &o->options[i];
  return NULL;
}

int kt_search_opt_number(const kt_search_opts *o, const char *searcher, const char *name,
                         double dflt, double lo, double hi, double *out, kt_error *err) {
  const kt_option *opt = find_option(o, name);
  *out = opt ? opt->value : dflt;
  if (opt && opt->text)
    return kt_fail(err, "searcher '%s': option %s must be a number", searcher, name);
  if (!(*out >= lo && *out <= hi))
    return kt_fail(err, "searcher '%s': option %s must be in [%.12g, %.12g], got %.12g", searcher,
                   name, lo, hi, *out);
  return 0;
}

int kt_search_opt_whole(const kt_search_opts *o, const char *searcher, const char *name,
                        double dflt, double lo, double hi, bool fractions, double *out,
                        kt_error *err) {
  if (kt_search_opt_number(o, searcher, name, dflt, lo, hi, out, err)) return -1;
  if (*out == floor(*out) || (fractions && *out < 1)) return 0;
  return kt_fail(err, "searcher '%s': option %s must be a whole number%s, got %.12g", searcher,
                 name, fractions ? " (or below 1, a fraction of the space)" : "", *out);
}

int kt_search_opt_text(const kt_search_opts *o, const char *searcher, const char *name,
                       const char *dflt, const char **out, kt_error *err) {
  const kt_option *opt = find_option(o, name);
  *out = opt ? opt->text : dflt;
  if (opt && !opt->text)
    return kt_fail(err, "searcher '%s': option %s must be text", searcher, name);
  return 0;
}

unsigned kt_search_size(double option, uint64_t count) {
  double n = option < 1 ? ceil(option * (double)count) : floor(option);
  return n < 1 ? 1 : n > 1e9 ? 1000000000u : (unsigned)n;
}
