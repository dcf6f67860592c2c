/*
** metrics.c: user metrics and the objective (metrics.h).
*/
#include "metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- a result's metrics ---- */

double kt_result_metric(const kt_result *r, const char *name) {
  for (size_t i = 0; i < r->nmetrics; i++)
    if (strcmp(r->metrics[i].name, name) == 0) return r->metrics[i].value;
  return NAN;
}

int kt_result_set_metric(kt_result *r, const char *name, double value, kt_error *err) {
  for (size_t i = 0; i < r->nmetrics; i++)
    if (strcmp(r->metrics[i].name, name) == 0) return r->metrics[i].value = value, 0;
  char *copy = kt_strdup(name, err);
  kt_metric_value *grown = copy ? realloc(r->metrics, (r->nmetrics + 1) * sizeof *grown) : NULL;
  if (!grown) {
    free(copy);
    return kt_fail(err, "out of memory");
  }
  r->metrics = grown;
  r->metrics[r->nmetrics++] = (kt_metric_value){copy, value};
  return 0;
}

void kt_result_free_metrics(kt_result *r) {
  for (size_t i = 0; i < r->nmetrics; i++) free(r->metrics[i].name);
  free(r->metrics);
  r->metrics = NULL;
  r->nmetrics = 0;
}

int kt_result_copy_metrics(kt_result *dst, const kt_result *src, kt_error *err) {
  kt_result_free_metrics(dst);
  for (size_t i = 0; i < src->nmetrics; i++)
    if (kt_result_set_metric(dst, src->metrics[i].name, src->metrics[i].value, err)) return -1;
  return 0;
}

const char **kt_results_metric_names(const kt_results *rs, size_t *n, kt_error *err) {
  size_t cap = 0;
  for (size_t i = 0; i < rs->n; i++) cap += rs->items[i].nmetrics;
  const char **names = kt_calloc(cap ? cap : 1, sizeof *names, err);
  *n = 0;
  for (size_t i = 0; names && i < rs->n; i++)
    for (size_t k = 0; k < rs->items[i].nmetrics; k++) {
      const char *name = rs->items[i].metrics[k].name;
      size_t j = 0;
      while (j < *n && strcmp(names[j], name) != 0) j++;
      if (j == *n) names[(*n)++] = name;
    }
  return names;
}

/* ---- definitions ---- */

kt_metrics *kt_metrics_new(kt_error *err) { return kt_calloc(1, sizeof(kt_metrics), err); }

void kt_metrics_free(kt_metrics *m) {
  if (!m) return;
  for (size_t i = 0; i < m->n; i++) {
    free(m->items[i].name);
    kt_callback_clear(&m->items[i].cb);
  }
  free(m->items);
  free(m->objective);
  kt_callback_clear(&m->objective_cb);
  free(m);
}

int kt_metrics_add(kt_metrics *m, const char *name, kt_metric_fn fn, kt_callback cb,
                   kt_error *err) {
  char *copy = kt_strdup(name, err);
  if (!copy || kt_grow(&m->items, &m->cap, m->n + 1, sizeof *m->items, err)) {
    free(copy);
    kt_callback_clear(&cb);
    return -1;
  }
  m->items[m->n++] = (kt_metric){copy, fn, cb};
  return 0;
}

int kt_metrics_objective(kt_metrics *m, const char *name, kt_metric_fn fn, kt_callback cb,
                         bool maximize, kt_error *err) {
  free(m->objective);
  kt_callback_clear(&m->objective_cb);
  m->objective = NULL;
  m->objective_fn = fn;
  m->objective_cb = cb;
  m->maximize = maximize;
  if (name && !(m->objective = kt_strdup(name, err))) return -1;
  return 0;
}

const char *kt_metrics_objective_name(const kt_metrics *m) {
  return m->objective ? m->objective : m->objective_fn ? "objective" : NULL;
}

/* ---- computing them ---- */

double kt_metric_cost(double value, bool maximize) { return (maximize ? -value : value) * 1e6; }

/* One value, unless r holds one of that name already (resumed, replayed). */
static int compute(const kt_results *rs, kt_result *r, const char *name, kt_metric_fn fn,
                   void *ud, kt_error *err) {
  double v;
  if (!isnan(kt_result_metric(r, name))) return 0;
  if (fn(rs, r, ud, &v, err)) return kt_fail_prefix(err, "metric %s: ", name);
  return isnan(v) ? 0 : kt_result_set_metric(r, name, v, err);
}

int kt_metrics_note_objective(const kt_metrics *m, kt_results *rs, kt_error *err) {
  const char *objective = kt_metrics_objective_name(m);
  if (objective && (!rs->objective || strcmp(rs->objective, objective) != 0)) {
    char *copy = kt_strdup(objective, err);
    if (!copy) return -1;
    free(rs->objective);
    rs->objective = copy;
  }
  rs->maximize = objective && m->maximize;
  return 0;
}

int kt_metrics_apply(const kt_metrics *m, kt_results *rs, kt_result *r, kt_error *err) {
  const char *objective = kt_metrics_objective_name(m);
  if (kt_metrics_note_objective(m, rs, err)) return -1;
  if (r->status == KT_OK) {
    for (size_t i = 0; i < m->n; i++)
      if (compute(rs, r, m->items[i].name, m->items[i].fn, m->items[i].cb.ud, err)) return -1;
    if (m->objective_fn &&
        compute(rs, r, "objective", m->objective_fn, m->objective_cb.ud, err))
      return -1;
  }
  r->costed = objective != NULL;
  if (r->costed) r->cost = kt_metric_cost(kt_result_metric(r, objective), m->maximize);
  return 0;
}

bool kt_objective_is_time(const char *objective) {
  return !objective || !strcmp(objective, "kernel") || !strcmp(objective, "kernel+host");
}

double kt_result_objective(const kt_result *r, const char *objective) {
  if (r->status != KT_OK) return NAN;
  return kt_objective_is_time(objective) ? r->time_ns / 1e6 : kt_result_metric(r, objective);
}

const kt_result *kt_results_best_of(const kt_results *rs, const char *objective, bool maximize) {
  const kt_result *best = NULL;
  double most = NAN;
  for (size_t i = 0; i < rs->n; i++) {
    double v = kt_result_objective(&rs->items[i], objective);
    if (isnan(v) || (best && (maximize ? v <= most : v >= most))) continue;
    best = &rs->items[i];
    most = v;
  }
  return best;
}

void kt_results_rescore(kt_results *rs) {
  const char *objective = rs->objective;
  bool time = kt_objective_is_time(objective);
  for (size_t i = 0; i < rs->n; i++) {
    kt_result *r = &rs->items[i];
    r->costed = !time;
    if (!time) r->cost = kt_metric_cost(kt_result_metric(r, objective), rs->maximize);
  }
}
