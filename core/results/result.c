/*
** result.c: result records.
*/
#include "result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal_id.h"
#include "metrics.h"

kt_results *kt_results_new(const char *name, const kt_space *space,
                           const char *const *kernels, size_t nkernels, const char *device,
                           kt_error *err) {
  kt_results *r = kt_calloc(1, sizeof *r, err);
  if (!r) return NULL;
  r->refs = 1;
  r->nparams = kt_space_nparams(space);
  r->task = kt_strdup(name, err);
  r->device = kt_strdup(device, err);
  r->params = r->nparams ? kt_params_clone(space, err) : NULL;
  r->kernels = kt_calloc(nkernels, sizeof *r->kernels, err);
  if (!r->task || !r->device || (r->nparams && !r->params) || !r->kernels) {
    kt_results_release(r);
    return NULL;
  }
  for (size_t i = 0; i < nkernels; i++) {
    if (!(r->kernels[i] = kt_strdup(kernels[i], err))) {
      kt_results_release(r);
      return NULL;
    }
    r->nkernels = i + 1;
  }
  r->space_all = kt_space_count_all(space);
  /* results number the space as defined (space.h); 0: not counted */
  r->space_count = kt_space_sampled(space) ? 0 : kt_space_natural_count(space);
  return r;
}

kt_results *kt_results_for_task(const kt_task *t, const char *device, kt_error *err) {
  const char **names = kt_calloc(t->nkernels, sizeof *names, err);
  if (!names) return NULL;
  for (size_t i = 0; i < t->nkernels; i++) names[i] = t->kernels[i]->name;
  kt_results *r = kt_results_new(t->name, t->space, names, t->nkernels, device, err);
  free(names);
  return r;
}

void kt_results_retain(kt_results *r) {
  if (r) r->refs++;
}

static void free_outcome(kt_result *r) {
  free(r->samples_ns);
  free(r->sizes);
  free(r->usage);
  free(r->error);
  free(r->build_log);
  free(r->device_log);
  free(r->retried);
  free(r->launched);
  free(r->device);
  kt_result_free_metrics(r);
}

void kt_result_clear(kt_result *r) {
  free(r->vi);
  free_outcome(r);
  memset(r, 0, sizeof *r);
}

void kt_result_reset(kt_result *r) {
  uint64_t index = r->index;
  uint32_t *vi = r->vi;
  free_outcome(r);
  memset(r, 0, sizeof *r);
  r->index = index;
  r->vi = vi;
  r->time_ns = NAN;
  r->elapsed_ns = NAN;
}

void kt_gaps_add(kt_gaps *g, const kt_gaps *d) {
  g->n += d->n;
  g->idle += d->idle;
  g->verdict += d->verdict;
  g->after += d->after;
  g->loop += d->loop;
  g->prepare += d->prepare;
  g->kernel += d->kernel;
  g->build_wait += d->build_wait;
  g->launch += d->launch;
  g->ahead += d->ahead;
}

void kt_results_release(kt_results *r) {
  if (!r || --r->refs > 0) return;
  for (size_t i = 0; i < r->n; i++) kt_result_clear(&r->items[i]);
  for (size_t i = 0; i < r->nkernels; i++) free(r->kernels[i]);
  free(r->kernels);
  free(r->items);
  kt_params_free(r->params, r->nparams);
  free(r->task);
  free(r->device);
  free(r->searcher);
  free(r->device_log);
  free(r->inputs_log);
  char *ids[] = {r->backend, r->driver, r->source, r->options, r->objective};
  for (int i = 0; i < 5; i++) free(ids[i]);
  free(r->notice);
  free(r->stopped_read);
  free(r);
}

kt_result *kt_results_add(kt_results *r, uint64_t index, const uint32_t *vi,
                          kt_error *err) {
  if (kt_grow(&r->items, &r->cap, r->n + 1, sizeof *r->items, err)) return NULL;
  kt_result *res = &r->items[r->n];
  memset(res, 0, sizeof *res);
  res->index = index;
  res->time_ns = NAN;
  res->elapsed_ns = NAN;
  res->vi = kt_calloc(r->nparams, sizeof *res->vi, err);
  if (!res->vi) return NULL;
  memcpy(res->vi, vi, r->nparams * sizeof *vi);
  r->n++;
  return res;
}

void kt_results_drop_last(kt_results *r) {
  if (r->n) kt_result_clear(&r->items[--r->n]);
}

const kt_result *kt_results_best(const kt_results *r) {
  const kt_result *best = NULL;
  for (size_t i = 0; i < r->n; i++) {
    const kt_result *x = &r->items[i];
    if (x->status == KT_OK && !x->cut_short && !isnan(kt_result_cost(x)) &&
        (!best || kt_result_cost(x) < kt_result_cost(best)))
      best = x;
  }
  return best;
}

int kt_result_set_error(kt_result *r, kt_status status, const char *msg) {
  r->status = status;
  r->time_ns = NAN;
  free(r->error);
  r->error = msg ? strdup(msg) : NULL;
  return 0;
}

void kt_usage_fields(const kt_kernel_usage *u, const char *names[KT_USAGE_FIELDS],
                     int64_t values[KT_USAGE_FIELDS]) {
  static const char *const keys[KT_USAGE_FIELDS] = {"registers", "shared_bytes", "local_bytes",
                                                    "constant_bytes", "max_threads"};
  const int64_t v[KT_USAGE_FIELDS] = {u->registers, u->shared_bytes, u->local_bytes,
                                      u->constant_bytes, u->max_threads};
  for (int i = 0; i < KT_USAGE_FIELDS; i++) {
    names[i] = keys[i];
    values[i] = v[i];
  }
}

int kt_results_identify(kt_results *r, const kt_task *task, const char *backend,
                        const char *driver, const char *objective, kt_error *err) {
  if (!(r->backend = kt_strdup(backend, err)) || !(r->driver = kt_strdup(driver, err)) ||
      !(r->objective = kt_strdup(objective, err)) ||
      !(r->source = kt_journal_id_text(task, KT_ID_SOURCE)) ||
      !(r->options = kt_journal_id_text(task, KT_ID_OPTIONS)))
    return kt_fail(err, "out of memory describing task %s", task->name);
  return 0;
}

double kt_result_cost(const kt_result *r) {
  double c = r->costed ? r->cost : r->time_ns;
  return r->status == KT_OK && !isnan(c) ? c : INFINITY;
}
