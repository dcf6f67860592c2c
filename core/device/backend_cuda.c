/*
** backend_cuda.c: the CUDA backend: the driver API, with kernels compiled
** by NVRTC for the device's own architecture. Both libraries are loaded
** at run time (cuda_lib.c); without them the backend lists no devices and
** says why, and a build without cuda.h says that.
**
** How ktlua's notions map onto CUDA:
** - a queue is a stream; a context is one cuCtxCreate context, so that a
**   fault in one tuner's context leaves other tuners alone;
** - placements: device (cuMemAlloc), host (pinned cuMemHostAlloc memory
**   that kernels reach over the bus), zero_copy (ktlua's own host memory,
**   registered and mapped), managed (cuMemAllocManaged, refused when larger
**   than the free device memory, since oversubscribing it can hang a GPU);
** - kernel parameters are the buffer and scalar arguments in order; local
**   memory arguments add up to the launch's dynamic shared memory (one
**   `extern __shared__` array that the kernel divides itself); symbol
**   arguments are copied into the module's variable of that name before
**   each launch, on the launch's stream;
** - sizes arrive in threads; the grid is threads / block per dimension,
**   which must divide exactly (CUDA launches whole blocks).
*/
#include "cuda_binary.h"
#include "device.h"
#include "nvrtc.h"

#ifdef KT_HAVE_CUDA

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_cuda_int.h"

/* Errors after which the context is unusable (CUDA's "sticky" errors). */
static bool is_sticky(CUresult e) {
  switch (e) {
    case CUDA_ERROR_ILLEGAL_ADDRESS: case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION: case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE: case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED: case CUDA_ERROR_ASSERT: case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE: case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_UNKNOWN:
      return true;
    default:
      return false;
  }
}

/* ---- context ---- */

static kt_bctx *cu_open(const kt_device_info *dev, kt_error *err) {
  const kt_cuda_lib *lib = kt_cuda_lib_get();
  if (kt_cuda_unavailable(lib)) return kt_fail(err, "%s", kt_cuda_unavailable(lib)), NULL;
  kt_bctx *ctx = kt_calloc(1, sizeof *ctx, err);
  if (!ctx) return NULL;
  ctx->lib = lib;
  snprintf(ctx->arch, sizeof ctx->arch, "%s", kt_device_string(dev, "arch"));
  CUresult e = lib->cu.DeviceGet(&ctx->device, dev->index);
  if (e == CUDA_SUCCESS) e = lib->cu.CtxCreate(&ctx->context, CU_CTX_SCHED_BLOCKING_SYNC, ctx->device);
  if (e == CUDA_SUCCESS && pthread_rwlock_init(&ctx->modules, NULL)) {
    lib->cu.CtxDestroy(ctx->context);
    e = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (e != CUDA_SUCCESS) {
    kt_cu_fail(err, e, "cuCtxCreate");
    free(ctx);
    return NULL;
  }
  return ctx;
}

/* After a fault every call here fails; the context goes all the same. */
static void destroy_event(kt_bctx *ctx, kt_bevent *ev);

static void cu_close(kt_bctx *ctx) {
  if (!ctx) return;
  const kt_cu_api *cu = api(ctx);
  use(ctx);
  cu->CtxSynchronize();
  while (ctx->nspare > 0) destroy_event(ctx, ctx->spare[--ctx->nspare]);
  kt_counters_free(ctx->counters);
  for (int q = 0; q < MAX_QUEUES; q++)
    if (ctx->streams[q]) cu->StreamDestroy(ctx->streams[q]);
  cu->CtxDestroy(ctx->context);
  kt_energy_meter_free(ctx->meter);
  pthread_rwlock_destroy(&ctx->modules);
  free(ctx);
}

/* ---- programs and kernels ---- */

static void cu_prog_free(kt_bctx *ctx, kt_bprog *prog) {
  if (!prog) return;
  if (prog->module) {
    use(ctx);
    pthread_rwlock_rdlock(&ctx->modules);
    api(ctx)->ModuleUnload(prog->module);
    pthread_rwlock_unlock(&ctx->modules);
  }
  free(prog->image);
  free(prog->name);
  free(prog->lowered);
  free(prog);
}

/* The driver's own log says why machine code or PTX does not load. */
static int load_module(kt_bctx *ctx, kt_bprog *prog, kt_error *err) {
  char log[4096] = "";
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, (void *)(uintptr_t)(sizeof log - 1)};
  pthread_rwlock_rdlock(&ctx->modules);
  CUresult e = api(ctx)->ModuleLoadDataEx(&prog->module, prog->image, 2, options, values);
  pthread_rwlock_unlock(&ctx->modules);
  if (e == CUDA_SUCCESS) return 0;
  prog->module = NULL;
  kt_error why;
  kt_cu_fail(&why, e, "loading the compiled program");
  return kt_fail(err, "%s%s%s", why.msg, log[0] ? "\n" : "", log);
}

/* Runs on compile threads: NVRTC needs no context, ctx->arch does not
** change, and loading the module (making the context current here) is
** part of building, so that it overlaps runs rather than delaying the
** next launch. The #define lines of the configuration come before the
** source's own #line, so the compiler calls them "parameters". */
static kt_bprog *cu_compile(kt_bctx *ctx, const char *source, const char *options,
                            const char *name, char **log, kt_error *err) {
  *log = NULL;
  if (!ctx->arch[0])
    return kt_fail(err, "NVRTC %d.%d cannot compile for this device", ctx->lib->nvrtc_major,
                   ctx->lib->nvrtc_minor), NULL;
  kt_nvrtc_job job = {source, "parameters", options, ctx->arch, &name, 1};
  kt_nvrtc_out out;
  int rc = kt_nvrtc_compile(&job, &out, err);
  kt_bprog *prog = NULL;
  *log = rc >= 0 ? out.log : NULL; /* the errors, or a successful compile's warnings */
  if (rc >= 0) out.log = NULL;
  if (rc > 0) {
    kt_fail(err, "NVRTC could not compile the program");
  } else if (rc == 0 && (prog = kt_calloc(1, sizeof *prog, err))) {
    prog->image = out.cubin ? out.cubin : out.ptx;
    prog->image_size = out.cubin ? out.cubin_size : strlen(out.ptx) + 1;
    *(out.cubin ? &out.cubin : &out.ptx) = NULL;
    prog->lowered = out.lowered[0];
    out.lowered[0] = NULL;
    if (!(prog->name = kt_strdup(name, err))) {
      free(prog->image);
      free(prog->lowered);
      free(prog);
      prog = NULL;
    }
  }
  kt_nvrtc_out_clear(&out);
  if (prog) {
    use(ctx);
    if (load_module(ctx, prog, err)) {
      cu_prog_free(ctx, prog);
      return NULL;
    }
  }
  return prog;
}

static int cu_prog_binary(kt_bctx *ctx, kt_bprog *prog, unsigned char **bytes, size_t *size,
                          kt_error *err) {
  (void)ctx;
  return kt_cuda_binary_pack(prog->name, prog->lowered, prog->image, prog->image_size, bytes,
                             size, err);
}

/* The NUL-terminated string at *at, before end, moved past. */
static char *take_string(const unsigned char **at, const unsigned char *end, kt_error *err) {
  const unsigned char *nul = memchr(*at, '\0', (size_t)(end - *at));
  if (!nul) return kt_fail(err, "a CUDA program binary is cut short"), NULL;
  char *s = kt_strdup((const char *)*at, err);
  *at = nul + 1;
  return s;
}

static kt_bprog *cu_prog_load(kt_bctx *ctx, const unsigned char *bytes, size_t size,
                              const char *options, const char *name, char **log,
                              kt_error *err) {
  (void)options; /* they shaped the image; the driver takes none */
  *log = NULL;
  if (size <= KT_CUDA_BINARY_MAGIC_LEN ||
      memcmp(bytes, KT_CUDA_BINARY_MAGIC, KT_CUDA_BINARY_MAGIC_LEN) != 0)
    return kt_fail(err, "not a ktlua CUDA program binary"), NULL;
  const unsigned char *at = bytes + KT_CUDA_BINARY_MAGIC_LEN, *end = bytes + size;
  kt_bprog *prog = kt_calloc(1, sizeof *prog, err);
  if (!prog) return NULL;
  if ((prog->name = take_string(&at, end, err)) && (prog->lowered = take_string(&at, end, err))) {
    if (strcmp(prog->name, name) != 0)
      kt_fail(err, "a CUDA program binary for kernel '%s', not '%s'", prog->name, name);
    else if (at == end)
      kt_fail(err, "a CUDA program binary is cut short");
    else if ((prog->image = kt_alloc((size_t)(end - at), err))) {
      prog->image_size = (size_t)(end - at);
      memcpy(prog->image, at, prog->image_size);
      use(ctx);
      if (load_module(ctx, prog, err) == 0) return prog;
    }
  }
  cu_prog_free(ctx, prog);
  return NULL;
}

static kt_bkernel *cu_kernel(kt_bctx *ctx, kt_bprog *prog, const char *name, kt_error *err) {
  use(ctx);
  if (!prog->module && load_module(ctx, prog, err)) return NULL;
  const char *symbol = strcmp(name, prog->name) == 0 ? prog->lowered : name;
  CUfunction f;
  CUresult e = api(ctx)->ModuleGetFunction(&f, prog->module, symbol);
  if (e == CUDA_ERROR_NOT_FOUND)
    return kt_fail(err, "the program has no kernel named '%s'", name), NULL;
  if (e != CUDA_SUCCESS) return kt_cu_fail(err, e, "cuModuleGetFunction"), NULL;
  /* Without opting in, a function's dynamic shared memory is what its static
  ** shared memory leaves of the block's 48 KiB, not 48 KiB: ask the driver
  ** (0, opting in for any, where it does not say). */
  int limit = 0;
  if (api(ctx)->FuncGetAttribute(&limit, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f) !=
      CUDA_SUCCESS || limit < 0)
    limit = 0;
  kt_bkernel *k = kt_alloc(sizeof *k, err);
  if (k) *k = (kt_bkernel){f, prog->module, limit};
  return k;
}

static void cu_kernel_free(kt_bctx *ctx, kt_bkernel *k) {
  (void)ctx; /* the function goes with its module */
  free(k);
}

static kt_kernel_usage cu_kernel_usage(kt_bctx *ctx, kt_bkernel *k) {
  static const CUfunction_attribute attrs[] = {
      CU_FUNC_ATTRIBUTE_NUM_REGS, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
      CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES,
      CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK};
  int64_t v[5];
  use(ctx);
  for (int i = 0; i < 5; i++) {
    int x = 0;
    v[i] = api(ctx)->FuncGetAttribute(&x, attrs[i], k->function) == CUDA_SUCCESS ? x : -1;
  }
  return (kt_kernel_usage){v[0], v[1], v[2], v[3], v[4]};
}

/* ---- launches and events ---- */

/* Without a block size, the largest power of two up to 256 that divides
** the threads in x, and 1 in y and z. */
static size_t default_block(size_t threads, int d) {
  size_t b = 1;
  while (d == 0 && b < 256 && threads % (b * 2) == 0) b *= 2;
  return b;
}

static int launch_shape(const size_t global[3], const size_t local[3], unsigned grid[3],
                        unsigned block[3], kt_error *err) {
  for (int d = 0; d < 3; d++) {
    size_t b = local[0] ? local[d] : default_block(global[d], d);
    if (global[d] % b)
      return kt_fail(err, "the global size %zu in %c is not a multiple of the block size %zu "
                     "(CUDA launches whole blocks)", global[d], "xyz"[d], b);
    if (global[d] / b > UINT32_MAX || b > UINT32_MAX)
      return kt_fail(err, "the global size %zu in %c is too large", global[d], "xyz"[d]);
    grid[d] = (unsigned)(global[d] / b);
    block[d] = (unsigned)b;
  }
  return 0;
}

static int write_symbol(kt_bctx *ctx, kt_bkernel *k, CUstream s, const kt_launch_arg *a,
                        size_t i, kt_fault *fault, kt_error *err) {
  CUdeviceptr ptr;
  size_t size = 0;
  CUresult e = api(ctx)->ModuleGetGlobal(&ptr, &size, k->module, a->symbol);
  if (e == CUDA_ERROR_NOT_FOUND)
    return kt_fail(err, "argument %zu: the program has no __constant__ or __device__ "
                   "variable '%s'", i + 1, a->symbol);
  if (e == CUDA_SUCCESS && a->size > size)
    return kt_fail(err, "argument %zu: the variable '%s' holds %zu bytes, fewer than the "
                   "argument's %zu", i + 1, a->symbol, size, a->size);
  if (e == CUDA_SUCCESS) e = api(ctx)->MemcpyHtoDAsync(ptr, a->bytes, a->size, s);
  if (e == CUDA_SUCCESS) return 0;
  *fault = is_sticky(e) ? KT_FAULT_STICKY : KT_FAULT_LAUNCH;
  return kt_cu_fail(err, e, a->symbol);
}

/* Kernel parameters and dynamic shared memory from the arguments; symbol
** arguments are copied on stream s. */
static int set_args(kt_bctx *ctx, kt_bkernel *k, CUstream s, const kt_launch_arg *args,
                    size_t nargs, void **params, size_t *shared, kt_fault *fault,
                    kt_error *err) {
  size_t np = 0;
  *shared = 0;
  for (size_t i = 0; i < nargs; i++) {
    const kt_launch_arg *a = &args[i];
    if (a->kind == KT_LARG_BUFFER) params[np++] = &a->buf->ptr;
    else if (a->kind == KT_LARG_SCALAR) params[np++] = (void *)a->bytes;
    else if (a->kind == KT_LARG_LOCAL) *shared += a->size;
    else if (write_symbol(ctx, k, s, a, i, fault, err)) return -1;
  }
  return 0;
}

/* Beyond its default limit a kernel must opt in to its dynamic shared memory. */
static int allow_shared(kt_bctx *ctx, kt_bkernel *k, size_t shared, kt_error *err) {
  if (shared <= (size_t)k->shared_limit) return 0;
  CUresult e = shared > INT32_MAX ? CUDA_ERROR_INVALID_VALUE
                                  : api(ctx)->FuncSetAttribute(
                                        k->function,
                                        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        (int)shared);
  if (e != CUDA_SUCCESS) {
    char what[96];
    snprintf(what, sizeof what, "asking for %zu bytes of dynamic shared memory", shared);
    return kt_cu_fail(err, e, what);
  }
  k->shared_limit = (int)shared;
  return 0;
}

static void destroy_event(kt_bctx *ctx, kt_bevent *ev) {
  use(ctx);
  if (ev->start) api(ctx)->EventDestroy(ev->start);
  if (ev->end) api(ctx)->EventDestroy(ev->end);
  free(ev);
}

static void cu_event_free(kt_bctx *ctx, kt_bevent *ev) {
  if (!ev) return;
  if (ev->start && ev->end && ctx->nspare < SPARE_EVENTS) ctx->spare[ctx->nspare++] = ev;
  else destroy_event(ctx, ev);
}

static kt_bevent *new_event(kt_bctx *ctx, kt_error *err) {
  if (ctx->nspare > 0) return ctx->spare[--ctx->nspare];
  kt_bevent *ev = kt_calloc(1, sizeof *ev, err);
  if (!ev) return NULL;
  CUresult e = api(ctx)->EventCreate(&ev->start, CU_EVENT_DEFAULT);
  if (e == CUDA_SUCCESS) e = api(ctx)->EventCreate(&ev->end, CU_EVENT_DEFAULT);
  if (e == CUDA_SUCCESS) return ev;
  destroy_event(ctx, ev);
  return kt_cu_fail(err, e, "cuEventCreate"), NULL;
}

/* The launch between its two events. */
static int enqueue(kt_bctx *ctx, kt_bkernel *k, CUstream s, const unsigned grid[3],
                   const unsigned block[3], size_t shared, void **params, kt_bevent *ev,
                   kt_fault *fault, kt_error *err) {
  const kt_cu_api *cu = api(ctx);
  const char *what = "cuEventRecord";
  CUresult e = ev ? cu->EventRecord(ev->start, s) : CUDA_SUCCESS;
  if (e == CUDA_SUCCESS) {
    what = "cuLaunchKernel";
    e = cu->LaunchKernel(k->function, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                         (unsigned)shared, s, params, NULL);
  }
  if (e == CUDA_SUCCESS && ev) {
    what = "cuEventRecord";
    e = cu->EventRecord(ev->end, s);
  }
  if (e == CUDA_SUCCESS) return 0;
  *fault = is_sticky(e) ? KT_FAULT_STICKY : KT_FAULT_LAUNCH;
  return kt_cu_fail(err, e, what);
}

static int cu_launch(kt_bctx *ctx, int q, kt_bkernel *k, const kt_launch_arg *args,
                     size_t nargs, int dims, const size_t global[3], const size_t local[3],
                     kt_bevent **ev, kt_fault *fault, kt_error *err) {
  (void)dims; /* unused dimensions are 1 */
  *fault = KT_FAULT_LAUNCH;
  CUstream s;
  unsigned grid[3], block[3];
  size_t shared = 0;
  if (kt_cu_enter(ctx, q, &s, err) || launch_shape(global, local, grid, block, err)) return -1;
  void **params = kt_calloc(nargs + 1, sizeof *params, err);
  kt_bevent *event = NULL;
  int rc = params ? 0 : -1;
  if (rc == 0) rc = set_args(ctx, k, s, args, nargs, params, &shared, fault, err);
  if (rc == 0) rc = allow_shared(ctx, k, shared, err);
  if (rc == 0 && ev && !(event = new_event(ctx, err))) rc = -1;
  if (rc == 0) rc = enqueue(ctx, k, s, grid, block, shared, params, event, fault, err);
  free(params);
  if (rc) {
    cu_event_free(ctx, event);
    return -1;
  }
  if (ev) *ev = event;
  *fault = KT_FAULT_NONE;
  return 0;
}

static int finish_stream(kt_bctx *ctx, int q, kt_fault *fault, kt_error *err) {
  if (!ctx->streams[q]) return 0;
  CUresult e = api(ctx)->StreamSynchronize(ctx->streams[q]);
  if (e == CUDA_SUCCESS) return 0;
  *fault = is_sticky(e) ? KT_FAULT_STICKY : KT_FAULT_RUNTIME;
  char what[64];
  snprintf(what, sizeof what, "a kernel on queue %d", q);
  return kt_cu_fail(err, e, what);
}

/* A marker is a launch's pair of events of which only the end is
** recorded: it comes from (and goes back to) the same spares. */
static int cu_marker(kt_bctx *ctx, int q, kt_bevent **ev, kt_error *err) {
  CUstream s;
  if (kt_cu_enter(ctx, q, &s, err) || !(*ev = new_event(ctx, err))) return -1;
  CUresult e = api(ctx)->EventRecord((*ev)->end, s);
  if (e == CUDA_SUCCESS) return 0;
  cu_event_free(ctx, *ev);
  *ev = NULL;
  return kt_cu_fail(err, e, "cuEventRecord");
}

static int cu_queue_wait(kt_bctx *ctx, int q, kt_bevent *ev, kt_error *err) {
  CUstream s;
  if (kt_cu_enter(ctx, q, &s, err)) return -1;
  CUresult e = api(ctx)->StreamWaitEvent(s, ev->end, 0);
  return e == CUDA_SUCCESS ? 0 : kt_cu_fail(err, e, "cuStreamWaitEvent");
}

static int cu_finish(kt_bctx *ctx, int q, kt_fault *fault, kt_error *err) {
  use(ctx);
  return kt_backend_finish(ctx, q, MAX_QUEUES, finish_stream, fault, err);
}

static double cu_event_ns(kt_bctx *ctx, kt_bevent *ev) {
  float ms = 0;
  use(ctx);
  if (api(ctx)->EventSynchronize(ev->end) != CUDA_SUCCESS ||
      api(ctx)->EventElapsedTime(&ms, ev->start, ev->end) != CUDA_SUCCESS)
    return -1;
  return (double)ms * 1e6;
}

/* The meter of the context's GPU, found by its PCI bus id (NVML numbers
** devices its own way). */
static int cu_energy(kt_bctx *ctx, int op, kt_energy_reading *out, kt_error *err) {
  char bus[64];
  CUresult e;
  if (!ctx->meter && (e = api(ctx)->DeviceGetPCIBusId(bus, sizeof bus, ctx->device)))
    return kt_cu_fail(err, e, "cuDeviceGetPCIBusId");
  if (!ctx->meter && !(ctx->meter = kt_energy_meter_new(bus, err))) return -1;
  return kt_energy_meter_op(ctx->meter, (kt_energy_op)op, out, err);
}

/* ---- hardware counters (counters.h) ---- */

static int cu_counters_begin(kt_bctx *ctx, const char *const *names, size_t n, unsigned *passes,
                             kt_error *err) {
  use(ctx);
  if (!ctx->counters && !(ctx->counters = kt_counters_new(ctx->context, ctx->device, err)))
    return -1;
  if (!passes) return kt_counters_begin(ctx->counters, names, n, passes, err);
  pthread_rwlock_wrlock(&ctx->modules); /* until counters_end */
  int rc = kt_counters_begin(ctx->counters, names, n, passes, err);
  if (rc) pthread_rwlock_unlock(&ctx->modules);
  ctx->collecting = rc == 0;
  return rc;
}

static int cu_counters_end(kt_bctx *ctx, double *values, size_t n, unsigned *ranges,
                           kt_error *err) {
  kt_fault fault;
  if (!ctx->collecting) return kt_fail(err, "hardware counters: no collection is going on");
  int rc = cu_finish(ctx, -1, &fault, err);
  use(ctx);
  kt_error eerr;
  int erc = kt_counters_end(ctx->counters, values, n, ranges, rc ? &eerr : err);
  ctx->collecting = false;
  pthread_rwlock_unlock(&ctx->modules);
  return rc ? rc : erc;
}

const kt_backend kt_backend_cuda = {
    .name = "cuda",
    .program_per_kernel = true,
    .load_waits = true,
    .enumerate = kt_cuda_enumerate,
    .open = cu_open,
    .close = cu_close,
    .buffer_new = kt_cu_buffer_new,
    .buffer_free = kt_cu_buffer_free,
    .buffer_write = kt_cu_buffer_write,
    .buffer_read = kt_cu_buffer_read,
    .buffer_copy = kt_cu_buffer_copy,
    .buffer_fill_zero = kt_cu_buffer_fill_zero,
    .compile = cu_compile,
    .prog_free = cu_prog_free,
    .prog_binary = cu_prog_binary,
    .prog_load = cu_prog_load,
    .compile_binary = kt_cuda_compile_binary,
    .kernel = cu_kernel,
    .kernel_free = cu_kernel_free,
    .kernel_usage = cu_kernel_usage,
    .launch = cu_launch,
    .finish = cu_finish,
    .event_ns = cu_event_ns,
    .event_free = cu_event_free,
    .marker = cu_marker,
    .queue_wait = cu_queue_wait,
    .host_memory = kt_cu_host_memory,
    .host_pin = kt_cu_host_pin,
    .energy = cu_energy,
    .counters_begin = cu_counters_begin,
    .counters_end = cu_counters_end,
};

#else

/* Built without cuda.h: a backend that lists no devices, and says why. */
static int cu_enumerate(kt_device_info **list, size_t *n, size_t *cap, const char **why,
                        kt_error *err) {
  (void)list, (void)n, (void)cap, (void)err;
  *why = KT_CUDA_NOT_BUILT;
  return 0;
}

const kt_backend kt_backend_cuda = {.name = "cuda", .enumerate = cu_enumerate};

#endif
