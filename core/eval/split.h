/*
** split.h: one configuration of each of several tasks run at once, each on
** its own isolated tuner (one kernel split across devices: stdlib
** ktlua.split shares out the range and combines the outputs).
*/
#ifndef KT_SPLIT_H
#define KT_SPLIT_H

#include <stdbool.h>
#include <stdint.h>

#include "task.h"
#include "tuner.h"

typedef struct kt_split_part {
  kt_tuner *tuner;
  kt_task *task;
  const uint32_t *vi; /* the configuration, value index of every parameter */
  /* What the run gave: */
  kt_status status;
  char *error;        /* why, when status is not ok (malloc'd; the caller frees it) */
  double kernel_ns;   /* the launches' device time */
  int64_t start_ns;   /* kt_now_ns() when the parts were let go together ... */
  int64_t end_ns;     /* ... and when this part's execution had ended */
} kt_split_part;

/* Runs every part once, at the same time: each thread uploads what changed
** and builds its kernel, then all wait for each other and execute together
** (so that their kernels overlap), then each reads its outputs back into
** its arrays. Refuses a tuner or task given twice or in use, an array two
** parts share, a tuner that is not isolated, and tasks with launchers,
** source generators or modifier functions (they would call Lua from another
** thread). A part whose kernel failed has its status; a fatal error of a
** part is the error. *interrupted says whether Ctrl-C came meanwhile. */
int kt_split_run(kt_split_part *parts, size_t n, int64_t limit_ns, bool *interrupted,
                 kt_error *err);

#endif
