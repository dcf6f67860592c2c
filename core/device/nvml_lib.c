/*
** nvml_lib.c: loading NVML (nvml_lib.h).
**
** As with the CUDA driver (cuda_lib.c), the loaded table is process-wide
** state: NVML is initialised once per process, under pthread_once, and
** only read afterwards. Only device processes, or a tuner that drives its
** device itself, load it: never a process that forks device servers.
*/
#include "nvml_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "dynlib.h"
#include "kt.h"

static kt_nvml_lib lib;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The loader's path, then where NVIDIA's container runtime mounts it. */
static const char *const names[] = {"libnvidia-ml.so.1", "/usr/local/nvidia/lib64/libnvidia-ml.so.1",
                                    NULL};

int kt_nvml_fail(kt_error *err, kt_nvml_return e, const char *what) {
  const char *text = lib.ErrorString ? lib.ErrorString(e) : NULL;
  return kt_fail(err, "%s failed: %s (NVML error %d)", what, text ? text : "unknown", e);
}

static void load(void) {
  void *h = kt_dynlib_open("KTLUA_LIBNVML", names, "NVML (libnvidia-ml.so.1, NVIDIA's driver)",
                           lib.why, sizeof lib.why, NULL, 0);
  if (!h) return;
  const char *missing = NULL;
#define KT_NVML_LOAD(name, ret, args) \
  if (!missing && !(*(void **)&lib.name = dlsym(h, "nvml" #name))) missing = "nvml" #name;
  KT_NVML_FUNCTIONS(KT_NVML_LOAD)
#undef KT_NVML_LOAD
  if (missing) {
    snprintf(lib.why, sizeof lib.why, "NVML lacks %s (the NVIDIA driver is too old)", missing);
    return;
  }
  kt_nvml_return e = lib.Init_v2();
  if (e != KT_NVML_SUCCESS) {
    kt_error err;
    kt_nvml_fail(&err, e, "nvmlInit_v2");
    snprintf(lib.why, sizeof lib.why, "%.500s", err.msg);
    return;
  }
  lib.ok = true;
}

const kt_nvml_lib *kt_nvml_lib_get(void) {
  pthread_once(&once, load);
  return &lib;
}
