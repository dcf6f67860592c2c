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

const char *kt_mpi_host(void) {
  static char host[KT_MPI_HOST_MAX]; /* the process's, set once (kt_mpi_start asks first) */
  if (host[0]) return host;
  const char *given = getenv("KTLUA_HOST");
  if (given && given[0]) snprintf(host, sizeof host, "%s", given);
  else if (gethostname(host, sizeof host - 1) != 0 || !host[0]) snprintf(host, sizeof host, "?");
  host[strcspn(host, " \t\n")] = '\0';
  if (!host[0]) snprintf(host, sizeof host, "?");
  return host;
}

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
  int64_t latency_ns; /* KTLUA_MPI_LATENCY_MS */
  char error[MPI_MAX_ERROR_STRING + 64]; /* what MPI said of the last rank it failed to reach */
  char library[MPI_MAX_LIBRARY_VERSION_STRING + 8];
} job = {false, 0, 1, 0, "", ""};

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

/* KTLUA_MPI_LATENCY_MS: milliseconds (a fraction allowed), 0 when unset. */
static int read_latency(kt_error *err) {
  const char *s = getenv("KTLUA_MPI_LATENCY_MS");
  job.latency_ns = 0;
  if (!s || !s[0]) return 0;
  char *end;
  double ms = strtod(s, &end);
  if (*end || !(ms >= 0 && ms <= 60000))
    return kt_fail(err, "KTLUA_MPI_LATENCY_MS: '%s' is not a number of milliseconds from 0 to "
                        "60000", s);
  job.latency_ns = (int64_t)(ms * 1e6);
  return 0;
}

int mw_join(int *argc, char ***argv, kt_error *err) {
  int provided = 0;
  if (read_latency(err)) return -1;
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

/* An MPI call about rank `to` failed with code: the rank is lost (mpi.h). */
static void failed(mw_outbox *box, int to, int code) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(code, text, &len);
  snprintf(job.error, sizeof job.error, "MPI error %d (%s)", code, text);
  if (box && !box->failed) box->failed = to + 1;
}

const char *mw_error(void) { return job.error; }

/* Gives buf (its ownership too) to MPI. */
static int start(mw_outbox *box, int to, unsigned char *buf, size_t total) {
  if (kt_grow(&box->v, &box->cap, box->n + 1, sizeof *box->v, NULL)) {
    free(buf);
    return -1;
  }
  mw_pending *p = &box->v[box->n];
  int rc = MPI_Isend(buf, (int)total, MPI_BYTE, to, KT_MPI_TAG, MPI_COMM_WORLD, &p->req);
  if (rc != MPI_SUCCESS) {
    failed(box, to, rc);
    free(buf);
    return -1;
  }
  p->buf = buf;
  p->to = to;
  box->n++;
  return 0;
}

/* Keeps buf (its ownership too) until the latency has passed. */
static int hold(mw_outbox *box, int to, unsigned char *buf, size_t total) {
  if (box->first && box->first * 2 >= box->nheld) { /* the released half goes */
    memmove(box->held, box->held + box->first, (box->nheld - box->first) * sizeof *box->held);
    box->nheld -= box->first;
    box->first = 0;
  }
  if (kt_grow(&box->held, &box->capheld, box->nheld + 1, sizeof *box->held, NULL)) {
    free(buf);
    return -1;
  }
  box->held[box->nheld++] = (mw_held){kt_now_ns() + job.latency_ns, to, buf, total};
  return 0;
}

int mw_send(mw_outbox *box, int to, mw_head h, const void *frame, const void *extra) {
  size_t total = sizeof h + h.frame + h.extra;
  if (total > INT32_MAX) return -1;
  unsigned char *buf = malloc(total);
  if (!buf) return -1;
  memcpy(buf, &h, sizeof h);
  if (h.frame) memcpy(buf + sizeof h, frame, h.frame);
  if (h.extra) memcpy(buf + sizeof h + h.frame, extra, h.extra);
  return job.latency_ns > 0 ? hold(box, to, buf, total) : start(box, to, buf, total);
}

/* The held messages that are due go to MPI, in the order sent. */
static void release(mw_outbox *box) {
  int64_t now = box->first < box->nheld ? kt_now_ns() : 0;
  while (box->first < box->nheld && box->held[box->first].due <= now) {
    mw_held *m = &box->held[box->first++];
    start(box, m->to, m->buf, m->bytes);
  }
}

size_t mw_unsent(const mw_outbox *box) { return box->n + (box->nheld - box->first); }

int mw_wait_ms(const mw_outbox *box, int idle_ms) {
  if (box->n) return 0;
  if (box->first == box->nheld) return idle_ms;
  int64_t ns = box->held[box->first].due - kt_now_ns();
  if (ns <= 0) return 0;
  int64_t ms = (ns + 999999) / 1000000;
  return ms < idle_ms ? (int)ms : idle_ms;
}

static void drop(mw_outbox *box, size_t i) {
  free(box->v[i].buf);
  box->v[i] = box->v[--box->n];
}

int mw_progress(mw_outbox *box) {
  release(box);
  for (size_t i = 0; i < box->n;) {
    int done = 0, rc = MPI_Test(&box->v[i].req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) failed(box, box->v[i].to, rc);
    if (rc != MPI_SUCCESS || done) drop(box, i);
    else i++;
  }
  int lost = box->failed - 1;
  box->failed = 0;
  return lost;
}

/* A send to a dead rank may never complete: it is cancelled, and its
** bytes are freed with it (MPI keeps no pointer to a freed request's). */
void mw_forget(mw_outbox *box, int to) {
  size_t kept = box->first;
  for (size_t i = box->first; i < box->nheld; i++) {
    if (box->held[i].to == to) free(box->held[i].buf);
    else box->held[kept++] = box->held[i];
  }
  box->nheld = kept;
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
  for (size_t i = box->first; i < box->nheld; i++) free(box->held[i].buf);
  free(box->held);
  free(box->v);
  *box = (mw_outbox){0};
}

/* Each rank is probed by itself, never MPI_ANY_SOURCE: a failure is then
** that rank's (with ULFM, a receive from any source fails for every rank
** once one has failed, until the failure is acknowledged). */
int mw_poll(mw_in *in, int from) {
  int flag = 0, count = 0;
  MPI_Status st;
  int rc = MPI_Iprobe(from, KT_MPI_TAG, MPI_COMM_WORLD, &flag, &st);
  if (rc != MPI_SUCCESS) return failed(NULL, from, rc), MW_LOST;
  if (!flag) return 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  unsigned char *buf = malloc(count > 0 ? (size_t)count : 1);
  if (!buf) return MW_NO_MEMORY; /* the message stays with MPI until then */
  rc = MPI_Recv(buf, count, MPI_BYTE, from, KT_MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (rc == MPI_SUCCESS && (size_t)count >= sizeof in->h) memcpy(&in->h, buf, sizeof in->h);
  if (rc != MPI_SUCCESS || (size_t)count < sizeof in->h ||
      sizeof in->h + in->h.frame + in->h.extra != (size_t)count) {
    if (rc != MPI_SUCCESS) failed(NULL, from, rc);
    else snprintf(job.error, sizeof job.error, "a message of %d bytes that is no message of ktlua's", count);
    free(buf);
    return MW_LOST;
  }
  in->from = from;
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

