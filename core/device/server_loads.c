/*
** server_loads.c: program binaries loaded when the device is idle
** (server_loads.h).
**
** Loading a module waits for the device to finish what is queued on it,
** and launches that another thread makes meanwhile wait behind the load:
** on an H200 with CUDA 13, a cuModuleLoadData beside a 5 ms kernel
** returned when the kernel ended, lazy or eager, and 16 loads on a thread
** beside a stream of 0.5 ms kernels left the device idle about 60 us
** each. A compile thread's load in the middle of a configuration's runs
** thus stopped the device there, once a configuration in a tuning that
** loads each one's program ahead. The compile threads hand their loads to
** the main thread, which makes them where the device waits for the tuner
** anyway: once every queue with work was finished (a FINISH of each, or
** of all: the tuner waits for a configuration's runs with a FINISH of its
** queue), before the next request. A load
** that finds the device busy for longer than LOAD_WAIT_MS (nobody
** finishes the queues, and perhaps the tuner waits for this very
** program) is made then, as before; none is made during a collection of
** hardware counters, whose backend holds its modules until it ends.
*/
#include "server_loads.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define LOAD_WAIT_MS 20
#define OTHERS 63 /* kt_queued's bit for the queues beyond, and work of no queue */

#include "remote_proto.h"

typedef struct load {
  const unsigned char *bytes;
  size_t size;
  const char *options, *name;
  char **log;
  kt_error *err;
  kt_bprog *prog;
  bool done;
  struct load *next;
} load;

struct kt_loads {
  pthread_mutex_t lock;
  pthread_cond_t done;
  load *head, *tail;
  int64_t oldest; /* when the head was handed over (kt_now_ns) */
  int wake[2];    /* a byte a load: wakes the main thread's wait */
};

kt_loads *kt_loads_new(void) {
  kt_loads *l = calloc(1, sizeof *l);
  if (!l) return NULL;
  if (pipe(l->wake) != 0) {
    free(l);
    return NULL;
  }
  for (int i = 0; i < 2; i++) fcntl(l->wake[i], F_SETFL, O_NONBLOCK);
  pthread_mutex_init(&l->lock, NULL);
  pthread_cond_init(&l->done, NULL);
  return l;
}

kt_bprog *kt_loads_load(kt_loads *l, const unsigned char *bytes, size_t size,
                        const char *options, const char *name, char **log, kt_error *err) {
  load x = {bytes, size, options, name, log, err, NULL, false, NULL};
  pthread_mutex_lock(&l->lock);
  if (l->tail) l->tail->next = &x;
  else l->head = &x, l->oldest = kt_now_ns();
  l->tail = &x;
  ssize_t w = write(l->wake[1], "", 1); /* a full pipe wakes it as well */
  (void)w;
  while (!x.done) pthread_cond_wait(&l->done, &l->lock);
  pthread_mutex_unlock(&l->lock);
  return x.prog;
}

/* Makes every load handed over; their threads take the results. */
static void make_all(kt_loads *l, const kt_backend *be, kt_bctx *ctx) {
  pthread_mutex_lock(&l->lock);
  load *x = l->head;
  l->head = l->tail = NULL;
  pthread_mutex_unlock(&l->lock);
  while (x) {
    load *next = x->next; /* x is its thread's, gone once done */
    kt_bprog *prog = be->prog_load(ctx, x->bytes, x->size, x->options, x->name, x->log, x->err);
    pthread_mutex_lock(&l->lock);
    x->prog = prog;
    x->done = true;
    pthread_cond_broadcast(&l->done);
    pthread_mutex_unlock(&l->lock);
    x = next;
  }
}

/* -1: none may be made; 0: make them now; else how long they may wait more. */
static int wait_ms(kt_loads *l, kt_loads_when when) {
  pthread_mutex_lock(&l->lock);
  int ms = -1;
  if (l->head && when != KT_LOADS_HELD) {
    int64_t left = l->oldest + (int64_t)LOAD_WAIT_MS * 1000000 - kt_now_ns();
    ms = when == KT_LOADS_NOW || left <= 0 ? 0 : (int)(left / 1000000) + 1;
  }
  pthread_mutex_unlock(&l->lock);
  return ms;
}

void kt_loads_await(kt_loads *l, int fd, kt_loads_when when, const kt_backend *be,
                    kt_bctx *ctx) {
  for (;;) {
    int ms = wait_ms(l, when);
    if (ms == 0) {
      make_all(l, be, ctx);
      continue;
    }
    struct pollfd p[2] = {{fd, POLLIN, 0}, {l->wake[0], POLLIN, 0}};
    int n = poll(p, 2, ms);
    if (n < 0 && errno != EINTR) return; /* the read will say what is wrong */
    if (n > 0 && p[0].revents) return;
    if (n > 0 && p[1].revents) { /* a load handed over: wait_ms says when */
      char byte[64];
      while (read(l->wake[0], byte, sizeof byte) > 0) continue;
    }
  }
}

/* The request's field i (a u32), left unread. */
static uint32_t field(kt_msg *in, int i) {
  size_t at = in->at;
  uint32_t v = 0;
  for (int k = 0; k <= i; k++) v = kt_msg_get_u32(in);
  in->at = at;
  return v;
}

static uint64_t bit(uint32_t queue) { return (uint64_t)1 << (queue < OTHERS ? queue : OTHERS); }

/* Queue `queue` has nothing left (a FINISH of it; of all: -1). */
static void finished(kt_queued *q, uint32_t queue) {
  if ((int32_t)queue < 0) q->bits = 0;
  else if (queue < OTHERS) q->bits &= ~bit(queue);
}

void kt_queued_note(kt_queued *q, uint32_t op, kt_msg *in) {
  switch (op) {
    case OP_FINISH: finished(q, field(in, 0)); return;
    case OP_READ: finished(q, field(in, 1)); return; /* blocking: after all before it */
    case OP_COPY: case OP_FILL_ZERO: case OP_LAUNCH: case OP_MARKER: case OP_QUEUE_WAIT:
      q->bits |= bit(field(in, 0)); /* the queue first */
      return;
    case OP_WRITE_ASYNC: case OP_READ_ASYNC: case OP_READ_STAGED:
      q->bits |= bit(field(in, 1)); /* a buffer, then the queue */
      return;
    default:
      if (!kt_op_queues_nothing(op)) q->bits |= bit(OTHERS);
  }
}
