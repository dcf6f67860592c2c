/*
** backend_opencl.c: the OpenCL backend, linked against the ICD loader so
** that every installed platform (PoCL, NVIDIA, ...) is found.
*/
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_errors.h"
#include "device.h"

#define MAX_QUEUES 16

struct kt_bctx {
  cl_device_id device;
  cl_context context;
  cl_command_queue queues[MAX_QUEUES];
  /* Every launch's event until the next finish of its queue, to find
  ** kernels that failed while running (clFinish itself does not say). */
  cl_event *pending[MAX_QUEUES];
  size_t npending[MAX_QUEUES], cappending[MAX_QUEUES];
};

struct kt_bbuf {
  cl_mem mem;
  void *host;   /* zero-copy buffers own the host memory they map */
  void *mapped; /* host buffers: their memory, mapped once asked for */
};

struct kt_bprog {
  cl_program program;
};

struct kt_bkernel {
  cl_kernel kernel;
  kt_kernel_usage usage;
};

struct kt_bevent {
  cl_event event;
};

static int cl_fail(kt_error *err, cl_int e, const char *what) {
  return kt_fail(err, "%s failed: %s (%d)", what, kt_cl_error_name((int)e), (int)e);
}

/* ---- enumeration ---- */

static char *info_string(cl_device_id d, cl_device_info what) {
  size_t size = 0;
  if (clGetDeviceInfo(d, what, 0, NULL, &size) != CL_SUCCESS || size == 0) return NULL;
  char *s = malloc(size + 1);
  if (s && clGetDeviceInfo(d, what, size, s, NULL) != CL_SUCCESS) {
    free(s);
    return NULL;
  }
  if (s) s[size] = '\0';
  return s;
}

static int64_t info_uint(cl_device_id d, cl_device_info what, size_t bytes) {
  uint64_t v = 0;
  if (clGetDeviceInfo(d, what, bytes, &v, NULL) != CL_SUCCESS) return -1;
  if (bytes == 4) return (int64_t)(uint32_t)v;
  return (int64_t)v;
}

static int set_string_info(kt_device_info *dev, const char *key, cl_device_info what,
                           kt_error *err) {
  char *s = info_string((cl_device_id)dev->handle, what);
  int rc = kt_device_set_string(dev, key, s ? s : "", err);
  free(s);
  return rc;
}

static const char *device_type_name(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return "gpu";
  if (t & CL_DEVICE_TYPE_CPU) return "cpu";
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

static int describe_device(kt_device_info *dev, const char *platform, const char *platform_version,
                           kt_error *err) {
  cl_device_id d = dev->handle;
  cl_device_type type = 0;
  clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  size_t dims[3] = {0, 0, 0};
  clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof dims, dims, NULL);
  int64_t dims64[3] = {(int64_t)dims[0], (int64_t)dims[1], (int64_t)dims[2]};
  size_t group = 0;
  clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof group, &group, NULL);
  struct { const char *key; cl_device_info what; size_t bytes; } ints[] = {
      {"compute_units", CL_DEVICE_MAX_COMPUTE_UNITS, 4},
      {"local_memory", CL_DEVICE_LOCAL_MEM_SIZE, 8},
      {"global_memory", CL_DEVICE_GLOBAL_MEM_SIZE, 8},
      {"constant_memory", CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, 8},
      {"max_alloc", CL_DEVICE_MAX_MEM_ALLOC_SIZE, 8},
      {"clock_mhz", CL_DEVICE_MAX_CLOCK_FREQUENCY, 4},
      {"address_bits", CL_DEVICE_ADDRESS_BITS, 4},
      {"timer_resolution_ns", CL_DEVICE_PROFILING_TIMER_RESOLUTION, 8},
  };
  struct { const char *key; cl_device_info what; } strs[] = {
      {"name", CL_DEVICE_NAME}, {"vendor", CL_DEVICE_VENDOR},
      {"driver_version", CL_DRIVER_VERSION}, {"version", CL_DEVICE_VERSION},
      {"c_version", CL_DEVICE_OPENCL_C_VERSION}, {"extensions", CL_DEVICE_EXTENSIONS},
  };
  if (kt_device_set_string(dev, "backend", "opencl", err) ||
      kt_device_set_string(dev, "id", dev->id, err) ||
      kt_device_set_string(dev, "type", device_type_name(type), err) ||
      kt_device_set_string(dev, "platform", platform, err) ||
      kt_device_set_string(dev, "platform_version", platform_version, err) ||
      kt_device_set_int(dev, "max_group_size", (int64_t)group, err) ||
      kt_device_set_sizes(dev, "max_group_dims", dims64, 3, err))
    return -1;
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
    if (set_string_info(dev, strs[i].key, strs[i].what, err)) return -1;
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    if (kt_device_set_int(dev, ints[i].key, info_uint(d, ints[i].what, ints[i].bytes), err))
      return -1;
  return 0;
}

/* The preferred work-group multiple is a kernel property in OpenCL; ask it
** of a trivial kernel so that the device table can show it. */
static int64_t preferred_multiple(cl_device_id d) {
  cl_int e;
  cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  if (e != CL_SUCCESS) return -1;
  const char *src = "__kernel void kt_probe(__global int *a) { a[get_global_id(0)] = 0; }";
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
  size_t multiple = 0;
  if (e == CL_SUCCESS && clBuildProgram(p, 1, &d, "", NULL, NULL) == CL_SUCCESS) {
    cl_kernel k = clCreateKernel(p, "kt_probe", &e);
    if (e == CL_SUCCESS) {
      clGetKernelWorkGroupInfo(k, d, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                               sizeof multiple, &multiple, NULL);
      clReleaseKernel(k);
    }
  }
  if (p) clReleaseProgram(p);
  clReleaseContext(ctx);
  return multiple ? (int64_t)multiple : -1;
}

static int enumerate_platform(cl_platform_id pf, int pi, kt_device_info **list,
                              size_t *n, size_t *cap, kt_error *err) {
  cl_uint nd = 0;
  if (clGetDeviceIDs(pf, CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
    return 0;
  cl_device_id *ids = kt_calloc(nd, sizeof *ids, err);
  if (!ids) return -1;
  clGetDeviceIDs(pf, CL_DEVICE_TYPE_ALL, nd, ids, NULL);
  char platform[256] = "";
  clGetPlatformInfo(pf, CL_PLATFORM_NAME, sizeof platform - 1, platform, NULL);
  char platform_version[256] = ""; /* the compiler's version, for the database (db.h) */
  clGetPlatformInfo(pf, CL_PLATFORM_VERSION, sizeof platform_version - 1, platform_version, NULL);
  int rc = 0;
  for (cl_uint di = 0; di < nd && rc == 0; di++) {
    if ((rc = kt_grow(list, cap, *n + 1, sizeof **list, err))) break;
    kt_device_info *dev = &(*list)[*n];
    memset(dev, 0, sizeof *dev);
    dev->platform = pi;
    dev->index = (int)di;
    dev->handle = ids[di];
    dev->platform_handle = pf;
    snprintf(dev->id, sizeof dev->id, "opencl:%d:%u", pi, di);
    (*n)++;
    rc = describe_device(dev, platform, platform_version, err);
    if (rc == 0)
      rc = kt_device_set_int(dev, "group_multiple", preferred_multiple(ids[di]), err);
  }
  free(ids);
  return rc;
}

static int cl_enumerate(kt_device_info **list, size_t *n, size_t *cap,
                        const char **why, kt_error *err) {
  cl_uint np = 0;
  cl_int e = clGetPlatformIDs(0, NULL, &np);
  if (e != CL_SUCCESS || np == 0) {
    *why = "no OpenCL platform is installed (the ICD loader found none)";
    return 0;
  }
  cl_platform_id *pfs = kt_calloc(np, sizeof *pfs, err);
  if (!pfs) return -1;
  clGetPlatformIDs(np, pfs, NULL);
  int rc = 0;
  for (cl_uint pi = 0; pi < np && rc == 0; pi++)
    rc = enumerate_platform(pfs[pi], (int)pi, list, n, cap, err);
  free(pfs);
  return rc;
}

/* ---- context ---- */

static void cl_close(kt_bctx *ctx) {
  if (!ctx) return;
  for (int q = 0; q < MAX_QUEUES; q++) {
    if (ctx->queues[q]) {
      clFinish(ctx->queues[q]);
      clReleaseCommandQueue(ctx->queues[q]);
    }
    for (size_t i = 0; i < ctx->npending[q]; i++) clReleaseEvent(ctx->pending[q][i]);
    free(ctx->pending[q]);
  }
  if (ctx->context) clReleaseContext(ctx->context);
  free(ctx);
}

static kt_bctx *cl_open(const kt_device_info *dev, kt_error *err) {
  kt_bctx *ctx = kt_calloc(1, sizeof *ctx, err);
  if (!ctx) return NULL;
  cl_int e;
  ctx->device = dev->handle;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                   (cl_context_properties)dev->platform_handle, 0};
  ctx->context = clCreateContext(props, 1, &ctx->device, NULL, NULL, &e);
  if (e != CL_SUCCESS) {
    cl_fail(err, e, "clCreateContext");
    free(ctx);
    return NULL;
  }
  return ctx;
}

static cl_command_queue get_queue(kt_bctx *ctx, int q, kt_error *err) {
  if (q < 0 || q >= MAX_QUEUES)
    return kt_fail(err, "queue %d is out of range (0 to %d)", q, MAX_QUEUES - 1), NULL;
  if (!ctx->queues[q]) {
    cl_int e;
    ctx->queues[q] = clCreateCommandQueue(ctx->context, ctx->device,
                                          CL_QUEUE_PROFILING_ENABLE, &e);
    if (e != CL_SUCCESS) {
      ctx->queues[q] = NULL;
      cl_fail(err, e, "clCreateCommandQueue");
    }
  }
  return ctx->queues[q];
}

/* ---- buffers ---- */

static kt_bbuf *cl_buffer_new(kt_bctx *ctx, size_t bytes, kt_placement place,
                              kt_access access, kt_error *err) {
  if (place == KT_PLACE_MANAGED)
    return kt_fail(err, "placement 'managed' needs the CUDA backend"), NULL;
  kt_bbuf *b = kt_calloc(1, sizeof *b, err);
  if (!b) return NULL;
  cl_mem_flags flags = access == KT_READ    ? CL_MEM_READ_ONLY
                       : access == KT_WRITE ? CL_MEM_WRITE_ONLY
                                            : CL_MEM_READ_WRITE;
  if (place == KT_PLACE_HOST) flags |= CL_MEM_ALLOC_HOST_PTR;
  if (place == KT_PLACE_ZERO_COPY) {
    b->host = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    if (!b->host) {
      free(b);
      return kt_fail(err, "out of host memory for a zero-copy buffer of %zu bytes", bytes), NULL;
    }
    flags |= CL_MEM_USE_HOST_PTR;
  }
  cl_int e;
  b->mem = clCreateBuffer(ctx->context, flags, bytes, b->host, &e);
  if (e != CL_SUCCESS) {
    free(b->host);
    free(b);
    cl_fail(err, e, "clCreateBuffer");
    return NULL;
  }
  return b;
}

static void cl_buffer_free(kt_bctx *ctx, kt_bbuf *b) {
  if (!b) return;
  if (b->mapped && ctx->queues[0]) {
    clEnqueueUnmapMemObject(ctx->queues[0], b->mem, b->mapped, 0, NULL, NULL);
    clFinish(ctx->queues[0]);
  }
  clReleaseMemObject(b->mem);
  free(b->host);
  free(b);
}

/* CL_MEM_ALLOC_HOST_PTR memory, mapped for good: what drivers pin. */
static void *cl_host_memory(kt_bctx *ctx, kt_bbuf *b, kt_error *err) {
  if (b->mapped) return b->mapped;
  cl_command_queue queue = get_queue(ctx, 0, err);
  size_t bytes = 0;
  if (!queue) return NULL;
  cl_int e = clGetMemObjectInfo(b->mem, CL_MEM_SIZE, sizeof bytes, &bytes, NULL);
  if (e == CL_SUCCESS)
    b->mapped = clEnqueueMapBuffer(queue, b->mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                   NULL, NULL, &e);
  if (e != CL_SUCCESS) cl_fail(err, e, "clEnqueueMapBuffer");
  return e == CL_SUCCESS ? b->mapped : NULL;
}

static int cl_buffer_write(kt_bctx *ctx, int q, kt_bbuf *b, size_t off, size_t bytes,
                           const void *src, bool blocking, kt_error *err) {
  cl_command_queue queue = get_queue(ctx, q, err);
  if (!queue) return -1;
  cl_int e = clEnqueueWriteBuffer(queue, b->mem, blocking ? CL_TRUE : CL_FALSE, off,
                                  bytes, src, 0, NULL, NULL);
  return e == CL_SUCCESS ? 0 : cl_fail(err, e, "clEnqueueWriteBuffer");
}

static int cl_buffer_read(kt_bctx *ctx, int q, kt_bbuf *b, size_t off, size_t bytes,
                          void *dst, bool blocking, kt_error *err) {
  cl_command_queue queue = get_queue(ctx, q, err);
  if (!queue) return -1;
  cl_int e = clEnqueueReadBuffer(queue, b->mem, blocking ? CL_TRUE : CL_FALSE, off,
                                 bytes, dst, 0, NULL, NULL);
  return e == CL_SUCCESS ? 0 : cl_fail(err, e, "clEnqueueReadBuffer");
}

static int cl_buffer_copy(kt_bctx *ctx, int q, kt_bbuf *dst, size_t doff, kt_bbuf *src,
                          size_t soff, size_t bytes, kt_error *err) {
  cl_command_queue queue = get_queue(ctx, q, err);
  if (!queue) return -1;
  cl_int e = clEnqueueCopyBuffer(queue, src->mem, dst->mem, soff, doff, bytes, 0, NULL, NULL);
  if (e == CL_MEM_COPY_OVERLAP)
    return kt_fail(err, "clEnqueueCopyBuffer failed: CL_MEM_COPY_OVERLAP (-8): bytes %zu to %zu "
                   "of a buffer copied onto its bytes %zu to %zu", soff, soff + bytes, doff,
                   doff + bytes);
  return e == CL_SUCCESS ? 0 : cl_fail(err, e, "clEnqueueCopyBuffer");
}

static int cl_buffer_fill_zero(kt_bctx *ctx, int q, kt_bbuf *b, size_t off, size_t bytes,
                               kt_error *err) {
  cl_command_queue queue = get_queue(ctx, q, err);
  if (!queue) return -1;
  cl_uchar zero = 0;
  cl_int e = clEnqueueFillBuffer(queue, b->mem, &zero, 1, off, bytes, 0, NULL, NULL);
  return e == CL_SUCCESS ? 0 : cl_fail(err, e, "clEnqueueFillBuffer");
}

/* ---- programs and kernels ---- */

static char *build_log(cl_program p, cl_device_id d) {
  size_t size = 0;
  clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
  char *log = malloc(size + 1);
  if (!log) return NULL;
  log[0] = '\0';
  if (size) clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, size, log, NULL);
  log[size] = '\0';
  return log;
}

/* The program built (or not: e) as a kt_bprog, with its build log. */
static kt_bprog *built(kt_bctx *ctx, cl_program p, cl_int e, char **log, kt_error *err) {
  *log = build_log(p, ctx->device); /* the errors, or a successful build's warnings */
  if (e != CL_SUCCESS) {
    clReleaseProgram(p);
    cl_fail(err, e, "clBuildProgram");
    return NULL;
  }
  kt_bprog *prog = kt_alloc(sizeof *prog, err);
  if (!prog) {
    clReleaseProgram(p);
    free(*log);
    *log = NULL;
    return NULL;
  }
  prog->program = p;
  return prog;
}

static kt_bprog *cl_compile(kt_bctx *ctx, const char *source, const char *options,
                            const char *name, char **log, kt_error *err) {
  (void)name; /* an OpenCL program offers all its kernels */
  cl_int e;
  *log = NULL;
  cl_program p = clCreateProgramWithSource(ctx->context, 1, &source, NULL, &e);
  if (e != CL_SUCCESS) return cl_fail(err, e, "clCreateProgramWithSource"), NULL;
  e = clBuildProgram(p, 1, &ctx->device, options ? options : "", NULL, NULL);
  return built(ctx, p, e, log, err);
}

/* The program's binary for its one device. */
static int cl_prog_binary(kt_bctx *ctx, kt_bprog *prog, unsigned char **bytes, size_t *size,
                          kt_error *err) {
  (void)ctx;
  *bytes = NULL;
  *size = 0;
  cl_int e = clGetProgramInfo(prog->program, CL_PROGRAM_BINARY_SIZES, sizeof *size, size, NULL);
  if (e != CL_SUCCESS) return cl_fail(err, e, "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)");
  if (*size == 0) return kt_fail(err, "the OpenCL platform gives no program binary");
  if (!(*bytes = kt_alloc(*size, err))) return -1;
  e = clGetProgramInfo(prog->program, CL_PROGRAM_BINARIES, sizeof *bytes, bytes, NULL);
  if (e == CL_SUCCESS) return 0;
  free(*bytes);
  *bytes = NULL;
  return cl_fail(err, e, "clGetProgramInfo(CL_PROGRAM_BINARIES)");
}

static kt_bprog *cl_prog_load(kt_bctx *ctx, const unsigned char *bytes, size_t size,
                              const char *options, const char *name, char **log,
                              kt_error *err) {
  (void)name;
  cl_int e, status = CL_SUCCESS;
  *log = NULL;
  cl_program p = clCreateProgramWithBinary(ctx->context, 1, &ctx->device, &size, &bytes,
                                           &status, &e);
  if (e == CL_SUCCESS && status != CL_SUCCESS) {
    clReleaseProgram(p);
    e = status;
  }
  if (e != CL_SUCCESS) return cl_fail(err, e, "clCreateProgramWithBinary"), NULL;
  e = clBuildProgram(p, 1, &ctx->device, options ? options : "", NULL, NULL);
  return built(ctx, p, e, log, err);
}

static void cl_prog_free(kt_bctx *ctx, kt_bprog *prog) {
  (void)ctx;
  if (!prog) return;
  clReleaseProgram(prog->program);
  free(prog);
}

static int64_t work_group_info(cl_kernel k, cl_device_id d, cl_kernel_work_group_info what,
                               size_t bytes) {
  uint64_t v = 0;
  if (clGetKernelWorkGroupInfo(k, d, what, bytes, &v, NULL) != CL_SUCCESS) return -1;
  return (int64_t)v;
}

/* OpenCL tells local (shared) and private memory and the work-group
** limit; registers and constant memory stay unknown. */
static kt_kernel_usage usage_of(cl_kernel k, cl_device_id d) {
  kt_kernel_usage u = KT_KERNEL_USAGE_UNKNOWN;
  u.shared_bytes = work_group_info(k, d, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(cl_ulong));
  u.local_bytes = work_group_info(k, d, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof(cl_ulong));
  u.max_threads = work_group_info(k, d, CL_KERNEL_WORK_GROUP_SIZE, sizeof(size_t));
  return u;
}

/* The program's kernels, ", " between them (NULL where it does not say). */
static char *kernel_names(cl_program p) {
  size_t size = 0;
  if (clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &size) != CL_SUCCESS || size < 2)
    return NULL;
  char *got = malloc(size + 1), *names = malloc(2 * size + 1);
  if (got && names && clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, size, got, NULL) == CL_SUCCESS) {
    got[size] = 0;
    size_t n = 0;
    for (const char *c = got; *c; c++) { /* OpenCL separates them with ';' */
      if (*c == ';') names[n++] = ',', names[n++] = ' ';
      else names[n++] = *c;
    }
    names[n] = 0;
    free(got);
    return names;
  }
  free(got);
  free(names);
  return NULL;
}

/* Why the program has no kernel of that name: a kernel named as an OpenCL
** C built-in function (step, clamp, ...) overloads it, and PoCL's compiler
** renames it _cl_<name>; else a misspelling, shown beside the names it has. */
static int no_kernel(cl_program p, const char *name, kt_error *err) {
  char *names = kernel_names(p);
  char renamed[300];
  snprintf(renamed, sizeof renamed, "_cl_%s", name);
  size_t len = strlen(renamed);
  bool builtin = false;
  for (const char *n = names; n && *n; n += strcspn(n, ",") + (n[strcspn(n, ",")] ? 2 : 0))
    builtin |= strcspn(n, ",") == len && !strncmp(n, renamed, len);
  int rc = builtin ? kt_fail(err, "the program has no kernel named '%s': %s is the name of an "
                             "OpenCL C built-in function, and the compiler named the kernel %s "
                             "instead; give it another name", name, name, renamed)
           : names ? kt_fail(err, "the program has no kernel named '%s' (its kernels: %s)", name,
                             names)
                   : kt_fail(err, "the program has no kernel named '%s'", name);
  free(names);
  return rc;
}

static kt_bkernel *cl_kernel_get(kt_bctx *ctx, kt_bprog *prog, const char *name,
                             kt_error *err) {
  cl_int e;
  cl_kernel k = clCreateKernel(prog->program, name, &e);
  if (e == CL_INVALID_KERNEL_NAME) return no_kernel(prog->program, name, err), NULL;
  if (e != CL_SUCCESS) return cl_fail(err, e, "clCreateKernel"), NULL;
  kt_bkernel *bk = kt_alloc(sizeof *bk, err);
  if (!bk) {
    clReleaseKernel(k);
    return NULL;
  }
  bk->kernel = k;
  bk->usage = usage_of(k, ctx->device);
  return bk;
}

static void cl_kernel_free(kt_bctx *ctx, kt_bkernel *k) {
  (void)ctx;
  if (!k) return;
  clReleaseKernel(k->kernel);
  free(k);
}

static kt_kernel_usage cl_kernel_usage(kt_bctx *ctx, kt_bkernel *k) {
  (void)ctx;
  return k->usage;
}

/* ---- launches and events ---- */

/* Returns -1 with *fault set when an argument cannot be set. */
static int set_args(cl_kernel k, const kt_launch_arg *args, size_t nargs, kt_fault *fault,
                    kt_error *err) {
  cl_uint declared;
  size_t given = 0;
  for (size_t i = 0; i < nargs; i++) given += args[i].kind != KT_LARG_SYMBOL;
  if (given == nargs &&
      clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof declared, &declared, NULL) == CL_SUCCESS &&
      declared != nargs)
    return kt_fail(err, "the kernel declares %u parameters but is given %zu arguments",
                   (unsigned)declared, nargs);
  for (size_t i = 0; i < nargs; i++) {
    cl_int e;
    switch (args[i].kind) {
      case KT_LARG_SYMBOL:
        *fault = KT_FAULT_FATAL; /* the same for every configuration */
        return kt_fail(err, "argument %zu: the __constant__ symbol '%s' needs the CUDA backend "
                       "(in OpenCL, pass a __constant pointer argument)", i + 1, args[i].symbol);
      case KT_LARG_BUFFER:
        e = clSetKernelArg(k, (cl_uint)i, sizeof(cl_mem), &args[i].buf->mem);
        break;
      case KT_LARG_SCALAR:
        e = clSetKernelArg(k, (cl_uint)i, args[i].size, args[i].bytes);
        break;
      default:
        e = clSetKernelArg(k, (cl_uint)i, args[i].size, NULL);
        break;
    }
    if (e != CL_SUCCESS)
      return kt_fail(err, "argument %zu: clSetKernelArg failed: %s (%d)", i + 1,
                     kt_cl_error_name((int)e), (int)e);
  }
  return 0;
}

static int cl_launch(kt_bctx *ctx, int q, kt_bkernel *k, const kt_launch_arg *args,
                     size_t nargs, int dims, const size_t global[3],
                     const size_t local[3], kt_bevent **ev, kt_fault *fault,
                     kt_error *err) {
  *fault = KT_FAULT_LAUNCH;
  cl_command_queue queue = get_queue(ctx, q, err);
  if (!queue) return -1;
  if (set_args(k->kernel, args, nargs, fault, err)) return -1;
  if (kt_grow(&ctx->pending[q], &ctx->cappending[q], ctx->npending[q] + 1,
              sizeof(cl_event), err)) {
    *fault = KT_FAULT_FATAL;
    return -1;
  }
  cl_event event;
  bool any_local = local[0] > 0;
  cl_int e = clEnqueueNDRangeKernel(queue, k->kernel, (cl_uint)dims, NULL, global,
                                    any_local ? local : NULL, 0, NULL, &event);
  if (e != CL_SUCCESS) return cl_fail(err, e, "clEnqueueNDRangeKernel");
  ctx->pending[q][ctx->npending[q]++] = event;
  if (ev) {
    *ev = kt_alloc(sizeof **ev, err);
    if (!*ev) {
      *fault = KT_FAULT_FATAL;
      return -1;
    }
    clRetainEvent(event);
    (*ev)->event = event;
  }
  *fault = KT_FAULT_NONE;
  return 0;
}

/* A command that failed while running leaves the context in a state that
** OpenCL does not define (NVIDIA's refuses all later work): such faults are
** sticky, so that the next configuration runs in a fresh context. */
static int finish_queue(kt_bctx *ctx, int q, kt_fault *fault, kt_error *err) {
  if (!ctx->queues[q]) return 0;
  cl_int e = clFinish(ctx->queues[q]);
  int rc = 0;
  if (e != CL_SUCCESS) {
    *fault = KT_FAULT_STICKY;
    rc = cl_fail(err, e, "clFinish");
  }
  for (size_t i = 0; i < ctx->npending[q]; i++) {
    cl_int status = CL_COMPLETE;
    clGetEventInfo(ctx->pending[q][i], CL_EVENT_COMMAND_EXECUTION_STATUS,
                   sizeof status, &status, NULL);
    if (status < 0 && rc == 0) {
      *fault = KT_FAULT_STICKY;
      rc = kt_fail(err, "the kernel failed while running: %s (%d)",
                   kt_cl_error_name((int)status), (int)status);
    }
    clReleaseEvent(ctx->pending[q][i]);
  }
  ctx->npending[q] = 0;
  return rc;
}

static int cl_marker(kt_bctx *ctx, int q, kt_bevent **ev, kt_error *err) {
  cl_command_queue queue = get_queue(ctx, q, err);
  if (!queue || !(*ev = kt_alloc(sizeof **ev, err))) return -1;
  cl_int e = clEnqueueMarkerWithWaitList(queue, 0, NULL, &(*ev)->event);
  if (e == CL_SUCCESS) return 0;
  free(*ev);
  *ev = NULL;
  return cl_fail(err, e, "clEnqueueMarkerWithWaitList");
}

static int cl_queue_wait(kt_bctx *ctx, int q, kt_bevent *ev, kt_error *err) {
  cl_command_queue queue = get_queue(ctx, q, err);
  if (!queue) return -1;
  cl_int e = clEnqueueBarrierWithWaitList(queue, 1, &ev->event, NULL);
  return e == CL_SUCCESS ? 0 : cl_fail(err, e, "clEnqueueBarrierWithWaitList");
}

static int cl_finish(kt_bctx *ctx, int q, kt_fault *fault, kt_error *err) {
  return kt_backend_finish(ctx, q, MAX_QUEUES, finish_queue, fault, err);
}

static double cl_event_ns(kt_bctx *ctx, kt_bevent *ev) {
  (void)ctx;
  cl_ulong start = 0, end = 0;
  if (clWaitForEvents(1, &ev->event) != CL_SUCCESS) return -1;
  if (clGetEventProfilingInfo(ev->event, CL_PROFILING_COMMAND_START, sizeof start,
                              &start, NULL) != CL_SUCCESS ||
      clGetEventProfilingInfo(ev->event, CL_PROFILING_COMMAND_END, sizeof end, &end,
                              NULL) != CL_SUCCESS)
    return -1;
  return end >= start ? (double)(end - start) : -1;
}

static void cl_event_free(kt_bctx *ctx, kt_bevent *ev) {
  (void)ctx;
  if (!ev) return;
  clReleaseEvent(ev->event);
  free(ev);
}

const kt_backend kt_backend_opencl = {
    .name = "opencl",
    .enumerate = cl_enumerate,
    .open = cl_open,
    .close = cl_close,
    .buffer_new = cl_buffer_new,
    .buffer_free = cl_buffer_free,
    .buffer_write = cl_buffer_write,
    .buffer_read = cl_buffer_read,
    .buffer_copy = cl_buffer_copy,
    .buffer_fill_zero = cl_buffer_fill_zero,
    .compile = cl_compile,
    .prog_free = cl_prog_free,
    .prog_binary = cl_prog_binary,
    .prog_load = cl_prog_load,
    .kernel = cl_kernel_get,
    .kernel_free = cl_kernel_free,
    .kernel_usage = cl_kernel_usage,
    .launch = cl_launch,
    .finish = cl_finish,
    .event_ns = cl_event_ns,
    .event_free = cl_event_free,
    .marker = cl_marker,
    .queue_wait = cl_queue_wait,
    .host_memory = cl_host_memory,
};
