/*
** cuda_buffers.c: the CUDA backend's streams and memory (backend_cuda.c
** says how queues and placements map onto the driver's).
*/
#include "cuda_binary.h"

#ifdef KT_HAVE_CUDA

#include <stdio.h>
#include <stdlib.h>

#include "backend_cuda_int.h"

int kt_cu_enter(kt_bctx *ctx, int q, CUstream *out, kt_error *err) {
  if (q < 0 || q >= MAX_QUEUES)
    return kt_fail(err, "queue %d is out of range (0 to %d)", q, MAX_QUEUES - 1);
  use(ctx);
  if (!ctx->streams[q]) {
    CUresult e = api(ctx)->StreamCreate(&ctx->streams[q], CU_STREAM_NON_BLOCKING);
    if (e != CUDA_SUCCESS) {
      ctx->streams[q] = NULL;
      return kt_cu_fail(err, e, "cuStreamCreate");
    }
  }
  *out = ctx->streams[q];
  return 0;
}

/* Host memory that kernels reach through a device pointer: the driver's
** pinned memory (host) or ktlua's own, registered (zero_copy). */
static CUresult map_host(const kt_cu_api *cu, kt_bbuf *b, size_t bytes) {
  CUresult e;
  if (b->place == KT_PLACE_HOST) {
    e = cu->MemHostAlloc(&b->host, bytes, CU_MEMHOSTALLOC_DEVICEMAP);
  } else {
    size_t rounded = (bytes + 4095) / 4096 * 4096;
    if (!(b->host = aligned_alloc(4096, rounded))) return CUDA_ERROR_OUT_OF_MEMORY;
    e = cu->MemHostRegister(b->host, rounded, CU_MEMHOSTREGISTER_DEVICEMAP);
    if (e != CUDA_SUCCESS) {
      free(b->host);
      b->host = NULL;
    }
  }
  return e == CUDA_SUCCESS ? cu->MemHostGetDevicePointer(&b->ptr, b->host, 0) : e;
}

static void release(const kt_cu_api *cu, kt_bbuf *b) {
  if (b->place == KT_PLACE_HOST && b->host) {
    cu->MemFreeHost(b->host);
  } else if (b->place == KT_PLACE_ZERO_COPY && b->host) {
    cu->MemHostUnregister(b->host);
    free(b->host);
  } else if (b->ptr && (b->place == KT_PLACE_DEVICE || b->place == KT_PLACE_MANAGED)) {
    cu->MemFree(b->ptr);
  }
}

/* Managed memory beyond the device's free memory can hang the GPU rather
** than fail, so it is refused here. */
static int managed_fits(const kt_cu_api *cu, size_t bytes, kt_error *err) {
  size_t free_bytes = 0, total = 0;
  CUresult e = cu->MemGetInfo(&free_bytes, &total);
  if (e != CUDA_SUCCESS) return kt_cu_fail(err, e, "cuMemGetInfo");
  if (bytes > free_bytes)
    return kt_fail(err, "managed memory of %zu bytes exceeds the device's free memory (%zu "
                   "bytes); ktlua refuses it, as oversubscribed managed memory can hang the GPU",
                   bytes, free_bytes);
  return 0;
}

kt_bbuf *kt_cu_buffer_new(kt_bctx *ctx, size_t bytes, kt_placement place, kt_access access,
                              kt_error *err) {
  (void)access; /* CUDA memory has no access mode */
  const kt_cu_api *cu = api(ctx);
  use(ctx);
  if (bytes == 0) bytes = 1;
  if (place == KT_PLACE_MANAGED && managed_fits(cu, bytes, err)) return NULL;
  kt_bbuf *b = kt_calloc(1, sizeof *b, err);
  if (!b) return NULL;
  b->place = place;
  CUresult e = place == KT_PLACE_DEVICE    ? cu->MemAlloc(&b->ptr, bytes)
               : place == KT_PLACE_MANAGED ? cu->MemAllocManaged(&b->ptr, bytes, CU_MEM_ATTACH_GLOBAL)
                                           : map_host(cu, b, bytes);
  if (e != CUDA_SUCCESS) {
    release(cu, b);
    free(b);
    char what[96];
    snprintf(what, sizeof what, "allocating %zu bytes of %s memory", bytes, kt_placement_name(place));
    kt_cu_fail(err, e, what);
    return NULL;
  }
  return b;
}

int kt_cu_host_pin(kt_bctx *ctx, void *p, size_t bytes, kt_error *err) {
  use(ctx);
  CUresult e = api(ctx)->MemHostRegister(p, bytes, 0);
  return e == CUDA_SUCCESS ? 0 : kt_cu_fail(err, e, "cuMemHostRegister");
}

void kt_cu_buffer_free(kt_bctx *ctx, kt_bbuf *b) {
  if (!b) return;
  use(ctx);
  release(api(ctx), b);
  free(b);
}

void *kt_cu_host_memory(kt_bctx *ctx, kt_bbuf *b, kt_error *err) {
  (void)ctx;
  if (b->place != KT_PLACE_HOST) return kt_fail(err, "the buffer is not in pinned host memory"), NULL;
  return b->host; /* cuMemHostAlloc'd: pinned */
}

static int transfer_done(kt_bctx *ctx, CUstream s, CUresult e, bool blocking, const char *what,
                         kt_error *err) {
  if (e == CUDA_SUCCESS && blocking) e = api(ctx)->StreamSynchronize(s);
  return e == CUDA_SUCCESS ? 0 : kt_cu_fail(err, e, what);
}

int kt_cu_buffer_write(kt_bctx *ctx, int q, kt_bbuf *b, size_t off, size_t bytes,
                           const void *src, bool blocking, kt_error *err) {
  CUstream s;
  if (kt_cu_enter(ctx, q, &s, err)) return -1;
  CUresult e = api(ctx)->MemcpyHtoDAsync(b->ptr + off, src, bytes, s);
  return transfer_done(ctx, s, e, blocking, "cuMemcpyHtoDAsync", err);
}

int kt_cu_buffer_read(kt_bctx *ctx, int q, kt_bbuf *b, size_t off, size_t bytes, void *dst,
                          bool blocking, kt_error *err) {
  CUstream s;
  if (kt_cu_enter(ctx, q, &s, err)) return -1;
  CUresult e = api(ctx)->MemcpyDtoHAsync(dst, b->ptr + off, bytes, s);
  return transfer_done(ctx, s, e, blocking, "cuMemcpyDtoHAsync", err);
}

int kt_cu_buffer_copy(kt_bctx *ctx, int q, kt_bbuf *dst, size_t doff, kt_bbuf *src,
                          size_t soff, size_t bytes, kt_error *err) {
  CUstream s;
  if (kt_cu_enter(ctx, q, &s, err)) return -1;
  CUresult e = api(ctx)->MemcpyDtoDAsync(dst->ptr + doff, src->ptr + soff, bytes, s);
  return transfer_done(ctx, s, e, false, "cuMemcpyDtoDAsync", err);
}

int kt_cu_buffer_fill_zero(kt_bctx *ctx, int q, kt_bbuf *b, size_t off, size_t bytes,
                               kt_error *err) {
  CUstream s;
  if (kt_cu_enter(ctx, q, &s, err)) return -1;
  CUresult e = api(ctx)->MemsetD8Async(b->ptr + off, 0, bytes, s);
  return transfer_done(ctx, s, e, false, "cuMemsetD8Async", err);
}

#endif
