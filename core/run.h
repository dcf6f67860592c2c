/*
** run.h: one configuration made ready to run (its kernels built, sizes
** and arguments worked out) and the executions of it. A launcher works
** through kt_run_launch.
*/
#ifndef KT_RUN_H
#define KT_RUN_H

#include "tuner.h"

typedef struct kt_run_kernel {
  kt_bkernel *bk;          /* NULL once a fault has closed its context */
  kt_sizes sizes;
  kt_kernel_usage usage;
  kt_launch_arg *args;
  size_t nargs;
} kt_run_kernel;

struct kt_run {
  kt_tuner *tuner;
  kt_task *task;
  kt_config cfg;
  kt_run_kernel *kernels;  /* one per kernel of the task */
  kt_status status;        /* of preparing or of the last execution */
  char *error;             /* why, when status is not ok */
  double build_ns;         /* compiling during prepare */
  double kernel_ns;        /* device time of the last execution's launches */
  double launcher_ns;      /* host time inside the last execution's launcher */
  double data_ns;          /* restoring buffers for the last execution */
  double wait_ns;          /* waiting for the last execution's launches */
  size_t launches;
  kt_fault fault;          /* of the last failed launch */
  kt_bevent **events;
  size_t nevents, capevents;
};

/* Builds the task's kernels for cfg. Returns -1 only on a fatal error;
** a configuration that cannot run gets run->status (compile_failed, ...). */
int kt_run_prepare(kt_run *run, kt_tuner *t, kt_task *task, const kt_config *cfg,
                   kt_error *err);
/* Restores written arrays, runs the launcher (or each kernel once), waits,
** and sums the launches' device time. Returns -1 only on a fatal error.
** After a sticky fault (status runtime_failed) the tuner has a fresh
** context and the run cannot execute again: release it. */
int kt_run_execute(kt_run *run, kt_error *err);
void kt_run_release(kt_run *run);

/* Launches kernel ki with the configuration's sizes, or with sizes. */
int kt_run_launch(kt_run *run, size_t ki, const kt_sizes *sizes, kt_error *err);

#endif
