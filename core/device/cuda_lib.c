/*
** cuda_lib.c: loading the CUDA driver and NVRTC.
**
** The loaded table is the one piece of global state of the CUDA backend.
** The driver is itself process-wide (cuInit initialises it once for the
** process, and a library cannot be loaded twice), so its entry points are
** too: they are loaded once, under pthread_once so that the first thread
** to need them may be any, and only read afterwards. NVRTC loads apart
** from the driver, so that compiling alone leaves the driver untouched. The libraries stay
** loaded until the process exits.
*/
#ifdef KT_HAVE_CUDA

#define _GNU_SOURCE /* dladdr: where NVRTC lives, to find the headers beside it */
#include "cuda_lib.h"

#include "dynlib.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static kt_cuda_lib lib;
static pthread_once_t driver_once = PTHREAD_ONCE_INIT, nvrtc_once = PTHREAD_ONCE_INIT;

/* Where the driver is found: the loader's path, then where NVIDIA's
** container runtime mounts it. */
static const char *const driver_names[] = {"libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1",
                                           NULL};
/* NVRTC from the loader's path (any version), then the toolkit's usual home. */
static const char *const nvrtc_names[] = {
    "libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
    "/usr/local/cuda/lib64/libnvrtc.so", NULL};

int kt_cu_fail(kt_error *err, CUresult e, const char *what) {
  const char *name = NULL, *text = NULL;
  if (lib.cu.GetErrorName) lib.cu.GetErrorName(e, &name);
  if (lib.cu.GetErrorString) lib.cu.GetErrorString(e, &text);
  return kt_fail(err, "%s failed: %s (%d): %s", what, name ? name : "CUDA error", (int)e,
                 text ? text : "unknown");
}

/* ---- the driver ---- */

typedef struct proc_finder {
  PFN_cuGetProcAddress_v12000 v2; /* drivers of CUDA 12.0 and later */
  PFN_cuGetProcAddress_v11030 v1; /* CUDA 11.3 to 12.x */
} proc_finder;

static int find_proc(const proc_finder *pf, const char *name, int version, void **fn) {
  CUresult e = pf->v2 ? pf->v2(name, fn, version, CU_GET_PROC_ADDRESS_DEFAULT, NULL)
                      : pf->v1(name, fn, version, CU_GET_PROC_ADDRESS_DEFAULT);
  return e == CUDA_SUCCESS && *fn ? 0 : -1;
}

static void init_driver(void) {
  CUresult e = lib.cu.Init(0);
  if (e == CUDA_ERROR_NO_DEVICE) {
    snprintf(lib.driver_why, sizeof lib.driver_why,
             "the NVIDIA driver found no GPU (cuInit: CUDA_ERROR_NO_DEVICE)");
  } else if (e != CUDA_SUCCESS) {
    kt_error err;
    kt_cu_fail(&err, e, "cuInit");
    snprintf(lib.driver_why, sizeof lib.driver_why, "%.500s", err.msg);
  } else {
    lib.cu.DriverGetVersion(&lib.driver_version);
    lib.driver_ok = true;
  }
}

static void load_driver(void) {
  char opened[300];
  void *h = kt_dynlib_open("KTLUA_LIBCUDA", driver_names, "libcuda.so.1 (the NVIDIA driver)",
                           lib.driver_why, sizeof lib.driver_why, opened, sizeof opened);
  if (!h) return;
  proc_finder pf = {(PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2"),
                    (PFN_cuGetProcAddress_v11030)dlsym(h, "cuGetProcAddress")};
  /* Every driver has cuInit; a library without it is some other one that
  ** KTLUA_LIBCUDA names by mistake, not an old driver. */
  if (!pf.v1 && !pf.v2 && !dlsym(h, "cuInit")) {
    snprintf(lib.driver_why, sizeof lib.driver_why,
             "%s is not the NVIDIA driver (libcuda): it has neither cuInit nor cuGetProcAddress",
             opened);
    return;
  }
  if (!pf.v1 && !pf.v2) {
    snprintf(lib.driver_why, sizeof lib.driver_why,
             "the NVIDIA driver %s is older than CUDA 11.3 (it has no cuGetProcAddress)", opened);
    return;
  }
  const char *missing = NULL;
#define KT_CU_LOAD(name, version) \
  if (!missing && find_proc(&pf, "cu" #name, version, (void **)&lib.cu.name)) missing = "cu" #name;
  KT_CU_FUNCTIONS(KT_CU_LOAD)
#undef KT_CU_LOAD
  if (missing) {
    snprintf(lib.driver_why, sizeof lib.driver_why, "the NVIDIA driver lacks %s", missing);
    return;
  }
  init_driver();
}

/* ---- NVRTC ---- */

/* The toolkit's headers (cuda_fp16.h, ...) are not built into NVRTC; they
** live in ../include beside the library, seen through links or not. */
static void find_include_dir(void *symbol) {
  Dl_info info;
  if (!dladdr(symbol, &info) || !info.dli_fname) return;
  char real[PATH_MAX];
  const char *paths[] = {info.dli_fname, realpath(info.dli_fname, real)};
  for (int i = 0; i < 2 && !lib.include_dir[0]; i++) {
    const char *slash = paths[i] ? strrchr(paths[i], '/') : NULL;
    if (!slash) continue;
    char dir[sizeof lib.include_dir], probe[sizeof lib.include_dir + 16];
    snprintf(dir, sizeof dir, "%.*s/../include", (int)(slash - paths[i]), paths[i]);
    snprintf(probe, sizeof probe, "%s/cuda_fp16.h", dir);
    if (access(probe, R_OK) == 0 && realpath(dir, real))
      snprintf(lib.include_dir, sizeof lib.include_dir, "%.1000s", real);
  }
}

static void load_nvrtc(void) {
  char opened[300];
  void *h = kt_dynlib_open("KTLUA_NVRTC", nvrtc_names, "libnvrtc (NVRTC, from the CUDA toolkit)",
                           lib.nvrtc_why, sizeof lib.nvrtc_why, opened, sizeof opened);
  if (!h) return;
  const char *missing = NULL;
#define KT_NVRTC_LOAD(name) \
  if (!missing && !(*(void **)&lib.nvrtc.name = dlsym(h, "nvrtc" #name))) missing = "nvrtc" #name;
  KT_NVRTC_FUNCTIONS(KT_NVRTC_LOAD)
#undef KT_NVRTC_LOAD
  /* nvrtcVersion, the first looked for, is in every NVRTC. */
  if (missing && !lib.nvrtc.Version) {
    snprintf(lib.nvrtc_why, sizeof lib.nvrtc_why,
             "%s is not NVRTC (libnvrtc): it has no nvrtcVersion", opened);
    return;
  }
  if (missing) {
    snprintf(lib.nvrtc_why, sizeof lib.nvrtc_why,
             "NVRTC %s is older than CUDA 11.2 (it lacks %s)", opened, missing);
    return;
  }
  lib.nvrtc.Version(&lib.nvrtc_major, &lib.nvrtc_minor);
  find_include_dir((void *)lib.nvrtc.Version);
  lib.nvrtc_ok = true;
}

const kt_cuda_lib *kt_cuda_lib_get(void) {
  pthread_once(&driver_once, load_driver);
  pthread_once(&nvrtc_once, load_nvrtc);
  return &lib;
}

/* NVRTC alone: compiling must not initialise the driver, because a process
** that forks device servers must never have (see remote.h). */
const kt_cuda_lib *kt_cuda_nvrtc_get(void) {
  pthread_once(&nvrtc_once, load_nvrtc);
  return &lib;
}

#endif
