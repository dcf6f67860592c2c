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

typedef struct part_run {
  const kt_split_part *part;
  int64_t limit_ns;
  int rc;
  kt_error err;
} part_run;

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
    if (rc == 0 && !kt_tuner_isolated(p->tuner))
      rc = kt_fail(err, "part %zu: its tuner is not isolated: a split drives each device from "
                   "its own device process", i + 1);
    if (rc == 0) rc = no_callbacks(p->task, i, err);
    l.part = i;
    l.task = p->task->name;
    if (rc == 0) rc = tuner_each_array(p->task, add_array, &l, err);
    if (rc == 0) rc = kt_space_generate(p->task->space, err);
    if (rc == 0) rc = restart_here(p->tuner, p->task, err);
  }
  free(l.a);
  return rc;
}

static void *run_part(void *ud) {
  part_run *r = ud;
  const kt_split_part *p = r->part;
  r->rc = kt_tuner_run_once(p->tuner, p->task, p->vi, r->limit_ns, p->out, &r->err);
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

int kt_split_run(const kt_split_part *parts, size_t n, int64_t limit_ns, bool *interrupted,
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
  size_t started = 0;
  for (; started < n; started++) {
    runs[started] = (part_run){.part = &parts[started], .limit_ns = limit_ns};
    if (pthread_create(&th[started], NULL, run_part, &runs[started])) break;
  }
  int rc = join_all(th, runs, started, n, err);
  *interrupted = kt_interrupted();
  kt_interrupt_disarm(&guard);
  free(th);
  free(runs);
  return rc;
}
