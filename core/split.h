/*
** split.h: one configuration of each of several tasks run at once, each on
** its own isolated tuner (one kernel split across devices: stdlib
** ktlua.split shares out the range and combines the outputs).
*/
#ifndef KT_SPLIT_H
#define KT_SPLIT_H

#include <stdbool.h>
#include <stdint.h>

#include "result.h"
#include "task.h"
#include "tuner.h"

typedef struct kt_split_part {
  kt_tuner *tuner;
  kt_task *task;
  const uint32_t *vi; /* the configuration, value index of every parameter */
  kt_result *out;     /* what the run gave (as kt_tuner_run_once fills it) */
} kt_split_part;

/* Runs every part once, at the same time, each as kt_tuner_run_once does
** (its arrays uploaded from the host, its outputs read back into them).
** Refuses a tuner or task given twice, an array two parts share, a tuner
** that is not isolated, and tasks with launchers, source generators or
** modifier functions (they would call Lua from another thread). A part
** that fails to run is the error; one whose kernel failed has the status
** in its result. *interrupted says whether Ctrl-C came meanwhile. */
int kt_split_run(const kt_split_part *parts, size_t n, int64_t limit_ns, bool *interrupted,
                 kt_error *err);

#endif
