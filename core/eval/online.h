/*
** online.h: tuning inside a running application (KTT's dynamic tuning).
** Each step runs the task once on the arrays' current host contents (the
** application's own data) with the next configuration the searcher
** proposes, and copies what the kernels wrote back into the arrays, so
** that the application gets its outputs and the search its measurement.
** Once the search has ended, every step runs the best configuration. A
** configuration that fails costs the application nothing: its step runs
** again with the best configuration known (or the fallback). The search
** is the tuning loop's, one proposal per step (loop.h), with its journal,
** so an application started again continues where it stopped. When the
** search ends by itself, its leading candidates run again on the next
** steps, several times each, and the best is declared by the median of
** those runs (online_confirm.h): a search's single measurement of a
** microsecond kernel is too noisy to choose by.
*/
#ifndef KT_ONLINE_H
#define KT_ONLINE_H

#include "tuner.h"

typedef struct kt_online kt_online;

/* What one step did. */
typedef struct kt_online_outcome {
  bool searching;        /* this step tried a configuration of the search */
  bool confirming;       /* ... or re-measured one of its leading candidates (tried) */
  uint64_t tried;        /* ... this one (in the results), when searching */
  kt_status status;      /* of what was tried (or of what ran, when not searching) */
  uint64_t ran;          /* the configuration whose outputs the arrays hold */
  const uint32_t *ran_vi;/* its value indices (valid until the next step) */
  bool fell_back;        /* what was tried failed: ran is the best known or the fallback */
  double time_ns;        /* device time of the run whose outputs the arrays hold */
  char *error;           /* why what was tried failed (malloc'd; freed by the next step) */
} kt_online_outcome;

/* opts as for kt_tune (searcher, stop, journal and resume, time limits,
** seeds; repeats and progress are not used); fallback (value indices, or
** NULL) runs a step whose configuration failed before any has worked.
** validate: the outputs of the search's steps, and of its candidates' runs
** again (online_confirm.h), are compared with the task's references,
** computed from the step's data, before they are read back (a wrong one
** is invalid_output, and the step falls back). */
typedef struct kt_online_confirm {
  size_t candidates; /* the leading candidates re-measured (0: none) */
  unsigned runs;     /* ... each this many times, on as many steps */
} kt_online_confirm;
#define KT_ONLINE_CONFIRM_DEFAULT ((kt_online_confirm){3, 3})

kt_online *kt_online_new(kt_tuner *t, kt_task *task, const kt_tune_opts *opts,
                         const uint32_t *fallback, bool validate,
                         kt_online_confirm confirm, kt_error *err);
/* One step of the application. -1 when no configuration could produce the
** outputs (the one tried failed and nothing has worked yet), or on a
** fatal error (a metric's, the journal's, the device's); the arrays then
** hold their contents before the step, unless reading the outputs back
** was what failed: they are read back last. */
int kt_online_step(kt_online *on, kt_online_outcome *out, kt_error *err);
/* The search's results so far (the configurations tried). */
kt_results *kt_online_results(const kt_online *on);
/* Whether the best is not declared yet: the search, or its confirmation,
** goes on. */
bool kt_online_searching(const kt_online *on);
/* Whether a step is in progress: its callbacks (a launcher, a reference,
** a metric, a searcher) may not stop or free the online tuning. */
bool kt_online_stepping(const kt_online *on);
/* Ends the search (and its confirmation: candidates re-measured take the
** median of their runs so far) now: later steps run the best. An error,
** changing nothing, during a step. */
void kt_online_stop(kt_online *on, kt_error *err);
/* Not during a step (kt_online_stepping). The tuner and the task stay
** held (kt_tuner_hold_online, kt_task_hold_online) until then. */
void kt_online_free(kt_online *on);

#endif
