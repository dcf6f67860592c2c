/*
** measure.c: a configuration's runs once it is built (tune_int.h): the
** untimed warm-up, the outputs checked against the references, and the
** timed runs.
**
** Where the task lets it (no launcher of its own, kernel time as the
** objective), the timed runs are queued back to back and waited for once
** (run_batch.h), and the outputs of the warm-up are compared on a host
** worker (validate_async.h) while they run: the device is not left idle
** for host work (on a GPU: a CPU device would share its cores with the
** comparison, which then comes first). A configuration found invalid
** then loses the samples it got meanwhile, as if it had never been timed.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ahead.h"
#include "run_batch.h"
#include "stats.h"
#include "tune_int.h"
#include "validate.h"
#include "validate_async.h"
#include "validate_device.h"

/* ---- checking outputs ---- */

int tune_read_output(tuning *tu, kt_run *run, size_t i, kt_result *res, kt_error *err) {
  kt_reference *r = &tu->task->refs_list[i];
  int64_t t0 = kt_now_ns();
  if (!tuner_devarray(tu->t, r->target))
    return kt_fail(err, "task %s: output %zu (%s[%zu]) is not an argument of its kernels, nor "
                   "did its launcher give it to one", tu->task->name, i + 1,
                   r->target->type->name, r->target->length);
  if (kt_run_read(run, r->target, tu->scratch[i], 0, 0, err)) return -1;
  res->over.data += (double)(kt_now_ns() - t0);
  return 0;
}

/* Keeps a comparison's verdict on output i: -1 (err) when it could not
** compare, the configuration invalid when the output differs. */
static int verdict(kt_run *run, size_t i, int same, char *why, kt_error *err) {
  if (same < 0) {
    free(why);
    return kt_fail_prefix(err, "comparing output %zu: ", i + 1);
  }
  if (same) {
    free(why);
    return 0;
  }
  run->status = KT_INVALID_OUTPUT;
  free(run->error);
  run->error = why ? why : strdup("the output differs from the reference");
  return 0;
}

/* Why the comparison kernel cannot serve, once, in the results' log. */
static void note_broken(tuning *tu, char *why) {
  if (why) kt_log_append(&tu->results->device_log, why);
  free(why);
}

int tune_devcheck_prepare(tuning *tu, kt_error *err) {
  for (size_t i = 0; tu->devcheck && i < tu->task->nrefs; i++) {
    const kt_reference *r = &tu->task->refs_list[i];
    if (!kt_devcheck_suits(tu->t, r, tu->opts->validate_on)) continue;
    char *why = NULL;
    int rc = kt_devcheck_ready(tu->devcheck, r, &why, err);
    note_broken(tu, why);
    if (rc) return rc < 0 ? -1 : 0; /* broken: the host compares, as the log says */
  }
  return 0;
}

/* Whether output i is compared on the device (check_begin). */
static bool on_device(const tuning *tu, size_t i) {
  return tu->later && tu->devcheck &&
         kt_devcheck_suits(tu->t, &tu->task->refs_list[i], tu->opts->validate_on);
}

/* Compares every output: when `later`, those that suit it on the device
** and the others read back and compared on the checker (both queued or
** started, not waited for), else read back and compared here; with a
** comparator of the script's, read back and compared here. */
static int check_begin(tuning *tu, kt_run *run, kt_result *res, bool later, kt_error *err) {
  for (size_t i = 0; i < tu->task->nrefs && run->status == KT_OK; i++) {
    kt_reference *r = &tu->task->refs_list[i];
    if (later && on_device(tu, i)) {
      int64_t t0 = kt_now_ns();
      char *why = NULL;
      int rc = kt_devcheck_enqueue(tu->devcheck, i, r, &why, err);
      note_broken(tu, why);
      res->over.validation += (double)(kt_now_ns() - t0);
      if (rc < 0) return -1;
      if (rc == 0) continue; /* else the host compares it */
    }
    if (!(tu->landed && tu->landed[i]) && tune_read_output(tu, run, i, res, err)) return -1;
    int64_t t0 = kt_now_ns();
    char *why = NULL;
    int same;
    if (r->compare) {
      same = r->compare(tu->scratch[i], r->expected, r->compare_cb.ud, &why, err);
    } else if (later) {
      if (kt_checker_add(tu->checker, tu->scratch[i], r, err)) return -1;
      continue;
    } else {
      same = kt_compare_reference(tu->scratch[i], r, &why, err);
    }
    res->over.validation += (double)(kt_now_ns() - t0);
    if (verdict(run, i, same, why, err)) return -1;
  }
  if (later) {
    int64_t t0 = kt_now_ns();
    kt_checker_start(tu->checker);
    res->over.validation += (double)(kt_now_ns() - t0);
  }
  return 0;
}

/* The which-th output handed to the checker. */
static size_t checked_output(const tuning *tu, size_t which) {
  for (size_t i = 0; i < tu->task->nrefs; i++)
    if (!tu->task->refs_list[i].compare && !kt_devcheck_queued(tu->devcheck, i) && which-- == 0)
      return i;
  return 0;
}

/* Output i differed on the device: the configuration runs once more and
** the host compares that output, for a message that names the element. */
static char *describe_again(tuning *tu, kt_run *run, size_t i, size_t ndiff, size_t at,
                            kt_result *res, kt_error *err) {
  kt_reference *r = &tu->task->refs_list[i];
  char *why = NULL;
  if (kt_run_execute(run, err)) return NULL;
  if (run->status == KT_OK && tune_read_output(tu, run, i, res, err)) return NULL;
  int same = run->status != KT_OK ? 1
             : kt_compare_reference(tu->scratch[i], r, &why, err);
  if (same < 0) return NULL;
  if (same == 0 && why) return why;
  free(why);
  size_t n = 320;
  if ((why = malloc(n)))
    snprintf(why, n, "element %zu differed from the reference (%s difference > tolerance %.3g; "
             "%zu elements differ, compared on the device); a run again %s", at,
             kt_cmp_method_name(r->method), r->tolerance, ndiff,
             run->status == KT_OK ? "matched it" : "failed");
  run->status = KT_OK; /* the verdict is the first run's */
  return why;
}

/* Takes the verdicts of the comparisons queued on the device. */
static int device_verdicts(tuning *tu, kt_run *run, kt_result *res, kt_error *err) {
  for (size_t i = 0; i < tu->task->nrefs; i++) {
    if (!kt_devcheck_queued(tu->devcheck, i)) continue;
    size_t ndiff, at;
    int same = kt_devcheck_result(tu->devcheck, i, &ndiff, &at, err);
    if (same < 0) return kt_fail_prefix(err, "comparing output %zu on the device: ", i + 1);
    if (same || run->status != KT_OK) continue;
    char *why = describe_again(tu, run, i, ndiff, at, res, err);
    if (!why) return -1;
    if (verdict(run, i, 0, why, err)) return -1;
  }
  return 0;
}

/* Waits for the checker's verdicts (also after an error, so that it is
** idle for the next configuration). */
static int check_end(tuning *tu, kt_run *run, kt_result *res, kt_error *err) {
  int64_t t0 = kt_now_ns();
  size_t which;
  char *why;
  kt_error cerr;
  int same = kt_checker_wait(tu->checker, &which, &why, &cerr);
  res->over.validation += (double)(kt_now_ns() - t0);
  if (same < 0) *err = cerr;
  if (same == 0 && run->status != KT_OK) same = 1; /* it failed otherwise first */
  int rc = verdict(run, checked_output(tu, which), same, why, err);
  int64_t t1 = kt_now_ns();
  if (rc == 0 && run->status == KT_OK && tu->devcheck) rc = device_verdicts(tu, run, res, err);
  kt_devcheck_discard(tu->devcheck);
  res->over.validation += (double)(kt_now_ns() - t1);
  return rc;
}

int tune_validate(tuning *tu, kt_run *run, kt_result *res, kt_error *err) {
  if (tu->landed) memset(tu->landed, 0, tu->task->nrefs * sizeof *tu->landed);
  return check_begin(tu, run, res, false, err);
}

/* A CPU device runs kernels on the cores a host comparison would take:
** there the comparison comes before the timed runs, not beside them. */
static bool device_on_host(const kt_tuner *t) {
  const char *type = kt_device_string(&t->device, "type");
  return type && strcmp(type, "cpu") == 0;
}

/* ---- timed runs ---- */

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

/* How many runs to queue together: those the rule needs whatever they
** measure, then one at a time, as the rule decides after each; with
** early stop, no more than its first runs before it decides. */
static size_t next_batch(const tuning *tu, size_t n) {
  const kt_repeat *rp = &tu->opts->repeat;
  size_t want = rp->fixed > 0 ? (size_t)rp->fixed - n : n < (size_t)rp->min ? (size_t)rp->min - n : 1;
  size_t early = (size_t)tu->opts->early.runs;
  if (n < early && n + want > early) want = early - n;
  return want;
}

static void sample_range(const kt_result *r, double *lo, double *hi) {
  *lo = *hi = r->nsamples ? r->samples_ns[0] : 0;
  for (size_t i = 1; i < r->nsamples; i++) {
    if (r->samples_ns[i] < *lo) *lo = r->samples_ns[i];
    if (r->samples_ns[i] > *hi) *hi = r->samples_ns[i];
  }
}

/* Whether the configuration is clearly slower than the best so far, after
** exactly its first early.runs timed runs (kt_early_stop): beyond what
** the best's own noise and the device's timer could make of it. */
static bool clearly_slower(const tuning *tu, const kt_result *res) {
  const kt_early_stop *e = &tu->opts->early;
  if (e->runs <= 0 || res->nsamples != (size_t)e->runs) return false;
  const kt_result *best = kt_results_best(tu->results);
  if (!best || best == res || !(best->time_ns > 0)) return false;
  double lo, hi, best_lo, best_hi;
  sample_range(res, &lo, &hi);
  sample_range(best, &best_lo, &best_hi);
  double ratio = fmax(e->factor, 1 + e->noise * (best_hi - best_lo) / best->time_ns);
  double resolution = (double)kt_device_int(&tu->t->device, "timer_resolution_ns", 1000);
  return lo > ratio * best->time_ns + 2 * resolution && hi - lo <= e->spread * lo;
}

static int time_one(tuning *tu, kt_run *run, kt_result *res, kt_error *err) {
  if (kt_run_execute(run, err)) return -1;
  account(res, run);
  if (run->status == KT_OK)
    res->samples_ns[res->nsamples++] =
        run->kernel_ns + (tu->opts->include_host ? run->launcher_ns : 0);
  return 0;
}

static size_t most_samples(const kt_repeat *rp) {
  return (size_t)(rp->fixed > 0 ? rp->fixed : rp->max);
}

/* What a batch's hooks work for. */
typedef struct hook_ud {
  tuning *tu;
  kt_result *res;
} hook_ud;

/* Behind the last timed run, the inputs' check that the guard will want
** after this configuration (guard.c): its comparisons and the read of
** their verdict go with the runs, and take no round trip of their own
** (verify_device.c). */
static int queue_input_check(kt_run *run, void *ud, kt_error *err) {
  hook_ud *f = ud;
  (void)run;
  return f->tu->check_after ? tuner_unchanged_queue(f->tu->t, err) : 0;
}

/* The hook after a batch's last run, when no timed run can follow it, or
** when it brings the runs to the rule's least number, where a rule of the
** error usually stops (on a GPU): a check queued there is lost when more
** runs follow, and the guard's check is then made apart. */
static kt_batch_hook last_hook(const tuning *tu, size_t nsamples, size_t n) {
  const kt_repeat *rp = &tu->opts->repeat;
  bool least = rp->fixed <= 0 && nsamples + n == (size_t)rp->min;
  return least || nsamples + n >= most_samples(rp) ? queue_input_check : NULL;
}

static int time_batch(tuning *tu, kt_run *run, kt_result *res, size_t n, kt_error *err) {
  hook_ud f = {tu, res};
  kt_batch_hooks hooks = {NULL, last_hook(tu, res->nsamples, n), &f};
  if (kt_run_execute_hooked(run, n, res->samples_ns + res->nsamples, &hooks, err)) return -1;
  account(res, run);
  if (run->status == KT_OK) res->nsamples += n;
  return 0;
}

/* Once the warm-up's outputs are compared or on their way (queued behind
** it), the timed runs need no fresh copy of an array that kernels only
** write: restoring it before each run would be device time the tuning
** spends on itself (a 64 MiB output, 40 us a run on an H200). A launcher
** may write part of such an array from the host and count on the rest
** (kernels.md: everything it changes is undone), so its runs restore as
** before. Anything that runs a configuration to look at its outputs again
** (a second run, describe_again) comes after keep_timed(.., false). */
static void keep_timed(tuning *tu, const kt_run *run, bool on) {
  tu->t->keep_outputs = on && kt_run_batchable(run);
}

/* ---- a busy machine ---- */

/* A CPU device's threads share the host's processors with the machine's
** other jobs: the time they wait for one (run_delay.h) since the
** configuration's runs began is counted (waited_ns), from one look at the
** start of its runs and one at their end. */
static void runs_begin(tuning *tu) {
  /* a device process started again decides its threads again: the results
  ** (and a journal's next line) say those that ran this configuration */
  tu->results->device_threads = tuner_device_threads(tu->t);
  tu->host_pid = device_on_host(tu->t) ? tuner_device_pid(tu->t) : 0;
  if (!tu->host_pid) return;
  kt_run_delays_read(tu->host_pid, &tu->delays);
  tu->runs_t0 = kt_now_ns();
}

static void runs_waited(tuning *tu, kt_result *res) {
  if (tu->host_pid) res->waited_ns = (double)kt_run_delays_since(tu->host_pid, &tu->delays);
}

/* Whether the adaptive rule stops at KT_CROWDED_RUNS: the device's threads
** waited for a processor more than KT_CROWDED_WAIT of the time since the
** configuration's runs began. Runs the rule adds then measure the other
** jobs as much as the kernel: the error of their mean falls slowly, at a
** run's whole cost each, and the median the result keeps moves little (the
** samples keep their spread, which results:print and the report show). A
** number of runs asked for (repeats = N) is kept whatever the machine. */
static bool crowded(tuning *tu, kt_result *res) {
  const kt_repeat *rp = &tu->opts->repeat;
  size_t least = (size_t)(rp->min > KT_CROWDED_RUNS ? rp->min : KT_CROWDED_RUNS);
  if (!tu->host_pid || rp->fixed > 0 || res->nsamples < least) return false;
  runs_waited(tu, res);
  return res->waited_ns > KT_CROWDED_WAIT * (double)(kt_now_ns() - tu->runs_t0);
}

static int time_runs(tuning *tu, kt_run *run, kt_result *res, bool batched, kt_error *err) {
  const kt_repeat *rp = &tu->opts->repeat;
  if (!res->samples_ns &&
      !(res->samples_ns = kt_calloc(most_samples(rp), sizeof *res->samples_ns, err)))
    return -1;
  keep_timed(tu, run, true);
  while (run->status == KT_OK && !enough_samples(rp, res->samples_ns, res->nsamples)) {
    if (clearly_slower(tu, res)) {
      res->cut_short = true;
      break;
    }
    if (crowded(tu, res)) {
      res->crowded = true;
      break;
    }
    int rc = batched ? time_batch(tu, run, res, next_batch(tu, res->nsamples), err)
                     : time_one(tu, run, res, err);
    if (rc) {
      keep_timed(tu, run, false);
      return -1;
    }
  }
  keep_timed(tu, run, false);
  runs_waited(tu, res);
  if (run->status == KT_OK) res->time_ns = kt_median(res->samples_ns, res->nsamples);
  return 0;
}

/* A configuration that did not come out ok keeps no samples. */
static void lose_samples(kt_result *res) {
  res->nsamples = 0;
  res->cut_short = res->crowded = false;
}

/* The outputs compared on the host are read behind the warm-up, without
** waiting (into the device process's page-locked staging area, when
** isolated): they are there when the warm-up has been waited for, with
** no wait nor round trip of their own. A read that cannot be queued is
** made after the wait as before; a lost device process fails the
** configuration in flight. */
static int land_outputs(tuning *tu, kt_run *run, kt_error *err) {
  uint64_t losses = tuner_losses(run->tuner);
  int64_t t0 = kt_now_ns();
  for (size_t i = 0; i < tu->task->nrefs; i++) {
    if (on_device(tu, i)) continue;
    kt_error rerr;
    if (tuner_read_async(run->tuner, tu->task->refs_list[i].target, tu->scratch[i], &rerr) == 0)
      tu->landed[i] = true;
    else if (tuner_losses(run->tuner) != losses)
      return kt_fail(err, "%s", rerr.msg), 1;
  }
  tu->landing_ns += (double)(kt_now_ns() - t0);
  return 0;
}

/* While the untimed warm-up runs, the next configuration's kernels are
** made (ahead.h), and in the host comparison's case its outputs' reads
** queued: never during timed runs, so that not even a CPU device, whose
** cores the device process shares, is disturbed while timed. */
static int warmup_idle(kt_run *run, void *ud, kt_error *err) {
  tuning *tu = ud;
  int rc = tune_ahead_idle(run, tu, err);
  return rc ? rc : land_outputs(tu, run, err);
}

static void ahead_in_warmup(tuning *tu, kt_run *run, bool on, bool land) {
  run->idle = !on ? NULL : land ? warmup_idle : tune_ahead_idle;
  run->idle_ud = tu;
}

/* ---- the warm-up queued with the first timed runs ---- */

/* When no output of the warm-up need come back to the host (every one
** is compared on the device, or there is none to compare), it is queued
** with the comparisons and the first timed runs, and waited for with
** them. */
static bool fusable(tuning *tu) {
  for (size_t i = 0; i < tu->task->nrefs; i++) {
    const kt_reference *r = &tu->task->refs_list[i];
    if (!tu->devcheck || !kt_devcheck_suits(tu->t, r, tu->opts->validate_on)) return false;
    char *why = NULL;
    kt_error err;
    int rc = kt_devcheck_ready(tu->devcheck, r, &why, &err);
    note_broken(tu, why);
    if (rc) return false; /* a fatal error comes back when the host path meets it */
  }
  return true;
}

static int queue_checks(kt_run *run, void *ud, kt_error *err) {
  hook_ud *f = ud;
  int64_t t0 = kt_now_ns();
  for (size_t i = 0; i < f->tu->task->nrefs; i++) /* ready (fusable): never 1 here */
    if (kt_devcheck_enqueue(f->tu->devcheck, i, &f->tu->task->refs_list[i], NULL, err)) return -1;
  f->res->over.validation += (double)(kt_now_ns() - t0);
  keep_timed(f->tu, run, true); /* the comparisons are queued behind the warm-up */
  return 0;
}

static int measure_fused(tuning *tu, kt_run *run, kt_result *res, kt_error *err) {
  const kt_repeat *rp = &tu->opts->repeat;
  size_t first = next_batch(tu, 0);
  double *ns = kt_calloc(first + 1, sizeof *ns, err);
  if (!ns || !(res->samples_ns = kt_calloc(most_samples(rp), sizeof *res->samples_ns, err))) {
    free(ns);
    return -1;
  }
  hook_ud f = {tu, res};
  kt_batch_hooks hooks = {queue_checks, last_hook(tu, 0, first), &f};
  int rc = kt_run_execute_hooked(run, first + 1, ns, &hooks, err);
  keep_timed(tu, run, false);
  ahead_in_warmup(tu, run, false, false);
  if (rc == 0) {
    account(res, run);
    res->launches = run->launches;
    rc = tune_copy_launches(res, run, err);
  }
  if (rc == 0 && run->status == KT_OK) {
    memcpy(res->samples_ns, ns + 1, first * sizeof *ns); /* ns[0]: the warm-up */
    res->nsamples = first;
    int64_t t0 = kt_now_ns();
    rc = device_verdicts(tu, run, res, err);
    res->over.validation += (double)(kt_now_ns() - t0);
  }
  kt_devcheck_discard(tu->devcheck);
  free(ns);
  if (rc == 0 && run->status == KT_OK) rc = time_runs(tu, run, res, true, err);
  if (run->status != KT_OK) lose_samples(res);
  return rc;
}

/* Before the references are in, the outputs wait in scratch for their
** verdict (verdict_later.c), read behind the warm-up or now. */
static int hold_outputs(tuning *tu, kt_run *run, kt_result *res, kt_error *err) {
  for (size_t i = 0; i < tu->task->nrefs; i++)
    if (!(tu->landed && tu->landed[i]) && tune_read_output(tu, run, i, res, err)) return -1;
  return 0;
}

int tune_measure(tuning *tu, kt_run *run, kt_result *res, kt_error *err) {
  runs_begin(tu);
  bool batched = kt_run_batchable(run) && !tu->opts->include_host && !tu->opts->serial;
  tu->later = batched && tu->checker && !tu->refs_pending && !device_on_host(tu->t);
  tu->landing_ns = 0;
  if (tu->landed) memset(tu->landed, 0, tu->task->nrefs * sizeof *tu->landed);
  if (batched && fusable(tu)) {
    ahead_in_warmup(tu, run, true, false);
    int rc = measure_fused(tu, run, res, err);
    return rc ? rc : tune_energy(tu, run, res, err);
  }
  ahead_in_warmup(tu, run, batched, tu->landed != NULL);
  int rc = kt_run_execute(run, err); /* the untimed warm-up */
  ahead_in_warmup(tu, run, false, false);
  res->over.data += tu->landing_ns;
  if (rc) return -1;
  account(res, run);
  res->launches = run->launches;
  if (tune_copy_launches(res, run, err)) return -1;
  if (run->status == KT_OK && run->launches == 0) {
    run->status = KT_RUNTIME_FAILED;
    run->error = strdup("the launcher launched no kernel");
  }
  rc = run->status != KT_OK ? 0
       : tu->refs_pending   ? hold_outputs(tu, run, res, err)
                            : check_begin(tu, run, res, tu->later, err);
  if (rc == 0 && run->status == KT_OK) rc = time_runs(tu, run, res, batched, err);
  if (tu->later) {
    kt_error cerr;
    int crc = check_end(tu, run, res, rc ? &cerr : err);
    if (rc == 0) rc = crc;
  }
  if (run->status != KT_OK) lose_samples(res); /* an invalid output was timed meanwhile */
  return rc ? rc : tune_energy(tu, run, res, err);
}

/* ---- what the evaluation (tune.c) and the guard (guard.c) both use ---- */

/* The time one execution may wait for the device. */
int64_t tune_time_limit(const tuning *tu) {
  const kt_tune_opts *o = tu->opts;
  if (!tuner_can_time_out(tu->t)) return 0;
  if (o->time_limit_ns > 0) return kt_ns_clamp(o->time_limit_ns);
  const kt_result *best = kt_results_best(tu->results);
  double factor = o->time_factor > 0 ? o->time_factor : KT_TIME_FACTOR_DEFAULT;
  double floor = o->time_floor_ns > 0 ? o->time_floor_ns : KT_TIME_FLOOR_DEFAULT;
  double limit = best ? factor * best->time_ns : floor;
  return kt_ns_clamp(limit > floor ? limit : floor);
}

/* The sizes of the launches the last execution made. */
int tune_copy_launches(kt_result *res, const kt_run *run, kt_error *err) {
  free(res->launched);
  res->launched = NULL;
  res->nlaunched = 0;
  if (!run->nshapes) return 0;
  if (!(res->launched = kt_calloc(run->nshapes, sizeof *res->launched, err))) return -1;
  memcpy(res->launched, run->shapes, run->nshapes * sizeof *run->shapes);
  res->nlaunched = run->nshapes;
  return 0;
}
