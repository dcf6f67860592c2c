/*
** result_ktt.c: KTT's JSON results (the Kernel Tuning Toolkit's
** TuningResults output, KTT 2.x), read.
**
** {"Metadata": {"ComputeApi", "Device", "GlobalSizeType", "TimeUnit", ...},
**  "Results": [{"KernelName", "Status", "TotalDuration", "ExtraDuration",
**   "DataMovementOverhead", "ValidationOverhead", "SearcherOverhead",
**   "TotalOverhead", "Configuration": [{"Name", "Value", "ValueType"}],
**   "ComputationResults": [{"KernelFunction", "Duration", "Overhead",
**    "GlobalSize": {X, Y, Z}, "LocalSize": {X, Y, Z}, "CompilationData":
**    {RegistersCount, LocalMemorySize, PrivateMemorySize,
**     ConstantMemorySize, MaxWorkGroupSize}}]}]}
**
** A result's time is its TotalDuration (its kernels' durations and any
** extra); its build time the kernels' overheads (compiling, mostly); the
** searcher's overhead is kept but, like the other formats' searcher
** times, left out of the total a replay's clock advances by. With
** GlobalSizeType CUDA a global size counts blocks, as a CUDA kernel's
** does in ktlua. KTT records one duration per configuration, no runs.
*/
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "result_formats.h"

bool kt_ktt_is(const kt_jvalue *root) {
  return kt_json_get_type(root, "Results", KT_JARRAY) &&
         kt_json_get_type(root, "Metadata", KT_JOBJECT);
}

typedef struct ktt_reader {
  double ns;  /* per unit of the file's times */
  bool cuda;  /* global sizes count blocks */
  kt_error *err;
  const kt_jvalue *records; /* Results */
} ktt_reader;

static double unit_ns(const char *unit) {
  static const struct { const char *name; double ns; } units[] = {
      {"Nanoseconds", 1}, {"Microseconds", 1e3}, {"Milliseconds", 1e6}, {"Seconds", 1e9}};
  for (size_t i = 0; i < sizeof units / sizeof *units; i++)
    if (strcmp(units[i].name, unit) == 0) return units[i].ns;
  return 0;
}

static int status_of(const char *name) {
  static const struct { const char *name; kt_status status; } map[] = {
      {"Ok", KT_OK},
      {"CompilationFailed", KT_COMPILE_FAILED},
      {"ComputationFailed", KT_RUNTIME_FAILED},
      {"ValidationFailed", KT_INVALID_OUTPUT},
      {"DeviceLimitsExceeded", KT_TOO_MANY_THREADS}};
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (strcmp(map[i].name, name) == 0) return (int)map[i].status;
  return -1;
}

static double number(const kt_jvalue *obj, const char *key) {
  const kt_jvalue *v = kt_json_get_type(obj, key, KT_JNUMBER);
  return v ? v->u.num.f : 0;
}

/* What the compiler reported, a whole number from 0; -1 (unknown) for
** anything else, which a cast would make undefined. */
static int64_t usage(const kt_jvalue *obj, const char *key) {
  double v = number(obj, key);
  return v >= 0 && v < 9223372036854775808.0 && v == floor(v) ? (int64_t)v : -1;
}

/* A Configuration entry's value; a Bool that is written as a number too. */
static int config_value(const kt_jvalue *c, kt_value *v) {
  const kt_jvalue *type = kt_json_get_type(c, "ValueType", KT_JSTRING);
  if (kt_value_from_json(kt_json_get(c, "Value"), v)) return -1;
  if (type && strcmp(type->u.str, "Bool") == 0 && v->type == KT_VINT)
    *v = (kt_value){KT_VINT, {.i = v->u.i != 0}, true};
  return 0;
}

static int gather(kt_param_acc *acc, const kt_jvalue *results, kt_error *err) {
  for (size_t i = 0; i < results->n; i++) {
    const kt_jvalue *config = kt_json_get_type(&results->u.items[i], "Configuration", KT_JARRAY);
    if (!config) return kt_fail(err, "result %zu has no Configuration", i + 1);
    for (size_t p = 0; p < config->n; p++) {
      const kt_jvalue *c = &config->u.items[p];
      const kt_jvalue *name = kt_json_get_type(c, "Name", KT_JSTRING);
      kt_value v;
      if (!name || config_value(c, &v))
        return kt_fail(err, "result %zu: Configuration[%zu] needs a Name and a Value", i + 1, p + 1);
      if (kt_param_acc_note(acc, name->u.str, &v, err)) return -1;
    }
  }
  return 0;
}

/* The results' kernels: those of the record that ran the most. */
static kt_results *new_results(kt_param_acc *acc, const kt_jvalue *root, kt_error *err) {
  const kt_jvalue *results = kt_json_get_type(root, "Results", KT_JARRAY);
  const kt_jvalue *meta = kt_json_get_type(root, "Metadata", KT_JOBJECT);
  const kt_jvalue *most = NULL;
  for (size_t i = 0; i < results->n; i++) {
    const kt_jvalue *c = kt_json_get_type(&results->u.items[i], "ComputationResults", KT_JARRAY);
    if (c && (!most || c->n > most->n)) most = c;
  }
  const kt_jvalue *task = kt_json_get_type(&results->u.items[0], "KernelName", KT_JSTRING);
  const char *name = task ? task->u.str : "ktt";
  size_t nk = most && most->n ? most->n : 1;
  const char **names = kt_calloc(nk, sizeof *names, err);
  if (!names) return NULL;
  for (size_t k = 0; k < nk; k++) {
    const kt_jvalue *f = most && most->n ? kt_json_get_type(&most->u.items[k], "KernelFunction",
                                                            KT_JSTRING) : NULL;
    names[k] = f ? f->u.str : name;
  }
  const kt_jvalue *device = kt_json_get_type(meta, "Device", KT_JSTRING);
  kt_results *r = kt_param_acc_results(acc, name, names, nk, device ? device->u.str : "recorded", err);
  free(names);
  const kt_jvalue *api = kt_json_get_type(meta, "ComputeApi", KT_JSTRING);
  if (r && api && (r->backend = kt_strdup(api->u.str, NULL)))
    for (char *c = r->backend; *c; c++) *c = (char)tolower((unsigned char)*c);
  return r;
}

static void read_size(const kt_jvalue *obj, size_t out[3], int *dims) {
  const char *axes[] = {"X", "Y", "Z"};
  *dims = 1;
  for (int d = 0; d < 3; d++) {
    double v = number(obj, axes[d]);
    out[d] = v >= 1 && v <= 1e15 ? (size_t)v : 1;
    if (out[d] > 1) *dims = d + 1;
  }
}

/* Sizes and resources of each kernel that ran; its overheads into *build. */
static int read_kernels(const ktt_reader *rd, const kt_jvalue *comps, kt_result *res,
                        double *build) {
  size_t n = comps ? comps->n : 0;
  *build = 0;
  if (!n) return 0;
  if (!(res->sizes = kt_calloc(n, sizeof *res->sizes, rd->err)) ||
      !(res->usage = kt_calloc(n, sizeof *res->usage, rd->err)))
    return -1;
  res->nkernels = n;
  for (size_t k = 0; k < n; k++) {
    const kt_jvalue *c = &comps->u.items[k];
    kt_sizes *z = &res->sizes[k];
    int ldims;
    read_size(kt_json_get(c, "GlobalSize"), z->global, &z->dims);
    read_size(kt_json_get(c, "LocalSize"), z->local, &ldims);
    if (ldims > z->dims) z->dims = ldims;
    for (int d = 0; d < 3; d++)
      if (__builtin_mul_overflow(z->global[d], rd->cuda ? z->local[d] : 1, &z->items[d]))
        return kt_fail(rd->err, "ComputationResults[%zu]: its grid of blocks overflows a size",
                       k + 1);
    const kt_jvalue *u = kt_json_get(c, "CompilationData");
    res->usage[k] = (kt_kernel_usage){usage(u, "RegistersCount"), usage(u, "LocalMemorySize"),
                                      usage(u, "PrivateMemorySize"),
                                      usage(u, "ConstantMemorySize"),
                                      usage(u, "MaxWorkGroupSize")};
    *build += number(c, "Overhead") * rd->ns;
  }
  res->launches = n;
  return 0;
}

static int read_outcome(const ktt_reader *rd, const kt_jvalue *x, size_t i, kt_result *res) {
  const kt_jvalue *status = kt_json_get_type(x, "Status", KT_JSTRING);
  int s = status ? status_of(status->u.str) : -1;
  if (s < 0)
    return kt_fail(rd->err, "result %zu: status '%s' is none of KTT's", i + 1,
                   status ? status->u.str : "(none)");
  res->status = (kt_status)s;
  const kt_jvalue *total = kt_json_get_type(x, "TotalDuration", KT_JNUMBER);
  if (s == KT_OK && !total) return kt_fail(rd->err, "result %zu: Ok but no TotalDuration", i + 1);
  if (s == KT_OK) res->time_ns = total->u.num.f * rd->ns;
  if (s == KT_OK && !isfinite(res->time_ns))
    return kt_fail(rd->err, "result %zu: TotalDuration is out of range", i + 1);
  if (s != KT_OK && !(res->error = kt_strdup(status->u.str, rd->err))) return -1;
  kt_overheads *o = &res->over;
  if (read_kernels(rd, kt_json_get_type(x, "ComputationResults", KT_JARRAY), res, &o->build))
    return kt_fail_prefix(rd->err, "result %zu: ", i + 1);
  o->data = number(x, "DataMovementOverhead") * rd->ns;
  o->validation = number(x, "ValidationOverhead") * rd->ns;
  o->searcher = number(x, "SearcherOverhead") * rd->ns;
  o->wait = number(x, "TotalDuration") * rd->ns;
  o->total = o->wait + number(x, "TotalOverhead") * rd->ns - o->searcher;
  o->framework = o->total - o->build - o->data - o->validation - o->wait;
  if (o->framework < 0) o->framework = 0;
  return 0;
}

static int read_result(void *ud, kt_results *r, size_t i, uint32_t *vi, kt_error *err) {
  const ktt_reader *rd = ud;
  const kt_jvalue *x = &rd->records->u.items[i];
  const kt_jvalue *config = kt_json_get_type(x, "Configuration", KT_JARRAY);
  for (size_t p = 0; p < r->nparams; p++) {
    size_t c = 0;
    while (c < config->n && strcmp(kt_json_get_type(&config->u.items[c], "Name", KT_JSTRING)->u.str,
                                   r->params[p].name) != 0)
      c++;
    kt_value v;
    if (c == config->n || config_value(&config->u.items[c], &v) ||
        kt_sorted_value_index(&r->params[p], &v, &vi[p]))
      return kt_fail(err, "result %zu has no value for %s", i + 1, r->params[p].name);
  }
  kt_result *res = kt_results_add(r, r->n, vi, err);
  return res ? read_outcome(rd, x, i, res) : -1;
}

kt_results *kt_results_from_ktt(const kt_jvalue *root, kt_error *err) {
  const kt_jvalue *results = kt_json_get_type(root, "Results", KT_JARRAY);
  const kt_jvalue *meta = kt_json_get_type(root, "Metadata", KT_JOBJECT);
  const kt_jvalue *unit = kt_json_get_type(meta, "TimeUnit", KT_JSTRING);
  const kt_jvalue *gs = kt_json_get_type(meta, "GlobalSizeType", KT_JSTRING);
  ktt_reader rd = {unit ? unit_ns(unit->u.str) : 1e3, gs && strcmp(gs->u.str, "CUDA") == 0, err,
                   results};
  if (rd.ns == 0) return kt_fail(err, "Metadata.TimeUnit '%s' is no unit of time", unit->u.str), NULL;
  if (results->n == 0) return kt_fail(err, "KTT results with no result"), NULL;
  kt_param_acc acc = {0};
  kt_results *r = gather(&acc, results, err) ? NULL : new_results(&acc, root, err);
  kt_param_acc_clear(&acc);
  return kt_results_fill(r, results->n, read_result, &rd, err);
}
