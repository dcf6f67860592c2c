/*
** server_loads.h: the device server's program binaries, loaded by its
** main thread when the device is idle (server_loads.c).
*/
#ifndef KT_SERVER_LOADS_H
#define KT_SERVER_LOADS_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "wire.h"

typedef struct kt_loads kt_loads;

/* NULL when out of memory or pipes. */
kt_loads *kt_loads_new(void);

/* A compile thread's load (be->prog_load's arguments and result), made
** by the main thread: waits for it. */
kt_bprog *kt_loads_load(kt_loads *l, const unsigned char *bytes, size_t size,
                        const char *options, const char *name, char **log, kt_error *err);

/* The queues with work, as the requests tell: bit q for queue q since its
** last FINISH (the last bit for the others, and for work of no queue,
** until a FINISH of every queue). */
typedef struct kt_queued {
  uint64_t bits;
} kt_queued;

/* Notes request op, whose fields `in` holds next (left unread). */
void kt_queued_note(kt_queued *q, uint32_t op, kt_msg *in);

/* When the main thread may make the loads handed over: */
typedef enum kt_loads_when {
  KT_LOADS_NOW,  /* the device is idle: every queue with work finished since */
  KT_LOADS_SOON, /* the device is busy: once the oldest has waited a while */
  KT_LOADS_HELD  /* never: the backend holds its modules (a counters' collection) */
} kt_loads_when;

/* The main thread, before it reads its next request from fd: makes the
** loads handed over as `when` says, then returns when a request (or the
** connection's end) is there. */
void kt_loads_await(kt_loads *l, int fd, kt_loads_when when, const kt_backend *be,
                    kt_bctx *ctx);

#endif
