/*
** tune_int.h: one tuning on a device, as tune.c (the evaluation) and
** guard.c (keeping verdicts trustworthy) share it.
*/
#ifndef KT_TUNE_INT_H
#define KT_TUNE_INT_H

#include "indexmap.h"
#include "journal.h"
#include "run_delay.h"
#include "tuner_int.h"

/* The configurations run since the inputs were last found intact, and
** what checking them costs against what running one costs. */
typedef struct kt_guard {
  size_t *suspects;   /* positions in the results */
  size_t nsuspects, capsuspects;
  size_t since;       /* ok configurations since the last check */
  double check_ns;    /* the last check's cost */
  double run_ns;      /* the configurations' summed total time ... */
  size_t runs;        /* ... and their number */
} kt_guard;

typedef struct tuning {
  kt_tuner *t;
  kt_task *task;
  const kt_tune_opts *opts;
  kt_results *results;
  kt_journal *journal;
  kt_array **scratch; /* per reference: where the output is read back ... */
  bool *landed;       /* ... there already, read behind the warm-up (measure.c) */
  bool later;         /* outputs are compared beside the timed runs */
  double landing_ns;  /* queueing those reads */
  bool set_up;        /* references computed and arrays uploaded */
  bool refs_given;    /* the references are computed already: by the set-up's first
                      ** part, or another tuning's (the task's, shared by the devices
                      ** of a fleet: fleet.c) */
  bool refs_pending;  /* they are not in yet: the outputs are kept in scratch, judged
                      ** once they are (verdict_later.c) */
  bool uploaded;      /* the arrays were uploaded before the set-up ... */
  uint64_t uploaded_losses; /* ... by this device process (tuner_losses) */
  kt_results *prior;  /* a resumed journal's results ... */
  kt_indexmap known;  /* ... by the index of their configuration in this space */
  kt_guard guard;
  struct kt_checker *checker; /* compares outputs while timed runs go on */
  struct kt_devcheck *devcheck; /* compares outputs on the device */
  size_t same_failures; /* the first configurations, all failed alike */
  uint64_t *seeds;      /* opts->seeds as indices in the pruned space */
  kt_loop_opts lo;      /* for the loop, with ... */
  kt_evaluator ev;      /* ... the prefetch of compiles (the driver sets evaluate) */
  int64_t t0;
  double device0; /* the tuner's device time when the tuning began */
  size_t restores0; /* ... and its restores */
  kt_build_stats builds0; /* ... and its program counts */
  struct kt_ahead *ahead; /* the configurations announced, for their kernels made ahead */
  double ahead_ns;    /* making them, during the current configuration's warm-up */
  bool rerun;         /* a configuration runs again for its verdict: nothing made ahead */
  bool check_after;   /* the guard checks the inputs after this configuration if it
                      ** comes out ok: measure.c queues the check behind its runs */
  int64_t waited;     /* kt_now_ns() of the last configuration's last wait (kt_gaps) ... */
  int64_t measured;   /* ... when it was measured ... */
  int64_t evaluated;  /* ... and evaluated */
  kt_gaps pending;    /* the parts of the gap since then */
  size_t compiles0;   /* the compiles that had run when it began (outlier.c) */
  double energy_ns;   /* each configuration's energy window (0: none; measure_energy.c) */
  pid_t host_pid;     /* a CPU device's process, whose threads' waits for a processor
                      ** (run_delay.h) each configuration's runs count; 0: none */
  kt_run_delays delays; /* ... at the start of the configuration's runs, ... */
  int64_t runs_t0;    /* ... then */
  bool counters_off;  /* hardware counters cannot be read here (profile.c) */
} tuning;

/* Starts a tuning of task on t (tuning.c): the device's pruning, the space,
** the results (in *out, which outlive the tuning), the journal (and what a
** resumed one holds), the loop's options. */
int tune_begin(tuning *tu, kt_tuner *t, kt_task *task, const kt_tune_opts *opts,
               kt_results **out, kt_error *err);
/* Adds the programs compiled and loaded from the disk since it began to r. */
void tune_count_builds(const tuning *tu, kt_results *r);
/* Ends it: compiles nobody asked for dropped, tune_close, tune_clear.
** Returns rc, or -1. */
int tune_end(tuning *tu, int rc, kt_error *err);
/* Ends its search: the journal closed (its error into err when rc is 0),
** the results' totals counted. What
** the tuning holds stays: an online tuning (online.c) checks its later
** steps' outputs with it, and frees it with tune_release when it goes.
** Returns rc, or -1. */
int tune_close(tuning *tu, int rc, kt_error *err);
/* Frees what the tuning holds but its results and journal (tuning.c),
** and puts back the arrays' host contents the tuner kept for it
** (tuner_keep_hosts). */
void tune_clear(tuning *tu);
/* Frees what the tuning holds (its read-back outputs, the journal's prior
** results, the checker, ...), but not its results and journal, and
** touches nothing of the tuner's: for a driver that keeps no host
** contents on the tuner, and may go while another tuning of the tuner
** runs (an online tuning closed from that tuning's callback). */
void tune_release(tuning *tu);
/* The references and uploads before the first configuration (tune.c). */
int tune_set_up(tuning *tu, kt_error *err);
/* Parts of it made earlier, for a fleet (fleet.c): the references alone,
** which the other devices wait for; the uploads, which need no references.
** tune_set_up then does only the rest. */
int tune_set_up_references(tuning *tu, kt_error *err);
int tune_upload_early(tuning *tu, kt_error *err);
/* Stops the tuning when its first configurations all failed alike (tune.c). */
int tune_same_failure(tuning *tu, const kt_result *res, kt_error *err);
/* The evaluator's prefetch: starts compiling a configuration's kernels. */
int tune_prefetch(void *ud, uint64_t index, const uint32_t *vi, kt_error *err);
/* The evaluator's view of the compiles, for a loop that evaluates out of
** order (loop.h: ready, marked, await, outlier; outlier.c). */
bool tune_ready(void *ud, uint64_t index);
bool tune_overtake(void *ud, uint64_t index);
uint64_t tune_marked(void *ud);
void tune_await(void *ud, uint64_t mark, int64_t deadline_ns);
bool tune_outlier(void *ud, uint64_t index, char *why, size_t size);

/* Computes every reference's expected output from the arrays' current
** host contents (tune.c). */
int tune_references(tuning *tu, kt_error *err);
/* kt_tuner_run_once but for reading the outputs back (tune_read_back),
** and with `checked` (whose references are computed) its outputs compared
** with them: wrong ones are invalid_output. The arrays keep their
** contents. */
int tune_run_once(kt_tuner *t, kt_task *task, const uint32_t *vi, int64_t limit_ns,
                  tuning *checked, kt_result *out, kt_error *err);
/* Copies every array the task writes back from the device into its host
** array: after a run that went well (tune_run_once), once nothing that may
** still fail comes between (an online step's metrics, its journal). */
int tune_read_back(kt_tuner *t, kt_task *task, kt_error *err);
/* Reads output i of the run into tu->scratch[i] (measure.c). */
int tune_read_output(tuning *tu, kt_run *run, size_t i, kt_result *res, kt_error *err);
/* A configuration run before the references are in (refs_pending: a
** fleet's other devices, fleet.c) keeps its outputs in scratch after the
** warm-up (measure.c); once the references are in, they are compared: an
** output that differs makes res invalid_output, its samples lost
** (verdict_later.c). */
int tune_judge_kept(tuning *tu, kt_result *res, kt_error *err);
/* Compares the run's outputs with the references (measure.c): wrong ones
** make it invalid_output. */
int tune_validate(tuning *tu, kt_run *run, kt_result *res, kt_error *err);
/* The warm-up, validation and timed runs of a prepared configuration
** (measure.c). */
int tune_measure(tuning *tu, kt_run *run, kt_result *res, kt_error *err);
/* Compiles the comparison kernels of the outputs compared on the device
** (validate_device.c) before the first configuration: their compile is
** the tuning's setup, not a configuration's overhead. */
int tune_devcheck_prepare(tuning *tu, kt_error *err);
/* The sizes of the launches the run's last execution made, into res. */
int tune_copy_launches(kt_result *res, const kt_run *run, kt_error *err);
/* Fails before the first configuration when counters are asked of a
** device that has none (profile.c). */
int tune_profile_check(const tuning *tu, kt_error *err);
/* After the timed runs of an ok configuration: its counters as metrics
** (profile.c). */
int tune_profile(tuning *tu, kt_run *run, kt_result *res, kt_error *err);
/* The error for a tuner in use by a tuning or a run (tune.c). */
int tune_busy_error(kt_error *err);
/* The time one execution may wait for the device (measure.c). */
int64_t tune_time_limit(const tuning *tu);
/* Runs one configuration (build, warm-up, validation, timed runs) into res,
** whose index and vi are set. -1 only on a fatal error (tune.c). */
int tune_evaluate(tuning *tu, kt_result *res, kt_error *err);
typedef int (*tune_eval_fn)(tuning *tu, kt_result *res, kt_error *err);

/* evaluate (tune_evaluate: passed in, so that guard.c, below tune.c, does
** not call back up into it), then what keeps the verdict trustworthy (guard.c): the
** device process's stderr goes into the result; the inputs are checked
** (after every configuration that did not come out ok, and after ok ones
** as often as keeps the checks near 2% of the time), and restored when a
** configuration changed them, which is then recorded out_of_bounds; a
** configuration found invalid, or whose device process died, runs once
** more on restored inputs (in a fresh device process after a crash or
** when the device process reported trouble) before its verdict is kept. */
int tune_guarded_evaluate(tuning *tu, tune_eval_fn evaluate, kt_result *res, kt_error *err);
/* At the end of a tuning: checks the inputs after the last configurations. */
int tune_guard_finish(tuning *tu, kt_error *err);
void tune_guard_clear(kt_guard *g);

/* measure_energy.c: whether the device can measure energy, and the
** window (before the first configuration), and a configuration's energy
** pass, after its timed runs, recorded as its metrics energy (J per run),
** power (W) and sm_clock (MHz); nothing without opts->energy_window_ns. */
int tune_energy_check(tuning *tu, kt_error *err);
int tune_energy(tuning *tu, kt_run *run, kt_result *res, kt_error *err);

#endif
