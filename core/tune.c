/*
** tune.c: the tuning loop: propose, build, run, validate, time, record.
*/
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "indexmap.h"
#include "interrupt.h"
#include "journal.h"
#include "loop.h"
#include "prune.h"
#include "stats.h"
#include "tuner_int.h"
#include "validate.h"

typedef struct tuning {
  kt_tuner *t;
  kt_task *task;
  const kt_tune_opts *opts;
  kt_results *results;
  kt_array **scratch; /* per reference: where the output is read back */
  bool set_up;        /* references computed and arrays uploaded */
  kt_results *prior;  /* a resumed journal's results ... */
  kt_indexmap known;  /* ... by the index of their configuration in this space */
} tuning;

/* ---- running one configuration once ---- */

static int config_of(const kt_task *task, const uint32_t *vi, kt_config *cfg,
                     kt_error *err) {
  if (kt_space_generate(task->space, err)) return -1;
  uint64_t index = 0;
  if (kt_space_index(task->space, vi, &index))
    return kt_fail(err, "task %s: the configuration breaks a constraint of its space",
                   task->name);
  *cfg = (kt_config){task->space, index, vi};
  return 0;
}

/* Uploads the task's arrays as they are on the host and runs vi once. */
static int run_fresh(kt_tuner *t, kt_task *task, const uint32_t *vi, kt_run *run,
                     kt_error *err) {
  kt_config cfg;
  tuner_recover(t);
  if (config_of(task, vi, &cfg, err) || tuner_upload(t, task, NULL, err)) return -1;
  if (kt_run_prepare(run, t, task, &cfg, err)) {
    kt_run_release(run);
    return -1;
  }
  if (run->status == KT_OK && kt_run_execute(run, err)) {
    kt_run_release(run);
    return -1;
  }
  return 0;
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
  return 0;
}

static int read_back(kt_array *a, kt_access access, kt_placement place, void *ud) {
  (void)place;
  kt_tuner *t = ud;
  return access & KT_WRITE ? tuner_read(t, a, a, NULL) : 0;
}

/* Tunings and runs pin their tuner and task (kt_task_pin): the callbacks
** they call may try to use them again. */
static int tuner_busy_error(kt_error *err) {
  return kt_fail(err, "the tuner is in use: a tuning or a run is in progress on it");
}

static int run_once(kt_tuner *t, kt_task *task, const uint32_t *vi, kt_result *out,
                    kt_error *err) {
  kt_run run;
  if (tuner_ensure_open(t, err) || run_fresh(t, task, vi, &run, err)) return -1;
  out->index = run.cfg.index;
  int rc = copy_sizes(out, &run, err);
  out->status = run.status;
  out->launches = run.launches;
  out->over.build = run.build_ns;
  if (run.error) out->error = strdup(run.error);
  if (rc == 0 && run.status == KT_OK) {
    out->time_ns = run.kernel_ns;
    if (tuner_each_array(task, read_back, t, err))
      rc = kt_fail_prefix(err, "reading outputs back: ");
  }
  kt_run_release(&run);
  return rc;
}

int kt_tuner_run_once(kt_tuner *t, kt_task *task, const uint32_t *vi, kt_result *out,
                      kt_error *err) {
  if (t->busy) return tuner_busy_error(err);
  if (kt_task_busy(task)) return kt_task_busy_error(task, err);
  kt_task_pin(task);
  t->busy = true;
  int rc = run_once(t, task, vi, out, err);
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
  if (run_fresh(t, r->task, r->task_vi, &run, err)) return -1;
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

static int prepare_references(tuning *tu, kt_error *err) {
  kt_task *task = tu->task;
  if (!(tu->scratch = kt_calloc(task->nrefs, sizeof *tu->scratch, err))) return -1;
  for (size_t i = 0; i < task->nrefs; i++) {
    kt_reference *r = &task->refs_list[i];
    if (compute_reference(tu->t, r, err))
      return kt_fail_prefix(err, "reference for output %zu of task %s: ", i + 1, task->name);
    if (!(tu->scratch[i] = kt_array_clone(r->target, err))) return -1;
  }
  return 0;
}

/* ---- evaluating a configuration ---- */

static int validate(tuning *tu, kt_run *run, kt_result *res, kt_error *err) {
  for (size_t i = 0; i < tu->task->nrefs && run->status == KT_OK; i++) {
    kt_reference *r = &tu->task->refs_list[i];
    int64_t t0 = kt_now_ns();
    if (!tuner_devarray(tu->t, r->target))
      return kt_fail(err, "task %s: output %zu (%s[%zu]) is not an argument of its kernels, nor "
                     "did its launcher give it to one", tu->task->name, i + 1,
                     r->target->type->name, r->target->length);
    if (kt_run_read(run, r->target, tu->scratch[i], 0, 0, err)) return -1;
    int64_t t1 = kt_now_ns();
    char *why = NULL;
    int same = r->compare
                   ? r->compare(tu->scratch[i], r->expected, r->compare_cb.ud, &why, err)
                   : kt_compare_arrays(tu->scratch[i], r->expected, r->method, r->tolerance,
                                       r->first, &why, err);
    res->over.data += (double)(t1 - t0);
    res->over.validation += (double)(kt_now_ns() - t1);
    if (same < 0) {
      free(why);
      return kt_fail_prefix(err, "comparing output %zu: ", i + 1);
    }
    if (!same) {
      run->status = KT_INVALID_OUTPUT;
      free(run->error);
      run->error = why ? why : strdup("the output differs from the reference");
    } else {
      free(why);
    }
  }
  return 0;
}

static void account(kt_result *res, const kt_run *run) {
  res->over.data += run->data_ns;
  res->over.launcher += run->launcher_ns;
  res->over.wait += run->wait_ns;
}

static bool enough_samples(const kt_repeat *rp, const double *x, size_t n) {
  if (rp->fixed > 0) return n >= (size_t)rp->fixed;
  if (n >= (size_t)rp->max) return true;
  return n >= (size_t)rp->min && kt_rse(x, n) < rp->rse;
}

static int time_runs(tuning *tu, kt_run *run, kt_result *res, kt_error *err) {
  const kt_repeat *rp = &tu->opts->repeat;
  size_t cap = (size_t)(rp->fixed > 0 ? rp->fixed : rp->max);
  if (!(res->samples_ns = kt_calloc(cap, sizeof *res->samples_ns, err))) return -1;
  while (!enough_samples(rp, res->samples_ns, res->nsamples)) {
    if (kt_run_execute(run, err)) return -1;
    account(res, run);
    if (run->status != KT_OK) break;
    res->samples_ns[res->nsamples++] =
        run->kernel_ns + (tu->opts->include_host ? run->launcher_ns : 0);
  }
  if (run->status == KT_OK) res->time_ns = kt_median(res->samples_ns, res->nsamples);
  return 0;
}

static int measure(tuning *tu, kt_run *run, kt_result *res, kt_error *err) {
  if (kt_run_execute(run, err)) return -1; /* the untimed warm-up */
  account(res, run);
  res->launches = run->launches;
  if (run->status == KT_OK && run->launches == 0) {
    run->status = KT_RUNTIME_FAILED;
    run->error = strdup("the launcher launched no kernel");
  }
  if (run->status == KT_OK && validate(tu, run, res, err)) return -1;
  if (run->status == KT_OK) return time_runs(tu, run, res, err);
  return 0;
}

/* The time one execution may wait for the device. */
static int64_t time_limit(const tuning *tu) {
  const kt_tune_opts *o = tu->opts;
  if (!tuner_can_time_out(tu->t)) return 0;
  if (o->time_limit_ns > 0) return (int64_t)o->time_limit_ns;
  const kt_result *best = kt_results_best(tu->results);
  double factor = o->time_factor > 0 ? o->time_factor : KT_TIME_FACTOR_DEFAULT;
  double floor = o->time_floor_ns > 0 ? o->time_floor_ns : KT_TIME_FLOOR_DEFAULT;
  double limit = best ? factor * best->time_ns : floor;
  return (int64_t)(limit > floor ? limit : floor);
}

static int evaluate(tuning *tu, kt_result *res, kt_error *err) {
  int64_t t0 = kt_now_ns();
  kt_config cfg = {tu->task->space, res->index, res->vi};
  kt_run run;
  /* A lost context (a timeout or crash before, or a device process grown
  ** too large, replaced now) comes back with the data. */
  tuner_bound_device(tu->t);
  if (tuner_recover(tu->t) && tuner_upload(tu->t, tu->task, NULL, err)) return -1;
  uint64_t gen = tuner_generation(tu->t);
  int rc = kt_run_prepare(&run, tu->t, tu->task, &cfg, err);
  run.time_limit_ns = time_limit(tu);
  res->over.build = run.build_ns;
  res->compile_ns = run.compile_ns;
  if (rc == 0) rc = copy_sizes(res, &run, err);
  if (rc == 0 && run.status == KT_OK) rc = measure(tu, &run, res, err);
  if (rc && tuner_generation(tu->t) != gen) {
    /* The device process was lost during this configuration: it fails,
    ** the tuning goes on. */
    rc = 0;
    if (run.status == KT_OK) run.status = KT_RUNTIME_FAILED;
    free(run.error);
    run.error = strdup(err->msg);
  }
  res->status = run.status;
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

static int set_up(tuning *tu, kt_error *err) {
  int64_t t0 = kt_now_ns();
  if (tuner_keep_hosts(tu->t, tu->task, err) || prepare_references(tu, err) ||
      tuner_upload(tu->t, tu->task, NULL, err))
    return -1;
  tu->results->setup_ns = (double)(kt_now_ns() - t0);
  tu->set_up = true;
  return 0;
}

/* The references and uploads wait for the first evaluation, so that the
** first proposals compile meanwhile. */
static int device_evaluate(void *ud, kt_result *res, kt_error *err) {
  tuning *tu = ud;
  uint64_t at;
  if (kt_indexmap_get(&tu->known, res->index, &at))
    return kt_result_copy(res, &tu->prior->items[at], err) ? -1 : 1;
  if (!tu->set_up && set_up(tu, err)) return -1;
  return evaluate(tu, res, err);
}

/* ---- resuming ---- */

static bool same_parameters(const kt_results *a, const kt_space *s) {
  if (a->nparams != kt_space_nparams(s)) return false;
  for (size_t p = 0; p < a->nparams; p++) {
    const kt_param *q = kt_space_param(s, p);
    if (strcmp(a->params[p].name, q->name) != 0 || a->params[p].nvalues != q->nvalues) return false;
    for (size_t v = 0; v < q->nvalues; v++)
      if (!kt_value_equal(&a->params[p].values[v], &q->values[v])) return false;
  }
  return true;
}

/* Reads the journal's results, if it has any, and finds each one's index
** in this space. Returns 1 when there is no journal yet. */
static int read_prior(tuning *tu, const char *path, kt_error *err) {
  if (access(path, F_OK) != 0) return 1;
  if (!(tu->prior = kt_results_read(path, err))) return -1;
  if (!same_parameters(tu->prior, tu->task->space))
    return kt_fail(err, "cannot resume from %s: its parameters and values differ from task %s's",
                   path, tu->task->name);
  for (size_t i = 0; i < tu->prior->n; i++) {
    uint64_t index;
    if (kt_space_index(tu->task->space, tu->prior->items[i].vi, &index))
      return kt_fail(err, "cannot resume from %s: its result %zu breaks a constraint of task %s",
                     path, i + 1, tu->task->name);
    if (kt_indexmap_put(&tu->known, index, i, err)) return -1;
  }
  return 0;
}

/* Starts compiling the kernels of a configuration that comes soon. */
static int device_prefetch(void *ud, uint64_t index, const uint32_t *vi, kt_error *err) {
  tuning *tu = ud;
  kt_config cfg = {tu->task->space, index, vi};
  for (size_t ki = 0; ki < tu->task->nkernels; ki++) {
    const kt_kernel *k = tu->task->kernels[ki];
    char *source = kt_build_source(tu->task, k, &cfg, err);
    int rc = source ? kt_build_prefetch(tu->t->cache, source, k->options, k->name, err) : -1;
    free(source);
    if (rc) return -1;
  }
  return 0;
}

static void tuning_clear(tuning *tu) {
  tuner_drop_hosts(tu->t); /* the tuning leaves the arrays' host contents as it found them */
  if (tu->scratch)
    for (size_t i = 0; i < tu->task->nrefs; i++) kt_array_release(tu->scratch[i]);
  free(tu->scratch);
  kt_results_release(tu->prior);
  kt_indexmap_clear(&tu->known);
}

/* Says whether the constraints or the device's limits left nothing. */
static int no_configuration(kt_task *task, const kt_device_info *dev, kt_error *err) {
  char why[256] = "";
  size_t n = 0;
  for (int k = 1; k < KT_PRUNE_END; k++) {
    uint64_t removed = 0;
    if (kt_task_pruned(task, k, &removed, err)) return -1;
    if (removed && n < sizeof why)
      n += (size_t)snprintf(why + n, sizeof why - n, "%s%s %" PRIu64, n ? ", " : "",
                            kt_prune_name(k), removed);
  }
  if (!n) return kt_fail(err, "task %s: no configuration satisfies the constraints", task->name);
  return kt_fail(err, "task %s: the limits of %s removed every configuration (%s); k:prune{...} "
                 "switches a check off", task->name, dev->id, why);
}

static int tune(kt_tuner *t, kt_task *task, const kt_tune_opts *opts, kt_results **out,
                kt_error *err) {
  int64_t t0 = kt_now_ns();
  if (tuner_ensure_open(t, err) || kt_task_prune(task, &t->device, err) ||
      kt_space_generate(task->space, err))
    return -1;
  if (kt_space_count(task->space) == 0) return no_configuration(task, &t->device, err);
  tuning tu = {t, task, opts, NULL, NULL, false, NULL, {0}};
  kt_indexmap_init(&tu.known);
  if (!(tu.results = kt_results_for_task(task, kt_device_string(&t->device, "name"), err)))
    return -1;
  *out = tu.results;
  if (!tu.results->searcher) tu.results->searcher = kt_strdup(opts->searcher->ops->name, NULL);
  for (int k = 1; k < KT_PRUNE_END; k++)
    if (kt_task_pruned(task, k, &tu.results->pruned[k - 1], err)) {
      tuning_clear(&tu);
      return -1;
    }
  kt_journal *journal = NULL;
  int fresh = opts->journal && opts->resume ? read_prior(&tu, opts->journal, err) : 1;
  if (fresh < 0 ||
      (opts->journal && !(journal = kt_journal_open(opts->journal, tu.results, !fresh, err)))) {
    tuning_clear(&tu);
    return -1;
  }
  /* Enough proposals ahead to keep every compile thread busy, also while
  ** the next configuration's compile is one of the slow ones. */
  size_t lookahead = opts->lookahead ? opts->lookahead : 4 * (size_t)kt_tuner_build_threads(t) + 1;
  if (!opts->lookahead && lookahead < KT_LOOKAHEAD_MIN) lookahead = KT_LOOKAHEAD_MIN;
  kt_loop_opts lo = {opts->searcher, opts->stop, KT_CLOCK_WALL, lookahead, journal,
                     opts->progress, opts->progress_ud};
  kt_evaluator ev = {device_evaluate, device_prefetch, &tu};
  kt_interrupt_guard guard;
  kt_interrupt_arm(&guard);
  int rc = kt_search_loop(task->space, &lo, &ev, tu.results, err);
  kt_interrupt_disarm(&guard);
  kt_build_cache_cancel_pending(t->cache);
  if (kt_journal_close(journal, rc ? NULL : err)) rc = -1;
  tu.results->wall_ns = (double)(kt_now_ns() - t0);
  tuning_clear(&tu);
  return rc;
}

int kt_tune(kt_tuner *t, kt_task *task, const kt_tune_opts *opts, kt_results **out,
            kt_error *err) {
  *out = NULL;
  if (t->busy) return tuner_busy_error(err);
  if (kt_task_busy(task)) return kt_task_busy_error(task, err);
  kt_task_pin(task);
  t->busy = true;
  int rc = tune(t, task, opts, out, err);
  t->busy = false;
  kt_task_unpin(task);
  return rc;
}
