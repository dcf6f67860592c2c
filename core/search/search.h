/*
** search.h: the searcher interface and stop conditions.
**
** A searcher proposes configuration indices and hears how each went. The
** tuning loop owns the budget: a searcher never needs to count. Built-in
** searchers live in search_*.c; a Lua table with the same three methods
** becomes a searcher through kt_searcher_wrap.
*/
#ifndef KT_SEARCH_H
#define KT_SEARCH_H

#include "space.h"

typedef struct kt_result kt_result;
typedef struct kt_searcher kt_searcher;

/* What was learnt elsewhere (transfer.md): configurations that did well
** on other devices or sizes, as value indices (n lists of the space's
** parameters, one after the other), each with a weight > 0 (how much it
** is to be believed: how alike that device and size are); a parameter
** whose value it does not say (another device's space lacks it) is
** KT_PRIOR_ANY. A searcher may use it to order its proposals; it is no
** result of this space. */
#define KT_PRIOR_ANY UINT32_MAX /* in a prior's vi: a value it does not say */
typedef struct kt_prior {
  const uint32_t *vi;
  const double *weight;
  size_t n;
} kt_prior;

typedef struct kt_searcher_ops {
  const char *name;
  /* Once the space is generated, before the first proposal. */
  int (*start)(kt_searcher *s, const kt_space *space, kt_error *err);
  /* Up to max proposals into out; *got == 0 means nothing is left. */
  int (*next)(kt_searcher *s, uint64_t *out, size_t max, size_t *got, kt_error *err);
  /* The outcome of a proposal (also for one evaluated before). */
  int (*report)(kt_searcher *s, uint64_t index, const kt_result *r, kt_error *err);
  void (*destroy)(void *state);
  /* Optional (NULL: keeps all). After each result, the proposals not yet
  ** evaluated (pending, oldest first): *keep gets how many of the oldest it
  ** still wants; the rest are withdrawn, as if never proposed (a device
  ** may have compiled them: a proposal made again finds its program). */
  int (*withdraw)(kt_searcher *s, const uint64_t *pending, size_t n, size_t *keep,
                  kt_error *err);
  /* Optional (NULL: ignores it). After start, before any result, when the
  ** tuning has a prior; called once. */
  int (*prior)(kt_searcher *s, const kt_prior *p, kt_error *err);
} kt_searcher_ops;

struct kt_searcher {
  const kt_searcher_ops *ops;
  void *state;
};

/* A searcher's tuning knobs, by name; each searcher rejects names it does
** not know. Most are numbers; a few are text (the stages of "staged"). */
typedef struct kt_option {
  const char *name;
  double value;     /* NAN for a text option */
  const char *text; /* NULL for a number */
} kt_option;

typedef struct kt_search_opts {
  uint64_t seed;
  const kt_option *options;
  size_t noptions;
} kt_search_opts;

kt_searcher *kt_searcher_new(const char *name, const kt_search_opts *o, kt_error *err);
/* The searcher owns state from here on (destroy frees it, even on error). */
kt_searcher *kt_searcher_wrap(const kt_searcher_ops *ops, void *state, kt_error *err);
void kt_searcher_free(kt_searcher *s);
/* Names of the built-in searchers, comma separated. */
const char *kt_searcher_names(void);

/* Fails naming the first option that is not in allowed (NULL-terminated). */
int kt_search_opts_check(const kt_search_opts *o, const char *searcher,
                         const char *const *allowed, kt_error *err);
double kt_search_opt(const kt_search_opts *o, const char *name, double dflt);
/* A number option in [lo, hi], dflt when absent; fails naming the option
** when it is text or out of range. */
int kt_search_opt_number(const kt_search_opts *o, const char *searcher, const char *name,
                         double dflt, double lo, double hi, double *out, kt_error *err);
/* A number option that must be whole (a count, a size, a 0/1 switch); with
** fractions, values below 1 may be fractions of the space instead. */
int kt_search_opt_whole(const kt_search_opts *o, const char *searcher, const char *name,
                        double dflt, double lo, double hi, bool fractions, double *out,
                        kt_error *err);
/* A size option read as a count, or below 1 as a fraction of the space's
** count (rounded up); at least 1. */
unsigned kt_search_size(double option, uint64_t count);
/* A text option, dflt when absent; fails when it is a number. */
int kt_search_opt_text(const kt_search_opts *o, const char *searcher, const char *name,
                       const char *dflt, const char **out, kt_error *err);

/* Stop conditions; zero means unset. The tuning stops at the first one
** reached, and when the searcher has nothing left. */
typedef struct kt_stop {
  uint64_t count;          /* configurations evaluated */
  double fraction;         /* of the valid configurations (rounded up) */
  double seconds;          /* wall-clock time of the tuning (or the replay's clock) */
  double target_ns;        /* a kernel time at or below this */
  uint64_t no_improvement; /* this many evaluations in a row without a new best */
  double min_improvement;  /* the best improved by less than this fraction ... */
  uint64_t window;         /* ... over the last window evaluations (both needed) */
  uint64_t failures;       /* this many configurations did not come out ok (KTT's FailureCount) */
} kt_stop;

typedef struct kt_stop_state {
  uint64_t evaluated;
  uint64_t space;
  double elapsed_ns;
  double best_ns;      /* NAN until a configuration succeeds */
  uint64_t since_best; /* evaluations since the best last improved */
  double *history;     /* ring of window + 1: the best after each recent evaluation */
  uint64_t window;
  uint64_t failed;     /* evaluations whose status is not ok */
} kt_stop_state;

int kt_stop_state_init(kt_stop_state *st, const kt_stop *s, uint64_t space, kt_error *err);
void kt_stop_state_clear(kt_stop_state *st);
/* The searcher of a tuning that names none: with a budget (count, fraction
** or seconds) "forest", which finds most within one; otherwise
** "exhaustive", which tries everything in index order. */
const char *kt_search_default(const kt_stop *s);
/* Counts one new evaluation and its outcome. */
void kt_stop_state_record(kt_stop_state *st, const kt_result *r);

/* How many more configurations the count and fraction allow. */
uint64_t kt_stop_remaining(const kt_stop *s, const kt_stop_state *st);
/* NULL while the tuning may go on, else why it stops: the condition's
** name ("count", "no_improvement", ...; at a tie, the first in kt_stop). */
const char *kt_stop_reached(const kt_stop *s, const kt_stop_state *st);

/* Whether the searcher may search a sampled space (space.h): it proposes
** only indices that kt_space_valid accepts. Only random search does. */
bool kt_search_samples(const kt_searcher *s);

#endif
