/*
** fleet.c: one tuning over several devices (fleet.h). A worker thread per
** device evaluates what the loop submits to its slot with the device's
** own tuning state (tune_int.h), under the fleet's lock; the calling
** thread runs the loop and waits for any worker to finish.
**
** Compiles: each proposal's compiles start ahead on one device only (the
** one with the fewest proposals planned), and a device that comes free
** takes the first proposal planned on it (loop.h: pick), so that each
** configuration is compiled once. Only a device with nothing planned
** takes another's proposal, and compiles it again.
*/
#include "fleet.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ahead.h"
#include "interrupt.h"
#include "far.h"
#include "tune_int.h"
#include "validate_device.h"

#define PLANNED_NONE UINT64_MAX

typedef struct worker {
  kt_fleet *f;
  size_t i;
  pthread_t thread;
  bool started;
  pthread_cond_t go;
  tuning tu;          /* this device's side of the tuning */
  kt_result *job;     /* submitted to it, until the loop collects it */
  bool done, quit;
  bool lost;          /* its device is gone for good (its MPI rank died): its slot's
                      ** jobs go to the other workers */
  bool running;       /* its job is being evaluated (by it or, lost, by another) */
  int rc;
  kt_error err;
  uint64_t *ahead;    /* proposals whose compiles it starts before its next job */
  size_t nahead, capahead;
  size_t planned;     /* proposals started ahead here and not yet submitted */
  uint32_t *vi;
} worker;

struct kt_fleet {
  kt_tuner **t;
  size_t n;
  worker *w;
  pthread_mutex_t lock; /* held by whoever runs anything of the tuning */
  pthread_cond_t done;
  bool release;         /* waits let go of the lock (see fleet.h) */
  kt_fleet_thread_fn thread_fn;
  void *thread_ud;
  tuning main;          /* the results, the journal, the loop's options */
  int set_up;           /* the first device's set-up: 0 under way, 1 done, -1 failed */
  kt_error set_up_err;
  pthread_cond_t set_up_done;
  kt_indexmap planned;  /* proposal -> the worker that starts its compiles */
  size_t next;          /* where wait looks first, so that none is always last */
};

/* ---- the fleet ---- */

int kt_fleet_check(const kt_device_info *devs, size_t n, kt_error *err) {
  if (n == 0) return kt_fail(err, "no device given");
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < i; j++) {
      if (strcmp(devs[i].id, devs[j].id) == 0)
        return kt_fail(err, "device %s is given twice (devices %zu and %zu)", devs[i].id, j + 1,
                       i + 1);
      const char *a = kt_device_string(&devs[j], "name"), *b = kt_device_string(&devs[i], "name");
      if (devs[i].backend != devs[j].backend || strcmp(a, b) != 0)
        return kt_fail(err, "devices %s (%s) and %s (%s) are different models: one tuning "
                       "runs on devices of one model", devs[j].id, a, devs[i].id, b);
    }
  return 0;
}

kt_fleet *kt_fleet_new(const kt_device_info *devs, size_t n, int build_threads,
                       kt_fleet_open_fn open, void *ud, kt_error *err) {
  if (kt_fleet_check(devs, n, err)) return NULL;
  kt_fleet *f = kt_calloc(1, sizeof *f, err);
  if (!f) return NULL;
  pthread_mutex_init(&f->lock, NULL);
  pthread_cond_init(&f->done, NULL);
  pthread_cond_init(&f->set_up_done, NULL);
  if (!(f->t = kt_calloc(n, sizeof *f->t, err))) {
    kt_fleet_free(f);
    return NULL;
  }
  for (; f->n < n; f->n++) {
    kt_tuner *t = open ? open(&devs[f->n], build_threads, ud, err)
                       : kt_tuner_new(&devs[f->n], build_threads, true, err);
    if (!t) {
      kt_fail_prefix(err, "device %s: ", devs[f->n].id);
      kt_fleet_free(f);
      return NULL;
    }
    f->t[f->n] = t;
  }
  return f;
}

void kt_fleet_free(kt_fleet *f) {
  if (!f) return;
  for (size_t i = 0; i < f->n; i++) kt_tuner_free(f->t[i]);
  free(f->t);
  pthread_cond_destroy(&f->done);
  pthread_cond_destroy(&f->set_up_done);
  pthread_mutex_destroy(&f->lock);
  free(f);
}

size_t kt_fleet_size(const kt_fleet *f) { return f->n; }

void kt_fleet_set_thread_hook(kt_fleet *f, kt_fleet_thread_fn fn, void *ud) {
  f->thread_fn = fn;
  f->thread_ud = ud;
}
kt_tuner *kt_fleet_tuner(kt_fleet *f, size_t i) { return i < f->n ? f->t[i] : NULL; }

/* ---- a worker ---- */

static void on_wait(void *ud, bool entering) {
  kt_fleet *f = ud;
  if (!f->release) return;
  if (entering) pthread_mutex_unlock(&f->lock);
  else pthread_mutex_lock(&f->lock);
}

/* The compiles of the proposals planned here start now. */
static int start_ahead(worker *w, kt_error *err) {
  for (size_t k = 0; k < w->nahead; k++) {
    if (kt_space_natural_config(w->tu.task->space, w->ahead[k], w->vi, err) ||
        tune_prefetch(&w->tu, w->ahead[k], w->vi, err))
      return -1;
  }
  w->nahead = 0;
  return 0;
}

static bool device_gone(const worker *w);

static int await_references(kt_fleet *f, kt_error *err) {
  while (f->set_up == 0) pthread_cond_wait(&f->set_up_done, &f->lock);
  return f->set_up < 0 ? (*err = f->set_up_err, -1) : 0;
}

static bool any_comparator(const kt_task *task) {
  for (size_t i = 0; i < task->nrefs; i++)
    if (task->refs_list[i].compare) return true;
  return false;
}

/* Comparing touches only this device's outputs and the references, which
** nothing changes now: the others go on meanwhile, unless the script's
** comparator (Lua, on one thread at a time) compares. */
static int judge(kt_fleet *f, tuning *tu, kt_result *res, kt_error *err) {
  bool alone = f->release && !any_comparator(tu->task);
  if (alone) pthread_mutex_unlock(&f->lock);
  int rc = tune_judge_kept(tu, res, err);
  if (alone) pthread_mutex_lock(&f->lock);
  return rc;
}

/* The first configuration of a device other than the first runs before
** the references are in, while the first device computes them: its
** outputs are kept and judged once they are in (verdict_later.c), and
** then the rest of its set-up is made. Its result waits for them; a run
** again (the guard's) comes after them, as any. */
static int evaluate_early(tuning *tu, kt_result *res, kt_error *err) {
  if (!tu->refs_pending) return tune_evaluate(tu, res, err);
  worker *w = (worker *)(void *)((char *)tu - offsetof(worker, tu));
  int rc = tune_evaluate(tu, res, err);
  tu->refs_pending = false;
  if (rc || await_references(w->f, err) || tune_set_up(tu, err)) return -1;
  return res->status == KT_OK ? judge(w->f, tu, res, err) : 0;
}

/* Whether this device's first configuration runs before the references
** are in: its own scratch for the outputs made, and its arrays uploaded
** (neither needs them). */
static int start_early(worker *w, kt_error *err) {
  tuning *tu = &w->tu;
  if (w->i == 0 || tu->set_up || w->f->set_up != 0) return 0;
  if ((!tu->uploaded && (tuner_ensure_open(tu->t, err) || tune_upload_early(tu, err))) ||
      tune_references(tu, err))
    return -1;
  tu->refs_pending = true;
  return 1;
}

/* The device's own tuning evaluates into its own results (the guard
** keeps positions in them); the loop's record gets a copy. */
static int evaluate(worker *w, kt_result *res, kt_error *err) {
  tuning *tu = &w->tu;
  int early = start_early(w, err);
  if (early < 0 || (!early && await_references(w->f, err))) return -1;
  if (tuner_ensure_open(tu->t, err) || start_ahead(w, err)) return -1;
  if (!early && !tu->set_up && tune_set_up(tu, err)) return -1;
  kt_result *mine = kt_results_add(tu->results, res->index, res->vi, err);
  if (!mine || tune_guarded_evaluate(tu, evaluate_early, mine, err)) return -1;
  /* Its device went with its node (an MPI rank), whose loss, not the
  ** configuration, may be what failed it (a compile or a run cut off, a
  ** time limit passed while the node was silent): it runs again on
  ** another device (work). A verdict that came back whole stands. */
  if (mine->status != KT_OK && device_gone(w))
    return kt_fail(err, "%s", mine->error ? mine->error : "the device's node is gone");
  if (kt_result_copy(res, mine, err)) return -1;
  if (!(res->device = kt_strdup(kt_tuner_device(tu->t)->id, err))) return -1;
  return tune_same_failure(tu, mine, err) ? 2 : 0; /* it ran: kept, then the tuning stops */
}

/* ---- devices lost for good ---- */

/* A device of a node that died (an MPI rank: mpi.h) cannot come back. */
static bool device_gone(const worker *w) {
  const kt_device_info *d = kt_tuner_device(w->tu.t);
  return d->far && !d->far->alive(d->rank);
}

/* The proposals planned on a lost worker are no one's: whichever device
** comes free takes them in order (fleet_pick), and compiles them there. */
static int unplan(kt_fleet *f, uint64_t index, kt_error *err);

static void drop_plan(kt_fleet *f, worker *w) {
  kt_error ignored; /* every index is in the map already: nothing to allocate */
  for (size_t k = w->nahead; k-- > 0;)
    if (k < w->nahead) unplan(f, w->ahead[k], &ignored);
  w->nahead = 0;
  w->planned = 0;
}

static bool others_live(const kt_fleet *f, const worker *w) {
  for (size_t i = 0; i < f->n; i++)
    if (&f->w[i] != w && !f->w[i].lost) return true;
  return false;
}

static void wake_all(kt_fleet *f) {
  for (size_t i = 0; i < f->n; i++) pthread_cond_signal(&f->w[i].go);
}

/* Its own job first, else one of a lost worker's slot. */
static worker *next_job(worker *w) {
  if (w->lost) return NULL;
  if (w->job && !w->done && !w->running) return w;
  for (size_t i = 0; i < w->f->n; i++) {
    worker *o = &w->f->w[i];
    if (o->lost && o->job && !o->done && !o->running) return o;
  }
  return NULL;
}

/* The last device is gone too: the lost slots' jobs fail with its error. */
static void fail_orphans(kt_fleet *f, const kt_error *err) {
  for (size_t i = 0; i < f->n; i++) {
    worker *o = &f->w[i];
    if (o->lost && o->job && !o->done && !o->running) {
      o->rc = -1;
      o->err = *err;
      o->done = true;
    }
  }
}

/* The references run on the first device, on the loop's thread at its
** first wait: the first configurations' compiles have started by then, as
** with one device, where the set-up comes at the first configuration; and
** that thread alone uses the first device's tuner meanwhile (its worker
** waits for this, below, and the loop's prefetches go to that tuner only
** while its worker is idle). The other devices upload and run their
** first configuration meanwhile (evaluate_early), and wait for the
** references alone, not for the rest of the first one's set-up (its
** uploads, its comparison kernel), which its worker makes. */
static void set_up_first(worker *w) {
  kt_fleet *f = w->f;
  bool ok = tuner_ensure_open(w->tu.t, &f->set_up_err) == 0 &&
            tune_set_up_references(&w->tu, &f->set_up_err) == 0;
  f->set_up = ok ? 1 : -1;
  pthread_cond_broadcast(&f->set_up_done);
}

static void *work(void *ud) {
  worker *w = ud;
  kt_fleet *f = w->f;
  pthread_mutex_lock(&f->lock);
  if (f->thread_fn) f->thread_fn(f->thread_ud, w->i, true);
  for (;;) {
    worker *j;
    while (!(j = next_job(w)) && !w->quit) pthread_cond_wait(&w->go, &f->lock);
    if (w->quit) break;
    j->running = true;
    int rc = evaluate(w, j->job, &j->err);
    j->running = false;
    if (rc < 0 && device_gone(w)) {
      bool others = others_live(f, w);
      w->lost = true; /* its job, not evaluated, goes to another device */
      drop_plan(f, w);
      if (others) {
        wake_all(f);
        continue;
      }
      fail_orphans(f, &j->err);
    }
    j->rc = rc;
    j->done = true;
    pthread_cond_signal(&f->done);
  }
  if (f->thread_fn) f->thread_fn(f->thread_ud, w->i, false);
  pthread_mutex_unlock(&f->lock);
  return NULL;
}

/* ---- the evaluator the loop sees ---- */

static int fleet_prefetch(void *ud, uint64_t index, const uint32_t *vi, kt_error *err) {
  kt_fleet *f = ud;
  worker *w = NULL;
  for (size_t i = 0; i < f->n; i++)
    if (!f->w[i].lost && (!w || f->w[i].planned < w->planned)) w = &f->w[i];
  if (!w) return 0; /* no device left: the loop hears it from the next evaluation */
  w->planned++;
  if (kt_indexmap_put(&f->planned, index, w->i, err)) return -1;
  /* An idle worker's tuner is the calling thread's to use; a busy one
  ** starts the compiles itself before its next configuration. */
  if (!w->job && w->tu.t->cache) return tune_prefetch(&w->tu, index, vi, err);
  if (kt_grow(&w->ahead, &w->capahead, w->nahead + 1, sizeof *w->ahead, err)) return -1;
  w->ahead[w->nahead++] = index;
  return 0;
}

/* Each device takes, when free, the first proposal whose compiles it
** started; else the first of all (and compiles it). */
static size_t fleet_pick(void *ud, size_t slot, const uint64_t *pending, size_t n) {
  kt_fleet *f = ud;
  for (size_t k = 0; k < n; k++) {
    uint64_t at;
    if (kt_indexmap_get(&f->planned, pending[k], &at) && at == slot) return k;
  }
  return 0;
}

/* The proposal is submitted: it leaves the plan, and a worker that was to
** start its compiles (another, when the proposal was stolen) no longer does. */
static int unplan(kt_fleet *f, uint64_t index, kt_error *err) {
  uint64_t at;
  if (!kt_indexmap_get(&f->planned, index, &at) || at == PLANNED_NONE) return 0;
  worker *p = &f->w[at];
  p->planned--;
  for (size_t k = 0; k < p->nahead; k++)
    if (p->ahead[k] == index) {
      memmove(&p->ahead[k], &p->ahead[k + 1], (p->nahead - k - 1) * sizeof *p->ahead);
      p->nahead--;
      break;
    }
  return kt_indexmap_put(&f->planned, index, PLANNED_NONE, err);
}

/* A proposal taken back: no worker is to start its compiles, nor counts it. */
static void fleet_withdrawn(void *ud, uint64_t index) {
  kt_error ignored; /* the index is in the map already: nothing to allocate */
  unplan(ud, index, &ignored);
}

static int fleet_submit(void *ud, size_t slot, kt_result *res, kt_error *err) {
  kt_fleet *f = ud;
  tuning *m = &f->main;
  uint64_t at;
  if (kt_indexmap_get(&m->known, res->index, &at))
    return kt_result_copy(res, &m->prior->items[at], err) ? -1 : 1;
  if (unplan(f, res->index, err)) return -1;
  worker *w = &f->w[slot];
  w->job = res;
  w->done = false;
  if (w->lost) wake_all(f);
  else pthread_cond_signal(&w->go);
  return 0;
}

static int fleet_wait(void *ud, size_t *slot, kt_error *err) {
  kt_fleet *f = ud;
  if (f->set_up == 0) set_up_first(&f->w[0]);
  for (;;) {
    for (size_t k = 0; k < f->n; k++) {
      worker *w = &f->w[(f->next + k) % f->n];
      if (!w->job || !w->done) continue;
      f->next = (w->i + 1) % f->n;
      *slot = w->i;
      w->job = NULL;
      w->done = false;
      if (w->rc) *err = w->err;
      return w->rc;
    }
    pthread_cond_wait(&f->done, &f->lock);
  }
}

/* ---- the tuning ---- */

/* The task's references are computed once, from the arrays' host contents
** as the tuning found them, by the first device (set_up_first). Those
** contents are kept now, before anything runs, once: the first device's
** copy, which every other device shares (its uploads, and runs after a
** lost context, start from them; a copy a device would cost the tuning's
** start as much again for each). Each other device only uses the
** references, and starts compiling its comparison kernel. */
static int set_up(worker *w, kt_error *err) {
  if (w->i == 0) { /* made at once: the first device's thread uses them while others share them */
    int rc = tuner_keep_hosts(w->tu.t, w->tu.task, err);
    tuner_hosts_kept(w->tu.t);
    return rc;
  }
  w->tu.refs_given = true;
  kt_devcheck_prefetch(w->tu.t, w->tu.task, w->tu.opts->validate_on);
  return tuner_share_hosts(w->tu.t, w->f->t[0], err);
}

static int start_workers(kt_fleet *f, kt_task *task, const kt_tune_opts *opts, kt_error *err) {
  size_t np = kt_space_nparams(task->space);
  for (size_t i = 0; i < f->n; i++) {
    worker *w = &f->w[i];
    kt_tuner *t = f->t[i];
    *w = (worker){.f = f, .i = i};
    pthread_cond_init(&w->go, NULL);
    w->tu = (tuning){.t = t, .task = task, .opts = opts, .journal = f->main.journal,
                     .t0 = kt_now_ns(), .device0 = t->device_ns, .restores0 = t->restores,
                     .builds0 = kt_tuner_build_stats(t)};
    kt_indexmap_init(&w->tu.known);
    if (!(w->vi = kt_calloc(np + 1, sizeof *w->vi, err)) || !(w->tu.ahead = kt_ahead_new(err)) ||
        !(w->tu.results = kt_results_for_task(task, f->main.results->device, err)))
      return -1;
    if (set_up(w, err) || tuner_ensure_open(t, err) || tune_energy_check(&w->tu, err)) return -1;
    kt_tuner_set_wait(t, (kt_wait_hook){on_wait, f});
    if (pthread_create(&w->thread, NULL, work, w) != 0)
      return kt_fail(err, "cannot start the thread of device %s", t->device.id);
    w->started = true;
  }
  return 0;
}

static void stop_workers(kt_fleet *f) {
  for (size_t i = 0; i < f->n; i++) {
    f->w[i].quit = true;
    pthread_cond_signal(&f->w[i].go);
  }
  pthread_mutex_unlock(&f->lock);
  for (size_t i = 0; i < f->n; i++)
    if (f->w[i].started) pthread_join(f->w[i].thread, NULL);
  f->release = false;
  for (size_t i = 0; i < f->n; i++) kt_tuner_set_wait(f->t[i], (kt_wait_hook){NULL, NULL});
}

/* What each device's side found beside its results joins the tuning's. */
static void merge(kt_results *r, worker *w) {
  kt_results *d = w->tu.results;
  if (d->setup_ns > r->setup_ns) r->setup_ns = d->setup_ns; /* the devices set up at once */
  kt_gaps_add(&r->gap, &d->gap);
  r->input_checks += d->input_checks;
  r->input_checks_device += d->input_checks_device;
  r->inputs_changed += d->inputs_changed;
  r->input_check_requests += d->input_check_requests;
  r->input_check_round_trips += d->input_check_round_trips;
  r->input_checks_queued += d->input_checks_queued;
  kt_log_append(&r->inputs_log, d->inputs_log);
  if (d->device_log) {
    kt_log_append(&r->device_log, w->tu.t->device.id);
    kt_log_append(&r->device_log, ":\n");
    kt_log_append(&r->device_log, d->device_log);
  }
}

/* The inputs checked after each device's last configurations, and the
** devices' state freed: the first device's last, its kept host contents
** shared by the others until then (set_up). */
static int finish_workers(kt_fleet *f, int rc, kt_error *err) {
  for (size_t i = 0; i < f->n; i++) {
    worker *w = &f->w[i];
    if (!w->tu.results) continue;
    if (rc == 0 && w->tu.set_up && !w->lost && tune_guard_finish(&w->tu, err)) rc = -1;
    merge(f->main.results, w);
    if (i > 0) f->main.results->device_ns += w->tu.t->device_ns - w->tu.device0;
    if (i > 0) f->main.results->restores += w->tu.t->restores - w->tu.restores0;
    if (i > 0) tune_count_builds(&w->tu, f->main.results);
  }
  for (size_t i = f->n; i-- > 0;) {
    worker *w = &f->w[i];
    if (w->tu.results) {
      tune_clear(&w->tu);
      kt_results_release(w->tu.results);
    } else {
      kt_indexmap_clear(&w->tu.known);
    }
    pthread_cond_destroy(&w->go);
    free(w->ahead);
    free(w->vi);
  }
  return rc;
}

static int tune(kt_fleet *f, kt_task *task, const kt_tune_opts *opts, kt_results **out,
                kt_error *err) {
  tuning *m = &f->main;
  if (tune_begin(m, f->t[0], task, opts, out, err)) return -1;
  kt_indexmap_init(&f->planned);
  f->next = 0;
  f->release = task->launcher == NULL;
  f->set_up = 0;
  if (!(f->w = kt_calloc(f->n, sizeof *f->w, err))) return tune_end(m, -1, err);
  kt_evaluator ev = {.prefetch = fleet_prefetch, .ud = f, .slots = f->n,
                     .submit = fleet_submit, .wait = fleet_wait, .pick = fleet_pick,
                     .withdrawn = fleet_withdrawn};
  pthread_mutex_lock(&f->lock);
  int rc = start_workers(f, task, opts, err);
  kt_interrupt_guard guard;
  kt_interrupt_arm(&guard);
  if (rc == 0) rc = kt_search_loop(task->space, &m->lo, &ev, m->results, err);
  kt_interrupt_disarm(&guard);
  stop_workers(f);
  rc = finish_workers(f, rc, err);
  free(f->w);
  f->w = NULL;
  kt_indexmap_clear(&f->planned);
  double extra = m->results->device_ns; /* the other devices', added above */
  rc = tune_end(m, rc, err);
  m->results->device_ns += extra;
  return rc;
}

int kt_fleet_tune(kt_fleet *f, kt_task *task, const kt_tune_opts *opts, kt_results **out,
                  kt_error *err) {
  *out = NULL;
  for (size_t i = 0; i < f->n; i++)
    if (kt_tuner_busy(f->t[i])) return tune_busy_error(err);
  if (kt_task_busy(task)) return kt_task_busy_error(task, err);
  kt_task_pin(task);
  for (size_t i = 0; i < f->n; i++) f->t[i]->busy = true;
  int rc = tune(f, task, opts, out, err);
  for (size_t i = 0; i < f->n; i++) f->t[i]->busy = false;
  kt_task_unpin(task);
  return rc;
}
