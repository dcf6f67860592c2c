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

#include "devout.h"
#include "remote.h"
#include "result.h"
#include "wire.h"

#define BYTES_PER_WORKER ((long long)512 << 20)

typedef struct worker {
  pid_t pid; /* 0: not running (not yet, or died) */
  int fd;
  bool busy;
  bool ran;
  kt_devout said; /* its stderr, drained by the thread that holds it */
} worker;

struct kt_compile_pool {
  kt_device_info dev;
  pthread_mutex_t lock;
  pthread_cond_t idle;
  worker *workers;
  int n, started;
  char *fallback; /* set once, under lock; read after */
  char *said;     /* what the processes wrote on stderr, not yet taken */
};

int kt_compile_pool_default_size(int build_threads) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  long long bytes = (long long)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
  long long n = build_threads > 0 ? build_threads : 1;
  if (cpus > 0 && n > cpus) n = cpus;
  if (bytes > 0 && n > bytes / BYTES_PER_WORKER) n = bytes / BYTES_PER_WORKER;
  return n < 1 ? 1 : (int)n;
}

static int start(kt_compile_pool *p, worker *w, kt_error *err);

kt_compile_pool *kt_compile_pool_new(const kt_device_info *dev, int workers, kt_error *err) {
  kt_compile_pool *p = kt_calloc(1, sizeof *p, err);
  if (!p) return NULL;
  p->n = workers > 0 ? workers : 1;
  if (!(p->workers = kt_calloc((size_t)p->n, sizeof *p->workers, err)) ||
      kt_device_copy(&p->dev, dev, err)) {
    free(p->workers);
    free(p);
    return NULL;
  }
  for (int i = 0; i < p->n; i++) kt_devout_init(&p->workers[i].said);
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->idle, NULL);
  /* Forked now, from the thread that makes the tuner, before its compile
  ** threads run: a fork while another thread of this process holds an
  ** allocator's lock (the sanitizers' has no fork handler) leaves the
  ** child waiting on it for ever. Only a process that died is forked again
  ** later, from a compile thread. */
  for (int i = 0; i < p->n; i++) {
    if (start(p, &p->workers[i], err)) {
      kt_compile_pool_free(p);
      return NULL;
    }
  }
  return p;
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

/* Forks the process of w (the caller holds w, not the lock). */
static int start(kt_compile_pool *p, worker *w, kt_error *err) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return kt_fail(err, "cannot start a compiler process: %s", strerror(errno));
  int said = kt_devout_pipe(&w->said);
  kt_fork_begin();
  pid_t pid = fork();
  if (pid == 0) {
    if (said >= 0) dup2(said, STDERR_FILENO);
    kt_server_keep_only(sv[1], NULL, 0);
    kt_compile_worker_main(&p->dev, sv[1]);
  }
  int why = errno;
  kt_fork_end();
  close(sv[1]);
  if (said >= 0) close(said);
  if (pid < 0) {
    close(sv[0]);
    return kt_fail(err, "cannot start a compiler process: %s", strerror(why));
  }
  w->pid = pid;
  w->fd = sv[0];
  return 0;
}

/* After its connection failed: ends w's process and says how it ended. */
static char *bury(worker *w) {
  int status = 0;
  close(w->fd);
  kill(w->pid, SIGKILL); /* it may be alive, having closed the connection */
  while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {}
  w->pid = 0;
  w->fd = -1;
  char why[600];
  if (WIFSIGNALED(status))
    snprintf(why, sizeof why, "the compiler process died of signal %d (%s)", WTERMSIG(status),
             strsignal(WTERMSIG(status)));
  else
    snprintf(why, sizeof why, "the compiler process exited with status %d", WEXITSTATUS(status));
  kt_devout_drain(&w->said);
  kt_devout_last_line(&w->said, why, sizeof why); /* an assertion's message, say */
  return strdup(why);
}

static worker *take(kt_compile_pool *p) {
  pthread_mutex_lock(&p->lock);
  worker *w = NULL;
  while (!p->fallback && !w) {
    for (int i = 0; i < p->n && !w; i++)
      if (!p->workers[i].busy) w = &p->workers[i];
    if (!w) pthread_cond_wait(&p->idle, &p->lock);
  }
  if (w) w->busy = true;
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
  if (fallback && !p->fallback) p->fallback = strdup(fallback);
  pthread_cond_broadcast(&p->idle);
  pthread_mutex_unlock(&p->lock);
}

/* The answer of w's process to the request in out, in in; its death as
** KT_POOL_FAILED with why in *log. */
static kt_pool_outcome ask(worker *w, kt_msg *out, kt_msg *in, unsigned char **bytes,
                           size_t *size, char **log, kt_error *err) {
  if (kt_wire_send(w->fd, out) != KT_WIRE_OK || kt_wire_recv(w->fd, in, 0) != KT_WIRE_OK) {
    *log = bury(w);
    return KT_POOL_FAILED;
  }
  kt_pool_outcome o = (kt_pool_outcome)kt_msg_get_u32(in);
  if (o == KT_POOL_BUILT) *bytes = kt_msg_get_bytes(in, size);
  char *text = kt_msg_get_str(in);
  if (in->bad || o > KT_POOL_NO_BINARIES || (o == KT_POOL_BUILT && !*bytes)) {
    free(text);
    free(*bytes);
    *bytes = NULL;
    *log = strdup("the compiler process gave an answer cut short");
    return KT_POOL_FAILED;
  }
  if (o == KT_POOL_NO_BINARIES) {
    kt_fail(err, "%s", text ? text : "no program binaries");
    free(text);
  } else {
    *log = text;
  }
  return o;
}

kt_pool_outcome kt_compile_pool_compile(kt_compile_pool *p, const char *source,
                                        const char *options, const char *name,
                                        unsigned char **bytes, size_t *size, char **log,
                                        kt_error *err) {
  *bytes = NULL;
  *size = 0;
  *log = NULL;
  worker *w = take(p);
  if (!w) return kt_fail(err, "%s", p->fallback), KT_POOL_NO_BINARIES;
  kt_error why;
  if (w->pid && waitpid(w->pid, NULL, WNOHANG) == w->pid) { /* died idle: replaced unseen */
    close(w->fd);
    w->pid = 0;
  }
  if (!w->pid && start(p, w, &why)) {
    give(p, w, NULL);
    *log = strdup(why.msg);
    return KT_POOL_FAILED;
  }
  pthread_mutex_lock(&p->lock);
  if (!w->ran) p->started++;
  w->ran = true;
  pthread_mutex_unlock(&p->lock);
  kt_msg out, in;
  kt_msg_init(&out);
  kt_msg_init(&in);
  kt_msg_put_str(&out, source);
  kt_msg_put_str(&out, options);
  kt_msg_put_str(&out, name);
  kt_pool_outcome o = ask(w, &out, &in, bytes, size, log, err);
  kt_msg_free(&out);
  kt_msg_free(&in);
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
