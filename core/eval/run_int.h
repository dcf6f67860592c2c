/*
** run_int.h: what run.c (a configuration's executions), run_async.c (its
** transfers that do not block and events between queues) and run_batch.c
** (timed runs queued back to back) share; nobody else sees them.
*/
#ifndef KT_RUN_INT_H
#define KT_RUN_INT_H

#include "run.h"

/* run_buffers.c: the buffer the launcher resized for a, or NULL; the
** device buffer of a as this execution sees it, bound on first use. */
kt_run_buffer *run_resized(kt_run *run, const kt_array *a);
kt_bbuf *run_buffer_of(kt_run *run, const kt_array *a, kt_access access, kt_placement place,
                       kt_error *err);
/* The buffer of a for a change by this execution (kept pristine first). */
kt_bbuf *run_changing(kt_run *run, const kt_array *a, int queue, kt_error *err);

/* After a wait for queue (-1: all): the transfers queued there are done,
** and the reads' data reaches their arrays where the wait succeeded (ok). */
void run_async_synced(kt_run *run, int queue, bool ok);
/* The end of an execution, its queues finished: transfers done, events freed. */
void run_async_end(kt_run *run, bool ok);
void run_async_free(kt_run *run);

/* An error unless count elements fit in a buffer of have (what: "read"). */
int run_check_count(const char *what, size_t count, size_t have, kt_error *err);
/* The elements a read of a into dst moves (*count, or as many as both
** hold when 0), or -1 with err where the types or the sizes do not fit. */
int run_read_count(kt_run *run, const kt_array *a, const kt_array *dst, size_t *count,
                   kt_error *err);
/* The elements a write of src into a moves, or -1 where the types differ. */
int run_write_count(kt_run *run, const kt_array *a, const kt_array *src, size_t *count,
                    kt_error *err);

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

/* Calls run->idle (when set) with the run's work queued, before it is
** waited for (run.c); a loss it reports fails the configuration.
** -1 on a fatal error. */
int run_idle_work(kt_run *run, kt_error *err);
/* What work done beside a run's queued executions came to (rc: -1 fatal,
** > 0 the device process was lost meanwhile, why says how): a loss fails
** the configuration, as if it had come during its own runs, however it was
** noticed. -1 on a fatal error (err gets why), else 0. */
int run_work_done(kt_run *run, int rc, const kt_error *why, kt_error *err);

#endif
