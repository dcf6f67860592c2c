/*
** guard.c: verdicts that can be trusted (tune_int.h). Inputs are uploaded
** once per tuning, so a configuration that writes where no kernel may
** write (through a const pointer, past its own buffer into a neighbour)
** would make every later correct configuration look wrong. The guard
** checks the device copies that no run may change, restores them, finds
** who changed them, and gives a configuration found wrong a second run on
** restored inputs before its verdict stands.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_int.h"

/* Checks after ok configurations take about this share of the time ... */
#define CHECK_SHARE 0.02
/* ... and come at least every this many of them. */
#define CHECK_EVERY_MOST 64

void tune_guard_clear(kt_guard *g) {
  free(g->suspects);
  memset(g, 0, sizeof *g);
}

/* Whether an ok configuration, the since-th since the last check, is
** followed by a check. */
static bool check_due(const kt_guard *g, size_t since, kt_check_inputs when) {
  if (when != KT_CHECK_AUTO) return when == KT_CHECK_ALWAYS;
  if (g->runs == 0 || g->check_ns <= 0) return true;
  double every = ceil(g->check_ns / (CHECK_SHARE * g->run_ns / (double)g->runs));
  return (double)since >= (every < CHECK_EVERY_MOST ? every : CHECK_EVERY_MOST);
}

/* The device process's stderr since the last take goes into the result
** (when there is one) and the summary; true when there was some. */
static bool take_device_output(tuning *tu, kt_result *res, const char *when) {
  char *said = tuner_take_output(tu->t);
  if (!said) return false;
  char head[96];
  if (res) snprintf(head, sizeof head, "configuration %llu:\n", (unsigned long long)res->index);
  else snprintf(head, sizeof head, "%s:\n", when);
  if (res) kt_log_append(&res->device_log, said);
  kt_log_append(&tu->results->device_log, head);
  kt_log_append(&tu->results->device_log, said);
  if (said[strlen(said) - 1] != '\n') kt_log_append(&tu->results->device_log, "\n");
  free(said);
  return true;
}

/* ---- who changed the inputs ---- */

static void note(tuning *tu, const char *text) {
  kt_log_append(&tu->results->inputs_log, text);
  kt_log_append(&tu->results->inputs_log, "\n");
}

/* A later journal record of the same configuration replaces the first. */
static int blame(tuning *tu, size_t at, const kt_result *current, const char *what,
                 kt_error *err) {
  kt_result *x = &tu->results->items[at];
  char *why = malloc(strlen(what) + 64);
  if (!why) return kt_fail(err, "out of memory");
  sprintf(why, "it wrote where no kernel may: %s (restored)", what);
  x->status = KT_OUT_OF_BOUNDS;
  free(x->error);
  x->error = why;
  char line[96];
  snprintf(line, sizeof line, "configuration %llu wrote where no kernel may: ",
           (unsigned long long)x->index);
  kt_log_append(&tu->results->inputs_log, line);
  note(tu, what);
  if (x != current && tu->journal) return kt_journal_append(tu->journal, tu->results, x, err);
  return 0;
}

/* Runs a recorded configuration once more (untimed, unchecked), then
** checks the inputs: 1 when it changed them, 0 when not, 2 when its device
** process was lost (what the run did is gone with it). */
static int changes_when_run(tuning *tu, const kt_result *x, char **what, kt_error *err) {
  kt_config cfg = {tu->task->space, x->index, x->vi};
  uint64_t losses = tuner_losses(tu->t);
  kt_run run;
  int rc = kt_run_prepare(&run, tu->t, tu->task, &cfg, err);
  run.time_limit_ns = tune_time_limit(tu);
  if (rc == 0 && run.status == KT_OK) rc = kt_run_execute(&run, err);
  kt_run_release(&run);
  if (tuner_losses(tu->t) != losses) return 2;
  return rc ? -1 : tuner_verify(tu->t, tu->task, what, err);
}

/* Several configurations ran since the inputs were last intact: each runs
** again, in order, until one changes them. *culprit is its position, or
** SIZE_MAX when none did. */
static int hunt(tuning *tu, size_t *culprit, char **what, kt_error *err) {
  kt_guard *g = &tu->guard;
  *culprit = SIZE_MAX;
  for (size_t i = 0; i < g->nsuspects; i++) {
    char *w = NULL;
    int rc = changes_when_run(tu, &tu->results->items[g->suspects[i]], &w, err);
    if (rc < 0) return -1;
    if (rc == 2) return 0;
    if (rc == 1) {
      free(*what);
      *what = w;
      *culprit = g->suspects[i];
      return 0;
    }
  }
  return 0;
}

/* Checks the inputs after the suspects ran (current, when not NULL, the
** last of them): 1 when they had changed (restored now), 0 when intact. */
static int check(tuning *tu, const kt_result *current, kt_error *err) {
  kt_guard *g = &tu->guard;
  char *what = NULL;
  int64_t t0 = kt_now_ns();
  uint64_t losses = tuner_losses(tu->t), q0, r0, q1, r1;
  tuner_link_counts(tu->t, &q0, &r0);
  int changed = tuner_verify(tu->t, tu->task, &what, err);
  g->check_ns = (double)(kt_now_ns() - t0);
  tuner_link_counts(tu->t, &q1, &r1);
  if (q1 >= q0 && r1 >= r0) {
    tu->results->input_check_requests += q1 - q0;
    tu->results->input_check_round_trips += r1 - r0;
  }
  if (changed < 0 && tuner_losses(tu->t) != losses) {
    /* Damage that killed it (a heap an earlier kernel wrote over): the
    ** next device process starts from the tuning's own host contents. */
    take_device_output(tu, NULL, "while the inputs were checked");
    kt_log_append(&tu->results->inputs_log, "the device process was lost while the inputs were "
                                            "checked: ");
    note(tu, err->msg);
    changed = 0;
  }
  tu->results->input_checks++;
  if (tu->t->checked_on_device) tu->results->input_checks_device++;
  if (tu->t->checked_queued) tu->results->input_checks_queued++; /* on the device, too */
  g->since = 0;
  if (changed > 0) {
    tu->results->inputs_changed++;
    size_t culprit = g->suspects[0];
    if (g->nsuspects > 1 && hunt(tu, &culprit, &what, err)) changed = -1;
    else if (culprit != SIZE_MAX) changed = blame(tu, culprit, current, what, err) ? -1 : 1;
    else note(tu, "the inputs were found changed and restored; no configuration run again "
                  "changed them");
  }
  free(what);
  g->nsuspects = 0;
  return changed;
}

/* ---- one configuration, guarded ---- */

typedef struct outcome {
  bool lost;    /* its device process was lost (crash, timeout, sticky fault) */
  bool said;    /* the device process wrote on stderr meanwhile */
  int changed;  /* the inputs were found changed (and restored) */
} outcome;

static bool ran_kernels(kt_status s) {
  return s == KT_OK || s == KT_INVALID_OUTPUT || s == KT_RUNTIME_FAILED || s == KT_TIMEOUT;
}

static int run_and_check(tuning *tu, tune_eval_fn evaluate, kt_result *res, outcome *o,
                         kt_error *err) {
  kt_guard *g = &tu->guard;
  uint64_t losses = tuner_losses(tu->t);
  /* A device process grown too large is replaced now, as after a crash:
  ** fresh copies, nothing left to check. */
  tuner_bound_device(tu->t);
  if (tuner_losses(tu->t) != losses) g->nsuspects = g->since = 0;
  losses = tuner_losses(tu->t);
  *o = (outcome){false, false, 0};
  tu->check_after = check_due(g, g->since + 1, tu->opts->check_inputs);
  int rc = evaluate(tu, res, err);
  tu->check_after = false;
  if (rc) return -1;
  o->lost = tuner_losses(tu->t) != losses;
  o->said = take_device_output(tu, res, NULL);
  g->run_ns += res->over.total;
  g->runs++;
  if (!ran_kernels(res->status)) return 0;
  if (o->lost) { /* a new device process holds fresh copies */
    g->nsuspects = g->since = 0;
    return 0;
  }
  if (kt_grow(&g->suspects, &g->capsuspects, g->nsuspects + 1, sizeof *g->suspects, err))
    return -1;
  g->suspects[g->nsuspects++] = (size_t)(res - tu->results->items);
  if (res->status == KT_OK && !o->said &&
      (++g->since, !check_due(g, g->since, tu->opts->check_inputs)))
    return 0;
  int64_t t0 = kt_now_ns();
  o->changed = check(tu, res, err);
  double ns = (double)(kt_now_ns() - t0); /* the check and any runs it took */
  res->over.validation += ns;
  res->over.total += ns;
  return o->changed < 0 ? -1 : 0;
}

static const char *rerun_reason(const kt_result *res, const outcome *o) {
  if (res->status == KT_INVALID_OUTPUT)
    return o->changed ? "the inputs had changed and were restored"
           : o->said  ? "the device process reported trouble"
                      : "a wrong output is checked once more";
  /* A compile or run cut short from outside (a killed device process),
  ** or a crash that earlier damage may have caused; not a timeout, which
  ** is the configuration's own. */
  if (o->lost && res->status != KT_OK && res->status != KT_TIMEOUT)
    return "its device process was lost";
  if (res->status == KT_TIMEOUT && o->said) return "the device process reported trouble";
  return NULL;
}

static char *first_verdict(const kt_result *res, const char *why) {
  const char *error = res->error ? res->error : "";
  size_t n = strlen(error) + strlen(why) + 96;
  char *s = malloc(n);
  if (s) snprintf(s, n, "first run: %s (%s); run again because %s", kt_status_name(res->status),
                  error, why);
  return s;
}

int tune_guarded_evaluate(tuning *tu, tune_eval_fn evaluate, kt_result *res, kt_error *err) {
  outcome o;
  if (run_and_check(tu, evaluate, res, &o, err)) return -1;
  const char *why = rerun_reason(res, &o);
  if (!why) return 0;
  char *first = first_verdict(res, why), *log = res->device_log;
  res->device_log = NULL;
  kt_result_reset(res);
  res->device_log = log;
  res->retried = first;
  /* After a crash the process is new already; trouble it reported means
  ** its heap may be damaged: a new one. */
  if (o.said && !o.lost && tuner_reopen(tu->t, err)) return -1;
  /* Its second verdict is its own: nothing of the next configuration's is
  ** made meanwhile (ahead.h), which may be what took the process. */
  tu->rerun = true;
  int rc = run_and_check(tu, evaluate, res, &o, err);
  tu->rerun = false;
  /* Lost again while it compiled: still no verdict of a compiler, as when a
  ** compiler process dies (build.h); a resumed tuning tries it again. */
  if (rc == 0 && o.lost && res->status == KT_COMPILE_FAILED) res->infrastructure = true;
  return rc;
}

int tune_guard_finish(tuning *tu, kt_error *err) {
  if (!tu->guard.nsuspects || !tu->t->ctx) return 0;
  return check(tu, NULL, err) < 0 ? -1 : 0;
}
