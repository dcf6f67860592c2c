/*
** backend_remote.c: the tuner's side of an isolated device (remote.h).
** Each call becomes a message to the device server; calls that need no
** answer (launches, copies, frees) are sent without waiting, and their
** failures come back with the next FINISH. A wait that runs past the
** deadline, or a server that dies, loses the context: the server is
** killed, the generation counts up, and the next call starts a new one.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device_wire.h"
#include "devout.h"
#include "remote.h"
#include "remote_int.h"

static void rm_close(kt_bctx *c);

void kt_remote_set_wait(kt_bctx *c, kt_wait_hook hook) { c->wait = hook; }

/* What a new server process runs (remote_link.c forks it). */
static void serve(int main_fd, const int *compile_fds, int n, void *staging, size_t staging_size) {
  kt_server_keep_only(main_fd, compile_fds, n);
  kt_server_main(main_fd, compile_fds, n, staging, staging_size);
}

#ifndef MAP_POPULATE
#define MAP_POPULATE 0
#endif

/* A device's staging area is made whole at once (populate): its first
** transfers take no page faults, which cost the first tuning's set-up. */
static kt_bctx *ctx_new(int channels, bool populate, kt_error *err) {
  kt_bctx *c = kt_calloc(1, sizeof *c, err);
  if (!c) return NULL;
  c->fd = -1;
  c->generation = 1;
  c->nchannels = channels > 0 ? channels : 1;
  c->cfds = kt_calloc((size_t)c->nchannels, sizeof *c->cfds, err);
  c->cbusy = kt_calloc((size_t)c->nchannels, sizeof *c->cbusy, err);
  c->staging_size = KT_STAGING_BYTES;
  c->staging = mmap(NULL, c->staging_size, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);
  pthread_mutex_init(&c->lock, NULL);
  pthread_cond_init(&c->freed, NULL);
  kt_msg_init(&c->out);
  kt_msg_init(&c->in);
  kt_msg_init(&c->gathered);
  kt_devout_init(&c->said);
  if (!c->cfds || !c->cbusy || c->staging == MAP_FAILED) {
    if (c->staging == MAP_FAILED) c->staging = NULL;
    kt_fail(err, "cannot set up the device process's connections");
    rm_close(c);
    return NULL;
  }
  for (int i = 0; i < c->nchannels; i++) c->cfds[i] = -1;
  c->serve = serve;
  return c;
}

static void rm_close(kt_bctx *c) {
  if (!c) return;
  if (c->alive) rm_stop_server(c, NULL, 0); /* the driver cleans up after its process */
  for (size_t i = 0; i < c->nevents; i++) c->events[i]->gen = 0;
  free(c->events);
  free(c->reads);
  if (c->staging) munmap(c->staging, c->staging_size);
  pthread_cond_destroy(&c->freed);
  pthread_mutex_destroy(&c->lock);
  kt_msg_free(&c->out);
  kt_msg_free(&c->in);
  kt_msg_free(&c->gathered);
  kt_devout_free(&c->said);
  kt_device_clear(&c->dev);
  free(c->cfds);
  free(c->cbusy);
  free(c);
}

kt_bctx *kt_remote_open(const kt_device_info *dev, int channels, kt_error *err) {
  if (kt_drivers_in_process())
    return kt_fail(err, "this process uses a device driver directly (a tuner with isolate = "
                        "false), so it can no longer start isolated device processes"), NULL;
  kt_bctx *c = ctx_new(channels, true, err);
  if (!c) return NULL;
  if (kt_device_copy(&c->dev, dev, err)) {
    rm_close(c);
    return NULL;
  }
  c->has_device = true;
  c->far = dev->far;
  c->node = dev->rank;
  if (rm_spawn(c, err)) {
    rm_close(c);
    return NULL;
  }
  return c;
}

static kt_bctx *rm_open(const kt_device_info *dev, kt_error *err) {
  return kt_remote_open(dev, 1, err);
}

/* ---- listing devices ---- */

int kt_devices_remote(kt_device_info **list, size_t *n, char *why, size_t whysize,
                      kt_error *err) {
  return kt_devices_remote_far(NULL, 0, list, n, why, whysize, err);
}

int kt_devices_remote_far(const kt_far *far, int node, kt_device_info **list, size_t *n,
                          char *why, size_t whysize, kt_error *err) {
  *list = NULL;
  *n = 0;
  kt_bctx *c = ctx_new(1, false, err);
  kt_fault fault;
  if (c) c->far = far, c->node = node;
  int rc = c && rm_spawn(c, err) == 0 && begin(c, OP_ENUMERATE, err) == 0 ? call(c, &fault, err) : -1;
  uint32_t count = rc == 0 ? kt_msg_get_u32(&c->in) : 0;
  if (rc == 0 && !(*list = kt_calloc(count ? count : 1, sizeof **list, err))) rc = -1;
  for (uint32_t i = 0; i < count && rc == 0; i++) {
    rc = kt_msg_get_device(&c->in, &(*list)[i], err);
    *n = i + 1;
  }
  char *reason = rc == 0 ? kt_msg_get_str(&c->in) : NULL;
  if (why && whysize) snprintf(why, whysize, "%s", reason ? reason : "");
  free(reason);
  rm_close(c);
  if (rc) {
    kt_devices_free(*list, *n);
    *list = NULL;
    *n = 0;
  }
  return rc;
}

/* ---- buffers ---- */

static kt_bbuf *rm_buffer_new(kt_bctx *c, size_t bytes, kt_placement place, kt_access access,
                              kt_error *err) {
  kt_bbuf *b = kt_alloc(sizeof *b, err);
  kt_fault fault;
  if (!b || begin(c, OP_BUF_NEW, err)) {
    free(b);
    return NULL;
  }
  *b = (kt_bbuf){c->generation, ++c->next_id};
  kt_msg_put_u32(&c->out, b->id);
  kt_msg_put_u64(&c->out, bytes);
  kt_msg_put_u32(&c->out, (uint32_t)place);
  kt_msg_put_u32(&c->out, (uint32_t)access);
  if (call(c, &fault, err)) {
    free(b);
    return NULL;
  }
  return b;
}

/* Frees of objects from an earlier server have nothing left to free. */
static void free_remote(kt_bctx *c, uint32_t op, uint64_t gen, uint32_t id) {
  if (!c->alive || gen != c->generation || begin(c, op, NULL)) return;
  kt_msg_put_u32(&c->out, id);
  post(c, NULL);
}

static void rm_buffer_free(kt_bctx *c, kt_bbuf *b) {
  if (!b) return;
  free_remote(c, OP_BUF_FREE, b->gen, b->id);
  free(b);
}

/* Transfers go through the staging area (remote_stage.c). */
static int transfer(kt_bctx *c, int op, int q, kt_bbuf *b, size_t off, size_t bytes,
                    unsigned char *host, kt_error *err) {
  if (stale(c, b->gen, NULL, err) || rm_unstage(c, err)) return -1;
  rm_move m = {(uint32_t)op, b->id, q, off};
  if (op == OP_WRITE) return rm_stage_write(c, &m, host, bytes, err);
  return rm_stage_read(c, &m, bytes, rm_copy_out, host, err);
}

static int differs(void *ud, size_t done, const unsigned char *chunk, size_t bytes) {
  return memcmp(chunk, (const unsigned char *)ud + done, bytes) != 0;
}

/* Each chunk read is compared in the staging area, where it lands. */
static int rm_buffer_equal(kt_bctx *c, int q, kt_bbuf *b, size_t off, size_t bytes,
                           const void *want, kt_error *err) {
  if (stale(c, b->gen, NULL, err) || rm_unstage(c, err)) return -1;
  rm_move m = {OP_READ, b->id, q, off};
  int rc = rm_stage_read(c, &m, bytes, differs, (void *)want, err);
  return rc < 0 ? -1 : rc == 0;
}

static int rm_buffer_write(kt_bctx *c, int q, kt_bbuf *b, size_t off, size_t bytes,
                           const void *src, bool blocking, kt_error *err) {
  if (!blocking) return rm_write_async(c, q, b, off, bytes, src, err);
  return transfer(c, OP_WRITE, q, b, off, bytes, (unsigned char *)src, err);
}

static int rm_buffer_read(kt_bctx *c, int q, kt_bbuf *b, size_t off, size_t bytes, void *dst,
                          bool blocking, kt_error *err) {
  if (!blocking) return rm_read_async(c, q, b, off, bytes, dst, err);
  return transfer(c, OP_READ, q, b, off, bytes, dst, err);
}

static int rm_buffer_copy(kt_bctx *c, int q, kt_bbuf *dst, size_t doff, kt_bbuf *src,
                          size_t soff, size_t bytes, kt_error *err) {
  if (stale(c, dst->gen, NULL, err) || stale(c, src->gen, NULL, err) ||
      begin(c, OP_COPY, err))
    return -1;
  kt_msg_put_u32(&c->out, (uint32_t)q);
  kt_msg_put_u32(&c->out, dst->id);
  kt_msg_put_u64(&c->out, doff);
  kt_msg_put_u32(&c->out, src->id);
  kt_msg_put_u64(&c->out, soff);
  kt_msg_put_u64(&c->out, bytes);
  return post(c, err);
}

static int rm_buffer_fill_zero(kt_bctx *c, int q, kt_bbuf *b, size_t off, size_t bytes,
                               kt_error *err) {
  if (stale(c, b->gen, NULL, err) || begin(c, OP_FILL_ZERO, err)) return -1;
  kt_msg_put_u32(&c->out, (uint32_t)q);
  kt_msg_put_u32(&c->out, b->id);
  kt_msg_put_u64(&c->out, off);
  kt_msg_put_u64(&c->out, bytes);
  return post(c, err);
}

/* ---- programs and kernels ---- */

static void rm_prog_free(kt_bctx *c, kt_bprog *p) {
  if (!p) return;
  free_remote(c, OP_PROG_FREE, p->gen, p->id);
  free(p);
}

static kt_bkernel *rm_kernel(kt_bctx *c, kt_bprog *p, const char *name, kt_error *err) {
  kt_fault fault;
  if (stale(c, p->gen, NULL, err)) return NULL;
  kt_bkernel *k = kt_alloc(sizeof *k, err);
  if (!k || begin(c, OP_KERNEL, err)) {
    free(k);
    return NULL;
  }
  *k = (kt_bkernel){c->generation, ++c->next_id, KT_KERNEL_USAGE_UNKNOWN};
  kt_msg_put_u32(&c->out, k->id);
  kt_msg_put_u32(&c->out, p->id);
  kt_msg_put_str(&c->out, name);
  if (call(c, &fault, err)) {
    free(k);
    return NULL;
  }
  kt_usage_get(&c->in, &k->usage);
  return k;
}

static void rm_kernel_free(kt_bctx *c, kt_bkernel *k) {
  if (!k) return;
  free_remote(c, OP_KERNEL_FREE, k->gen, k->id);
  free(k);
}

static kt_kernel_usage rm_kernel_usage(kt_bctx *c, kt_bkernel *k) {
  (void)c;
  return k->usage;
}

/* ---- launches and events ---- */

static int put_args(kt_bctx *c, const kt_launch_arg *args, size_t n, kt_error *err) {
  kt_msg_put_u32(&c->out, (uint32_t)n);
  for (size_t i = 0; i < n; i++) {
    const kt_launch_arg *a = &args[i];
    kt_msg_put_u32(&c->out, (uint32_t)a->kind);
    if (a->kind == KT_LARG_BUFFER) {
      if (stale(c, a->buf->gen, NULL, err)) return -1;
      kt_msg_put_u32(&c->out, a->buf->id);
    } else if (a->kind == KT_LARG_SCALAR || a->kind == KT_LARG_SYMBOL) {
      if (a->kind == KT_LARG_SYMBOL) kt_msg_put_str(&c->out, a->symbol);
      kt_msg_put_u32(&c->out, (uint32_t)a->size);
      kt_msg_put(&c->out, a->bytes, a->size);
    } else {
      kt_msg_put_u64(&c->out, a->size);
    }
  }
  return 0;
}

static int rm_launch(kt_bctx *c, int q, kt_bkernel *k, const kt_launch_arg *args, size_t nargs,
                     int dims, const size_t global[3], const size_t local[3], kt_bevent **ev,
                     kt_fault *fault, kt_error *err) {
  *fault = KT_FAULT_LOST;
  kt_bevent *e = NULL;
  if (stale(c, k->gen, NULL, err) || begin(c, OP_LAUNCH, err)) return -1;
  if (ev && (!(e = kt_alloc(sizeof *e, err)) ||
             kt_grow(&c->events, &c->capevents, c->nevents + 1, sizeof *c->events, err))) {
    free(e);
    *fault = KT_FAULT_FATAL;
    return -1;
  }
  if (e) *e = (kt_bevent){c->generation, ++c->next_id, NAN};
  kt_msg_put_u32(&c->out, (uint32_t)q);
  kt_msg_put_u32(&c->out, k->id);
  kt_msg_put_u32(&c->out, e ? e->id : 0);
  kt_msg_put_u32(&c->out, (uint32_t)dims);
  for (int d = 0; d < 3; d++) kt_msg_put_u64(&c->out, global[d]);
  for (int d = 0; d < 3; d++) kt_msg_put_u64(&c->out, local[d]);
  if (put_args(c, args, nargs, err) || post(c, err)) {
    free(e);
    return -1;
  }
  if (e) {
    c->events[c->nevents++] = e;
    *ev = e;
  }
  *fault = KT_FAULT_NONE;
  return 0;
}

static void forget_event(kt_bctx *c, kt_bevent *e) {
  for (size_t i = 0; i < c->nevents; i++)
    if (c->events[i] == e) {
      c->events[i] = c->events[--c->nevents];
      return;
    }
}

static double rm_event_ns(kt_bctx *c, kt_bevent *e) {
  kt_fault fault;
  if (!isnan(e->ns) || stale(c, e->gen, NULL, NULL) || begin(c, OP_EVENT_NS, NULL)) return e->ns;
  kt_msg_put_u32(&c->out, e->id);
  if (call(c, &fault, NULL)) return -1;
  e->ns = kt_msg_get_f64(&c->in);
  return e->ns;
}

/* The server frees an event when a FINISH reports its time; one freed
** before that is freed there by message. */
static void rm_event_free(kt_bctx *c, kt_bevent *e) {
  if (!e) return;
  forget_event(c, e);
  if (isnan(e->ns)) free_remote(c, OP_EVENT_FREE, e->gen, e->id);
  free(e);
}

static void rm_set_deadline(kt_bctx *c, int64_t deadline_ns, bool on_host) {
  c->deadline = deadline_ns;
  if (deadline_ns) c->waited_at_set = kt_run_delay_self(), c->limit = deadline_ns - kt_now_ns();
  c->on_host = on_host && deadline_ns && !c->far;
  if (!c->on_host) return;
  c->compiled_at_set = rm_compile_ns(c);
  c->delays_pid = c->alive ? c->pid : 0;
  c->delays_at_set.n = 0;
  if (c->delays_pid) kt_run_delays_read(c->delays_pid, &c->delays_at_set);
}

/* A server that died during a compile is lost here, on the owning thread,
** so that the configuration whose compile it was learns of it. */
static uint64_t rm_generation(kt_bctx *c) {
  uint64_t gone = atomic_exchange(&c->gone, 0);
  if (gone == c->generation && c->alive) rm_lose(c, KT_FAULT_LOST, NULL, NULL, NULL);
  return c->generation;
}

static char *rm_take_output(kt_bctx *c) { return kt_devout_take(&c->said); }

static pid_t rm_compiler_pid(kt_bctx *c) {
  pthread_mutex_lock(&c->lock);
  pid_t pid = c->compiler;
  pthread_mutex_unlock(&c->lock);
  return pid;
}

/* From /proc (Linux); elsewhere unknown. */
static size_t rm_resident(kt_bctx *c) {
  char path[64];
  unsigned long size = 0, pages = 0;
  if (!c->alive || c->far) return 0; /* another node's is unknown here */
  snprintf(path, sizeof path, "/proc/%d/statm", (int)c->pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int got = fscanf(f, "%lu %lu", &size, &pages);
  fclose(f);
  long page = sysconf(_SC_PAGESIZE);
  return got == 2 && page > 0 ? (size_t)pages * (size_t)page : 0;
}

static void rm_renew(kt_bctx *c) { rm_lose(c, KT_FAULT_NONE, NULL, NULL, "renewed"); }

static int rm_enumerate(kt_device_info **list, size_t *n, size_t *cap, const char **why,
                        kt_error *err) {
  (void)list, (void)n, (void)cap, (void)err;
  *why = NULL; /* remote devices are listed by kt_devices_remote */
  return 0;
}

/* Two tables that differ in whether a program serves one kernel, as the
** real backend in the device process does. */
#define REMOTE_OPS                          \
  .name = "remote",                         \
  .enumerate = rm_enumerate,                \
  .open = rm_open,                          \
  .close = rm_close,                        \
  .buffer_new = rm_buffer_new,              \
  .buffer_free = rm_buffer_free,            \
  .buffer_write = rm_buffer_write,          \
  .buffer_read = rm_buffer_read,            \
  .buffer_equal = rm_buffer_equal,          \
  .buffer_copy = rm_buffer_copy,            \
  .buffer_fill_zero = rm_buffer_fill_zero,  \
  .compile = rm_compile,                    \
  .prog_free = rm_prog_free,                \
  .prog_binary = rm_prog_binary,            \
  .prog_load = rm_prog_load,                \
  .build_there = rm_build_there,            \
  .kernel = rm_kernel,                      \
  .kernel_free = rm_kernel_free,            \
  .kernel_usage = rm_kernel_usage,          \
  .launch = rm_launch,                      \
  .finish = rm_finish_queue,                \
  .event_ns = rm_event_ns,                  \
  .event_free = rm_event_free,              \
  .set_deadline = rm_set_deadline,          \
  .generation = rm_generation,              \
  .take_output = rm_take_output,            \
  .compiler_pid = rm_compiler_pid,          \
  .resident = rm_resident,                  \
  .renew = rm_renew,                        \
  .marker = rm_marker,                      \
  .queue_wait = rm_queue_wait,              \
  .energy = rm_energy,                      \
  .counters_begin = rm_counters_begin,      \
  .counters_end = rm_counters_end

const kt_backend kt_backend_remote = {REMOTE_OPS, .program_per_kernel = false};
static const kt_backend remote_per_kernel = {REMOTE_OPS, .program_per_kernel = true};

const kt_backend *kt_remote_backend(const kt_device_info *dev) {
  return dev->backend->program_per_kernel ? &remote_per_kernel : &kt_backend_remote;
}
