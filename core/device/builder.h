/*
** builder.h: compiling on worker threads. A job is a (source, options)
** pair; workers call the backend's thread-safe compile while the owning
** thread goes on (running the previous configuration on the device).
*/
#ifndef KT_BUILDER_H
#define KT_BUILDER_H

#include "backend.h"
#include "program_disk.h"

typedef struct kt_builder kt_builder;
typedef struct kt_build_job kt_build_job;

/* threads <= 0: one per online processor. */
kt_builder *kt_builder_new(const kt_backend *be, kt_bctx *ctx, int threads, kt_error *err);
/* Waits for the running jobs and frees everything; every job must have
** been waited for or cancelled. */
void kt_builder_free(kt_builder *b);
int kt_builder_threads(const kt_builder *b);
/* Where jobs from now on look for programs before compiling, and keep
** those they compile (program_disk.h); the store must outlive the
** builder. */
void kt_builder_set_disk(kt_builder *b, kt_program_disk disk);
/* Where jobs from now on compile (compile_pool.h; NULL: the backend's
** compile, here); the pool must outlive the builder. */
struct kt_compile_pool;
void kt_builder_set_pool(kt_builder *b, struct kt_compile_pool *pool);
/* Jobs that compiled (successfully or not), and that loaded a program
** from the disk instead. */
void kt_builder_counts(kt_builder *b, size_t *compiled, size_t *loaded);
/* Jobs that compiled a program the disk did not keep (its headers could
** not be known: program_disk.h), and, where why is not NULL, why the last
** one was not (a malloc'd copy, or NULL: none was, or memory ran out). */
size_t kt_builder_unkept(kt_builder *b, char **why);

/* Queues a compile of the kernel called name (the strings are copied). */
kt_build_job *kt_builder_submit(kt_builder *b, const char *source, const char *options,
                                const char *name, kt_error *err);
/* Waits for a job and frees it. Returns the program, or NULL when it did
** not compile (*log says why; the caller frees it), with *lost where that
** was no compiler's verdict: its compiler process died or ran past its time
** limit (compile_pool.h). *compile_ns is the time the compile took on its
** worker. */
kt_bprog *kt_builder_wait(kt_builder *b, kt_build_job *job, char **log, double *compile_ns,
                          bool *lost);
/* Whether a job's compile is over (kt_builder_wait would not block). */
bool kt_builder_done(kt_builder *b, kt_build_job *job);
/* How many jobs are queued or compiling (any thread may ask). */
size_t kt_builder_active(kt_builder *b);
/* Forgets a job: a queued one is dropped, a running one is freed (with its
** program) by a later call on the owning thread once it finishes. A
** running one in a compiler process is ended at once (its process killed
** and replaced: kt_compile_pool_kill); one that compiles in this process
** or the device process cannot be stopped, and keeps its compile thread
** until it is over. Returns whether it killed a compile. */
bool kt_builder_cancel(kt_builder *b, kt_build_job *job);

/* How long a job has been compiling, in ns (0: queued, or over): its own
** time, that is its wall time less the longest wait for a processor of a
** thread of the process that compiles it (run_delay.h: other jobs on the
** machine make no compile look slow): a compiler process (compile_pool.h;
** 0 while it starts), the device process (backend.h, compiler_pid), or
** this one. For the owning thread. */
double kt_builder_running_ns(kt_builder *b, kt_build_job *job);
/* How many jobs have finished, ever; kt_builder_await waits until that
** count is no longer mark, or until kt_now_ns() reaches deadline_ns. */
uint64_t kt_builder_finished(kt_builder *b);
void kt_builder_await(kt_builder *b, uint64_t mark, int64_t deadline_ns);
/* The compiles that ran (not loaded from the disk, not lost) are counted
** in the order they finished, with their own times (as for
** kt_builder_running_ns); kt_builder_times says how many so far, and
** kt_builder_median gives the median of those from the from-th on (*n of
** them; 0 when none). */
size_t kt_builder_times(kt_builder *b);
double kt_builder_median(kt_builder *b, size_t from, size_t *n);

#endif
