/*
** result_t4.c: T4, the community's format of tuning results (Kernel
** Tuner's kernel_tuner/schema/T4/1.0.0: results-schema.json and
** metadata-schema.json), read and written.
**
** One file holds both halves: {"schema_version", "metadata",
** "results": [...]}. A result is {"timestamp", "configuration" (name ->
** value), "times" {"compilation", "benchmark", "framework",
** "search_algorithm", "validation", "runtimes": [...]}, "invalidity"
** (correct, compile, runtime, timeout, correctness, constraints),
** "correctness" (1 or 0), "measurements" [{"name", "value", "unit"}],
** "objectives"}. Times are in metadata.timeunit (milliseconds when it is
** absent; Kernel Tuner spells it "miliseconds").
**
** Reading: the time is the measurement named "time" (a failure's is an
** error name); results that broke constraints are no configurations.
** Writing: every numeric measurement goes through write_measure (one
** line each, in write_measurements); ktlua's task, device, kernels and
** identity go into
** metadata.ktlua (with device_threads), and each result's exact status,
** error and a CPU device's waits into ktlua_status, ktlua_error,
** ktlua_waited_ms (in ms) and ktlua_crowded, so that a file read back loses nothing the
** format has no place for; other tools ignore them.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "json.h"
#include "energy.h"
#include "metrics.h"
#include "result_formats.h"

#define MS(ns) ((ns) / 1e6)

/* ---- reading ---- */

bool kt_t4_is(const kt_jvalue *root) {
  const kt_jvalue *results = kt_json_get_type(root, "results", KT_JARRAY);
  if (!results || kt_json_get(root, "format")) return false;
  if (results->n == 0) return kt_json_get(root, "schema_version") != NULL;
  return kt_json_get_type(&results->u.items[0], "configuration", KT_JOBJECT) != NULL;
}

/* Nanoseconds per unit of a T4 timeunit; 0 when it is none. */
static double unit_ns(const char *unit) {
  static const struct { const char *name; double ns; } units[] = {
      {"miliseconds", 1e6}, {"milliseconds", 1e6}, {"ms", 1e6},   {"microseconds", 1e3},
      {"us", 1e3},          {"nanoseconds", 1},    {"ns", 1},     {"seconds", 1e9},
      {"s", 1e9}};
  for (size_t i = 0; i < sizeof units / sizeof *units; i++)
    if (strcmp(units[i].name, unit) == 0) return units[i].ns;
  return 0;
}

typedef struct t4_reader {
  double ns;  /* per unit of the file's times */
  kt_error *err;
  const kt_jvalue *records; /* results */
} t4_reader;

/* The status that an invalidity names; -1: constraints (no configuration),
** -2: none of T4's. */
static int invalidity_status(const char *name) {
  static const struct { const char *name; int status; } map[] = {
      {"correct", KT_OK},       {"compile", KT_COMPILE_FAILED},     {"runtime", KT_RUNTIME_FAILED},
      {"timeout", KT_TIMEOUT},  {"correctness", KT_INVALID_OUTPUT}, {"constraints", -1}};
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (strcmp(map[i].name, name) == 0) return map[i].status;
  return -2;
}

static int status_of(const kt_jvalue *x, size_t i, int *status, kt_error *err) {
  const kt_jvalue *inv = kt_json_get_type(x, "invalidity", KT_JSTRING);
  if (!inv) return kt_fail(err, "result %zu has no invalidity", i + 1);
  *status = invalidity_status(inv->u.str);
  if (*status == -2)
    return kt_fail(err, "result %zu: invalidity '%s' is none of T4's (correct, compile, runtime, "
                        "timeout, correctness, constraints)", i + 1, inv->u.str);
  const kt_jvalue *own = kt_json_get_type(x, "ktlua_status", KT_JSTRING);
  int s = own ? kt_status_from_name(own->u.str) : -1;
  if (s >= 0 && *status >= 0 && (s == KT_OK) == (*status == KT_OK)) *status = s;
  return 0;
}

static const kt_jvalue *measurement(const kt_jvalue *x, const char *name) {
  const kt_jvalue *list = kt_json_get_type(x, "measurements", KT_JARRAY);
  for (size_t i = 0; list && i < list->n; i++) {
    const kt_jvalue *n = kt_json_get_type(&list->u.items[i], "name", KT_JSTRING);
    if (n && strcmp(n->u.str, name) == 0) return &list->u.items[i];
  }
  return NULL;
}

static double t4_time(const t4_reader *rd, const kt_jvalue *times, const char *key) {
  const kt_jvalue *v = kt_json_get_type(times, key, KT_JNUMBER);
  return v ? v->u.num.f * rd->ns : 0;
}

/* The measured time, in the measurement's own unit when it names one. */
static int read_time(const t4_reader *rd, const kt_jvalue *x, size_t i, kt_result *res) {
  const kt_jvalue *m = measurement(x, "time");
  const kt_jvalue *v = kt_json_get(m, "value");
  const kt_jvalue *unit = kt_json_get_type(m, "unit", KT_JSTRING);
  double ns = unit && unit_ns(unit->u.str) > 0 ? unit_ns(unit->u.str) : rd->ns;
  if (v && v->type == KT_JNUMBER) res->time_ns = v->u.num.f * ns;
  if (res->status == KT_OK && isnan(res->time_ns))
    return kt_fail(rd->err, "result %zu is correct but has no time measurement", i + 1);
  /* ktlua's own files say whether there was an error text */
  const kt_jvalue *error = kt_json_get_type(x, "ktlua_error", KT_JSTRING);
  bool own = kt_json_get(x, "ktlua_status") != NULL;
  if (!error && !own && v && v->type == KT_JSTRING && res->status != KT_OK) error = v;
  if (error && !(res->error = kt_strdup(error->u.str, rd->err))) return -1;
  return 0;
}

/* Numeric measurements other than the time (energy, GFLOP/s, ...) are
** the result's metrics, which an objective may name. */
static int read_metrics(const t4_reader *rd, const kt_jvalue *x, kt_result *res) {
  const kt_jvalue *list = kt_json_get_type(x, "measurements", KT_JARRAY);
  for (size_t i = 0; list && i < list->n; i++) {
    const kt_jvalue *name = kt_json_get_type(&list->u.items[i], "name", KT_JSTRING);
    double v;
    if (name && kt_json_real(kt_json_get(&list->u.items[i], "value"), &v) &&
        strcmp(name->u.str, "time") != 0 && kt_result_set_metric(res, name->u.str, v, rd->err))
      return -1;
  }
  return 0;
}

static int read_outcome(const t4_reader *rd, const kt_jvalue *x, size_t i, int status,
                        kt_result *res) {
  const kt_jvalue *times = kt_json_get_type(x, "times", KT_JOBJECT);
  if (!times) return kt_fail(rd->err, "result %zu has no times", i + 1);
  res->status = (kt_status)status;
  res->launches = status == KT_OK;
  if (read_time(rd, x, i, res) || (status == KT_OK && read_metrics(rd, x, res))) return -1;
  const kt_jvalue *runs = kt_json_get_type(times, "runtimes", KT_JARRAY);
  size_t n = runs ? runs->n : 0;
  if (n && !(res->samples_ns = kt_calloc(n, sizeof *res->samples_ns, rd->err))) return -1;
  double run_sum = 0;
  for (size_t s = 0; s < n; s++)
    if (runs->u.items[s].type == KT_JNUMBER) {
      res->samples_ns[res->nsamples++] = runs->u.items[s].u.num.f * rd->ns;
      run_sum += runs->u.items[s].u.num.f * rd->ns;
    }
  kt_overheads *o = &res->over;
  o->build = t4_time(rd, times, "compilation");
  o->validation = t4_time(rd, times, "validation");
  o->searcher = t4_time(rd, times, "search_algorithm");
  o->framework = t4_time(rd, times, "framework");
  o->wait = kt_json_get(times, "benchmark") ? t4_time(rd, times, "benchmark") : run_sum;
  o->total = o->build + o->validation + o->wait + o->framework; /* the searcher's is its own */
  const kt_jvalue *stamp = kt_json_get_type(x, "timestamp", KT_JSTRING);
  if (stamp) res->finished = kt_time_parse(stamp->u.str);
  /* a CPU device's wait for a processor, and runs stopped at 10 by it (ktlua's) */
  const kt_jvalue *crowded = kt_json_get_type(x, "ktlua_crowded", KT_JBOOL);
  res->crowded = crowded && crowded->u.b;
  const kt_jvalue *waited = kt_json_get(x, "ktlua_waited_ms");
  if (waited && !(waited->type == KT_JNUMBER && waited->u.num.f >= 0 && isfinite(waited->u.num.f)))
    return kt_fail(rd->err, "result %zu: ktlua_waited_ms is no time", i + 1);
  if (waited) res->waited_ns = waited->u.num.f * 1e6; /* in ms, whatever the timeunit */
  return 0;
}

static int gather(kt_param_acc *acc, const kt_jvalue *results, kt_error *err) {
  for (size_t i = 0; i < results->n; i++) {
    const kt_jvalue *config = kt_json_get_type(&results->u.items[i], "configuration", KT_JOBJECT);
    if (!config) return kt_fail(err, "result %zu has no configuration", i + 1);
    for (size_t p = 0; p < config->n; p++) {
      kt_value v;
      if (kt_value_from_json(&config->u.members[p].value, &v))
        return kt_fail(err, "result %zu: the value of %s is not a number, a string or a boolean",
                       i + 1, config->u.members[p].key);
      if (kt_param_acc_note(acc, config->u.members[p].key, &v, err)) return -1;
    }
  }
  return 0;
}

static int read_result(void *ud, kt_results *r, size_t i, uint32_t *vi, kt_error *err) {
  const t4_reader *rd = ud;
  const kt_jvalue *x = &rd->records->u.items[i];
  const kt_jvalue *config = kt_json_get_type(x, "configuration", KT_JOBJECT);
  int status = -2;
  if (status_of(x, i, &status, err)) return -1;
  if (status == -1) return 0;
  for (size_t p = 0; p < r->nparams; p++) {
    kt_value v;
    if (kt_value_from_json(kt_json_get(config, r->params[p].name), &v) ||
        kt_sorted_value_index(&r->params[p], &v, &vi[p]))
      return kt_fail(err, "result %zu has no value for %s", i + 1, r->params[p].name);
  }
  kt_result *res = kt_results_add(r, r->n, vi, err);
  return res ? read_outcome(rd, x, i, status, res) : -1;
}

/* metadata.ktlua, as written below: who made the file, and on what. */
static int read_identity(const kt_jvalue *meta, kt_results *r, kt_error *err) {
  const kt_jvalue *id = kt_json_get_type(meta, "ktlua", KT_JOBJECT);
  const char *keys[] = {"backend", "driver", "source", "options", "objective", "searcher"};
  char **fields[] = {&r->backend, &r->driver, &r->source, &r->options, &r->objective, &r->searcher};
  for (int i = 0; id && i < 6; i++) {
    const kt_jvalue *v = kt_json_get_type(id, keys[i], KT_JSTRING);
    if (v) *fields[i] = kt_strdup(v->u.str, NULL);
  }
  return id && kt_json_device_threads(id, &r->device_threads, err)
             ? kt_fail_prefix(err, "metadata.ktlua: ") : 0;
}

static kt_results *new_results(kt_param_acc *acc, const kt_jvalue *meta, kt_error *err) {
  const kt_jvalue *id = kt_json_get_type(meta, "ktlua", KT_JOBJECT);
  const kt_jvalue *task = kt_json_get_type(id, "task", KT_JSTRING);
  const kt_jvalue *device = kt_json_get_type(id, "device", KT_JSTRING);
  const kt_jvalue *kernels = kt_json_get_type(id, "kernels", KT_JARRAY);
  const char *name = task ? task->u.str : "t4";
  size_t nk = kernels && kernels->n ? kernels->n : 1;
  const char **names = kt_calloc(nk, sizeof *names, err);
  if (!names) return NULL;
  for (size_t k = 0; k < nk; k++)
    names[k] = kernels && kernels->n && kernels->u.items[k].type == KT_JSTRING
                   ? kernels->u.items[k].u.str : name;
  kt_results *r = kt_param_acc_results(acc, name, names, nk, device ? device->u.str : "recorded", err);
  free(names);
  if (r && read_identity(meta, r, err)) {
    kt_results_release(r);
    r = NULL;
  }
  return r;
}

kt_results *kt_results_from_t4(const kt_jvalue *root, kt_error *err) {
  const kt_jvalue *results = kt_json_get_type(root, "results", KT_JARRAY);
  const kt_jvalue *meta = kt_json_get_type(root, "metadata", KT_JOBJECT);
  const kt_jvalue *unit = kt_json_get_type(meta, "timeunit", KT_JSTRING);
  t4_reader rd = {unit ? unit_ns(unit->u.str) : 1e6, err, results};
  if (rd.ns == 0) return kt_fail(err, "metadata.timeunit '%s' is no unit of time", unit->u.str), NULL;
  kt_param_acc acc = {0};
  kt_results *r = gather(&acc, results, err) ? NULL : new_results(&acc, meta, err);
  kt_param_acc_clear(&acc);
  return kt_results_fill(r, results->n, read_result, &rd, err);
}

/* ---- writing ---- */

static const char *invalidity(kt_status s) {
  switch (s) {
    case KT_OK: return "correct";
    case KT_COMPILE_FAILED:
    case KT_COMPILE_DEFERRED: return "compile"; /* its exact status: ktlua_status */
    case KT_TIMEOUT: return "timeout";
    case KT_INVALID_OUTPUT: return "correctness";
    default: return "runtime";
  }
}

/* One measurement, {"name", "value", "unit"}, unless value is NaN (not
** measured); *n counts those written. */
/* A metric may be infinite or NaN: Python's json spelling, which Kernel
** Tuner's T4 schemas accept as it reads them (a number). */
static void write_measure(FILE *f, int *n, const char *name, double value, const char *unit) {
  fputs((*n)++ ? ",{\"name\":" : "{\"name\":", f);
  kt_json_string(f, name);
  fputs(",\"value\":", f);
  kt_json_any_number(f, value);
  fputs(",\"unit\":", f);
  kt_json_string(f, unit);
  fputc('}', f);
}

/* Every numeric measurement of a result: a new one (a user metric, say)
** is one more write_measure line here. A failure's time is, as Kernel
** Tuner writes it, the name of its error. */
static void write_measurements(FILE *f, const kt_results *r, const kt_result *x) {
  int n = 0;
  (void)r;
  fputs(",\"measurements\":[", f);
  if (x->status == KT_OK) {
    write_measure(f, &n, "time", MS(x->time_ns), "milliseconds");
  } else {
    fprintf(f, "{\"name\":\"time\",\"value\":\"%s\",\"unit\":\"milliseconds\"}",
            x->status == KT_COMPILE_FAILED || x->status == KT_COMPILE_DEFERRED
                ? "CompilationFailedConfig" : "RuntimeFailedConfig");
    n++;
  }
  for (size_t m = 0; m < x->nmetrics; m++) { /* unit: none that ktlua knows, but energy's */
    const char *unit = kt_energy_unit(x->metrics[m].name);
    write_measure(f, &n, x->metrics[m].name, x->metrics[m].value, unit ? unit : "");
  }
  fputc(']', f);
}

/* The objective when it is one of the results' metrics, not the time. */
static bool metric_objective(const kt_results *r) {
  return r->objective && strcmp(r->objective, "kernel") && strcmp(r->objective, "kernel+host");
}

static void write_ms(FILE *f, const char *key, double ns) {
  fprintf(f, ",\"%s\":", key);
  kt_json_number(f, MS(ns));
}

static void write_result(FILE *f, const kt_results *r, const kt_result *x) {
  fputc('{', f);
  char stamp[64];
  if (kt_time_format(x->finished, stamp, sizeof stamp) == 0) /* T4 may leave it out */
    fprintf(f, "\"timestamp\":\"%s\",", stamp);
  fputs("\"configuration\":{", f);
  for (size_t p = 0; p < r->nparams; p++) {
    fputs(p ? "," : "", f);
    kt_json_string(f, r->params[p].name);
    fputc(':', f);
    kt_json_param_value(f, &r->params[p].values[x->vi[p]]);
  }
  const kt_overheads *o = &x->over;
  fputs("},\"times\":{\"compilation\":", f);
  kt_json_number(f, MS(o->build));
  write_ms(f, "benchmark", o->wait);
  write_ms(f, "framework", o->total - o->build - o->validation - o->wait);
  write_ms(f, "search_algorithm", o->searcher);
  write_ms(f, "validation", o->validation);
  fputs(",\"runtimes\":[", f);
  for (size_t s = 0; s < x->nsamples; s++) {
    fputs(s ? "," : "", f);
    kt_json_number(f, MS(x->samples_ns[s]));
  }
  fprintf(f, "]},\"invalidity\":\"%s\",\"correctness\":%d", invalidity(x->status),
          x->status == KT_OK);
  write_measurements(f, r, x);
  fputs(",\"objectives\":[", f);
  kt_json_string(f, metric_objective(r) ? r->objective : "time");
  fprintf(f, "],\"ktlua_status\":\"%s\"", kt_status_name(x->status));
  if (x->error) {
    fputs(",\"ktlua_error\":", f);
    kt_json_string(f, x->error);
  }
  if (x->waited_ns > 0) write_ms(f, "ktlua_waited_ms", x->waited_ns);
  if (x->crowded) fputs(",\"ktlua_crowded\":true", f);
  fputc('}', f);
}

static void write_identity(FILE *f, const kt_results *r) {
  fputs("{\"task\":", f);
  kt_json_string(f, r->task);
  fputs(",\"device\":", f);
  kt_json_string(f, r->device);
  fputs(",\"kernels\":[", f);
  for (size_t k = 0; k < r->nkernels; k++) {
    fputs(k ? "," : "", f);
    kt_json_string(f, r->kernels[k]);
  }
  fputc(']', f);
  const char *keys[] = {"backend", "driver", "source", "options", "objective", "searcher"};
  const char *values[] = {r->backend, r->driver, r->source, r->options, r->objective, r->searcher};
  for (int i = 0; i < 6; i++)
    if (values[i]) {
      fprintf(f, ",\"%s\":", keys[i]);
      kt_json_string(f, values[i]);
    }
  if (r->device_threads > 0) fprintf(f, ",\"device_threads\":%d", r->device_threads);
  fputc('}', f);
}

int kt_results_write_t4(const kt_results *r, const char *path, kt_error *err) {
  kt_atomic_file out;
  if (kt_atomic_open(&out, path, err)) return -1;
  FILE *f = out.f;
  fputs("{\"schema_version\":\"1.0.0\",\n\"metadata\":{\"timeunit\":\"milliseconds\",\"ktlua\":", f);
  write_identity(f, r);
  fputs("},\n\"results\":[", f);
  for (size_t i = 0; i < r->n; i++) {
    fputs(i ? ",\n" : "\n", f);
    write_result(f, r, &r->items[i]);
  }
  fputs("\n]}\n", f);
  return kt_atomic_commit(&out, err);
}
