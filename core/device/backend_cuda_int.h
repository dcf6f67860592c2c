/*
** backend_cuda_int.h: what the CUDA backend's files share (backend_cuda.c:
** contexts, programs, launches; cuda_buffers.c: streams and memory).
** Private to them.
*/
#ifndef KT_BACKEND_CUDA_INT_H
#define KT_BACKEND_CUDA_INT_H

#include <pthread.h>

#include "backend.h"
#include "counters.h"
#include "cuda_lib.h"
#include "energy.h"

#define MAX_QUEUES 16

#define SPARE_EVENTS 64

struct kt_bctx {
  const kt_cuda_lib *lib;
  CUdevice device;
  CUcontext context;
  char arch[32]; /* what NVRTC compiles for: sm_90, or compute_XX when it lacks the device */
  CUstream streams[MAX_QUEUES];
  /* Events are made and destroyed for every launch: keep some for reuse. */
  kt_bevent *spare[SPARE_EVENTS];
  int nspare;
  kt_energy_meter *meter; /* made by the first `energy` */
  kt_counters *counters; /* made when counters are first asked for */
  /* Modules load and unload on compile threads; CUPTI's kernel replay
  ** saves and restores the context's memory pass after pass, which a
  ** module appearing between passes would not survive: loads share it,
  ** a collection holds it alone. */
  pthread_rwlock_t modules;
  bool collecting; /* holds modules */
};

struct kt_bbuf {
  CUdeviceptr ptr;
  kt_placement place;
  void *host; /* host and zero_copy: the host memory the device maps */
};

struct kt_bprog {
  char *image;     /* machine code, or PTX that the driver finishes */
  size_t image_size; /* with PTX's NUL */
  char *name;      /* the name expression compiled for ... */
  char *lowered;   /* ... and the symbol it became */
  CUmodule module; /* loaded by the first `kernel`, on the owning thread */
};

struct kt_bkernel {
  CUfunction function;
  CUmodule module;
  int shared_limit; /* dynamic shared memory the function may use as it is set up */
};

struct kt_bevent {
  CUevent start, end;
};

static inline const kt_cu_api *api(const kt_bctx *ctx) { return &ctx->lib->cu; }

/* Every call runs in the context's thread-local binding. */
static inline void use(const kt_bctx *ctx) { api(ctx)->CtxSetCurrent(ctx->context); }

/* cuda_buffers.c: binds the context to this thread and gives queue q's
** stream; the backend's buffer operations (backend.h). */
int kt_cu_enter(kt_bctx *ctx, int q, CUstream *out, kt_error *err);
kt_bbuf *kt_cu_buffer_new(kt_bctx *ctx, size_t bytes, kt_placement place, kt_access access,
                          kt_error *err);
int kt_cu_host_pin(kt_bctx *ctx, void *p, size_t bytes, kt_error *err);
void kt_cu_buffer_free(kt_bctx *ctx, kt_bbuf *b);
void *kt_cu_host_memory(kt_bctx *ctx, kt_bbuf *b, kt_error *err);
int kt_cu_buffer_write(kt_bctx *ctx, int q, kt_bbuf *b, size_t off, size_t bytes,
                       const void *src, bool blocking, kt_error *err);
int kt_cu_buffer_read(kt_bctx *ctx, int q, kt_bbuf *b, size_t off, size_t bytes, void *dst,
                      bool blocking, kt_error *err);
int kt_cu_buffer_copy(kt_bctx *ctx, int q, kt_bbuf *dst, size_t doff, kt_bbuf *src,
                      size_t soff, size_t bytes, kt_error *err);
int kt_cu_buffer_fill_zero(kt_bctx *ctx, int q, kt_bbuf *b, size_t off, size_t bytes, kt_error *err);

#endif
