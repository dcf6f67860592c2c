/*
** run_int.h: what run.c (a configuration's executions) and run_async.c
** (its transfers that do not block and events between queues) share.
*/
#ifndef KT_RUN_INT_H
#define KT_RUN_INT_H

#include "run.h"

/* The device buffer of a as this execution sees it, bound on first use. */
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

#endif
