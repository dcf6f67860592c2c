/*
** run.c: preparing and executing one configuration, and what a launcher
** does during an execution.
*/
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_int.h"
#include "codegen.h"
#include "launch_limits.h"
#include "tuner_int.h"

int run_config_fails(kt_run *run, kt_status status, const char *why) {
  run->status = status;
  free(run->error);
  run->error = strdup(why ? why : kt_status_name(status));
  return 0;
}

/* ---- preparing ---- */

static int set_args(kt_run_kernel *rk, kt_arg *const *args, size_t n, kt_error *err) {
  if (kt_grow(&rk->args, &rk->capargs, n, sizeof *rk->args, err)) return -1;
  for (size_t i = 0; i < n; i++) kt_arg_retain(args[i]);
  for (size_t i = 0; i < rk->nargs; i++) kt_arg_release(rk->args[i]);
  if (n) memcpy(rk->args, args, n * sizeof *args); /* args may be NULL when n is 0 */
  rk->nargs = n;
  return 0;
}

static kt_run_value *find_value(kt_run_value *list, size_t n, const kt_arg *arg) {
  for (size_t i = 0; i < n; i++)
    if (list[i].arg == arg) return &list[i];
  return NULL;
}

/* The local-memory size of arg under the configuration, worked out once.
** Returns 1 when the configuration cannot run (status set), -1 if fatal. */
static int local_size(kt_run *run, const kt_arg *arg, size_t *bytes, kt_error *err) {
  kt_run_value *v = find_value(run->locals, run->nlocals, arg);
  if (v) {
    *bytes = v->size;
    return 0;
  }
  int rc = kt_arg_local_bytes(arg, &run->cfg, bytes, err);
  if (rc < 0) return -1;
  if (rc > 0) return run_config_fails(run, KT_LAUNCH_FAILED, err->msg), 1;
  if (kt_grow(&run->locals, &run->caplocals, run->nlocals + 1, sizeof *run->locals, err))
    return -1;
  run->locals[run->nlocals++] = (kt_run_value){arg, NULL, *bytes};
  return 0;
}

static int prepare_locals(kt_run *run, size_t ki, kt_error *err) {
  const kt_kernel *k = run->task->kernels[ki];
  for (size_t i = 0; i < k->nargs; i++) {
    size_t bytes;
    if (k->args[i]->kind != KT_ARG_LOCAL) continue;
    int rc = local_size(run, k->args[i], &bytes, err);
    if (rc) return kt_fail_prefix(err, "kernel %s, argument %zu: ", k->name, i + 1), rc;
  }
  return 0;
}

static int check_group(kt_run *run, size_t ki, const kt_sizes *s) {
  if (!s->local[0]) return 0;
  size_t threads = s->local[0] * s->local[1] * s->local[2];
  int64_t most = run->kernels[ki].usage.max_threads;
  if (most > 0 && threads > (size_t)most) {
    char why[256];
    snprintf(why, sizeof why,
             "kernel %s: a work-group of %zu work-items exceeds the kernel's limit of %lld "
             "on this device", run->task->kernels[ki]->name, threads, (long long)most);
    run_config_fails(run, KT_TOO_MANY_THREADS, why);
    return 1;
  }
  return 0;
}

/* More local (shared) memory than the device has crashes some drivers
** (PoCL aborts) rather than failing the launch: the compiled kernel's own
** and its local-memory arguments are weighed before. */
static int check_local_memory(kt_run *run, size_t ki) {
  const kt_kernel *k = run->task->kernels[ki];
  const kt_device_info *dev = &run->tuner->device;
  int64_t optin = kt_device_int(dev, "shared_per_block_optin", 0); /* CUDA: see prune.c */
  int64_t most = optin > 0 ? optin : kt_device_int(dev, "local_memory", 0);
  int64_t own = run->kernels[ki].usage.shared_bytes;
  uint64_t total = own > 0 ? (uint64_t)own : 0;
  for (size_t i = 0; i < k->nargs; i++) {
    const kt_run_value *v = k->args[i]->kind == KT_ARG_LOCAL
                                ? find_value(run->locals, run->nlocals, k->args[i])
                                : NULL;
    if (v) total += v->size;
  }
  if (most <= 0 || total <= (uint64_t)most) return 0;
  char why[256];
  snprintf(why, sizeof why,
           "kernel %s: a work-group needs %llu bytes of local memory, more than the %lld the "
           "device has", k->name, (unsigned long long)total, (long long)most);
  run_config_fails(run, KT_TOO_MUCH_LOCAL_MEMORY, why);
  return 1;
}

/* A composition's log says which kernel each part is from. */
static void note_build_log(kt_run *run, const char *kernel, const char *log) {
  char head[160];
  snprintf(head, sizeof head, "%skernel %s:\n", run->build_log ? "\n" : "", kernel);
  if (run->task->nkernels > 1) kt_log_append(&run->build_log, head);
  kt_log_append(&run->build_log, log);
}

static int prepare_kernel(kt_run *run, size_t ki, kt_error *err) {
  kt_tuner *t = run->tuner;
  const kt_kernel *k = run->task->kernels[ki];
  kt_run_kernel *rk = &run->kernels[ki];
  int rc = kt_task_sizes(run->task, ki, &run->cfg, &rk->sizes, err);
  if (rc) return rc < 0 ? -1 : (run_config_fails(run, KT_LAUNCH_FAILED, err->msg), 1);
  char refused[256];
  kt_status st = kt_launch_limits(&t->device, k->name, &rk->sizes, refused, sizeof refused);
  if (st != KT_OK) return run_config_fails(run, st, refused), 1;
  char *source, *why;
  int64_t t0 = kt_now_ns(); /* a generator's time is build time */
  rc = kt_final_source(run->task, k, &run->cfg, &source, &why, err);
  if (rc) {
    run->build_ns += (double)(kt_now_ns() - t0);
    if (rc > 0) run_config_fails(run, KT_GENERATOR_FAILED, why);
    free(why);
    return rc;
  }
  const char *log = NULL;
  double compile_ns = 0;
  rc = kt_build_get(t->cache, source, k->build_options, k->name, &rk->bk, &log, &compile_ns, err);
  run->build_ns += (double)(kt_now_ns() - t0);
  run->compile_ns += compile_ns;
  free(source);
  if (rc < 0) return -1;
  if (rc > 0) {
    run->infrastructure = rc == 2;
    return run_config_fails(run, KT_COMPILE_FAILED, log), 1;
  }
  if (log) note_build_log(run, k->name, log);
  rk->usage = t->be->kernel_usage(t->ctx, rk->bk);
  if (check_group(run, ki, &rk->sizes)) return 1;
  rc = prepare_locals(run, ki, err);
  return rc ? rc : check_local_memory(run, ki);
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

/* ---- what an execution changed, and undoing it ---- */

static void clear_values(kt_run *run) {
  for (size_t i = 0; i < run->nvalues; i++) free(run->values[i].bytes);
  run->nvalues = 0;
}

static void clear_buffers(kt_run *run) {
  for (size_t i = 0; i < run->nbuffers; i++)
    run->tuner->be->buffer_free(run->tuner->ctx, run->buffers[i].buf);
  run->nbuffers = 0;
}

void run_free_events(kt_run *run) {
  for (size_t i = 0; i < run->nevents; i++)
    run->tuner->be->event_free(run->tuner->ctx, run->events[i]);
  run->nevents = 0;
}

/* Back to the state of the configuration: the kernels' own argument
** lists, no values or buffers of the launcher's, pristine contents. */
int run_reset(kt_run *run, kt_error *err) {
  run->tuner->executions++; /* a check queued before does not see this one */
  clear_values(run);
  clear_buffers(run);
  for (size_t ki = 0; ki < run->task->nkernels; ki++) {
    const kt_kernel *k = run->task->kernels[ki];
    if (set_args(&run->kernels[ki], k->args, k->nargs, err)) return -1;
  }
  tuner_restore_hosts(run->tuner);
  int restored = tuner_restore(run->tuner, err);
  if (restored <= 0 || !run->task->launcher) return restored < 0 ? -1 : 0;
  /* A launcher may work on other queues, which do not wait for queue 0. */
  kt_fault fault;
  return run->tuner->be->finish(run->tuner->ctx, 0, &fault, err);
}

void kt_run_release(kt_run *run) {
  if (run->kernels) {
    for (size_t ki = 0; ki < run->task->nkernels; ki++) {
      kt_run_kernel *rk = &run->kernels[ki];
      for (size_t i = 0; i < rk->nargs; i++) kt_arg_release(rk->args[i]);
      free(rk->args);
    }
    clear_values(run);
    clear_buffers(run);
    run_free_events(run);
  }
  run_async_free(run);
  free(run->kernels);
  free(run->locals);
  free(run->values);
  free(run->buffers);
  free(run->scratch);
  free(run->events);
  free(run->shapes);
  free(run->build_log);
  free(run->error);
  memset(run, 0, sizeof *run);
}

/* The run's idle work once the first execution is queued (run.h). A
** device process lost meanwhile took the batch with it: the configuration
** in flight fails, as if it had been lost during its own runs. */
int run_idle_work(kt_run *run, kt_error *err) {
  kt_error ierr;
  int rc = run->idle ? run->idle(run, run->idle_ud, &ierr) : 0;
  return run_work_done(run, rc, &ierr, err);
}

int run_work_done(kt_run *run, int rc, const kt_error *why, kt_error *err) {
  if (rc < 0) *err = *why;
  if (rc > 0 && run->status == KT_OK) {
    run->fault = KT_FAULT_LOST;
    run_config_fails(run, KT_RUNTIME_FAILED, why->msg);
  }
  return rc < 0 ? -1 : 0;
}

/* ---- launching ---- */

static int launch_arg(kt_run *run, const kt_arg *a, int queue, kt_launch_arg *la,
                      kt_error *err) {
  if (a->kind == KT_ARG_VECTOR) {
    kt_bbuf *buf = a->access & KT_WRITE
                       ? run_changing(run, a->array, queue, err)
                       : run_buffer_of(run, a->array, a->access, a->placement, err);
    *la = (kt_launch_arg){KT_LARG_BUFFER, buf, NULL, 0, NULL};
    return buf ? 0 : -1;
  }
  if (a->kind == KT_ARG_SYMBOL) {
    size_t size;
    const void *bytes = kt_arg_symbol_bytes(a, &size);
    *la = (kt_launch_arg){KT_LARG_SYMBOL, NULL, bytes, size, a->symbol};
    return 0;
  }
  kt_run_value *v = find_value(run->values, run->nvalues, a);
  if (a->kind == KT_ARG_SCALAR) {
    *la = (kt_launch_arg){KT_LARG_SCALAR, NULL, v ? v->bytes : a->bytes, a->type->size, NULL};
    return 0;
  }
  size_t bytes = v ? v->size : 0;
  if (!v && local_size(run, a, &bytes, err)) return -1;
  *la = (kt_launch_arg){KT_LARG_LOCAL, NULL, NULL, bytes, NULL};
  return 0;
}

static int assemble(kt_run *run, kt_run_kernel *rk, int queue, kt_error *err) {
  if (kt_grow(&run->scratch, &run->capscratch, rk->nargs + 1, sizeof *run->scratch, err))
    return -1;
  for (size_t i = 0; i < rk->nargs; i++)
    if (launch_arg(run, rk->args[i], queue, &run->scratch[i], err))
      return kt_fail_prefix(err, "argument %zu: ", i + 1);
  return 0;
}

/* Counts a launch of kernel ki with sizes s among the execution's shapes. */
static int record_shape(kt_run *run, size_t ki, const kt_sizes *s, kt_error *err) {
  for (size_t i = 0; i < run->nshapes; i++) {
    kt_launch_shape *h = &run->shapes[i];
    if (h->kernel == ki && h->dims == s->dims && !memcmp(h->global, s->global, sizeof h->global) &&
        !memcmp(h->local, s->local, sizeof h->local)) {
      h->count++;
      return 0;
    }
  }
  if (kt_grow(&run->shapes, &run->capshapes, run->nshapes + 1, sizeof *run->shapes, err))
    return -1;
  kt_launch_shape *h = &run->shapes[run->nshapes++];
  *h = (kt_launch_shape){(uint32_t)ki, s->dims, {0}, {0}, 1};
  memcpy(h->global, s->global, sizeof h->global);
  memcpy(h->local, s->local, sizeof h->local);
  return 0;
}

int kt_run_launch(kt_run *run, size_t ki, const kt_launch_opts *o, kt_error *err) {
  kt_tuner *t = run->tuner;
  static const kt_launch_opts defaults = {NULL, 0};
  if (!o) o = &defaults;
  run->fault = KT_FAULT_FATAL;
  if (ki >= run->task->nkernels)
    return kt_fail(err, "kernel %zu is not part of this task", ki + 1);
  kt_run_kernel *rk = &run->kernels[ki];
  const kt_sizes *s = o->sizes ? o->sizes : &rk->sizes;
  const char *name = run->task->kernels[ki]->name;
  kt_sizes given;
  if (o->sizes) { /* a launcher's own: in work-items, and launchable, or the launch fails */
    given = *o->sizes;
    s = &given;
    char refused[256];
    if (kt_sizes_items(run->task->kernels[ki], &given, err)) {
      run->fault = KT_FAULT_LAUNCH;
      return -1;
    }
    if (kt_launch_limits(&t->device, name, &given, refused, sizeof refused) != KT_OK) {
      run->fault = KT_FAULT_LAUNCH;
      return kt_fail(err, "%s", refused);
    }
  }
  if (!rk->bk)
    return kt_fail(err, "kernel %s: not built for this run (%s)", name,
                   run->error ? run->error : "it was not prepared");
  if (kt_grow(&run->events, &run->capevents, run->nevents + 1, sizeof *run->events, err) ||
      assemble(run, rk, o->queue, err))
    return kt_fail_prefix(err, "kernel %s: ", name);
  if (o->sizes && check_group(run, ki, s)) {
    run->fault = KT_FAULT_LAUNCH;
    return kt_fail(err, "%s", run->error);
  }
  kt_bevent *ev = NULL;
  kt_fault fault = KT_FAULT_NONE;
  if (t->be->launch(t->ctx, o->queue, rk->bk, run->scratch, rk->nargs, s->dims, s->items,
                    s->local, &ev, &fault, err)) {
    run->fault = fault;
    return kt_fail_prefix(err, "kernel %s: ", name);
  }
  run->fault = KT_FAULT_NONE;
  if (!run->first_launch_ns) run->first_launch_ns = kt_now_ns();
  run->events[run->nevents++] = ev;
  run->launches++;
  return record_shape(run, ki, s, err);
}

int run_launch_all(kt_run *run, void *ud, kt_error *err) {
  (void)ud;
  for (size_t ki = 0; ki < run->task->nkernels; ki++)
    if (kt_run_launch(run, ki, NULL, err)) return -1;
  return 0;
}

/* ---- synchronising and transfers ---- */

int run_finish(kt_run *run, int queue, kt_error *err) {
  kt_tuner *t = run->tuner;
  kt_fault fault = KT_FAULT_NONE;
  int64_t t0 = kt_now_ns();
  int rc = t->be->finish(t->ctx, queue, &fault, err);
  run->wait_ns += (double)(kt_now_ns() - t0);
  if (rc) run->fault = fault;
  return rc;
}

int kt_run_sync(kt_run *run, int queue, kt_error *err) {
  int rc = run_finish(run, queue, err);
  run_async_synced(run, queue, rc == 0);
  return rc;
}

/* A transfer that fails during a launcher fails the configuration. (A wait
** before it that fails keeps its own fault: a timeout, a sticky fault.) */
static int transfer_fails(kt_run *run) {
  run->fault = KT_FAULT_RUNTIME;
  return -1;
}

int kt_run_read(kt_run *run, const kt_array *a, kt_array *dst, size_t count, int queue,
                kt_error *err) {
  if (run_read_count(run, a, dst, &count, err)) return -1;
  kt_bbuf *buf = run_buffer_of(run, a, KT_READ, KT_PLACE_DEVICE, err);
  if (!buf) return transfer_fails(run);
  if (run_finish(run, queue, err)) return -1;
  kt_tuner *t = run->tuner;
  dst->changes++;
  if (t->be->buffer_read(t->ctx, queue, buf, 0, count * a->type->size, dst->data, true, err))
    return transfer_fails(run);
  return 0;
}

int kt_run_write(kt_run *run, const kt_array *a, const kt_array *src, int queue,
                 kt_error *err) {
  size_t count;
  if (run_write_count(run, a, src, &count, err)) return -1;
  kt_bbuf *buf = run_changing(run, a, queue, err);
  kt_tuner *t = run->tuner;
  if (!buf) return transfer_fails(run);
  /* Waits first, so that a kernel past its time limit is a timeout here too. */
  if (run_finish(run, queue, err)) return -1;
  if (t->be->buffer_write(t->ctx, queue, buf, 0, count * a->type->size, src->data, true, err))
    return transfer_fails(run);
  return 0;
}

int kt_run_copy(kt_run *run, const kt_array *dst, const kt_array *src, size_t count,
                int queue, kt_error *err) {
  size_t have = kt_run_length(run, src), room = kt_run_length(run, dst);
  if (!count) count = have < room ? have : room;
  if (dst->type->size != src->type->size)
    return kt_fail(err, "copy: %s elements into a %s buffer", src->type->name, dst->type->name);
  if (run_check_count("copy", count, have, err) || run_check_count("copy", count, room, err))
    return -1;
  kt_bbuf *from = run_buffer_of(run, src, KT_READ, KT_PLACE_DEVICE, err);
  kt_bbuf *to = from ? run_changing(run, dst, queue, err) : NULL;
  kt_tuner *t = run->tuner;
  /* OpenCL refuses it (CL_MEM_COPY_OVERLAP), CUDA leaves it undefined. */
  if (to && to == from) {
    kt_fail(err, "copy: the source and the destination are one buffer (%zu %s elements), so the "
            "copy overlaps itself: copy into another array", count, src->type->name);
    return transfer_fails(run);
  }
  if (!to || t->be->buffer_copy(t->ctx, queue, to, 0, from, 0, count * src->type->size, err))
    return transfer_fails(run);
  return 0;
}

int kt_run_clear(kt_run *run, const kt_array *a, int queue, kt_error *err) {
  kt_bbuf *buf = run_changing(run, a, queue, err);
  kt_tuner *t = run->tuner;
  if (!buf || t->be->buffer_fill_zero(t->ctx, queue, buf, 0,
                                      kt_run_length(run, a) * a->type->size, err))
    return transfer_fails(run);
  return 0;
}

int kt_run_resize(kt_run *run, const kt_array *a, size_t length, kt_error *err) {
  if (length == 0) return kt_fail(err, "resize: a buffer needs at least one element");
  kt_tuner *t = run->tuner;
  size_t keep = kt_run_length(run, a);
  if (keep > length) keep = length;
  kt_bbuf *old = run_buffer_of(run, a, KT_READ_WRITE, KT_PLACE_DEVICE, err);
  if (!old) return -1;
  kt_bbuf *buf = t->be->buffer_new(t->ctx, length * a->type->size, KT_PLACE_DEVICE,
                                   KT_READ_WRITE, err);
  if (!buf) return -1;
  if (t->be->buffer_copy(t->ctx, 0, buf, 0, old, 0, keep * a->type->size, err)) {
    t->be->buffer_free(t->ctx, buf);
    return -1;
  }
  kt_run_buffer *rb = run_resized(run, a);
  if (rb) {
    /* The old buffer may still be read by queued commands. */
    kt_fault fault;
    t->be->finish(t->ctx, -1, &fault, NULL);
    t->be->buffer_free(t->ctx, rb->buf);
  } else {
    if (kt_grow(&run->buffers, &run->capbuffers, run->nbuffers + 1, sizeof *run->buffers, err)) {
      t->be->buffer_free(t->ctx, buf);
      return -1;
    }
    rb = &run->buffers[run->nbuffers++];
  }
  *rb = (kt_run_buffer){a, buf, length};
  return 0;
}

/* ---- arguments ---- */

static kt_run_value *value_slot(kt_run *run, const kt_arg *arg, kt_error *err) {
  kt_run_value *v = find_value(run->values, run->nvalues, arg);
  if (v) return v;
  if (kt_grow(&run->values, &run->capvalues, run->nvalues + 1, sizeof *run->values, err))
    return NULL;
  v = &run->values[run->nvalues++];
  *v = (kt_run_value){arg, NULL, 0};
  return v;
}

int kt_run_set_scalar(kt_run *run, const kt_arg *arg, const void *bytes, kt_error *err) {
  if (arg->kind != KT_ARG_SCALAR) return kt_fail(err, "only a scalar argument has a value");
  kt_run_value *v = value_slot(run, arg, err);
  if (!v) return -1;
  if (!v->bytes && !(v->bytes = kt_alloc(arg->type->size, err))) return -1;
  memcpy(v->bytes, bytes, arg->type->size);
  v->size = arg->type->size;
  return 0;
}

int kt_run_set_local(kt_run *run, const kt_arg *arg, size_t bytes, kt_error *err) {
  if (arg->kind != KT_ARG_LOCAL) return kt_fail(err, "only a local-memory argument has a size");
  if (bytes == 0) return kt_fail(err, "local memory needs a positive size");
  kt_run_value *v = value_slot(run, arg, err);
  if (!v) return -1;
  v->size = bytes;
  return 0;
}

static int position(const kt_run_kernel *rk, const kt_arg *a) {
  for (size_t i = 0; i < rk->nargs; i++)
    if (rk->args[i] == a) return (int)i;
  return -1;
}

int kt_run_swap(kt_run *run, size_t ki, const kt_arg *a, const kt_arg *b, kt_error *err) {
  if (ki >= run->task->nkernels) return kt_fail(err, "kernel %zu is not part of this task", ki + 1);
  kt_run_kernel *rk = &run->kernels[ki];
  int i = position(rk, a), j = position(rk, b);
  if (i < 0 || j < 0)
    return kt_fail(err, "swap: both arguments must be in the argument list of kernel %s",
                   run->task->kernels[ki]->name);
  kt_arg *tmp = rk->args[i];
  rk->args[i] = rk->args[j];
  rk->args[j] = tmp;
  /* Each array now sits where the kernel may write the other: both are
  ** restored after this execution, and neither counts as overwritten. */
  if (!((a->access | b->access) & KT_WRITE)) return 0;
  for (int k = 0; k < 2; k++) {
    const kt_arg *x = k ? b : a;
    if (x->kind == KT_ARG_VECTOR && !run_changing(run, x->array, 0, err)) return -1;
  }
  return 0;
}

int kt_run_set_args(kt_run *run, size_t ki, kt_arg *const *args, size_t n, kt_error *err) {
  if (ki >= run->task->nkernels) return kt_fail(err, "kernel %zu is not part of this task", ki + 1);
  return set_args(&run->kernels[ki], args, n, err);
}

/* ---- executing ---- */

/* The status a fault gives the configuration. */
kt_status run_fault_status(kt_fault fault) {
  switch (fault) {
    case KT_FAULT_LAUNCH: return KT_LAUNCH_FAILED;
    case KT_FAULT_TIMEOUT: return KT_TIMEOUT;
    default: return KT_RUNTIME_FAILED;
  }
}

/* The fault took the context with it: this configuration keeps its
** runtime_failed status, and the tuner carries on in a fresh context.
** The run's kernels went with the old one. */
int run_reopen(kt_run *run, kt_error *err) {
  for (size_t ki = 0; ki < run->task->nkernels; ki++) run->kernels[ki].bk = NULL;
  run_free_events(run);
  clear_buffers(run);
  if (tuner_reopen(run->tuner, err))
    return kt_fail_prefix(err, "after %s: ", run->error ? run->error : "a device fault");
  return 0;
}

/* Waits for the queues and adds up the device time of the launches. */
static int collect(kt_run *run, kt_error *err) {
  kt_tuner *t = run->tuner;
  kt_error ferr;
  if (run->status == KT_OK && run_idle_work(run, err)) return -1;
  int waited = run_finish(run, -1, &ferr);
  run->waited_ns = kt_now_ns();
  run_async_end(run, waited == 0);
  if (waited) {
    if (run->fault == KT_FAULT_FATAL) return kt_fail(err, "%s", ferr.msg);
    if (run->status == KT_OK) run_config_fails(run, run_fault_status(run->fault), ferr.msg);
  }
  for (size_t i = 0; i < run->nevents; i++) {
    double ns = run->status == KT_OK ? t->be->event_ns(t->ctx, run->events[i]) : 0;
    if (ns > 0) run->kernel_ns += ns;
  }
  t->device_ns += run->kernel_ns;
  run_free_events(run);
  return 0;
}

int kt_run_execute(kt_run *run, kt_error *err) {
  run->kernel_ns = run->launcher_ns = run->wait_ns = 0;
  run->launches = 0;
  run->nshapes = 0;
  run->fault = KT_FAULT_NONE;
  run->status = KT_OK;
  int64_t t0 = kt_now_ns();
  if (run_reset(run, err)) return -1;
  int64_t t1 = kt_now_ns();
  run->data_ns = (double)(t1 - t0);
  kt_launcher_fn launcher = run->task->launcher ? run->task->launcher : run_launch_all;
  kt_error lerr;
  if (run->time_limit_ns > 0) tuner_set_deadline(run->tuner, t1 + run->time_limit_ns);
  int rc = launcher(run, run->task->launcher_cb.ud, &lerr);
  /* Host time: the launcher's wall time less its waits for the device. */
  run->launcher_ns = (double)(kt_now_ns() - t1) - run->wait_ns;
  if (rc) {
    if (run->fault == KT_FAULT_FATAL && !run->task->launcher) return kt_fail(err, "%s", lerr.msg);
    run_config_fails(run, run_fault_status(run->fault), lerr.msg);
  }
  /* A launcher stopped at the limit in its host code (lk_run.c) left the
  ** device well: what it queued gets a limit of its own. */
  if (rc && run->fault == KT_FAULT_TIMEOUT && run->time_limit_ns > 0)
    tuner_set_deadline(run->tuner, kt_now_ns() + run->time_limit_ns);
  rc = collect(run, err);
  tuner_set_deadline(run->tuner, 0);
  if (rc == 0 && run->fault == KT_FAULT_STICKY) rc = run_reopen(run, err);
  return rc;
}
