/*
** tuner_int.h: what tuner.c, run.c and tune.c share and nobody else sees.
*/
#ifndef KT_TUNER_INT_H
#define KT_TUNER_INT_H

#include "run.h"
#include "tuner.h"

/* The device copy of a host array. Arrays that a kernel writes keep a
** pristine device copy from which they are restored before every run. */
typedef struct devarray {
  kt_array *array;
  kt_placement place;
  kt_access access;
  kt_bbuf *buf, *pristine;
} devarray;

struct kt_tuner {
  kt_device_info device;
  const kt_backend *be;
  kt_bctx *ctx;
  kt_build_cache *cache;
  devarray *arrays;
  size_t narrays, caparrays;
};

/* Makes sure every array of the task has its device buffers. */
int tuner_bind(kt_tuner *t, const kt_task *task, kt_error *err);
devarray *tuner_devarray(kt_tuner *t, const kt_array *a);
/* Copies every array of the task from the host to the device (and to the
** pristine copies); counts the time into *ns. */
int tuner_upload(kt_tuner *t, const kt_task *task, double *ns, kt_error *err);
/* Restores the arrays the task writes from their pristine copies. */
int tuner_restore(kt_tuner *t, const kt_task *task, kt_error *err);
/* Reads an array's device contents into dst (same shape). */
int tuner_read(kt_tuner *t, const kt_array *a, kt_array *dst, kt_error *err);
/* After a fault that took the context with it (KT_FAULT_STICKY): frees the
** program cache and every device buffer, closes the context, opens a fresh
** one, and uploads the task's arrays again from their host contents, which
** a tuning leaves as they were at its start. Other tasks' arrays are bound
** again when they are next uploaded. */
int tuner_recover(kt_tuner *t, const kt_task *task, kt_error *err);
/* Calls fn for every distinct array the task's kernels use. */
int tuner_each_array(const kt_task *task, int (*fn)(kt_array *a, kt_access access,
                     kt_placement place, void *ud), void *ud, kt_error *err);

#endif
