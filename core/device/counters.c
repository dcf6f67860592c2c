/*
** counters.c: hardware counters through CUPTI's Range Profiler (see
** counters.h). The sequence: the chip's name and the counters available
** on the context make a Profiler Host object, which checks the names and
** makes the configuration image (which also says how many passes the
** counters need); the Range Profiler, enabled on the context, collects
** into a counter data image that the host object evaluates range by range.
** What depends only on the names is made once and kept while the next
** begin asks for the same names.
**
** The order is CUPTI's: the counters available are asked for before the
** Range Profiler is enabled on the context (that query may fail while a
** profiling session is active there), and the availability image lives as
** long as the host object made with it, which reads it by reference when
** counters are added (freed after cuptiProfilerHostInitialize, it crashed
** the first collection of every process: CUPTI 13.0, H200).
*/
#include "counters.h"

#ifdef KT_HAVE_CUPTI

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kt_counters {
  const kt_cupti_lib *lib;
  CUcontext ctx;
  int ordinal;
  char chip[64];
  const char **names; /* prepared for these (owned copies) */
  size_t n;
  CUpti_Profiler_Host_Object *host;
  uint8_t *availability; /* the host object's, until it is deinitialized */
  CUpti_RangeProfiler_Object *rp;
  uint8_t *config, *data;
  size_t config_size, data_size;
  unsigned passes;
  bool started;
};

#define PARAMS(type) {.structSize = type##_STRUCT_SIZE}
/* A parameter block of CUPTI's, its size filled in. */
#define DECLARE(type, var) type var = PARAMS(type)
/* A CUPTI call's verdict (check), named after the function. */
#define CALL(c, fn, params, err) check(c, (c)->lib->f.fn(&(params)), "cupti" #fn, err)

/* CUPTI's verdicts that mean "not here, not now" rather than a mistake. */
static bool unreadable(CUptiResult e) {
  return e == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ||
         e == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES;
}

static bool unsupported(CUptiResult e) {
  return e == CUPTI_ERROR_NOT_SUPPORTED || e == CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED ||
         e == CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED || e == CUPTI_ERROR_NOT_COMPATIBLE;
}

/* 0 on success, else the failure as counters.h's return codes. */
static int check(const kt_counters *c, CUptiResult e, const char *what, kt_error *err) {
  if (e == CUPTI_SUCCESS) return 0;
  kt_cupti_fail(c->lib, err, e, what);
  if (unreadable(e)) {
    kt_fail_prefix(err, "hardware counters cannot be read here (the GPU's profiling is kept for "
                        "administrators: NVreg_RestrictProfilingToAdminUsers): ");
    return KT_COUNTERS_UNREADABLE;
  }
  if (unsupported(e)) kt_fail_prefix(err, "the device has no hardware counters CUPTI can read: ");
  return -1;
}

kt_counters *kt_counters_new(CUcontext ctx, int ordinal, kt_error *err) {
  const kt_cupti_lib *lib = kt_cupti_lib_get();
  if (!lib->ok) return kt_fail(err, "hardware counters: %s", lib->why), NULL;
  kt_counters *c = kt_calloc(1, sizeof *c, err);
  if (!c) return NULL;
  *c = (kt_counters){.lib = lib, .ctx = ctx, .ordinal = ordinal};
  return c;
}

/* ---- what depends on the names ---- */

static void unprepare(kt_counters *c) {
  if (c->rp) {
    DECLARE(CUpti_RangeProfiler_Disable_Params, p);
    p.pRangeProfilerObject = c->rp;
    c->lib->f.RangeProfilerDisable(&p);
  }
  if (c->host) {
    DECLARE(CUpti_Profiler_Host_Deinitialize_Params, p);
    p.pHostObject = c->host;
    c->lib->f.ProfilerHostDeinitialize(&p);
  }
  for (size_t i = 0; i < c->n; i++) free((char *)c->names[i]);
  free(c->names);
  free(c->availability);
  free(c->config);
  free(c->data);
  c->rp = NULL, c->host = NULL, c->names = NULL, c->n = 0;
  c->availability = c->config = c->data = NULL;
}

void kt_counters_free(kt_counters *c) {
  if (!c) return;
  if (c->started) {
    DECLARE(CUpti_RangeProfiler_Stop_Params, p);
    p.pRangeProfilerObject = c->rp;
    c->lib->f.RangeProfilerStop(&p);
  }
  unprepare(c);
  free(c);
}

static bool same_names(const kt_counters *c, const char *const *names, size_t n) {
  if (!c->rp || n != c->n) return false;
  for (size_t i = 0; i < n; i++)
    if (strcmp(names[i], c->names[i])) return false;
  return true;
}

static int copy_names(kt_counters *c, const char *const *names, size_t n, kt_error *err) {
  if (!(c->names = kt_calloc(n, sizeof *c->names, err))) return -1;
  for (size_t i = 0; i < n; i++, c->n++)
    if (!(c->names[i] = kt_strdup(names[i], err))) return -1;
  return 0;
}

/* The host object: the chip, and the counters this context may read (an
** image that the host object keeps, so c owns it from here on). */
static int host_init(kt_counters *c, kt_error *err) {
  DECLARE(CUpti_Device_GetChipName_Params, chip);
  chip.deviceIndex = (size_t)c->ordinal;
  int rc = CALL(c, DeviceGetChipName, chip, err);
  if (rc) return rc;
  snprintf(c->chip, sizeof c->chip, "%s", chip.pChipName ? chip.pChipName : "?");
  DECLARE(CUpti_Profiler_GetCounterAvailability_Params, av);
  av.ctx = c->ctx;
  const char *what = "cuptiProfilerGetCounterAvailability";
  if ((rc = check(c, c->lib->f.ProfilerGetCounterAvailability(&av), what, err))) return rc;
  size_t size = av.counterAvailabilityImageSize;
  uint8_t *image = c->availability = kt_alloc(size ? size : 1, err);
  if (!image) return -1;
  av.pCounterAvailabilityImage = image;
  rc = check(c, c->lib->f.ProfilerGetCounterAvailability(&av), what, err);
  DECLARE(CUpti_Profiler_Host_Initialize_Params, hi);
  hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  hi.pChipName = c->chip;
  hi.pCounterAvailabilityImage = image;
  if (rc == 0) rc = CALL(c, ProfilerHostInitialize, hi, err);
  c->host = rc == 0 ? hi.pHostObject : NULL;
  return rc;
}

/* The counters one at a time, so that a failure names the one refused. */
static int add_metrics(kt_counters *c, kt_error *err) {
  for (size_t i = 0; i < c->n; i++) {
    DECLARE(CUpti_Profiler_Host_ConfigAddMetrics_Params, add);
    add.pHostObject = c->host;
    add.ppMetricNames = &c->names[i];
    add.numMetrics = 1;
    CUptiResult e = c->lib->f.ProfilerHostConfigAddMetrics(&add);
    if (e == CUPTI_ERROR_INVALID_METRIC_NAME)
      return kt_fail(err, "profile: unknown counter '%s' (not a metric of CUPTI for chip %s; "
                     "`ncu --query-metrics` lists them)", c->names[i], c->chip);
    int rc = check(c, e, "cuptiProfilerHostConfigAddMetrics", err);
    if (rc) return kt_fail_prefix(err, "counter '%s' (%zu of %zu): ", c->names[i], i + 1, c->n), rc;
  }
  return 0;
}

static int make_config(kt_counters *c, kt_error *err) {
  int rc = add_metrics(c, err);
  DECLARE(CUpti_Profiler_Host_GetConfigImageSize_Params, sz);
  sz.pHostObject = c->host;
  if (rc == 0) rc = CALL(c, ProfilerHostGetConfigImageSize, sz, err);
  if (rc == 0 && !(c->config = kt_alloc(sz.configImageSize, err))) return -1;
  c->config_size = sz.configImageSize;
  DECLARE(CUpti_Profiler_Host_GetConfigImage_Params, im);
  im.pHostObject = c->host;
  im.configImageSize = c->config_size;
  im.pConfigImage = c->config;
  if (rc == 0) rc = CALL(c, ProfilerHostGetConfigImage, im, err);
  DECLARE(CUpti_Profiler_Host_GetNumOfPasses_Params, np);
  np.configImageSize = c->config_size;
  np.pConfigImage = c->config;
  if (rc == 0) rc = CALL(c, ProfilerHostGetNumOfPasses, np, err);
  c->passes = (unsigned)np.numOfPasses;
  return rc;
}

/* The Range Profiler on the context, once the configuration is made. */
static int enable(kt_counters *c, kt_error *err) {
  DECLARE(CUpti_RangeProfiler_Enable_Params, en);
  en.ctx = c->ctx;
  int rc = CALL(c, RangeProfilerEnable, en, err);
  c->rp = rc == 0 ? en.pRangeProfilerObject : NULL;
  return rc;
}

/* The counter data image, once the configuration is made. */
static int counter_data(kt_counters *c, kt_error *err) {
  DECLARE(CUpti_RangeProfiler_GetCounterDataSize_Params, ds);
  ds.pRangeProfilerObject = c->rp;
  ds.pMetricNames = c->names;
  ds.numMetrics = c->n;
  ds.maxNumOfRanges = KT_COUNTERS_MAX_RANGES;
  ds.maxNumRangeTreeNodes = KT_COUNTERS_MAX_RANGES;
  int rc = CALL(c, RangeProfilerGetCounterDataSize, ds, err);
  if (rc == 0 && !(c->data = kt_alloc(ds.counterDataSize, err))) return -1;
  c->data_size = ds.counterDataSize;
  return rc;
}

static int prepare(kt_counters *c, const char *const *names, size_t n, kt_error *err) {
  unprepare(c);
  int rc = copy_names(c, names, n, err);
  if (rc == 0) rc = host_init(c, err);
  if (rc == 0) rc = make_config(c, err);
  if (rc == 0) rc = enable(c, err);
  if (rc == 0) rc = counter_data(c, err);
  if (rc) unprepare(c);
  return rc;
}

/* ---- one collection ---- */

static int start(kt_counters *c, kt_error *err) {
  DECLARE(CUpti_RangeProfiler_CounterDataImage_Initialize_Params, in);
  in.pRangeProfilerObject = c->rp;
  in.counterDataSize = c->data_size;
  in.pCounterData = c->data;
  int rc = CALL(c, RangeProfilerCounterDataImageInitialize, in, err);
  DECLARE(CUpti_RangeProfiler_SetConfig_Params, sc);
  sc.pRangeProfilerObject = c->rp;
  sc.configSize = c->config_size;
  sc.pConfig = c->config;
  sc.counterDataImageSize = c->data_size;
  sc.pCounterDataImage = c->data;
  sc.range = CUPTI_AutoRange;
  sc.replayMode = CUPTI_KernelReplay;
  sc.maxRangesPerPass = KT_COUNTERS_MAX_RANGES;
  sc.numNestingLevels = 1;
  sc.minNestingLevel = 1;
  sc.targetNestingLevel = 1;
  if (rc == 0) rc = CALL(c, RangeProfilerSetConfig, sc, err);
  DECLARE(CUpti_RangeProfiler_Start_Params, st);
  st.pRangeProfilerObject = c->rp;
  if (rc == 0) rc = CALL(c, RangeProfilerStart, st, err);
  c->started = rc == 0;
  return rc;
}

int kt_counters_begin(kt_counters *c, const char *const *names, size_t n, unsigned *passes,
                      kt_error *err) {
  if (c->started) return kt_fail(err, "hardware counters: a collection is already going on");
  if (n == 0) return kt_fail(err, "hardware counters: no counter named");
  int rc = same_names(c, names, n) ? 0 : prepare(c, names, n, err);
  if (rc == 0 && passes) rc = start(c, err);
  if (passes) *passes = c->passes;
  return rc;
}

/* A counter's aggregate over launches 0..r, by its name's last part. */
static double fold(const char *name, double acc, double v, size_t r) {
  if (isnan(v)) return acc;
  if (isnan(acc)) return v;
  const char *dot = strrchr(name, '.');
  const char *rollup = dot ? dot + 1 : "";
  if (!strcmp(rollup, "sum")) return acc + v;
  if (!strcmp(rollup, "max")) return v > acc ? v : acc;
  if (!strcmp(rollup, "min")) return v < acc ? v : acc;
  return acc + (v - acc) / (double)(r + 1); /* the running mean */
}

static int stop(kt_counters *c, size_t *nranges, kt_error *err) {
  DECLARE(CUpti_RangeProfiler_Stop_Params, sp);
  sp.pRangeProfilerObject = c->rp;
  c->started = false;
  int rc = CALL(c, RangeProfilerStop, sp, err);
  if (rc == 0 && !sp.isAllPassSubmitted)
    return kt_fail(err, "hardware counters: CUPTI's kernel replay left passes undone");
  DECLARE(CUpti_RangeProfiler_DecodeData_Params, dd);
  dd.pRangeProfilerObject = c->rp;
  if (rc == 0) rc = CALL(c, RangeProfilerDecodeData, dd, err);
  DECLARE(CUpti_RangeProfiler_GetCounterDataInfo_Params, info);
  info.pCounterDataImage = c->data;
  info.counterDataImageSize = c->data_size;
  if (rc == 0) rc = CALL(c, RangeProfilerGetCounterDataInfo, info, err);
  *nranges = rc == 0 ? info.numTotalRanges : 0;
  return rc;
}

int kt_counters_end(kt_counters *c, double *values, size_t n, unsigned *ranges, kt_error *err) {
  if (!c->started) return kt_fail(err, "hardware counters: no collection is going on");
  size_t nr = 0;
  int rc = stop(c, &nr, err);
  double *v = rc == 0 ? kt_calloc(n ? n : 1, sizeof *v, err) : NULL;
  for (size_t i = 0; i < n; i++) values[i] = NAN;
  if (rc == 0 && !v) rc = -1;
  for (size_t r = 0; rc == 0 && r < nr && n == c->n; r++) {
    DECLARE(CUpti_Profiler_Host_EvaluateToGpuValues_Params, ev);
    ev.pHostObject = c->host;
    ev.pCounterDataImage = c->data;
    ev.counterDataImageSize = c->data_size;
    ev.rangeIndex = r;
    ev.ppMetricNames = c->names;
    ev.numMetrics = c->n;
    ev.pMetricValues = v;
    rc = CALL(c, ProfilerHostEvaluateToGpuValues, ev, err);
    for (size_t i = 0; rc == 0 && i < n; i++) values[i] = fold(c->names[i], values[i], v[i], r);
  }
  free(v);
  *ranges = (unsigned)nr;
  return rc;
}

#elif defined(KT_HAVE_CUDA)

kt_counters *kt_counters_new(CUcontext ctx, int ordinal, kt_error *err) {
  (void)ctx, (void)ordinal;
  return kt_fail(err, "hardware counters: ktlua was built without CUPTI's headers "
                 "(cupti_range_profiler.h, CUDA 12.6 or later)"), NULL;
}

void kt_counters_free(kt_counters *c) { (void)c; }

int kt_counters_begin(kt_counters *c, const char *const *names, size_t n, unsigned *passes,
                      kt_error *err) {
  (void)c, (void)names, (void)n, (void)passes;
  return kt_fail(err, "hardware counters: no CUPTI");
}

int kt_counters_end(kt_counters *c, double *values, size_t n, unsigned *ranges, kt_error *err) {
  (void)c, (void)values, (void)n, (void)ranges;
  return kt_fail(err, "hardware counters: no CUPTI");
}

#else
typedef int kt_counters_unused;
#endif
