/*
** validate_async.h: comparing outputs on a host worker thread.
**
** Comparing an output of millions of elements with its reference takes
** milliseconds of host time per configuration; done on the tuning
** thread, the device idles meanwhile. A checker compares on a thread of
** its own while the tuning thread queues the configuration's timed runs
** and waits for them. Only built-in methods run there: a comparator
** written in Lua stays on the thread that owns the Lua state.
*/
#ifndef KT_VALIDATE_ASYNC_H
#define KT_VALIDATE_ASYNC_H

#include "array.h"
#include "task.h"

typedef struct kt_checker kt_checker;

kt_checker *kt_checker_new(kt_error *err);
/* Waits for comparisons in progress, then ends the thread. */
void kt_checker_free(kt_checker *c);

/* Adds a comparison of got with reference r (kt_compare_reference) to the
** next batch; neither may change until kt_checker_wait returns. */
int kt_checker_add(kt_checker *c, const kt_array *got, const kt_reference *r, kt_error *err);
/* Starts comparing what was added, in order (nothing when none was). */
void kt_checker_start(kt_checker *c);
/* Waits for them: 1 when every output matched; else the first one that
** did not, *which its place among those added: 0 with *why (malloc'd, or
** NULL), -1 with err. Clears the batch. */
int kt_checker_wait(kt_checker *c, size_t *which, char **why, kt_error *err);

#endif
