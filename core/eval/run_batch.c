/*
** run_batch.c: executions queued back to back (run_batch.h).
*/
#include "run_batch.h"

#include <stdlib.h>

#include "run_int.h"
#include "tuner_int.h"

bool kt_run_batchable(const kt_run *run) { return !run->task->launcher; }

/* Queues one execution; its launches' events start at run->events[*first]. */
static int enqueue(kt_run *run, size_t *first, kt_error *err) {
  int64_t t0 = kt_now_ns();
  if (run_reset(run, err)) return -1;
  run->data_ns += (double)(kt_now_ns() - t0);
  *first = run->nevents;
  run->launches = 0;
  run->nshapes = 0; /* the shapes of one execution, as kt_run_execute leaves them */
  kt_error lerr;
  int64_t t1 = kt_now_ns();
  int rc = run_launch_all(run, NULL, &lerr);
  run->launcher_ns += (double)(kt_now_ns() - t1); /* queueing the launches: host time */
  if (rc == 0) return 0;
  if (run->fault == KT_FAULT_FATAL) return kt_fail(err, "%s", lerr.msg);
  return run_config_fails(run, run_fault_status(run->fault), lerr.msg), 1;
}

/* Waits for everything queued and sums each execution's launches. */
static int collect(kt_run *run, const size_t *first, size_t n, double *ns, uint64_t losses,
                   kt_error *err) {
  kt_tuner *t = run->tuner;
  kt_error ferr;
  int waited = run_finish(run, -1, &ferr);
  run->waited_ns = kt_now_ns();
  if (waited) {
    if (run->fault == KT_FAULT_FATAL) return kt_fail(err, "%s", ferr.msg);
    if (run->status == KT_OK) run_config_fails(run, run_fault_status(run->fault), ferr.msg);
  }
  /* Lost, and noticed by other work than this wait (which then finds
  ** nothing in flight): the executions went with the device process. */
  if (run->status == KT_OK && tuner_losses(t) != losses) {
    run->fault = KT_FAULT_LOST;
    run_config_fails(run, KT_RUNTIME_FAILED, "the device process was lost during the timed runs");
  }
  for (size_t i = 0; i < n; i++) {
    size_t end = i + 1 < n ? first[i + 1] : run->nevents;
    ns[i] = 0;
    for (size_t e = first[i]; e < end && run->status == KT_OK; e++) {
      double x = t->be->event_ns(t->ctx, run->events[e]);
      if (x > 0) ns[i] += x;
    }
    t->device_ns += ns[i];
  }
  run_free_events(run);
  return 0;
}

static int hook(kt_run *run, kt_batch_hook fn, void *ud, kt_error *err) {
  kt_error why;
  return run_work_done(run, fn(run, ud, &why), &why, err);
}

int kt_run_execute_batch(kt_run *run, size_t n, double *ns, kt_error *err) {
  kt_batch_hooks none = {NULL, NULL, NULL};
  return kt_run_execute_hooked(run, n, ns, &none, err);
}

int kt_run_execute_hooked(kt_run *run, size_t n, double *ns, const kt_batch_hooks *hooks,
                          kt_error *err) {
  size_t *first = kt_calloc(n ? n : 1, sizeof *first, err);
  if (!first) return -1;
  run->kernel_ns = run->launcher_ns = run->wait_ns = run->data_ns = 0;
  run->fault = KT_FAULT_NONE;
  run->status = KT_OK;
  if (run->time_limit_ns > 0)
    tuner_set_deadline(run->tuner, kt_now_ns() + kt_ns_clamp((double)n * (double)run->time_limit_ns));
  int rc = 0;
  size_t queued = 0;
  uint64_t losses = tuner_losses(run->tuner);
  while (queued < n && rc == 0 && run->status == KT_OK) {
    rc = enqueue(run, &first[queued++], err);
    if (queued == 1 && rc == 0 && run->status == KT_OK && hooks->first)
      rc = hook(run, hooks->first, hooks->ud, err);
    if (queued == 1 && rc == 0 && run->status == KT_OK) rc = run_idle_work(run, err);
  }
  if (queued == n && rc == 0 && run->status == KT_OK && hooks->last)
    rc = hook(run, hooks->last, hooks->ud, err);
  if (rc >= 0) rc = collect(run, first, queued, ns, losses, err);
  tuner_set_deadline(run->tuner, 0);
  for (size_t i = 0; i < queued && rc == 0; i++) run->kernel_ns += ns[i];
  if (rc == 0 && run->fault == KT_FAULT_STICKY) rc = run_reopen(run, err);
  free(first);
  return rc < 0 ? -1 : 0;
}
