/*
** split.c: running configurations of several tasks at once, each on its
** own tuner, for one kernel split across devices (stdlib ktlua.split).
**
** Each run goes on a thread of its own: an isolated tuner talks to its
** device process over pipes of its own, so the threads share nothing but
** what this file refuses up front: a tuner or task given twice, an array
** two parts use (host copies and change counts are not thread-safe), and
** anything that calls back into Lua (launchers, source generators,
** modifier functions), which must stay on the thread that owns the state.
*/
#define _POSIX_C_SOURCE 200809L
#include "split.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "interrupt.h"
#include "kernel.h"
#include "tuner_int.h"

/* The parts wait at the gate until every one has built its kernel. */
typedef struct gate {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  size_t ready;
  bool open;
} gate;

typedef struct part_run {
  kt_split_part *part;
  int64_t limit_ns;
  gate *gate;
  int rc;
  kt_error err;
} part_run;

static void gate_wait(gate *g) {
  pthread_mutex_lock(&g->lock);
  g->ready++;
  pthread_cond_broadcast(&g->changed);
  while (!g->open) pthread_cond_wait(&g->changed, &g->lock);
  pthread_mutex_unlock(&g->lock);
}

/* Opens the gate once the `started` parts are all at it. */
static void gate_open(gate *g, size_t started) {
  pthread_mutex_lock(&g->lock);
  while (g->ready < started) pthread_cond_wait(&g->changed, &g->lock);
  g->open = true;
  pthread_cond_broadcast(&g->changed);
  pthread_mutex_unlock(&g->lock);
}

static int no_callbacks(const kt_task *task, size_t i, kt_error *err) {
  if (task->launcher)
    return kt_fail(err, "part %zu (%s) has a launcher: a split runs tasks without one", i + 1,
                   task->name);
  for (size_t k = 0; k < task->nkernels; k++)
    if (task->kernels[k]->gen)
      return kt_fail(err, "part %zu (%s) writes its source per configuration: a split needs "
                     "a fixed source", i + 1, task->name);
  for (size_t m = 0; m < task->nmods; m++)
    if (task->mods[m].fn)
      return kt_fail(err, "part %zu (%s) has a modifier function: a split needs modifiers by "
                     "operator", i + 1, task->name);
  return 0;
}

typedef struct array_list {
  kt_array **a;
  size_t n, cap;
  size_t part;
  kt_error *err;
  const char *task;
} array_list;

static int add_array(kt_array *a, kt_access access, kt_placement place, void *ud) {
  (void)access;
  (void)place;
  array_list *l = ud;
  for (size_t i = 0; i < l->n; i++)
    if (l->a[i] == a)
      return kt_fail(l->err, "part %zu (%s) uses an array another part uses: give each part "
                     "its own arrays", l->part + 1, l->task);
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    kt_array **grown = realloc(l->a, cap * sizeof *grown);
    if (!grown) return kt_fail(l->err, "out of memory");
    l->a = grown;
    l->cap = cap;
  }
  l->a[l->n++] = a;
  return 0;
}

/* A device process lost since the tuner's last run is started again here,
** on the caller's thread: it dies with the thread that forks it
** (PR_SET_PDEATHSIG), which for a part's thread is at the end of its run. */
static int restart_here(kt_tuner *t, const kt_task *task, kt_error *err) {
  if (tuner_ensure_open(t, err)) return -1;
  if (tuner_generation(t) == t->generation) return 0;
  tuner_recover(t);
  return tuner_upload(t, task, NULL, err);
}

/* The checks of the file's comment, on the caller's thread. */
static int check_parts(const kt_split_part *parts, size_t n, kt_error *err) {
  array_list l = {.err = err};
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    const kt_split_part *p = &parts[i];
    for (size_t j = 0; j < i && rc == 0; j++) {
      if (parts[j].tuner == p->tuner)
        rc = kt_fail(err, "parts %zu and %zu run on the same tuner: each part needs its own",
                     j + 1, i + 1);
      else if (parts[j].task == p->task)
        rc = kt_fail(err, "parts %zu and %zu are the same task: each part needs its own", j + 1,
                     i + 1);
    }
    if (rc == 0 && (kt_tuner_busy(p->tuner) || kt_task_busy(p->task)))
      rc = kt_fail(err, "part %zu: its tuner or task is in use (a tuning or a run is in progress)",
                   i + 1);
    if (rc == 0 && !kt_tuner_isolated(p->tuner))
      rc = kt_fail(err, "part %zu: its tuner is not isolated: a split drives each device from "
                   "its own device process", i + 1);
    if (rc == 0) rc = no_callbacks(p->task, i, err);
    l.part = i;
    l.task = p->task->name;
    if (rc == 0) rc = tuner_each_array(p->task, add_array, &l, err);
    if (rc == 0) rc = kt_space_generate(p->task->space, err);
    uint64_t index;
    if (rc == 0 && kt_space_index(p->task->space, p->vi, &index))
      rc = kt_fail(err, "part %zu (%s): the configuration breaks a constraint of its space", i + 1,
                   p->task->name);
    if (rc == 0) rc = restart_here(p->tuner, p->task, err);
  }
  free(l.a);
  return rc;
}

static int read_back(kt_array *a, kt_access access, kt_placement place, void *ud) {
  (void)place;
  return access & KT_WRITE ? tuner_read(ud, a, a, NULL) : 0;
}

/* Uploads and builds; waits for the other parts (also after a failure, so
** that none waits for ever); executes. A device process lost meanwhile (a
** crash, the time limit) fails the part's run only, as in a tuning. */
static int prepare_execute(part_run *r, kt_run *run) {
  kt_split_part *p = r->part;
  kt_tuner *t = p->tuner;
  kt_config cfg = {p->task->space, 0, p->vi};
  kt_space_index(p->task->space, p->vi, &cfg.index);
  uint64_t losses = tuner_losses(t);
  int rc = tuner_upload(t, p->task, NULL, &r->err);
  if (rc == 0) rc = kt_run_prepare(run, t, p->task, &cfg, &r->err);
  run->time_limit_ns = r->limit_ns;
  gate_wait(r->gate);
  p->start_ns = kt_now_ns();
  if (rc == 0 && run->status == KT_OK) rc = kt_run_execute(run, &r->err);
  p->end_ns = kt_now_ns();
  if (rc && tuner_losses(t) != losses) {
    if (run->status == KT_OK) run->status = KT_RUNTIME_FAILED;
    free(run->error);
    run->error = strdup(r->err.msg);
    rc = 0;
  }
  return rc;
}

static void *run_part(void *ud) {
  part_run *r = ud;
  kt_split_part *p = r->part;
  kt_run run;
  memset(&run, 0, sizeof run);
  r->rc = prepare_execute(r, &run);
  p->status = run.status;
  p->kernel_ns = run.kernel_ns;
  if (run.error) p->error = strdup(run.error);
  if (r->rc == 0 && run.status == KT_OK && tuner_each_array(p->task, read_back, p->tuner, &r->err))
    r->rc = kt_fail_prefix(&r->err, "reading outputs back: ");
  kt_run_release(&run);
  return NULL;
}

static int join_all(pthread_t *th, part_run *runs, size_t started, size_t n, kt_error *err) {
  int rc = 0;
  for (size_t i = 0; i < started; i++) pthread_join(th[i], NULL);
  for (size_t i = 0; i < started && rc == 0; i++)
    if (runs[i].rc) rc = kt_fail(err, "part %zu: %s", i + 1, runs[i].err.msg);
  if (rc == 0 && started < n) rc = kt_fail(err, "cannot start a thread for part %zu", started + 1);
  return rc;
}

static void pin(kt_split_part *parts, size_t n, bool on) {
  for (size_t i = 0; i < n; i++) {
    parts[i].tuner->busy = on;
    if (on) kt_task_pin(parts[i].task);
    else kt_task_unpin(parts[i].task);
  }
}

/* One thread per part, let go together; a part whose thread cannot start
** fails the run after the others have run. */
static int run_threads(kt_split_part *parts, size_t n, int64_t limit_ns, pthread_t *th,
                       part_run *runs, kt_error *err) {
  gate g = {.ready = 0, .open = false};
  pthread_mutex_init(&g.lock, NULL);
  pthread_cond_init(&g.changed, NULL);
  size_t started = 0;
  for (; started < n; started++) {
    runs[started] = (part_run){.part = &parts[started], .limit_ns = limit_ns, .gate = &g};
    if (pthread_create(&th[started], NULL, run_part, &runs[started])) break;
  }
  gate_open(&g, started);
  int rc = join_all(th, runs, started, n, err);
  pthread_cond_destroy(&g.changed);
  pthread_mutex_destroy(&g.lock);
  return rc;
}

int kt_split_run(kt_split_part *parts, size_t n, int64_t limit_ns, bool *interrupted,
                 kt_error *err) {
  *interrupted = false;
  if (n == 0) return kt_fail(err, "no parts to run");
  if (check_parts(parts, n, err)) return -1;
  pthread_t *th = calloc(n, sizeof *th);
  part_run *runs = calloc(n, sizeof *runs);
  if (!th || !runs) {
    free(th);
    free(runs);
    return kt_fail(err, "out of memory");
  }
  kt_interrupt_guard guard;
  kt_interrupt_arm(&guard);
  pin(parts, n, true);
  int rc = run_threads(parts, n, limit_ns, th, runs, err);
  pin(parts, n, false);
  *interrupted = kt_interrupted();
  kt_interrupt_disarm(&guard);
  free(th);
  free(runs);
  return rc;
}
