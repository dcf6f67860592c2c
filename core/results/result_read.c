/*
** result_read.c: results back from the files ktlua writes: a results file
** (JSON, format "ktlua-results"; or CSV, result_csv.c) or a journal (a
** header line, format "ktlua-journal", then one result per line). A
** journal's last line may have been cut short by a kill: it is left out.
** kt_results_read reads the other formats too (result_formats.h).
*/
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "metrics.h"
#include "result.h"
#include "result_formats.h"

#define NS(ms) ((ms) * 1e6)

static int copy_text(char **dst, const char *src, kt_error *err) {
  return src && !(*dst = kt_strdup(src, err)) ? -1 : 0;
}

int kt_result_copy(kt_result *dst, const kt_result *src, kt_error *err) {
  dst->status = src->status;
  dst->time_ns = src->time_ns;
  dst->over = src->over;
  dst->compile_ns = src->compile_ns;
  dst->finished = src->finished;
  dst->launches = src->launches;
  dst->cost = src->cost;
  dst->costed = src->costed;
  if (kt_result_copy_metrics(dst, src, err)) return -1;
  dst->cut_short = src->cut_short;
  dst->waited_ns = src->waited_ns;
  dst->crowded = src->crowded;
  dst->infrastructure = src->infrastructure;
  if (copy_text(&dst->error, src->error, err) || copy_text(&dst->build_log, src->build_log, err) ||
      copy_text(&dst->device_log, src->device_log, err) ||
      copy_text(&dst->retried, src->retried, err) ||
      copy_text(&dst->device, src->device, err))
    return -1;
  if (src->nlaunched) {
    if (!(dst->launched = kt_calloc(src->nlaunched, sizeof *dst->launched, err))) return -1;
    memcpy(dst->launched, src->launched, src->nlaunched * sizeof *src->launched);
    dst->nlaunched = src->nlaunched;
  }
  if (src->nsamples) {
    if (!(dst->samples_ns = kt_calloc(src->nsamples, sizeof *dst->samples_ns, err))) return -1;
    memcpy(dst->samples_ns, src->samples_ns, src->nsamples * sizeof *src->samples_ns);
    dst->nsamples = src->nsamples;
  }
  if (src->nkernels) {
    if (!(dst->sizes = kt_calloc(src->nkernels, sizeof *dst->sizes, err))) return -1;
    memcpy(dst->sizes, src->sizes, src->nkernels * sizeof *src->sizes);
    if (src->usage) {
      if (!(dst->usage = kt_calloc(src->nkernels, sizeof *dst->usage, err))) return -1;
      memcpy(dst->usage, src->usage, src->nkernels * sizeof *src->usage);
    }
    dst->nkernels = src->nkernels;
  }
  return 0;
}

/* ---- fields ---- */

static double number(const kt_jvalue *obj, const char *key, double dflt) {
  const kt_jvalue *v = kt_json_get_type(obj, key, KT_JNUMBER);
  return v ? v->u.num.f : dflt;
}

/* A whole number from 0 to max (at most INT64_MAX), as files write
** indices, counts and sizes; -1 for anything else, which a cast would make
** undefined. */
static int whole(const kt_jvalue *v, uint64_t max, uint64_t *out) {
  if (!v || v->type != KT_JNUMBER) return -1;
  if (v->integer) {
    if (v->u.num.i < 0 || (uint64_t)v->u.num.i > max) return -1;
    *out = (uint64_t)v->u.num.i;
    return 0;
  }
  double f = v->u.num.f;
  /* (double)max may round up past max: the integer is compared */
  if (!(f >= 0 && f < 18446744073709551616.0 && f == floor(f)) || (uint64_t)f > max) return -1;
  *out = (uint64_t)f;
  return 0;
}

/* An optional count: dflt when absent or not a whole number. */
static uint64_t count(const kt_jvalue *obj, const char *key, uint64_t dflt) {
  uint64_t n;
  return whole(kt_json_get(obj, key), INT64_MAX, &n) ? dflt : n;
}

int kt_json_device_threads(const kt_jvalue *obj, int *out, kt_error *err) {
  const kt_jvalue *v = kt_json_get(obj, "device_threads");
  uint64_t n;
  if (!v) return 0; /* a file written before ktlua kept it: unknown */
  if (whole(v, INT_MAX, &n)) return kt_fail(err, "device_threads is no number of threads");
  *out = (int)n;
  return 0;
}

/* What the compiler reported, or -1 (unknown). */
static int64_t usage(const kt_jvalue *obj, const char *key) {
  uint64_t n;
  return whole(kt_json_get(obj, key), INT64_MAX, &n) ? -1 : (int64_t)n;
}

static int read_sizes(const kt_jvalue *list, size_t out[3], int *dims) {
  if (!list || list->type != KT_JARRAY || list->n < 1 || list->n > 3) return -1;
  for (size_t d = 0; d < 3; d++) {
    uint64_t n = 1;
    if (d < list->n && (whole(&list->u.items[d], SIZE_MAX < INT64_MAX ? SIZE_MAX : INT64_MAX, &n) ||
                        n == 0))
      return -1;
    out[d] = (size_t)n;
  }
  *dims = (int)list->n;
  return 0;
}

static int read_kernels(const kt_jvalue *x, kt_result *res, kt_error *err) {
  const kt_jvalue *sizes = kt_json_get_type(x, "sizes", KT_JARRAY);
  const kt_jvalue *used = kt_json_get_type(x, "resources", KT_JARRAY);
  size_t n = sizes ? sizes->n : 0;
  if (!n) return 0;
  if (!(res->sizes = kt_calloc(n, sizeof *res->sizes, err))) return -1;
  if (used && used->n == n && !(res->usage = kt_calloc(n, sizeof *res->usage, err))) return -1;
  res->nkernels = n;
  for (size_t k = 0; k < n; k++) {
    const kt_jvalue *s = &sizes->u.items[k];
    kt_sizes *z = &res->sizes[k];
    if (read_sizes(kt_json_get(s, "global"), z->global, &z->dims))
      return kt_fail(err, "sizes[%zu] has no global size", k + 1);
    memcpy(z->items, z->global, sizeof z->items);
    const kt_jvalue *local = kt_json_get(s, "local");
    int ldims;
    if (local && local->type == KT_JARRAY && read_sizes(local, z->local, &ldims))
      return kt_fail(err, "sizes[%zu] has a bad local size", k + 1);
    if (!res->usage) continue;
    const kt_jvalue *u = &used->u.items[k];
    res->usage[k] = (kt_kernel_usage){usage(u, "registers"), usage(u, "shared_bytes"),
                                      usage(u, "local_bytes"), usage(u, "constant_bytes"),
                                      usage(u, "max_threads")};
  }
  return 0;
}

/* "metrics": {"gflops": 12.5, ...} (metrics.h) */
static int read_metrics(const kt_jvalue *x, kt_result *res, kt_error *err) {
  const kt_jvalue *m = kt_json_get_type(x, "metrics", KT_JOBJECT);
  for (size_t i = 0; m && i < m->n; i++) {
    const kt_jmember *f = &m->u.members[i];
    double v;
    if (!kt_json_real(&f->value, &v)) return kt_fail(err, "metric %s is not a number", f->key);
    if (kt_result_set_metric(res, f->key, v, err)) return -1;
  }
  return 0;
}

/* "launched": [{"kernel": 0, "global": [..], "local": [..] or null, "count": n}] */
static int read_launched(const kt_jvalue *x, kt_result *res, kt_error *err) {
  const kt_jvalue *list = kt_json_get_type(x, "launched", KT_JARRAY);
  if (!list || !list->n) return 0;
  if (!(res->launched = kt_calloc(list->n, sizeof *res->launched, err))) return -1;
  for (size_t i = 0; i < list->n; i++) {
    const kt_jvalue *l = &list->u.items[i];
    kt_launch_shape *s = &res->launched[i];
    const kt_jvalue *local = kt_json_get(l, "local");
    int ldims;
    uint64_t kernel, n;
    if (whole(kt_json_get(l, "kernel"), res->nkernels ? res->nkernels - 1 : 0, &kernel) ||
        !res->nkernels || whole(kt_json_get(l, "count"), SIZE_MAX < INT64_MAX ? SIZE_MAX : INT64_MAX,
                                &n) || n < 1 ||
        read_sizes(kt_json_get(l, "global"), s->global, &s->dims) ||
        (local && local->type == KT_JARRAY && read_sizes(local, s->local, &ldims)))
      return kt_fail(err, "launched[%zu] is not a kernel's launch", i + 1);
    s->kernel = (uint32_t)kernel;
    s->count = (size_t)n;
    res->nlaunched = i + 1;
  }
  return 0;
}

int kt_result_samples_from_json(kt_result *r, const kt_jvalue *ms, kt_error *err) {
  size_t n = ms && ms->type == KT_JARRAY ? ms->n : 0;
  if (n && !(r->samples_ns = kt_calloc(n, sizeof *r->samples_ns, err))) return -1;
  for (size_t i = 0; i < n; i++)
    if (ms->u.items[i].type == KT_JNUMBER) r->samples_ns[r->nsamples++] = NS(ms->u.items[i].u.num.f);
  return 0;
}

static int read_outcome(const kt_jvalue *x, kt_result *res, kt_error *err) {
  const kt_jvalue *status = kt_json_get_type(x, "status", KT_JSTRING);
  int s = status ? kt_status_from_name(status->u.str) : -1;
  if (s < 0) return kt_fail(err, "no known status");
  res->status = (kt_status)s;
  res->time_ns = NS(number(x, "time_ms", NAN)); /* kept by some failures too */
  if (s == KT_OK && isnan(res->time_ns)) return kt_fail(err, "ok but no time_ms");
  if (isinf(res->time_ns)) return kt_fail(err, "time_ms is out of range");
  if (kt_result_samples_from_json(res, kt_json_get_type(x, "samples_ms", KT_JARRAY), err))
    return -1;
  res->launches = (size_t)count(x, "launches", 0);
  const kt_jvalue *cut = kt_json_get(x, "cut_short");
  res->cut_short = cut && cut->type == KT_JBOOL && cut->u.b;
  const kt_jvalue *crowded = kt_json_get(x, "crowded");
  res->crowded = crowded && crowded->type == KT_JBOOL && crowded->u.b;
  res->waited_ns = NS(number(x, "waited_ms", 0));
  if (!(res->waited_ns >= 0 && res->waited_ns < INFINITY))
    return kt_fail(err, "waited_ms is out of range");
  const kt_jvalue *infra = kt_json_get(x, "infrastructure");
  res->infrastructure = infra && infra->type == KT_JBOOL && infra->u.b;
  res->compile_ns = NS(number(x, "compile_ms", 0));
  res->elapsed_ns = NS(number(x, "elapsed_ms", NAN));
  if (isinf(res->elapsed_ns)) return kt_fail(err, "elapsed_ms is out of range");
  const kt_jvalue *stamp = kt_json_get_type(x, "finished", KT_JSTRING);
  if (stamp) res->finished = kt_time_parse(stamp->u.str);
  const kt_jvalue *o = kt_json_get_type(x, "overheads_ms", KT_JOBJECT);
  res->over = (kt_overheads){NS(number(o, "build", 0)),     NS(number(o, "data", 0)),
                             NS(number(o, "validation", 0)), NS(number(o, "launcher", 0)),
                             NS(number(o, "wait", 0)),       NS(number(o, "searcher", 0)),
                             NS(number(o, "framework", 0)),  NS(number(o, "total", 0))};
  const char *keys[] = {"error", "build_log", "device_log", "retried", "device"};
  char **texts[] = {&res->error, &res->build_log, &res->device_log, &res->retried, &res->device};
  for (int i = 0; i < 5; i++) {
    const kt_jvalue *t = kt_json_get_type(x, keys[i], KT_JSTRING);
    if (t && !(*texts[i] = kt_strdup(t->u.str, err))) return -1;
  }
  return read_kernels(x, res, err) || read_launched(x, res, err) || read_metrics(x, res, err)
             ? -1 : 0;
}

/* The value index of every parameter from a result's config. */
static int read_config(const kt_jvalue *x, const kt_param *params, size_t np, uint32_t *vi,
                       kt_error *err) {
  const kt_jvalue *config = kt_json_get_type(x, "config", KT_JOBJECT);
  if (!config) return kt_fail(err, "no config");
  for (size_t p = 0; p < np; p++) {
    kt_value v;
    if (kt_value_from_json(kt_json_get(config, params[p].name), &v))
      return kt_fail(err, "the config has no value for %s", params[p].name);
    size_t i = 0;
    while (i < params[p].nvalues && !kt_value_equal(&params[p].values[i], &v)) i++;
    if (i == params[p].nvalues) return kt_fail(err, "%s has a value that is not one of its values",
                                                params[p].name);
    vi[p] = (uint32_t)i;
  }
  return 0;
}

/* A configuration index: an integer from 0, below the space's count when
** the header gives it. */
static int read_index(const kt_jvalue *x, const kt_results *r, uint64_t *index, kt_error *err) {
  const kt_jvalue *v = kt_json_get(x, "index");
  if (!v || v->type != KT_JNUMBER || !v->integer || v->u.num.i < 0) {
    char text[64] = "none";
    if (v && v->type == KT_JNUMBER) snprintf(text, sizeof text, "%.17g", v->u.num.f);
    return kt_fail(err, "index %s is no configuration index (an integer from 0)", text);
  }
  *index = (uint64_t)v->u.num.i;
  if (r->space_count && *index >= r->space_count)
    return kt_fail(err, "index %llu is beyond the space's %llu configurations",
                   (unsigned long long)*index, (unsigned long long)r->space_count);
  return 0;
}

int kt_result_read_json(const kt_jvalue *x, kt_results *r, kt_error *err) {
  uint64_t index = 0;
  uint32_t *vi = kt_calloc(r->nparams + 1, sizeof *vi, err);
  if (!vi) return -1;
  int rc = read_config(x, r->params, r->nparams, vi, err);
  if (rc == 0) rc = read_index(x, r, &index, err);
  kt_result *res = rc == 0 ? kt_results_add(r, index, vi, err) : NULL;
  free(vi);
  if (!res) return -1;
  return read_outcome(x, res, err);
}

/* ---- files ---- */

/* Results with the header's task, device, kernels and parameters. */
static kt_results *from_header(const kt_jvalue *h, kt_error *err) {
  const kt_jvalue *params = kt_json_get_type(h, "parameters", KT_JARRAY);
  if (!params) return kt_fail(err, "no list of parameters"), NULL;
  kt_space *space = kt_space_new(err);
  int rc = space ? 0 : -1;
  for (size_t p = 0; p < params->n && rc == 0; p++) {
    const kt_jvalue *name = kt_json_get_type(&params->u.items[p], "name", KT_JSTRING);
    const kt_jvalue *values = kt_json_get_type(&params->u.items[p], "values", KT_JARRAY);
    kt_value *v = values ? kt_calloc(values->n + 1, sizeof *v, err) : NULL;
    if (!name || !v) rc = kt_fail(err, "parameters[%zu] needs a name and values", p + 1);
    for (size_t i = 0; rc == 0 && i < values->n; i++)
      if (kt_value_from_json(&values->u.items[i], &v[i])) rc = kt_fail(err, "%s has a value of no type", name->u.str);
    if (rc == 0) rc = kt_space_add_param(space, name->u.str, v, values->n, err);
    free(v);
  }
  const kt_jvalue *kernels = kt_json_get_type(h, "kernels", KT_JARRAY);
  size_t nk = kernels ? kernels->n : 0;
  const char **names = rc == 0 ? kt_calloc(nk + 1, sizeof *names, err) : NULL;
  for (size_t k = 0; names && k < nk; k++)
    names[k] = kernels->u.items[k].type == KT_JSTRING ? kernels->u.items[k].u.str : "?";
  const kt_jvalue *task = kt_json_get_type(h, "task", KT_JSTRING);
  const kt_jvalue *device = kt_json_get_type(h, "device", KT_JSTRING);
  kt_results *r = names ? kt_results_new(task ? task->u.str : "results", space, names, nk,
                                         device ? device->u.str : "", err)
                        : NULL;
  const kt_jvalue *searcher = kt_json_get_type(h, "searcher", KT_JSTRING);
  if (r && searcher) r->searcher = kt_strdup(searcher->u.str, NULL);
  const char *keys[] = {"backend", "driver", "source", "options", "objective"};
  for (int i = 0; r && i < 5; i++) {
    char **ids[] = {&r->backend, &r->driver, &r->source, &r->options, &r->objective};
    const kt_jvalue *v = kt_json_get_type(h, keys[i], KT_JSTRING);
    if (v) *ids[i] = kt_strdup(v->u.str, NULL);
  }
  if (r && kt_json_device_threads(h, &r->device_threads, err)) {
    kt_results_release(r);
    r = NULL;
  }
  if (r) {
    const kt_jvalue *maximize = kt_json_get_type(h, "maximize", KT_JBOOL);
    r->maximize = maximize && maximize->u.b;
    r->space_count = count(kt_json_get(h, "space"), "valid", 0);
    r->space_all = number(kt_json_get(h, "space"), "all", 0);
    const kt_jvalue *pruned = kt_json_get(kt_json_get(h, "space"), "pruned");
    for (int k = 1; k < KT_PRUNE_END; k++)
      r->pruned[k - 1] = count(pruned, kt_prune_name(k), 0);
  }
  free(names);
  kt_space_free(space);
  return r;
}

kt_results *kt_results_from_json(const kt_jvalue *root, kt_error *err) {
  const kt_jvalue *results = kt_json_get_type(root, "results", KT_JARRAY);
  if (!results) return kt_fail(err, "no results"), NULL;
  kt_results *r = from_header(root, err);
  for (size_t i = 0; r && i < results->n; i++)
    if (kt_result_read_json(&results->u.items[i], r, err)) {
      kt_fail_prefix(err, "result %zu: ", i + 1);
      kt_results_release(r);
      r = NULL;
    }
  if (r && kt_results_check_indices(r, false, NULL, "result", err)) {
    kt_results_release(r);
    r = NULL;
  }
  const kt_jvalue *log = kt_json_get_type(root, "device_log", KT_JSTRING);
  const kt_jvalue *inputs = kt_json_get_type(root, "inputs_log", KT_JSTRING);
  const kt_jvalue *stopped = kt_json_get_type(root, "stopped", KT_JSTRING);
  if (r && stopped && *stopped->u.str &&
      !(r->stopped = r->stopped_read = kt_strdup(stopped->u.str, err))) {
    kt_results_release(r);
    r = NULL;
  }
  if (r && inputs) kt_log_append(&r->inputs_log, inputs->u.str);
  if (r) {
    kt_results_rescore(r); /* the best by the objective the file names */
    r->wall_ns = NS(number(root, "wall_ms", 0));
    r->device_ns = NS(number(root, "device_ms", 0));
    r->input_checks = (size_t)count(root, "input_checks", 0);
    r->input_checks_device = (size_t)count(root, "input_checks_device", 0);
    r->inputs_changed = (size_t)count(root, "inputs_changed", 0);
    r->restores = (size_t)count(root, "restores", 0);
    r->input_check_requests = (size_t)count(root, "input_check_requests", 0);
    r->input_check_round_trips = (size_t)count(root, "input_check_round_trips", 0);
    r->input_checks_queued = (size_t)count(root, "input_checks_queued", 0);
    if (log) kt_log_append(&r->device_log, log->u.str);
  }
  return r;
}

/* Parses line [a, b) of a journal; *doc is the line's document. */
static const kt_jvalue *journal_line(const char *a, const char *b, kt_jdoc **doc, kt_error *err) {
  *doc = kt_json_parse_results(a, (size_t)(b - a), err);
  return *doc ? kt_json_root(*doc) : NULL;
}

/* Notes that the last result read is from line n. */
static int note_line(size_t **lines, size_t *cap, size_t at, size_t n, kt_error *err) {
  if (kt_grow(lines, cap, at + 1, sizeof **lines, err)) return -1;
  (*lines)[at] = n;
  return 0;
}

/* A journal gives each configuration one index and each index one
** configuration: a tuning records a configuration under the index the
** space gives it, and a resumed one whose space moved the indices writes
** its journal again whole (tuning.c). Records that break that are refused,
** naming their lines; a configuration recorded again under its index (run
** again: the inputs changed) takes the place of its first record. */
static kt_results *read_journal(const char *text, size_t len, kt_error *err) {
  const char *end = text + len, *line = text, *nl = memchr(line, '\n', len);
  kt_jdoc *doc;
  const kt_jvalue *h = journal_line(line, nl ? nl : end, &doc, err);
  kt_results *r = h ? from_header(h, err) : NULL;
  if (!r) kt_fail_prefix(err, "line 1: ");
  size_t *lines = NULL, cap = 0;
  kt_json_free(doc);
  for (size_t n = 2; r && nl && nl + 1 < end; n++) {
    line = nl + 1;
    nl = memchr(line, '\n', (size_t)(end - line));
    if (!nl) break; /* no newline: cut short by a kill */
    if (nl == line) continue;
    const kt_jvalue *x = journal_line(line, nl, &doc, err);
    /* a line may say that the device process was given other threads from it on */
    if (!x || kt_result_read_json(x, r, err) || kt_json_device_threads(x, &r->device_threads, err) ||
        note_line(&lines, &cap, r->n - 1, n, err)) {
      kt_fail_prefix(err, "line %zu: ", n);
      kt_results_release(r);
      r = NULL;
    }
    kt_json_free(doc);
  }
  if (r && (kt_results_check_indices(r, true, lines, "line", err) ||
            kt_results_keep_last(r, lines, err))) {
    kt_results_release(r);
    r = NULL;
  }
  free(lines);
  if (r) kt_results_rescore(r);
  return r;
}

int kt_journal_parse(const char *text, size_t len, kt_results **out, kt_error *err) {
  static const char start[] = "{\"format\":\"ktlua-journal\"";
  const char *nl = memchr(text, '\n', len);
  kt_jdoc *first = kt_json_parse_results(text, nl ? (size_t)(nl - text) : len, NULL);
  const kt_jvalue *f = first ? kt_json_get_type(kt_json_root(first), "format", KT_JSTRING) : NULL;
  /* a header as ktlua writes it is a journal's, also when it is broken */
  bool journal = (f && strcmp(f->u.str, "ktlua-journal") == 0) ||
                 (len >= sizeof start - 1 && memcmp(text, start, sizeof start - 1) == 0);
  kt_json_free(first);
  *out = journal ? read_journal(text, len, err) : NULL;
  return !journal ? 1 : *out ? 0 : -1;
}
