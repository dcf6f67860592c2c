/*
** fake_cupti.c: a stand-in for libcupti.so, for specs on machines without
** a GPU: the Range Profiler and Profiler Host calls that core/device/counters.c
** makes, on the stand-in driver (fake_cuda.c, found through KTLUA_LIBCUDA).
** Its chip ("FK100") knows every counter whose name has "__" in it; its
** value in the r-th launch profiled is 1000 (k + 1) + r, where k is the
** name's length modulo 10. Each
** launch of the driver between Start and Stop is a range; the counters
** need one pass per 4 of them. With FAKE_CUPTI_PRIVILEGES=0 in the
** environment, enabling the profiler fails with
** CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, as on a machine that keeps the
** GPU's profiling for administrators.
**
** It holds the caller to what CUPTI 13 needs: parameter blocks of their
** full size; the counter availability image asked for while no Range
** Profiler is enabled on the context (cupti_profiler_target.h: it may fail
** otherwise); and that image left alone until the host object is
** deinitialized, since the host object reads it by reference when counters
** are added and the configuration is made (a freed one crashed CUPTI 13.0
** on an H200 at the first collection of a process). Where a rule is
** broken it fails with CUPTI_ERROR_INVALID_PARAMETER or _OPERATION.
**
** Built by the specs: cc -shared -fPIC -I<cuda>/include -Icore/device/cupti_shim
** -o libcupti.so fake_cupti.c
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

static int host_object, profiler_object; /* their addresses are the handles */
static size_t nmetrics; /* added to the host object */
static unsigned long started_at, ranges;
static int running, enabled;

/* The counter availability image: its size, its bytes, the host object's. */
#define AVAILABILITY_SIZE 64
static const uint8_t *availability;

static uint8_t availability_byte(size_t i) { return (uint8_t)(i * 7 + 3); }

static int intact(const uint8_t *image) {
  for (size_t i = 0; image && i < AVAILABILITY_SIZE; i++)
    if (image[i] != availability_byte(i)) return 0;
  return image != NULL;
}

/* A parameter block shorter than the headers' makes CUPTI refuse it. */
#define SIZED(p, type) \
  if ((p)->structSize < type##_STRUCT_SIZE) return CUPTI_ERROR_INVALID_PARAMETER

/* Its chip's counters: every name with "__" in it, valued by its length. */
static int known_index(const char *name) {
  return strstr(name, "__") ? (int)(strlen(name) % 10) : -1;
}

/* The stand-in driver's launch count. */
static unsigned long launches(void) {
  const char *path = getenv("KTLUA_LIBCUDA");
  void *h = path ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
  unsigned long long *n = h ? dlsym(h, "fake_cuda_launches") : NULL;
  return n ? *n : 0;
}

CUptiResult cuptiGetResultString(CUptiResult r, const char **s) {
  *s = r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"
     : r == CUPTI_ERROR_INVALID_METRIC_NAME ? "CUPTI_ERROR_INVALID_METRIC_NAME"
     : r == CUPTI_ERROR_INVALID_PARAMETER ? "CUPTI_ERROR_INVALID_PARAMETER"
     : r == CUPTI_ERROR_INVALID_OPERATION ? "CUPTI_ERROR_INVALID_OPERATION" : "CUPTI_ERROR_UNKNOWN";
  return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params *p) {
  SIZED(p, CUpti_Profiler_Initialize_Params);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *p) {
  SIZED(p, CUpti_Device_GetChipName_Params);
  p->pChipName = "FK100";
  return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params *p) {
  SIZED(p, CUpti_Profiler_GetCounterAvailability_Params);
  if (enabled) return CUPTI_ERROR_INVALID_OPERATION;
  if (p->pCounterAvailabilityImage && p->counterAvailabilityImageSize < AVAILABILITY_SIZE)
    return CUPTI_ERROR_INVALID_PARAMETER;
  for (size_t i = 0; p->pCounterAvailabilityImage && i < AVAILABILITY_SIZE; i++)
    p->pCounterAvailabilityImage[i] = availability_byte(i);
  p->counterAvailabilityImageSize = AVAILABILITY_SIZE;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params *p) {
  SIZED(p, CUpti_Profiler_Host_Initialize_Params);
  if (!intact(p->pCounterAvailabilityImage)) return CUPTI_ERROR_INVALID_PARAMETER;
  availability = p->pCounterAvailabilityImage;
  nmetrics = 0;
  p->pHostObject = (CUpti_Profiler_Host_Object *)&host_object;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params *p) {
  SIZED(p, CUpti_Profiler_Host_Deinitialize_Params);
  if (p->pHostObject != (void *)&host_object) return CUPTI_ERROR_INVALID_PARAMETER;
  availability = NULL;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params *p) {
  SIZED(p, CUpti_Profiler_Host_ConfigAddMetrics_Params);
  if (!intact(availability)) return CUPTI_ERROR_INVALID_PARAMETER;
  for (size_t i = 0; i < p->numMetrics; i++)
    if (known_index(p->ppMetricNames[i]) < 0) return CUPTI_ERROR_INVALID_METRIC_NAME;
  nmetrics += p->numMetrics;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params *p) {
  SIZED(p, CUpti_Profiler_Host_GetConfigImageSize_Params);
  p->configImageSize = 32;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params *p) {
  SIZED(p, CUpti_Profiler_Host_GetConfigImage_Params);
  if (!intact(availability)) return CUPTI_ERROR_INVALID_PARAMETER;
  memset(p->pConfigImage, 1, p->configImageSize);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params *p) {
  SIZED(p, CUpti_Profiler_Host_GetNumOfPasses_Params);
  p->numOfPasses = (nmetrics + 3) / 4;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params *p) {
  SIZED(p, CUpti_Profiler_Host_EvaluateToGpuValues_Params);
  if (p->rangeIndex >= ranges) return CUPTI_ERROR_INVALID_PARAMETER;
  for (size_t i = 0; i < p->numMetrics; i++)
    p->pMetricValues[i] = 1000.0 * (known_index(p->ppMetricNames[i]) + 1) + (double)p->rangeIndex;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params *p) {
  const char *allowed = getenv("FAKE_CUPTI_PRIVILEGES");
  SIZED(p, CUpti_RangeProfiler_Enable_Params);
  if (allowed && strcmp(allowed, "0") == 0) return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  if (enabled) return CUPTI_ERROR_INVALID_OPERATION;
  enabled = 1;
  p->pRangeProfilerObject = (CUpti_RangeProfiler_Object *)&profiler_object;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params *p) {
  SIZED(p, CUpti_RangeProfiler_Disable_Params);
  if (!enabled) return CUPTI_ERROR_INVALID_OPERATION;
  enabled = 0;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params *p) {
  SIZED(p, CUpti_RangeProfiler_GetCounterDataSize_Params);
  p->counterDataSize = 64;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerCounterDataImageInitialize(
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params *p) {
  SIZED(p, CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  memset(p->pCounterData, 0, p->counterDataSize);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params *p) {
  SIZED(p, CUpti_RangeProfiler_SetConfig_Params);
  return p->range == CUPTI_AutoRange && p->replayMode == CUPTI_KernelReplay ? CUPTI_SUCCESS
                                                                              : CUPTI_ERROR_NOT_SUPPORTED;
}

CUptiResult cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params *p) {
  SIZED(p, CUpti_RangeProfiler_Start_Params);
  if (running) return CUPTI_ERROR_INVALID_OPERATION;
  running = 1;
  started_at = launches();
  return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params *p) {
  SIZED(p, CUpti_RangeProfiler_Stop_Params);
  if (!running) return CUPTI_ERROR_INVALID_OPERATION;
  running = 0;
  ranges = launches() - started_at;
  p->isAllPassSubmitted = 1;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params *p) {
  SIZED(p, CUpti_RangeProfiler_DecodeData_Params);
  p->numOfRangeDropped = 0;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params *p) {
  SIZED(p, CUpti_RangeProfiler_GetCounterDataInfo_Params);
  p->numTotalRanges = ranges;
  return CUPTI_SUCCESS;
}
