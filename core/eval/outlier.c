/*
** outlier.c: a tuning's compiles as the loop sees them (loop.h, ready):
** which configurations announced can run now, a wait for the next compile
** to end, and the compiles that have run so far beyond the others that
** the tuning does not wait for them (kt_outlier_rule, tuner.h).
**
** A compile's time is its own (builder.h): in a compiler process, its wall
** time less its process's waits for a processor, so that other jobs on the
** machine make no compile an outlier; in the device process, its wall time.
** The median is over the compiles of this tuning that ran (programs loaded
** from the disk cache are not compiles), from the first one that ended.
**
** Configurations are evaluated in the order proposed, but for one whose
** compile has run longer than the floor and KT_OVERTAKE_FACTOR times the
** median: the configurations behind it whose compiles are over go first.
** Not sooner: the order stays the searcher's wherever compiles take about
** as long as each other, and a tuning is the same on any machine however
** busy. compile_outlier = false keeps the order always.
*/
#include <math.h>
#include <stdio.h>

#include "ahead.h"
#include "tune_int.h"

bool tune_ready(void *ud, uint64_t index) {
  tuning *tu = ud;
  return kt_ahead_state(tu->ahead, tu, index, NULL) == 2;
}

uint64_t tune_marked(void *ud) {
  tuning *tu = ud;
  return kt_build_cache_finished(tu->t->cache);
}

void tune_await(void *ud, uint64_t mark, int64_t deadline_ns) {
  tuning *tu = ud;
  kt_build_cache_await(tu->t->cache, mark, deadline_ns);
}

/* The median of the tuning's compiles so far, *n of them. */
static double median_of(tuning *tu, size_t *n) {
  if (tu->compiles0 > kt_build_cache_times(tu->t->cache)) tu->compiles0 = 0; /* a new cache */
  return kt_build_cache_median(tu->t->cache, tu->compiles0, n);
}

bool tune_overtake(void *ud, uint64_t index) {
  tuning *tu = ud;
  const kt_outlier_rule *r = &tu->opts->outlier;
  double floor_ns = r->floor_ns > 0 ? r->floor_ns : KT_OUTLIER_FLOOR_DEFAULT;
  double running;
  if (r->factor < 0 || kt_ahead_state(tu->ahead, tu, index, &running) != 1) return false;
  size_t n;
  double median = median_of(tu, &n);
  return running > floor_ns && running > KT_OVERTAKE_FACTOR * median;
}

bool tune_outlier(void *ud, uint64_t index, char *why, size_t size) {
  tuning *tu = ud;
  const kt_outlier_rule *r = &tu->opts->outlier;
  if (r->factor < 0) return false;
  double factor = r->factor > 0 ? r->factor : KT_OUTLIER_FACTOR_DEFAULT;
  size_t after = r->after > 0 ? r->after : KT_OUTLIER_AFTER_DEFAULT;
  double floor_ns = r->floor_ns > 0 ? r->floor_ns : KT_OUTLIER_FLOOR_DEFAULT;
  double running;
  if (kt_ahead_state(tu->ahead, tu, index, &running) != 1) return false;
  size_t n;
  double median = median_of(tu, &n);
  if (n < after || running <= floor_ns || running <= factor * median) return false;
  snprintf(why, size,
           "its compile had run %.3g s, more than %g times the median of the tuning's %zu "
           "compiles before (%.3g s; compile_outlier)",
           running / 1e9, factor, n, median / 1e9);
  return true;
}
