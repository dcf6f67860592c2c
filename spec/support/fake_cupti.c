/*
** fake_cupti.c: a stand-in for libcupti.so, for specs on machines without
** a GPU: the Range Profiler and Profiler Host calls that core/counters.c
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
** Built by the specs: cc -shared -fPIC -I<cuda>/include -Icore/cupti_shim
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
static int running;

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
     : r == CUPTI_ERROR_INVALID_METRIC_NAME ? "CUPTI_ERROR_INVALID_METRIC_NAME" : "CUPTI_ERROR_UNKNOWN";
  return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params *p) { (void)p; return CUPTI_SUCCESS; }

CUptiResult cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *p) {
  p->pChipName = "FK100";
  return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params *p) {
  if (p->pCounterAvailabilityImage) memset(p->pCounterAvailabilityImage, 7, 16);
  p->counterAvailabilityImageSize = 16;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params *p) {
  nmetrics = 0;
  p->pHostObject = (CUpti_Profiler_Host_Object *)&host_object;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params *p) {
  return p->pHostObject == (void *)&host_object ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params *p) {
  for (size_t i = 0; i < p->numMetrics; i++)
    if (known_index(p->ppMetricNames[i]) < 0) return CUPTI_ERROR_INVALID_METRIC_NAME;
  nmetrics += p->numMetrics;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params *p) {
  p->configImageSize = 32;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params *p) {
  memset(p->pConfigImage, 1, p->configImageSize);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params *p) {
  p->numOfPasses = (nmetrics + 3) / 4;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params *p) {
  if (p->rangeIndex >= ranges) return CUPTI_ERROR_INVALID_PARAMETER;
  for (size_t i = 0; i < p->numMetrics; i++)
    p->pMetricValues[i] = 1000.0 * (known_index(p->ppMetricNames[i]) + 1) + (double)p->rangeIndex;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params *p) {
  const char *allowed = getenv("FAKE_CUPTI_PRIVILEGES");
  if (allowed && strcmp(allowed, "0") == 0) return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  p->pRangeProfilerObject = (CUpti_RangeProfiler_Object *)&profiler_object;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params *p) { (void)p; return CUPTI_SUCCESS; }

CUptiResult cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params *p) {
  p->counterDataSize = 64;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerCounterDataImageInitialize(
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params *p) {
  memset(p->pCounterData, 0, p->counterDataSize);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params *p) {
  return p->range == CUPTI_AutoRange && p->replayMode == CUPTI_KernelReplay ? CUPTI_SUCCESS
                                                                              : CUPTI_ERROR_NOT_SUPPORTED;
}

CUptiResult cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params *p) {
  (void)p;
  if (running) return CUPTI_ERROR_INVALID_OPERATION;
  running = 1;
  started_at = launches();
  return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params *p) {
  if (!running) return CUPTI_ERROR_INVALID_OPERATION;
  running = 0;
  ranges = launches() - started_at;
  p->isAllPassSubmitted = 1;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params *p) {
  p->numOfRangeDropped = 0;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params *p) {
  p->numTotalRanges = ranges;
  return CUPTI_SUCCESS;
}
