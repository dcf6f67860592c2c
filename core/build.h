/*
** build.h: the final source of a kernel under a configuration, and a
** cache of compiled programs keyed by final source and options, so that
** an identical source is compiled once per device.
*/
#ifndef KT_BUILD_H
#define KT_BUILD_H

#include "backend.h"
#include "task.h"

typedef struct kt_build_cache kt_build_cache;

kt_build_cache *kt_build_cache_new(const kt_backend *be, kt_bctx *ctx, size_t capacity,
                                   kt_error *err);
void kt_build_cache_free(kt_build_cache *c);

/* Parameters as #define lines, then the kernel's source (with a #line
** directive so that compiler messages point at the user's file). */
char *kt_build_source(const kt_task *t, const kt_kernel *k, const kt_config *cfg,
                      kt_error *err);

/* Finds or compiles. Returns 0 with *out set; 1 when the source does not
** compile or has no such kernel (*log explains; owned by the cache and
** valid until the next call); -1 on a fatal error. */
int kt_build_get(kt_build_cache *c, const char *source, const char *options,
                 const char *name, kt_bkernel **out, const char **log, kt_error *err);

typedef struct kt_build_stats {
  size_t hits, misses, entries;
} kt_build_stats;

kt_build_stats kt_build_cache_stats(const kt_build_cache *c);

#endif
