/*
** fake_nvml.c: a stand-in for libnvidia-ml.so.1 beside the stand-in CUDA
** driver (fake_cuda.c), for specs of energy (core/device/energy.h) without a GPU.
** Its GPUs sit at the stand-in driver's PCI bus ids, 0000:0d:00.0. Their
** energy counter counts FAKE_NVML_MJ (default 3) millijoules per kernel
** launch of the stand-in driver (found through KTLUA_LIBCUDA), so that a
** run's energy is exact, and FAKE_NVML_COPY_MJ (default 0) per copy on the
** device; its power is FAKE_NVML_MW (default 150000) mW,
** its SM clock 1755 MHz. FAKE_NVML_STEP_MS=N: the counter is instead that
** of a GPU drawing the power throughout, updated every N ms, as real ones
** are. FAKE_NVML_NO_ENERGY=1: the GPU has no energy
** counter (as before Volta); FAKE_NVML_NO_POWER=1: nor power;
** FAKE_NVML_INIT=N: nvmlInit_v2 fails with error N.
**
** Built by spec/support/fake_cuda.lua: cc -shared -fPIC -o libnvidia-ml.so.1 fake_nvml.c
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { SUCCESS = 0, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3, NOT_FOUND = 6 };

static int device[10]; /* GPU d's handle: &device[d] */

static int flag(const char *name) {
  const char *v = getenv(name);
  return v ? atoi(v) : 0;
}

/* The stand-in driver's count of that name: launches or copies. */
static unsigned long long count_of(const char *name) {
  const char *lib = getenv("KTLUA_LIBCUDA");
  void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
  unsigned long long *n = h ? dlsym(h, name) : NULL;
  unsigned long long count = n ? *n : 0;
  if (h) dlclose(h);
  return count;
}

int nvmlInit_v2(void) { return flag("FAKE_NVML_INIT"); }
int nvmlShutdown(void) { return SUCCESS; }

const char *nvmlErrorString(int e) {
  return e == NOT_SUPPORTED ? "Not Supported" : e == NOT_FOUND ? "Not Found"
       : e == 9 ? "Driver Not Loaded" : "Unknown Error";
}

/* The stand-in driver's buses: 0000:0d:00.0 for device d. */
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **out) {
  if (strlen(bus) != 12 || strncmp(bus, "0000:0", 6) != 0 || bus[6] < '0' || bus[6] > '9' ||
      strcmp(bus + 7, ":00.0") != 0)
    return NOT_FOUND;
  *out = &device[bus[6] - '0'];
  return SUCCESS;
}

static int known(void *d) { return d >= (void *)device && d < (void *)(device + 10); }

static unsigned power_mw(void) {
  const char *given = getenv("FAKE_NVML_MW");
  return given ? (unsigned)atoi(given) : 150000;
}

/* The energy of the power drawn until the last whole step of the clock. */
static unsigned long long stepped(unsigned long long step_ms) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  unsigned long long ms = (unsigned long long)t.tv_sec * 1000 + (unsigned long long)t.tv_nsec / 1000000;
  return power_mw() * (ms / step_ms * step_ms) / 1000;
}

int nvmlDeviceGetTotalEnergyConsumption(void *d, unsigned long long *mj) {
  if (!known(d)) return INVALID_ARGUMENT;
  if (flag("FAKE_NVML_NO_ENERGY")) return NOT_SUPPORTED;
  const char *per = getenv("FAKE_NVML_MJ");
  int step = flag("FAKE_NVML_STEP_MS");
  *mj = 1000000 + (step > 0 ? stepped((unsigned long long)step)
                            : count_of("fake_cuda_launches") * (per ? strtoull(per, NULL, 10) : 3)
                                  + count_of("fake_cuda_copies") * (unsigned)flag("FAKE_NVML_COPY_MJ"));
  return SUCCESS;
}

int nvmlDeviceGetPowerUsage(void *d, unsigned *mw) {
  if (!known(d)) return INVALID_ARGUMENT;
  if (flag("FAKE_NVML_NO_POWER")) return NOT_SUPPORTED;
  *mw = power_mw();
  return SUCCESS;
}

int nvmlDeviceGetClockInfo(void *d, int type, unsigned *mhz) {
  if (!known(d) || type != 1) return INVALID_ARGUMENT;
  *mhz = 1755;
  return SUCCESS;
}
