/*
** tune_vadd.c: ktlua's core embedded in a C program. `tune` tunes the
** work-group size of a vector addition at two problem sizes and keeps the
** best configuration of each in a database (kt.db); `run N`, at run time,
** takes the stored configuration of the size nearest N and runs the kernel
** with it, checking the sums.
**
**   cc -std=c11 -o tune_vadd tune_vadd.c $(pkg-config --cflags --libs ktlua)
**   ./tune_vadd DB tune [DEVICE]      then    ./tune_vadd DB run N [DEVICE]
**
** DEVICE: an id (opencl:0:0), a backend or a type (cpu, gpu); default
** "opencl" (the kernel is OpenCL C). The tuner is isolated: its device is
** driven from a child process that ktlua starts, so that a kernel that
** hangs or crashes costs one configuration, not the program.
*/
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ktlua/db.h>
#include <ktlua/json.h>
#include <ktlua/json_read.h>
#include <ktlua/tuner.h>

static const char SOURCE[] =
    "__kernel void vadd(__global const float *a, __global const float *b,\n"
    "                   __global float *c, int n) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

static const int64_t WG[] = {32, 64, 128, 256};
#define NWG (sizeof WG / sizeof WG[0])

/* The task for n floats: c = a + b, with WG as the work-group size. */
typedef struct problem {
  kt_array *a, *b, *c;
  kt_task *task;
} problem;

/* The reference: what c must hold. */
static int expected_sums(kt_array *expected, void *ud, kt_error *err) {
  (void)err;
  const problem *p = ud;
  float *c = expected->data;
  const float *a = p->a->data, *b = p->b->data;
  for (size_t i = 0; i < expected->length; i++) c[i] = a[i] + b[i];
  return 0;
}

static void problem_free(problem *p) {
  kt_task_release(p->task);
  kt_array_release(p->a);
  kt_array_release(p->b);
  kt_array_release(p->c);
}

static int add_args(problem *p, kt_kernel *k, int n, kt_error *err) {
  kt_arg *args[4] = {kt_arg_vector(p->a, KT_READ, KT_PLACE_DEVICE, err),
                     kt_arg_vector(p->b, KT_READ, KT_PLACE_DEVICE, err),
                     kt_arg_vector(p->c, KT_WRITE, KT_PLACE_DEVICE, err),
                     kt_arg_scalar(kt_type_scalar(KT_INT), &n, err)};
  int rc = args[0] && args[1] && args[2] && args[3] ? kt_kernel_set_args(k, args, 4, err) : -1;
  for (int i = 0; i < 4; i++) kt_arg_release(args[i]);
  return rc;
}

static int add_space(problem *p, kt_error *err) {
  kt_value values[NWG];
  for (size_t i = 0; i < NWG; i++) values[i] = (kt_value){.type = KT_VINT, .u.i = WG[i]};
  if (kt_space_add_param(p->task->space, "WG", values, NWG, err)) return -1;
  kt_modifier group = {.kernel = -1, .local = true, .dim = 0, .op = KT_MOD_MUL, .param = 0};
  kt_reference ref = {.target = p->c, .kind = KT_REF_FN, .fn = expected_sums,
                      .fn_cb = {.ud = p}, .method = KT_CMP_ABSOLUTE, .tolerance = 1e-6};
  kt_array_retain(p->c); /* the reference holds it too */
  if (kt_task_add_modifier(p->task, &group, err)) return -1;
  return kt_task_add_reference(p->task, &ref, err);
}

static int problem_new(problem *p, int n, kt_error *err) {
  *p = (problem){0};
  const kt_type *f = kt_type_scalar(KT_FLOAT);
  p->a = kt_array_new(f, (size_t)n, err);
  p->b = p->a ? kt_array_new(f, (size_t)n, err) : NULL;
  p->c = p->b ? kt_array_new(f, (size_t)n, err) : NULL;
  if (!p->c) return -1;
  kt_array_random(p->a, 1, 0, 1);
  kt_array_random(p->b, 2, 0, 1);
  size_t global = (size_t)n, local = 1;
  kt_kernel *k = kt_kernel_new("vadd", SOURCE, "tune_vadd.c", err);
  int rc = k && !kt_kernel_set_sizes(k, 1, &global, &local, err) && !add_args(p, k, n, err) ? 0 : -1;
  if (k) k->round_global = true; /* any n: whole work-groups, the kernel skips the rest */
  if (rc == 0) rc = (p->task = kt_task_new("vadd", &k, 1, err)) ? add_space(p, err) : -1;
  kt_kernel_release(k);
  return rc;
}

/* ---- tuning, and keeping the best ---- */

static void size_json(char *buf, size_t size, int n) { snprintf(buf, size, "{\"n\":%d}", n); }

/* The configuration of r as JSON ({"WG":64}); malloc'd. */
static char *config_json(const kt_results *r, const kt_result *x) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  fputc('{', f);
  for (size_t i = 0; i < r->nparams; i++) {
    fputs(i ? "," : "", f);
    kt_json_string(f, r->params[i].name);
    fputc(':', f);
    kt_json_value(f, &r->params[i].values[x->vi[i]]);
  }
  fputc('}', f);
  fclose(f);
  return text;
}

static int store_best(kt_db *db, const kt_results *r, int n, kt_error *err) {
  const kt_result *best = kt_results_best(r);
  if (!best) return kt_fail(err, "no configuration of vadd ran correctly at n = %d", n);
  char size[64], date[32];
  size_json(size, sizeof size, n);
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  char *config = config_json(r, best);
  if (!config) return kt_fail(err, "out of memory");
  kt_db_row row = {.kernel = r->task, .device = r->device, .backend = r->backend, .size = size,
                   .objective = r->objective, .source = r->source, .options = r->options,
                   .driver = r->driver, .version = "tune_vadd.c", .date = date, .rank = 1,
                   .config = config, .time_ms = best->time_ns / 1e6};
  int rc = kt_db_store(db, &row, 1, err);
  if (rc == 0) printf("n = %d: best %s, %.4f ms, kept in %s\n", n, config, row.time_ms, kt_db_path(db));
  free(config);
  return rc;
}

static int tune_size(kt_tuner *t, kt_db *db, int n, kt_error *err) {
  problem p;
  kt_searcher *s = NULL;
  kt_results *r = NULL;
  int rc = problem_new(&p, n, err);
  if (rc == 0 && !(s = kt_searcher_new("exhaustive", &(kt_search_opts){0}, err))) rc = -1;
  if (rc == 0) {
    kt_tune_opts o = {.searcher = s, .repeat = KT_REPEAT_DEFAULT};
    rc = kt_tune(t, p.task, &o, &r, err);
  }
  if (rc == 0) rc = store_best(db, r, n, err);
  kt_results_release(r);
  kt_searcher_free(s);
  problem_free(&p);
  return rc;
}

/* ---- at run time: the stored configuration of the nearest size ---- */

/* The value index of the stored configuration's WG. */
static int config_of(const char *json, uint32_t *vi, kt_error *err) {
  kt_jdoc *d = kt_json_parse(json, strlen(json), err);
  const kt_jvalue *wg = d ? kt_json_get_type(kt_json_root(d), "WG", KT_JNUMBER) : NULL;
  int rc = d ? kt_fail(err, "the stored configuration %s has no WG", json) : -1;
  for (size_t i = 0; wg && wg->integer && i < NWG; i++)
    if (WG[i] == wg->u.num.i) vi[0] = (uint32_t)i, rc = 0;
  kt_json_free(d);
  return rc;
}

static int run_nearest(kt_tuner *t, kt_db *db, int n, kt_error *err) {
  kt_db_row *rows = NULL;
  size_t nrows = 0;
  char size[64];
  size_json(size, sizeof size, n);
  const char *device = kt_device_string(kt_tuner_device(t), "name");
  kt_db_filter f = {.kernel = "vadd", .device = device, .objective = "kernel", .best_only = true};
  if (kt_db_query(db, &f, &rows, &nrows, err)) return -1;
  double distance = 0;
  long at = kt_db_nearest(rows, nrows, size, &distance, err);
  problem p;
  uint32_t vi[1];
  kt_results *r = NULL;
  kt_result *res = NULL;
  int rc = at >= 0 ? 0 : kt_fail(err, "no configuration of vadd on %s is stored", device);
  if (rc == 0) rc = problem_new(&p, n, err);
  if (rc == 0 && (rc = config_of(rows[at].config, vi, err)) == 0 &&
      !((r = kt_results_for_task(p.task, device, err)) && (res = kt_results_add(r, 0, vi, err))))
    rc = -1;
  if (rc == 0) rc = kt_tuner_run_once(t, p.task, vi, 0, res, err);
  if (rc == 0)
    printf("n = %d: %s from the size %s (%s), %s, %.4f ms\n", n, rows[at].config, rows[at].size,
           distance == 0 ? "exact" : "nearest", kt_status_name(res->status), res->time_ns / 1e6);
  if (rc == 0 && res->status != KT_OK)
    rc = kt_fail(err, "vadd did not run correctly: %s", res->error ? res->error : "");
  kt_results_release(r);
  if (at >= 0) problem_free(&p);
  kt_db_rows_free(rows, nrows);
  return rc;
}

static int usage(void) {
  fprintf(stderr, "usage: tune_vadd DB tune [DEVICE] | tune_vadd DB run N [DEVICE]\n");
  return 2;
}

int main(int argc, char **argv) {
  bool tune = argc >= 3 && strcmp(argv[2], "tune") == 0;
  bool run = argc >= 4 && strcmp(argv[2], "run") == 0;
  int n = run ? atoi(argv[3]) : 0;
  if ((!tune && !run) || (run && n <= 0)) return usage();
  const char *which = argc > (tune ? 3 : 4) ? argv[tune ? 3 : 4] : "opencl";
  kt_error err;
  kt_device_info *list = NULL;
  size_t count = 0;
  kt_tuner *t = NULL;
  kt_db *db = NULL;
  int found = kt_devices(&list, &count, NULL, 0, &err) ? -1 : kt_device_find(list, count, which, &err);
  if (found >= 0) t = kt_tuner_new(&list[found], 0, true, &err);
  if (t) db = kt_db_open(argv[1], 5000, false, &err);
  int rc = db ? 0 : -1;
  static const int sizes[] = {1 << 12, 1 << 18};
  if (rc == 0 && tune) printf("tuning vadd on %s (%s)\n", list[found].id, kt_device_string(&list[found], "name"));
  for (size_t i = 0; i < 2 && tune && rc == 0; i++) rc = tune_size(t, db, sizes[i], &err);
  if (rc == 0 && run) rc = run_nearest(t, db, n, &err);
  if (rc) fprintf(stderr, "tune_vadd: %s\n", err.msg);
  kt_db_close(db);
  kt_tuner_free(t);
  kt_devices_free(list, count);
  return rc ? 1 : 0;
}
