/*
** run_buffers.c: the device buffers of an execution as it sees them (its
** launcher's resized ones, else the tuner's copies), and the counts of
** transfers between them and host arrays (run_int.h). Below run.c and
** run_async.c, which both transfer through them.
*/
#include <string.h>

#include "run_int.h"
#include "tuner_int.h"

kt_run_buffer *run_resized(kt_run *run, const kt_array *a) {
  for (size_t i = 0; i < run->nbuffers; i++)
    if (run->buffers[i].array == a) return &run->buffers[i];
  return NULL;
}

kt_bbuf *run_buffer_of(kt_run *run, const kt_array *a, kt_access access, kt_placement place,
                       kt_error *err) {
  kt_run_buffer *rb = run_resized(run, a);
  if (rb) return rb->buf;
  devarray *d = tuner_devarray(run->tuner, a);
  if (!d && !(d = tuner_bind_array(run->tuner, (kt_array *)a, access, place, err))) return NULL;
  return d->buf;
}

kt_bbuf *run_changing(kt_run *run, const kt_array *a, int queue, kt_error *err) {
  kt_run_buffer *rb = run_resized(run, a);
  if (rb) return rb->buf;
  if (!run_buffer_of(run, a, KT_READ_WRITE, KT_PLACE_DEVICE, err)) return NULL;
  devarray *d = tuner_devarray(run->tuner, a);
  return tuner_protect(run->tuner, d, queue, err) ? NULL : d->buf;
}

size_t kt_run_length(kt_run *run, const kt_array *a) {
  kt_run_buffer *rb = run_resized(run, a);
  return rb ? rb->length : a->length;
}

int run_check_count(const char *what, size_t count, size_t have, kt_error *err) {
  if (count <= have) return 0;
  return kt_fail(err, "%s: %zu elements asked of a buffer of %zu", what, count, have);
}

int run_read_count(kt_run *run, const kt_array *a, const kt_array *dst, size_t *count,
                   kt_error *err) {
  size_t have = kt_run_length(run, a);
  if (!*count) *count = have < dst->length ? have : dst->length;
  if (dst->type->size != a->type->size)
    return kt_fail(err, "read: %s elements into a %s array", a->type->name, dst->type->name);
  return run_check_count("read", *count, have, err) ||
                 run_check_count("read", *count, dst->length, err)
             ? -1
             : 0;
}

int run_write_count(kt_run *run, const kt_array *a, const kt_array *src, size_t *count,
                    kt_error *err) {
  size_t have = kt_run_length(run, a);
  *count = src->length < have ? src->length : have;
  if (src->type->size != a->type->size)
    return kt_fail(err, "write: %s elements into a %s buffer", src->type->name, a->type->name);
  return 0;
}
