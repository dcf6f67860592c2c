/*
** run_int.h: the parts of an execution (run.c) that run_batch.c puts
** together differently; nobody else sees them.
*/
#ifndef KT_RUN_INT_H
#define KT_RUN_INT_H

#include "run.h"

/* Records that the configuration cannot run (status and why); returns 0. */
int run_config_fails(kt_run *run, kt_status status, const char *why);
/* Back to the state of the configuration: the kernels' own argument
** lists, no values or buffers of the launcher's, pristine contents
** (restored by device-side copies queued on queue 0). */
int run_reset(kt_run *run, kt_error *err);
/* The default launcher: each kernel of the task once, on queue 0. */
int run_launch_all(kt_run *run, void *ud, kt_error *err);
/* Waits for a queue (-1: all), counting the wait into run->wait_ns. */
int run_finish(kt_run *run, int queue, kt_error *err);
void run_free_events(kt_run *run);
/* The status a fault gives the configuration. */
kt_status run_fault_status(kt_fault fault);
/* After a sticky fault: the tuner carries on in a fresh context. */
int run_reopen(kt_run *run, kt_error *err);

#endif
