/*
** metrics.h: user metrics and the objective.
**
** A metric is a number computed from a configuration's result (GFLOP/s
** from the time and the problem size), or a number a recording holds
** beside the time (energy, GFLOPS/W in Kernel Tuner caches). Each result
** keeps its metrics as (name, value) pairs, which writers iterate as
** numeric fields of the result (kt_result.metrics).
**
** The objective is what searchers minimise and results' best is chosen by:
** the time (the default), a metric by name, or a function of the result,
** minimised or maximised. A result's cost (kt_result_cost) is the
** objective's value, negated when maximised, in the time's unit (ns): a
** value counts as that many milliseconds, so that whatever shows a cost in
** ms (a Lua searcher's result.cost, space:explored) shows the value itself.
** A result without it (failed, or no value) costs infinity.
*/
#ifndef KT_METRICS_H
#define KT_METRICS_H

#include "result.h"

/* Computes a metric, or the objective, of an ok result: 0 with *out (NAN:
** no value), or -1 with err set (the tuning stops: a script's bug). It may
** record in r other metrics that it computed on the way (one that reads
** another): those are not computed again. */
typedef int (*kt_metric_fn)(const kt_results *rs, kt_result *r, void *ud, double *out,
                            kt_error *err);

typedef struct kt_metric {
  char *name;
  kt_metric_fn fn;
  kt_callback cb;
} kt_metric;

typedef struct kt_metrics {
  kt_metric *items;
  size_t n, cap;
  char *objective;         /* a metric's name; NULL: the time, or objective_fn */
  kt_metric_fn objective_fn;
  kt_callback objective_cb;
  bool maximize;
} kt_metrics;

kt_metrics *kt_metrics_new(kt_error *err);
void kt_metrics_free(kt_metrics *m);
/* Takes ownership of cb (also on error). */
int kt_metrics_add(kt_metrics *m, const char *name, kt_metric_fn fn, kt_callback cb,
                   kt_error *err);
/* The objective: a metric's name (NULL: the time) or a function (with cb). */
int kt_metrics_objective(kt_metrics *m, const char *name, kt_metric_fn fn, kt_callback cb,
                         bool maximize, kt_error *err);
/* What results record of the objective: its name ("objective" for a
** function, whose values are kept as the metric of that name). */
const char *kt_metrics_objective_name(const kt_metrics *m);

/* The cost of an objective's value. */
double kt_metric_cost(double value, bool maximize);
/* Records the objective (its name, whether maximised) in rs. */
int kt_metrics_note_objective(const kt_metrics *m, kt_results *rs, kt_error *err);
/* Computes r's metrics (when r is ok and holds none of that name yet) and
** its cost; records rs's objective. */
int kt_metrics_apply(const kt_metrics *m, kt_results *rs, kt_result *r, kt_error *err);

/* A result's metric by name: NAN when it has none. */
double kt_result_metric(const kt_result *r, const char *name);
/* Sets (adds or replaces) a metric of r. */
int kt_result_set_metric(kt_result *r, const char *name, double value, kt_error *err);
/* The metrics of src into dst (what dst had is dropped). */
int kt_result_copy_metrics(kt_result *dst, const kt_result *src, kt_error *err);
void kt_result_free_metrics(kt_result *r);
/* Every metric name of the results, in order of first appearance: a
** malloc'd array of pointers into the results (*n of them). */
const char **kt_results_metric_names(const kt_results *rs, size_t *n, kt_error *err);
/* Whether an objective's name is the time's ("kernel", "kernel+host"; NULL). */
bool kt_objective_is_time(const char *objective);
/* r's value of the objective: its time in ms for the time, else its metric
** of that name; NAN when r failed or has none. */
double kt_result_objective(const kt_result *r, const char *objective);
/* The ok result with the least (or, maximize, the most) value of the
** objective; NULL when none has one. */
const kt_result *kt_results_best_of(const kt_results *rs, const char *objective, bool maximize);
/* Sets each result's cost from rs->objective and rs->maximize (results
** read from a file). */
void kt_results_rescore(kt_results *rs);

#endif
