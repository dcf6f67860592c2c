/*
** profile.c: a tuning's hardware counters (tune option profile): each
** configuration that came out ok is run once more, untimed, between the
** backend's counters_begin and counters_end (backend.h), after its timed
** runs, and the counters become metrics of its result, which carry them
** to best(), reports, journals, the database and the searcher (report).
** That run's launches are replayed as often as the counters need (the
** passes); its wall time counts in the configuration's total and, summed,
** in the results' profile_ns.
**
** Only CUDA has counters (through CUPTI): asking for them on another
** backend is an error before the first configuration. Where they cannot
** be read (no permission), the tuning says so once and goes on timing.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "tune_int.h"

int tune_profile_check(const tuning *tu, kt_error *err) {
  const kt_device_info *d = &tu->t->device;
  if (tu->opts->nprofile == 0 || strcmp(d->backend->name, "cuda") == 0) return 0;
  return kt_fail(err, "tune options.profile: hardware counters are CUDA's only (through CUPTI); "
                 "%s (%s) is an %s device", d->id, kt_device_string(d, "name"),
                 strcmp(d->backend->name, "opencl") == 0 ? "OpenCL" : d->backend->name);
}

/* Counters cannot be read here: said once, then the tuning times alone. */
static void give_up(tuning *tu, const kt_error *why) {
  kt_results *r = tu->results;
  tu->counters_off = true;
  kt_log_append(&r->device_log, why->msg);
  kt_log_append(&r->device_log, "; the tuning goes on without counters\n");
  if (!r->notice) {
    size_t n = strlen(why->msg) + 64;
    if ((r->notice = malloc(n))) snprintf(r->notice, n, "%s; tuned without counters", why->msg);
  }
}

/* The profiled run: launches once, between begin and end (always ended). */
static int collect(tuning *tu, kt_run *run, double *v, unsigned *passes, kt_error *err) {
  const kt_backend *be = tu->t->be;
  const kt_tune_opts *o = tu->opts;
  unsigned ranges = 0;
  int rc = be->counters_begin(tu->t->ctx, o->profile, o->nprofile, passes, err);
  if (rc) return rc;
  kt_error eerr;
  rc = kt_run_execute(run, err);
  int erc = be->counters_end(tu->t->ctx, v, o->nprofile, &ranges, rc ? &eerr : err);
  return rc ? rc : erc;
}

/* A run that failed under the profiler keeps the timed runs' verdict. */
static void keep_verdict(tuning *tu, kt_run *run) {
  if (run->status == KT_OK) return;
  kt_log_append(&tu->results->device_log, "hardware counters: a configuration failed while "
                "profiled (its timed runs stand): ");
  kt_log_append(&tu->results->device_log, run->error ? run->error : "?");
  kt_log_append(&tu->results->device_log, "\n");
  run->status = KT_OK;
  free(run->error);
  run->error = NULL;
}

int tune_profile(tuning *tu, kt_run *run, kt_result *res, kt_error *err) {
  const kt_tune_opts *o = tu->opts;
  if (o->nprofile == 0 || tu->counters_off || run->status != KT_OK) return 0;
  double *v = kt_calloc(o->nprofile, sizeof *v, err);
  if (!v) return -1;
  unsigned passes = 0;
  int64_t t0 = kt_now_ns();
  int rc = collect(tu, run, v, &passes, err);
  if (rc == 1) give_up(tu, err), rc = 0;
  else if (rc == 0 && run->status == KT_OK)
    for (size_t i = 0; i < o->nprofile && rc == 0; i++)
      if (!isnan(v[i])) rc = kt_result_set_metric(res, o->profile[i], v[i], err);
  keep_verdict(tu, run);
  double ns = (double)(kt_now_ns() - t0);
  res->over.wait += ns;
  tu->results->profile_ns += ns;
  tu->results->profiled += rc == 0 && !tu->counters_off;
  if (passes) tu->results->profile_passes = passes;
  free(v);
  return rc;
}
