/*
** mpi_wire.c: MPI itself (joining, leaving: mpi_int.h's mw_join and
** mw_leave), and the messages between ranks (mpi_int.h). Without MPI (no
** mpi.h at build time) every process runs alone.
*/
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi.h"
#include "remote.h"
#include "remote_proto.h"

const char *kt_mpi_local_id(const kt_device_info *dev) {
  if (dev->rank <= 0 || strncmp(dev->id, "mpi:", 4) != 0) return dev->id;
  const char *colon = strchr(dev->id + 4, ':');
  return colon ? colon + 1 : dev->id;
}

#ifdef KT_HAVE_MPI
#include "mpi_int.h"

/* Process-wide by nature: MPI itself is one per process. */
static struct {
  bool on;
  int rank, size;
  char library[MPI_MAX_LIBRARY_VERSION_STRING + 8];
} job = {false, 0, 1, ""};

bool kt_mpi_built(void) { return true; }

const char *kt_mpi_describe(void) {
  if (!job.library[0]) {
    int len = 0;
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_library_version(v, &len); /* callable before MPI_Init, and from here before
                                      ** anything else calls MPI (kt_mpi_start) */
    v[strcspn(v, ",\n")] = '\0';
    snprintf(job.library, sizeof job.library, "MPI: %s", v);
  }
  return job.library;
}

int kt_mpi_size(void) { return job.size; }
int kt_mpi_rank(void) { return job.rank; }

/* Open MPI installs handlers that print a backtrace on a crash; device
** processes forked from a rank would inherit them, and a kernel that
** crashes its device process must end it as it does elsewhere (by the
** signal, which the tuner reports). So the handlers from before stay. */
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])

static int init(int *argc, char ***argv, int *provided) {
  struct sigaction saved[NFATAL];
  for (size_t i = 0; i < NFATAL; i++) sigaction(fatal_signals[i], NULL, &saved[i]);
  /* Rank 0's relay thread makes every MPI call between MPI_Init_thread
  ** and MPI_Finalize, both on the main thread: serialized calls. */
  int rc = MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, provided);
  for (size_t i = 0; i < NFATAL; i++) sigaction(fatal_signals[i], &saved[i], NULL);
  return rc;
}

int mw_join(int *argc, char ***argv, kt_error *err) {
  int provided = 0;
  if (init(argc, argv, &provided) != MPI_SUCCESS)
    return kt_fail(err, "cannot join the MPI job (MPI_Init_thread failed)");
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    return kt_fail(err, "this MPI gives no MPI_THREAD_SERIALIZED, which rank 0's relay needs");
  }
  /* A dead peer must be an error code, not the end of the job. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &job.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &job.size);
  job.on = true;
  return 0;
}

bool mw_leave(void) {
  if (!job.on) return false;
  job.on = false;
  return true;
}

/* ---- messages ---- */

int mw_send(mw_outbox *box, int to, mw_head h, const void *frame, const void *extra) {
  size_t total = sizeof h + h.frame + h.extra;
  if (total > INT32_MAX) return -1;
  if (kt_grow(&box->v, &box->cap, box->n + 1, sizeof *box->v, NULL)) return -1;
  unsigned char *buf = malloc(total);
  if (!buf) return -1;
  memcpy(buf, &h, sizeof h);
  if (h.frame) memcpy(buf + sizeof h, frame, h.frame);
  if (h.extra) memcpy(buf + sizeof h + h.frame, extra, h.extra);
  mw_pending *p = &box->v[box->n];
  if (MPI_Isend(buf, (int)total, MPI_BYTE, to, KT_MPI_TAG, MPI_COMM_WORLD, &p->req) !=
      MPI_SUCCESS) {
    free(buf);
    return -1;
  }
  p->buf = buf;
  p->to = to;
  box->n++;
  return 0;
}

static void drop(mw_outbox *box, size_t i) {
  free(box->v[i].buf);
  box->v[i] = box->v[--box->n];
}

void mw_progress(mw_outbox *box) {
  for (size_t i = 0; i < box->n;) {
    int done = 0;
    if (MPI_Test(&box->v[i].req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done) drop(box, i);
    else i++;
  }
}

/* A send to a dead rank may never complete: it is cancelled, and its
** bytes are freed with it (MPI keeps no pointer to a freed request's). */
void mw_forget(mw_outbox *box, int to) {
  for (size_t i = 0; i < box->n;) {
    if (box->v[i].to != to) {
      i++;
      continue;
    }
    MPI_Cancel(&box->v[i].req);
    MPI_Request_free(&box->v[i].req);
    drop(box, i);
  }
}

void mw_outbox_free(mw_outbox *box) {
  while (box->n) mw_forget(box, box->v[0].to);
  free(box->v);
  *box = (mw_outbox){0};
}

int mw_poll(mw_in *in) {
  int flag = 0, count = 0;
  MPI_Status st;
  if (MPI_Iprobe(MPI_ANY_SOURCE, KT_MPI_TAG, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS) return -1;
  if (!flag) return 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  unsigned char *buf = malloc(count > 0 ? (size_t)count : 1);
  if (!buf) return -1;
  if (MPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, KT_MPI_TAG, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE) != MPI_SUCCESS ||
      (size_t)count < sizeof in->h) {
    free(buf);
    return -1;
  }
  memcpy(&in->h, buf, sizeof in->h);
  if (sizeof in->h + in->h.frame + in->h.extra != (size_t)count) {
    free(buf);
    return -1;
  }
  in->from = st.MPI_SOURCE;
  in->buf = buf;
  in->frame = buf + sizeof in->h;
  in->extra = in->frame + in->h.frame;
  return 1;
}

void mw_in_free(mw_in *in) {
  free(in->buf);
  in->buf = NULL;
}

/* ---- the staging area (remote_proto.h, remote_async.c) ---- */

static uint64_t u64_at(const kt_msg *m, size_t at) {
  uint64_t v = 0;
  if (m->len >= at + sizeof v) memcpy(&v, m->data + at, sizeof v);
  return v;
}

static uint32_t op_of(const kt_msg *m) {
  uint32_t op = 0;
  if (m->len >= sizeof op) memcpy(&op, m->data, sizeof op);
  return op;
}

/* OP_WRITE, OP_WRITE_ASYNC and OP_READ: op, buf, queue, offset, bytes, at;
** OP_READ_TAKE: op, token, offset, bytes, at. The tuner stages the chunks
** for another rank's server at 0 (remote_stage.c), where the relays put
** and take them. */
size_t mw_staging_in(const kt_msg *request) {
  uint32_t op = op_of(request);
  return op == OP_WRITE || op == OP_WRITE_ASYNC ? (size_t)u64_at(request, 20) : 0;
}

size_t mw_staging_out(const kt_msg *request) {
  uint32_t op = op_of(request);
  if (op == OP_READ) return (size_t)u64_at(request, 20);
  return op == OP_READ_TAKE ? (size_t)u64_at(request, 16) : 0;
}

#else /* no MPI */

bool kt_mpi_built(void) { return false; }
const char *kt_mpi_describe(void) { return "MPI: not built in (no mpi.h at build time)"; }
int kt_mpi_size(void) { return 1; }
int kt_mpi_rank(void) { return 0; }

#endif

