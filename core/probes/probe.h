/*
** probe.h: device microbenchmarks after Poeppl: transfers between host and
** device (pageable and pinned host memory, across sizes), the launch
** floor (an empty kernel), a work-group-size sweep of a memory-bound copy
** and the throughput of arithmetic operations. Each figure is the mean of
** repetitions run until the relative standard error of that mean is below
** a target (2%), or a cap on repetitions is hit (the row says so).
**
** Probes run in a short-lived child process (as device listing does, see
** remote.h), so that the process that forks device servers never loads a
** driver; in a process that already drives a device itself, in place.
*/
#ifndef KT_PROBE_H
#define KT_PROBE_H

#include "device.h"

enum {
  KT_PROBE_TRANSFERS = 1,
  KT_PROBE_LAUNCH = 2,
  KT_PROBE_SWEEP = 4,
  KT_PROBE_OPS = 8,
  KT_PROBE_ALL = 15
};

typedef struct kt_probe_opts {
  double rse;                 /* target relative standard error of the mean */
  uint32_t min_reps, max_reps;
  const uint64_t *sizes;      /* transfer sizes in bytes */
  size_t nsizes;
  uint64_t sweep_bytes;       /* bytes the copy kernel reads (and writes) */
  uint32_t group_lo, group_hi; /* work-group sizes swept: powers of two */
  uint32_t op_iters;          /* loop trips of the arithmetic kernels */
  uint64_t op_items;          /* their work-items (0: enough to fill the device) */
  unsigned parts;             /* KT_PROBE_* */
  double time_limit;          /* seconds the whole probe may take apart (0: no limit) */
} kt_probe_opts;

/* One measurement. */
typedef struct kt_probe_row {
  char kind[12];    /* "h2d", "d2h", "launch", "sweep", "op" */
  char name[20];    /* "pageable" / "pinned", "event" / "host", "copy", "fp32_fma", ... */
  uint64_t size;    /* transfers: bytes; sweep: work-group size; op: operations per launch */
  uint32_t reps;    /* timed repetitions (after one untimed) */
  double mean_ns;   /* mean time of one repetition */
  double rse;       /* relative standard error of that mean */
  bool capped;      /* max_reps ran out before rse fell below the target */
  double value;     /* transfers, sweep: GB/s; launch: ns; op: Gop/s */
} kt_probe_row;

typedef struct kt_probe {
  kt_probe_row *rows;
  size_t n, cap;
  char *notes; /* what could not be measured, and why (malloc'd, may be NULL) */
} kt_probe;

void kt_probe_free(kt_probe *p);
int kt_probe_add(kt_probe *p, const kt_probe_row *row, kt_error *err);
int kt_probe_note(kt_probe *p, const char *note, kt_error *err);

/* Fills out from an open context on dev (out zeroed by the caller). */
int kt_probe_run(const kt_device_info *dev, kt_bctx *ctx, const kt_probe_opts *o, kt_probe *out,
                 kt_error *err);

/* Probes the device of that id ("opencl:0:0") apart (see above). */
int kt_probe_device(const char *id, const kt_probe_opts *o, kt_probe *out, kt_error *err);

#endif
