/*
** run.c: preparing and executing one configuration.
*/
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner_int.h"

static int config_fails(kt_run *run, kt_status status, const char *why) {
  run->status = status;
  free(run->error);
  run->error = strdup(why ? why : kt_status_name(status));
  return 0;
}

/* Returns 1 when the configuration cannot run (status set), -1 if fatal. */
static int prepare_args(kt_run *run, size_t ki, kt_error *err) {
  const kt_kernel *k = run->task->kernels[ki];
  kt_run_kernel *rk = &run->kernels[ki];
  if (!(rk->args = kt_calloc(k->nargs, sizeof *rk->args, err))) return -1;
  rk->nargs = k->nargs;
  for (size_t i = 0; i < k->nargs; i++) {
    const kt_arg *a = k->args[i];
    kt_launch_arg *la = &rk->args[i];
    if (a->kind == KT_ARG_VECTOR) {
      *la = (kt_launch_arg){KT_LARG_BUFFER, tuner_devarray(run->tuner, a->array)->buf, NULL, 0,
                            NULL};
    } else if (a->kind == KT_ARG_SCALAR) {
      *la = (kt_launch_arg){KT_LARG_SCALAR, NULL, a->bytes, a->type->size, NULL};
    } else if (a->kind == KT_ARG_SYMBOL) {
      size_t size;
      const void *bytes = kt_arg_symbol_bytes(a, &size);
      *la = (kt_launch_arg){KT_LARG_SYMBOL, NULL, bytes, size, a->symbol};
    } else {
      size_t bytes = 0;
      int rc = kt_arg_local_bytes(a, &run->cfg, &bytes, err);
      if (rc) {
        kt_fail_prefix(err, "kernel %s, argument %zu: ", k->name, i + 1);
        if (rc < 0) return -1;
        config_fails(run, KT_LAUNCH_FAILED, err->msg);
        return 1;
      }
      *la = (kt_launch_arg){KT_LARG_LOCAL, NULL, NULL, bytes, NULL};
    }
  }
  return 0;
}

static int check_group(kt_run *run, size_t ki) {
  kt_run_kernel *rk = &run->kernels[ki];
  if (!rk->sizes.local[0]) return 0;
  size_t threads = rk->sizes.local[0] * rk->sizes.local[1] * rk->sizes.local[2];
  int64_t most = rk->usage.max_threads;
  if (most > 0 && threads > (size_t)most) {
    char why[256];
    snprintf(why, sizeof why,
             "kernel %s: a work-group of %zu work-items exceeds the kernel's limit of %lld "
             "on this device", run->task->kernels[ki]->name, threads, (long long)most);
    config_fails(run, KT_TOO_MANY_THREADS, why);
    return 1;
  }
  return 0;
}

static int prepare_kernel(kt_run *run, size_t ki, kt_error *err) {
  kt_tuner *t = run->tuner;
  const kt_kernel *k = run->task->kernels[ki];
  kt_run_kernel *rk = &run->kernels[ki];
  int rc = kt_task_sizes(run->task, ki, &run->cfg, &rk->sizes, err);
  if (rc) return rc < 0 ? -1 : (config_fails(run, KT_LAUNCH_FAILED, err->msg), 1);
  char *source = kt_build_source(run->task, k, &run->cfg, err);
  if (!source) return -1;
  const char *log = NULL;
  int64_t t0 = kt_now_ns();
  rc = kt_build_get(t->cache, source, k->options, k->name, &rk->bk, &log, err);
  run->build_ns += (double)(kt_now_ns() - t0);
  free(source);
  if (rc < 0) return -1;
  if (rc > 0) return config_fails(run, KT_COMPILE_FAILED, log), 1;
  rk->usage = t->be->kernel_usage(t->ctx, rk->bk);
  if (check_group(run, ki)) return 1;
  return prepare_args(run, ki, err);
}

int kt_run_prepare(kt_run *run, kt_tuner *t, kt_task *task, const kt_config *cfg,
                   kt_error *err) {
  memset(run, 0, sizeof *run);
  run->tuner = t;
  run->task = task;
  run->cfg = *cfg;
  run->status = KT_OK;
  if (!(run->kernels = kt_calloc(task->nkernels, sizeof *run->kernels, err))) return -1;
  for (size_t ki = 0; ki < task->nkernels; ki++) run->kernels[ki].usage = KT_KERNEL_USAGE_UNKNOWN;
  for (size_t ki = 0; ki < task->nkernels; ki++) {
    int rc = prepare_kernel(run, ki, err);
    if (rc) return rc < 0 ? -1 : 0;
  }
  return 0;
}

void kt_run_release(kt_run *run) {
  if (run->kernels)
    for (size_t ki = 0; ki < run->task->nkernels; ki++) free(run->kernels[ki].args);
  free(run->kernels);
  for (size_t i = 0; i < run->nevents; i++)
    run->tuner->be->event_free(run->tuner->ctx, run->events[i]);
  free(run->events);
  free(run->error);
  memset(run, 0, sizeof *run);
}

int kt_run_launch(kt_run *run, size_t ki, const kt_sizes *sizes, kt_error *err) {
  kt_tuner *t = run->tuner;
  if (ki >= run->task->nkernels)
    return kt_fail(err, "kernel %zu is not part of this task", ki + 1);
  kt_run_kernel *rk = &run->kernels[ki];
  if (!rk->bk) {
    run->fault = KT_FAULT_FATAL;
    return kt_fail(err, "kernel %s: not built for this run (%s)", run->task->kernels[ki]->name,
                   run->error ? run->error : "it was not prepared");
  }
  const kt_sizes *s = sizes ? sizes : &rk->sizes;
  if (kt_grow(&run->events, &run->capevents, run->nevents + 1, sizeof *run->events, err)) {
    run->fault = KT_FAULT_FATAL;
    return -1;
  }
  kt_bevent *ev = NULL;
  kt_fault fault = KT_FAULT_NONE;
  if (t->be->launch(t->ctx, 0, rk->bk, rk->args, rk->nargs, s->dims, s->items, s->local,
                    &ev, &fault, err)) {
    run->fault = fault;
    return kt_fail_prefix(err, "kernel %s: ", run->task->kernels[ki]->name);
  }
  run->events[run->nevents++] = ev;
  run->launches++;
  return 0;
}

static int launch_all(kt_run *run, void *ud, kt_error *err) {
  (void)ud;
  for (size_t ki = 0; ki < run->task->nkernels; ki++)
    if (kt_run_launch(run, ki, NULL, err)) return -1;
  return 0;
}

/* Waits for the queues and adds up the device time of the launches. */
static int collect(kt_run *run, kt_error *err) {
  kt_tuner *t = run->tuner;
  kt_fault fault = KT_FAULT_NONE;
  kt_error ferr;
  if (t->be->finish(t->ctx, -1, &fault, &ferr)) {
    if (fault == KT_FAULT_FATAL) return kt_fail(err, "%s", ferr.msg);
    if (run->status == KT_OK) config_fails(run, KT_RUNTIME_FAILED, ferr.msg);
    if (fault == KT_FAULT_STICKY) run->fault = KT_FAULT_STICKY;
  }
  for (size_t i = 0; i < run->nevents; i++) {
    double ns = run->status == KT_OK ? t->be->event_ns(t->ctx, run->events[i]) : 0;
    if (ns > 0) run->kernel_ns += ns;
    t->be->event_free(t->ctx, run->events[i]);
  }
  run->nevents = 0;
  return 0;
}

/* The fault took the context with it: this configuration keeps its
** runtime_failed status, and the tuner carries on in a fresh context.
** The run's kernels went with the old context. */
static int recover(kt_run *run, kt_error *err) {
  for (size_t ki = 0; ki < run->task->nkernels; ki++) run->kernels[ki].bk = NULL;
  if (tuner_recover(run->tuner, run->task, err))
    return kt_fail_prefix(err, "after %s: ", run->error ? run->error : "a device fault");
  return 0;
}

int kt_run_execute(kt_run *run, kt_error *err) {
  run->kernel_ns = run->launcher_ns = run->wait_ns = 0;
  run->launches = 0;
  run->fault = KT_FAULT_NONE;
  run->status = KT_OK;
  int64_t t0 = kt_now_ns();
  if (tuner_restore(run->tuner, run->task, err)) return -1;
  int64_t t1 = kt_now_ns();
  run->data_ns = (double)(t1 - t0);
  kt_launcher_fn launcher = run->task->launcher ? run->task->launcher : launch_all;
  kt_error lerr;
  int rc = launcher(run, run->task->launcher_cb.ud, &lerr);
  int64_t t2 = kt_now_ns();
  run->launcher_ns = (double)(t2 - t1);
  if (rc) {
    if (run->fault == KT_FAULT_FATAL) return kt_fail(err, "%s", lerr.msg);
    config_fails(run, run->fault == KT_FAULT_LAUNCH ? KT_LAUNCH_FAILED : KT_RUNTIME_FAILED,
                 lerr.msg);
  }
  rc = collect(run, err);
  run->wait_ns = (double)(kt_now_ns() - t2);
  if (rc == 0 && run->fault == KT_FAULT_STICKY) rc = recover(run, err);
  return rc;
}
