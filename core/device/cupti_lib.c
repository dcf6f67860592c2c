/*
** cupti_lib.c: loading CUPTI.
**
** As with the driver (cuda_lib.c), the loaded table is process-wide and
** loaded once under pthread_once: CUPTI itself is process-wide state
** (cuptiProfilerInitialize once per process), and stays loaded until the
** process exits. CUPTI is not on the loader's path in most installs: it
** is looked for beside NVRTC (the toolkit's lib64, or
** targets/x86_64-linux/lib that lib64 links to), in extras/CUPTI/lib64
** there, and in the toolkit's usual home.
*/
#define _GNU_SOURCE /* dladdr: where NVRTC lives */
#include "cupti_lib.h"

#include "dynlib.h"

#ifdef KT_HAVE_CUPTI

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_lib.h"

static kt_cupti_lib lib;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *const names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so", NULL};
static const char *const beside[] = {"", "/../extras/CUPTI/lib64", NULL};
static const char *const homes[] = {"/usr/local/cuda/lib64",
                                    "/usr/local/cuda/targets/x86_64-linux/lib",
                                    "/usr/local/cuda/extras/CUPTI/lib64", NULL};

int kt_cupti_fail(const kt_cupti_lib *l, kt_error *err, CUptiResult e, const char *what) {
  const char *text = NULL;
  if (l && l->f.GetResultString) l->f.GetResultString(e, &text);
  return kt_fail(err, "%s failed: CUPTI error %d: %s", what, (int)e, text ? text : "unknown");
}

static void *try_dir(const char *dir) {
  for (int i = 0; names[i]; i++) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
  }
  return NULL;
}

/* The directory of the loaded NVRTC into dir, or "". */
static void nvrtc_dir(char *dir, size_t size) {
  const kt_cuda_lib *cl = kt_cuda_nvrtc_get();
  Dl_info info;
  dir[0] = 0;
  if (!cl->nvrtc_ok || !dladdr((void *)cl->nvrtc.Version, &info) || !info.dli_fname) return;
  const char *slash = strrchr(info.dli_fname, '/');
  if (slash) snprintf(dir, size, "%.*s", (int)(slash - info.dli_fname), info.dli_fname);
}

static void *search(void) {
  for (int i = 0; names[i]; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
  }
  char dir[1024], sub[1100];
  nvrtc_dir(dir, sizeof dir);
  for (int i = 0; dir[0] && beside[i]; i++) {
    snprintf(sub, sizeof sub, "%s%s", dir, beside[i]);
    void *h = try_dir(sub);
    if (h) return h;
  }
  for (int i = 0; homes[i]; i++) {
    void *h = try_dir(homes[i]);
    if (h) return h;
  }
  snprintf(lib.why, sizeof lib.why,
           "hardware counters need CUPTI (libcupti.so.13 from the CUDA toolkit), which is not "
           "on the loader's path, beside NVRTC (%.300s) nor in /usr/local/cuda: set KTLUA_LIBCUPTI "
           "to its path", dir[0] ? dir : "not loaded");
  return NULL;
}

static void *open_cupti(void) {
  const char *given = getenv("KTLUA_LIBCUPTI");
  if (!given || !given[0]) return search();
  return kt_dynlib_open("KTLUA_LIBCUPTI", names, "CUPTI", lib.why, sizeof lib.why, NULL, 0);
}

static void load(void) {
  void *h = open_cupti();
  if (!h) return;
  const char *missing = NULL;
#define KT_CUPTI_LOAD(name) \
  if (!missing && !(*(void **)&lib.f.name = dlsym(h, "cupti" #name))) missing = "cupti" #name;
  KT_CUPTI_FUNCTIONS(KT_CUPTI_LOAD)
#undef KT_CUPTI_LOAD
  if (missing) {
    snprintf(lib.why, sizeof lib.why,
             "CUPTI is older than CUDA 12.6 (it lacks %s, of the Range Profiler API)", missing);
    return;
  }
  CUpti_Profiler_Initialize_Params p = {.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  CUptiResult e = lib.f.ProfilerInitialize(&p);
  if (e != CUPTI_SUCCESS) {
    kt_error err;
    kt_cupti_fail(&lib, &err, e, "cuptiProfilerInitialize");
    snprintf(lib.why, sizeof lib.why, "%.600s", err.msg);
    return;
  }
  lib.ok = true;
}

const kt_cupti_lib *kt_cupti_lib_get(void) {
  pthread_once(&once, load);
  return &lib;
}

#else
typedef int kt_cupti_lib_unused; /* ISO C wants a translation unit to declare something */
#endif
