/*
** tune.c: the tuning loop: propose, build, run, validate, time, record.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ahead.h"
#include "interrupt.h"
#include "loop.h"
#include "tune_int.h"
#include "codegen.h"
#include "validate.h"
#include "validate_async.h"
#include "validate_device.h"

/* ---- running one configuration once ---- */

static int config_of(const kt_task *task, const uint32_t *vi, kt_config *cfg,
                     kt_error *err) {
  if (kt_space_generate(task->space, err) || kt_space_natural_generate(task->space, err))
    return -1;
  uint64_t index = 0;
  if (kt_space_index(task->space, vi, &index) || kt_space_natural_index(task->space, vi, &index))
    return kt_fail(err, "task %s: the configuration breaks a constraint of its space",
                   task->name);
  *cfg = (kt_config){task->space, index, vi};
  return 0;
}

/* Uploads the task's arrays as they are on the host and runs vi once. A
** device process lost meanwhile (a crash, the time limit) fails vi only. */
static int run_fresh(kt_tuner *t, kt_task *task, const uint32_t *vi, int64_t limit_ns,
                     kt_run *run, kt_error *err) {
  kt_config cfg;
  tuner_recover(t);
  if (config_of(task, vi, &cfg, err) || tuner_upload(t, task, NULL, err)) return -1;
  uint64_t losses = tuner_losses(t);
  int rc = kt_run_prepare(run, t, task, &cfg, err);
  run->time_limit_ns = limit_ns;
  if (rc == 0 && run->status == KT_OK) rc = kt_run_execute(run, err);
  if (rc && tuner_losses(t) != losses) {
    if (run->status == KT_OK) run->status = KT_RUNTIME_FAILED;
    free(run->error);
    run->error = strdup(err->msg);
    rc = 0;
  }
  if (rc) kt_run_release(run);
  return rc;
}

static int copy_sizes(kt_result *res, const kt_run *run, kt_error *err) {
  size_t n = run->task->nkernels;
  if (!(res->sizes = kt_calloc(n, sizeof *res->sizes, err)) ||
      !(res->usage = kt_calloc(n, sizeof *res->usage, err)))
    return -1;
  for (size_t k = 0; k < n; k++) {
    res->sizes[k] = run->kernels[k].sizes;
    res->usage[k] = run->kernels[k].usage;
  }
  res->nkernels = n;
  if (run->build_log && !(res->build_log = kt_strdup(run->build_log, err))) return -1;
  return 0;
}

static int read_back(kt_array *a, kt_access access, kt_placement place, void *ud) {
  (void)place;
  kt_tuner *t = ud;
  return access & KT_WRITE ? tuner_read(t, a, a, NULL) : 0;
}

/* Tunings and runs pin their tuner and task (kt_task_pin): the callbacks
** they call may try to use them again. */
int tune_busy_error(kt_error *err) {
  return kt_fail(err, "the tuner is in use: a tuning or a run is in progress on it");
}

int tune_run_once(kt_tuner *t, kt_task *task, const uint32_t *vi, int64_t limit_ns,
                  tuning *checked, kt_result *out, kt_error *err) {
  kt_run run;
  if (tuner_ensure_open(t, err) || run_fresh(t, task, vi, limit_ns, &run, err)) return -1;
  out->index = run.cfg.index;
  int rc = checked && run.status == KT_OK ? tune_validate(checked, &run, out, err) : 0;
  if (rc == 0) rc = copy_sizes(out, &run, err) || tune_copy_launches(out, &run, err) ? -1 : 0;
  out->status = run.status;
  out->launches = run.launches;
  out->over.build = run.build_ns;
  if (run.error) out->error = strdup(run.error);
  if (rc == 0 && run.status == KT_OK) out->time_ns = run.kernel_ns;
  kt_run_release(&run);
  return rc;
}

int tune_read_back(kt_tuner *t, kt_task *task, kt_error *err) {
  if (tuner_each_array(task, read_back, t, err)) return kt_fail_prefix(err, "reading outputs back: ");
  return 0;
}

int kt_tuner_run_once(kt_tuner *t, kt_task *task, const uint32_t *vi, int64_t limit_ns,
                      kt_result *out, kt_error *err) {
  if (t->busy) return tune_busy_error(err);
  if (kt_task_busy(task)) return kt_task_busy_error(task, err);
  kt_task_pin(task);
  t->busy = true;
  kt_codegen_forget(task);
  int rc = tune_run_once(t, task, vi, limit_ns, NULL, out, err);
  if (rc == 0 && out->status == KT_OK) rc = tune_read_back(t, task, err);
  t->busy = false;
  kt_task_unpin(task);
  return rc;
}

/* ---- references ---- */

static int check_shape(const kt_array *got, const kt_array *want, kt_error *err) {
  if (got->type->size == want->type->size && got->length == want->length) return 0;
  return kt_fail(err, "the reference is %s[%zu] but the output is %s[%zu]", got->type->name,
                 got->length, want->type->name, want->length);
}

static int reference_from_task(kt_tuner *t, kt_reference *r, kt_error *err) {
  kt_run run;
  if (run_fresh(t, r->task, r->task_vi, 0, &run, err)) return -1;
  int rc = 0;
  if (run.status != KT_OK)
    rc = kt_fail(err, "the reference kernel failed (%s): %s", kt_status_name(run.status),
                 run.error ? run.error : "");
  else if (!tuner_devarray(t, r->target))
    rc = kt_fail(err, "the reference task does not use the output array");
  else
    rc = tuner_read(t, r->target, r->expected, err);
  kt_run_release(&run);
  return rc;
}

static int compute_reference(kt_tuner *t, kt_reference *r, kt_error *err) {
  kt_array_release(r->expected);
  r->expected = NULL;
  if (r->kind == KT_REF_ARRAY) {
    if (check_shape(r->given, r->target, err)) return -1;
    r->expected = r->given;
    kt_array_retain(r->given);
    return 0;
  }
  if (!(r->expected = kt_array_clone(r->target, err))) return -1;
  if (r->kind == KT_REF_FN) return r->fn(r->expected, r->fn_cb.ud, err);
  return reference_from_task(t, r, err);
}

int tune_references(tuning *tu, kt_error *err) {
  kt_task *task = tu->task;
  if (!tu->scratch && !(tu->scratch = kt_calloc(task->nrefs, sizeof *tu->scratch, err))) return -1;
  size_t n = task->nrefs ? task->nrefs : 1;
  if (!tu->landed && !(tu->landed = kt_calloc(n, sizeof *tu->landed, err))) return -1;
  for (size_t i = 0; i < task->nrefs; i++) {
    kt_reference *r = &task->refs_list[i];
    if (!tu->refs_given && compute_reference(tu->t, r, err))
      return kt_fail_prefix(err, "reference for output %zu of task %s: ", i + 1, task->name);
    if (!tu->scratch[i] && !(tu->scratch[i] = kt_array_clone(r->target, err))) return -1;
  }
  return 0;
}

/* ---- evaluating a configuration ---- */

/* Where the time went from the last configuration's last wait to this
** one's first launch (kt_gaps): t0 the evaluation's start, built the end
** of its building, b0 and b1 the build cache's figures before and after.
** The steps after the last configuration's wait (tu->pending) count with
** the gap they were part of, once this one's first launch closes it. */
static void count_gap(tuning *tu, const kt_run *run, int64_t t0, int64_t built,
                      const kt_build_stats *b0, const kt_build_stats *b1) {
  kt_gaps *g = &tu->results->gap, *p = &tu->pending;
  double kernel = b1->kernel_ns - b0->kernel_ns, wait = b1->wait_ns - b0->wait_ns;
  if (run->first_launch_ns && tu->waited) {
    g->verdict += p->verdict;
    g->after += p->after;
    g->loop += p->loop;
    g->kernel += kernel;
    g->build_wait += wait;
    g->prepare += (double)(built - t0) - kernel - wait;
    g->launch += (double)(run->first_launch_ns - built);
    g->idle += (double)(run->first_launch_ns - tu->waited);
    g->n++;
  }
  if (run->first_launch_ns) *p = (kt_gaps){0};
  tu->measured = kt_now_ns();
  if (run->waited_ns) {
    p->verdict = (double)(tu->measured - run->waited_ns);
    tu->waited = run->waited_ns;
  }
}

int tune_evaluate(tuning *tu, kt_result *res, kt_error *err) {
  int64_t t0 = kt_now_ns();
  kt_config cfg = {tu->task->space, res->index, res->vi};
  kt_run run;
  /* A lost context (a timeout or crash before, or a device process grown
  ** too large, replaced by the guard) comes back with the data. */
  if (tuner_recover(tu->t) && tuner_upload(tu->t, tu->task, NULL, err)) return -1;
  uint64_t gen = tuner_generation(tu->t);
  kt_ahead_begin(tu->ahead, res->index);
  kt_build_stats b0 = kt_build_cache_stats(tu->t->cache);
  int rc = kt_run_prepare(&run, tu->t, tu->task, &cfg, err);
  int64_t built = kt_now_ns();
  kt_build_stats b1 = kt_build_cache_stats(tu->t->cache);
  run.time_limit_ns = tune_time_limit(tu);
  res->over.build = run.build_ns;
  res->compile_ns = run.compile_ns;
  tu->ahead_ns = 0;
  if (rc == 0) rc = copy_sizes(res, &run, err);
  if (rc == 0 && run.status == KT_OK) rc = tune_measure(tu, &run, res, err);
  if (rc == 0 && run.status == KT_OK) rc = tune_profile(tu, &run, res, err);
  res->over.build += tu->ahead_ns; /* the next configuration's kernels: building */
  count_gap(tu, &run, t0, built, &b0, &b1);
  if (rc && tuner_generation(tu->t) != gen) {
    /* The device process was lost during this configuration: it fails,
    ** the tuning goes on. */
    rc = 0;
    if (run.status == KT_OK) run.status = KT_RUNTIME_FAILED;
    free(run.error);
    run.error = strdup(err->msg);
  }
  if (rc == 0 && run.status == KT_OK && isnan(res->time_ns)) { /* ok means timed */
    run.status = KT_RUNTIME_FAILED;
    free(run.error);
    run.error = strdup("no timed run came back");
  }
  res->status = run.status;
  res->infrastructure = run.infrastructure;
  if (run.status != KT_OK) {
    res->time_ns = NAN;
    res->error = run.error;
    run.error = NULL;
  }
  kt_run_release(&run);
  kt_overheads *o = &res->over;
  o->total = (double)(kt_now_ns() - t0);
  o->framework = o->total - o->build - o->data - o->validation - o->launcher - o->wait;
  if (o->framework < 0) o->framework = 0;
  return rc;
}

/* ---- the tuning ---- */

static bool any_on_device(const tuning *tu) {
  for (size_t i = 0; i < tu->task->nrefs; i++)
    if (kt_devcheck_suits(tu->t, &tu->task->refs_list[i], tu->opts->validate_on)) return true;
  return false;
}

int tune_set_up_references(tuning *tu, kt_error *err) {
  int64_t t0 = kt_now_ns();
  tuner_recover(tu->t); /* an earlier tuning may have lost its device process last */
  int rc = tuner_keep_hosts(tu->t, tu->task, err);
  tuner_hosts_kept(tu->t);
  if (rc == 0) rc = tune_references(tu, err);
  tu->results->setup_ns += (double)(kt_now_ns() - t0);
  if (rc == 0) tu->refs_given = true;
  return rc;
}

int tune_upload_early(tuning *tu, kt_error *err) {
  int64_t t0 = kt_now_ns();
  tuner_recover(tu->t);
  int rc = tuner_keep_hosts(tu->t, tu->task, err) || tuner_upload(tu->t, tu->task, NULL, err)
               ? -1 : 0;
  tuner_hosts_kept(tu->t);
  tu->results->setup_ns += (double)(kt_now_ns() - t0);
  tu->uploaded = rc == 0;
  tu->uploaded_losses = tuner_losses(tu->t);
  return rc;
}

/* Copies uploaded early went with a device process lost since. */
static bool uploaded(const tuning *tu) {
  return tu->uploaded && tu->uploaded_losses == tuner_losses(tu->t);
}

/* The references, which may write the arrays: their host contents are
** kept first. */
static int references(tuning *tu, kt_error *err) {
  if (!tu->refs_given && tu->task->nrefs) tuner_hosts_kept(tu->t);
  return tune_references(tu, err);
}

int tune_set_up(tuning *tu, kt_error *err) {
  int64_t t0 = kt_now_ns();
  tuner_recover(tu->t); /* an earlier tuning may have lost its device process last */
  int rc = tuner_keep_hosts(tu->t, tu->task, err) || references(tu, err) ||
                   (!uploaded(tu) && tuner_upload(tu->t, tu->task, NULL, err))
               ? -1 : 0;
  tuner_hosts_kept(tu->t); /* the uploads overlapped their copies */
  if (rc) return -1;
  if (tu->task->nrefs && !tu->checker && !(tu->checker = kt_checker_new(err))) return -1;
  if (!tu->devcheck && any_on_device(tu) &&
      !(tu->devcheck = kt_devcheck_new(tu->t, tu->task->nrefs, err)))
    return -1;
  if (tune_devcheck_prepare(tu, err)) return -1;
  tu->results->setup_ns += (double)(kt_now_ns() - t0);
  tu->set_up = true;
  return 0;
}

/* A mistake that breaks every configuration (a syntax error, a wrong
** kernel name, a launch that no configuration survives) shows as the
** first configurations all failing alike: the tuning stops there, quoting
** it, rather than spend its budget on it. */
int tune_same_failure(tuning *tu, const kt_result *res, kt_error *err) {
  int limit = tu->opts->fail_fast ? tu->opts->fail_fast : KT_FAIL_FAST_DEFAULT;
  const kt_result *first = &tu->results->items[0];
  if (limit < 0 || tu->same_failures == SIZE_MAX) return 0;
  bool alike = (res->status == KT_COMPILE_FAILED || res->status == KT_LAUNCH_FAILED ||
                res->status == KT_RUNTIME_FAILED || res->status == KT_GENERATOR_FAILED) &&
               res->error &&
               first->status == res->status && first->error && !strcmp(first->error, res->error);
  tu->same_failures = alike ? tu->same_failures + 1 : SIZE_MAX;
  if (!alike || tu->same_failures < (size_t)limit) return 0;
  return kt_fail(err, "task %s: the first %d configurations all failed the same way (%s), so "
                 "every one may (fail_fast = false tunes on regardless): %s", tu->task->name,
                 limit, kt_status_name(res->status), res->error);
}

/* The references and uploads wait for the first evaluation, so that the
** first proposals compile meanwhile. */
static int device_evaluate(void *ud, kt_result *res, kt_error *err) {
  tuning *tu = ud;
  uint64_t at;
  if (kt_indexmap_get(&tu->known, res->index, &at)) {
    kt_ahead_begin(tu->ahead, res->index); /* nothing to make ahead for it */
    return kt_result_copy(res, &tu->prior->items[at], err) ? -1 : 1;
  }
  if (tu->evaluated) tu->pending.loop += (double)(kt_now_ns() - tu->evaluated);
  if (!tu->set_up && tune_set_up(tu, err)) return -1;
  if (tune_guarded_evaluate(tu, tune_evaluate, res, err)) return -1;
  tu->evaluated = kt_now_ns();
  if (tu->measured) tu->pending.after += (double)(tu->evaluated - tu->measured);
  return tune_same_failure(tu, res, err) ? 2 : 0; /* it ran: kept, then the tuning stops */
}

static int tune(kt_tuner *t, kt_task *task, const kt_tune_opts *opts, kt_results **out,
                kt_error *err) {
  tuning tu;
  if (tune_begin(&tu, t, task, opts, out, err)) return -1;
  tu.ev.evaluate = device_evaluate;
  /* what is compiled runs first: a slow compile holds nothing behind it */
  tu.ev.ready = tune_ready;
  tu.ev.overtake = tune_overtake;
  tu.ev.marked = tune_marked;
  tu.ev.await = tune_await;
  tu.ev.outlier = tune_outlier;
  kt_ahead_out_of_order(tu.ahead);
  kt_interrupt_guard guard;
  kt_interrupt_arm(&guard);
  int rc = kt_search_loop(task->space, &tu.lo, &tu.ev, tu.results, err);
  kt_interrupt_disarm(&guard);
  if (rc == 0 && tu.set_up) rc = tune_guard_finish(&tu, err);
  return tune_end(&tu, rc, err);
}

int kt_tune(kt_tuner *t, kt_task *task, const kt_tune_opts *opts, kt_results **out,
            kt_error *err) {
  *out = NULL;
  if (t->busy) return tune_busy_error(err);
  if (kt_task_busy(task)) return kt_task_busy_error(task, err);
  kt_task_pin(task);
  t->busy = true;
  int rc = tune(t, task, opts, out, err);
  t->busy = false;
  kt_task_unpin(task);
  return rc;
}
