/*
** remote_proto.h: the operations between backend_remote.c (the tuner's
** side) and server.c (the device server).
**
** Every request starts with its operation. Synchronous operations get a
** reply that starts with a status: 0, or a fault kind (kt_fault) followed
** by a message. Asynchronous operations get no reply; a failure among
** them is kept by the server and reported by the next FINISH.
** Handles (buffers, programs, kernels, events) are numbered by the tuner.
** Bulk data goes through a shared staging area, a chunk at a time, each
** at the place in it that its request says (remote_stage.c). For a
** device of another MPI rank there is no shared memory: mpi_wire.c's
** mw_staging_in and mw_staging_out say which requests fill the staging
** area and which replies bring it back, so a new operation that uses it
** must be named there too.
*/
#ifndef KT_REMOTE_PROTO_H
#define KT_REMOTE_PROTO_H

#include <stdbool.h>
#include <stdint.h>

enum {
  /* synchronous */
  OP_ENUMERATE = 1, /* -> devices (count, then each: id, backend, platform, index, props), why */
  OP_OPEN,          /* device id -> - */
  OP_BUF_NEW,       /* id, bytes, placement, access -> - */
  OP_WRITE,         /* buf, queue, offset, bytes, at (the bytes in staging, from at) -> - */
  OP_READ,          /* buf, queue, offset, bytes, at -> - (the bytes in staging, from at) */
  OP_KERNEL,        /* kernel id, program id, name -> max group size */
  OP_FINISH,        /* queue -> count, (event id, ns)... of the events it completed */
  OP_EVENT_NS,      /* event id -> ns */
  OP_WRITE_ASYNC,   /* buf, queue, offset, bytes, at (in staging) -> - (the server keeps a copy
                    ** until the queue is finished) */
  OP_READ_ASYNC,    /* buf, queue, offset, bytes, token -> - (into the server's memory) */
  OP_READ_TAKE,     /* token, offset, bytes, at -> - (bytes in staging, from at; the last
                    ** frees it) */
  OP_MARKER,        /* queue, event id -> - */
  OP_QUEUE_WAIT,    /* queue, event id -> - */
  /* asynchronous */
  OP_BUF_FREE,      /* id */
  OP_COPY,          /* queue, dst, dst offset, src, src offset, bytes */
  OP_FILL_ZERO,     /* queue, buf, offset, bytes */
  OP_PROG_FREE,     /* id */
  OP_KERNEL_FREE,   /* id */
  OP_LAUNCH,        /* queue, kernel, event id (0: none), dims, global[3], local[3], args */
  OP_EVENT_FREE,    /* id */
  /* on a compile connection, synchronous */
  OP_COMPILE,       /* program id, source, options -> log (also on success) */
  /* synchronous */
  OP_READ_STAGED,   /* buf, queue, offset, bytes, staging offset -> - (into the staging
                    ** area, there once the queue is finished; the tuner leaves that part
                    ** of it alone until then; never sent to another MPI rank's server,
                    ** whose staging area the tuner cannot see: remote_async.c) */
  /* on a compile connection, synchronous */
  OP_PROG_BINARY,   /* program id -> ok, then bytes (u64 size, bytes) or why */
  OP_PROG_LOAD,     /* program id, bytes, options, name -> ok, log (as OP_COMPILE) */
  /* synchronous */
  OP_ENERGY,        /* kt_energy_op -> joules, seconds, SM MHz, counter (remote_energy.c) */
  /* synchronous (remote_counters.c) */
  OP_COUNTERS_BEGIN, /* start (0: only prepare), count, names -> code (0, 1 unreadable,
                     ** 2 error), passes or why */
  OP_COUNTERS_END,   /* count -> code, ranges and the values, or why */
  /* on a compile connection, synchronous (server_build.c) */
  OP_BUILD           /* program id, source, options, name -> ok, log, loaded (from the
                     ** server's own program cache), why the program was not kept ("") */
};

/* Launch argument kinds on the wire are kt_launch_arg_kind. */

#define KT_STAGING_BYTES ((size_t)32 << 20)

/* Whether op leaves the device's queues as they were: it queues nothing,
** or waits for what it queued (the tuner's quiet, the server's idle). */
static inline bool kt_op_queues_nothing(uint32_t op) {
  switch (op) {
    case OP_ENUMERATE: case OP_OPEN: case OP_BUF_NEW: case OP_WRITE: case OP_READ:
    case OP_KERNEL: case OP_FINISH: case OP_EVENT_NS: case OP_READ_TAKE: case OP_BUF_FREE:
    case OP_PROG_FREE: case OP_KERNEL_FREE: case OP_EVENT_FREE: case OP_ENERGY: return true;
    default: return false;
  }
}

#endif
