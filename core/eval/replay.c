/*
** replay.c: the replay object, its evaluator and the score of a search.
*/
#include "replay.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "recording.h"

struct kt_replay {
  int refs;
  kt_recording rec;
  const kt_result *optimum;
};

kt_replay *kt_replay_load(const char *path, kt_error *err) {
  kt_replay *r = kt_calloc(1, sizeof *r, err);
  if (!r) return NULL;
  r->refs = 1;
  if (kt_recording_read(path, &r->rec, err)) {
    free(r);
    return NULL;
  }
  r->optimum = kt_results_best(r->rec.records);
  return r;
}

void kt_replay_retain(kt_replay *r) {
  if (r) r->refs++;
}

void kt_replay_release(kt_replay *r) {
  if (!r || --r->refs > 0) return;
  kt_recording_clear(&r->rec);
  free(r);
}

kt_space *kt_replay_space(const kt_replay *r) { return r->rec.space; }
const kt_results *kt_replay_records(const kt_replay *r) { return r->rec.records; }
const kt_result *kt_replay_optimum(const kt_replay *r) { return r->optimum; }
const char *kt_replay_format(const kt_replay *r) { return r->rec.format; }

/* ---- evaluation ---- */

/* The recorded searcher's time is not the replay's (the loop adds that). */
static int replay_evaluate(void *ud, kt_result *res, kt_error *err) {
  const kt_replay *r = ud;
  if (kt_result_copy(res, &r->rec.records->items[res->index], err)) return -1;
  res->over.searcher = 0;
  return 0;
}

int kt_replay_tune(kt_replay *r, const kt_loop_opts *o, kt_results **out, kt_error *err) {
  int64_t t0 = kt_now_ns();
  const kt_results *rec = r->rec.records;
  const char *kernel = rec->kernels[0];
  *out = kt_results_new(rec->task, r->rec.space, &kernel, 1, rec->device, err);
  if (!*out) return -1;
  kt_loop_opts lo = *o;
  lo.clock = KT_CLOCK_RESULTS;
  kt_evaluator ev = {.evaluate = replay_evaluate, .ud = r};
  int rc = kt_search_loop(r->rec.space, &lo, &ev, *out, err);
  (*out)->wall_ns = (double)(kt_now_ns() - t0);
  return rc;
}

/* ---- scoring ---- */

/* optimum against best, as a fraction of 1; 0 before anything has a value */
static double ratio(double optimum, double best, bool maximize) {
  if (isnan(best)) return 0;
  return maximize ? best / optimum : optimum / best;
}

int kt_replay_score(const kt_replay *r, const kt_results *res, uint64_t budget,
                    const char *objective, bool maximize, double *reached, double *score) {
  const kt_result *opt = kt_results_best_of(r->rec.records, objective, maximize);
  if (!opt) return -1;
  double optimum = kt_result_objective(opt, objective), best = NAN, sum = 0;
  if (budget == 0) budget = res->n;
  for (uint64_t i = 0; i < budget; i++) {
    double v = i < res->n ? kt_result_objective(&res->items[i], objective) : NAN;
    if (!isnan(v) && (isnan(best) || (maximize ? v > best : v < best))) best = v;
    sum += ratio(optimum, best, maximize);
  }
  *reached = ratio(optimum, best, maximize);
  *score = budget ? sum / (double)budget : 0;
  return 0;
}
