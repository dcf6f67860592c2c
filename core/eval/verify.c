/*
** verify.c: are the device copies that no run may change still as the
** tuning found them? A kernel may write through a const pointer or past
** its own buffer, and every later configuration would pay for it. Inputs
** (arrays that no kernel of the task writes) and the pristine copies that
** written arrays are restored from are read back and compared with the
** host contents the tuning kept; what differs is uploaded again and said.
** Every array's device buffer is followed by a zone of a known pattern,
** so that a kernel writing past its end is caught whatever lies beyond
** (another buffer, or the allocator's own records on a CPU device).
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner_int.h"
#include "types.h"

/* Memory to read n bytes back into, kept between checks: a fresh block of
** tens of megabytes each time costs its page faults again. */
static unsigned char *readback(kt_tuner *t, size_t n, kt_error *err) {
  if (n <= t->nreadback) return t->readback;
  free(t->readback);
  t->nreadback = 0;
  if (!(t->readback = kt_alloc(n, err))) return NULL;
  t->nreadback = n;
  return t->readback;
}

/* ---- what changed ---- */

/* "kernel mm, argument 2": the first place the task uses a. */
static void place_of(const kt_task *task, const kt_array *a, char *buf, size_t size) {
  for (size_t ki = 0; ki < task->nkernels; ki++) {
    const kt_kernel *k = task->kernels[ki];
    for (size_t i = 0; i < k->nargs; i++)
      if (k->args[i]->kind == KT_ARG_VECTOR && k->args[i]->array == a) {
        snprintf(buf, size, "kernel %s, argument %zu", k->name, i + 1);
        return;
      }
  }
  snprintf(buf, size, "an array of the launcher");
}

static void format_elem(const kt_type *t, const void *p, char *buf, size_t size) {
  if (t->kind == KT_STRUCT) {
    snprintf(buf, size, "a changed %s", t->name);
    return;
  }
  kt_number v = kt_elem_get(t->kind, p);
  if (v.is_int) snprintf(buf, size, "%" PRId64, v.i);
  else snprintf(buf, size, "%.9g", v.f);
}

/* Describes how got differs from want (elements of a's type). */
static char *describe(const kt_task *task, const kt_array *a, const char *which,
                      const unsigned char *got, const unsigned char *want) {
  size_t es = a->type->size, first = SIZE_MAX, n = 0;
  for (size_t i = 0; i < a->length; i++)
    if (memcmp(got + i * es, want + i * es, es) != 0) {
      if (first == SIZE_MAX) first = i;
      n++;
    }
  char place[160], g[64], w[64], *s = malloc(512);
  if (!s) return NULL;
  place_of(task, a, place, sizeof place);
  format_elem(a->type, got + first * es, g, sizeof g);
  format_elem(a->type, want + first * es, w, sizeof w);
  snprintf(s, 512, "%s (%s %s[%zu]): %zu of %zu elements changed, the first at element %zu "
           "(%s instead of %s)", place, which, a->type->name, a->length, n, a->length, first,
           g, w);
  return s;
}

/* Compares buf's contents with want; 1 when they differ (*what says how). */
static int check_buffer(kt_tuner *t, const kt_task *task, devarray *d, kt_bbuf *buf,
                        const char *which, const void *want, char **what, kt_error *err) {
  size_t bytes = kt_array_bytes(d->array);
  int same = t->be->buffer_equal ? t->be->buffer_equal(t->ctx, 0, buf, 0, bytes, want, err) : 0;
  if (same != 0) return same < 0 ? -1 : 0; /* else read again, to say what changed */
  unsigned char *got = readback(t, bytes ? bytes : 1, err);
  if (!got) return -1;
  int rc = t->be->buffer_read(t->ctx, 0, buf, 0, bytes, got, true, err);
  if (rc == 0 && memcmp(got, want, bytes) != 0) {
    char *s = describe(task, d->array, which, got, want);
    if (*what) kt_log_append(what, "; ");
    kt_log_append(what, s ? s : which);
    free(s);
    rc = 1;
  }
  return rc;
}

static const char *role(const devarray *d) {
  return d->access == KT_READ ? "input" : d->access == KT_WRITE ? "output" : "in/out";
}

/* Whether a kernel wrote into the zone past d's buffer; refills it. */
static int check_zone(kt_tuner *t, const kt_task *task, devarray *d, char **what,
                      kt_error *err) {
  size_t bytes = kt_array_bytes(d->array), n = 0, first = 0;
  const unsigned char *want = tuner_zone_pattern(t, d->zone, err);
  int same = want && t->be->buffer_equal
                 ? t->be->buffer_equal(t->ctx, 0, d->buf, bytes, d->zone, want, err) : 0;
  if (!want || same != 0) return !want || same < 0 ? -1 : 0;
  unsigned char *got = readback(t, d->zone, err);
  int rc = got ? t->be->buffer_read(t->ctx, 0, d->buf, bytes, d->zone, got, true, err) : -1;
  if (rc == 0 && memcmp(got, want, d->zone) != 0)
    for (size_t i = 0; i < d->zone; i++)
      if (got[i] != want[i] && n++ == 0) first = i;
  if (rc || n == 0) return rc;
  char place[160], s[512];
  place_of(task, d->array, place, sizeof place);
  snprintf(s, sizeof s, "%s (%s %s[%zu]): written past its end: %zu of the %zu bytes after it "
           "changed, the first at byte %zu past the end", place, role(d), d->array->type->name,
           d->array->length, n, d->zone, first);
  if (*what) kt_log_append(what, "; ");
  kt_log_append(what, s);
  return tuner_fill_zone(t, d, err) ? -1 : 1;
}

/* Checks one array's unchangeable copies and its zone; uploads it again
** if changed. */
static int check_array(kt_tuner *t, const kt_task *task, devarray *d, char **what,
                       kt_error *err) {
  int changed = d->zone ? check_zone(t, task, d, what, err) : 0;
  const hostcopy *h = tuner_hostcopy(t, d->array);
  if (changed < 0 || !h) return changed; /* not the task's: nothing says what it should hold */
  if (d->pristine) {
    int rc = check_buffer(t, task, d, d->pristine, "kept copy of", h->data, what, err);
    changed = rc < 0 ? -1 : changed | rc;
  }
  if (changed >= 0 && !(d->access & KT_WRITE) && !d->dirty) {
    int rc = check_buffer(t, task, d, d->buf, "input", h->data, what, err);
    changed = rc < 0 ? -1 : changed | rc;
  }
  if (changed > 0 && tuner_upload_array(t, d, err)) return -1;
  return changed;
}

int tuner_verify(kt_tuner *t, const kt_task *task, char **what, kt_error *err) {
  int changed = 0;
  *what = NULL;
  kt_fault fault;
  t->checked_on_device = t->checked_queued = false;
  /* Runs still in flight may yet write. */
  if (t->be->finish(t->ctx, -1, &fault, err)) return -1;
  int intact = tuner_unchanged_check(t, err); /* 1: the host need not look at what it covers */
  for (size_t i = 0; i < t->narrays; i++) {
    if (intact > 0 && tuner_unchanged_covers(t, &t->arrays[i])) continue;
    int rc = intact < 0 ? -1 : check_array(t, task, &t->arrays[i], what, err);
    if (rc < 0) {
      free(*what);
      *what = NULL;
      return kt_fail_prefix(err, "verifying the inputs: ");
    }
    changed |= rc;
  }
  if (changed && t->be->finish(t->ctx, 0, &fault, err)) return -1;
  return changed;
}
