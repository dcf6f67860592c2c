/*
** result_io.c: result files. CSV for spreadsheets and plotting, JSON with
** every sample and overhead for tools. Each replaces its file whole
** (atomic_file.h): a kill while writing leaves the previous file.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "json.h"
#include "metrics.h"
#include "result.h"
#include "result_formats.h"

#define MS(ns) ((ns) / 1e6)

/* ---- CSV ---- */

/* Inside quotes: a quote doubled, all else as it is (line ends too: the
** reader, result_csv.c, takes a quoted text over several lines). */
static void csv_chars(FILE *f, const char *s) {
  for (; s && *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
}

static void csv_text(FILE *f, const char *s) {
  fputc('"', f);
  csv_chars(f, s);
  fputc('"', f);
}

static void csv_size(FILE *f, const size_t *v, int dims) {
  for (int d = 0; d < dims; d++) fprintf(f, "%s%zu", d ? "x" : "", v[d]);
}

/* Columns written only where a row needs them, after the metrics: whether
** early stop cut it short, a CPU device's wait for a processor and whether
** it stopped its runs at 10 (result.h), then its device (a tuning over
** several). */
typedef struct csv_extra {
  bool cut_short, waited, crowded, devices;
} csv_extra;

static csv_extra csv_extras(const kt_results *r) {
  csv_extra e = {false, false, false, false};
  for (size_t i = 0; i < r->n; i++) {
    e.cut_short |= r->items[i].cut_short;
    e.waited |= r->items[i].waited_ns > 0;
    e.crowded |= r->items[i].crowded;
    e.devices |= r->items[i].device != NULL;
  }
  return e;
}

static void csv_header(FILE *f, const kt_results *r, const char **metrics, size_t nmetrics,
                       csv_extra e) {
  fputs("index", f);
  for (size_t p = 0; p < r->nparams; p++) fprintf(f, ",%s", r->params[p].name);
  fputs(",status,time_ms,samples", f);
  for (size_t k = 0; k < r->nkernels; k++) {
    if (r->nkernels == 1) fputs(",global,local", f);
    else
      for (int local = 0; local < 2; local++) { /* kernel names from files may hold anything */
        fputs(",\"", f);
        csv_chars(f, r->kernels[k]);
        fputs(local ? "_local\"" : "_global\"", f);
      }
  }
  fputs(",build_ms,data_ms,validation_ms,launcher_ms,wait_ms,searcher_ms,framework_ms,total_ms,error", f);
  for (size_t m = 0; m < nmetrics; m++) { /* after the error: a column per metric */
    fputc(',', f);
    csv_text(f, metrics[m]);
  }
  if (e.cut_short) fputs(",cut_short", f);
  if (e.waited) fputs(",waited_ms", f);
  if (e.crowded) fputs(",crowded", f);
  if (e.devices) fputs(",device", f);
  fputc('\n', f);
}

/* A metric's cell: empty where the result has none; each value reads back
** as it was (result_csv.c): all its digits, and inf, -inf and nan as C
** and Python spell them. */
static void csv_metric(FILE *f, const kt_result *x, const char *name) {
  for (size_t i = 0; i < x->nmetrics; i++) {
    if (strcmp(x->metrics[i].name, name) != 0) continue;
    double v = x->metrics[i].value;
    char text[32];
    if (isfinite(v)) kt_number_text(v, text, sizeof text);
    fputs(isnan(v) ? "nan" : isinf(v) ? (v > 0 ? "inf" : "-inf") : text, f);
    return;
  }
}

static void csv_row(FILE *f, const kt_results *r, const kt_result *x, const char **metrics,
                    size_t nmetrics, csv_extra e) {
  char buf[256];
  fprintf(f, "%llu", (unsigned long long)x->index);
  for (size_t p = 0; p < r->nparams; p++) {
    const kt_value *v = &r->params[p].values[x->vi[p]];
    fputc(',', f);
    if (v->type == KT_VSTRING) {
      csv_text(f, v->u.s); /* whole: kt_value_format would cut it to buf */
      continue;
    }
    kt_value_format(v, buf, sizeof buf);
    fputs(v->boolean ? (v->u.i ? "true" : "false") : buf, f);
  }
  fprintf(f, ",%s,", kt_status_name(x->status));
  if (x->status == KT_OK) fprintf(f, "%.9g", MS(x->time_ns));
  fprintf(f, ",%zu", x->nsamples);
  for (size_t k = 0; k < r->nkernels; k++) {
    fputc(',', f);
    if (k < x->nkernels) csv_size(f, x->sizes[k].global, x->sizes[k].dims);
    fputc(',', f);
    if (k < x->nkernels && x->sizes[k].local[0]) csv_size(f, x->sizes[k].local, x->sizes[k].dims);
  }
  const kt_overheads *o = &x->over;
  fprintf(f, ",%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,", MS(o->build), MS(o->data),
          MS(o->validation), MS(o->launcher), MS(o->wait), MS(o->searcher), MS(o->framework),
          MS(o->total));
  if (x->error) {
    /* The first line says what happened; the JSON file keeps the rest. */
    const char *nl = strchr(x->error, '\n');
    size_t len = nl ? (size_t)(nl - x->error) : strlen(x->error);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(len < 500 ? len : 500), x->error);
    csv_text(f, line);
  }
  for (size_t m = 0; m < nmetrics; m++) {
    fputc(',', f);
    csv_metric(f, x, metrics[m]);
  }
  if (e.cut_short) fputs(x->cut_short ? ",true" : ",", f);
  if (e.waited) fputc(',', f);
  if (e.waited && x->waited_ns > 0) { /* all its digits: it reads back as it was */
    kt_number_text(MS(x->waited_ns), buf, sizeof buf);
    fputs(buf, f);
  }
  if (e.crowded) fputs(x->crowded ? ",true" : ",", f);
  if (e.devices) fputc(',', f);
  if (e.devices && x->device) csv_text(f, x->device);
  fputc('\n', f);
}

int kt_results_write_csv(const kt_results *r, const char *path, kt_error *err) {
  kt_atomic_file out;
  if (kt_atomic_open(&out, path, err)) return -1;
  size_t nmetrics;
  const char **metrics = kt_results_metric_names(r, &nmetrics, err);
  if (!metrics) {
    kt_atomic_abort(&out);
    return -1;
  }
  csv_extra e = csv_extras(r);
  csv_header(out.f, r, metrics, nmetrics, e);
  for (size_t i = 0; i < r->n; i++) csv_row(out.f, r, &r->items[i], metrics, nmetrics, e);
  free(metrics);
  return kt_atomic_commit(&out, err);
}

/* ---- JSON ---- */

static void json_sizes(FILE *f, const size_t *v, int dims) {
  fputc('[', f);
  for (int d = 0; d < dims; d++) fprintf(f, "%s%zu", d ? "," : "", v[d]);
  fputc(']', f);
}

/* Per kernel: registers and memory as the compiler reports them, null
** where the backend cannot tell. */
static void json_usage(FILE *f, const kt_kernel_usage *u) {
  const char *names[KT_USAGE_FIELDS];
  int64_t values[KT_USAGE_FIELDS];
  kt_usage_fields(u, names, values);
  for (int i = 0; i < KT_USAGE_FIELDS; i++) {
    fprintf(f, "%s\"%s\":", i ? "," : "{", names[i]);
    if (values[i] < 0) fputs("null", f);
    else fprintf(f, "%lld", (long long)values[i]);
  }
  fputc('}', f);
}

static void json_launched(FILE *f, const kt_result *x) {
  if (!x->nlaunched) return;
  fputs(",\"launched\":[", f);
  for (size_t i = 0; i < x->nlaunched; i++) {
    const kt_launch_shape *s = &x->launched[i];
    fprintf(f, "%s{\"kernel\":%u,\"global\":", i ? "," : "", (unsigned)s->kernel);
    json_sizes(f, s->global, s->dims);
    fputs(",\"local\":", f);
    if (s->local[0]) json_sizes(f, s->local, s->dims);
    else fputs("null", f);
    fprintf(f, ",\"count\":%zu}", s->count);
  }
  fputc(']', f);
}

/* "metrics": {"gflops": 12.5, "up": Infinity, ...} (metrics.h) */
static void json_metrics(FILE *f, const kt_result *x) {
  if (!x->nmetrics) return;
  fputs(",\"metrics\":{", f);
  for (size_t i = 0; i < x->nmetrics; i++) {
    fputs(i ? "," : "", f);
    kt_json_string(f, x->metrics[i].name);
    fputc(':', f);
    kt_json_any_number(f, x->metrics[i].value); /* Infinity, NaN: read back as they were */
  }
  fputc('}', f);
}

/* A result's members, from after its opening brace. */
static void json_result(FILE *f, const kt_results *r, const kt_result *x) {
  fprintf(f, "\"index\":%llu,\"config\":{", (unsigned long long)x->index);
  for (size_t p = 0; p < r->nparams; p++) {
    fputs(p ? "," : "", f);
    kt_json_string(f, r->params[p].name);
    fputc(':', f);
    kt_json_value(f, &r->params[p].values[x->vi[p]]);
  }
  fprintf(f, "},\"status\":\"%s\",\"time_ms\":", kt_status_name(x->status));
  kt_json_number(f, MS(x->time_ns));
  fputs(",\"samples_ms\":[", f);
  for (size_t s = 0; s < x->nsamples; s++) {
    fputs(s ? "," : "", f);
    kt_json_number(f, MS(x->samples_ns[s]));
  }
  fputs("],\"sizes\":[", f);
  for (size_t k = 0; k < x->nkernels; k++) {
    fprintf(f, "%s{\"global\":", k ? "," : "");
    json_sizes(f, x->sizes[k].global, x->sizes[k].dims);
    fputs(",\"local\":", f);
    if (x->sizes[k].local[0]) json_sizes(f, x->sizes[k].local, x->sizes[k].dims);
    else fputs("null", f);
    fputc('}', f);
  }
  fputs("],\"resources\":[", f);
  for (size_t k = 0; x->usage && k < x->nkernels; k++) {
    fputs(k ? "," : "", f);
    json_usage(f, &x->usage[k]);
  }
  const kt_overheads *o = &x->over;
  fprintf(f, "],%s%s%s\"launches\":%zu,\"compile_ms\":", x->cut_short ? "\"cut_short\":true," : "",
          x->infrastructure ? "\"infrastructure\":true," : "", x->crowded ? "\"crowded\":true," : "",
          x->launches);
  kt_json_number(f, MS(x->compile_ns));
  fputs(",\"overheads_ms\":{\"build\":", f);
  kt_json_number(f, MS(o->build));
  const char *names[] = {"data", "validation", "launcher", "wait", "searcher", "framework", "total"};
  double values[] = {o->data,   o->validation, o->launcher, o->wait,
                     o->searcher, o->framework,  o->total};
  for (int i = 0; i < 7; i++) {
    fprintf(f, ",\"%s\":", names[i]);
    kt_json_number(f, MS(values[i]));
  }
  fputc('}', f);
  if (!isnan(x->elapsed_ns)) {
    fputs(",\"elapsed_ms\":", f);
    kt_json_number(f, MS(x->elapsed_ns));
  }
  if (x->waited_ns > 0) {
    fputs(",\"waited_ms\":", f);
    kt_json_number(f, MS(x->waited_ns));
  }
  fputs(",\"error\":", f);
  kt_json_string(f, x->error);
  char stamp[64];
  if (kt_time_format(x->finished, stamp, sizeof stamp) == 0) /* else unknown */
    fprintf(f, ",\"finished\":\"%s\"", stamp);
  json_launched(f, x);
  const char *keys[] = {"build_log", "device_log", "retried", "device"};
  const char *texts[] = {x->build_log, x->device_log, x->retried, x->device};
  for (int i = 0; i < 4; i++)
    if (texts[i]) {
      fprintf(f, ",\"%s\":", keys[i]);
      kt_json_string(f, texts[i]);
    }
  json_metrics(f, x);
  fputc('}', f);
}

void kt_result_write_json(FILE *f, const kt_results *r, const kt_result *x) {
  fputc('{', f);
  json_result(f, r, x);
}

void kt_result_write_json_threads(FILE *f, const kt_results *r, const kt_result *x, int threads) {
  fprintf(f, "{\"device_threads\":%d,", threads);
  json_result(f, r, x);
}

static void json_params(FILE *f, const kt_results *r) {
  fputs("\"parameters\":[", f);
  for (size_t p = 0; p < r->nparams; p++) {
    fputs(p ? "," : "", f);
    fputs("{\"name\":", f);
    kt_json_string(f, r->params[p].name);
    fputs(",\"values\":[", f);
    for (size_t v = 0; v < r->params[p].nvalues; v++) {
      fputs(v ? "," : "", f);
      kt_json_value(f, &r->params[p].values[v]);
    }
    fputs("]}", f);
  }
  fputs("]", f);
}

/* What a results file and a journal share before their results. */
void kt_results_write_json_header(FILE *f, const kt_results *r, const char *format) {
  fprintf(f, "{\"format\":\"%s\",\"version\":1,\"task\":", format);
  kt_json_string(f, r->task);
  fputs(",\"device\":", f);
  kt_json_string(f, r->device);
  fputs(",\"searcher\":", f);
  kt_json_string(f, r->searcher);
  fputs(",\"kernels\":[", f);
  for (size_t k = 0; k < r->nkernels; k++) {
    fputs(k ? "," : "", f);
    kt_json_string(f, r->kernels[k]);
  }
  fputs("],", f);
  json_params(f, r);
  const char *keys[] = {"backend", "driver", "source", "options", "objective"};
  const char *ids[] = {r->backend, r->driver, r->source, r->options, r->objective};
  for (int i = 0; i < 5; i++)
    if (ids[i]) {
      fprintf(f, ",\"%s\":", keys[i]);
      kt_json_string(f, ids[i]);
    }
  if (r->maximize) fputs(",\"maximize\":true", f);
  /* a journal's header: as the tuning began; its lines say a change (journal.c) */
  if (r->device_threads > 0) fprintf(f, ",\"device_threads\":%d", r->device_threads);
  fprintf(f, ",\"space\":{\"valid\":%llu,\"all\":", (unsigned long long)r->space_count);
  kt_json_number(f, r->space_all);
  fputs(",\"pruned\":{", f);
  for (int k = 1; k < KT_PRUNE_END; k++)
    fprintf(f, "%s\"%s\":%llu", k > 1 ? "," : "", kt_prune_name(k),
            (unsigned long long)r->pruned[k - 1]);
  fputs("}}", f);
}

static void json_file(FILE *f, const kt_results *r) {
  kt_results_write_json_header(f, r, "ktlua-results");
  fputs(",\"wall_ms\":", f);
  kt_json_number(f, MS(r->wall_ns));
  fputs(",\"setup_ms\":", f);
  kt_json_number(f, MS(r->setup_ns));
  fputs(",\"device_ms\":", f);
  kt_json_number(f, MS(r->device_ns));
  fputs(",\"stopped\":", f);
  kt_json_string(f, r->stopped);
  fprintf(f, ",\"input_checks\":%zu,\"input_checks_device\":%zu,\"inputs_changed\":%zu,"
          "\"input_check_requests\":%zu,\"input_check_round_trips\":%zu,"
          "\"input_checks_queued\":%zu,\"restores\":%zu,\"device_log\":", r->input_checks,
          r->input_checks_device, r->inputs_changed, r->input_check_requests,
          r->input_check_round_trips, r->input_checks_queued, r->restores);
  kt_json_string(f, r->device_log);
  fputs(",\"inputs_log\":", f);
  kt_json_string(f, r->inputs_log);
  fputs(",\"best\":", f);
  const kt_result *best = kt_results_best(r);
  if (best) fprintf(f, "%llu", (unsigned long long)best->index);
  else fputs("null", f);
  fputs(",\"results\":[\n", f);
  for (size_t i = 0; i < r->n; i++) {
    kt_result_write_json(f, r, &r->items[i]);
    fputs(i + 1 < r->n ? ",\n" : "\n", f);
  }
  fputs("]}\n", f);
}

int kt_results_write_json(const kt_results *r, const char *path, kt_error *err) {
  kt_atomic_file out;
  if (kt_atomic_open(&out, path, err)) return -1;
  json_file(out.f, r);
  return kt_atomic_commit(&out, err);
}
