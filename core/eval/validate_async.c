/*
** validate_async.c: a host worker that compares outputs (validate_async.h).
*/
#include "validate_async.h"

#include <pthread.h>
#include <stdlib.h>

#include "validate.h"

typedef struct job {
  const kt_array *got;
  const kt_reference *ref;
} job;

typedef enum { IDLE, QUEUED, DONE, QUIT } batch_state;

struct kt_checker {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  batch_state state;
  job *jobs;
  size_t njobs, capjobs;
  /* what the batch found: the verdict of job `which`, the first that did
  ** not match (same is 1 when all did) */
  int same;
  size_t which;
  char *why;
  kt_error err;
};

/* Compares the batch's outputs in order, up to the first that differs. */
static void compare_batch(kt_checker *c) {
  c->same = 1;
  for (size_t i = 0; i < c->njobs && c->same == 1; i++) {
    const job *j = &c->jobs[i];
    c->same = kt_compare_reference(j->got, j->ref, &c->why, &c->err);
    c->which = i;
  }
}

static void *work(void *ud) {
  kt_checker *c = ud;
  pthread_mutex_lock(&c->lock);
  for (;;) {
    while (c->state != QUEUED && c->state != QUIT) pthread_cond_wait(&c->changed, &c->lock);
    if (c->state == QUIT) break;
    /* The batch's fields belong to this thread until it says DONE. */
    pthread_mutex_unlock(&c->lock);
    compare_batch(c);
    pthread_mutex_lock(&c->lock);
    c->state = DONE;
    pthread_cond_broadcast(&c->changed);
  }
  pthread_mutex_unlock(&c->lock);
  return NULL;
}

kt_checker *kt_checker_new(kt_error *err) {
  kt_checker *c = kt_calloc(1, sizeof *c, err);
  if (!c) return NULL;
  pthread_mutex_init(&c->lock, NULL);
  pthread_cond_init(&c->changed, NULL);
  if (pthread_create(&c->thread, NULL, work, c) != 0) {
    pthread_cond_destroy(&c->changed);
    pthread_mutex_destroy(&c->lock);
    free(c);
    return kt_fail(err, "cannot start the validation thread"), NULL;
  }
  return c;
}

void kt_checker_free(kt_checker *c) {
  if (!c) return;
  pthread_mutex_lock(&c->lock);
  while (c->state == QUEUED) pthread_cond_wait(&c->changed, &c->lock);
  c->state = QUIT;
  pthread_cond_broadcast(&c->changed);
  pthread_mutex_unlock(&c->lock);
  pthread_join(c->thread, NULL);
  free(c->why);
  free(c->jobs);
  pthread_cond_destroy(&c->changed);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

/* Between batches the worker does not read the list. */
int kt_checker_add(kt_checker *c, const kt_array *got, const kt_reference *r, kt_error *err) {
  pthread_mutex_lock(&c->lock);
  bool idle = c->state == IDLE;
  pthread_mutex_unlock(&c->lock);
  if (!idle) return kt_fail(err, "the comparisons of a configuration are in progress");
  if (kt_grow(&c->jobs, &c->capjobs, c->njobs + 1, sizeof *c->jobs, err)) return -1;
  c->jobs[c->njobs++] = (job){got, r};
  return 0;
}

void kt_checker_start(kt_checker *c) {
  pthread_mutex_lock(&c->lock);
  if (c->state == IDLE && c->njobs) {
    c->state = QUEUED;
    pthread_cond_broadcast(&c->changed);
  }
  pthread_mutex_unlock(&c->lock);
}

int kt_checker_wait(kt_checker *c, size_t *which, char **why, kt_error *err) {
  *why = NULL;
  *which = 0;
  pthread_mutex_lock(&c->lock);
  while (c->state == QUEUED) pthread_cond_wait(&c->changed, &c->lock);
  int same = 1;
  if (c->state == DONE) {
    same = c->same;
    *which = c->which;
    *why = c->why;
    if (same < 0 && err) *err = c->err;
  }
  c->why = NULL;
  c->njobs = 0;
  c->state = IDLE;
  pthread_mutex_unlock(&c->lock);
  return same;
}
