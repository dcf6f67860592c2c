/*
** nvml_lib.h: NVIDIA's management library (libnvidia-ml.so.1) as a table
** of the few entry points that energy.c reads, loaded with dlopen when
** first needed, as cuda_lib.h loads the driver. No nvml.h is needed: the
** prototypes below are NVML's stable ABI, declared here.
*/
#ifndef KT_NVML_LIB_H
#define KT_NVML_LIB_H

#include "kt.h"

typedef int kt_nvml_return;          /* nvmlReturn_t */
typedef struct kt_nvml_device_st *kt_nvml_device; /* nvmlDevice_t */

enum {
  KT_NVML_SUCCESS = 0,
  KT_NVML_ERROR_NOT_SUPPORTED = 3,
  KT_NVML_CLOCK_SM = 1 /* nvmlClockType_t's NVML_CLOCK_SM */
};

#define KT_NVML_FUNCTIONS(X)                                                              \
  X(Init_v2, kt_nvml_return, (void))                                                      \
  X(ErrorString, const char *, (kt_nvml_return))                                          \
  X(DeviceGetHandleByPciBusId_v2, kt_nvml_return, (const char *, kt_nvml_device *))       \
  X(DeviceGetTotalEnergyConsumption, kt_nvml_return, (kt_nvml_device, unsigned long long *)) \
  X(DeviceGetPowerUsage, kt_nvml_return, (kt_nvml_device, unsigned int *))                \
  X(DeviceGetClockInfo, kt_nvml_return, (kt_nvml_device, int, unsigned int *))

typedef struct kt_nvml_lib {
  bool ok;         /* loaded and nvmlInit_v2 succeeded */
  char why[512];   /* why not; "" when ok */
#define KT_NVML_MEMBER(name, ret, args) ret(*name) args;
  KT_NVML_FUNCTIONS(KT_NVML_MEMBER)
#undef KT_NVML_MEMBER
} kt_nvml_lib;

/* Loads and initialises NVML on the first call (from any thread; from
** KTLUA_LIBNVML when set) and returns the table, which nothing changes
** afterwards. NVML stays initialised until the process exits. */
const kt_nvml_lib *kt_nvml_lib_get(void);

/* "what failed: NVML error text (code)"; returns -1. */
int kt_nvml_fail(kt_error *err, kt_nvml_return e, const char *what);

#endif
