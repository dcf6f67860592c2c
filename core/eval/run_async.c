/*
** run_async.c: what a launcher queues without waiting: reads and writes
** that do not block, and events that order queues.
**
** Each transfer works on memory of its own (a write's copy of its source,
** a read's landing place), so that the arrays stay the Lua code's to use
** and to collect: a read's data reaches its array when its queue is
** synchronised, or at the end of the execution (the launcher has returned
** and every queue is finished). Events live until the end of the
** execution that made them.
*/
#include <stdlib.h>
#include <string.h>

#include "run_int.h"
#include "tuner_int.h"

typedef struct pending {
  int queue;
  kt_array *dst; /* a read's array (retained); NULL for a write */
  void *data;    /* a read's data, or a write's copy */
  size_t bytes;
} pending;

struct kt_run_async {
  pending *items;
  size_t n, cap;
  kt_bevent **events;
  size_t nevents, capevents;
};

static struct kt_run_async *state(kt_run *run, kt_error *err) {
  if (!run->async) run->async = kt_calloc(1, sizeof *run->async, err);
  return run->async;
}

/* A transfer that failed fails the configuration, as in run.c. */
static int fails(kt_run *run, kt_fault fault) {
  run->fault = fault;
  return -1;
}

/* Room for one more transfer of bytes; counted once it is queued. */
static pending *next_pending(kt_run *run, int queue, size_t bytes, kt_error *err) {
  struct kt_run_async *as = state(run, err);
  if (!as || kt_grow(&as->items, &as->cap, as->n + 1, sizeof *as->items, err)) return NULL;
  void *data = kt_alloc(bytes ? bytes : 1, err);
  if (!data) return NULL;
  as->items[as->n] = (pending){queue, NULL, data, bytes};
  return &as->items[as->n];
}

int kt_run_read_async(kt_run *run, const kt_array *a, kt_array *dst, size_t count, int queue,
                      kt_error *err) {
  if (run_read_count(run, a, dst, &count, err)) return -1;
  kt_bbuf *buf = run_buffer_of(run, a, KT_READ, KT_PLACE_DEVICE, err);
  if (!buf) return fails(run, KT_FAULT_RUNTIME);
  pending *p = next_pending(run, queue, count * a->type->size, err);
  if (!p) return fails(run, KT_FAULT_FATAL);
  kt_tuner *t = run->tuner;
  if (t->be->buffer_read(t->ctx, queue, buf, 0, p->bytes, p->data, false, err)) {
    free(p->data);
    return fails(run, KT_FAULT_RUNTIME);
  }
  kt_array_retain(dst);
  p->dst = dst;
  dst->changes++;
  run->async->n++;
  return 0;
}

int kt_run_write_async(kt_run *run, const kt_array *a, const kt_array *src, int queue,
                       kt_error *err) {
  size_t count;
  if (run_write_count(run, a, src, &count, err)) return -1;
  kt_bbuf *buf = run_changing(run, a, queue, err);
  if (!buf) return fails(run, KT_FAULT_RUNTIME);
  pending *p = next_pending(run, queue, count * a->type->size, err);
  if (!p) return fails(run, KT_FAULT_FATAL);
  memcpy(p->data, src->data, p->bytes);
  kt_tuner *t = run->tuner;
  if (t->be->buffer_write(t->ctx, queue, buf, 0, p->bytes, p->data, false, err)) {
    free(p->data);
    return fails(run, KT_FAULT_RUNTIME);
  }
  run->async->n++;
  return 0;
}

int kt_run_event(kt_run *run, int queue, size_t *event, kt_error *err) {
  kt_tuner *t = run->tuner;
  struct kt_run_async *as = state(run, err);
  if (!as || kt_grow(&as->events, &as->capevents, as->nevents + 1, sizeof *as->events, err))
    return fails(run, KT_FAULT_FATAL);
  if (!t->be->marker)
    return kt_fail(err, "event: the %s backend has no events between queues", t->be->name);
  if (t->be->marker(t->ctx, queue, &as->events[as->nevents], err))
    return kt_fail_prefix(err, "event: "), fails(run, KT_FAULT_RUNTIME);
  *event = as->nevents++;
  return 0;
}

int kt_run_wait(kt_run *run, size_t event, int queue, kt_error *err) {
  kt_tuner *t = run->tuner;
  if (!run->async || event >= run->async->nevents)
    return kt_fail(err, "wait: no event %zu in this execution", event);
  if (t->be->queue_wait(t->ctx, queue, run->async->events[event], err))
    return kt_fail_prefix(err, "wait: "), fails(run, KT_FAULT_RUNTIME);
  return 0;
}

/* A finished read puts its data in its array, unless the wait failed. */
static void complete(pending *p, bool ok) {
  if (p->dst) {
    size_t room = p->dst->length * p->dst->type->size;
    if (ok) memcpy(p->dst->data, p->data, p->bytes < room ? p->bytes : room);
    kt_array_release(p->dst);
  }
  free(p->data);
}

void run_async_synced(kt_run *run, int queue, bool ok) {
  struct kt_run_async *as = run->async;
  if (!as) return;
  size_t kept = 0;
  for (size_t i = 0; i < as->n; i++) {
    if (queue < 0 || as->items[i].queue == queue) complete(&as->items[i], ok);
    else as->items[kept++] = as->items[i];
  }
  as->n = kept;
}

void run_async_end(kt_run *run, bool ok) {
  struct kt_run_async *as = run->async;
  if (!as) return;
  run_async_synced(run, -1, ok);
  for (size_t i = 0; i < as->nevents; i++) run->tuner->be->event_free(run->tuner->ctx, as->events[i]);
  as->nevents = 0;
}

void run_async_free(kt_run *run) {
  if (!run->async) return;
  run_async_end(run, false);
  free(run->async->items);
  free(run->async->events);
  free(run->async);
  run->async = NULL;
}
