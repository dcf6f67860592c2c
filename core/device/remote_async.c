/*
** remote_async.c: the tuner's side of transfers that do not block and of
** events between queues, for an isolated device (remote.h).
**
** A write that does not block goes through the staging area like any
** other, and the server keeps a copy of each chunk until its queue is
** finished, so the caller's memory is free again on return. A read that
** does not block has the server read into memory of its own; the data
** comes over (through the staging area, a chunk at a time) after the
** FINISH of its queue, which is when a read that does not block is done
** by the backend contract (backend.h). A read that fits in the staging
** area goes straight there instead (the server's is page-locked: the
** bus's full speed), and is copied out after the FINISH with no request
** more: the configuration's outputs compared on the host come back with
** the wait for its warm-up (measure.c). Until then the staging area is
** theirs: whatever else would use it first waits for every queue and
** takes them (rm_unstage); staged reads and the others are never pending
** together. Both are requests with a reply, so that a bad queue is an
** error where it was asked for.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "copy_wide.h"
#include "remote_int.h"

int rm_unstage(kt_bctx *c, kt_error *err) {
  kt_fault fault;
  if (!c->nstaged) return 0;
  return rm_finish_queue(c, -1, &fault, err);
}

int rm_write_async(kt_bctx *c, int q, kt_bbuf *b, size_t off, size_t bytes, const void *src,
                   kt_error *err) {
  if (stale(c, b->gen, NULL, err) || rm_unstage(c, err)) return -1;
  rm_move m = {OP_WRITE_ASYNC, b->id, q, off};
  return rm_stage_write(c, &m, src, bytes, err);
}

/* Where a read of `bytes` goes in the staging area, or SIZE_MAX when it
** goes to the server's memory (too large, other reads are pending there,
** or the server is another node's: the staging area is shared memory
** with a local server only, and the transport (far.h) carries OP_READ_TAKE's bytes);
** staged reads pending that leave no room are taken first, and so are they
** before a read too large, whose data comes through the whole area. */
static size_t staging_slot(kt_bctx *c, size_t bytes, kt_error *err) {
  if (bytes > c->staging_size) return rm_unstage(c, err) ? SIZE_MAX - 1 : SIZE_MAX;
  if (c->nreads > c->nstaged || c->far) return SIZE_MAX;
  size_t at = (c->staged_end + 63) / 64 * 64;
  if (at + bytes <= c->staging_size) return at;
  return rm_unstage(c, err) ? SIZE_MAX - 1 : 0;
}

int rm_read_async(kt_bctx *c, int q, kt_bbuf *b, size_t off, size_t bytes, void *dst,
                  kt_error *err) {
  kt_fault fault;
  if (bytes == 0) return 0;
  if (stale(c, b->gen, NULL, err) ||
      kt_grow(&c->reads, &c->capreads, c->nreads + 1, sizeof *c->reads, err))
    return -1;
  size_t at = staging_slot(c, bytes, err);
  if (at == SIZE_MAX - 1) return -1;
  bool staged = at != SIZE_MAX;
  if (begin(c, staged ? OP_READ_STAGED : OP_READ_ASYNC, err)) return -1;
  rm_read r = {++c->next_id, q, dst, bytes, staged, staged ? at : 0};
  kt_msg_put_u32(&c->out, b->id);
  kt_msg_put_u32(&c->out, (uint32_t)q);
  kt_msg_put_u64(&c->out, off);
  kt_msg_put_u64(&c->out, bytes);
  if (staged) kt_msg_put_u64(&c->out, at);
  else kt_msg_put_u32(&c->out, r.token);
  if (call(c, &fault, err)) return -1;
  c->reads[c->nreads++] = r;
  if (staged) {
    c->nstaged++;
    c->staged_end = at + bytes;
  }
  return 0;
}

static int take(kt_bctx *c, const rm_read *r, kt_error *err) {
  if (r->staged) {
    kt_copy_wide(r->dst, c->staging + r->at, r->bytes);
    return 0;
  }
  rm_move m = {OP_READ_TAKE, r->token, -1, 0};
  return rm_stage_read(c, &m, r->bytes, rm_copy_out, r->dst, err);
}

int rm_take_reads(kt_bctx *c, int q, kt_error *err) {
  size_t kept = 0, staged = 0, end = 0;
  int rc = 0;
  for (size_t i = 0; i < c->nreads; i++) {
    rm_read r = c->reads[i];
    if (q >= 0 && r.queue != q) {
      c->reads[kept++] = r;
      if (r.staged) staged++;
      if (r.staged && r.at + r.bytes > end) end = r.at + r.bytes;
    } else if (rc == 0 && c->alive) {
      rc = take(c, &r, err);
    }
  }
  c->nreads = c->alive ? kept : 0;
  c->nstaged = c->alive ? staged : 0;
  c->staged_end = c->alive ? end : 0;
  return rc;
}

/* A marker is an event without a time: it never joins c->events, and the
** server frees it when the tuner does (rm_event_free). */
int rm_marker(kt_bctx *c, int q, kt_bevent **ev, kt_error *err) {
  kt_fault fault;
  kt_bevent *e = kt_alloc(sizeof *e, err);
  if (!e || begin(c, OP_MARKER, err)) {
    free(e);
    return -1;
  }
  *e = (kt_bevent){c->generation, ++c->next_id, NAN};
  kt_msg_put_u32(&c->out, (uint32_t)q);
  kt_msg_put_u32(&c->out, e->id);
  if (call(c, &fault, err)) {
    free(e);
    return -1;
  }
  *ev = e;
  return 0;
}

int rm_queue_wait(kt_bctx *c, int q, kt_bevent *ev, kt_error *err) {
  kt_fault fault;
  if (stale(c, ev->gen, NULL, err) || begin(c, OP_QUEUE_WAIT, err)) return -1;
  kt_msg_put_u32(&c->out, (uint32_t)q);
  kt_msg_put_u32(&c->out, ev->id);
  return call(c, &fault, err);
}

/* ---- the backend's finish (backend.h) ---- */

static void record_times(kt_bctx *c, uint32_t count) {
  for (uint32_t i = 0; i < count; i++) {
    uint32_t id = kt_msg_get_u32(&c->in);
    double ns = kt_msg_get_f64(&c->in);
    for (size_t j = 0; j < c->nevents; j++)
      if (c->events[j]->id == id) c->events[j]->ns = ns;
  }
}

int rm_finish_queue(kt_bctx *c, int q, kt_fault *fault, kt_error *err) {
  *fault = KT_FAULT_NONE;
  if (!c->alive) return 0; /* nothing can be in flight */
  /* Nothing queued since every queue was finished: no round trip. */
  if (c->quiet) return 0;
  if (begin(c, OP_FINISH, err)) {
    c->nreads = c->nstaged = c->staged_end = 0; /* no server: their data is gone */
    return *fault = KT_FAULT_LOST, -1;
  }
  kt_msg_put_u32(&c->out, (uint32_t)q);
  int rc = call(c, fault, err);
  if (c->alive) record_times(c, kt_msg_get_u32(&c->in)); /* after the status (and message) */
  if (c->alive && c->nreads && rm_take_reads(c, q, rc ? NULL : err) && rc == 0) {
    *fault = KT_FAULT_RUNTIME;
    rc = -1;
  }
  if (rc == 0 && q < 0 && c->alive) c->quiet = true;
  return rc;
}
