/*
** mpi_relay.c: rank 0's side of the devices of other ranks (mpi.h).
**
** A tuner's connections to a device of rank R are socket pairs, as with a
** local device process; their far ends belong to one relay thread, which
** alone makes MPI calls on rank 0 (MPI_THREAD_SERIALIZED). It forwards
** each frame the tuner writes to rank R and writes back what rank R sends,
** with the bytes of the staging area that a request or its reply carries.
** Tuner threads ask it to open and stop links, under its lock.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpus.h"
#include "mpi.h"

#ifdef KT_HAVE_MPI
#include "mpi_int.h"

typedef enum lstate { L_WANT_OPEN, L_OPENING, L_OPEN, L_WANT_STOP, L_STOPPING, L_DONE } lstate;

typedef struct rlink {
  int id, rank, n;          /* n connections: the main one, then compile ones */
  int *fds;                 /* the relay's ends; -1 once closed */
  int said;                 /* the tuner's pipe for the server's stderr, or -1 */
  unsigned char *staging;
  size_t staging_size;
  lstate state;
  char why[256];            /* how it ended (L_DONE) */
} rlink;

typedef struct peer {
  int64_t heard;            /* when its last message came */
  bool dead;
  int pid, cpus;            /* from its hello */
  char host[KT_MPI_HOST_MAX];
  char self[KT_MPI_SELF_MAX]; /* its version and script (kt_mpi_self) */
} peer;

/* One relay per process, as MPI is (mpi_wire.c). */
static struct relay {
  pthread_t thread;
  bool running, ending;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  int wake[2];
  rlink **links;
  size_t n, cap;
  int next_id;
  peer *peers;
  mw_outbox out;
  int64_t last_beat, last_check;
} R = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER, .wake = {-1, -1}};

static rlink *find(int id) {
  for (size_t i = 0; i < R.n; i++)
    if (R.links[i]->id == id) return R.links[i];
  return NULL;
}

static void close_fds(rlink *l) {
  for (int i = 0; i < l->n; i++)
    if (l->fds[i] >= 0) close(l->fds[i]), l->fds[i] = -1;
  if (l->said >= 0) close(l->said), l->said = -1;
}

static void finish(rlink *l, const char *why) {
  close_fds(l);
  if (why) snprintf(l->why, sizeof l->why, "%s", why);
  l->state = L_DONE;
  pthread_cond_broadcast(&R.changed);
}

static void send_to(int rank, uint32_t kind, const rlink *l, uint32_t conn, uint32_t arg,
                    const kt_msg *frame, const void *extra, size_t nextra) {
  mw_head h = {kind, l ? (uint32_t)l->id : 0, conn, arg, frame ? frame->len : 0, nextra};
  mw_send(&R.out, rank, h, frame ? frame->data : NULL, extra);
}

/* ---- a rank that stops answering ---- */

static void bury(int rank, const char *how) {
  char why[256];
  snprintf(why, sizeof why, "MPI rank %d %s", rank, how);
  R.peers[rank].dead = true;
  pthread_cond_broadcast(&R.changed);
  mw_forget(&R.out, rank);
  for (size_t i = 0; i < R.n; i++) {
    rlink *l = R.links[i];
    if (l->rank != rank || l->state == L_DONE) continue;
    finish(l, why);
  }
}

static void check_peers(int64_t now) {
  /* A relay that was itself held up (a long write to a busy tuner) heard
  ** nothing meanwhile: the others get a fresh window, not the blame. */
  if (now - R.last_check > 1000000000LL)
    for (int r = 1; r < kt_mpi_size(); r++) R.peers[r].heard = now;
  R.last_check = now;
  for (int r = 1; r < kt_mpi_size(); r++)
    if (!R.peers[r].dead && now - R.peers[r].heard > (int64_t)KT_MPI_SILENCE_S * 1000000000LL) {
      char how[96];
      snprintf(how, sizeof how, "stopped answering (no message for %d s)", KT_MPI_SILENCE_S);
      bury(r, how);
    }
  if (now - R.last_beat >= KT_MPI_BEAT_NS) {
    R.last_beat = now;
    for (int r = 1; r < kt_mpi_size(); r++)
      if (!R.peers[r].dead) send_to(r, MK_BEAT, NULL, 0, 0, NULL, NULL, 0);
  }
}

/* ---- what tuner threads asked for ---- */

static void serve_requests(void) {
  for (size_t i = 0; i < R.n; i++) {
    rlink *l = R.links[i];
    if (l->state == L_WANT_OPEN) {
      l->state = L_OPENING;
      send_to(l->rank, MK_OPEN, l, (uint32_t)l->n, l->said >= 0, NULL, NULL, 0);
    } else if (l->state == L_WANT_STOP) {
      l->state = L_STOPPING;
      close_fds(l);
      send_to(l->rank, MK_STOP, l, 0, 0, NULL, NULL, 0);
    }
  }
}

/* ---- frames both ways ---- */

static void from_tuner(rlink *l, int conn, kt_msg *m) {
  kt_wire_rc rc = kt_wire_recv(l->fds[conn], m, 0);
  if (rc != KT_WIRE_OK) {
    close(l->fds[conn]);
    l->fds[conn] = -1;
    send_to(l->rank, MK_EOF, l, (uint32_t)conn, 0, NULL, NULL, 0);
    return;
  }
  size_t extra = conn == 0 ? mw_staging_in(m) : 0;
  if (extra > l->staging_size) extra = 0; /* the server refuses it by its own check */
  send_to(l->rank, MK_DATA, l, (uint32_t)conn, 0, m, l->staging, extra);
}

static void describe_stop(rlink *l, int status) {
  if (WIFSIGNALED(status))
    snprintf(l->why, sizeof l->why, "the device process on MPI rank %d died of signal %d (%s)",
             l->rank, WTERMSIG(status), strsignal(WTERMSIG(status)));
  else
    snprintf(l->why, sizeof l->why, "the device process on MPI rank %d exited with status %d",
             l->rank, WEXITSTATUS(status));
}

static void to_tuner(rlink *l, mw_in *in) {
  int conn = (int)in->h.conn;
  if (conn < 0 || conn >= l->n || l->fds[conn] < 0) return;
  if (in->h.extra && in->h.extra <= l->staging_size) memcpy(l->staging, in->extra, in->h.extra);
  kt_msg m = {in->frame, in->h.frame, in->h.frame, 0, false};
  if (kt_wire_send(l->fds[conn], &m) != KT_WIRE_OK) {
    close(l->fds[conn]);
    l->fds[conn] = -1;
  }
}

static void dispatch(mw_in *in) {
  if (in->from <= 0 || in->from >= kt_mpi_size()) return;
  R.peers[in->from].heard = kt_now_ns();
  if (in->h.kind == MK_HELLO) {
    peer *p = &R.peers[in->from];
    char text[KT_MPI_HOST_MAX + KT_MPI_SELF_MAX + 64];
    snprintf(text, sizeof text, "%.*s", (int)in->h.frame, (const char *)in->frame);
    const char *nl = strchr(text, '\n');
    snprintf(p->self, sizeof p->self, "%s", nl ? nl + 1 : "?\n-");
    if (sscanf(text, "%d %d %" KT_MPI_HOST_SCAN "s", &p->pid, &p->cpus, p->host) < 3) p->pid = -1;
    pthread_cond_broadcast(&R.changed);
    return;
  }
  rlink *l = find((int)in->h.link);
  if (!l || l->rank != in->from) return;
  switch (in->h.kind) {
  case MK_OPENED:
    if (l->state != L_OPENING) break;
    if (in->h.arg != 0) {
      snprintf(l->why, sizeof l->why, "MPI rank %d: %.*s", l->rank, (int)in->h.frame,
               (const char *)in->frame);
      finish(l, NULL);
    } else {
      l->state = L_OPEN;
      pthread_cond_broadcast(&R.changed);
    }
    break;
  case MK_DATA:
    if (l->state == L_OPEN) to_tuner(l, in);
    break;
  case MK_EOF:
    if (l->state == L_OPEN && in->h.conn < (uint32_t)l->n && l->fds[in->h.conn] >= 0)
      close(l->fds[in->h.conn]), l->fds[in->h.conn] = -1;
    break;
  case MK_SAID:
    if (l->said >= 0 && write(l->said, in->frame, in->h.frame) < 0) close(l->said), l->said = -1;
    break;
  case MK_STOPPED:
    describe_stop(l, (int)in->h.arg);
    finish(l, NULL);
    break;
  }
}

/* MPI said it cannot reach the rank (an error handler that returns, and
** with ULFM, MPIX_ERR_PROC_FAILED): lost at once, before its silence says so. */
static void bury_unreachable(int rank) {
  char how[sizeof "is unreachable: " + 400];
  snprintf(how, sizeof how, "is unreachable: %.400s", mw_error());
  bury(rank, how);
}

/* What every live rank sent; whether anything came. */
static bool receive(void) {
  bool got = false;
  for (int r = 1; r < kt_mpi_size(); r++) {
    mw_in in;
    int rc = 0;
    while (!R.peers[r].dead && (rc = mw_poll(&in, r)) == 1) {
      dispatch(&in);
      mw_in_free(&in);
      got = true;
    }
    if (!R.peers[r].dead && rc == MW_LOST) bury_unreachable(r);
  }
  return got;
}

/* ---- the thread ---- */

/* The descriptors to wait on: the wake pipe's, then the links' (owner
** says whose). */
typedef struct owner {
  int link, conn;
} owner;

typedef struct waitset {
  struct pollfd *fds;
  owner *owner;
  size_t cap, ocap;
} waitset;

static size_t gather(waitset *w) {
  size_t n = 0;
  if (kt_grow(&w->fds, &w->cap, 1, sizeof *w->fds, NULL)) return 0;
  w->fds[n++] = (struct pollfd){R.wake[0], POLLIN, 0};
  for (size_t i = 0; i < R.n; i++) {
    rlink *l = R.links[i];
    for (int c = 0; l->state == L_OPEN && c < l->n; c++) {
      if (l->fds[c] < 0 || kt_grow(&w->fds, &w->cap, n + 1, sizeof *w->fds, NULL) ||
          kt_grow(&w->owner, &w->ocap, n + 1, sizeof *w->owner, NULL))
        continue;
      w->fds[n] = (struct pollfd){l->fds[c], POLLIN, 0};
      w->owner[n++] = (owner){l->id, c};
    }
  }
  return n;
}

static void *relay_main(void *arg) {
  (void)arg;
  /* Signals are the main thread's (Ctrl-C stops the tuning there); a
  ** write to a pipe whose reader is gone is an error here, not a signal. */
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGPIPE);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &mask, NULL);
  waitset w = {0};
  kt_msg m;
  kt_msg_init(&m);
  pthread_mutex_lock(&R.lock);
  int idle = 0;
  while (!R.ending) {
    serve_requests();
    size_t n = gather(&w);
    struct pollfd *fds = w.fds;
    pthread_mutex_unlock(&R.lock);
    /* MPI makes no descriptor to wait on: short sleeps, longer when idle,
    ** none while a send is under way (mw_wait_ms). */
    int ready = poll(fds, n, mw_wait_ms(&R.out, idle > 50 ? 10 : 1));
    pthread_mutex_lock(&R.lock);
    idle = ready > 0 ? 0 : idle + 1;
    if (ready > 0 && (fds[0].revents & POLLIN)) {
      char drain[64];
      while (read(R.wake[0], drain, sizeof drain) > 0) {}
    }
    for (size_t i = 1; ready > 0 && i < n; i++) {
      if (!fds[i].revents) continue;
      rlink *l = find(w.owner[i].link);
      int c = w.owner[i].conn;
      if (l && l->state == L_OPEN && l->fds[c] == fds[i].fd) from_tuner(l, c, &m);
    }
    if (receive()) idle = 0;
    check_peers(kt_now_ns());
    int lost = mw_progress(&R.out);
    if (lost > 0 && !R.peers[lost].dead) bury_unreachable(lost);
  }
  pthread_mutex_unlock(&R.lock);
  kt_msg_free(&m);
  free(w.fds);
  free(w.owner);
  return NULL;
}

static void wake(void) {
  char c = 1;
  if (write(R.wake[1], &c, 1) < 0) {} /* full: it is awake anyway */
}

int mr_start(kt_error *err) {
  R.peers = calloc((size_t)kt_mpi_size(), sizeof *R.peers);
  if (!R.peers || pipe2(R.wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    free(R.peers);
    R.peers = NULL;
    return kt_fail(err, "cannot set up the MPI relay");
  }
  int64_t now = kt_now_ns();
  for (int r = 0; r < kt_mpi_size(); r++) R.peers[r].heard = now;
  R.last_check = now;
  if (pthread_create(&R.thread, NULL, relay_main, NULL) != 0) {
    close(R.wake[0]), close(R.wake[1]);
    free(R.peers);
    R.peers = NULL;
    return kt_fail(err, "cannot start the MPI relay thread");
  }
  R.running = true;
  /* Every rank says who it is first (or is taken for dead), so that
  ** kt.mpi() and the choice of devices by local rank know from the start. */
  pthread_mutex_lock(&R.lock);
  for (int r = 1; r < kt_mpi_size(); r++)
    while (R.peers[r].pid == 0 && !R.peers[r].dead) pthread_cond_wait(&R.changed, &R.lock);
  int rc = 0;
  for (int r = 1; r < kt_mpi_size() && rc == 0; r++)
    if (R.peers[r].pid > 0 && !R.peers[r].dead)
      rc = kt_mpi_self_check(r, R.peers[r].host, R.peers[r].self, err);
  pthread_mutex_unlock(&R.lock);
  if (rc) mr_stop(); /* the other ranks are told to end */
  return rc;
}

/* The other ranks are told to end (they stop their device processes); the
** sends to live ranks are given time to leave before MPI_Finalize. */
void mr_stop(void) {
  if (!R.running) return;
  pthread_mutex_lock(&R.lock);
  R.ending = true;
  pthread_mutex_unlock(&R.lock);
  wake();
  pthread_join(R.thread, NULL);
  R.running = false;
  for (int r = 1; r < kt_mpi_size(); r++)
    if (!R.peers[r].dead) send_to(r, MK_END, NULL, 0, 0, NULL, NULL, 0);
  int64_t until = kt_now_ns() + 2000000000LL;
  while (mw_unsent(&R.out) && kt_now_ns() < until) {
    mw_progress(&R.out);
    usleep(1000);
  }
  mw_outbox_free(&R.out);
  for (size_t i = 0; i < R.n; i++) {
    close_fds(R.links[i]);
    free(R.links[i]->fds);
    free(R.links[i]);
  }
  free(R.links);
  free(R.peers);
  R.links = NULL;
  R.n = R.cap = 0;
  R.peers = NULL;
  close(R.wake[0]), close(R.wake[1]);
}

int kt_mpi_peer(int rank, kt_mpi_node *out) {
  if (rank == 0) {
    *out = (kt_mpi_node){(int)getpid(), kt_cpus_usable(), "", true};
    snprintf(out->host, sizeof out->host, "%s", kt_mpi_host());
    return 0;
  }
  if (!R.running || rank < 0 || rank >= kt_mpi_size()) return -1;
  pthread_mutex_lock(&R.lock);
  peer p = R.peers[rank];
  pthread_mutex_unlock(&R.lock);
  if (p.pid <= 0) return -1;
  *out = (kt_mpi_node){p.pid, p.cpus, "", !p.dead};
  snprintf(out->host, sizeof out->host, "%s", p.host);
  return 0;
}

bool kt_mpi_rank_alive(int rank) {
  if (!R.running || rank <= 0 || rank >= kt_mpi_size()) return false;
  pthread_mutex_lock(&R.lock);
  bool alive = !R.peers[rank].dead;
  pthread_mutex_unlock(&R.lock);
  return alive;
}

/* The ranks before it that gave the same host name (rank 0's is this
** process's): a node is found by its name, whoever started the ranks. */
int kt_mpi_local_rank(int rank) {
  kt_mpi_node me, other;
  if (rank <= 0 || kt_mpi_peer(rank, &me)) return 0;
  int local = 0;
  for (int r = 0; r < rank; r++)
    if (kt_mpi_peer(r, &other) == 0 && strcmp(other.host, me.host) == 0) local++;
  return local;
}

/* ---- the tuner's side ---- */

static void free_link(rlink *l) {
  for (size_t i = 0; i < R.n; i++)
    if (R.links[i] == l) R.links[i] = R.links[--R.n];
  close_fds(l);
  free(l->fds);
  free(l);
}

static rlink *new_link(int rank, int main_fd, const int *cfds, int n, int said) {
  rlink *l = calloc(1, sizeof *l);
  if (l) l->fds = calloc((size_t)n + 1, sizeof *l->fds);
  if (!l || !l->fds || kt_grow(&R.links, &R.cap, R.n + 1, sizeof *R.links, NULL)) {
    if (l) free(l->fds);
    free(l);
    return NULL;
  }
  l->rank = rank;
  l->n = n + 1;
  l->said = said >= 0 ? fcntl(said, F_DUPFD_CLOEXEC, 3) : -1;
  if (l->said >= 0) fcntl(l->said, F_SETFL, O_NONBLOCK); /* a full pipe loses words, not time */
  l->fds[0] = fcntl(main_fd, F_DUPFD_CLOEXEC, 3);
  for (int i = 0; i < n; i++) l->fds[i + 1] = fcntl(cfds[i], F_DUPFD_CLOEXEC, 3);
  l->id = ++R.next_id;
  R.links[R.n++] = l;
  return l;
}

int kt_mpi_link_open(int rank, int main_fd, const int *compile_fds, int n, int said_fd,
                     void *staging, size_t staging_size, kt_error *err) {
  if (!R.running)
    return kt_fail(err, "a device of MPI rank %d: this process is not rank 0 of an MPI job", rank);
  if (rank <= 0 || rank >= kt_mpi_size())
    return kt_fail(err, "there is no MPI rank %d (the job has %d)", rank, kt_mpi_size());
  pthread_mutex_lock(&R.lock);
  int rc = -1;
  rlink *l = R.peers[rank].dead ? NULL : new_link(rank, main_fd, compile_fds, n, said_fd);
  if (!l) {
    kt_fail(err, R.peers[rank].dead ? "MPI rank %d is gone" : "out of memory opening a link to "
                                                              "MPI rank %d", rank);
  } else {
    l->staging = staging;
    l->staging_size = staging_size;
    wake();
    while (l->state != L_OPEN && l->state != L_DONE) pthread_cond_wait(&R.changed, &R.lock);
    if (l->state == L_OPEN) rc = l->id;
    else kt_fail(err, "%s", l->why);
    if (rc < 0) free_link(l);
  }
  pthread_mutex_unlock(&R.lock);
  return rc;
}

void kt_mpi_link_stop(int id, char *why, size_t size) {
  pthread_mutex_lock(&R.lock);
  rlink *l = R.running ? find(id) : NULL; /* after mr_stop, every link is gone */
  if (l && l->state == L_OPEN) {
    l->state = L_WANT_STOP;
    wake();
  }
  while (l && l->state != L_DONE) pthread_cond_wait(&R.changed, &R.lock);
  if (why && size) snprintf(why, size, "%s", l ? l->why : "the device process is gone");
  if (l) free_link(l);
  pthread_mutex_unlock(&R.lock);
}

#else /* no MPI */

int kt_mpi_link_open(int rank, int main_fd, const int *compile_fds, int n, int said_fd,
                     void *staging, size_t staging_size, kt_error *err) {
  (void)main_fd, (void)compile_fds, (void)n, (void)said_fd, (void)staging, (void)staging_size;
  return kt_fail(err, "a device of MPI rank %d: this ktlua was built without MPI", rank);
}

int kt_mpi_peer(int rank, kt_mpi_node *out) {
  if (rank != 0) return -1;
  *out = (kt_mpi_node){(int)getpid(), kt_cpus_usable(), "", true};
  snprintf(out->host, sizeof out->host, "%s", kt_mpi_host());
  return 0;
}

int kt_mpi_local_rank(int rank) {
  (void)rank;
  return 0;
}

bool kt_mpi_rank_alive(int rank) {
  (void)rank;
  return false;
}

void kt_mpi_link_stop(int link, char *why, size_t size) {
  (void)link;
  if (why && size) snprintf(why, size, "the device process is gone");
}

#endif
