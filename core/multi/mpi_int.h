/*
** mpi_int.h: what rank 0's relay (mpi_relay.c) and the other ranks' serve
** loop (mpi_rank.c) share (mpi_wire.c): the messages between ranks.
**
** Every message is one MPI message of bytes with one tag: a head, then
** `frame` bytes (a frame of a device connection, or the kind's own data),
** then `extra` bytes for the staging area of the link's device server.
** MPI keeps messages between two ranks in order, which the links rely on.
*/
#ifndef KT_MPI_INT_H
#define KT_MPI_INT_H

#include <mpi.h>
#include <stdint.h>

#include "mpi.h"
#include "wire.h"

enum {
  MK_HELLO = 1, /* R -> 0: frame "pid local-rank host" */
  MK_OPEN,      /* 0 -> R: link, conn = connections, arg = 1 with stderr */
  MK_OPENED,    /* R -> 0: link, arg = 0, or 1 and frame = why not */
  MK_DATA,      /* both: link, conn, frame (+ extra for the staging area) */
  MK_EOF,       /* both: link, conn closed */
  MK_SAID,      /* R -> 0: link, frame = bytes the device process wrote to stderr */
  MK_STOP,      /* 0 -> R: link's server to be killed */
  MK_STOPPED,   /* R -> 0: link, arg = its wait status */
  MK_BEAT,      /* both: still here */
  MK_END        /* 0 -> R: the job is over */
};

typedef struct mw_head {
  uint32_t kind, link, conn, arg;
  uint64_t frame, extra;
} mw_head;

/* A received message, in one allocation. */
typedef struct mw_in {
  mw_head h;
  int from;
  unsigned char *buf; /* head, frame, extra */
  unsigned char *frame, *extra;
} mw_in;

/* Sends that do not block, each kept with its bytes until MPI is done. */
typedef struct mw_pending {
  MPI_Request req;
  unsigned char *buf;
  int to;
} mw_pending;

/* A message held back until `due` (KTLUA_MPI_LATENCY_MS), not yet given to MPI. */
typedef struct mw_held {
  int64_t due;
  int to;
  unsigned char *buf;
  size_t bytes;
} mw_held;

typedef struct mw_outbox {
  mw_pending *v;
  size_t n, cap;
  mw_held *held; /* in the order sent: the latency is the same for all */
  size_t first, nheld, capheld;
  int failed;    /* 1 + the first rank a send to failed since mw_progress said, or 0 */
} mw_outbox;

#define KT_MPI_TAG 17
#define KT_MPI_BEAT_NS 200000000LL

/* Queues a message for rank `to` (frame and extra may be NULL when empty).
** With KTLUA_MPI_LATENCY_MS set (mw_join reads it), it is given to MPI
** only that long after, as over a slower network: for tests and
** benchmarks of several nodes on one host. */
int mw_send(mw_outbox *box, int to, mw_head h, const void *frame, const void *extra);
/* Gives MPI the held messages that are due; frees what MPI has sent.
** Returns a rank that MPI failed to send to since it last said (the rank
** is lost: mw_error says what MPI said), or -1. */
int mw_progress(mw_outbox *box);
/* Messages not yet sent (held, or under way in MPI). */
size_t mw_unsent(const mw_outbox *box);
/* How long a loop may sleep before mw_progress has work: 0 while a send is
** under way (a large one moves a fragment per call into MPI), else until
** the next held message is due, at most idle_ms. */
int mw_wait_ms(const mw_outbox *box, int idle_ms);
/* Gives up the sends to a rank taken for dead (their bytes with them). */
void mw_forget(mw_outbox *box, int to);
void mw_outbox_free(mw_outbox *box);
/* A message from rank `from`, when one has come: 1 (in *in, freed with
** mw_in_free) or 0; MW_NO_MEMORY (it waits), or MW_LOST when MPI failed to
** reach the rank or it sent what ktlua never sends (the rank is lost:
** mw_error says why). */
enum { MW_LOST = -1, MW_NO_MEMORY = -2 };
int mw_poll(mw_in *in, int from);
/* What MPI said of the last rank it failed to reach. */
const char *mw_error(void);
void mw_in_free(mw_in *in);

/* Bytes a request on a main connection puts in the staging area, and
** bytes its reply (with a status of 0) brings back in it (remote_proto.h). */
size_t mw_staging_in(const kt_msg *request);
size_t mw_staging_out(const kt_msg *request);

/* Joins the job (MPI_Init_thread, serialized calls; the rank and size
** known), or fails with MPI not initialised (mpi_wire.c). */
int mw_join(int *argc, char ***argv, kt_error *err);
/* Marks the job left, before its MPI_Finalize: false when it was not
** joined or is left already. */
bool mw_leave(void);

/* Rank 0's relay thread (mpi_relay.c). */
int mr_start(kt_error *err);
void mr_stop(void);

#endif
