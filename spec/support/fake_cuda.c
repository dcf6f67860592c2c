/*
** fake_cuda.c: a stand-in for libcuda.so.1, for specs on machines without
** a GPU. It serves the driver API the CUDA backend loads, on host memory:
** one device ("Fake GPU", compute capability 9.0; FAKE_CUDA_DEVICES=N: N
** alike, device d on PCI bus d), allocations, copies,
** modules, streams and events that work, and kernels that do nothing,
** except that a launch of blocks of 7 threads faults the context with
** CUDA_ERROR_ILLEGAL_ADDRESS, as an out-of-bounds kernel would, until the
** context is destroyed. With FAKE_CUDA_CONTEXTS=N in the environment it
** creates N contexts and refuses more, as a driver that will not recover
** in this process would. A module whose image names `fake_abort_on_get`
** (a variable of that name) aborts the process when a kernel is taken
** from it, as a driver that crashes there would. A module whose image names
** `fake_static_shared` gives its kernels 16 KiB of static shared memory; as
** the driver does, a kernel takes at most 48 KiB of shared memory in all
** (static and dynamic) unless it opts in to more dynamic shared memory, up
** to the device's 99 KiB per block (the launch or the opt-in fails with
** CUDA_ERROR_INVALID_VALUE), and a grid at most 65535 blocks in y and z. The kernels of
** a module whose image names `fake_scribble` write 0xff over the first 4 bytes of their
** first argument (a pointer), as a kernel writing through a const pointer would; ktlua's
** own inputs' check, `ktlua_unchanged` (core/eval/verify_device.c), does what its source says.
** A copy to the device whose data starts with the 16 bytes "fake abort copy" (and its NUL) aborts
** the process, as a driver that crashes in the middle of a transfer would. With
** FAKE_CUDA_NO_PIN in the environment, page-locking memory (cuMemHostRegister without flags)
** fails, as where no more memory may be locked.
** Under AddressSanitizer, what the backend forgets to free shows up as leaks here.
**
** Built by spec/cuda_spec.lua: cc -shared -fPIC -o libcuda.so.1 fake_cuda.c
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long devptr;
typedef int result;

enum { OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, NOT_FOUND = 500, ILLEGAL_ADDRESS = 700 };

/* A faulting launch leaves the error pending until something waits for
** the device; from then on it is sticky until the context goes. */
static result pending, fault;

static result wait_device(void) {
  if (pending) fault = pending;
  pending = OK;
  return fault;
}

enum { SHARED_PER_BLOCK = 49152, SHARED_OPT_IN = 101376, STATIC_SHARED = 16384 };

typedef struct function { char name[256]; int static_shared, max_dynamic, scribble; } function;
typedef struct module {
  function functions[64];
  int nfunctions;
  char global[256];
  int abort_on_get, static_shared, scribble;
} module;

static result cuInit(unsigned flags) { return flags ? INVALID_VALUE : OK; }
static result cuDriverGetVersion(int *v) { *v = 13000; return OK; }

static result cuGetErrorName(result e, const char **s) {
  *s = e == ILLEGAL_ADDRESS ? "CUDA_ERROR_ILLEGAL_ADDRESS" : e == INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE"
     : e == NOT_FOUND ? "CUDA_ERROR_NOT_FOUND" : e == OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY" : "CUDA_ERROR_UNKNOWN";
  return OK;
}

static result cuGetErrorString(result e, const char **s) {
  *s = e == ILLEGAL_ADDRESS ? "an illegal memory access was encountered" : "fake error";
  return OK;
}

/* FAKE_CUDA_DEVICES=N (at most 9): that many devices alike, on buses 0 to N - 1. */
static int devices(void) {
  const char *n = getenv("FAKE_CUDA_DEVICES");
  return n && atoi(n) > 1 && atoi(n) < 10 ? atoi(n) : 1;
}

static result cuDeviceGet(int *d, int ordinal) { *d = ordinal; return ordinal >= 0 && ordinal < devices() ? OK : INVALID_VALUE; }
static result cuDeviceGetCount(int *n) { *n = devices(); return OK; }
static result cuDeviceGetName(char *s, int len, int d) { (void)d; snprintf(s, (size_t)len, "Fake GPU"); return OK; }
static result cuDeviceTotalMem(size_t *b, int d) { (void)d; *b = (size_t)1 << 30; return OK; }
static result cuDeviceGetPCIBusId(char *s, int len, int d) { snprintf(s, (size_t)len, "0000:0%d:00.0", d); return OK; }

static result cuDeviceGetAttribute(int *v, int attr, int d) {
  static const int values[][2] = {
      {1, 1024}, {2, 1024}, {3, 1024}, {4, 64}, {5, 2147483647}, {6, 65535}, {7, 65535}, {8, 49152},
      {9, 65536}, {10, 32}, {12, 65536}, {13, 1500000}, {16, 4}, {18, 0}, {19, 1}, {32, 0},
      {36, 2000000}, {37, 4096}, {38, 4194304}, {39, 2048}, {40, 2}, {75, 9}, {76, 0},
      {81, 102400}, {82, 65536}, {83, 1}, {89, 1}, {97, 101376}};
  (void)d;
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
    if (values[i][0] == attr) { *v = values[i][1]; return OK; }
  return INVALID_VALUE;
}

static result cuCtxCreate(void **c, unsigned flags, int d) {
  static int created;
  const char *most = getenv("FAKE_CUDA_CONTEXTS");
  (void)flags, (void)d;
  if (most && created >= atoi(most)) return OUT_OF_MEMORY;
  created++;
  *c = malloc(1);
  return OK;
}
static result cuCtxDestroy(void *c) { free(c); pending = fault = OK; return OK; }
static result cuCtxSetCurrent(void *c) { (void)c; return OK; }
static result cuCtxSynchronize(void) { return wait_device(); }

static result cuMemGetInfo(size_t *free_bytes, size_t *total) { *free_bytes = *total = (size_t)1 << 30; return OK; }
static result allocate(devptr *p, size_t n) { void *m = malloc(n); *p = (devptr)(uintptr_t)m; return m ? OK : OUT_OF_MEMORY; }
static result cuMemAlloc(devptr *p, size_t n) { return fault ? fault : allocate(p, n); }
static result cuMemAllocManaged(devptr *p, size_t n, unsigned flags) { (void)flags; return allocate(p, n); }
static result cuMemFree(devptr p) { free((void *)(uintptr_t)p); return fault; }
static result cuMemHostAlloc(void **p, size_t n, unsigned flags) { (void)flags; return (*p = malloc(n)) ? OK : OUT_OF_MEMORY; }
static result cuMemFreeHost(void *p) { free(p); return OK; }
static result cuMemHostRegister(void *p, size_t n, unsigned flags) {
  (void)p, (void)n;
  return flags == 0 && getenv("FAKE_CUDA_NO_PIN") ? OUT_OF_MEMORY : OK;
}
static result cuMemHostUnregister(void *p) { (void)p; return OK; }
static result cuMemHostGetDevicePointer(devptr *d, void *p, unsigned flags) { (void)flags; *d = (devptr)(uintptr_t)p; return OK; }

static result cuMemcpyHtoDAsync(devptr d, const void *s, size_t n, void *st) {
  static const char abort_copy[16] = "fake abort copy";
  (void)st;
  if (n >= sizeof abort_copy && memcmp(s, abort_copy, sizeof abort_copy) == 0) abort();
  if (!fault) memcpy((void *)(uintptr_t)d, s, n);
  return fault;
}

static result cuMemcpyDtoHAsync(void *d, devptr s, size_t n, void *st) {
  (void)st;
  if (!fault) memcpy(d, (const void *)(uintptr_t)s, n);
  return fault;
}

/* Copies on the device that ran, for the stand-in NVML's energy counter too. */
unsigned long long fake_cuda_copies;

static result cuMemcpyDtoDAsync(devptr d, devptr s, size_t n, void *st) {
  (void)st;
  if (!fault) memcpy((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n), fake_cuda_copies++;
  return fault;
}

static result cuMemsetD8Async(devptr d, unsigned char v, size_t n, void *st) {
  (void)st;
  if (!fault) memset((void *)(uintptr_t)d, v, n);
  return fault;
}

/* The image's size: NVRTC's PTX is text; a cubin is a 64-bit ELF file,
** whose section headers come last. */
static size_t image_size(const unsigned char *p) {
  if (memcmp(p, "\x7f" "ELF", 4) != 0) return strlen((const char *)p);
  uint64_t shoff;
  uint16_t shentsize, shnum;
  memcpy(&shoff, p + 0x28, sizeof shoff);
  memcpy(&shentsize, p + 0x3a, sizeof shentsize);
  memcpy(&shnum, p + 0x3c, sizeof shnum);
  return (size_t)shoff + (size_t)shentsize * shnum;
}

static int names(const void *image, const char *what) {
  const unsigned char *p = image;
  size_t size = image_size(p), n = strlen(what);
  for (size_t i = 0; i + n <= size; i++)
    if (memcmp(p + i, what, n) == 0) return 1;
  return 0;
}

static result cuModuleLoadDataEx(void **m, const void *image, unsigned n, int *o, void **v) {
  (void)n, (void)o, (void)v;
  module *mod = calloc(1, sizeof(module));
  if (!mod) return OUT_OF_MEMORY;
  mod->abort_on_get = names(image, "fake_abort_on_get");
  mod->static_shared = names(image, "fake_static_shared") ? STATIC_SHARED : 0;
  mod->scribble = names(image, "fake_scribble");
  *m = mod;
  return OK;
}

static result cuModuleUnload(void *m) { free(m); return OK; }

static result cuModuleGetFunction(void **f, void *m, const char *name) {
  module *mod = m;
  if (mod->abort_on_get) abort();
  if (mod->nfunctions == 64) return OUT_OF_MEMORY;
  function *fn = &mod->functions[mod->nfunctions++];
  snprintf(fn->name, sizeof fn->name, "%s", name);
  fn->static_shared = mod->static_shared;
  fn->scribble = mod->scribble;
  fn->max_dynamic = SHARED_PER_BLOCK - mod->static_shared;
  *f = fn;
  return OK;
}

static result cuModuleGetGlobal(devptr *d, size_t *n, void *m, const char *name) {
  (void)name;
  *d = (devptr)(uintptr_t)((module *)m)->global;
  *n = sizeof ((module *)m)->global;
  return OK;
}

/* 0: threads per block, 1: static shared bytes, 4: registers, 8: dynamic shared bytes allowed. */
static result cuFuncGetAttribute(int *v, int attr, void *f) {
  const function *fn = f;
  *v = attr == 0 ? 1024 : attr == 1 ? fn->static_shared : attr == 4 ? 16 : attr == 8 ? fn->max_dynamic : 0;
  return OK;
}

static result cuFuncSetAttribute(void *f, int attr, int v) {
  function *fn = f;
  if (attr != 8 || v < 0 || v + fn->static_shared > SHARED_OPT_IN) return INVALID_VALUE;
  fn->max_dynamic = v;
  return OK;
}

#define DEVICE_POINTER(param) ((unsigned char *)(uintptr_t)*(devptr *)(param))

/* ktlua_unchanged(a, aoff, b, boff, n, mode, flag, mark): sets *flag to mark when n bytes
** of a + aoff differ from b + boff's (modes 0 and 1: bytes, words), or from the zones'
** pattern (modes 2 and 3). */
static void unchanged(void **p) {
  const unsigned char *a = DEVICE_POINTER(p[0]) + *(unsigned long long *)p[1];
  const unsigned char *b = DEVICE_POINTER(p[2]) + *(unsigned long long *)p[3];
  unsigned long long n = *(unsigned long long *)p[4];
  int mode = *(int *)p[5];
  for (unsigned long long i = 0; i < n; i++)
    if (mode >= 2 ? a[i] != (unsigned char)(0xA5 ^ (i * 37)) : a[i] != b[i]) {
      *(unsigned *)(void *)DEVICE_POINTER(p[6]) = *(unsigned *)p[7];
      return;
    }
}

/* Launches that ran, for the stand-in NVML's energy counter (fake_nvml.c). */
unsigned long long fake_cuda_launches; /* and by the stand-in CUPTI (fake_cupti.c) */

static result cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz, unsigned shared, void *st, void **params, void **extra) {
  (void)gx, (void)by, (void)bz, (void)st, (void)extra;
  if (!fault && (shared > (unsigned)((const function *)f)->max_dynamic || gy > 65535 || gz > 65535))
    return INVALID_VALUE;
  if (!fault && bx == 7) pending = ILLEGAL_ADDRESS;
  if (!fault && strcmp(((const function *)f)->name, "ktlua_unchanged") == 0) unchanged(params);
  if (!fault && ((const function *)f)->scribble) memset(DEVICE_POINTER(params[0]), 0xff, 4);
  if (!fault) fake_cuda_launches++;
  return fault;
}

static result cuStreamCreate(void **s, unsigned flags) { (void)flags; *s = malloc(1); return OK; }
static result cuStreamDestroy(void *s) { free(s); return OK; }
static result cuStreamSynchronize(void *s) { (void)s; return wait_device(); }
static result cuEventCreate(void **e, unsigned flags) { (void)flags; *e = malloc(1); return fault; }
static result cuEventRecord(void *e, void *s) { (void)e, (void)s; return fault; }
static result cuEventSynchronize(void *e) { (void)e; return wait_device(); }
static result cuEventElapsedTime(float *ms, void *a, void *b) { (void)a, (void)b; *ms = 0.25f; return fault; }
static result cuEventDestroy(void *e) { free(e); return OK; }
static result cuStreamWaitEvent(void *s, void *e, unsigned flags) { (void)s, (void)e, (void)flags; return fault; }

#define FN(name) {#name, (void *)name}
static const struct { const char *name; void *fn; } functions[] = {
    FN(cuInit), FN(cuDriverGetVersion), FN(cuGetErrorName), FN(cuGetErrorString), FN(cuDeviceGet),
    FN(cuDeviceGetCount), FN(cuDeviceGetName), FN(cuDeviceGetAttribute), FN(cuDeviceTotalMem),
    FN(cuDeviceGetPCIBusId), FN(cuCtxCreate), FN(cuCtxDestroy), FN(cuCtxSetCurrent),
    FN(cuCtxSynchronize), FN(cuMemGetInfo), FN(cuMemAlloc), FN(cuMemFree), FN(cuMemAllocManaged),
    FN(cuMemHostAlloc), FN(cuMemFreeHost), FN(cuMemHostRegister), FN(cuMemHostUnregister),
    FN(cuMemHostGetDevicePointer), FN(cuMemcpyHtoDAsync), FN(cuMemcpyDtoHAsync),
    FN(cuMemcpyDtoDAsync), FN(cuMemsetD8Async), FN(cuModuleLoadDataEx), FN(cuModuleUnload),
    FN(cuModuleGetFunction), FN(cuModuleGetGlobal), FN(cuFuncGetAttribute), FN(cuFuncSetAttribute),
    FN(cuLaunchKernel), FN(cuStreamCreate), FN(cuStreamDestroy), FN(cuStreamSynchronize),
    FN(cuEventCreate), FN(cuEventRecord), FN(cuEventSynchronize), FN(cuEventElapsedTime),
    FN(cuEventDestroy), FN(cuStreamWaitEvent)};

/* The one exported entry point: the rest is found through it. */
result cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags,
                           int *status) {
  (void)version, (void)flags, (void)status;
  for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++)
    if (strcmp(functions[i].name, symbol) == 0) {
      *pfn = functions[i].fn;
      return OK;
    }
  *pfn = NULL;
  return NOT_FOUND;
}
