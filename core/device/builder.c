/*
** builder.c: a pool of compile threads with one queue. Workers only
** compile: every job is freed on the thread that owns the builder, since a
** program's backend (the remote one above all) may only be used there.
*/
#include "builder.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
  int64_t started;    /* kt_now_ns() when a compile thread took it */
  kt_compile_pool *pool; /* where it compiles, once taken (NULL: here) */
  kt_pool_watch watch; /* its compile in a compiler process (compile_pool.h) */
  pid_t cpid;         /* else the process that compiles it (0: unknown) ... */
  kt_run_delays delays; /* ... and its threads' waits for a processor when it began */
  double own_ns;      /* its own time, once done (builder.h) */
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
  uint64_t finished; /* jobs whose compile is over, ever */
  double *times;     /* the own times of the compiles that ran (not loaded), in order */
  size_t ntimes, captimes;
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
                                              &size, &j->log, &j->watch, &err);
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

/* A compile's own time: in a compiler process, less its waits for a
** processor (compile_pool.h); here, the wall time. Under the lock. */
static void note_time(kt_builder *b, const kt_build_job *j) {
  if (j->loaded || j->lost) return; /* loaded from the disk, or no compile to speak of */
  double ns = j->pool && j->watch.own_ns >= 0 ? j->watch.own_ns : j->own_ns;
  if (b->ntimes == b->captimes) {
    size_t cap = b->captimes ? 2 * b->captimes : 64;
    double *grown = realloc(b->times, cap * sizeof *grown);
    if (!grown) return; /* the median goes on without it */
    b->times = grown;
    b->captimes = cap;
  }
  b->times[b->ntimes++] = ns;
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
    j->started = kt_now_ns();
    kt_program_disk disk = b->disk;
    kt_compile_pool *pool = j->pool = b->pool;
    pthread_mutex_unlock(&b->lock);
    pid_t cpid = pool ? 0 : b->be->compiler_pid ? b->be->compiler_pid(b->ctx) : getpid();
    kt_run_delays delays = {0};
    if (cpid) kt_run_delays_read(cpid, &delays);
    pthread_mutex_lock(&b->lock);
    j->cpid = cpid;
    j->delays = delays;
    pthread_mutex_unlock(&b->lock);
    build(b, j, &disk, pool);
    j->own_ns = j->compile_ns - (cpid ? (double)kt_run_delays_since(cpid, &delays) : 0);
    if (j->own_ns < 0) j->own_ns = 0;
    pthread_mutex_lock(&b->lock);
    j->state = DONE;
    b->finished++;
    note_time(b, j);
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
  pthread_condattr_t monotonic; /* kt_builder_await's deadline is kt_now_ns's */
  pthread_condattr_init(&monotonic);
  pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
  pthread_cond_init(&b->done, &monotonic);
  pthread_condattr_destroy(&monotonic);
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
  free(b->times);
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

bool kt_builder_cancel(kt_builder *b, kt_build_job *j) {
  bool killed = false;
  bury(b);
  pthread_mutex_lock(&b->lock);
  if (j->state == QUEUED) {
    unqueue(b, j);
    b->active--;
    job_free(b, j);
  } else if (j->state == RUNNING) {
    j->cancelled = true;
    /* nobody waits: a compiler process stops now (a compile here runs on) */
    killed = j->pool && kt_compile_pool_kill(j->pool, &j->watch);
  } else {
    job_free(b, j);
  }
  pthread_mutex_unlock(&b->lock);
  return killed;
}

double kt_builder_running_ns(kt_builder *b, kt_build_job *j) {
  pthread_mutex_lock(&b->lock);
  bool running = j->state == RUNNING;
  kt_compile_pool *pool = j->pool;
  int64_t started = j->started;
  pid_t cpid = j->cpid;
  kt_run_delays delays = j->delays;
  pthread_mutex_unlock(&b->lock);
  double ns = 0;
  if (running && pool) {
    ns = kt_compile_pool_watch_ns(pool, &j->watch); /* the job stays: its owner asks */
  } else if (running) {
    ns = (double)(kt_now_ns() - started) - (cpid ? (double)kt_run_delays_since(cpid, &delays) : 0);
  }
  return ns > 0 ? ns : 0;
}

uint64_t kt_builder_finished(kt_builder *b) {
  pthread_mutex_lock(&b->lock);
  uint64_t n = b->finished;
  pthread_mutex_unlock(&b->lock);
  return n;
}

void kt_builder_await(kt_builder *b, uint64_t mark, int64_t deadline_ns) {
  struct timespec at = {(time_t)(deadline_ns / 1000000000), (long)(deadline_ns % 1000000000)};
  pthread_mutex_lock(&b->lock);
  while (b->finished == mark && kt_now_ns() < deadline_ns)
    pthread_cond_timedwait(&b->done, &b->lock, &at);
  pthread_mutex_unlock(&b->lock);
}

static int by_value(const void *x, const void *y) {
  double a = *(const double *)x, c = *(const double *)y;
  return (a > c) - (a < c);
}

size_t kt_builder_times(kt_builder *b) {
  pthread_mutex_lock(&b->lock);
  size_t n = b->ntimes;
  pthread_mutex_unlock(&b->lock);
  return n;
}

double kt_builder_median(kt_builder *b, size_t from, size_t *n) {
  pthread_mutex_lock(&b->lock);
  *n = b->ntimes > from ? b->ntimes - from : 0;
  double *copy = *n ? malloc(*n * sizeof *copy) : NULL;
  if (copy) memcpy(copy, b->times + from, *n * sizeof *copy);
  pthread_mutex_unlock(&b->lock);
  if (!copy) return *n = 0, 0;
  qsort(copy, *n, sizeof *copy, by_value);
  double m = *n % 2 ? copy[*n / 2] : (copy[*n / 2 - 1] + copy[*n / 2]) / 2;
  free(copy);
  return m;
}
