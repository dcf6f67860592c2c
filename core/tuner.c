/*
** tuner.c: an opened device and the device copies of arrays.
*/
#include <stdlib.h>
#include <string.h>

#include "tuner_int.h"

#define BUILD_CACHE_ENTRIES 64

/* Leaves both or neither. */
static int open_context(kt_tuner *t, kt_error *err) {
  if (!(t->ctx = t->be->open(&t->device, err))) return -1;
  if (!(t->cache = kt_build_cache_new(t->be, t->ctx, BUILD_CACHE_ENTRIES, err))) {
    t->be->close(t->ctx);
    t->ctx = NULL;
    return -1;
  }
  return 0;
}

kt_tuner *kt_tuner_new(const kt_device_info *dev, kt_error *err) {
  kt_tuner *t = kt_calloc(1, sizeof *t, err);
  if (!t) return NULL;
  if (kt_device_copy(&t->device, dev, err)) {
    free(t);
    return NULL;
  }
  t->be = dev->backend;
  if (open_context(t, err)) {
    kt_tuner_free(t);
    return NULL;
  }
  return t;
}

static void devarray_clear(kt_tuner *t, devarray *d) {
  if (d->buf) t->be->buffer_free(t->ctx, d->buf);
  if (d->pristine) t->be->buffer_free(t->ctx, d->pristine);
  kt_array_release(d->array);
  memset(d, 0, sizeof *d);
}

/* Frees every object of the context, then the context. */
static void close_context(kt_tuner *t) {
  for (size_t i = 0; i < t->narrays; i++) devarray_clear(t, &t->arrays[i]);
  t->narrays = 0;
  kt_build_cache_free(t->cache);
  t->cache = NULL;
  if (t->ctx) t->be->close(t->ctx);
  t->ctx = NULL;
}

void kt_tuner_free(kt_tuner *t) {
  if (!t) return;
  close_context(t);
  free(t->arrays);
  kt_device_clear(&t->device);
  free(t);
}

int tuner_recover(kt_tuner *t, const kt_task *task, kt_error *err) {
  close_context(t);
  if (open_context(t, err) || tuner_upload(t, task, NULL, err))
    return kt_fail_prefix(err, "reopening %s: ", t->device.id);
  return 0;
}

const kt_device_info *kt_tuner_device(const kt_tuner *t) { return &t->device; }

kt_build_stats kt_tuner_build_stats(const kt_tuner *t) {
  return t->cache ? kt_build_cache_stats(t->cache) : (kt_build_stats){0, 0, 0};
}

devarray *tuner_devarray(kt_tuner *t, const kt_array *a) {
  for (size_t i = 0; i < t->narrays; i++)
    if (t->arrays[i].array == a) return &t->arrays[i];
  return NULL;
}

/* The distinct arrays of a task's kernels, each with the union of its
** access modes (an array that one kernel reads and another writes is
** written) and the placement of its first use. */
typedef struct array_use {
  kt_array *array;
  kt_access access;
  kt_placement place;
} array_use;

static array_use *collect_uses(const kt_task *task, size_t *n, kt_error *err) {
  size_t cap = 0;
  array_use *uses = NULL;
  *n = 0;
  for (size_t ki = 0; ki < task->nkernels; ki++) {
    const kt_kernel *k = task->kernels[ki];
    for (size_t i = 0; i < k->nargs; i++) {
      const kt_arg *a = k->args[i];
      if (a->kind != KT_ARG_VECTOR) continue;
      size_t u = 0;
      while (u < *n && uses[u].array != a->array) u++;
      if (u < *n) {
        uses[u].access |= a->access;
        continue;
      }
      if (kt_grow(&uses, &cap, *n + 1, sizeof *uses, err)) {
        free(uses);
        return NULL;
      }
      uses[(*n)++] = (array_use){a->array, a->access, a->placement};
    }
  }
  if (!uses) uses = kt_calloc(1, sizeof *uses, err);
  return uses;
}

int tuner_each_array(const kt_task *task, int (*fn)(kt_array *a, kt_access access,
                     kt_placement place, void *ud), void *ud, kt_error *err) {
  size_t n;
  array_use *uses = collect_uses(task, &n, err);
  if (!uses) return -1;
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++)
    rc = fn(uses[i].array, uses[i].access, uses[i].place, ud);
  free(uses);
  return rc;
}

typedef struct bind_ctx {
  kt_tuner *t;
  kt_error *err;
} bind_ctx;

static int bind_array(kt_array *a, kt_access access, kt_placement place, void *ud) {
  bind_ctx *b = ud;
  kt_tuner *t = b->t;
  devarray *d = tuner_devarray(t, a);
  if (d && (d->access | access) == d->access && d->place == place) return 0;
  if (d) {
    access |= d->access;
    devarray_clear(t, d);
  } else {
    if (kt_grow(&t->arrays, &t->caparrays, t->narrays + 1, sizeof *t->arrays, b->err))
      return -1;
    d = &t->arrays[t->narrays++];
    memset(d, 0, sizeof *d);
  }
  bool writes = access & KT_WRITE;
  size_t bytes = kt_array_bytes(a);
  d->array = a;
  d->access = access;
  d->place = place;
  kt_array_retain(a);
  if (!(d->buf = t->be->buffer_new(t->ctx, bytes, place, access, b->err)) ||
      (writes && !(d->pristine = t->be->buffer_new(t->ctx, bytes, KT_PLACE_DEVICE,
                                                   KT_READ_WRITE, b->err))))
    return kt_fail_prefix(b->err, "device memory for %s[%zu]: ", a->type->name, a->length);
  return 0;
}

int tuner_bind(kt_tuner *t, const kt_task *task, kt_error *err) {
  bind_ctx b = {t, err};
  return tuner_each_array(task, bind_array, &b, err);
}

static int upload_array(kt_array *a, kt_access access, kt_placement place, void *ud) {
  (void)access, (void)place;
  bind_ctx *b = ud;
  kt_tuner *t = b->t;
  devarray *d = tuner_devarray(t, a);
  size_t bytes = kt_array_bytes(a);
  kt_bbuf *first = d->pristine ? d->pristine : d->buf;
  if (t->be->buffer_write(t->ctx, 0, first, 0, bytes, a->data, true, b->err)) return -1;
  if (d->pristine && t->be->buffer_copy(t->ctx, 0, d->buf, 0, d->pristine, 0, bytes, b->err))
    return -1;
  return 0;
}

static int finish_queue(kt_tuner *t, kt_error *err) {
  kt_fault fault;
  return t->be->finish(t->ctx, 0, &fault, err);
}

int tuner_upload(kt_tuner *t, const kt_task *task, double *ns, kt_error *err) {
  if (!t->ctx) return kt_fail(err, "%s: the device's context was lost and could not be reopened",
                              t->device.id);
  int64_t t0 = kt_now_ns();
  bind_ctx b = {t, err};
  if (tuner_bind(t, task, err) || tuner_each_array(task, upload_array, &b, err) ||
      finish_queue(t, err))
    return -1;
  if (ns) *ns += (double)(kt_now_ns() - t0);
  return 0;
}

static int restore_array(kt_array *a, kt_access access, kt_placement place, void *ud) {
  (void)access, (void)place;
  bind_ctx *b = ud;
  devarray *d = tuner_devarray(b->t, a);
  if (!d->pristine) return 0;
  return b->t->be->buffer_copy(b->t->ctx, 0, d->buf, 0, d->pristine, 0, kt_array_bytes(a),
                               b->err);
}

int tuner_restore(kt_tuner *t, const kt_task *task, kt_error *err) {
  bind_ctx b = {t, err};
  return tuner_each_array(task, restore_array, &b, err);
}

int tuner_read(kt_tuner *t, const kt_array *a, kt_array *dst, kt_error *err) {
  devarray *d = tuner_devarray(t, a);
  if (!d) return kt_fail(err, "the array is not used by any kernel of this task");
  return t->be->buffer_read(t->ctx, 0, d->buf, 0, kt_array_bytes(a), dst->data, true, err);
}
