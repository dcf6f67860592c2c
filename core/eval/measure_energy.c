/*
** measure_energy.c: a configuration's energy pass (tune options energy,
** kt_tune_opts.energy_window_ns), after its timed runs and apart from
** them.
**
** NVML's energy counter moves in steps of tens of milliseconds while a
** kernel may take microseconds, so the configuration runs again and again
** for a window of at least energy_window_ns (as Kernel Tuner's continuous
** observer does), queued back to back in batches (run_batch.h), and the
** window's energy is divided among its runs. The device process reads
** NVML (energy.h) around the window; the timed runs never share it.
** Between the window's runs, arrays that kernels only write are not
** restored (as between timed runs, whose events leave the restores out):
** a run's energy is its kernels' (and their launches'), not copies'. An
** array a kernel reads and writes is restored, since the work may
** depend on it.
*/
#include <math.h>
#include <stdlib.h>

#include "energy.h"
#include "metrics.h"
#include "run_batch.h"
#include "tune_int.h"

/* Most runs queued in one batch. */
#define MOST_BATCH 4096
/* The shortest window, in periods of the energy counter. */
#define PERIODS 4

static int energy_op(kt_tuner *t, kt_energy_op op, kt_energy_reading *out, kt_error *err) {
  const char *name = kt_device_string(&t->device, "name");
  int rc = !t->be->energy ? kt_fail(err, "%s; this device's backend is %s", KT_ENERGY_NEEDS_CUDA,
                                    t->device.backend->name)
                          : t->be->energy(t->ctx, (int)op, out, err);
  return rc ? kt_fail_prefix(err, "energy on %s (%s): ", t->device.id, name ? name : "?") : 0;
}

/* A counter that steps every period is read between its steps (energy.c):
** the window holds a few of them. */
int tune_energy_check(tuning *tu, kt_error *err) {
  kt_energy_reading r;
  tu->energy_ns = tu->opts->energy_window_ns;
  if (!(tu->energy_ns > 0)) return 0;
  if (energy_op(tu->t, KT_ENERGY_PROBE, &r, err)) return -1;
  if (tu->energy_ns < PERIODS * r.seconds * 1e9) tu->energy_ns = PERIODS * r.seconds * 1e9;
  return 0;
}

/* Runs to queue next: enough to fill what is left of the window at the
** pace seen so far; the first batch, whose pace is only guessed from the
** timed runs' median (restores between runs are not in it), a quarter of
** the window. */
static size_t batch_size(double left_ns, double per_run_ns) {
  double n = per_run_ns > 0 ? ceil(left_ns / per_run_ns) : MOST_BATCH;
  return n < 1 ? 1 : n > MOST_BATCH ? MOST_BATCH : (size_t)n;
}

static int run_window(tuning *tu, kt_run *run, double window_ns, double first_ns, size_t *runs,
                      kt_error *err) {
  double *ns = kt_calloc(MOST_BATCH, sizeof *ns, err);
  if (!ns) return -1;
  bool batched = kt_run_batchable(run) && !tu->opts->serial;
  int64_t t0 = kt_now_ns();
  double elapsed = 0;
  int rc = 0;
  while (rc == 0 && run->status == KT_OK && elapsed < window_ns) {
    double left = *runs ? window_ns - elapsed : window_ns / 4;
    size_t n = batched ? batch_size(left, *runs ? elapsed / (double)*runs : first_ns) : 1;
    rc = batched ? kt_run_execute_batch(run, n, ns, err) : kt_run_execute(run, err);
    *runs += n;
    elapsed = (double)(kt_now_ns() - t0);
  }
  free(ns);
  return rc;
}

static int record(kt_result *res, const kt_energy_reading *r, size_t runs, kt_error *err) {
  if (kt_result_set_metric(res, "energy", r->joules / (double)runs, err) ||
      kt_result_set_metric(res, "power", r->seconds > 0 ? r->joules / r->seconds : NAN, err))
    return -1;
  return isnan(r->sm_mhz) ? 0 : kt_result_set_metric(res, "sm_clock", r->sm_mhz, err);
}

int tune_energy(tuning *tu, kt_run *run, kt_result *res, kt_error *err) {
  double window = tu->energy_ns;
  if (!(window > 0) || run->status != KT_OK || res->cut_short) return 0;
  kt_energy_reading r;
  size_t runs = 0;
  if (energy_op(tu->t, KT_ENERGY_START, &r, err)) return -1;
  tu->t->keep_outputs = true;
  int rc = run_window(tu, run, window, res->time_ns, &runs, err);
  tu->t->keep_outputs = false;
  kt_error serr;
  int stopped = energy_op(tu->t, KT_ENERGY_STOP, &r, rc ? &serr : err);
  if (rc || run->status != KT_OK) return rc;
  return stopped ? -1 : record(res, &r, runs, err);
}
