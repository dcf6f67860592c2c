/*
** builder.c: a pool of compile threads with one queue. Workers only
** compile: every job is freed on the thread that owns the builder, since a
** program's backend (the remote one above all) may only be used there.
*/
#include "builder.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remote.h"

typedef enum { QUEUED, RUNNING, DONE } job_state;

struct kt_build_job {
  char *source, *options, *name;
  job_state state;
  bool cancelled;  /* nobody waits: once done, it waits in the dead list */
  kt_bprog *prog;
  char *log;
  double compile_ns;
  kt_build_job *next; /* in the queue */
};

struct kt_builder {
  const kt_backend *be;
  kt_bctx *ctx;
  pthread_mutex_t lock;
  pthread_cond_t work, done;
  kt_build_job *head, *tail;
  kt_build_job *dead; /* cancelled jobs the workers finished, for the owner to free */
  bool stopping;
  size_t active; /* jobs queued or compiling */
  int nthreads, started;
  pthread_t *threads;
};

static void job_free(kt_builder *b, kt_build_job *j) {
  if (j->prog) b->be->prog_free(b->ctx, j->prog);
  free(j->log);
  free(j->source);
  free(j->options);
  free(j->name);
  free(j);
}

static kt_build_job *take(kt_builder *b) {
  kt_build_job *j = b->head;
  b->head = j->next;
  if (!b->head) b->tail = NULL;
  j->next = NULL;
  return j;
}

static void compile(kt_builder *b, kt_build_job *j) {
  kt_error err;
  int64_t t0 = kt_now_ns();
  j->prog = b->be->compile(b->ctx, j->source, j->options, j->name, &j->log, &err);
  j->compile_ns = (double)(kt_now_ns() - t0);
  if (!j->prog && (!j->log || !j->log[0])) {
    free(j->log);
    j->log = strdup(err.msg); /* no compiler log: the API's reason */
  }
}

static void *worker(void *arg) {
  kt_builder *b = arg;
  pthread_mutex_lock(&b->lock);
  b->started++; /* kt_builder_new waits for this (see there) */
  pthread_cond_broadcast(&b->done);
  for (;;) {
    while (!b->head && !b->stopping) pthread_cond_wait(&b->work, &b->lock);
    if (b->stopping) break;
    kt_build_job *j = take(b);
    j->state = RUNNING;
    pthread_mutex_unlock(&b->lock);
    kt_fork_guard_enter();
    compile(b, j);
    kt_fork_guard_leave();
    pthread_mutex_lock(&b->lock);
    j->state = DONE;
    b->active--;
    if (j->cancelled) {
      j->next = b->dead;
      b->dead = j;
    }
    pthread_cond_broadcast(&b->done);
  }
  pthread_mutex_unlock(&b->lock);
  return NULL;
}

/* Frees the cancelled jobs the workers have finished (owner's thread). */
static void bury(kt_builder *b) {
  pthread_mutex_lock(&b->lock);
  kt_build_job *j = b->dead;
  b->dead = NULL;
  pthread_mutex_unlock(&b->lock);
  while (j) {
    kt_build_job *next = j->next;
    job_free(b, j);
    j = next;
  }
}

kt_builder *kt_builder_new(const kt_backend *be, kt_bctx *ctx, int threads, kt_error *err) {
  if (threads <= 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    threads = n > 0 ? (int)n : 1;
  }
  kt_builder *b = kt_calloc(1, sizeof *b, err);
  if (!b) return NULL;
  b->be = be;
  b->ctx = ctx;
  pthread_mutex_init(&b->lock, NULL);
  pthread_cond_init(&b->work, NULL);
  pthread_cond_init(&b->done, NULL);
  if (!(b->threads = kt_calloc((size_t)threads, sizeof *b->threads, err))) {
    kt_builder_free(b);
    return NULL;
  }
  for (int i = 0; i < threads; i++) {
    if (pthread_create(&b->threads[i], NULL, worker, b) != 0) {
      kt_fail(err, "cannot start compile thread %d", i + 1);
      kt_builder_free(b);
      return NULL;
    }
    b->nthreads = i + 1;
  }
  /* A thread that is starting may be inside the allocator: a process
  ** forked then (a device server) would find it locked for ever. */
  pthread_mutex_lock(&b->lock);
  while (b->started < b->nthreads) pthread_cond_wait(&b->done, &b->lock);
  pthread_mutex_unlock(&b->lock);
  return b;
}

int kt_builder_threads(const kt_builder *b) { return b->nthreads; }

void kt_builder_free(kt_builder *b) {
  if (!b) return;
  pthread_mutex_lock(&b->lock);
  b->stopping = true;
  while (b->head) job_free(b, take(b));
  pthread_cond_broadcast(&b->work);
  pthread_mutex_unlock(&b->lock);
  for (int i = 0; i < b->nthreads; i++) pthread_join(b->threads[i], NULL);
  bury(b);
  pthread_cond_destroy(&b->work);
  pthread_cond_destroy(&b->done);
  pthread_mutex_destroy(&b->lock);
  free(b->threads);
  free(b);
}

kt_build_job *kt_builder_submit(kt_builder *b, const char *source, const char *options,
                                const char *name, kt_error *err) {
  bury(b);
  kt_build_job *j = kt_calloc(1, sizeof *j, err);
  if (!j) return NULL;
  j->source = kt_strdup(source, err);
  j->options = kt_strdup(options, err);
  j->name = kt_strdup(name, err);
  if (!j->source || !j->options || !j->name) {
    job_free(b, j);
    return NULL;
  }
  pthread_mutex_lock(&b->lock);
  if (b->tail) b->tail->next = j;
  else b->head = j;
  b->tail = j;
  b->active++;
  pthread_cond_signal(&b->work);
  pthread_mutex_unlock(&b->lock);
  return j;
}

static void unqueue(kt_builder *b, kt_build_job *j) {
  kt_build_job **p = &b->head, *prev = NULL;
  while (*p && *p != j) {
    prev = *p;
    p = &(*p)->next;
  }
  if (!*p) return;
  *p = j->next;
  if (b->tail == j) b->tail = prev;
}

kt_bprog *kt_builder_wait(kt_builder *b, kt_build_job *j, char **log, double *compile_ns) {
  pthread_mutex_lock(&b->lock);
  if (j->state == QUEUED && b->head != j) {
    /* Needed now: ahead of the prefetched ones (a reference kernel's, or one
    ** that a searcher proposed after them). */
    unqueue(b, j);
    j->next = b->head;
    b->head = j;
    if (!b->tail) b->tail = j;
  }
  while (j->state != DONE) pthread_cond_wait(&b->done, &b->lock);
  pthread_mutex_unlock(&b->lock);
  kt_bprog *prog = j->prog;
  *log = j->log;
  *compile_ns = j->compile_ns;
  j->prog = NULL;
  j->log = NULL;
  job_free(b, j);
  bury(b);
  return prog;
}

bool kt_builder_done(kt_builder *b, kt_build_job *j) {
  pthread_mutex_lock(&b->lock);
  bool done = j->state == DONE;
  pthread_mutex_unlock(&b->lock);
  return done;
}

size_t kt_builder_active(kt_builder *b) {
  pthread_mutex_lock(&b->lock);
  size_t n = b->active;
  pthread_mutex_unlock(&b->lock);
  return n;
}

void kt_builder_cancel(kt_builder *b, kt_build_job *j) {
  bury(b);
  pthread_mutex_lock(&b->lock);
  if (j->state == QUEUED) {
    unqueue(b, j);
    b->active--;
    job_free(b, j);
  } else if (j->state == RUNNING) {
    j->cancelled = true;
  } else {
    job_free(b, j);
  }
  pthread_mutex_unlock(&b->lock);
}
