/*
** run.h: one configuration made ready to run (its kernels built, sizes
** and local-memory sizes worked out) and the executions of it.
**
** A launcher (a C or Lua function per configuration) drives an execution
** through the kt_run_* calls below. What it changes (argument values and
** order, local-memory sizes, buffer sizes, buffer contents) belongs to the
** execution and is undone before the next one, so every execution, and
** every configuration, starts from the same state.
*/
#ifndef KT_RUN_H
#define KT_RUN_H

#include "result.h"
#include "tuner.h"

typedef struct kt_run_kernel {
  kt_bkernel *bk;         /* NULL once a fault has closed its context */
  kt_sizes sizes;         /* under the configuration */
  kt_kernel_usage usage;
  kt_arg **args;          /* the current argument list (retained) */
  size_t nargs, capargs;
} kt_run_kernel;

/* A value the launcher set for this execution: a scalar's bytes or a
** local-memory size; also the local-memory sizes of the configuration. */
typedef struct kt_run_value {
  const kt_arg *arg;
  void *bytes;  /* scalar */
  size_t size;  /* scalar bytes or local-memory bytes */
} kt_run_value;

/* A device buffer the launcher resized for this execution. */
typedef struct kt_run_buffer {
  const kt_array *array;
  kt_bbuf *buf;
  size_t length; /* elements */
} kt_run_buffer;

struct kt_run {
  kt_tuner *tuner;
  kt_task *task;
  kt_config cfg;
  kt_run_kernel *kernels;  /* one per kernel of the task */
  kt_run_value *locals;    /* local-memory sizes under the configuration */
  size_t nlocals, caplocals;
  kt_run_value *values;    /* set by the launcher during this execution */
  size_t nvalues, capvalues;
  kt_run_buffer *buffers;  /* resized by the launcher during this execution */
  size_t nbuffers, capbuffers;
  kt_launch_arg *scratch;  /* launch arguments being assembled */
  size_t capscratch;
  kt_status status;        /* of preparing or of the last execution */
  char *error;             /* why, when status is not ok */
  bool infrastructure;     /* a compile came to no verdict (build.h: kt_build_get's 2) */
  double build_ns;         /* waiting for (or doing) compiles during prepare */
  double compile_ns;       /* the compiles' own time, wherever they ran */
  char *build_log;         /* the compilers' warnings, kernel by kernel */
  double kernel_ns;        /* device time of the last execution's launches */
  double launcher_ns;      /* host time of the last execution's launcher */
  double data_ns;          /* restoring buffers before the last execution */
  double wait_ns;          /* waiting for the device in the last execution */
  size_t launches;
  int64_t time_limit_ns;   /* for one execution's device waits (0: none) */
  kt_fault fault;          /* of the last failed call */
  kt_bevent **events;
  size_t nevents, capevents;
  kt_launch_shape *shapes; /* the last execution's launches (result.h) */
  size_t nshapes, capshapes;
  struct kt_run_async *async; /* transfers that do not block, events (run_async.c) */
  /* Called once an execution's launches are queued, before they are
  ** waited for (for a batch, after its first execution only): host work
  ** that needs the device process but not the device, done while an
  ** untimed warm-up runs. Returns -1 on a fatal error, 1 when the device
  ** process was lost meanwhile (the execution then fails as its own loss
  ** would). */
  int (*idle)(struct kt_run *run, void *ud, kt_error *err);
  void *idle_ud;
  int64_t first_launch_ns; /* kt_now_ns() of the first launch queued (0: none yet) */
  int64_t waited_ns;       /* ... when the last wait for the device returned */
};

/* Builds the task's kernels for cfg. Returns -1 only on a fatal error;
** a configuration that cannot run gets run->status (compile_failed, ...). */
int kt_run_prepare(kt_run *run, kt_tuner *t, kt_task *task, const kt_config *cfg,
                   kt_error *err);
/* Restores what the last execution changed, runs the launcher (or each
** kernel once), waits, and sums the launches' device time. Returns -1
** only on a fatal error. After a sticky fault (status runtime_failed) the
** tuner has a fresh context and the run cannot execute again: release it. */
int kt_run_execute(kt_run *run, kt_error *err);
void kt_run_release(kt_run *run);

/* ---- what a launcher can do ---- */

typedef struct kt_launch_opts {
  const kt_sizes *sizes; /* NULL: the configuration's sizes; else global and local (items
                         ** are worked out at the launch) */
  int queue;
} kt_launch_opts;

/* Launches kernel ki (asynchronously on the queue). */
int kt_run_launch(kt_run *run, size_t ki, const kt_launch_opts *o, kt_error *err);
/* Waits for a queue (-1: all queues). */
int kt_run_sync(kt_run *run, int queue, kt_error *err);
/* Device contents of a (or its first `count` elements; 0: all) to dst. */
int kt_run_read(kt_run *run, const kt_array *a, kt_array *dst, size_t count, int queue,
                kt_error *err);
/* src's host contents into a's device buffer (src may be a itself). */
int kt_run_write(kt_run *run, const kt_array *a, const kt_array *src, int queue,
                 kt_error *err);
int kt_run_copy(kt_run *run, const kt_array *dst, const kt_array *src, size_t count,
                int queue, kt_error *err);
int kt_run_clear(kt_run *run, const kt_array *a, int queue, kt_error *err);
/* A device buffer of `length` elements for a, for this execution (the
** contents that fit are kept). */
int kt_run_resize(kt_run *run, const kt_array *a, size_t length, kt_error *err);
/* The number of elements a's device buffer has in this execution. */
size_t kt_run_length(kt_run *run, const kt_array *a);
/* A scalar argument's value (type->size bytes) for this execution. */
int kt_run_set_scalar(kt_run *run, const kt_arg *arg, const void *bytes, kt_error *err);
/* A local-memory argument's size in bytes for this execution. */
int kt_run_set_local(kt_run *run, const kt_arg *arg, size_t bytes, kt_error *err);
/* ---- transfers that do not block, events between queues (run_async.c) ---- */

/* Like kt_run_read and kt_run_write, but queued without waiting. A read's
** data is in dst once its queue is synchronised (kt_run_sync of that
** queue or of all), and at the latest when the execution's launcher has
** returned; dst is kept alive until then. A write takes a copy of src:
** src may change as soon as the call returns. */
int kt_run_read_async(kt_run *run, const kt_array *a, kt_array *dst, size_t count, int queue,
                      kt_error *err);
int kt_run_write_async(kt_run *run, const kt_array *a, const kt_array *src, int queue,
                       kt_error *err);
/* An event that completes once what is queued on the queue so far has;
** *event numbers it within this execution. */
int kt_run_event(kt_run *run, int queue, size_t *event, kt_error *err);
/* What is queued on queue from now on waits for the event. */
int kt_run_wait(kt_run *run, size_t event, int queue, kt_error *err);

/* Exchanges the places of arguments a and b in kernel ki's list. */
int kt_run_swap(kt_run *run, size_t ki, const kt_arg *a, const kt_arg *b, kt_error *err);
/* Replaces kernel ki's argument list for this execution. */
int kt_run_set_args(kt_run *run, size_t ki, kt_arg *const *args, size_t n, kt_error *err);

#endif
