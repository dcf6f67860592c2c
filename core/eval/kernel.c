/*
** kernel.c: kernel definitions.
*/
#include "kernel.h"

#include "codegen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kt_kernel *kt_kernel_new(const char *name, const char *source, const char *origin,
                         kt_error *err) {
  if (!name[0]) return kt_fail(err, "kernel name is empty"), NULL;
  kt_kernel *k = kt_calloc(1, sizeof *k, err);
  if (!k) return NULL;
  k->refs = 1;
  k->dims = 1;
  k->global[0] = k->global[1] = k->global[2] = 1;
  k->name = kt_strdup(name, err);
  k->source = kt_strdup(source, err);
  k->origin = kt_strdup(origin, err);
  k->options = kt_strdup("", err);
  k->build_options = kt_strdup("", err);
  if (!k->name || !k->source || !k->origin || !k->options || !k->build_options) {
    kt_kernel_release(k);
    return NULL;
  }
  return k;
}

void kt_kernel_retain(kt_kernel *k) {
  if (k) k->refs++;
}

static void release_args(kt_kernel *k) {
  for (size_t i = 0; i < k->nargs; i++) kt_arg_release(k->args[i]);
  free(k->args);
  k->args = NULL;
  k->nargs = 0;
}

void kt_kernel_release(kt_kernel *k) {
  if (!k || --k->refs > 0) return;
  release_args(k);
  free(k->name);
  free(k->source);
  kt_codegen_free(k->gen);
  free(k->origin);
  free(k->options);
  free(k->folder);
  free(k->build_options);
  free(k);
}

/* -I <folder> (the form the OpenCL specification gives; NVRTC takes it
** too) and the options: what the compiler gets. */
static int make_build_options(kt_kernel *k, const char *folder, const char *options,
                              kt_error *err) {
  size_t n = (folder ? strlen(folder) + 4 : 0) + strlen(options) + 1;
  char *s = kt_alloc(n, err);
  if (!s) return -1;
  snprintf(s, n, "%s%s%s%s", folder ? "-I " : "", folder ? folder : "", folder ? " " : "",
           options);
  free(k->build_options);
  k->build_options = s;
  return 0;
}

int kt_kernel_set_options(kt_kernel *k, const char *options, kt_error *err) {
  char *copy = kt_strdup(options, err);
  if (!copy || make_build_options(k, k->folder, copy, err)) {
    free(copy);
    return -1;
  }
  free(k->options);
  k->options = copy;
  return 0;
}

int kt_kernel_set_folder(kt_kernel *k, const char *folder, kt_error *err) {
  if (folder && strpbrk(folder, " \t\r\n\v\f\"'\\")) folder = NULL;
  char *copy = folder ? kt_strdup(folder, err) : NULL;
  if ((folder && !copy) || make_build_options(k, copy, k->options, err)) {
    free(copy);
    return -1;
  }
  free(k->folder);
  k->folder = copy;
  return 0;
}

int kt_kernel_set_sizes(kt_kernel *k, int dims, const size_t *global,
                        const size_t *local, kt_error *err) {
  if (dims < 1 || dims > 3)
    return kt_fail(err, "kernel %s: sizes need 1 to 3 dimensions, got %d", k->name, dims);
  for (int d = 0; d < dims; d++) {
    if (global[d] == 0)
      return kt_fail(err, "kernel %s: global size in dimension %d must be positive",
                     k->name, d + 1);
    if (local && local[d] == 0)
      return kt_fail(err, "kernel %s: local size in dimension %d must be positive",
                     k->name, d + 1);
  }
  k->dims = dims;
  for (int d = 0; d < 3; d++) {
    k->global[d] = d < dims ? global[d] : 1;
    k->local[d] = !local ? 0 : d < dims ? local[d] : 1;
  }
  return 0;
}

int kt_kernel_set_args(kt_kernel *k, kt_arg *const *args, size_t n, kt_error *err) {
  kt_arg **copy = kt_calloc(n, sizeof *copy, err);
  if (!copy) return -1;
  for (size_t i = 0; i < n; i++) {
    copy[i] = args[i];
    kt_arg_retain(args[i]);
  }
  release_args(k);
  k->args = copy;
  k->nargs = n;
  return 0;
}
