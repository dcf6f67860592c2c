/*
** cuda_lib.h: the CUDA driver (libcuda.so.1) and NVRTC (libnvrtc) as
** tables of entry points, loaded with dlopen when first needed so that one
** ktlua binary runs with or without them. Only for files built with
** KT_HAVE_CUDA (cuda.h found at build time): the types come from the
** toolkit's headers, the code from whatever driver the machine has.
*/
#ifndef KT_CUDA_LIB_H
#define KT_CUDA_LIB_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <nvrtc.h>

#include "device.h"
#include "kt.h"

/* Driver functions as (name without "cu", API version): the version picks
** the function's signature (cudaTypedefs.h's PFN_cu<name>_v<version>) and,
** through cuGetProcAddress, the matching entry point of any newer driver. */
#define KT_CU_FUNCTIONS(X) \
  X(Init, 2000) X(DriverGetVersion, 2020) X(GetErrorName, 6000) X(GetErrorString, 6000) \
  X(DeviceGet, 2000) X(DeviceGetCount, 2000) X(DeviceGetName, 2000) \
  X(DeviceGetAttribute, 2000) X(DeviceTotalMem, 3020) X(DeviceGetPCIBusId, 4010) \
  X(CtxCreate, 3020) X(CtxDestroy, 4000) X(CtxSetCurrent, 4000) X(CtxSynchronize, 2000) \
  X(MemGetInfo, 3020) X(MemAlloc, 3020) X(MemFree, 3020) X(MemAllocManaged, 6000) \
  X(MemHostAlloc, 2020) X(MemFreeHost, 2000) X(MemHostRegister, 6050) \
  X(MemHostUnregister, 4000) X(MemHostGetDevicePointer, 3020) \
  X(MemcpyHtoDAsync, 3020) X(MemcpyDtoHAsync, 3020) X(MemcpyDtoDAsync, 3020) \
  X(MemsetD8Async, 3020) \
  X(ModuleLoadDataEx, 2010) X(ModuleUnload, 2000) X(ModuleGetFunction, 2000) \
  X(ModuleGetGlobal, 3020) X(FuncGetAttribute, 2020) X(FuncSetAttribute, 9000) \
  X(LaunchKernel, 4000) X(StreamCreate, 2000) X(StreamDestroy, 4000) \
  X(StreamSynchronize, 2000) X(EventCreate, 2000) X(EventRecord, 2000) \
  X(EventSynchronize, 2000) X(EventElapsedTime, 2000) X(EventDestroy, 4000) \
  X(StreamWaitEvent, 3020)

/* NVRTC functions by name without "nvrtc"; their types are nvrtc.h's. */
#define KT_NVRTC_FUNCTIONS(X) \
  X(Version) X(GetErrorString) X(GetNumSupportedArchs) X(GetSupportedArchs) \
  X(CreateProgram) X(DestroyProgram) X(AddNameExpression) X(CompileProgram) \
  X(GetLoweredName) X(GetProgramLogSize) X(GetProgramLog) X(GetPTXSize) X(GetPTX) \
  X(GetCUBINSize) X(GetCUBIN)

typedef struct kt_cu_api {
#define KT_CU_MEMBER(name, version) PFN_cu##name##_v##version name;
  KT_CU_FUNCTIONS(KT_CU_MEMBER)
#undef KT_CU_MEMBER
} kt_cu_api;

typedef struct kt_nvrtc_api {
#define KT_NVRTC_MEMBER(name) __typeof__(nvrtc##name) *name;
  KT_NVRTC_FUNCTIONS(KT_NVRTC_MEMBER)
#undef KT_NVRTC_MEMBER
} kt_nvrtc_api;

typedef struct kt_cuda_lib {
  bool driver_ok;      /* libcuda loaded and cuInit succeeded */
  bool nvrtc_ok;       /* libnvrtc loaded */
  kt_cu_api cu;
  kt_nvrtc_api nvrtc;
  int driver_version;  /* CUDA version of the driver, e.g. 13000 */
  int nvrtc_major, nvrtc_minor;
  char driver_why[512]; /* why the driver is unusable; "" when it is fine */
  char nvrtc_why[512];  /* why NVRTC is unusable; "" when it is fine */
  char include_dir[1024]; /* the toolkit's headers beside NVRTC, or "" */
} kt_cuda_lib;

/* Loads both libraries on the first call (from any thread) and returns the
** table, which nothing changes afterwards. */
const kt_cuda_lib *kt_cuda_lib_get(void);

/* Why CUDA has no devices here (no driver, no NVRTC), or NULL (cuda_devices.c). */
const char *kt_cuda_unavailable(const kt_cuda_lib *lib);
/* The backend's enumerate (cuda_devices.c): the driver's devices, or none
** and *why. */
int kt_cuda_enumerate(kt_device_info **list, size_t *n, size_t *cap, const char **why,
                      kt_error *err);
/* NVRTC only (nvrtc_ok, nvrtc_why, include_dir): the driver stays unloaded. */
const kt_cuda_lib *kt_cuda_nvrtc_get(void);

/* "what failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"; returns -1. */
int kt_cu_fail(kt_error *err, CUresult e, const char *what);

#endif
