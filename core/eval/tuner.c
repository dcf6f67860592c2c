/*
** tuner.c: an opened device and the device copies of arrays.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile_pool.h"
#include "copy_wide.h"
#include "cpus.h"
#include "remote.h"
#include "tuner_int.h"

#define BUILD_CACHE_ENTRIES 64

uint64_t tuner_generation(const kt_tuner *t) {
  return t->ctx && t->be->generation ? t->be->generation(t->ctx) : 0;
}

/* Opens dev in this process: the device handle must come from this
** process's own listing. */
static kt_bctx *open_here(const kt_device_info *dev, kt_error *err) {
  kt_device_info *list;
  size_t n;
  kt_drivers_in_process_set();
  if (kt_devices_here(&list, &n, NULL, 0, err)) return NULL;
  int found = kt_device_find(list, n, dev->id, err);
  kt_bctx *ctx = found >= 0 ? list[found].backend->open(&list[found], err) : NULL;
  kt_devices_free(list, n);
  return ctx;
}

/* Only the remote backend waits where a hook can let others work. */
static void apply_wait(kt_tuner *t) {
  kt_build_cache_set_disk(t->cache, kt_tuner_program_disk(t));
  kt_build_cache_set_wait(t->cache, t->wait);
  kt_build_cache_set_pool(t->cache, t->pool);
  if (t->isolate) kt_remote_set_wait(t->ctx, t->wait);
}

/* Leaves both the context and its program cache, or neither. */
static int open_context(kt_tuner *t, kt_error *err) {
  t->ctx = t->isolate ? kt_remote_open(&t->device, t->build_threads, err)
                      : open_here(&t->device, err);
  if (!t->ctx) return -1;
  t->cache = kt_build_cache_new(t->be, t->ctx, BUILD_CACHE_ENTRIES, t->build_threads, err);
  if (!t->cache) {
    t->be->close(t->ctx);
    t->ctx = NULL;
    return -1;
  }
  apply_wait(t);
  return 0;
}

void kt_tuner_set_wait(kt_tuner *t, kt_wait_hook hook) {
  t->wait = hook;
  if (t->ctx) apply_wait(t);
}

static void devarray_clear(kt_tuner *t, devarray *d) {
  if (d->buf) t->be->buffer_free(t->ctx, d->buf);
  if (d->pristine) t->be->buffer_free(t->ctx, d->pristine);
  if (d->ref) t->be->buffer_free(t->ctx, d->ref);
  kt_array_release(d->array);
  memset(d, 0, sizeof *d);
}

void tuner_drop_refs(kt_tuner *t) {
  for (size_t i = 0; i < t->narrays; i++) {
    devarray *d = &t->arrays[i];
    if (d->ref && t->ctx) t->be->buffer_free(t->ctx, d->ref);
    d->ref = NULL;
  }
}

/* A lost device process's objects went with it: freeing them does nothing. */
static void free_unchanged(kt_tuner *t) {
  kt_unchanged *u = t->unchanged;
  if (!u) return;
  if (u->kernel) t->be->kernel_free(t->ctx, u->kernel);
  if (u->prog) t->be->prog_free(t->ctx, u->prog);
  if (u->flag) t->be->buffer_free(t->ctx, u->flag);
  free(u);
  t->unchanged = NULL;
}

static void forget_arrays(kt_tuner *t) {
  for (size_t i = 0; i < t->narrays; i++) devarray_clear(t, &t->arrays[i]);
  t->narrays = 0;
}

static void keep_output(kt_tuner *t) {
  char *said = t->ctx && t->be->take_output ? t->be->take_output(t->ctx) : NULL;
  if (said) kt_log_append(&t->output, said);
  free(said);
  if ((said = t->pool ? kt_compile_pool_take_output(t->pool) : NULL)) kt_log_append(&t->output, said);
  free(said);
}

char *tuner_take_output(kt_tuner *t) {
  keep_output(t);
  char *s = t->output;
  t->output = NULL;
  return s;
}

/* Frees every object of the context, then the context. */
static void close_context(kt_tuner *t) {
  keep_output(t);
  forget_arrays(t);
  free_unchanged(t);
  if (t->cache) { /* its counts outlive it */
    kt_build_stats s = kt_build_cache_stats(t->cache);
    t->compiled += s.compiled;
    t->cached += s.cached;
    t->unkept += s.unkept;
    char *why = kt_build_cache_unkept_why(t->cache);
    if (why) {
      free(t->unkept_why);
      t->unkept_why = why;
    }
  }
  kt_build_cache_free(t->cache);
  t->cache = NULL;
  if (t->ctx) t->be->close(t->ctx);
  t->ctx = NULL;
}

/* The program cache on disk that the environment names; a bound that is
** no size is an error. A folder that cannot be written costs only the
** time of compiling again (kt_program_build). */
static int open_store(kt_tuner *t, kt_error *err) {
  if (t->device.far && t->isolate) return 0; /* its node keeps its programs (server_build.h) */
  char *dir;
  bool off;
  uint64_t limit;
  if (kt_program_store_settings(&dir, &off, &limit, err)) return -1;
  t->store = dir ? kt_program_store_open(dir, limit, err) : NULL;
  free(dir);
  if (off) return 0;
  if (!t->store || !(t->identity = kt_program_identity(&t->device, err))) return -1;
  return 0;
}

kt_tuner *kt_tuner_new(const kt_device_info *dev, int build_threads, bool isolate,
                       kt_error *err) {
  kt_tuner *t = kt_calloc(1, sizeof *t, err);
  if (!t) return NULL;
  if (kt_device_copy(&t->device, dev, err)) {
    free(t);
    return NULL;
  }
  /* A device of another node compiles there, on that node's processors. */
  if (build_threads <= 0) build_threads = (int)kt_device_int(dev, "host_cpus", 0);
  if (build_threads <= 0) build_threads = kt_cpus_usable();
  t->build_threads = build_threads;
  t->growth = KT_DEVICE_GROWTH_DEFAULT;
  t->isolate = isolate;
  t->be = isolate ? kt_remote_backend(dev) : dev->backend;
  if (open_store(t, err) || open_context(t, err)) {
    kt_tuner_free(t);
    return NULL;
  }
  t->generation = tuner_generation(t);
  return t;
}

void kt_tuner_free(kt_tuner *t) {
  if (!t) return;
  tuner_drop_hosts(t);
  free(t->hosts);
  close_context(t);
  free(t->output);
  free(t->arrays);
  free(t->pattern);
  free(t->readback);
  kt_device_clear(&t->device);
  kt_program_store_free(t->store);
  kt_compile_pool_free(t->pool); /* after the context's compile threads */
  free(t->identity);
  free(t->unkept_why);
  free(t);
}

/* A sticky fault broke the context: every object goes with it, and a new
** context takes its place (a new device process, when isolated). */
int tuner_reopen(kt_tuner *t, kt_error *err) {
  t->reopens += tuner_generation(t) + 1; /* the new context counts its own from 1 */
  close_context(t);
  return tuner_ensure_open(t, err);
}

int tuner_ensure_open(kt_tuner *t, kt_error *err) {
  if (t->ctx) return 0;
  t->reopened = true; /* whatever was bound belonged to the old context */
  if (open_context(t, err)) {
    kt_fail_prefix(err, "reopening %s: ", t->device.id);
    /* NVIDIA's drivers refuse new contexts in a process that met a sticky
    ** fault; only a new process helps. */
    size_t n = err ? strlen(err->msg) : 0;
    if (err && !t->isolate)
      snprintf(err->msg + n, sizeof err->msg - n, " (a driver may not recover within the process "
               "that met the fault; an isolated tuner, the default, starts a new device process)");
    return -1;
  }
  t->generation = tuner_generation(t);
  return 0;
}

uint64_t tuner_losses(const kt_tuner *t) { return t->reopens + tuner_generation(t); }

void tuner_link_counts(const kt_tuner *t, uint64_t *requests, uint64_t *round_trips) {
  *requests = *round_trips = 0;
  if (t->isolate && t->ctx) kt_remote_counts(t->ctx, requests, round_trips);
}

pid_t tuner_device_pid(const kt_tuner *t) {
  if (!t->isolate) return getpid();
  return t->ctx ? kt_remote_pid(t->ctx) : 0;
}

int tuner_device_threads(const kt_tuner *t) {
  return t->isolate && t->ctx ? kt_remote_threads(t->ctx) : 0;
}

const kt_device_info *kt_tuner_device(const kt_tuner *t) { return &t->device; }

bool kt_tuner_isolated(const kt_tuner *t) { return t->isolate; }
bool kt_tuner_busy(const kt_tuner *t) { return t->busy; }
void kt_tuner_hold_online(kt_tuner *t, bool hold) {
  if (hold) t->online++;
  else t->online--;
}
bool kt_tuner_held_online(const kt_tuner *t) { return t->online > 0; }
void kt_tuner_set_device_growth(kt_tuner *t, size_t bytes) { t->growth = bytes; }
unsigned kt_tuner_renewals(const kt_tuner *t) { return t->renewals; }

/* The size after the first configuration is the base: the first compile
** and launch load the compiler and the kernel library. A process also
** runs at least growth / 128 KiB configurations: faster growth is a
** driver loading what it needs once (PoCL loads its compiler at the first
** kernel missing from its disk cache), not what a bound is for. */
#define LEAK_PER_CONFIG ((size_t)128 << 10)

void tuner_bound_device(kt_tuner *t) {
  if (!t->growth || !t->ctx || !t->be->resident || !t->be->renew) return;
  size_t now = t->be->resident(t->ctx);
  if (!now) return;
  uint64_t g = tuner_generation(t);
  if (g != t->watched) {
    t->watched = g;
    t->checks = 0;
  }
  if (++t->checks == 2) t->base = now;
  if (t->checks <= 2 || t->checks - 1 < t->growth / LEAK_PER_CONFIG ||
      now <= t->base + t->growth)
    return;
  t->be->renew(t->ctx);
  t->renewals++;
}

kt_build_stats kt_tuner_build_stats(const kt_tuner *t) {
  kt_build_stats s = {0};
  if (t->cache) s = kt_build_cache_stats(t->cache);
  s.compiled += t->compiled;
  s.cached += t->cached;
  s.unkept += t->unkept;
  if (t->pool && !kt_compile_pool_fallback(t->pool))
    s.workers = (size_t)kt_compile_pool_started(t->pool);
  return s;
}

/* Compiler processes are started from this process, as device processes
** are: only an isolated tuner of a device of this process's own host has
** them. */
int kt_tuner_set_compile_workers(kt_tuner *t, int workers, kt_error *err) {
  if (t->pool || workers == 0) return 0;
  if (!t->isolate || t->device.far) {
    if (workers < 0) return 0;
    return kt_fail(err, "compile workers need an isolated tuner of a device of this host "
                        "(isolate = true, no MPI rank of its own)");
  }
  /* By default only NVRTC compiles in processes: on OpenCL they measured
  ** slower than the device process's threads (PoCL makes a binary for any
  ** work-group size, NVIDIA's OpenCL a context per process: RESULTS.md). */
  if (workers < 0 && strncmp(t->device.id, "cuda:", 5) != 0) return 0;
  if (workers < 0) workers = kt_compile_pool_default_size(t->build_threads, t->host_devices);
  if (!(t->pool = kt_compile_pool_new(&t->device, workers, err))) return -1;
  if (t->cache) apply_wait(t);
  return 0;
}

void kt_tuner_set_host_devices(kt_tuner *t, int devices) { t->host_devices = devices; }

void kt_tuner_set_compile_timeout(kt_tuner *t, double seconds) {
  if (t->pool) kt_compile_pool_set_timeout(t->pool, seconds);
}

const char *kt_tuner_compile_fallback(const kt_tuner *t) {
  return t->pool ? kt_compile_pool_fallback(t->pool) : NULL;
}

void kt_tuner_set_disk_cache(kt_tuner *t, bool on) {
  t->disk_off = !on;
  if (t->cache) apply_wait(t);
}

/* A device of another node keeps its programs there: its server compiles
** through its own node's cache (server_build.h). */
kt_program_disk kt_tuner_program_disk(const kt_tuner *t) {
  const char *b = kt_device_string(&t->device, "backend");
  return (kt_program_disk){t->disk_off ? NULL : t->store, t->identity,
                           b && strcmp(b, "cuda") == 0 ? KT_HEADERS_CUDA : KT_HEADERS_OPENCL,
                           .there = !t->disk_off && t->device.far && t->isolate};
}

char *kt_tuner_unkept_why(const kt_tuner *t) {
  char *why = t->cache ? kt_build_cache_unkept_why(t->cache) : NULL;
  return why ? why : t->unkept_why ? strdup(t->unkept_why) : NULL;
}

const char *kt_tuner_disk_cache(const kt_tuner *t) {
  return t->store && !t->disk_off ? kt_program_store_dir(t->store) : NULL;
}

int kt_tuner_build_threads(const kt_tuner *t) { return t->build_threads; }

size_t kt_tuner_build_compiling(const kt_tuner *t) {
  return t->cache ? kt_build_cache_compiling(t->cache) : 0;
}

devarray *tuner_devarray(kt_tuner *t, const kt_array *a) {
  for (size_t i = 0; i < t->narrays; i++)
    if (t->arrays[i].array == a) return &t->arrays[i];
  return NULL;
}

void tuner_unbind_array(kt_tuner *t, const kt_array *a) {
  devarray *d = tuner_devarray(t, a);
  if (!d) return;
  devarray_clear(t, d);
  *d = t->arrays[--t->narrays];
}

/* The distinct arrays of a task's kernels, each with the union of its
** access modes (an array that one kernel reads and another writes is
** written) and the placement of its first use. */
typedef struct array_use {
  kt_array *array;
  kt_access access;
  kt_placement place;
} array_use;

static array_use *collect_uses(const kt_task *task, size_t *n, kt_error *err) {
  size_t cap = 0;
  array_use *uses = NULL;
  *n = 0;
  for (size_t ki = 0; ki < task->nkernels; ki++) {
    const kt_kernel *k = task->kernels[ki];
    for (size_t i = 0; i < k->nargs; i++) {
      const kt_arg *a = k->args[i];
      if (a->kind != KT_ARG_VECTOR) continue;
      size_t u = 0;
      while (u < *n && uses[u].array != a->array) u++;
      if (u < *n) {
        uses[u].access |= a->access;
        continue;
      }
      if (kt_grow(&uses, &cap, *n + 1, sizeof *uses, err)) {
        free(uses);
        return NULL;
      }
      uses[(*n)++] = (array_use){a->array, a->access, a->placement};
    }
  }
  if (!uses) uses = kt_calloc(1, sizeof *uses, err);
  return uses;
}

int tuner_each_array(const kt_task *task, int (*fn)(kt_array *a, kt_access access,
                     kt_placement place, void *ud), void *ud, kt_error *err) {
  size_t n;
  array_use *uses = collect_uses(task, &n, err);
  if (!uses) return -1;
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++)
    rc = fn(uses[i].array, uses[i].access, uses[i].place, ud);
  free(uses);
  return rc;
}

/* ---- host contents during a tuning ---- */

typedef struct bind_ctx {
  kt_tuner *t;
  kt_error *err;
} bind_ctx;

static hostcopy *find_host(kt_tuner *t, const kt_array *a) {
  for (size_t i = 0; i < t->nhosts; i++)
    if (t->hosts[i].array == a) return &t->hosts[i];
  return NULL;
}

static void host_made(hostcopy *h) {
  kt_copy_wide_wait(h->making);
  h->making = NULL;
}

hostcopy *tuner_hostcopy(kt_tuner *t, const kt_array *a) {
  hostcopy *h = find_host(t, a);
  if (h) host_made(h);
  return h;
}

void tuner_hosts_kept(kt_tuner *t) {
  for (size_t i = 0; i < t->nhosts; i++) host_made(&t->hosts[i]);
}

static int keep_host(kt_array *a, kt_access access, kt_placement place, void *ud) {
  (void)access, (void)place;
  bind_ctx *b = ud;
  kt_tuner *t = b->t;
  size_t bytes = kt_array_bytes(a);
  if (find_host(t, a)) return 0;
  if (kt_grow(&t->hosts, &t->caphosts, t->nhosts + 1, sizeof *t->hosts, b->err)) return -1;
  void *data = kt_alloc(bytes ? bytes : 1, b->err);
  if (!data) return -1;
  kt_array_retain(a);
  t->hosts[t->nhosts++] = (hostcopy){a, data, a->changes, false,
                                     kt_copy_wide_start(data, a->data, bytes)};
  return 0;
}

int tuner_keep_hosts(kt_tuner *t, const kt_task *task, kt_error *err) {
  bind_ctx b = {t, err};
  return tuner_each_array(task, keep_host, &b, err);
}

int tuner_share_hosts(kt_tuner *t, const kt_tuner *from, kt_error *err) {
  for (size_t i = 0; i < from->nhosts; i++) {
    const hostcopy *h = &from->hosts[i];
    if (find_host(t, h->array)) continue;
    if (kt_grow(&t->hosts, &t->caphosts, t->nhosts + 1, sizeof *t->hosts, err)) return -1;
    kt_array_retain(h->array);
    t->hosts[t->nhosts++] = (hostcopy){h->array, h->data, h->changes, true, NULL};
  }
  return 0;
}

void tuner_restore_hosts(kt_tuner *t) {
  tuner_hosts_kept(t);
  for (size_t i = 0; i < t->nhosts; i++) {
    hostcopy *h = &t->hosts[i];
    if (h->array->changes == h->changes) continue;
    kt_copy_wide(h->array->data, h->data, kt_array_bytes(h->array));
    h->changes = ++h->array->changes;
  }
}

void tuner_drop_hosts(kt_tuner *t) {
  tuner_restore_hosts(t);
  tuner_drop_refs(t);
  free(t->readback); /* the inputs' checks' memory lives as long as a tuning */
  t->readback = NULL;
  t->nreadback = 0;
  for (size_t i = 0; i < t->nhosts; i++) {
    kt_array_release(t->hosts[i].array);
    if (!t->hosts[i].borrowed) free(t->hosts[i].data);
  }
  t->nhosts = 0;
}

/* ---- device copies ---- */

bool tuner_ref_fits(const kt_tuner *t, const devarray *d) {
  size_t bytes = kt_array_bytes(d->array), taken = bytes;
  for (size_t i = 0; i < t->narrays; i++)
    if (t->arrays[i].ref) taken += kt_array_bytes(t->arrays[i].array);
  int64_t memory = kt_device_int(&t->device, "global_memory", 0);
  return d->place == KT_PLACE_DEVICE && bytes > 0 && memory > 0 &&
         taken <= (uint64_t)memory / TUNER_REF_SHARE;
}

/* The inputs' checks' reference of d (verify_device.c), copied on the
** device from the host contents just uploaded into from: no second upload
** at the first check. 0 also when it does not fit (made later, or never). */
static int copy_ref(kt_tuner *t, devarray *d, kt_bbuf *from, kt_error *err) {
  kt_error why;
  if (d->ref || !tuner_ref_fits(t, d)) return 0;
  size_t bytes = kt_array_bytes(d->array);
  if (!(d->ref = t->be->buffer_new(t->ctx, bytes, KT_PLACE_DEVICE, KT_READ_WRITE, &why)))
    return 0; /* no room: the host compares it */
  return t->be->buffer_copy(t->ctx, 0, d->ref, 0, from, 0, bytes, err);
}

/* The contents a tuning found, when it keeps them: while their copy is
** being made, the array's own (the same bytes, unless changed since). */
static const void *upload_source(kt_tuner *t, const kt_array *a, bool *kept) {
  hostcopy *h = find_host(t, a);
  if (h && h->changes != a->changes) host_made(h);
  *kept = h != NULL;
  return h && !h->making ? h->data : a->data;
}

int tuner_upload_array(kt_tuner *t, devarray *d, kt_error *err) {
  size_t bytes = kt_array_bytes(d->array);
  kt_bbuf *first = d->pristine ? d->pristine : d->buf;
  bool kept;
  const void *src = upload_source(t, d->array, &kept);
  d->dirty = false;
  if (t->be->buffer_write(t->ctx, 0, first, 0, bytes, src, true, err) ||
      tuner_fill_zone(t, d, err) || (kept && copy_ref(t, d, first, err)))
    return -1;
  if (d->pristine && t->be->buffer_copy(t->ctx, 0, d->buf, 0, d->pristine, 0, bytes, err))
    return -1;
  return 0;
}

static int make_buffers(kt_tuner *t, devarray *d, kt_error *err) {
  kt_array *a = d->array;
  size_t bytes = kt_array_bytes(a);
  bool writes = d->access & KT_WRITE;
  d->zone = tuner_zone_bytes(bytes);
  if (!(d->buf = t->be->buffer_new(t->ctx, bytes + d->zone, d->place, d->access, err)) ||
      (writes && !(d->pristine = t->be->buffer_new(t->ctx, bytes, KT_PLACE_DEVICE,
                                                   KT_READ_WRITE, err))))
    return kt_fail_prefix(err, "device memory for %s[%zu]: ", a->type->name, a->length);
  return 0;
}

/* Returns 1 when the array's buffers are new (and need an upload). */
static int bind(kt_tuner *t, kt_array *a, kt_access access, kt_placement place,
                devarray **out, kt_error *err) {
  devarray *d = tuner_devarray(t, a);
  *out = d;
  if (d && (d->access | access) == d->access && d->place == place) return 0;
  if (d) {
    access |= d->access;
    devarray_clear(t, d);
  } else {
    if (kt_grow(&t->arrays, &t->caparrays, t->narrays + 1, sizeof *t->arrays, err)) return -1;
    d = &t->arrays[t->narrays++];
    memset(d, 0, sizeof *d);
  }
  *out = d;
  d->array = a;
  d->access = access;
  d->place = place;
  kt_array_retain(a);
  if (make_buffers(t, d, err) == 0) return 1;
  /* No half-made device copy stays behind (a placement the device lacks). */
  devarray_clear(t, d);
  *d = t->arrays[--t->narrays];
  return -1;
}

static int finish_queue(kt_tuner *t, kt_error *err) {
  kt_fault fault;
  return t->be->finish(t->ctx, 0, &fault, err);
}

/* The upload of a new binding ends with a copy on queue 0 (from the pristine
** copy): waited for, so that a launcher's transfer on another queue is not
** overwritten by it. */
devarray *tuner_bind_array(kt_tuner *t, kt_array *a, kt_access access, kt_placement place,
                           kt_error *err) {
  devarray *d;
  int rc = bind(t, a, access, place, &d, err);
  if (rc < 0 || (rc > 0 && (tuner_upload_array(t, d, err) || finish_queue(t, err)))) return NULL;
  return d;
}

static int bind_use(kt_array *a, kt_access access, kt_placement place, void *ud) {
  bind_ctx *b = ud;
  devarray *d;
  return bind(b->t, a, access, place, &d, b->err) < 0 ? -1 : 0;
}

int tuner_bind(kt_tuner *t, const kt_task *task, kt_error *err) {
  bind_ctx b = {t, err};
  return tuner_each_array(task, bind_use, &b, err);
}

static int upload_use(kt_array *a, kt_access access, kt_placement place, void *ud) {
  (void)access, (void)place;
  bind_ctx *b = ud;
  return tuner_upload_array(b->t, tuner_devarray(b->t, a), b->err);
}

int tuner_upload(kt_tuner *t, const kt_task *task, double *ns, kt_error *err) {
  int64_t t0 = kt_now_ns();
  bind_ctx b = {t, err};
  if (tuner_bind(t, task, err) || tuner_each_array(task, upload_use, &b, err) ||
      finish_queue(t, err))
    return -1;
  if (ns) *ns += (double)(kt_now_ns() - t0);
  return 0;
}

int tuner_protect(kt_tuner *t, devarray *d, int queue, kt_error *err) {
  if (d->dirty) return 0;
  size_t bytes = kt_array_bytes(d->array);
  if (!d->pristine) {
    if (!(d->pristine = t->be->buffer_new(t->ctx, bytes, KT_PLACE_DEVICE, KT_READ_WRITE, err)) ||
        t->be->buffer_copy(t->ctx, queue, d->pristine, 0, d->buf, 0, bytes, err))
      return kt_fail_prefix(err, "keeping a pristine copy of %s[%zu]: ", d->array->type->name,
                            d->array->length);
  }
  d->dirty = true;
  return 0;
}

int tuner_restore(kt_tuner *t, kt_error *err) {
  int restored = 0;
  for (size_t i = 0; i < t->narrays; i++) {
    devarray *d = &t->arrays[i];
    if (!d->dirty || (t->keep_outputs && d->access == KT_WRITE)) continue;
    if (t->be->buffer_copy(t->ctx, 0, d->buf, 0, d->pristine, 0, kt_array_bytes(d->array), err))
      return -1;
    d->dirty = false;
    restored++;
    t->restores++;
  }
  return restored;
}

/* After the context was lost (a timeout, a crashed device process) every
** buffer and program is gone: forget them, so that they are made again. */
bool tuner_recover(kt_tuner *t) {
  uint64_t g = tuner_generation(t);
  bool reopened = t->reopened;
  t->reopened = false;
  if (g == t->generation) return reopened;
  forget_arrays(t);
  free_unchanged(t);
  kt_build_cache_clear(t->cache);
  t->generation = g;
  return true;
}

/* A CPU device (PoCL) compiles a kernel for its work-group size when it
** is first launched, after any compile of the same process in progress
** (one compiles at a time): on a slow machine, seconds before the kernel
** runs; and the kernel shares the processors with every other job. So
** that a correct configuration is not stopped before it ran, whatever the
** machine's load, its deadline moves by the time the compiles in progress
** take and the device process waits for a processor (the backend's
** on_host), and leaves the kernel's own compile twice the longest compile
** so far. */
static bool on_host(const kt_tuner *t) {
  return t->cache && strcmp(kt_device_string(&t->device, "type"), "cpu") == 0;
}

void tuner_set_deadline(kt_tuner *t, int64_t deadline_ns) {
  bool cpu = on_host(t);
  if (deadline_ns && cpu) deadline_ns += (int64_t)(2 * kt_build_cache_stats(t->cache).longest_ns);
  if (t->be->set_deadline) t->be->set_deadline(t->ctx, deadline_ns, cpu);
}

bool tuner_can_time_out(const kt_tuner *t) { return t->be->set_deadline != NULL; }

int tuner_read_async(kt_tuner *t, const kt_array *a, kt_array *dst, kt_error *err) {
  devarray *d = tuner_devarray(t, a);
  if (!d) return kt_fail(err, "the array is not used by any kernel of this task");
  dst->changes++;
  return t->be->buffer_read(t->ctx, 0, d->buf, 0, kt_array_bytes(a), dst->data, false, err);
}

int tuner_read(kt_tuner *t, const kt_array *a, kt_array *dst, kt_error *err) {
  devarray *d = tuner_devarray(t, a);
  if (!d) return kt_fail(err, "the array is not used by any kernel of this task");
  dst->changes++;
  return t->be->buffer_read(t->ctx, 0, d->buf, 0, kt_array_bytes(a), dst->data, true, err);
}
