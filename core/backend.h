/*
** backend.h: what the core asks of a compute API. Each backend (OpenCL,
** CUDA) fills one kt_backend table; nothing outside backend_*.c names an
** API function.
**
** Sizes given to launch are always in work-items per dimension (OpenCL's
** meaning of the global size); a backend converts to its own notion.
** Programs are compiled by `compile`, which may run on a worker thread,
** and turned into a launchable kernel by `kernel` on the owning thread.
*/
#ifndef KT_BACKEND_H
#define KT_BACKEND_H

#include "kt.h"

typedef struct kt_device_info kt_device_info;
typedef struct kt_bctx kt_bctx;     /* a context and its queues on one device */
typedef struct kt_bbuf kt_bbuf;     /* device memory */
typedef struct kt_bprog kt_bprog;   /* a compiled program */
typedef struct kt_bkernel kt_bkernel;
typedef struct kt_bevent kt_bevent; /* marks one launch, for timing */

typedef enum kt_access { KT_READ = 1, KT_WRITE = 2, KT_READ_WRITE = 3 } kt_access;

typedef enum kt_placement {
  KT_PLACE_DEVICE,    /* device memory */
  KT_PLACE_HOST,      /* pinned host memory that the device reads over the bus */
  KT_PLACE_ZERO_COPY, /* host memory mapped into the device's address space */
  KT_PLACE_MANAGED,   /* unified memory migrated on demand (CUDA) */
  KT_PLACE_COUNT
} kt_placement;

const char *kt_placement_name(kt_placement p);
const char *kt_access_name(kt_access a);

typedef enum kt_launch_arg_kind {
  KT_LARG_BUFFER,
  KT_LARG_SCALAR,
  KT_LARG_LOCAL
} kt_launch_arg_kind;

typedef struct kt_launch_arg {
  kt_launch_arg_kind kind;
  kt_bbuf *buf;      /* KT_LARG_BUFFER */
  const void *bytes; /* KT_LARG_SCALAR */
  size_t size;       /* scalar bytes, or local-memory bytes */
} kt_launch_arg;

/* How a failed call should be recorded for the configuration. */
typedef enum kt_fault {
  KT_FAULT_NONE = 0,
  KT_FAULT_LAUNCH,  /* the device refused the launch: launch_failed */
  KT_FAULT_RUNTIME, /* the kernel failed while running: runtime_failed */
  KT_FAULT_FATAL,   /* the context is unusable or the host ran out */
  KT_FAULT_TIMEOUT, /* past the time limit; the context was given up: timeout */
  KT_FAULT_LOST     /* the context was lost (its process died): runtime_failed */
} kt_fault;

typedef struct kt_backend {
  const char *name; /* "opencl", "cuda" */

  /* Appends this backend's devices to the list; a backend whose library
  ** is missing lists none and explains why in *why (static text). */
  int (*enumerate)(kt_device_info **list, size_t *n, size_t *cap,
                   const char **why, kt_error *err);

  kt_bctx *(*open)(const kt_device_info *dev, kt_error *err);
  void (*close)(kt_bctx *ctx);

  kt_bbuf *(*buffer_new)(kt_bctx *ctx, size_t bytes, kt_placement place,
                         kt_access access, kt_error *err);
  void (*buffer_free)(kt_bctx *ctx, kt_bbuf *buf);
  /* Transfers on a queue; blocking ones return when the host side is done. */
  int (*buffer_write)(kt_bctx *ctx, int queue, kt_bbuf *buf, size_t offset,
                      size_t bytes, const void *src, bool blocking,
                      kt_error *err);
  int (*buffer_read)(kt_bctx *ctx, int queue, kt_bbuf *buf, size_t offset,
                     size_t bytes, void *dst, bool blocking, kt_error *err);
  int (*buffer_copy)(kt_bctx *ctx, int queue, kt_bbuf *dst, size_t dst_off,
                     kt_bbuf *src, size_t src_off, size_t bytes,
                     kt_error *err);
  int (*buffer_fill_zero)(kt_bctx *ctx, int queue, kt_bbuf *buf,
                          size_t offset, size_t bytes, kt_error *err);

  /* Thread-safe: compiles source with options; on a compile error returns
  ** NULL with the compiler's log in *log (malloc'd, caller frees). */
  kt_bprog *(*compile)(kt_bctx *ctx, const char *source, const char *options,
                       char **log, kt_error *err);
  void (*prog_free)(kt_bctx *ctx, kt_bprog *prog);
  kt_bkernel *(*kernel)(kt_bctx *ctx, kt_bprog *prog, const char *name,
                        kt_error *err);
  void (*kernel_free)(kt_bctx *ctx, kt_bkernel *k);
  /* Largest work-group the compiled kernel allows on this device. */
  size_t (*kernel_max_group)(kt_bctx *ctx, kt_bkernel *k);

  /* Enqueues one launch; *ev (when ev is not NULL) times it. On failure,
  ** *fault says whether the device refused it or the context broke. */
  int (*launch)(kt_bctx *ctx, int queue, kt_bkernel *k,
                const kt_launch_arg *args, size_t nargs, int dims,
                const size_t global[3], const size_t local[3],
                kt_bevent **ev, kt_fault *fault, kt_error *err);
  /* Waits for everything queued on a queue (-1: every queue). A kernel
  ** that failed while running reports KT_FAULT_RUNTIME here. */
  int (*finish)(kt_bctx *ctx, int queue, kt_fault *fault, kt_error *err);
  /* Device time of a finished launch, in nanoseconds; < 0 if unknown. */
  double (*event_ns)(kt_bctx *ctx, kt_bevent *ev);
  void (*event_free)(kt_bctx *ctx, kt_bevent *ev);

  /* Optional (NULL where a backend has no such notion): */
  /* Waits on the device give up at this kt_now_ns() time (0: never), with
  ** KT_FAULT_TIMEOUT. */
  void (*set_deadline)(kt_bctx *ctx, int64_t deadline_ns);
  /* Counts the times the context was recreated: every buffer, program and
  ** kernel made before a change is gone. */
  uint64_t (*generation)(kt_bctx *ctx);
} kt_backend;

extern const kt_backend kt_backend_opencl;
extern const kt_backend kt_backend_cuda;

#endif
