/*
** build.c: final sources and the program cache.
*/
#include "build.h"

#include "builder.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cached_kernel {
  char *name;
  kt_bkernel *kernel; /* NULL: the program has no such kernel */
  char *error;
} cached_kernel;

typedef struct entry {
  uint64_t hash;
  char *source, *options;
  char *kernel;      /* the kernel compiled for, when the backend compiles per kernel */
  kt_build_job *job; /* compiling on a worker; the fields below wait for it */
  kt_bprog *prog;    /* NULL: compile failed */
  char *log;
  double compile_ns; /* charged to the first configuration that uses it */
  bool uncharged;    /* finished by kt_build_ahead: not charged yet */
  bool lost;         /* failed with no verdict (builder.h) ... */
  bool stale;        /* ... said so to a configuration: compiled again at its next use */
  cached_kernel *kernels;
  size_t nkernels;
  uint64_t last_use;
} entry;

struct kt_build_cache {
  const kt_backend *be;
  kt_bctx *ctx;
  kt_builder *builder;
  entry *entries;
  size_t n, capacity;
  uint64_t clock;
  size_t hits, misses, compiles;
  size_t kernels, ahead;
  double kernel_ns, wait_ns;
  double longest_ns;
  kt_wait_hook wait;
};

kt_build_cache *kt_build_cache_new(const kt_backend *be, kt_bctx *ctx, size_t capacity,
                                   int threads, kt_error *err) {
  kt_build_cache *c = kt_calloc(1, sizeof *c, err);
  if (!c) return NULL;
  c->be = be;
  c->ctx = ctx;
  c->capacity = capacity < 4 ? 4 : capacity;
  if (!(c->entries = kt_calloc(c->capacity, sizeof *c->entries, err)) ||
      !(c->builder = kt_builder_new(be, ctx, threads, err))) {
    kt_build_cache_free(c);
    return NULL;
  }
  return c;
}

void kt_build_cache_set_wait(kt_build_cache *c, kt_wait_hook hook) { c->wait = hook; }

int kt_build_cache_threads(const kt_build_cache *c) { return kt_builder_threads(c->builder); }

/* Returns whether a compile was killed (kt_builder_cancel). */
static bool entry_clear(kt_build_cache *c, entry *e) {
  bool killed = e->job && kt_builder_cancel(c->builder, e->job);
  for (size_t i = 0; i < e->nkernels; i++) {
    if (e->kernels[i].kernel) c->be->kernel_free(c->ctx, e->kernels[i].kernel);
    free(e->kernels[i].name);
    free(e->kernels[i].error);
  }
  free(e->kernels);
  if (e->prog) c->be->prog_free(c->ctx, e->prog);
  free(e->source);
  free(e->options);
  free(e->kernel);
  free(e->log);
  memset(e, 0, sizeof *e);
  return killed;
}

void kt_build_cache_free(kt_build_cache *c) {
  if (!c) return;
  for (size_t i = 0; i < c->n; i++) entry_clear(c, &c->entries[i]);
  kt_builder_free(c->builder);
  free(c->entries);
  free(c);
}

void kt_build_cache_clear(kt_build_cache *c) {
  for (size_t i = 0; i < c->n; i++) entry_clear(c, &c->entries[i]);
  c->n = 0;
}

/* Prefetched compiles that nobody asked for are dropped (a tuning ended
** before reaching them). */
size_t kt_build_cache_cancel_pending(kt_build_cache *c) {
  if (!c) return 0; /* no cache: a reopen failed */
  size_t killed = 0;
  for (size_t i = 0; i < c->n; i++)
    if (c->entries[i].job) killed += entry_clear(c, &c->entries[i]);
  size_t kept = 0;
  for (size_t i = 0; i < c->n; i++)
    if (c->entries[i].source) c->entries[kept++] = c->entries[i];
  c->n = kept;
  return killed;
}

kt_build_stats kt_build_cache_stats(const kt_build_cache *c) {
  kt_build_stats s = {c->hits,   c->misses,    c->n,       c->compiles,  c->kernels,
                      c->ahead,  c->kernel_ns, c->wait_ns, c->longest_ns, 0, 0, 0, 0};
  kt_builder_counts(c->builder, &s.compiled, &s.cached);
  s.unkept = kt_builder_unkept(c->builder, NULL);
  return s;
}

char *kt_build_cache_unkept_why(const kt_build_cache *c) {
  char *why;
  kt_builder_unkept(c->builder, &why);
  return why;
}

void kt_build_cache_set_pool(kt_build_cache *c, struct kt_compile_pool *pool) {
  kt_builder_set_pool(c->builder, pool);
}

void kt_build_cache_set_disk(kt_build_cache *c, kt_program_disk disk) {
  kt_builder_set_disk(c->builder, disk);
}

/* Counted by the builder, under its lock: the entries may be changing on
** another thread (a tuning over several devices). */
size_t kt_build_cache_compiling(const kt_build_cache *c) { return kt_builder_active(c->builder); }

static uint64_t fnv1a(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return (h ^ 0xff) * 0x100000001b3ull; /* separates source from options */
}

/* ---- final source ---- */

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

char *kt_build_source(const kt_task *t, const kt_kernel *k, const kt_config *cfg,
                      kt_error *err) {
  return kt_build_source_body(t, k, cfg, k->source, err);
}

char *kt_build_source_body(const kt_task *t, const kt_kernel *k, const kt_config *cfg,
                           const char *body, kt_error *err) {
  size_t np = kt_space_nparams(t->space), size = strlen(body) + 256;
  for (size_t p = 0; p < np; p++) {
    char buf[8];
    size += strlen(kt_space_param(t->space, p)->name) + 16 +
            (size_t)kt_value_format(kt_config_value(cfg, p), buf, sizeof buf);
  }
  char *src = kt_alloc(size, err);
  if (!src) return NULL;
  size_t used = 0;
  for (size_t p = 0; p < np; p++) {
    char value[4096];
    kt_value_format(kt_config_value(cfg, p), value, sizeof value);
    used += (size_t)snprintf(src + used, size - used, "#define %s %s\n",
                             kt_space_param(t->space, p)->name, value);
  }
  char origin[200];
  snprintf(origin, sizeof origin, "%s", base_name(k->origin));
  for (char *q = origin; *q; q++)
    if (*q == '"' || *q == '\\') *q = '_';
  snprintf(src + used, size - used, "#line 1 \"%s\"\n%s", origin, body);
  return src;
}

/* ---- cache ---- */

/* kernel is NULL unless the backend compiles a program per kernel. A
** compile that came to no verdict (its compiler process died) was said
** once, by the call before: it is forgotten, to be compiled again. */
static entry *lookup(kt_build_cache *c, uint64_t h, const char *source, const char *options,
                     const char *kernel) {
  for (size_t i = 0; i < c->n; i++) {
    entry *e = &c->entries[i];
    if (e->hash == h && strcmp(e->source, source) == 0 && strcmp(e->options, options) == 0 &&
        (!kernel || strcmp(e->kernel, kernel) == 0)) {
      if (!e->stale) return e;
      entry_clear(c, e);
      c->entries[i] = c->entries[--c->n];
      return NULL;
    }
  }
  return NULL;
}

/* An empty entry: a new one, or the least recently used one that is not
** compiling nor finished ahead of its first use (kt_build_ahead: it would
** be compiled again when its configuration comes); the table grows when
** every entry is one of those. */
static entry *free_slot(kt_build_cache *c, kt_error *err) {
  if (c->n == c->capacity) {
    entry *oldest = NULL;
    for (size_t i = 0; i < c->n; i++)
      if (!c->entries[i].job && !c->entries[i].uncharged &&
          (!oldest || c->entries[i].last_use < oldest->last_use))
        oldest = &c->entries[i];
    if (oldest) {
      entry_clear(c, oldest);
      return oldest;
    }
    entry *grown = realloc(c->entries, 2 * c->capacity * sizeof *grown);
    if (!grown) return kt_fail(err, "out of memory growing the program cache"), NULL;
    memset(grown + c->capacity, 0, c->capacity * sizeof *grown);
    c->entries = grown;
    c->capacity *= 2;
  }
  return &c->entries[c->n++];
}

/* The name is part of the key only where a program serves one kernel. */
static const char *key_kernel(const kt_build_cache *c, const char *name) {
  return c->be->program_per_kernel ? name : NULL;
}

static uint64_t key_hash(const char *source, const char *options, const char *kernel) {
  uint64_t h = fnv1a(fnv1a(0xcbf29ce484222325ull, source), options);
  return kernel ? fnv1a(h, kernel) : h;
}

/* A new entry whose compile is queued. */
static entry *submit(kt_build_cache *c, uint64_t h, const char *source, const char *options,
                     const char *name, kt_error *err) {
  const char *kernel = key_kernel(c, name);
  char *src = kt_strdup(source, err), *opts = kt_strdup(options, err);
  char *kern = kernel ? kt_strdup(kernel, err) : NULL;
  kt_build_job *job = src && opts && (!kernel || kern)
                          ? kt_builder_submit(c->builder, source, options, name, err)
                          : NULL;
  entry *e = job ? free_slot(c, err) : NULL;
  if (!e) {
    if (job) kt_builder_cancel(c->builder, job);
    free(src);
    free(opts);
    free(kern);
    return NULL;
  }
  *e = (entry){h, src, opts, kern, job, NULL, NULL, 0, false, false, false, NULL, 0, ++c->clock};
  c->compiles++;
  return e;
}

int kt_build_prefetch(kt_build_cache *c, const char *source, const char *options,
                      const char *name, kt_error *err) {
  const char *kernel = key_kernel(c, name);
  uint64_t h = key_hash(source, options, kernel);
  if (lookup(c, h, source, options, kernel)) return 0;
  return submit(c, h, source, options, name, err) ? 0 : -1;
}

static void finish_compile(kt_build_cache *c, entry *e) {
  if (!e->job) return;
  int64_t t0 = kt_now_ns();
  if (c->wait.fn) c->wait.fn(c->wait.ud, true);
  e->prog = kt_builder_wait(c->builder, e->job, &e->log, &e->compile_ns, &e->lost);
  if (c->wait.fn) c->wait.fn(c->wait.ud, false);
  c->wait_ns += (double)(kt_now_ns() - t0);
  if (e->compile_ns > c->longest_ns) c->longest_ns = e->compile_ns;
  e->job = NULL;
}

static cached_kernel *find_kernel(kt_build_cache *c, entry *e, const char *name,
                                  kt_error *err) {
  for (size_t i = 0; i < e->nkernels; i++)
    if (strcmp(e->kernels[i].name, name) == 0) return &e->kernels[i];
  cached_kernel *grown = realloc(e->kernels, (e->nkernels + 1) * sizeof *grown);
  if (!grown) return kt_fail(err, "out of memory caching a kernel"), NULL;
  e->kernels = grown;
  cached_kernel *ck = &e->kernels[e->nkernels];
  kt_error kerr;
  *ck = (cached_kernel){kt_strdup(name, err), NULL, NULL};
  if (!ck->name) return NULL;
  e->nkernels++;
  int64_t t0 = kt_now_ns();
  ck->kernel = c->be->kernel(c->ctx, e->prog, name, &kerr);
  c->kernel_ns += (double)(kt_now_ns() - t0);
  c->kernels++;
  if (!ck->kernel) ck->error = strdup(kerr.msg);
  return ck;
}

static bool has_kernel(const entry *e, const char *name) {
  for (size_t i = 0; i < e->nkernels; i++)
    if (strcmp(e->kernels[i].name, name) == 0) return true;
  return false;
}

int kt_build_ahead(kt_build_cache *c, const char *source, const char *options,
                   const char *name, kt_error *err) {
  const char *kernel = key_kernel(c, name);
  entry *e = lookup(c, key_hash(source, options, kernel), source, options, kernel);
  if (!e || (e->job && !kt_builder_done(c->builder, e->job))) return 0;
  if (e->job) {
    finish_compile(c, e); /* does not block: the compile is over */
    e->uncharged = true;
  }
  if (!e->prog || has_kernel(e, name)) return 0;
  cached_kernel *ck = find_kernel(c, e, name, err);
  if (!ck) return -1;
  c->ahead++;
  if (!ck->kernel) kt_fail(err, "%s", ck->error ? ck->error : "kernel not found");
  return 1;
}

int kt_build_state(kt_build_cache *c, const char *source, const char *options,
                   const char *name, double *running_ns) {
  const char *kernel = key_kernel(c, name);
  entry *e = lookup(c, key_hash(source, options, kernel), source, options, kernel);
  if (running_ns) *running_ns = 0;
  if (!e) return 0;
  if (!e->job || kt_builder_done(c->builder, e->job)) return 2;
  if (running_ns) *running_ns = kt_builder_running_ns(c->builder, e->job); /* reads /proc */
  return 1;
}

uint64_t kt_build_cache_finished(const kt_build_cache *c) {
  return kt_builder_finished(c->builder);
}

void kt_build_cache_await(kt_build_cache *c, uint64_t mark, int64_t deadline_ns) {
  if (c->wait.fn) c->wait.fn(c->wait.ud, true);
  kt_builder_await(c->builder, mark, deadline_ns);
  if (c->wait.fn) c->wait.fn(c->wait.ud, false);
}

size_t kt_build_cache_times(const kt_build_cache *c) { return kt_builder_times(c->builder); }

double kt_build_cache_median(const kt_build_cache *c, size_t from, size_t *n) {
  return kt_builder_median(c->builder, from, n);
}

/* Compilers log a blank line or two for a clean build. */
static bool has_text(const char *s) {
  for (; s && *s; s++)
    if (!isspace((unsigned char)*s)) return true;
  return false;
}

int kt_build_get(kt_build_cache *c, const char *source, const char *options,
                 const char *name, kt_bkernel **out, const char **log, double *compile_ns,
                 kt_error *err) {
  const char *kernel = key_kernel(c, name);
  uint64_t h = key_hash(source, options, kernel);
  *out = NULL;
  *log = NULL;
  *compile_ns = 0;
  entry *e = lookup(c, h, source, options, kernel);
  if (e && e->uncharged) { /* its compile finished ahead of this first use */
    c->misses++;
    *compile_ns = e->compile_ns;
    e->uncharged = false;
  } else if (e && !e->job) {
    c->hits++;
  } else {
    c->misses++;
    if (!e && !(e = submit(c, h, source, options, name, err))) return -1;
    finish_compile(c, e);
    *compile_ns = e->compile_ns;
  }
  e->last_use = ++c->clock;
  if (!e->prog) {
    *log = e->log ? e->log : "compilation failed";
    e->stale = e->lost;
    return e->lost ? 2 : 1;
  }
  cached_kernel *ck = find_kernel(c, e, name, err);
  if (!ck) return -1;
  if (!ck->kernel) {
    *log = ck->error ? ck->error : "kernel not found";
    return 1;
  }
  *out = ck->kernel;
  *log = has_text(e->log) ? e->log : NULL;
  return 0;
}
