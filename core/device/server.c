/*
** server.c: the device server, the child process that owns a device
** context for an isolated tuner (see remote.h). Its main thread serves
** the main connection in order; one thread per compile connection
** compiles, so that compiles overlap runs as they do in-process.
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "device_wire.h"
#include "remote.h"
#include "remote_proto.h"
#include "server_build.h"
#include "server_loads.h"
#include "wire.h"

/* Handles by the number the tuner gave them. Numbers only grow (one per
** buffer, program, kernel and event ever made), so they are hashed into
** slots as many as the handles alive need, not as the largest number:
** open addressing, linear probing; p == NULL marks a free slot. */
typedef struct slot {
  uint32_t id;
  void *p;
} slot;

typedef struct table {
  slot *slots;
  size_t cap, n; /* cap: 0 or a power of two */
} table;

typedef struct pending_event {
  uint32_t id;
  int queue;
} pending_event;

/* Host memory of a transfer that does not block (remote_async.c): a
** write's copy (token 0) until its queue is finished, a read's data until
** the tuner takes it. */
typedef struct host_block {
  uint32_t token;
  int queue;
  unsigned char *data;
  size_t bytes;
} host_block;

typedef struct server {
  const kt_backend *be;
  kt_bctx *ctx;
  kt_device_info *devices;
  size_t ndevices;
  table bufs, progs, kernels, events;
  pthread_mutex_t progs_lock; /* compile threads add programs */
  pthread_cond_t opened;      /* compiles wait (under progs_lock) for OP_OPEN, */
  int open_state;             /* which sets this: 1 open, -1 failed, 0 not yet */
  pending_event *pending;     /* launched and not yet reported by a FINISH */
  size_t npending, cappending;
  kt_fault deferred;          /* the first failure of an asynchronous operation */
  char deferred_msg[KT_ERRMAX];
  unsigned char *staging;
  size_t staging_size;
  char **names;               /* symbol names of the launch being read */
  size_t nnames, capnames;
  host_block *blocks;         /* of transfers that do not block */
  size_t nblocks, capblocks;
  kt_loads *loads;            /* the compile threads' binaries, loaded when ... */
  kt_queued queued;           /* ... no queue has work (kt_queued_note), */
  bool collecting;            /* ... and no counters' collection holds the modules */
  kt_server_disk disk;        /* its own program cache (OP_BUILD) */
} server;

typedef struct compile_thread {
  server *s;
  int fd;
} compile_thread;

static size_t home(const table *t, uint32_t id) {
  return (size_t)(id * 2654435761u) & (t->cap - 1); /* Knuth's multiplicative hash */
}

static size_t find(const table *t, uint32_t id) {
  size_t i = home(t, id);
  while (t->slots[i].p && t->slots[i].id != id) i = (i + 1) & (t->cap - 1);
  return i;
}

static void place(table *t, uint32_t id, void *p) {
  size_t i = find(t, id);
  if (!t->slots[i].p) t->n++;
  t->slots[i] = (slot){id, p};
}

static int table_put(table *t, uint32_t id, void *p) {
  if ((t->n + 1) * 2 > t->cap) { /* at most half full */
    table old = *t;
    size_t cap = old.cap ? old.cap * 2 : 64;
    slot *slots = calloc(cap, sizeof *slots);
    if (!slots) return -1;
    *t = (table){slots, cap, 0};
    for (size_t i = 0; i < old.cap; i++)
      if (old.slots[i].p) place(t, old.slots[i].id, old.slots[i].p);
    free(old.slots);
  }
  place(t, id, p);
  return 0;
}

static void *table_get(const table *t, uint32_t id) {
  return t->cap ? t->slots[find(t, id)].p : NULL;
}

/* Takes the handle out; the slots after it in its run move back where a
** search will find them. */
static void *table_take(table *t, uint32_t id) {
  if (!t->cap) return NULL;
  size_t i = find(t, id);
  void *p = t->slots[i].p;
  if (!p) return NULL;
  t->slots[i].p = NULL;
  t->n--;
  for (size_t j = (i + 1) & (t->cap - 1); t->slots[j].p; j = (j + 1) & (t->cap - 1)) {
    slot moved = t->slots[j];
    t->slots[j].p = NULL;
    t->n--;
    place(t, moved.id, moved.p);
  }
  return p;
}

/* ---- replies ---- */

static void reply(int fd, kt_msg *out) {
  if (kt_wire_send(fd, out) != KT_WIRE_OK) _exit(0); /* the tuner is gone */
}

static void start_reply(kt_msg *out, kt_fault fault, const char *msg) {
  kt_msg_reset(out);
  kt_msg_put_u32(out, (uint32_t)fault);
  if (fault != KT_FAULT_NONE) kt_msg_put_str(out, msg);
}

static void reply_status(int fd, kt_msg *out, int rc, kt_fault fault, const kt_error *err) {
  start_reply(out, rc ? (fault ? fault : KT_FAULT_FATAL) : KT_FAULT_NONE, err->msg);
  reply(fd, out);
}

static void defer(server *s, kt_fault fault, const kt_error *err) {
  if (s->deferred != KT_FAULT_NONE) return;
  s->deferred = fault ? fault : KT_FAULT_RUNTIME;
  snprintf(s->deferred_msg, sizeof s->deferred_msg, "%s", err->msg);
}

/* ---- devices ---- */

static void op_enumerate(server *s, int fd, kt_msg *out) {
  char why[1024];
  kt_error err;
  if (kt_devices_here(&s->devices, &s->ndevices, why, sizeof why, &err)) {
    reply_status(fd, out, -1, KT_FAULT_FATAL, &err);
    return;
  }
  start_reply(out, KT_FAULT_NONE, NULL);
  kt_msg_put_u32(out, (uint32_t)s->ndevices);
  for (size_t i = 0; i < s->ndevices; i++) kt_msg_put_device(out, &s->devices[i]);
  kt_msg_put_str(out, why);
  reply(fd, out);
}

/* A program its own cache kept, loaded as OP_PROG_LOAD's are. */
static kt_bprog *load_idle(void *ud, const unsigned char *bytes, size_t size, const char *options,
                           const char *name, char **log, kt_error *err) {
  return kt_loads_load(((server *)ud)->loads, bytes, size, options, name, log, err);
}

static void op_open(server *s, kt_msg *in, int fd, kt_msg *out) {
  char *id = kt_msg_get_str(in), why[1024];
  kt_error err;
  int rc = -1;
  if (!id) {
    kt_fail(&err, "no device named");
  } else if (!s->devices && kt_devices_here(&s->devices, &s->ndevices, why, sizeof why, &err)) {
    /* err says why */
  } else {
    int found = kt_device_find(s->devices, s->ndevices, id, &err);
    if (found >= 0) {
      s->be = s->devices[found].backend;
      s->ctx = s->be->open(&s->devices[found], &err);
      rc = s->ctx ? 0 : -1;
      kt_server_disk_init(&s->disk, &s->devices[found], s->be->load_waits ? load_idle : NULL, s);
      /* Transfers through a page-locked staging area run at the bus's full
      ** speed; where it cannot be locked they go on through pageable memory. */
      kt_error perr;
      if (rc == 0 && s->be->host_pin) s->be->host_pin(s->ctx, s->staging, s->staging_size, &perr);
    }
  }
  free(id);
  pthread_mutex_lock(&s->progs_lock);
  s->open_state = rc == 0 ? 1 : -1;
  pthread_cond_broadcast(&s->opened);
  pthread_mutex_unlock(&s->progs_lock);
  reply_status(fd, out, rc, KT_FAULT_FATAL, &err);
}

/* ---- buffers and transfers ---- */

static kt_bbuf *buffer(server *s, uint32_t id, kt_error *err) {
  kt_bbuf *b = table_get(&s->bufs, id);
  if (!b) kt_fail(err, "no buffer %u in the device server", id);
  return b;
}

/* The part [at, at + bytes) of the staging area, or NULL when it is not in it. */
static unsigned char *staged(server *s, uint64_t at, uint64_t bytes, kt_error *err) {
  if (at <= s->staging_size && bytes <= s->staging_size - at) return s->staging + at;
  kt_fail(err, "a transfer of %llu bytes at %llu exceeds the staging area (%zu bytes)",
          (unsigned long long)bytes, (unsigned long long)at, s->staging_size);
  return NULL;
}

static void op_buf_new(server *s, kt_msg *in, int fd, kt_msg *out) {
  uint32_t id = kt_msg_get_u32(in);
  uint64_t bytes = kt_msg_get_u64(in);
  kt_placement place = (kt_placement)kt_msg_get_u32(in);
  kt_access access = (kt_access)kt_msg_get_u32(in);
  kt_error err;
  kt_bbuf *b = s->be->buffer_new(s->ctx, (size_t)bytes, place, access, &err);
  if (b && table_put(&s->bufs, id, b)) {
    s->be->buffer_free(s->ctx, b);
    b = NULL;
    kt_fail(&err, "out of memory in the device server");
  }
  reply_status(fd, out, b ? 0 : -1, KT_FAULT_FATAL, &err);
}

static void op_transfer(server *s, kt_msg *in, int fd, kt_msg *out, bool write) {
  uint32_t id = kt_msg_get_u32(in), queue = kt_msg_get_u32(in);
  uint64_t off = kt_msg_get_u64(in), bytes = kt_msg_get_u64(in), at = kt_msg_get_u64(in);
  kt_error err;
  kt_bbuf *b = buffer(s, id, &err);
  unsigned char *p = b ? staged(s, at, bytes, &err) : NULL;
  int rc = -1;
  if (p)
    rc = write ? s->be->buffer_write(s->ctx, (int)queue, b, off, bytes, p, true, &err)
               : s->be->buffer_read(s->ctx, (int)queue, b, off, bytes, p, true, &err);
  reply_status(fd, out, rc, KT_FAULT_RUNTIME, &err);
}

static void op_copy(server *s, kt_msg *in) {
  uint32_t queue = kt_msg_get_u32(in), dst = kt_msg_get_u32(in);
  uint64_t doff = kt_msg_get_u64(in);
  uint32_t src = kt_msg_get_u32(in);
  uint64_t soff = kt_msg_get_u64(in), bytes = kt_msg_get_u64(in);
  kt_error err;
  kt_bbuf *d = buffer(s, dst, &err), *b = d ? buffer(s, src, &err) : NULL;
  if (!b || s->be->buffer_copy(s->ctx, (int)queue, d, doff, b, soff, bytes, &err))
    defer(s, KT_FAULT_RUNTIME, &err);
}

static void op_fill_zero(server *s, kt_msg *in) {
  uint32_t queue = kt_msg_get_u32(in), id = kt_msg_get_u32(in);
  uint64_t off = kt_msg_get_u64(in), bytes = kt_msg_get_u64(in);
  kt_error err;
  kt_bbuf *b = buffer(s, id, &err);
  if (!b || s->be->buffer_fill_zero(s->ctx, (int)queue, b, off, bytes, &err))
    defer(s, KT_FAULT_RUNTIME, &err);
}

/* ---- programs and kernels ---- */

/* A kernel keeps its name, so that a launch failure reported later by a
** FINISH can say which kernel failed. */
typedef struct named_kernel {
  kt_bkernel *k;
  char *name;
} named_kernel;

static void op_kernel(server *s, kt_msg *in, int fd, kt_msg *out) {
  uint32_t kid = kt_msg_get_u32(in), pid = kt_msg_get_u32(in);
  char *name = kt_msg_get_str(in);
  kt_error err;
  pthread_mutex_lock(&s->progs_lock);
  kt_bprog *prog = table_get(&s->progs, pid);
  pthread_mutex_unlock(&s->progs_lock);
  kt_bkernel *k = NULL;
  named_kernel *nk = NULL;
  if (!prog || !name) kt_fail(&err, "no program %u in the device server", pid);
  else k = s->be->kernel(s->ctx, prog, name, &err);
  if (k && (!(nk = malloc(sizeof *nk)) || table_put(&s->kernels, kid, nk))) {
    s->be->kernel_free(s->ctx, k);
    free(nk);
    k = NULL;
    kt_fail(&err, "out of memory in the device server");
  }
  if (k) *nk = (named_kernel){k, name};
  else free(name);
  start_reply(out, k ? KT_FAULT_NONE : KT_FAULT_LAUNCH, err.msg);
  if (k) kt_usage_put(out, s->be->kernel_usage(s->ctx, k));
  reply(fd, out);
}

static void kernel_free(server *s, named_kernel *nk) {
  s->be->kernel_free(s->ctx, nk->k);
  free(nk->name);
  free(nk);
}

static void op_free(server *s, table *t, kt_msg *in, int kind) {
  void *p = table_take(t, kt_msg_get_u32(in));
  if (!p) return;
  switch (kind) {
    case OP_BUF_FREE: s->be->buffer_free(s->ctx, p); break;
    case OP_KERNEL_FREE: kernel_free(s, p); break;
    case OP_EVENT_FREE: s->be->event_free(s->ctx, p); break;
    default: s->be->prog_free(s->ctx, p); break;
  }
}

static void op_prog_free(server *s, kt_msg *in) {
  pthread_mutex_lock(&s->progs_lock);
  op_free(s, &s->progs, in, OP_PROG_FREE);
  pthread_mutex_unlock(&s->progs_lock);
}

/* ---- launches and events ---- */

/* Symbol names live until the next launch message replaces them. */
static const char *symbol_name(server *s, kt_msg *in) {
  char *name = kt_msg_get_str(in);
  if (!name) return "";
  if (kt_grow(&s->names, &s->capnames, s->nnames + 1, sizeof *s->names, NULL)) {
    free(name);
    return "";
  }
  return s->names[s->nnames++] = name;
}

static void forget_names(server *s) {
  for (size_t i = 0; i < s->nnames; i++) free(s->names[i]);
  s->nnames = 0;
}

static int get_args(server *s, kt_msg *in, kt_launch_arg *args, uint32_t n, kt_error *err) {
  for (uint32_t i = 0; i < n; i++) {
    kt_launch_arg *a = &args[i];
    a->kind = (kt_launch_arg_kind)kt_msg_get_u32(in);
    if (a->kind == KT_LARG_BUFFER) {
      if (!(a->buf = buffer(s, kt_msg_get_u32(in), err))) return -1;
    } else if (a->kind == KT_LARG_SCALAR || a->kind == KT_LARG_SYMBOL) {
      if (a->kind == KT_LARG_SYMBOL) a->symbol = symbol_name(s, in);
      a->size = kt_msg_get_u32(in);
      a->bytes = in->data + in->at;
      in->at += a->size;
      if (in->at > in->len) return kt_fail(err, "a launch message is cut short");
    } else {
      a->size = (size_t)kt_msg_get_u64(in);
    }
  }
  return in->bad ? kt_fail(err, "a launch message is cut short") : 0;
}

static void op_launch(server *s, kt_msg *in) {
  uint32_t queue = kt_msg_get_u32(in), kid = kt_msg_get_u32(in), eid = kt_msg_get_u32(in);
  uint32_t dims = kt_msg_get_u32(in);
  size_t global[3], local[3];
  for (int d = 0; d < 3; d++) global[d] = (size_t)kt_msg_get_u64(in);
  for (int d = 0; d < 3; d++) local[d] = (size_t)kt_msg_get_u64(in);
  uint32_t n = kt_msg_get_u32(in);
  kt_error err;
  kt_launch_arg *args = n ? calloc(n, sizeof *args) : NULL;
  named_kernel *nk = table_get(&s->kernels, kid);
  kt_bevent *ev = NULL;
  kt_fault fault = KT_FAULT_LAUNCH;
  if (!nk) kt_fail(&err, "no kernel %u in the device server", kid);
  else if (n && !args) kt_fail(&err, "out of memory in the device server");
  else if (get_args(s, in, args, n, &err) == 0 &&
           s->be->launch(s->ctx, (int)queue, nk->k, args, n, (int)dims, global, local,
                         eid ? &ev : NULL, &fault, &err) == 0)
    fault = KT_FAULT_NONE;
  free(args);
  forget_names(s);
  if (fault != KT_FAULT_NONE) {
    if (nk) kt_fail_prefix(&err, "kernel %s: ", nk->name);
    defer(s, fault, &err);
    return;
  }
  if (!eid) return;
  if (table_put(&s->events, eid, ev) ||
      kt_grow(&s->pending, &s->cappending, s->npending + 1, sizeof *s->pending, NULL)) {
    s->be->event_free(s->ctx, ev);
    kt_fail(&err, "out of memory in the device server");
    defer(s, KT_FAULT_FATAL, &err);
    return;
  }
  s->pending[s->npending++] = (pending_event){eid, (int)queue};
}

/* ---- transfers that do not block, events between queues ---- */

static host_block *new_block(server *s, uint32_t token, int queue, uint64_t bytes,
                             kt_error *err) {
  if (kt_grow(&s->blocks, &s->capblocks, s->nblocks + 1, sizeof *s->blocks, err)) return NULL;
  unsigned char *data = malloc(bytes ? (size_t)bytes : 1);
  if (!data) return kt_fail(err, "out of memory in the device server"), NULL;
  host_block *hb = &s->blocks[s->nblocks++];
  *hb = (host_block){token, queue, data, (size_t)bytes};
  return hb;
}

static void drop_block(server *s, size_t i) {
  free(s->blocks[i].data);
  s->blocks[i] = s->blocks[--s->nblocks];
}

/* The copies of the writes on a finished queue (-1: all) are done with. */
static void release_writes(server *s, int queue) {
  for (size_t i = s->nblocks; i-- > 0;)
    if (s->blocks[i].token == 0 && (queue < 0 || s->blocks[i].queue == queue)) drop_block(s, i);
}

static void op_transfer_async(server *s, kt_msg *in, int fd, kt_msg *out, bool write) {
  uint32_t id = kt_msg_get_u32(in), queue = kt_msg_get_u32(in);
  uint64_t off = kt_msg_get_u64(in), bytes = kt_msg_get_u64(in);
  uint32_t token = write ? 0 : kt_msg_get_u32(in);
  uint64_t at = write ? kt_msg_get_u64(in) : 0;
  kt_error err;
  kt_bbuf *b = buffer(s, id, &err);
  const unsigned char *p = b && write ? staged(s, at, bytes, &err) : NULL;
  host_block *hb = NULL;
  int rc = -1;
  if (b && (!write || p) && (hb = new_block(s, token, (int)queue, bytes, &err))) {
    if (write) memcpy(hb->data, p, hb->bytes);
    rc = write ? s->be->buffer_write(s->ctx, (int)queue, b, off, hb->bytes, hb->data, false, &err)
               : s->be->buffer_read(s->ctx, (int)queue, b, off, hb->bytes, hb->data, false, &err);
    if (rc) drop_block(s, s->nblocks - 1); /* nothing was queued */
  }
  reply_status(fd, out, rc, KT_FAULT_RUNTIME, &err);
}

/* A read that does not block, straight into the (page-locked) staging
** area: the tuner finds the data there after the FINISH of its queue,
** with no copy and no round trip more (remote_async.c). */
static void op_read_staged(server *s, kt_msg *in, int fd, kt_msg *out) {
  uint32_t id = kt_msg_get_u32(in), queue = kt_msg_get_u32(in);
  uint64_t off = kt_msg_get_u64(in), bytes = kt_msg_get_u64(in), at = kt_msg_get_u64(in);
  kt_error err;
  kt_bbuf *b = buffer(s, id, &err);
  unsigned char *p = b ? staged(s, at, bytes, &err) : NULL;
  int rc = p ? s->be->buffer_read(s->ctx, (int)queue, b, off, bytes, p, false, &err) : -1;
  reply_status(fd, out, rc, KT_FAULT_RUNTIME, &err);
}

static void op_read_take(server *s, kt_msg *in, int fd, kt_msg *out) {
  uint32_t token = kt_msg_get_u32(in);
  uint64_t off = kt_msg_get_u64(in), bytes = kt_msg_get_u64(in), at = kt_msg_get_u64(in);
  kt_error err;
  size_t i = 0;
  while (i < s->nblocks && (s->blocks[i].token != token || token == 0)) i++;
  unsigned char *p = NULL;
  if (i == s->nblocks) kt_fail(&err, "no read %u in the device server", token);
  else if (off > s->blocks[i].bytes || bytes > s->blocks[i].bytes - off)
    kt_fail(&err, "read %u: past its end", token);
  else p = staged(s, at, bytes, &err);
  int rc = p ? 0 : -1;
  if (p) {
    memcpy(p, s->blocks[i].data + off, (size_t)bytes);
    if (off + bytes == s->blocks[i].bytes) drop_block(s, i);
  }
  reply_status(fd, out, rc, KT_FAULT_RUNTIME, &err);
}

static void op_marker(server *s, kt_msg *in, int fd, kt_msg *out) {
  uint32_t queue = kt_msg_get_u32(in), eid = kt_msg_get_u32(in);
  kt_error err;
  kt_bevent *ev = NULL;
  int rc = s->be->marker ? s->be->marker(s->ctx, (int)queue, &ev, &err)
                         : kt_fail(&err, "the %s backend has no events between queues", s->be->name);
  if (rc == 0 && table_put(&s->events, eid, ev)) {
    s->be->event_free(s->ctx, ev);
    rc = kt_fail(&err, "out of memory in the device server");
  }
  reply_status(fd, out, rc, KT_FAULT_RUNTIME, &err);
}

static void op_queue_wait(server *s, kt_msg *in, int fd, kt_msg *out) {
  uint32_t queue = kt_msg_get_u32(in), eid = kt_msg_get_u32(in);
  kt_error err;
  kt_bevent *ev = table_get(&s->events, eid);
  int rc = !ev ? kt_fail(&err, "no event %u in the device server", eid)
           : s->be->queue_wait ? s->be->queue_wait(s->ctx, (int)queue, ev, &err)
                               : kt_fail(&err, "the %s backend has no events between queues",
                                         s->be->name);
  reply_status(fd, out, rc, KT_FAULT_RUNTIME, &err);
}

static double event_ns(server *s, uint32_t id) {
  kt_bevent *ev = table_get(&s->events, id);
  return ev ? s->be->event_ns(s->ctx, ev) : -1;
}

/* Waits, then reports the deferred failure (if any) and the device time
** of every event of the finished queues. */
static void op_finish(server *s, kt_msg *in, int fd, kt_msg *out) {
  int queue = (int)kt_msg_get_u32(in);
  kt_fault fault = KT_FAULT_NONE;
  kt_error err;
  int rc = s->be->finish(s->ctx, queue, &fault, &err);
  release_writes(s, queue);
  if (s->deferred != KT_FAULT_NONE) {
    fault = s->deferred;
    snprintf(err.msg, sizeof err.msg, "%s", s->deferred_msg);
    s->deferred = KT_FAULT_NONE;
    rc = -1;
  }
  start_reply(out, rc ? (fault ? fault : KT_FAULT_RUNTIME) : KT_FAULT_NONE, err.msg);
  size_t kept = 0, at = out->len;
  kt_msg_put_u32(out, 0);
  uint32_t count = 0;
  for (size_t i = 0; i < s->npending; i++) {
    pending_event p = s->pending[i];
    if (queue >= 0 && p.queue != queue) {
      s->pending[kept++] = p;
      continue;
    }
    kt_msg_put_u32(out, p.id);
    kt_msg_put_f64(out, rc ? -1 : event_ns(s, p.id));
    /* Reported once, an event is done with: the tuner frees its side
    ** without a message. */
    kt_bevent *ev = table_take(&s->events, p.id);
    if (ev) s->be->event_free(s->ctx, ev);
    count++;
  }
  s->npending = kept;
  memcpy(out->data + at, &count, sizeof count);
  reply(fd, out);
}

static void op_event_ns(server *s, kt_msg *in, int fd, kt_msg *out) {
  double ns = event_ns(s, kt_msg_get_u32(in));
  start_reply(out, KT_FAULT_NONE, NULL);
  kt_msg_put_f64(out, ns);
  reply(fd, out);
}

/* ---- the connections ---- */

/* OP_COMPILE, OP_PROG_LOAD and OP_BUILD (b): a program made, or why not. */
static kt_bprog *make_program(server *s, uint32_t op, kt_msg *in, char **log, kt_built *b,
                              kt_error *err) {
  size_t size = 0;
  unsigned char *bytes = op == OP_PROG_LOAD ? kt_msg_get_bytes(in, &size) : NULL;
  char *source = op != OP_PROG_LOAD ? kt_msg_get_str(in) : NULL;
  char *options = kt_msg_get_str(in), *name = kt_msg_get_str(in);
  /* The tuner's compile threads may ask before the device is open. */
  pthread_mutex_lock(&s->progs_lock);
  while (s->open_state == 0) pthread_cond_wait(&s->opened, &s->progs_lock);
  bool open = s->open_state > 0;
  pthread_mutex_unlock(&s->progs_lock);
  kt_bprog *prog = NULL;
  if (!open) kt_fail(err, "the device process has no device open");
  else if ((!source && !bytes) || !options || !name) kt_fail(err, "a compile message is cut short");
  else if (op == OP_BUILD)
    prog = kt_server_build(&s->disk, s->be, s->ctx, source, options, name, log, &b->loaded,
                           &b->unkept, err);
  else if (source) prog = s->be->compile(s->ctx, source, options, name, log, err);
  else if (!s->be->prog_load) kt_fail(err, "the %s backend loads no program binaries", s->be->name);
  else if (s->be->load_waits) prog = kt_loads_load(s->loads, bytes, size, options, name, log, err);
  else prog = s->be->prog_load(s->ctx, bytes, size, options, name, log, err);
  free(bytes);
  free(source);
  free(options);
  free(name);
  return prog;
}

static void op_program(server *s, uint32_t op, kt_msg *in, kt_msg *out) {
  uint32_t pid = kt_msg_get_u32(in);
  char *log = NULL;
  kt_error err;
  kt_built b = {false, NULL};
  kt_bprog *prog = make_program(s, op, in, &log, &b, &err);
  pthread_mutex_lock(&s->progs_lock);
  if (prog && table_put(&s->progs, pid, prog)) {
    s->be->prog_free(s->ctx, prog);
    prog = NULL;
    kt_fail(&err, "out of memory in the device server");
  }
  pthread_mutex_unlock(&s->progs_lock);
  start_reply(out, KT_FAULT_NONE, NULL);
  kt_msg_put_u32(out, prog ? 1 : 0);
  kt_msg_put_str(out, log && log[0] ? log : prog ? "" : err.msg);
  if (op == OP_BUILD) kt_msg_put_u32(out, b.loaded), kt_msg_put_str(out, b.unkept ? b.unkept : "");
  free(log);
  free(b.unkept);
}

static void op_prog_binary(server *s, kt_msg *in, kt_msg *out) {
  uint32_t pid = kt_msg_get_u32(in);
  unsigned char *bytes = NULL;
  size_t size = 0;
  kt_error err;
  pthread_mutex_lock(&s->progs_lock);
  kt_bprog *prog = table_get(&s->progs, pid);
  int rc = !prog                ? kt_fail(&err, "no program %u in the device server", pid)
           : !s->be->prog_binary ? kt_fail(&err, "the %s backend gives no binaries", s->be->name)
                                 : s->be->prog_binary(s->ctx, prog, &bytes, &size, &err);
  pthread_mutex_unlock(&s->progs_lock);
  start_reply(out, KT_FAULT_NONE, NULL);
  kt_msg_put_u32(out, rc == 0);
  if (rc == 0) kt_msg_put_bytes(out, bytes, size);
  else kt_msg_put_str(out, err.msg);
  free(bytes);
}

static void *compile_loop(void *arg) {
  compile_thread *c = arg;
  server *s = c->s;
  kt_msg in, out;
  kt_msg_init(&in);
  kt_msg_init(&out);
  while (kt_wire_recv(c->fd, &in, 0) == KT_WIRE_OK) {
    uint32_t op = kt_msg_get_u32(&in);
    if (op == OP_COMPILE || op == OP_PROG_LOAD || op == OP_BUILD) op_program(s, op, &in, &out);
    else if (op == OP_PROG_BINARY) op_prog_binary(s, &in, &out);
    else _exit(3); /* the tuner and the server disagree: stop */
    reply(c->fd, &out);
  }
  _exit(0);
}

static void serve(server *s, int fd) {
  kt_msg in, out;
  kt_msg_init(&in);
  kt_msg_init(&out);
  for (;;) {
    kt_loads_when when = s->collecting         ? KT_LOADS_HELD
                         : s->queued.bits == 0 ? KT_LOADS_NOW
                                               : KT_LOADS_SOON;
    kt_loads_await(s->loads, fd, when, s->be, s->ctx);
    if (kt_wire_recv(fd, &in, 0) != KT_WIRE_OK) break;
    uint32_t op = kt_msg_get_u32(&in);
    kt_queued_note(&s->queued, op, &in);
    switch (op) {
      case OP_ENUMERATE: op_enumerate(s, fd, &out); break;
      case OP_OPEN: op_open(s, &in, fd, &out); break;
      case OP_BUF_NEW: op_buf_new(s, &in, fd, &out); break;
      case OP_WRITE: op_transfer(s, &in, fd, &out, true); break;
      case OP_READ: op_transfer(s, &in, fd, &out, false); break;
      case OP_KERNEL: op_kernel(s, &in, fd, &out); break;
      case OP_FINISH: op_finish(s, &in, fd, &out); break;
      case OP_EVENT_NS: op_event_ns(s, &in, fd, &out); break;
      case OP_WRITE_ASYNC: op_transfer_async(s, &in, fd, &out, true); break;
      case OP_READ_ASYNC: op_transfer_async(s, &in, fd, &out, false); break;
      case OP_READ_TAKE: op_read_take(s, &in, fd, &out); break;
      case OP_READ_STAGED: op_read_staged(s, &in, fd, &out); break;
      case OP_MARKER: op_marker(s, &in, fd, &out); break;
      case OP_QUEUE_WAIT: op_queue_wait(s, &in, fd, &out); break;
      case OP_BUF_FREE: op_free(s, &s->bufs, &in, OP_BUF_FREE); break;
      case OP_COPY: op_copy(s, &in); break;
      case OP_FILL_ZERO: op_fill_zero(s, &in); break;
      case OP_PROG_FREE: op_prog_free(s, &in); break;
      case OP_KERNEL_FREE: op_free(s, &s->kernels, &in, OP_KERNEL_FREE); break;
      case OP_LAUNCH: op_launch(s, &in); break;
      case OP_EVENT_FREE: op_free(s, &s->events, &in, OP_EVENT_FREE); break;
      case OP_ENERGY: kt_server_energy(s->be, s->ctx, &in, &out), reply(fd, &out); break;
      case OP_COUNTERS_BEGIN:
      case OP_COUNTERS_END:
        s->collecting = kt_server_counters(s->be, s->ctx, op, &in, &out);
        reply(fd, &out);
        break;
      default: _exit(3); /* the tuner and the server disagree: stop */
    }
  }
}

void kt_server_main(int main_fd, const int *compile_fds, int channels, void *staging,
                    size_t staging_size) {
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the tuner */
#endif
  signal(SIGINT, SIG_IGN); /* Ctrl-C is the tuner's to handle */
  signal(SIGPIPE, SIG_IGN);
  /* The server lives until the process ends: nothing of it is freed. */
  server *s = calloc(1, sizeof *s);
  if (!s) _exit(2);
  s->staging = staging;
  s->staging_size = staging_size;
  if (!(s->loads = kt_loads_new())) _exit(2);
  pthread_mutex_init(&s->progs_lock, NULL);
  pthread_cond_init(&s->opened, NULL);
  for (int i = 0; i < channels; i++) {
    compile_thread *c = malloc(sizeof *c);
    pthread_t t;
    if (!c) _exit(2);
    *c = (compile_thread){s, compile_fds[i]};
    if (pthread_create(&t, NULL, compile_loop, c) != 0) _exit(2);
    pthread_detach(t);
  }
  serve(s, main_fd);
  _exit(0);
}
