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

#include "compile_pool.h"
#include "remote.h"

typedef enum { QUEUED, RUNNING, DONE } job_state;

struct kt_build_job {
  char *source, *options, *name;
  job_state state;
  bool cancelled;  /* nobody waits: once done, it waits in the dead list */
  kt_bprog *prog;
  char *log;
  double compile_ns;
  bool loaded;        /* from the disk cache rather than compiled */
  bool lost;          /* its compiler process died or ran past the limit: no verdict */
  char *unkept;       /* why the disk did not keep what it compiled, or NULL */
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
  kt_program_disk disk; /* where programs are looked for first (store NULL: nowhere) */
  kt_compile_pool *pool; /* where programs are compiled (NULL: by the backend, here) */
  size_t compiled, loaded;
  size_t unkept;     /* jobs whose program the disk did not keep ... */
  char *unkept_why;  /* ... and why the last one was not */
  size_t active; /* jobs queued or compiling */
  int nthreads, started;
  pthread_t *threads;
};

static void job_free(kt_builder *b, kt_build_job *j) {
  if (j->prog) b->be->prog_free(b->ctx, j->prog);
  free(j->log);
  free(j->unkept);
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

/* No compiler log: the API's reason. */
static void explain(kt_build_job *j, const char *why) {
  if (j->prog || (j->log && j->log[0])) return;
  free(j->log);
  j->log = strdup(why);
}

/* Inside the fork guard (remote.h). */
static void compile(kt_builder *b, kt_build_job *j, const kt_program_disk *disk) {
  kt_error err;
  j->prog = kt_program_build(disk, b->be, b->ctx, j->source, j->options, j->name, &j->log,
                             &j->loaded, &j->unkept, &err);
  explain(j, err.msg);
}

/* The binary a compiler process made, kept on the disk and loaded here. */
static void load(kt_builder *b, kt_build_job *j, const kt_program_disk *disk,
                 const kt_program_src *p, const unsigned char *bytes, size_t size) {
  kt_error err;
  char *load_log = NULL;
  j->prog = b->be->prog_load(b->ctx, bytes, size, j->options, j->name, &load_log, &err);
  free(load_log);
  if (j->prog) {
    j->unkept = kt_program_disk_keep(disk, b->be, p, bytes, size, j->log);
    return;
  }
  free(j->log);
  j->log = NULL;
  kt_fail_prefix(&err, "the compiled program did not load: ");
  explain(j, err.msg);
}

/* Through the pool: the disk first, then a compiler process, whose
** answer is waited for outside the fork guard (it may fork). Where the
** platform gives no binaries, the backend compiles here. */
static void compile_pooled(kt_builder *b, kt_build_job *j, const kt_program_disk *disk,
                           kt_compile_pool *pool) {
  kt_program_src p = {j->source, j->options, j->name, {NULL, NULL}};
  bool refused;
  kt_fork_guard_enter();
  j->prog = kt_program_disk_load(disk, b->be, b->ctx, &p, &j->log, &refused);
  kt_fork_guard_leave();
  if ((j->loaded = j->prog != NULL || refused)) {
    kt_program_src_clear(&p);
    explain(j, "compilation failed");
    return;
  }
  unsigned char *bytes;
  size_t size;
  kt_error err;
  kt_pool_outcome o = kt_compile_pool_compile(pool, j->source, j->options, j->name, &bytes,
                                              &size, &j->log, &err);
  kt_fork_guard_enter();
  if (o == KT_POOL_NO_BINARIES) compile(b, j, disk);
  else if (o == KT_POOL_BUILT) load(b, j, disk, &p, bytes, size);
  else if (o == KT_POOL_REFUSED) j->unkept = kt_program_disk_refused(disk, b->be, &p, j->log);
  else if (o == KT_POOL_LOST) j->lost = true;
  if (!j->prog) explain(j, "compilation failed");
  kt_fork_guard_leave();
  kt_program_src_clear(&p);
  free(bytes);
}

static void build(kt_builder *b, kt_build_job *j, const kt_program_disk *disk,
                  kt_compile_pool *pool) {
  int64_t t0 = kt_now_ns();
  if (pool) {
    compile_pooled(b, j, disk, pool);
  } else {
    kt_fork_guard_enter();
    compile(b, j, disk);
    kt_fork_guard_leave();
  }
  j->compile_ns = (double)(kt_now_ns() - t0);
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
    kt_program_disk disk = b->disk;
    kt_compile_pool *pool = b->pool;
    pthread_mutex_unlock(&b->lock);
    build(b, j, &disk, pool);
    pthread_mutex_lock(&b->lock);
    j->state = DONE;
    if (j->loaded) b->loaded++;
    else b->compiled++;
    if (j->unkept) {
      b->unkept++;
      free(b->unkept_why);
      b->unkept_why = j->unkept;
      j->unkept = NULL;
    }
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

void kt_builder_set_disk(kt_builder *b, kt_program_disk disk) {
  pthread_mutex_lock(&b->lock);
  b->disk = disk;
  pthread_mutex_unlock(&b->lock);
}

void kt_builder_set_pool(kt_builder *b, kt_compile_pool *pool) {
  pthread_mutex_lock(&b->lock);
  b->pool = b->be->prog_load ? pool : NULL;
  pthread_mutex_unlock(&b->lock);
}

void kt_builder_counts(kt_builder *b, size_t *compiled, size_t *loaded) {
  pthread_mutex_lock(&b->lock);
  *compiled = b->compiled;
  *loaded = b->loaded;
  pthread_mutex_unlock(&b->lock);
}

size_t kt_builder_unkept(kt_builder *b, char **why) {
  pthread_mutex_lock(&b->lock);
  size_t n = b->unkept;
  if (why) *why = b->unkept_why ? strdup(b->unkept_why) : NULL;
  pthread_mutex_unlock(&b->lock);
  return n;
}

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
  free(b->unkept_why);
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

kt_bprog *kt_builder_wait(kt_builder *b, kt_build_job *j, char **log, double *compile_ns,
                          bool *lost) {
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
  *lost = j->lost && !prog;
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
