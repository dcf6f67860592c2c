/*
** result_kt_cache.c: Kernel Tuner cache files, read and written.
**
** A cache is {"device_name", "kernel_name", "tune_params_keys",
** "tune_params" (each parameter's values), "objective", "cache"}: the
** cache maps the configuration's key (its values as Python's str() writes
** them, joined by ",") to an entry holding the parameters' values, "time"
** (the kernel time in ms, or CompilationFailedConfig, RuntimeFailedConfig
** or InvalidConfig), "times" (every run), compile_time, verification_time,
** benchmark_time, strategy_time, framework_time (ms) and a timestamp.
** Kernel Tuner's simulation mode looks configurations up by key, reads
** those times to advance its clock, and wants every configuration of the
** space that passes its restrictions in the file.
**
** Reading: an entry's outcome is its time; its total leaves
** strategy_time out (it belongs to the searcher that made the file, which
** a replay does not run); InvalidConfig entries are no configurations. A
** value that is None, a list or a dict is held as the text Python's str()
** makes of it (the key's piece), a string. The file's objective, unless it
** is "time", and objective_higher_is_better are the results' (kt.load's
** options override them); its problem_size (a number or 1 to 3) theirs
** too, for the database (db:store's size). Writing: ok results get their time, compile
** failures CompilationFailedConfig, every other failure
** RuntimeFailedConfig; ktlua's own status and error ride along as
** ktlua_status and ktlua_error, which Kernel Tuner ignores and this reader
** restores. The file validates against Kernel Tuner's cache schema 1.1.0
** when it is given a problem_size (which that schema asks for).
*/
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "json.h"
#include "metrics.h"
#include "result_formats.h"

#define NS(ms) ((ms) * 1e6)
#define MS(ns) ((ns) / 1e6)

/* ---- reading ---- */

static bool positive_integer(const kt_jvalue *v) {
  return v->type == KT_JNUMBER && v->integer && v->u.num.i > 0;
}

/* The problem size the file says (a number, or a list of 1 to 3), as the
** results' problem_size; anything else (an expression, a longer list) is
** none: the size is then the caller's to give. */
static void problem_size(const kt_jvalue *v, kt_results *r) {
  if (!v) return;
  if (positive_integer(v)) {
    r->problem_size[0] = v->u.num.i;
    r->nproblem = 1;
    return;
  }
  if (v->type != KT_JARRAY || v->n < 1 || v->n > 3) return;
  for (size_t i = 0; i < v->n; i++)
    if (!positive_integer(&v->u.items[i])) return;
  for (size_t i = 0; i < v->n; i++) r->problem_size[i] = v->u.items[i].u.num.i;
  r->nproblem = v->n;
}

bool kt_cache_is(const kt_jvalue *root) {
  return kt_json_get_type(root, "cache", KT_JOBJECT) &&
         kt_json_get_type(root, "tune_params", KT_JOBJECT);
}

static double number_or_zero(const kt_jvalue *obj, const char *key) {
  const kt_jvalue *v = kt_json_get_type(obj, key, KT_JNUMBER);
  return v ? v->u.num.f : 0;
}

/* A value as ktlua holds it: a number, a string or a boolean as it is;
** None, a list or a dict as the text of Python's str() (*owned, the
** key's piece: 'None', '[1, 2]'), a string thereafter. */
static int cache_value(const kt_jvalue *j, kt_value *v, char **owned, kt_error *err) {
  *owned = NULL;
  if (kt_value_from_json(j, v) == 0) return 0;
  if (!(*owned = kt_python_str(j, err))) return -1;
  *v = (kt_value){KT_VSTRING, {.s = *owned}, false};
  return 0;
}

static int add_param(kt_space *space, const char *name, const kt_jvalue *values, kt_error *err) {
  if (!values || values->type != KT_JARRAY || values->n == 0)
    return kt_fail(err, "parameter %s has no list of values", name);
  kt_value *v = kt_calloc(values->n, sizeof *v, err);
  char **owned = v ? kt_calloc(values->n, sizeof *owned, err) : NULL;
  int rc = owned ? 0 : -1;
  for (size_t i = 0; i < values->n && rc == 0; i++)
    rc = cache_value(&values->u.items[i], &v[i], &owned[i], err);
  if (rc == 0) rc = kt_space_add_param(space, name, v, values->n, err);
  for (size_t i = 0; owned && i < values->n; i++) free(owned[i]);
  free(owned);
  free(v);
  return rc;
}

static kt_results *header(const kt_jvalue *root, kt_error *err) {
  const kt_jvalue *params = kt_json_get_type(root, "tune_params", KT_JOBJECT);
  const kt_jvalue *keys = kt_json_get_type(root, "tune_params_keys", KT_JARRAY);
  kt_space *space = kt_space_new(err);
  int rc = space ? 0 : -1;
  size_t n = keys ? keys->n : params->n;
  for (size_t i = 0; i < n && rc == 0; i++) {
    if (keys && keys->u.items[i].type != KT_JSTRING)
      rc = kt_fail(err, "tune_params_keys[%zu] is not a name", i + 1);
    const char *name = rc ? NULL : keys ? keys->u.items[i].u.str : params->u.members[i].key;
    if (rc == 0) rc = add_param(space, name, kt_json_get(params, name), err);
  }
  const kt_jvalue *task = kt_json_get_type(root, "kernel_name", KT_JSTRING);
  const kt_jvalue *device = kt_json_get_type(root, "device_name", KT_JSTRING);
  const char *name = task ? task->u.str : "replay";
  kt_results *r = rc == 0 ? kt_results_new(name, space, &name, 1,
                                           device ? device->u.str : "recorded", err)
                          : NULL;
  kt_space_free(space);
  if (r) problem_size(kt_json_get(root, "problem_size"), r);
  return r;
}

static int outcome(const char *key, const kt_jvalue *e, kt_result *r, kt_error *err) {
  const kt_jvalue *time = kt_json_get(e, "time");
  const kt_jvalue *status = kt_json_get_type(e, "ktlua_status", KT_JSTRING);
  const kt_jvalue *error = kt_json_get_type(e, "ktlua_error", KT_JSTRING);
  if (time && time->type == KT_JNUMBER) {
    r->status = KT_OK;
    r->time_ns = NS(time->u.num.f);
    if (isinf(r->time_ns)) return kt_fail(err, "cache entry '%s' has a time out of range", key);
    r->launches = 1;
    if (error && !(r->error = kt_strdup(error->u.str, err))) return -1;
  } else if (time && time->type == KT_JSTRING) {
    r->status = strcmp(time->u.str, "CompilationFailedConfig") == 0 ? KT_COMPILE_FAILED
                                                                     : KT_RUNTIME_FAILED;
    const char *text = error ? error->u.str : status ? NULL : time->u.str; /* ktlua's: its own */
    if (text && !(r->error = kt_strdup(text, err))) return -1;
  } else {
    return kt_fail(err, "cache entry '%s' has no time", key);
  }
  int s = status ? kt_status_from_name(status->u.str) : -1;
  if (s >= 0 && (s == KT_OK) == (r->status == KT_OK)) r->status = (kt_status)s;
  if (kt_result_samples_from_json(r, kt_json_get(e, "times"), err)) return -1;
  kt_overheads *o = &r->over;
  o->build = NS(number_or_zero(e, "compile_time"));
  o->validation = NS(number_or_zero(e, "verification_time"));
  o->wait = NS(number_or_zero(e, "benchmark_time"));
  o->framework = NS(number_or_zero(e, "framework_time"));
  o->searcher = NS(number_or_zero(e, "strategy_time"));
  o->total = o->build + o->validation + o->wait + o->framework;
  if (o->total == 0 && r->status == KT_OK) o->total = o->wait = r->time_ns;
  const kt_jvalue *stamp = kt_json_get_type(e, "timestamp", KT_JSTRING);
  if (stamp) r->finished = kt_time_parse(stamp->u.str);
  return 0;
}

/* The entry's other numbers (GFLOP/s, energy, ...) are the record's
** metrics: what a replay's objective may name (metrics.h). */
static bool is_param(const kt_results *rs, const char *name) {
  for (size_t p = 0; p < rs->nparams; p++)
    if (strcmp(rs->params[p].name, name) == 0) return true;
  return false;
}

static int numbers(const kt_results *rs, const kt_jvalue *e, kt_result *r, kt_error *err) {
  static const char *const known[] = {"time", "compile_time", "verification_time",
                                      "benchmark_time", "framework_time", "strategy_time", NULL};
  for (size_t i = 0; i < e->n; i++) {
    const kt_jmember *f = &e->u.members[i];
    double v;
    bool skip = !kt_json_real(&f->value, &v) || is_param(rs, f->key);
    for (size_t k = 0; !skip && known[k]; k++) skip = strcmp(known[k], f->key) == 0;
    if (!skip && kt_result_set_metric(r, f->key, v, err)) return -1;
  }
  return 0;
}

static int entry(void *ud, kt_results *r, size_t i, uint32_t *vi, kt_error *err) {
  const kt_jmember *m = &((const kt_jvalue *)ud)->u.members[i];
  const kt_jvalue *e = &m->value;
  if (e->type != KT_JOBJECT) return kt_fail(err, "cache entry '%s' is not an object", m->key);
  const kt_jvalue *time = kt_json_get_type(e, "time", KT_JSTRING);
  if (time && strcmp(time->u.str, "InvalidConfig") == 0) return 0;
  for (size_t p = 0; p < r->nparams; p++) {
    const kt_param *par = &r->params[p];
    const kt_jvalue *j = kt_json_get(e, par->name);
    kt_value v;
    char *owned;
    if (!j) return kt_fail(err, "cache entry '%s' has no value for parameter %s", m->key, par->name);
    if (cache_value(j, &v, &owned, err)) return -1;
    int rc = kt_param_value_index(par, &v, &vi[p]);
    if (rc) {
      char *text = owned ? owned : kt_python_str(j, err);
      if (text) kt_fail(err, "cache entry '%s': %s = %s is not one of the parameter's values "
                        "(tune_params)", m->key, par->name, text);
      if (text != owned) free(text);
    }
    free(owned);
    if (rc) return -1;
  }
  kt_result *res = kt_results_add(r, r->n, vi, err);
  if (!res || outcome(m->key, e, res, err)) return -1;
  return res->status == KT_OK ? numbers(r, e, res, err) : 0;
}

/* The cache's objective, unless it is the time ("time", Kernel Tuner's
** default): the best goes by it, higher or lower as the file says. */
static int take_objective(const kt_jvalue *root, kt_results *r, kt_error *err) {
  const kt_jvalue *objective = kt_json_get(root, "objective");
  const kt_jvalue *higher = kt_json_get(root, "objective_higher_is_better");
  if (higher && higher->type != KT_JBOOL)
    return kt_fail(err, "objective_higher_is_better is not true or false");
  if (!objective || objective->type == KT_JNULL) return 0;
  if (objective->type != KT_JSTRING || !objective->u.str[0])
    return kt_fail(err, "objective is not the name of a measured quantity");
  if (strcmp(objective->u.str, "time") == 0) return 0;
  free(r->objective);
  if (!(r->objective = kt_strdup(objective->u.str, err))) return -1;
  r->maximize = higher && higher->u.b;
  kt_results_rescore(r);
  return 0;
}

kt_results *kt_results_from_cache(const kt_jvalue *root, kt_error *err) {
  const kt_jvalue *cache = kt_json_get_type(root, "cache", KT_JOBJECT);
  kt_results *r = kt_results_fill(header(root, err), cache->n, entry, (void *)cache, err);
  if (r && take_objective(root, r, err)) {
    kt_results_release(r);
    return NULL;
  }
  return r;
}

/* ---- writing ---- */

/* What Python's str() makes of a value: the pieces of a cache key. */
static void python_str(const kt_value *v, char *buf, size_t size) {
  if (v->type == KT_VFLOAT) kt_python_float(v->u.f, buf, size);
  else if (v->boolean) snprintf(buf, size, "%s", v->u.i ? "True" : "False");
  else if (v->type == KT_VINT) snprintf(buf, size, "%" PRId64, v->u.i);
  else snprintf(buf, size, "%s", v->u.s);
}

/* A value's piece of the key: a string whole, however long. */
static const char *key_piece(const kt_value *v, char *buf, size_t size) {
  if (v->type == KT_VSTRING) return v->u.s;
  python_str(v, buf, size);
  return buf;
}

/* The entry's key: the values' texts joined by ",", into a memory stream. */
static void key_text(FILE *f, const kt_results *r, const kt_result *x) {
  char buf[256];
  for (size_t p = 0; p < r->nparams; p++) {
    if (p) fputc(',', f);
    fputs(key_piece(&r->params[p].values[x->vi[p]], buf, sizeof buf), f);
  }
}

static void write_key(FILE *f, const kt_results *r, const kt_result *x) {
  char buf[256];
  fputc('"', f);
  for (size_t p = 0; p < r->nparams; p++) {
    if (p) fputc(',', f);
    const char *text = key_piece(&r->params[p].values[x->vi[p]], buf, sizeof buf);
    kt_json_chars(f, text, strlen(text)); /* the one JSON string writer: UTF-8 whole */
  }
  fputc('"', f);
}

typedef struct keyed {
  char *key;
  size_t at;
} keyed;

static int by_key(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  return c ? c : x->at < y->at ? -1 : x->at > y->at;
}

/* A cache keeps one entry per key (Python's json keeps the last of a key
** given twice): results that record a configuration twice, or two whose
** values read alike ("2" and 2), have no cache. */
static int unique_entries(const kt_results *r, kt_error *err) {
  keyed *keys = kt_calloc(r->n + 1, sizeof *keys, err);
  int rc = keys ? 0 : -1;
  for (size_t i = 0; i < r->n && rc == 0; i++) {
    size_t len;
    FILE *f = open_memstream(&keys[i].key, &len);
    if (!f) rc = kt_fail(err, "out of memory");
    if (f) key_text(f, r, &r->items[i]);
    if (f && fclose(f)) rc = kt_fail(err, "out of memory");
    keys[i].at = i;
  }
  if (rc == 0) qsort(keys, r->n, sizeof *keys, by_key);
  for (size_t i = 1; i < r->n && rc == 0; i++)
    if (strcmp(keys[i].key, keys[i - 1].key) == 0)
      rc = kt_fail(err, "results %zu and %zu would be one entry of a Kernel Tuner cache (key "
                   "'%.64s'): a cache keeps one record per configuration", keys[i - 1].at + 1,
                   keys[i].at + 1, keys[i].key);
  for (size_t i = 0; keys && i < r->n; i++) free(keys[i].key);
  free(keys);
  return rc;
}

static const char *const entry_keys[] = {"time", "times", "compile_time", "verification_time",
                                         "benchmark_time", "strategy_time", "framework_time",
                                         "timestamp", "ktlua_status", "ktlua_error", NULL};

static bool entry_key(const char *name) {
  for (size_t k = 0; entry_keys[k]; k++)
    if (strcmp(entry_keys[k], name) == 0) return true;
  return false;
}

/* An entry names each thing once: no parameter or metric may take the name
** of another, or of the entry's own fields. */
static int distinct_names(const kt_results *r, kt_error *err) {
  for (size_t p = 0; p < r->nparams; p++)
    if (entry_key(r->params[p].name))
      return kt_fail(err, "parameter %s: a Kernel Tuner cache entry has a field of that name",
                     r->params[p].name);
  for (size_t i = 0; i < r->n; i++)
    for (size_t m = 0; m < r->items[i].nmetrics; m++) {
      const char *name = r->items[i].metrics[m].name;
      if (entry_key(name) || is_param(r, name))
        return kt_fail(err, "metric %s of result %zu: a Kernel Tuner cache entry has a field of "
                       "that name", name, i + 1);
    }
  return 0;
}

static void write_ms(FILE *f, const char *key, double ns) {
  fprintf(f, ",\"%s\":", key);
  kt_json_number(f, MS(ns > 0 ? ns : 0));
}

static void write_entry(FILE *f, const kt_results *r, const kt_result *x) {
  write_key(f, r, x);
  fputs(":{", f);
  for (size_t p = 0; p < r->nparams; p++) {
    kt_json_string(f, r->params[p].name);
    fputc(':', f);
    kt_json_param_value(f, &r->params[p].values[x->vi[p]]);
    fputc(',', f);
  }
  fputs("\"time\":", f);
  if (x->status == KT_OK) kt_json_number(f, MS(x->time_ns));
  else fputs(x->status == KT_COMPILE_FAILED || x->status == KT_COMPILE_DEFERRED
                 ? "\"CompilationFailedConfig\"" : "\"RuntimeFailedConfig\"", f);
  fputs(",\"times\":[", f);
  for (size_t s = 0; s < x->nsamples; s++) {
    fputs(s ? "," : "", f);
    kt_json_number(f, MS(x->samples_ns[s]));
  }
  fputc(']', f);
  const kt_overheads *o = &x->over;
  write_ms(f, "compile_time", o->build);
  write_ms(f, "verification_time", o->validation);
  write_ms(f, "benchmark_time", o->wait);
  write_ms(f, "strategy_time", o->searcher);
  write_ms(f, "framework_time", o->total - o->build - o->validation - o->wait - o->searcher);
  for (size_t m = 0; m < x->nmetrics; m++) { /* as Kernel Tuner keeps its metrics: beside time */
    fputc(',', f);
    kt_json_string(f, x->metrics[m].name);
    fputc(':', f);
    kt_json_any_number(f, x->metrics[m].value); /* Python reads Infinity and NaN */
  }
  char stamp[64];
  if (kt_time_format(x->finished, stamp, sizeof stamp)) /* unknown: the schema asks for one */
    stamp[0] = '\0';
  fprintf(f, ",\"timestamp\":\"%s\",\"ktlua_status\":\"%s\"", stamp, kt_status_name(x->status));
  if (x->error) {
    fputs(",\"ktlua_error\":", f);
    kt_json_string(f, x->error);
  }
  fputc('}', f);
}

static void write_header(FILE *f, const kt_results *r, const kt_cache_opts *o) {
  fputs("{\n\"schema_version\": \"1.1.0\",\n\"device_name\": ", f);
  kt_json_string(f, r->device);
  fputs(",\n\"kernel_name\": ", f);
  kt_json_string(f, r->nkernels == 1 ? r->kernels[0] : r->task);
  if (o && o->problem_size && o->scalar) {
    fprintf(f, ",\n\"problem_size\": %" PRId64, o->problem_size[0]);
  } else if (o && o->problem_size) {
    fputs(",\n\"problem_size\": [", f);
    for (size_t i = 0; i < o->nproblem; i++)
      fprintf(f, "%s%" PRId64, i ? ", " : "", o->problem_size[i]);
    fputc(']', f);
  }
  fputs(",\n\"tune_params_keys\": [", f);
  for (size_t p = 0; p < r->nparams; p++) {
    fputs(p ? ", " : "", f);
    kt_json_string(f, r->params[p].name);
  }
  fputs("],\n\"tune_params\": {", f);
  for (size_t p = 0; p < r->nparams; p++) {
    fputs(p ? ", " : "", f);
    kt_json_string(f, r->params[p].name);
    fputs(": [", f);
    for (size_t v = 0; v < r->params[p].nvalues; v++) {
      fputs(v ? ", " : "", f);
      kt_json_param_value(f, &r->params[p].values[v]);
    }
    fputc(']', f);
  }
  fputs("},\n\"objective\": \"time\",\n\"cache\": {", f);
}

int kt_results_write_cache(const kt_results *r, const char *path, const kt_cache_opts *o,
                           kt_error *err) {
  if (r->nparams == 0) return kt_fail(err, "a Kernel Tuner cache needs at least one parameter");
  if (distinct_names(r, err) || unique_entries(r, err)) return -1;
  kt_atomic_file out;
  if (kt_atomic_open(&out, path, err)) return -1;
  write_header(out.f, r, o);
  for (size_t i = 0; i < r->n; i++) {
    fputs(i ? ",\n" : "\n", out.f);
    write_entry(out.f, r, &r->items[i]);
  }
  fputs("\n}\n}\n", out.f);
  return kt_atomic_commit(&out, err);
}
