/*
** recording.c: ktlua result files and Kernel Tuner cache files into a
** recorded space and its records.
**
** Records are gathered as they are read (value indices plus outcome);
** once all are read the space takes their configurations as its valid set
** and the records are laid out in the space's index order. ktlua's own
** files and journals are read by result_read.c, which kt.load shares.
*/
#include "recording.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "metrics.h"

#define NS(ms) ((ms) * 1e6)

typedef struct builder {
  kt_space *space;
  size_t np;
  uint32_t *rows; /* np value indices per record */
  kt_result *recs; /* outcomes only: their value indices are in rows */
  size_t n, caprows, caprecs;
  const char *task, *device;
  kt_results *src; /* the ktlua results read, when they were */
  kt_error *err;
} builder;

/* ---- parameters and values ---- */

static int json_value(const kt_jvalue *j, kt_value *v) {
  switch (j->type) {
    case KT_JNUMBER:
      if (j->integer) *v = (kt_value){KT_VINT, {.i = j->u.num.i}};
      else *v = (kt_value){KT_VFLOAT, {.f = j->u.num.f}};
      return 0;
    case KT_JSTRING: *v = (kt_value){KT_VSTRING, {.s = (char *)j->u.str}}; return 0;
    case KT_JBOOL: *v = (kt_value){KT_VINT, {.i = j->u.b}}; return 0;
    default: return -1;
  }
}

static int add_param(builder *b, const char *name, const kt_jvalue *values) {
  if (!values || values->type != KT_JARRAY || values->n == 0)
    return kt_fail(b->err, "parameter %s has no list of values", name);
  kt_value *v = kt_calloc(values->n, sizeof *v, b->err);
  if (!v) return -1;
  int rc = 0;
  for (size_t i = 0; i < values->n && rc == 0; i++)
    if (json_value(&values->u.items[i], &v[i]))
      rc = kt_fail(b->err, "parameter %s: value %zu is not a number or a string", name, i + 1);
  if (rc == 0) rc = kt_space_add_param(b->space, name, v, values->n, b->err);
  free(v);
  b->np = kt_space_nparams(b->space);
  return rc;
}

/* The value index of a recorded value; what names the record in errors. */
static int value_index(builder *b, size_t p, const kt_jvalue *j, const char *what, uint32_t *out) {
  const kt_param *par = kt_space_param(b->space, p);
  kt_value v;
  if (!j) return kt_fail(b->err, "%s has no value for parameter %s", what, par->name);
  if (json_value(j, &v) == 0)
    for (size_t k = 0; k < par->nvalues; k++)
      if (kt_value_equal(&par->values[k], &v)) {
        *out = (uint32_t)k;
        return 0;
      }
  return kt_fail(b->err, "%s: its value of %s is not one of the parameter's values", what,
                 par->name);
}

/* Appends a record; *vi receives its row of value indices. */
static kt_result *new_record(builder *b, uint32_t **vi) {
  if (b->np == 0) /* records need value indices to lay them out by */
    return kt_fail(b->err, "a recorded space needs at least one parameter"), NULL;
  if (kt_grow(&b->rows, &b->caprows, (b->n + 1) * b->np, sizeof *b->rows, b->err) ||
      kt_grow(&b->recs, &b->caprecs, b->n + 1, sizeof *b->recs, b->err))
    return NULL;
  kt_result *r = &b->recs[b->n];
  memset(r, 0, sizeof *r);
  r->time_ns = NAN;
  *vi = b->rows + b->n * b->np;
  b->n++;
  return r;
}

static double number_or_zero(const kt_jvalue *obj, const char *key) {
  const kt_jvalue *v = kt_json_get_type(obj, key, KT_JNUMBER);
  return v ? v->u.num.f : 0;
}

/* ---- Kernel Tuner cache files ---- */

static kt_status kt_error_status(const char *name) {
  return strcmp(name, "CompilationFailedConfig") == 0 ? KT_COMPILE_FAILED : KT_RUNTIME_FAILED;
}

static int kt_outcome(builder *b, const char *key, const kt_jvalue *e, kt_result *r) {
  const kt_jvalue *time = kt_json_get(e, "time");
  if (time && time->type == KT_JNUMBER) {
    r->status = KT_OK;
    r->time_ns = NS(time->u.num.f);
    if (isinf(r->time_ns)) return kt_fail(b->err, "cache entry '%s' has a time out of range", key);
    r->launches = 1;
  } else if (time && time->type == KT_JSTRING) {
    r->status = kt_error_status(time->u.str);
    if (!(r->error = kt_strdup(time->u.str, b->err))) return -1;
  } else {
    return kt_fail(b->err, "cache entry '%s' has no time", key);
  }
  if (kt_result_samples_from_json(r, kt_json_get(e, "times"), b->err)) return -1;
  kt_overheads *o = &r->over;
  o->build = NS(number_or_zero(e, "compile_time"));
  o->validation = NS(number_or_zero(e, "verification_time"));
  o->wait = NS(number_or_zero(e, "benchmark_time"));
  o->framework = NS(number_or_zero(e, "framework_time"));
  o->total = o->build + o->validation + o->wait + o->framework;
  if (o->total == 0 && r->status == KT_OK) o->total = o->wait = r->time_ns;
  return 0;
}

/* The entry's other numbers (GFLOP/s, energy, ...) are the record's
** metrics: what a replay's objective may name (metrics.h). */
static int kt_numbers(builder *b, const kt_jvalue *e, kt_result *r) {
  static const char *const known[] = {"time", "compile_time", "verification_time",
                                      "benchmark_time", "framework_time", "strategy_time", NULL};
  for (size_t i = 0; i < e->n; i++) {
    const kt_jmember *f = &e->u.members[i];
    bool skip = f->value.type != KT_JNUMBER || kt_space_find(b->space, f->key) >= 0;
    for (size_t k = 0; !skip && known[k]; k++) skip = strcmp(known[k], f->key) == 0;
    if (!skip && kt_result_set_metric(r, f->key, f->value.u.num.f, b->err)) return -1;
  }
  return 0;
}

static int kt_entry(builder *b, const kt_jmember *m) {
  const kt_jvalue *e = &m->value;
  if (e->type != KT_JOBJECT) return kt_fail(b->err, "cache entry '%s' is not an object", m->key);
  const kt_jvalue *time = kt_json_get_type(e, "time", KT_JSTRING);
  if (time && strcmp(time->u.str, "InvalidConfig") == 0) return 0;
  uint32_t *vi;
  kt_result *r = new_record(b, &vi);
  if (!r) return -1;
  char what[256];
  snprintf(what, sizeof what, "cache entry '%s'", m->key);
  for (size_t p = 0; p < b->np; p++)
    if (value_index(b, p, kt_json_get(e, kt_space_param(b->space, p)->name), what, &vi[p]))
      return -1;
  return kt_outcome(b, m->key, e, r) || (r->status == KT_OK && kt_numbers(b, e, r)) ? -1 : 0;
}

static int read_kt_cache(builder *b, const kt_jvalue *root) {
  const kt_jvalue *params = kt_json_get_type(root, "tune_params", KT_JOBJECT);
  const kt_jvalue *keys = kt_json_get_type(root, "tune_params_keys", KT_JARRAY);
  const kt_jvalue *cache = kt_json_get_type(root, "cache", KT_JOBJECT);
  if (!params || !cache) return kt_fail(b->err, "a Kernel Tuner cache needs tune_params and cache");
  size_t n = keys ? keys->n : params->n;
  for (size_t i = 0; i < n; i++) {
    const char *name = keys ? keys->u.items[i].u.str : params->u.members[i].key;
    if (keys && keys->u.items[i].type != KT_JSTRING)
      return kt_fail(b->err, "tune_params_keys[%zu] is not a name", i + 1);
    if (add_param(b, name, kt_json_get(params, name))) return -1;
  }
  for (size_t i = 0; i < cache->n; i++)
    if (kt_entry(b, &cache->u.members[i])) return -1;
  const kt_jvalue *task = kt_json_get_type(root, "kernel_name", KT_JSTRING);
  const kt_jvalue *device = kt_json_get_type(root, "device_name", KT_JSTRING);
  b->task = task ? task->u.str : NULL;
  b->device = device ? device->u.str : NULL;
  return 0;
}

/* ---- ktlua result files and journals ---- */

/* Takes src's records; b keeps src (released with b) for its names. */
static int read_ktlua(builder *b, kt_results *src) {
  if (!src) return -1;
  int rc = 0;
  for (size_t p = 0; p < src->nparams && rc == 0; p++)
    rc = kt_space_add_param(b->space, src->params[p].name, src->params[p].values,
                            src->params[p].nvalues, b->err);
  b->np = kt_space_nparams(b->space);
  for (size_t i = 0; i < src->n && rc == 0; i++) {
    uint32_t *vi;
    kt_result *r = new_record(b, &vi);
    if (r) memcpy(vi, src->items[i].vi, b->np * sizeof *vi);
    rc = r ? kt_result_copy(r, &src->items[i], b->err) : -1;
  }
  b->src = src; /* its task and device name the recording */
  b->task = src->task;
  b->device = src->device;
  return rc;
}

/* ---- the records in index order ---- */

static int lay_out(builder *b, kt_recording *out) {
  uint64_t count = kt_space_count(b->space);
  size_t *where = kt_calloc(count, sizeof *where, b->err);
  if (!where) return -1;
  for (size_t r = 0; r < b->n; r++) {
    uint64_t index;
    kt_space_index(b->space, b->rows + r * b->np, &index); /* every row is in the space */
    where[index] = r;
  }
  const char *task = b->task ? b->task : "replay";
  const char *device = b->device ? b->device : "recorded";
  out->records = kt_results_new(task, b->space, &task, 1, device, b->err);
  int rc = out->records ? 0 : -1;
  for (uint64_t i = 0; i < count && rc == 0; i++) {
    kt_result *res = kt_results_add(out->records, i, b->rows + where[i] * b->np, b->err);
    rc = res ? kt_result_copy(res, &b->recs[where[i]], b->err) : -1;
  }
  free(where);
  return rc;
}

/* The records of a journal or of a parsed file (*doc, kept for the names). */
static int read_records(builder *b, const char *text, size_t len, kt_jdoc **doc,
                        kt_recording *out) {
  kt_results *journal;
  int rc = kt_journal_parse(text, len, &journal, b->err);
  if (rc <= 0) {
    out->format = "ktlua-journal";
    return rc ? -1 : read_ktlua(b, journal);
  }
  if (!(*doc = kt_json_parse(text, len, b->err))) return -1;
  const kt_jvalue *root = kt_json_root(*doc);
  const kt_jvalue *format = kt_json_get_type(root, "format", KT_JSTRING);
  if (format && strcmp(format->u.str, "ktlua-results") == 0) {
    out->format = "ktlua-results";
    return read_ktlua(b, kt_results_from_json(root, b->err));
  }
  if (kt_json_get(root, "cache") && kt_json_get(root, "tune_params")) {
    out->format = "kernel-tuner-cache";
    return read_kt_cache(b, root);
  }
  return kt_fail(b->err, "neither a ktlua result file or journal nor a Kernel Tuner cache file");
}

static int build(builder *b, const char *text, size_t len, kt_jdoc **doc, kt_recording *out) {
  if (read_records(b, text, len, doc, out)) return -1;
  if (b->n == 0) return kt_fail(b->err, "the recording has no configuration");
  if (kt_space_set_configs(b->space, b->rows, b->n, b->err)) return -1;
  return lay_out(b, out);
}

int kt_recording_read(const char *path, kt_recording *out, kt_error *err) {
  memset(out, 0, sizeof *out);
  size_t len;
  char *text = kt_read_file(path, 0, &len, err);
  if (!text) return -1;
  kt_jdoc *doc = NULL;
  builder b = {kt_space_new(err), 0, NULL, NULL, 0, 0, 0, NULL, NULL, NULL, err};
  int rc = b.space ? build(&b, text, len, &doc, out) : -1;
  free(b.rows);
  for (size_t i = 0; i < b.n; i++) kt_result_clear(&b.recs[i]);
  free(b.recs);
  kt_results_release(b.src);
  kt_json_free(doc);
  free(text);
  out->space = b.space;
  if (rc) {
    kt_recording_clear(out);
    return kt_fail_prefix(err, "%s: ", path);
  }
  return 0;
}

void kt_recording_clear(kt_recording *rec) {
  kt_results_release(rec->records);
  kt_space_free(rec->space);
  memset(rec, 0, sizeof *rec);
}
