/*
** cupti_lib.h: CUPTI (libcupti, from the CUDA toolkit) as a table of entry
** points, loaded with dlopen when hardware counters are first asked for,
** so that one ktlua binary runs with or without it (cuda_lib.h does the
** same for the driver). Only CUDA 12.6's Range Profiler and Profiler Host
** APIs are used: the configuration image and the metrics' evaluation need
** no NVPW (nvperf_host).
**
** KT_HAVE_CUPTI: built with the toolkit's CUPTI headers.
*/
#ifndef KT_CUPTI_LIB_H
#define KT_CUPTI_LIB_H

#ifdef KT_HAVE_CUDA
#if __has_include(<cupti_range_profiler.h>) && __has_include(<cupti_profiler_host.h>)
#define KT_HAVE_CUPTI 1
#endif
#endif

#ifdef KT_HAVE_CUPTI
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include "kt.h"

/* The functions by name without "cupti"; their types are the headers'. */
#define KT_CUPTI_FUNCTIONS(X) \
  X(GetResultString) X(ProfilerInitialize) X(DeviceGetChipName) \
  X(ProfilerGetCounterAvailability) X(ProfilerHostInitialize) X(ProfilerHostDeinitialize) \
  X(ProfilerHostConfigAddMetrics) \
  X(ProfilerHostGetConfigImageSize) X(ProfilerHostGetConfigImage) \
  X(ProfilerHostGetNumOfPasses) X(ProfilerHostEvaluateToGpuValues) \
  X(RangeProfilerEnable) X(RangeProfilerDisable) X(RangeProfilerGetCounterDataSize) \
  X(RangeProfilerCounterDataImageInitialize) X(RangeProfilerSetConfig) \
  X(RangeProfilerStart) X(RangeProfilerStop) X(RangeProfilerDecodeData) \
  X(RangeProfilerGetCounterDataInfo)

typedef struct kt_cupti_api {
#define KT_CUPTI_MEMBER(name) __typeof__(cupti##name) *name;
  KT_CUPTI_FUNCTIONS(KT_CUPTI_MEMBER)
#undef KT_CUPTI_MEMBER
} kt_cupti_api;

typedef struct kt_cupti_lib {
  bool ok;            /* loaded, and cuptiProfilerInitialize succeeded */
  kt_cupti_api f;
  char why[640];      /* why CUPTI is unusable; "" when it is fine */
} kt_cupti_lib;

/* Loads CUPTI on the first call (KTLUA_LIBCUPTI, else the loader's path,
** else beside NVRTC and the toolkit's usual homes) and returns the table,
** which nothing changes afterwards. Needs the driver loaded first. */
const kt_cupti_lib *kt_cupti_lib_get(void);

/* "what failed: CUPTI_ERROR_X (n): text"; returns -1. */
int kt_cupti_fail(const kt_cupti_lib *lib, kt_error *err, CUptiResult e, const char *what);

#endif
#endif
