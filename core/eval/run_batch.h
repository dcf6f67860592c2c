/*
** run_batch.h: several executions of a configuration queued back to back
** and waited for once.
**
** A configuration's timed runs used to be executed one by one, each
** waited for apart: a round trip to the device (and, isolated, to the
** device process) per run, with the device idle in between. Queued
** together, the device runs them one after another while the tuning
** thread does other work (a host comparison, validate_async.h), and each
** run keeps its own time from the events around its launches. The
** restores between runs are device-side copies on the same in-order
** queue, so no other work of the tuning runs on the device during a
** timed launch.
*/
#ifndef KT_RUN_BATCH_H
#define KT_RUN_BATCH_H

#include "run.h"

/* True when run's executions can be queued together: the task has no
** launcher of its own (a launcher may wait, read, or do host work between
** launches, and its host time is measured per execution). */
bool kt_run_batchable(const kt_run *run);

/* Queues n executions of run (each restoring what the last one changed,
** then launching each kernel once) and waits once. ns[i] gets execution
** i's device time. The executions share a time limit of n times the
** run's. Returns -1 only on a fatal error; a fault fails the whole batch
** (run->status), as it would have failed the execution it happened in. */
int kt_run_execute_batch(kt_run *run, size_t n, double *ns, kt_error *err);

/* Work queued behind a batch's executions: after the first (a comparison
** of its outputs on the device), after the last (the inputs' check that
** will follow them, verify_device.c); -1 on a fatal error, > 0 when the
** device process was lost meanwhile (err says how): the batch fails as if
** it had been lost during its runs. */
typedef int (*kt_batch_hook)(kt_run *run, void *ud, kt_error *err);
typedef struct kt_batch_hooks {
  kt_batch_hook first, last; /* either NULL */
  void *ud;
} kt_batch_hooks;
/* kt_run_execute_batch, with the hooks called once their execution is
** queued (when it could be). */
int kt_run_execute_hooked(kt_run *run, size_t n, double *ns, const kt_batch_hooks *hooks,
                          kt_error *err);

#endif
