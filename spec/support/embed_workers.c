/*
** embed_workers.c: a C program that embeds the core (libktlua.a) and tunes
** with compiler processes (spec/embed_spec.lua). Before tuning it prints
** each compiler process it finds among its children, as
** "worker: EXE ARG drivers=yes|no" (drivers: whether an OpenCL driver
** (libpocl) or NVRTC is mapped in it), so that the spec sees fresh images
** of the ktlua executable, not forks of this program; then each
** configuration's status, the summary's compile workers and the device
** log.
**
**   embed_workers DEVICE WORKERS
*/
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ktlua/tuner.h>

static const char SOURCE[] =
    "__kernel void k(__global float *c) { c[get_global_id(0)] = SCALE; }\n";

/* Whether /proc/PID/maps names a compiler's or driver's library. */
static int drivers_mapped(const char *pid) {
  char path[64], line[4096];
  snprintf(path, sizeof path, "/proc/%s/maps", pid);
  FILE *f = fopen(path, "r");
  int found = 0;
  while (f && fgets(line, sizeof line, f))
    if (strstr(line, "libpocl") || strstr(line, "libnvrtc") || strstr(line, "libcuda")) found = 1;
  if (f) fclose(f);
  return found;
}

static void print_worker(const char *pid) {
  char path[64], exe[4096], cmd[4096];
  snprintf(path, sizeof path, "/proc/%s/exe", pid);
  ssize_t n = readlink(path, exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = '\0';
  snprintf(path, sizeof path, "/proc/%s/cmdline", pid);
  FILE *f = fopen(path, "r");
  size_t len = f ? fread(cmd, 1, sizeof cmd - 1, f) : 0;
  if (f) fclose(f);
  cmd[len] = '\0';
  const char *arg = strlen(cmd) + 1 < len ? cmd + strlen(cmd) + 1 : "";
  if (strcmp(arg, "--compile-worker") == 0)
    printf("worker: %s %s drivers=%s\n", exe, arg, drivers_mapped(pid) ? "yes" : "no");
}

/* This process's children, from every thread's list (the tuner starts its
** compiler processes from the compile thread that first needs one). */
static void print_workers(void) {
  char path[300], pid[32];
  snprintf(path, sizeof path, "/proc/%d/task", (int)getpid());
  DIR *tasks = opendir(path);
  for (struct dirent *e; tasks && (e = readdir(tasks));) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "/proc/%d/task/%s/children", (int)getpid(), e->d_name);
    FILE *f = fopen(path, "r");
    while (f && fscanf(f, "%31s", pid) == 1) print_worker(pid);
    if (f) fclose(f);
  }
  if (tasks) closedir(tasks);
}

static kt_task *make_task(kt_array *c, kt_error *err) {
  size_t global = c->length, local = 1;
  kt_kernel *k = kt_kernel_new("k", SOURCE, "embed_workers.c", err);
  kt_arg *arg = k ? kt_arg_vector(c, KT_WRITE, KT_PLACE_DEVICE, err) : NULL;
  kt_task *task = NULL;
  if (arg && !kt_kernel_set_sizes(k, 1, &global, &local, err) &&
      !kt_kernel_set_args(k, &arg, 1, err))
    task = kt_task_new("k", &k, 1, err);
  kt_value values[3] = {{.type = KT_VINT, .u.i = 1}, {.type = KT_VINT, .u.i = 2},
                        {.type = KT_VINT, .u.i = 3}};
  if (task && kt_space_add_param(task->space, "SCALE", values, 3, err)) {
    kt_task_release(task);
    task = NULL;
  }
  kt_arg_release(arg);
  kt_kernel_release(k);
  return task;
}

static int tune(kt_tuner *t, kt_error *err) {
  kt_array *c = kt_array_new(kt_type_scalar(KT_FLOAT), 16, err);
  kt_task *task = c ? make_task(c, err) : NULL;
  kt_searcher *s = task ? kt_searcher_new("exhaustive", &(kt_search_opts){0}, err) : NULL;
  kt_results *r = NULL;
  int rc = s ? 0 : -1;
  if (rc == 0) {
    kt_tune_opts o = {.searcher = s, .repeat = {.fixed = 1}};
    rc = kt_tune(t, task, &o, &r, err);
  }
  for (size_t i = 0; rc == 0 && i < r->n; i++) printf("%s\n", kt_status_name(r->items[i].status));
  if (rc == 0) printf("compile workers: %zu\n%s", r->compile_workers, r->device_log ? r->device_log : "");
  kt_results_release(r);
  kt_searcher_free(s);
  kt_task_release(task);
  kt_array_release(c);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 3) return fprintf(stderr, "usage: embed_workers DEVICE WORKERS\n"), 2;
  kt_error err;
  kt_device_info *list = NULL;
  size_t count = 0;
  kt_tuner *t = NULL;
  int found = kt_devices(&list, &count, NULL, 0, &err) ? -1 : kt_device_find(list, count, argv[1], &err);
  if (found >= 0) t = kt_tuner_new(&list[found], 1, true, &err);
  int rc = t ? kt_tuner_set_compile_workers(t, atoi(argv[2]), &err) : -1;
  if (rc == 0) kt_tuner_set_disk_cache(t, false);
  if (rc == 0) rc = tune(t, &err);
  if (rc == 0) print_workers();
  if (rc) fprintf(stderr, "embed_workers: %s\n", err.msg);
  kt_tuner_free(t);
  kt_devices_free(list, count);
  return rc ? 1 : 0;
}
