/*
** mpi_rank.c: a rank above 0 of an MPI job (mpi.h). It runs no script:
** on rank 0's request it forks device servers (server.c), as a tuner does
** for a local device, and relays their connections to rank 0 and back.
** One thread does it all; the servers' compile threads are their own.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpus.h"
#include "mpi.h"
#include "remote.h"
#include "remote_proto.h"

#ifdef KT_HAVE_MPI
#include "mpi_int.h"

typedef struct served {
  uint32_t id;           /* rank 0's number for the link */
  pid_t pid;
  int n;                 /* connections: the main one, then compile ones */
  int *fds;              /* this side's ends, -1 once closed */
  int said;              /* read end of the server's stderr, or -1 */
  unsigned char *staging;
  size_t staging_size;
  size_t reply_extra;    /* staging bytes the next reply on the main connection brings */
} served;

struct owner;

typedef struct rank_state {
  served **v;
  size_t n, cap;
  struct pollfd *fds;    /* what serve_servers waits on */
  struct owner *owners;
  size_t capfds, capowners;
  mw_outbox out;
  int64_t heard, last_beat;
  kt_msg m;
} rank_state;

static void reply(rank_state *s, uint32_t kind, uint32_t link, uint32_t conn, uint32_t arg,
                  const void *frame, size_t nframe, const void *extra, size_t nextra) {
  mw_head h = {kind, link, conn, arg, nframe, nextra};
  mw_send(&s->out, 0, h, frame, extra);
}

static served *find(rank_state *s, uint32_t id) {
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i]->id == id) return s->v[i];
  return NULL;
}

/* ---- a device server's life ---- */

static void free_served(served *d) {
  for (int i = 0; i < d->n; i++)
    if (d->fds[i] >= 0) close(d->fds[i]);
  if (d->said >= 0) close(d->said);
  if (d->staging) munmap(d->staging, d->staging_size);
  free(d->fds);
  free(d);
}

/* Kills the server (it may be stuck rather than dead); its wait status. */
static int stop(served *d) {
  int status = 0;
  kill(d->pid, SIGKILL);
  waitpid(d->pid, &status, 0);
  return status;
}

static int fork_server(served *d, const int *child, int said) {
  pid_t pid = fork();
  if (pid != 0) return pid < 0 ? -1 : (d->pid = pid, 0);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  if (said >= 0) dup2(said, STDERR_FILENO);
  kt_server_keep_only(child[0], child + 1, d->n - 1);
  kt_server_main(child[0], child + 1, d->n - 1, d->staging, d->staging_size);
}

static served *start(uint32_t id, int nconn, bool with_said, char *why, size_t size) {
  served *d = calloc(1, sizeof *d);
  int *child = calloc((size_t)nconn, sizeof *child), pipefd[2] = {-1, -1};
  if (d) d->fds = calloc((size_t)nconn, sizeof *d->fds);
  bool ok = d && child && d->fds && nconn >= 1;
  if (ok) {
    d->id = id, d->n = nconn, d->said = -1;
    d->staging_size = KT_STAGING_BYTES;
    d->staging = mmap(NULL, d->staging_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                      -1, 0);
    if (d->staging == MAP_FAILED) d->staging = NULL, ok = false;
    for (int i = 0; i < nconn; i++) d->fds[i] = child[i] = -1;
  }
  for (int i = 0; ok && i < nconn; i++) {
    int sv[2];
    ok = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0;
    if (ok) d->fds[i] = sv[0], child[i] = sv[1];
  }
  if (ok && with_said) ok = pipe2(pipefd, O_CLOEXEC) == 0;
  if (ok) ok = fork_server(d, child, pipefd[1]) == 0;
  if (!ok) snprintf(why, size, "cannot start a device process: %s", strerror(errno));
  for (int i = 0; child && i < nconn; i++)
    if (child[i] >= 0) close(child[i]);
  free(child);
  if (pipefd[1] >= 0) close(pipefd[1]);
  if (d) d->said = pipefd[0];
  if (d && d->said >= 0) fcntl(d->said, F_SETFL, O_NONBLOCK);
  if (!ok && d) free_served(d), d = NULL;
  return d;
}

/* ---- messages from rank 0 ---- */

static void open_link(rank_state *s, mw_in *in) {
  char why[256] = "out of memory";
  served *d = kt_grow(&s->v, &s->cap, s->n + 1, sizeof *s->v, NULL)
                  ? NULL
                  : start(in->h.link, (int)in->h.conn, in->h.arg != 0, why, sizeof why);
  if (d) s->v[s->n++] = d;
  reply(s, MK_OPENED, in->h.link, 0, d ? 0 : 1, d ? NULL : why, d ? 0 : strlen(why), NULL, 0);
}

static void remove_served(rank_state *s, served *d) {
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i] == d) s->v[i] = s->v[--s->n];
  free_served(d);
}

static void to_server(served *d, mw_in *in) {
  uint32_t conn = in->h.conn;
  if (conn >= (uint32_t)d->n || d->fds[conn] < 0) return;
  kt_msg m = {in->frame, in->h.frame, in->h.frame, 0, false};
  if (conn == 0) {
    if (in->h.extra && in->h.extra <= d->staging_size) memcpy(d->staging, in->extra, in->h.extra);
    d->reply_extra = mw_staging_out(&m);
    if (d->reply_extra > d->staging_size) d->reply_extra = 0;
  }
  /* A server that is gone shows as end of file on its side, which says so. */
  kt_wire_send(d->fds[conn], &m);
}

/* Returns whether the job goes on. */
static bool from_rank0(rank_state *s, mw_in *in) {
  s->heard = kt_now_ns();
  served *d = in->h.kind == MK_OPEN ? NULL : find(s, in->h.link);
  switch (in->h.kind) {
  case MK_OPEN: open_link(s, in); break;
  case MK_DATA:
    if (d) to_server(d, in);
    break;
  case MK_EOF:
    if (d && in->h.conn < (uint32_t)d->n && d->fds[in->h.conn] >= 0)
      close(d->fds[in->h.conn]), d->fds[in->h.conn] = -1;
    break;
  case MK_STOP:
    if (d) {
      int status = stop(d);
      remove_served(s, d);
      reply(s, MK_STOPPED, in->h.link, 0, (uint32_t)status, NULL, 0, NULL, 0);
    }
    break;
  case MK_END: return false;
  }
  return true;
}

/* ---- frames from the servers ---- */

static void from_server(rank_state *s, served *d, int conn) {
  if (kt_wire_recv(d->fds[conn], &s->m, 0) != KT_WIRE_OK) {
    close(d->fds[conn]);
    d->fds[conn] = -1;
    reply(s, MK_EOF, d->id, (uint32_t)conn, 0, NULL, 0, NULL, 0);
    return;
  }
  size_t extra = 0;
  if (conn == 0) {
    uint32_t status = 1;
    if (s->m.len >= sizeof status) memcpy(&status, s->m.data, sizeof status);
    extra = status == 0 ? d->reply_extra : 0;
    d->reply_extra = 0;
  }
  reply(s, MK_DATA, d->id, (uint32_t)conn, 0, s->m.data, s->m.len, d->staging, extra);
}

static void said_from_server(rank_state *s, served *d) {
  char buf[4096];
  ssize_t k = read(d->said, buf, sizeof buf);
  if (k > 0) reply(s, MK_SAID, d->id, 0, 0, buf, (size_t)k, NULL, 0);
  else if (k == 0 || (errno != EAGAIN && errno != EINTR)) close(d->said), d->said = -1;
}

/* Whose each descriptor waited on is: the server, and its connection
** (-1: its stderr). */
typedef struct owner {
  served *d;
  int conn;
} owner;

/* Waits a little on every server's descriptors and serves what is ready. */
static void serve_servers(rank_state *s, int ms) {
  size_t want = 0;
  for (size_t i = 0; i < s->n; i++) want += (size_t)s->v[i]->n + 1;
  if (kt_grow(&s->fds, &s->capfds, want + 1, sizeof *s->fds, NULL) ||
      kt_grow(&s->owners, &s->capowners, want + 1, sizeof *s->owners, NULL)) {
    usleep(1000); /* out of memory: MPI is still served */
    return;
  }
  nfds_t n = 0;
  for (size_t i = 0; i < s->n; i++)
    for (int c = -1; c < s->v[i]->n; c++) {
      int fd = c < 0 ? s->v[i]->said : s->v[i]->fds[c];
      if (fd < 0) continue;
      s->fds[n] = (struct pollfd){fd, POLLIN, 0};
      s->owners[n++] = (owner){s->v[i], c};
    }
  if (poll(s->fds, n, ms) <= 0) return;
  for (nfds_t i = 0; i < n; i++) {
    owner o = s->owners[i];
    if (!s->fds[i].revents) continue;
    if (o.conn < 0) said_from_server(s, o.d);
    else if (o.d->fds[o.conn] == s->fds[i].fd) from_server(s, o.d, o.conn);
  }
}

void kt_mpi_serve(void) {
  /* Ctrl-C and mpirun's signals reach every rank: rank 0 decides when the
  ** job ends, and its tuning lets the configuration in flight finish. */
  signal(SIGINT, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  rank_state s = {0};
  kt_msg_init(&s.m);
  char hello[KT_MPI_HOST_MAX + KT_MPI_SELF_MAX + 64];
  snprintf(hello, sizeof hello, "%d %d %s\n%s", (int)getpid(), kt_cpus_usable(), kt_mpi_host(),
           kt_mpi_self());
  reply(&s, MK_HELLO, 0, 0, 0, hello, strlen(hello), NULL, 0);
  s.heard = s.last_beat = kt_now_ns();
  bool going = true;
  int idle = 0;
  while (going) {
    serve_servers(&s, mw_wait_ms(&s.out, idle > 50 ? 10 : 1)); /* as in mpi_relay.c */
    mw_in in;
    int got = 0, rc = 0;
    while (going && (rc = mw_poll(&in, 0)) == 1) {
      going = from_rank0(&s, &in);
      mw_in_free(&in);
      got = 1;
    }
    if (rc == MW_LOST) going = false; /* MPI cannot reach rank 0: nothing is left to serve */
    idle = got ? 0 : idle + 1;
    int64_t now = kt_now_ns();
    if (now - s.last_beat >= KT_MPI_BEAT_NS) {
      s.last_beat = now;
      reply(&s, MK_BEAT, 0, 0, 0, NULL, 0, NULL, 0);
    }
    /* Rank 0 gone without a word: nothing is left to serve. */
    if (now - s.heard > 6LL * KT_MPI_SILENCE_S * 1000000000LL) going = false;
    if (mw_progress(&s.out) == 0) going = false;
  }
  while (s.n) {
    stop(s.v[0]);
    remove_served(&s, s.v[0]);
  }
  free(s.v);
  free(s.fds);
  free(s.owners);
  kt_msg_free(&s.m);
  int64_t until = kt_now_ns() + 1000000000LL;
  while (mw_unsent(&s.out) && kt_now_ns() < until) mw_progress(&s.out);
  mw_outbox_free(&s.out);
  kt_mpi_end();
  exit(0);
}

#else /* no MPI */

void kt_mpi_serve(void) { exit(1); /* kt_mpi_start never gives a rank above 0 */ }

#endif
