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
**
** CUPTI profiles kernels right only from modules loaded after its Range
** Profiler was enabled on the context: on an H200 with CUDA 13.0, one
** loaded before gave no values, or the device process crashed in the
** profiled run. So a tuning with counters starts on a context that has had
** them on from its start: a fresh one (a new device process, or a new
** context in process) where the context in hand had none, and the
** counters are switched on (counters_begin without a collection) before
** the references and the first configuration load anything. That also
** finds an unknown counter, or a missing CUPTI, before
** any configuration runs. A context lost during the tuning comes back
** without counters: the configuration that finds it so gets none, and
** switches them on for the next.
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

/* Counters on, and the names checked, collecting nothing. */
static int switch_on(tuning *tu, kt_error *err) {
  kt_tuner *t = tu->t;
  int rc = t->be->counters_begin(t->ctx, tu->opts->profile, tu->opts->nprofile, NULL, err);
  if (rc == 1) give_up(tu, err), rc = 0;
  if (rc == 0) t->counted = tuner_losses(t) + 1;
  return rc;
}

/* A context none of whose modules predates the counters. */
static int fresh_context(kt_tuner *t, kt_error *err) {
  if (!t->be->renew) return tuner_reopen(t, err);
  t->be->renew(t->ctx); /* the next call starts a new device process */
  return 0;
}

int tune_profile_ready(tuning *tu, kt_error *err) {
  kt_tuner *t = tu->t;
  if (tu->opts->nprofile == 0 || tu->counters_off || t->counted == tuner_losses(t) + 1) return 0;
  if (fresh_context(t, err)) return -1;
  return switch_on(tu, err);
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
  if (tu->t->counted != tuner_losses(tu->t) + 1) return switch_on(tu, err); /* a new context */
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
