/*
** build.h: the final source of a kernel under a configuration, and a
** cache of compiled programs keyed by final source and options, so that
** an identical source is compiled once per device.
*/
#ifndef KT_BUILD_H
#define KT_BUILD_H

#include "backend.h"
#include "program_disk.h"
#include "task.h"

typedef struct kt_build_cache kt_build_cache;

/* threads: compile threads (<= 0: one per online processor). */
kt_build_cache *kt_build_cache_new(const kt_backend *be, kt_bctx *ctx, size_t capacity,
                                   int threads, kt_error *err);
void kt_build_cache_free(kt_build_cache *c);
int kt_build_cache_threads(const kt_build_cache *c);

/* Parameters as #define lines, then the kernel's source (with a #line
** directive so that compiler messages point at the user's file). */
char *kt_build_source(const kt_task *t, const kt_kernel *k, const kt_config *cfg,
                      kt_error *err);
/* The same with another text than k's source (a generated one). */
char *kt_build_source_body(const kt_task *t, const kt_kernel *k, const kt_config *cfg,
                           const char *body, kt_error *err);

/* Starts compiling on a worker thread, unless the cache has it already. */
int kt_build_prefetch(kt_build_cache *c, const char *source, const char *options,
                      const char *name, kt_error *err);
/* Where compiles look for programs first and keep theirs (program_disk.h). */
void kt_build_cache_set_disk(kt_build_cache *c, kt_program_disk disk);
/* Where compiles run (builder.h, kt_builder_set_pool). */
struct kt_compile_pool;
void kt_build_cache_set_pool(kt_build_cache *c, struct kt_compile_pool *pool);
/* What is called around each wait for a compile thread (fleet.h). */
void kt_build_cache_set_wait(kt_build_cache *c, kt_wait_hook hook);
/* Forgets every program (their context is gone). */
void kt_build_cache_clear(kt_build_cache *c);
/* Drops prefetched compiles that were never asked for: those queued, and
** those running in compiler processes, which are killed (builder.h); one
** running in this process or the device process goes on to its end on its
** compile thread, and its program is dropped then. Returns how many were
** killed. */
size_t kt_build_cache_cancel_pending(kt_build_cache *c);

/* Finds, waits for or compiles. Returns 0 with *out set (and *log the
** compiler's warnings, or NULL); 1 when the source does not compile or has
** no such kernel (*log explains); 2 when its compile came to no verdict
** (its compiler process died or ran past its time limit: *log says so; the
** next call compiles it again); -1 on a fatal error. *log is owned by the
** cache and valid until the next call.
** *compile_ns is the compile's own time when this call is the first to
** use the program, else 0. */
int kt_build_get(kt_build_cache *c, const char *source, const char *options,
                 const char *name, kt_bkernel **out, const char **log, double *compile_ns,
                 kt_error *err);

/* Makes the kernel of a program whose compile is over, without waiting
** for one that is not: a configuration about to come gets its kernel
** while the device still runs the one before, and kt_build_get then finds
** it made (the compile's time stays the first user's). Returns 1 when it
** made the kernel now, 0 when there was nothing to do (compiling still,
** not submitted, failed, made before), -1 on a fatal error. */
int kt_build_ahead(kt_build_cache *c, const char *source, const char *options,
                   const char *name, kt_error *err);

/* Where a program stands, without waiting: 0 not in the cache (kt_build_get
** would compile it), 1 compiling (*running_ns: how long, as
** kt_builder_running_ns says; 0 while queued; running_ns may be NULL), 2
** ready (compiled, refused, or its compile over): kt_build_get would not
** wait. */
int kt_build_state(kt_build_cache *c, const char *source, const char *options,
                   const char *name, double *running_ns);
/* Compiles finished so far, ever (a mark), and a wait until one more has
** finished since mark, or until kt_now_ns() reaches deadline_ns. */
uint64_t kt_build_cache_finished(const kt_build_cache *c);
void kt_build_cache_await(kt_build_cache *c, uint64_t mark, int64_t deadline_ns);
/* The compiles that ran so far (a mark), and the median of their own times
** from the from-th on, *n of them (builder.h). */
size_t kt_build_cache_times(const kt_build_cache *c);
double kt_build_cache_median(const kt_build_cache *c, size_t from, size_t *n);

typedef struct kt_build_stats {
  size_t hits, misses, entries;
  size_t compiles;  /* programs submitted to the compile threads */
  size_t kernels;   /* kernels made (the backend's kernel call) ... */
  size_t ahead;     /* ... of which by kt_build_ahead */
  double kernel_ns; /* time in those calls (a round trip to the device process) */
  double wait_ns;   /* time kt_build_get waited for compiles */
  double longest_ns; /* the longest compile finished */
  size_t compiled;  /* compiles that ran (a program submitted may come from the disk) */
  size_t cached;    /* programs loaded from the disk cache instead */
  size_t workers;   /* compiler processes that ran (kt_tuner_build_stats) */
  size_t unkept;    /* programs compiled that the disk did not keep (program_disk.h) */
} kt_build_stats;

kt_build_stats kt_build_cache_stats(const kt_build_cache *c);
/* Why the disk did not keep the last program it did not keep (malloc'd),
** or NULL. */
char *kt_build_cache_unkept_why(const kt_build_cache *c);
/* Programs submitted and still compiling (queued or on a compile thread). */
size_t kt_build_cache_compiling(const kt_build_cache *c);

#endif
