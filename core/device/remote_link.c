/*
** remote_link.c: the main connection to a device server (remote_int.h):
** starting the server, its requests and replies, and losing it. Below
** backend_remote.c and its helpers (remote_async.c, remote_counters.c,
** remote_energy.c), which all send through it; the server's own code is
** passed in (kt_bctx.serve), as server.c is above the helpers it calls.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpus.h"
#include "devout.h"
#include "remote.h"
#include "remote_int.h"

/* ---- the server's life ---- */

static void close_channels(kt_bctx *c) {
  pthread_mutex_lock(&c->lock);
  /* Calls in flight fail fast once the server is gone; wait for them. */
  for (int i = 0; i < c->nchannels; i++)
    while (c->cbusy[i]) pthread_cond_wait(&c->freed, &c->lock);
  for (int i = 0; i < c->nchannels; i++) {
    if (c->cfds[i] >= 0) close(c->cfds[i]);
    c->cfds[i] = -1;
  }
  pthread_mutex_unlock(&c->lock);
}

static void describe_exit(int status, char *buf, size_t size) {
  if (WIFSIGNALED(status))
    snprintf(buf, size, "the device process died of signal %d (%s)", WTERMSIG(status),
             strsignal(WTERMSIG(status)));
  else
    snprintf(buf, size, "the device process exited with status %d", WEXITSTATUS(status));
}

/* Stops the server (it may be stuck rather than dead) and says how it
** ended. A server on another node is stopped there, through far.h. */
void rm_stop_server(kt_bctx *c, char *how, size_t size) {
  int status = 0;
  if (c->far) c->far->stop(c->pid, how, size);
  else kill(c->pid, SIGKILL);
  close(c->fd);
  c->fd = -1;
  if (!c->far) waitpid(c->pid, &status, 0), describe_exit(status, how, size);
  kt_devout_drain(&c->said); /* its last words, an allocator's abort message among them */
  close_channels(c);
  c->alive = false;
}

/* Ends the server and every object it held (the generation counts up);
** says why in err (when given) with the fault. */
int rm_lose(kt_bctx *c, kt_fault fault, kt_fault *out, kt_error *err, const char *why) {
  char buf[256];
  if (c->alive) {
    rm_stop_server(c, buf, sizeof buf);
    if (!why) {
      kt_devout_last_line(&c->said, buf, sizeof buf);
      why = buf;
    }
    c->generation++;
  }
  c->nreads = c->nstaged = c->staged_end = 0; /* their data went with the server */
  c->quiet = c->gathering = false;
  kt_msg_reset(&c->gathered);
  if (out) *out = fault;
  return kt_fail(err, "%s", why ? why : "the device process is gone");
}

static int make_pair(int *parent, int *child) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return -1;
  *parent = sv[0];
  *child = sv[1];
  return 0;
}

static int open_device(kt_bctx *c, kt_error *err) {
  kt_msg_reset(&c->out);
  kt_msg_put_u32(&c->out, OP_OPEN);
  kt_msg_put_str(&c->out, c->far ? c->far->local_id(&c->dev) : c->dev.id);
  kt_fault fault;
  return call(c, &fault, err);
}

/* PoCL runs a CPU device's kernels on a thread per processor it counts
** (its compute units), whatever else the machine runs: on a busy machine
** those threads wait for processors and one another, and a kernel takes
** many times as long. A server of a PoCL CPU device on this host gets
** POCL_MAX_PTHREAD_COUNT at the processors free when it starts
** (kt_cpus_free), where that is fewer, unless the user set it. Returns the
** count, or 0 where it sets none. */
static int pocl_threads(const kt_bctx *c) {
  const char *user = getenv("POCL_MAX_PTHREAD_COUNT");
  const char *platform = kt_device_string(&c->dev, "platform");
  const char *type = kt_device_string(&c->dev, "type");
  if (!c->has_device || c->far || (user && user[0]) || !platform || !type ||
      !strstr(platform, "Portable Computing Language") || strcmp(type, "cpu") != 0)
    return 0;
  int64_t counted = kt_device_int(&c->dev, "compute_units", 0);
  int free = kt_cpus_free();
  return free < counted ? free : 0;
}

int kt_remote_threads(const kt_bctx *c) { return c->threads; }

/* Forks a server; with a device, opens it there. */
int rm_spawn(kt_bctx *c, kt_error *err) {
  int n = c->nchannels, mainp = -1, mainc = -1, *child = calloc((size_t)n + 1, sizeof *child);
  if (!child) return kt_fail(err, "out of memory starting the device process");
  int said = c->has_device ? kt_devout_pipe(&c->said) : -1;
  char threads[24];
  c->threads = pocl_threads(c);
  snprintf(threads, sizeof threads, "%d", c->threads);
  bool ok = make_pair(&mainp, &mainc) == 0;
  kt_fork_begin(); /* before c->lock, which compile threads take inside the guard */
  pthread_mutex_lock(&c->lock);
  for (int i = 0; i < n && ok; i++) {
    ok = make_pair(&c->cfds[i], &child[i]) == 0;
    if (!ok) c->cfds[i] = -1;
  }
  /* A device of another node gets its server there: a link (> 0). */
  pid_t pid = !ok     ? -1
              : c->far ? c->far->open(c->node, mainc, child, n, said, c->staging, c->staging_size,
                                      err)
                       : fork();
  if (pid == 0) {
    if (said >= 0) dup2(said, STDERR_FILENO);
    if (c->threads) setenv("POCL_MAX_PTHREAD_COUNT", threads, 1); /* read as PoCL starts there */
    c->serve(mainc, child, n, c->staging, c->staging_size);
  }
  for (int i = 0; i < n; i++)
    if (ok || child[i] > 0) close(child[i]);
  c->compiler = ok && pid > 0 && !c->far ? pid : 0;
  pthread_mutex_unlock(&c->lock);
  kt_fork_end();
  free(child);
  if (said >= 0) close(said);
  if (ok) close(mainc);
  if (!ok || pid < 0) {
    if (!ok || !c->far) kt_fail(err, "cannot start the device process: %s", strerror(errno));
    return -1;
  }
  c->pid = pid;
  c->fd = mainp;
  c->alive = true;
  return c->has_device ? open_device(c, err) : 0;
}

static int ensure(kt_bctx *c, kt_error *err) {
  return c->alive ? 0 : rm_spawn(c, err);
}

/* Sends c->out, after the requests gathered if any, in one send. */
static kt_wire_rc send_out(kt_bctx *c) {
  c->requests++;
  if (!c->gathered.len) return kt_wire_send(c->fd, &c->out);
  c->gathering = false;
  kt_wire_rc rc = kt_wire_frame(&c->gathered, &c->out) ? KT_WIRE_ERROR
                                                      : kt_wire_send_frames(c->fd, &c->gathered);
  kt_msg_reset(&c->gathered);
  return rc;
}

/* Sends the request in c->out; waits for the reply in c->in. */
int call(kt_bctx *c, kt_fault *fault, kt_error *err) {
  *fault = KT_FAULT_NONE;
  if (send_out(c) != KT_WIRE_OK) return rm_lose(c, KT_FAULT_LOST, fault, err, NULL);
  return rm_reply(c, fault, err);
}

/* The set deadline moved by this thread's waits for a processor since it
** was set and, on the host's processors, by the time the server spent
** compiling and the longest such wait of one of its threads (a server
** started since then counts from its start). */
static int64_t moved_deadline(kt_bctx *c) {
  int64_t d = c->deadline + (kt_run_delay_self() - c->waited_at_set);
  if (!c->on_host) return d;
  kt_run_delays none = {0};
  const kt_run_delays *then = c->pid == c->delays_pid ? &c->delays_at_set : &none;
  return d + (rm_compile_ns(c) - c->compiled_at_set) + kt_run_delays_since(c->pid, then);
}

/* The deadline of a reply: the moved one, checked again each time it
** passes, as compiles and other jobs may hold the work back while the
** reply is waited for. */
static int64_t reply_deadline(kt_bctx *c) {
  if (!c->deadline) return 0;
  int64_t d = c->deadline;
  while (kt_wire_wait(c->fd, d) == KT_WIRE_TIMEOUT) {
    int64_t moved = moved_deadline(c);
    if (moved <= kt_now_ns()) break;
    d = moved;
  }
  return d;
}

/* The reply to a request sent before (by post), in c->in. */
int rm_reply(kt_bctx *c, kt_fault *fault, kt_error *err) {
  *fault = KT_FAULT_NONE;
  c->round_trips++;
  if (!c->alive) return rm_lose(c, KT_FAULT_LOST, fault, err, NULL);
  if (c->wait.fn) c->wait.fn(c->wait.ud, true);
  kt_wire_rc rc = kt_wire_recv(c->fd, &c->in, reply_deadline(c));
  if (c->wait.fn) c->wait.fn(c->wait.ud, false);
  kt_devout_drain(&c->said);
  if (rc == KT_WIRE_TIMEOUT) {
    char why[128];
    snprintf(why, sizeof why, "the configuration ran past its time limit (%.3g s); its device "
             "process was stopped", (double)c->limit / 1e9);
    return rm_lose(c, KT_FAULT_TIMEOUT, fault, err, why);
  }
  if (rc != KT_WIRE_OK) return rm_lose(c, KT_FAULT_LOST, fault, err, NULL);
  *fault = (kt_fault)kt_msg_get_u32(&c->in);
  if (*fault == KT_FAULT_NONE) return 0;
  char *msg = kt_msg_get_str(&c->in);
  kt_fail(err, "%s", msg ? msg : "the device process failed");
  free(msg);
  return -1;
}

int post(kt_bctx *c, kt_error *err) {
  if (c->gathering) {
    c->requests++;
    return kt_wire_frame(&c->gathered, &c->out) ? kt_fail(err, "out of memory") : 0;
  }
  if (send_out(c) == KT_WIRE_OK) return 0;
  return rm_lose(c, KT_FAULT_LOST, NULL, err, NULL);
}

/* A request whose reply is taken later (rm_reply) goes now, after those
** gathered: gathered, it would be waited for before it was sent. */
int post_replied(kt_bctx *c, kt_error *err) {
  if (send_out(c) == KT_WIRE_OK) return 0;
  return rm_lose(c, KT_FAULT_LOST, NULL, err, NULL);
}

/* A request on the main connection, the server started if needed. */
int begin(kt_bctx *c, uint32_t op, kt_error *err) {
  if (ensure(c, err)) return -1;
  if (!kt_op_queues_nothing(op)) c->quiet = false;
  kt_msg_reset(&c->out);
  return kt_msg_put_u32(&c->out, op);
}

void kt_remote_gather(kt_bctx *c, bool on) {
  c->gathering = on && c->alive;
  if (on || !c->gathered.len) return;
  kt_wire_rc rc = kt_wire_send_frames(c->fd, &c->gathered);
  kt_msg_reset(&c->gathered);
  if (rc != KT_WIRE_OK) rm_lose(c, KT_FAULT_LOST, NULL, NULL, NULL);
}

pid_t kt_remote_pid(const kt_bctx *c) { return c->alive && !c->far ? c->pid : 0; }

void kt_remote_counts(const kt_bctx *c, uint64_t *requests, uint64_t *round_trips) {
  *requests = c->requests;
  *round_trips = c->round_trips;
}

int stale(kt_bctx *c, uint64_t gen, kt_fault *fault, kt_error *err) {
  if (c->alive && gen == c->generation) return 0;
  if (fault) *fault = KT_FAULT_LOST;
  return kt_fail(err, "the device process that held this object was restarted");
}
