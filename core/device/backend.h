/*
** backend.h: what the core asks of a compute API. Each backend (OpenCL,
** CUDA) fills one kt_backend table; nothing outside backend_*.c names an
** API function.
**
** Sizes given to launch are always in work-items per dimension (OpenCL's
** meaning of the global size); a backend converts to its own notion.
** Programs are compiled by `compile`, which may run on a worker thread,
** and turned into a launchable kernel by `kernel` on the owning thread.
**
** A backend whose faults can leave its context unusable (CUDA's sticky
** errors, any OpenCL command that failed while running) reports
** KT_FAULT_STICKY; the caller then frees every object of
** the context, closes it and opens a fresh one (see tuner_recover).
*/
#ifndef KT_BACKEND_H
#define KT_BACKEND_H

#include <sys/types.h>

#include "access.h"
#include "kt.h"

typedef struct kt_device_info kt_device_info;
typedef struct kt_bctx kt_bctx;     /* a context and its queues on one device */
typedef struct kt_bbuf kt_bbuf;     /* device memory */
typedef struct kt_bprog kt_bprog;   /* a compiled program */
typedef struct kt_bkernel kt_bkernel;
typedef struct kt_bevent kt_bevent; /* marks one launch, for timing */
struct kt_energy_reading;           /* energy.h */


typedef enum kt_launch_arg_kind {
  KT_LARG_BUFFER,
  KT_LARG_SCALAR,
  KT_LARG_LOCAL,  /* OpenCL: a __local argument; CUDA: dynamic shared memory */
  KT_LARG_SYMBOL  /* CUDA: bytes copied into a __constant__ (or __device__)
                  ** variable before the launch; not a kernel parameter */
} kt_launch_arg_kind;

typedef struct kt_launch_arg {
  kt_launch_arg_kind kind;
  kt_bbuf *buf;       /* KT_LARG_BUFFER */
  const void *bytes;  /* KT_LARG_SCALAR, KT_LARG_SYMBOL */
  size_t size;        /* scalar or symbol bytes, or local-memory bytes */
  const char *symbol; /* KT_LARG_SYMBOL: the variable's name */
} kt_launch_arg;

/* What a compiled kernel uses, as the compiler and driver report it; -1
** where the backend cannot tell. */
typedef struct kt_kernel_usage {
  int64_t registers;      /* per thread */
  int64_t shared_bytes;   /* static shared (OpenCL: local) memory per block */
  int64_t local_bytes;    /* per-thread local (OpenCL: private) memory: spills, stack */
  int64_t constant_bytes; /* __constant__ memory */
  int64_t max_threads;    /* largest block (work-group) the kernel allows here */
} kt_kernel_usage;

#define KT_KERNEL_USAGE_UNKNOWN ((kt_kernel_usage){-1, -1, -1, -1, -1})

/* How a failed call should be recorded for the configuration. */
typedef enum kt_fault {
  KT_FAULT_NONE = 0,
  KT_FAULT_LAUNCH,  /* the device refused the launch: launch_failed */
  KT_FAULT_RUNTIME, /* the kernel failed while running: runtime_failed */
  KT_FAULT_STICKY,  /* ... and took the context with it: runtime_failed, and
                    ** the context must be closed and opened again */
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
  /* Transfers on a queue; blocking ones return when the host side is done.
  ** A transfer that does not block uses the host memory until its queue is
  ** finished: a read's data is there from then on. */
  int (*buffer_write)(kt_bctx *ctx, int queue, kt_bbuf *buf, size_t offset,
                      size_t bytes, const void *src, bool blocking,
                      kt_error *err);
  int (*buffer_read)(kt_bctx *ctx, int queue, kt_bbuf *buf, size_t offset,
                     size_t bytes, void *dst, bool blocking, kt_error *err);
  /* Optional (blocking): 1 when the buffer's bytes at offset are want's, 0
  ** when not; compared where a read lands (a device process's staging area)
  ** instead of copied out first: the guard's checks read whole inputs. */
  int (*buffer_equal)(kt_bctx *ctx, int queue, kt_bbuf *buf, size_t offset,
                      size_t bytes, const void *want, kt_error *err);
  int (*buffer_copy)(kt_bctx *ctx, int queue, kt_bbuf *dst, size_t dst_off,
                     kt_bbuf *src, size_t src_off, size_t bytes,
                     kt_error *err);
  int (*buffer_fill_zero)(kt_bctx *ctx, int queue, kt_bbuf *buf,
                          size_t offset, size_t bytes, kt_error *err);

  /* Compiling needs the kernel's name (NVRTC instantiates templates from
  ** name expressions), so a program serves that one kernel: callers that
  ** cache programs key them on the name too. */
  bool program_per_kernel;

  /* Loading a program's binary waits for the work queued on the device,
  ** and launches from other threads wait behind it (a CUDA module): a
  ** device process loads them between configurations (server_loads.c). */
  bool load_waits;

  /* Thread-safe: compiles source with options for the kernel called name;
  ** *log gets the compiler's messages (malloc'd, caller frees; may be
  ** NULL): on a compile error with NULL returned, else its warnings. */
  kt_bprog *(*compile)(kt_bctx *ctx, const char *source, const char *options,
                       const char *name, char **log, kt_error *err);
  void (*prog_free)(kt_bctx *ctx, kt_bprog *prog);
  /* A compiled program as bytes, and a program made again from them, so
  ** that programs outlive the process (program_store.h) and may come from
  ** another process than the one that loads them. Thread-safe, as compile
  ** is. prog_binary gives *bytes (malloc'd, caller frees): OpenCL's program
  ** binary for the device, CUDA's cubin (PTX where NVRTC lacks the device's
  ** architecture) with the kernel's lowered name. prog_load takes them on a
  ** device of the same identity (kt_program_identity), with the options
  ** and kernel name of the compile; *log as for compile. NULL where a
  ** backend has no binaries; either may fail where a platform gives none:
  ** the caller then compiles. */
  int (*prog_binary)(kt_bctx *ctx, kt_bprog *prog, unsigned char **bytes, size_t *size,
                     kt_error *err);
  kt_bprog *(*prog_load)(kt_bctx *ctx, const unsigned char *bytes, size_t size,
                         const char *options, const char *name, char **log, kt_error *err);
  /* Optional: prog_binary's bytes of a compile for dev with no context at
  ** all (a compiler process's way where the compiler needs only the
  ** device's description: NVRTC). 0 with *bytes (malloc'd), 1 when the
  ** source does not compile, -1 with err; *log as for compile. NULL: a
  ** compiler process opens a context and compiles in it. */
  int (*compile_binary)(const kt_device_info *dev, const char *source, const char *options,
                        const char *name, unsigned char **bytes, size_t *size, char **log,
                        kt_error *err);
  /* Optional: compile as kt_program_build does, through the program cache
  ** of the process that runs the device, on its own node (program_disk.h:
  ** a device of another node, far.h, keeps its programs there). */
  kt_bprog *(*build_there)(kt_bctx *ctx, const char *source, const char *options,
                           const char *name, char **log, bool *loaded, char **unkept,
                           kt_error *err);
  /* Optional, thread-safe: the process of this host whose threads run
  ** compile (a device process), 0 where none is (another MPI rank's);
  ** NULL: the calling one. Its threads' waits for a processor are not a
  ** compile's own time (builder.h). */
  pid_t (*compiler_pid)(kt_bctx *ctx);
  kt_bkernel *(*kernel)(kt_bctx *ctx, kt_bprog *prog, const char *name,
                        kt_error *err);
  void (*kernel_free)(kt_bctx *ctx, kt_bkernel *k);
  /* Registers, memory and the largest work-group of the compiled kernel. */
  kt_kernel_usage (*kernel_usage)(kt_bctx *ctx, kt_bkernel *k);

  /* Enqueues one launch; *ev (when ev is not NULL) times it. On failure,
  ** *fault says whether the device refused it or the context broke.
  ** Symbol arguments are copied on the same queue before the launch. */
  int (*launch)(kt_bctx *ctx, int queue, kt_bkernel *k,
                const kt_launch_arg *args, size_t nargs, int dims,
                const size_t global[3], const size_t local[3],
                kt_bevent **ev, kt_fault *fault, kt_error *err);
  /* Waits for everything queued on a queue (-1: every queue). A kernel
  ** that failed while running reports KT_FAULT_RUNTIME (or _STICKY) here. */
  int (*finish)(kt_bctx *ctx, int queue, kt_fault *fault, kt_error *err);
  /* Device time of a finished launch, in nanoseconds; < 0 if unknown. */
  double (*event_ns)(kt_bctx *ctx, kt_bevent *ev);
  void (*event_free)(kt_bctx *ctx, kt_bevent *ev);

  /* Events between queues (launchers' run:event and run:wait): marker
  ** gives an event that completes once what is queued on the queue so far
  ** has; queue_wait makes what is queued on the queue from now on wait for
  ** it. Such an event has no device time; event_free frees it. */
  int (*marker)(kt_bctx *ctx, int queue, kt_bevent **ev, kt_error *err);
  int (*queue_wait)(kt_bctx *ctx, int queue, kt_bevent *ev, kt_error *err);

  /* Optional (NULL where a backend has no such notion): */
  /* Waits on the device give up at this kt_now_ns() time (0: never), with
  ** KT_FAULT_TIMEOUT, moved by the time the calling thread waited for a
  ** processor meanwhile (run_delay.h: its host code counts against the
  ** same limit). on_host: the device is the host's processors, and the
  ** deadline moves by the time its process spent compiling meanwhile (a
  ** CPU device compiles a kernel at its first launch only after the
  ** compiles in progress) and waiting for a processor too. */
  void (*set_deadline)(kt_bctx *ctx, int64_t deadline_ns, bool on_host);
  /* Counts the times the context was recreated: every buffer, program and
  ** kernel made before a change is gone. */
  uint64_t (*generation)(kt_bctx *ctx);
  /* What the context's process wrote on stderr since the last call
  ** (malloc'd), or NULL; where it is not the caller's own stderr. */
  char *(*take_output)(kt_bctx *ctx);
  /* Bytes resident in the process that holds the context, apart from the
  ** tuner's (0: unknown, or none now). */
  size_t (*resident)(kt_bctx *ctx);
  /* Ends that process as a crash would (the generation counts up); the
  ** next call starts a fresh one. */
  void (*renew)(kt_bctx *ctx);
  /* The host memory of a buffer placed KT_PLACE_HOST: pinned memory that
  ** transfers read and write at the bus's full speed (the probes measure
  ** it); valid until the buffer is freed. */
  void *(*host_memory)(kt_bctx *ctx, kt_bbuf *buf, kt_error *err);
  /* Page-locks host memory of the caller's (page-aligned) for the life of
  ** the context, so that transfers to and from it run at the bus's full
  ** speed: a device process's staging area (remote.h). */
  int (*host_pin)(kt_bctx *ctx, void *p, size_t bytes, kt_error *err);
  /* Energy over a window of runs, in the process that drives the device:
  ** op and *out are energy.h's (kt_energy_op, kt_energy_reading). */
  int (*energy)(kt_bctx *ctx, int op, struct kt_energy_reading *out, kt_error *err);
  /* Hardware counters (CUDA through CUPTI: counters.h) of the launches
  ** queued between begin and end, each launch replayed *passes times
  ** (begin says how many); end waits for the device and gives one value
  ** per name and the launches profiled. Both return 1 with err where
  ** counters cannot be read (no permission): the caller goes on without.
  ** begin with passes NULL only switches the counters on and checks the
  ** names, collecting nothing (no end follows). */
  int (*counters_begin)(kt_bctx *ctx, const char *const *names, size_t n, unsigned *passes,
                        kt_error *err);
  int (*counters_end)(kt_bctx *ctx, double *values, size_t n, unsigned *ranges, kt_error *err);
} kt_backend;

/* For backends: `finish` from a function that waits for one queue: queue
** q, or with q = -1 each of the nqueues, keeping the first error. */
typedef int (*kt_finish_fn)(kt_bctx *ctx, int q, kt_fault *fault, kt_error *err);
int kt_backend_finish(kt_bctx *ctx, int q, int nqueues, kt_finish_fn one, kt_fault *fault,
                      kt_error *err);

extern const kt_backend kt_backend_opencl;
extern const kt_backend kt_backend_cuda;

#endif
