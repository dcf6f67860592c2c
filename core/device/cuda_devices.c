/*
** cuda_devices.c: the CUDA backend's list of devices: what the driver says
** of each (attributes, architecture, names), for kt_device_info.
*/
#include "device.h"

#ifdef KT_HAVE_CUDA

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_lib.h"

typedef struct attribute_prop {
  const char *key;
  CUdevice_attribute attr;
  int divisor;
} attribute_prop;

static const attribute_prop attribute_props[] = {
    {"compute_units", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1},
    {"multiprocessors", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1},
    {"max_group_size", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1},
    {"max_threads_per_sm", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 1},
    {"group_multiple", CU_DEVICE_ATTRIBUTE_WARP_SIZE, 1},
    {"warp_size", CU_DEVICE_ATTRIBUTE_WARP_SIZE, 1},
    {"local_memory", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 1},
    {"shared_per_block", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 1},
    {"shared_per_block_optin", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 1},
    {"shared_per_sm", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 1},
    {"registers_per_block", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 1},
    {"registers_per_sm", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, 1},
    {"constant_memory", CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, 1},
    {"l2_cache", CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 1},
    {"clock_mhz", CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 1000},
    {"memory_clock_mhz", CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 1000},
    {"memory_bus_width", CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 1},
    {"async_engines", CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, 1},
    {"managed_memory", CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 1},
    {"concurrent_managed_access", CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 1},
    {"can_map_host_memory", CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 1},
    {"integrated", CU_DEVICE_ATTRIBUTE_INTEGRATED, 1},
    {"ecc_enabled", CU_DEVICE_ATTRIBUTE_ECC_ENABLED, 1},
};

/* -1 when the driver does not know the attribute. */
static int64_t attribute(const kt_cu_api *cu, CUdevice d, CUdevice_attribute a) {
  int v = 0;
  return cu->DeviceGetAttribute(&v, a, d) == CUDA_SUCCESS ? v : -1;
}

static int set_dims(kt_device_info *dev, const kt_cu_api *cu, CUdevice d, const char *key,
                    CUdevice_attribute x, kt_error *err) {
  int64_t v[3];
  for (int i = 0; i < 3; i++) v[i] = attribute(cu, d, (CUdevice_attribute)(x + i));
  return kt_device_set_sizes(dev, key, v, 3, err);
}

/* The architecture NVRTC compiles for: the device's own, else the newest
** virtual one NVRTC knows below it, left for the driver to finish. */
static int pick_arch(const kt_cuda_lib *lib, int cc, char *arch, size_t size) {
  int n = 0;
  lib->nvrtc.GetNumSupportedArchs(&n);
  int *archs = n > 0 ? calloc((size_t)n, sizeof *archs) : NULL;
  if (!archs) return -1;
  lib->nvrtc.GetSupportedArchs(archs);
  int best = -1;
  for (int i = 0; i < n; i++)
    if (archs[i] <= cc && archs[i] > best) best = archs[i];
  free(archs);
  if (best < 0) return -1;
  snprintf(arch, size, "%s_%d", best == cc ? "sm" : "compute", best);
  return 0;
}

static int describe_strings(kt_device_info *dev, const kt_cuda_lib *lib, CUdevice d, int cc,
                            kt_error *err) {
  char name[256] = "", bus[64] = "", version[64], compiler[64], capability[32], arch[32] = "";
  lib->cu.DeviceGetName(name, sizeof name - 1, d);
  lib->cu.DeviceGetPCIBusId(bus, sizeof bus - 1, d);
  snprintf(version, sizeof version, "CUDA %d.%d", lib->driver_version / 1000,
           lib->driver_version % 1000 / 10);
  snprintf(compiler, sizeof compiler, "NVRTC %d.%d", lib->nvrtc_major, lib->nvrtc_minor);
  snprintf(capability, sizeof capability, "%d.%d", cc / 10, cc % 10);
  pick_arch(lib, cc, arch, sizeof arch);
  const char *strs[][2] = {{"backend", "cuda"}, {"id", dev->id}, {"type", "gpu"},
                           {"name", name}, {"vendor", "NVIDIA Corporation"},
                           {"platform", "CUDA driver API"}, {"version", version},
                           {"driver_version", version + 5}, {"c_version", compiler},
                           {"compute_capability", capability}, {"arch", arch},
                           {"pci_bus_id", bus}, {"extensions", ""}};
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
    if (kt_device_set_string(dev, strs[i][0], strs[i][1], err)) return -1;
  return 0;
}

static int describe_device(kt_device_info *dev, const kt_cuda_lib *lib, CUdevice d,
                           kt_error *err) {
  const kt_cu_api *cu = &lib->cu;
  int cc = (int)(10 * attribute(cu, d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
                 attribute(cu, d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  size_t total = 0;
  cu->DeviceTotalMem(&total, d);
  if (describe_strings(dev, lib, d, cc, err) ||
      kt_device_set_int(dev, "global_memory", (int64_t)total, err) ||
      kt_device_set_int(dev, "max_alloc", (int64_t)total, err) ||
      kt_device_set_int(dev, "address_bits", 64, err) ||
      /* CUDA documents its events' resolution as around half a microsecond */
      kt_device_set_int(dev, "timer_resolution_ns", 500, err) ||
      set_dims(dev, cu, d, "max_group_dims", CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, err) ||
      set_dims(dev, cu, d, "max_grid_dims", CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, err))
    return -1;
  for (size_t i = 0; i < sizeof attribute_props / sizeof attribute_props[0]; i++) {
    const attribute_prop *p = &attribute_props[i];
    int64_t v = attribute(cu, d, p->attr);
    if (kt_device_set_int(dev, p->key, v < 0 ? v : v / p->divisor, err)) return -1;
  }
  return 0;
}

/* Why there are no devices, or NULL; the text lives in the library table. */
const char *kt_cuda_unavailable(const kt_cuda_lib *lib) {
  if (!lib->driver_ok) return lib->driver_why;
  if (!lib->nvrtc_ok) return lib->nvrtc_why;
  return NULL;
}

int kt_cuda_enumerate(kt_device_info **list, size_t *n, size_t *cap, const char **why,
                        kt_error *err) {
  const kt_cuda_lib *lib = kt_cuda_lib_get();
  if ((*why = kt_cuda_unavailable(lib))) return 0;
  int count = 0;
  if (lib->cu.DeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    *why = "the NVIDIA driver lists no device";
    return 0;
  }
  for (int i = 0; i < count; i++) {
    CUdevice d;
    if (lib->cu.DeviceGet(&d, i) != CUDA_SUCCESS) continue;
    if (kt_grow(list, cap, *n + 1, sizeof **list, err)) return -1;
    kt_device_info *dev = &(*list)[*n];
    memset(dev, 0, sizeof *dev);
    dev->index = i;
    snprintf(dev->id, sizeof dev->id, "cuda:%d", i);
    (*n)++;
    if (describe_device(dev, lib, d, err)) return -1;
  }
  return 0;
}

#endif
