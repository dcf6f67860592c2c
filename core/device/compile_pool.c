/*
** compile_pool.c: the tuner's side of the compiler processes
** (compile_pool.h).
*/
#define _GNU_SOURCE
#include "compile_pool.h"

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
#include "device_wire.h"
#include "devout.h"
#include "ktlua_exe.h"
#include "log_append.h"
#include "spawn.h"
#include "wire.h"

#define BYTES_PER_WORKER ((long long)512 << 20)

typedef struct worker {
  pid_t pid; /* 0: not running (not yet, or died) */
  int fd;
  bool busy;
  bool ran;
  bool greeted; /* it has answered the greeting (it is ktlua's compiler) */
  bool waking;  /* held by wake while its process starts */
  kt_devout said; /* its stderr, drained by the thread that holds it */
} worker;

struct kt_compile_pool {
  kt_device_info dev;
  char exe[4096];   /* the ktlua executable each process runs (ktlua_exe.h) */
  double timeout_s; /* the longest a compile may take; set before the first */
  pthread_mutex_t lock;
  pthread_cond_t idle;
  worker *workers;
  int n, started;
  bool woken; /* a compile has come: the processes were started */
  char *fallback; /* set once, under lock; read after */
  char *said;     /* what the processes wrote on stderr, not yet taken */
};

int kt_compile_pool_default_size(int build_threads, int devices) {
  long long cpus = kt_cpus_usable();
  long long bytes = (long long)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
  long long n = build_threads > 0 ? build_threads : 1, share = devices > 1 ? devices : 1;
  if (n > cpus / share) n = cpus / share;
  if (bytes > 0 && n > bytes / BYTES_PER_WORKER / share) n = bytes / BYTES_PER_WORKER / share;
  return n < 1 ? 1 : (int)n;
}

static int start(kt_compile_pool *p, worker *w, kt_error *err);

/* Says why there are no processes, from now on (under lock or alone). */
static void fall_back(kt_compile_pool *p, const char *why) {
  if (!p->fallback) p->fallback = strdup(why);
}

kt_compile_pool *kt_compile_pool_new(const kt_device_info *dev, int workers, kt_error *err) {
  kt_compile_pool *p = kt_calloc(1, sizeof *p, err);
  if (!p) return NULL;
  p->n = workers > 0 ? workers : 1;
  p->timeout_s = KT_COMPILE_TIMEOUT_DEFAULT;
  if (!(p->workers = kt_calloc((size_t)p->n, sizeof *p->workers, err)) ||
      kt_device_copy(&p->dev, dev, err)) {
    free(p->workers);
    free(p);
    return NULL;
  }
  for (int i = 0; i < p->n; i++) kt_devout_init(&p->workers[i].said);
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->idle, NULL);
  char why[4400];
  if (kt_ktlua_exe(p->exe, sizeof p->exe, why, sizeof why)) fall_back(p, why);
  return p; /* the processes start at the first compile (wake) */
}

/* At the first compile, every process starts at once, so that they load
** while the first ones compile and the tuner sets up; not before, so a
** tuning whose programs the disk cache holds starts none: each would load
** its compiler (NVRTC: a compile of its own), processor time taken from a
** warm tuning's first loads. Each answers its greeting at its first compile. */
static void wake(kt_compile_pool *p) {
  pthread_mutex_lock(&p->lock);
  bool first = !p->woken;
  p->woken = true;
  int held = 0;
  for (int i = 0; first && i < p->n; i++) {
    worker *w = &p->workers[i];
    if (w->busy || w->pid) continue;
    w->busy = w->waking = true;
    held++;
  }
  pthread_mutex_unlock(&p->lock);
  if (!held) return;
  kt_error failed;
  char *why = NULL;
  for (int i = 0; i < p->n; i++)
    if (p->workers[i].waking && !why && start(p, &p->workers[i], &failed))
      why = strdup(failed.msg);
  pthread_mutex_lock(&p->lock);
  for (int i = 0; i < p->n; i++)
    if (p->workers[i].waking) p->workers[i].busy = p->workers[i].waking = false;
  if (why) fall_back(p, why);
  pthread_cond_broadcast(&p->idle);
  pthread_mutex_unlock(&p->lock);
  free(why);
}

void kt_compile_pool_set_timeout(kt_compile_pool *p, double seconds) {
  pthread_mutex_lock(&p->lock);
  p->timeout_s = seconds;
  pthread_mutex_unlock(&p->lock);
}

void kt_compile_pool_free(kt_compile_pool *p) {
  if (!p) return;
  for (int i = 0; i < p->n; i++) {
    if (p->workers[i].pid) {
      close(p->workers[i].fd); /* it ends at end of file ... */
      kill(p->workers[i].pid, SIGKILL); /* ... or now, in the middle of opening a compiler */
      while (waitpid(p->workers[i].pid, NULL, 0) < 0 && errno == EINTR) {}
    }
    kt_devout_free(&p->workers[i].said);
  }
  free(p->said);
  pthread_cond_destroy(&p->idle);
  pthread_mutex_destroy(&p->lock);
  kt_device_clear(&p->dev);
  free(p->workers);
  free(p->fallback);
  free(p);
}

/* A fresh ktlua in compiler mode for w (the caller holds w, not the
** lock), greeted with the protocol and the device: fd 3 is its end of the
** connection; its stdout and stderr, the pipe of w->said. */
static int start(kt_compile_pool *p, worker *w, kt_error *err) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return kt_fail(err, "cannot start a compiler process: %s", strerror(errno));
  int said = kt_devout_pipe(&w->said);
  const char *argv[] = {p->exe, KT_COMPILE_WORKER_ARG, NULL};
  const int fds[] = {-1, said, said, sv[1]};
  pid_t pid;
  int rc = kt_spawn_start(argv, fds, 4, &pid, err);
  close(sv[1]);
  if (said >= 0) close(said);
  if (rc) {
    close(sv[0]);
    kt_fail_prefix(err, "cannot start a compiler process: ");
    return -1;
  }
  w->pid = pid;
  w->fd = sv[0];
  w->greeted = false;
  kt_msg hello;
  kt_msg_init(&hello);
  kt_msg_put_u32(&hello, KT_COMPILE_PROTOCOL);
  kt_msg_put_device(&hello, &p->dev);
  kt_wire_send(w->fd, &hello); /* a failure shows at its first compile */
  kt_msg_free(&hello);
  return 0;
}

/* Ends w's process (after its connection failed, or its time ran out:
** timeout_s > 0) and says why, in words for a configuration's log. */
static char *bury(worker *w, double timeout_s) {
  int status = 0;
  close(w->fd);
  kill(w->pid, SIGKILL); /* it may be alive, having closed the connection, or hung */
  while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {}
  w->pid = 0;
  w->fd = -1;
  char why[600];
  if (timeout_s > 0)
    snprintf(why, sizeof why, "compile took longer than %g s (compile_timeout): its compiler "
             "process was killed", timeout_s);
  else if (WIFSIGNALED(status))
    snprintf(why, sizeof why, "the compiler process died of signal %d (%s)", WTERMSIG(status),
             strsignal(WTERMSIG(status)));
  else
    snprintf(why, sizeof why, "the compiler process exited with status %d", WEXITSTATUS(status));
  kt_devout_drain(&w->said);
  if (timeout_s <= 0) kt_devout_last_line(&w->said, why, sizeof why); /* an assertion's message */
  return strdup(why);
}

static worker *take(kt_compile_pool *p, double *timeout_s) {
  pthread_mutex_lock(&p->lock);
  worker *w = NULL;
  while (!p->fallback && !w) {
    for (int i = 0; i < p->n && !w; i++)
      if (!p->workers[i].busy) w = &p->workers[i];
    if (!w) pthread_cond_wait(&p->idle, &p->lock);
  }
  if (w) w->busy = true;
  if (w && !w->ran) p->started++;
  if (w) w->ran = true;
  *timeout_s = p->timeout_s;
  pthread_mutex_unlock(&p->lock);
  return w;
}

static void give(kt_compile_pool *p, worker *w, const char *fallback) {
  kt_devout_drain(&w->said);
  char *said = kt_devout_take(&w->said);
  pthread_mutex_lock(&p->lock);
  if (said) kt_log_append(&p->said, said);
  free(said);
  w->busy = false;
  if (fallback) fall_back(p, fallback);
  pthread_cond_broadcast(&p->idle);
  pthread_mutex_unlock(&p->lock);
}

/* Its answer to the greeting start sent, once: 0 when it is ktlua's
** compiler of this protocol; else why not in err (the pool falls back). */
static int greeted(kt_compile_pool *p, worker *w, double limit, int64_t deadline,
                   kt_error *err) {
  if (w->greeted) return 0;
  kt_msg in;
  kt_msg_init(&in);
  kt_wire_rc rc = kt_wire_recv(w->fd, &in, deadline);
  uint32_t protocol = rc == KT_WIRE_OK ? kt_msg_get_u32(&in) : 0;
  char *text = rc == KT_WIRE_OK ? kt_msg_get_str(&in) : NULL;
  int ok = rc == KT_WIRE_OK && !in.bad && protocol == KT_COMPILE_PROTOCOL && text && !text[0];
  kt_msg_free(&in);
  if (ok) {
    free(text);
    return w->greeted = true, 0;
  }
  char *how = bury(w, rc == KT_WIRE_TIMEOUT ? limit : 0);
  kt_fail(err, "%s did not start as ktlua's compiler process (%s)", p->exe,
          text && text[0] ? text : how);
  free(how);
  free(text);
  return -1;
}

/* The request is out: watch follows it (w's process, held by the calling
** thread, cannot end meanwhile). */
static void watch_start(kt_compile_pool *p, const worker *w, kt_pool_watch *watch) {
  kt_run_delays delays;
  kt_run_delays_read(w->pid, &delays);
  pthread_mutex_lock(&p->lock);
  watch->pid = w->pid;
  watch->since = kt_now_ns();
  watch->delays = delays;
  watch->active = true;
  pthread_mutex_unlock(&p->lock);
}

/* The answer is in, or the connection failed: before w's process is
** buried, so that kt_compile_pool_kill never signals a process reaped. */
static void watch_end(kt_compile_pool *p, kt_pool_watch *watch) {
  double own = (double)(kt_now_ns() - watch->since) -
               (double)kt_run_delays_since(watch->pid, &watch->delays);
  pthread_mutex_lock(&p->lock);
  watch->active = false;
  watch->own_ns = own > 0 ? own : 0;
  pthread_mutex_unlock(&p->lock);
}

double kt_compile_pool_watch_ns(kt_compile_pool *p, kt_pool_watch *watch) {
  pthread_mutex_lock(&p->lock);
  double ns = -1;
  if (watch->active) {
    ns = (double)(kt_now_ns() - watch->since) -
         (double)kt_run_delays_since(watch->pid, &watch->delays);
    if (ns < 0) ns = 0;
  }
  pthread_mutex_unlock(&p->lock);
  return ns;
}

bool kt_compile_pool_kill(kt_compile_pool *p, kt_pool_watch *watch) {
  pthread_mutex_lock(&p->lock);
  bool now = watch->active && !watch->killed;
  if (now) {
    kill(watch->pid, SIGKILL); /* not reaped before watch_end, which takes the lock */
    watch->killed = true;
  }
  pthread_mutex_unlock(&p->lock);
  return now;
}

/* The answer of w's process to the request in out, in in; its death or
** its time running out as KT_POOL_LOST with why in *log. */
static kt_pool_outcome ask(kt_compile_pool *p, worker *w, double limit, kt_msg *out,
                           kt_msg *in, unsigned char **bytes, size_t *size, char **log,
                           kt_pool_watch *watch, kt_error *err) {
  int64_t deadline = limit > 0 ? kt_now_ns() + kt_ns_clamp(limit * 1e9) : 0;
  if (greeted(p, w, limit, deadline, err)) return KT_POOL_NO_BINARIES;
  watch_start(p, w, watch);
  kt_wire_rc rc = kt_wire_send(w->fd, out);
  if (rc == KT_WIRE_OK) rc = kt_wire_recv(w->fd, in, deadline);
  watch_end(p, watch);
  if (rc != KT_WIRE_OK) {
    *log = bury(w, rc == KT_WIRE_TIMEOUT ? limit : 0);
    return KT_POOL_LOST;
  }
  kt_pool_outcome o = (kt_pool_outcome)kt_msg_get_u32(in);
  if (o == KT_POOL_BUILT) *bytes = kt_msg_get_bytes(in, size);
  char *text = kt_msg_get_str(in);
  if (in->bad || o > KT_POOL_REFUSED || (o == KT_POOL_BUILT && !*bytes)) {
    free(text);
    free(*bytes);
    *bytes = NULL;
    *log = strdup("the compiler process gave an answer cut short");
    return KT_POOL_LOST;
  }
  if (o == KT_POOL_NO_BINARIES) {
    kt_fail(err, "%s", text ? text : "no program binaries");
    free(text);
  } else {
    *log = text;
  }
  return o;
}

/* A process for w: one that died idle, or at its last compile, is
** replaced (a fresh image: any thread may start it). */
static int ready(kt_compile_pool *p, worker *w, char **log) {
  if (w->pid && waitpid(w->pid, NULL, WNOHANG) == w->pid) { /* died idle: replaced unseen */
    close(w->fd);
    w->pid = 0;
  }
  kt_error why;
  if (w->pid || !start(p, w, &why)) return 0;
  *log = strdup(why.msg);
  return -1;
}

kt_pool_outcome kt_compile_pool_compile(kt_compile_pool *p, const char *source,
                                        const char *options, const char *name,
                                        unsigned char **bytes, size_t *size, char **log,
                                        kt_pool_watch *watch, kt_error *err) {
  *bytes = NULL;
  *size = 0;
  *log = NULL;
  watch->own_ns = -1;
  double limit;
  wake(p);
  worker *w = take(p, &limit);
  if (!w) return kt_fail(err, "%s", p->fallback), KT_POOL_NO_BINARIES;
  if (ready(p, w, log)) {
    give(p, w, NULL);
    return KT_POOL_LOST;
  }
  kt_msg out, in;
  kt_msg_init(&out);
  kt_msg_init(&in);
  kt_msg_put_str(&out, source);
  kt_msg_put_str(&out, options);
  kt_msg_put_str(&out, name);
  kt_pool_outcome o = ask(p, w, limit, &out, &in, bytes, size, log, watch, err);
  kt_msg_free(&out);
  kt_msg_free(&in);
  char *ignored = NULL; /* the next compile says it, if it lasts */
  if (o == KT_POOL_LOST && !w->pid && ready(p, w, &ignored)) free(ignored);
  give(p, w, o == KT_POOL_NO_BINARIES ? err->msg : NULL);
  return o;
}

int kt_compile_pool_started(kt_compile_pool *p) {
  pthread_mutex_lock(&p->lock);
  int n = p->started;
  pthread_mutex_unlock(&p->lock);
  return n;
}

const char *kt_compile_pool_fallback(kt_compile_pool *p) {
  pthread_mutex_lock(&p->lock);
  const char *why = p->fallback;
  pthread_mutex_unlock(&p->lock);
  return why;
}

char *kt_compile_pool_take_output(kt_compile_pool *p) {
  pthread_mutex_lock(&p->lock);
  char *said = p->said;
  p->said = NULL;
  pthread_mutex_unlock(&p->lock);
  return said;
}
