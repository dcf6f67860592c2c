/*
** bench/energy/nvml_poll.c: how often NVML's energy counter and power reading of GPU 0 change.
** Polls both every 0.2 ms for the given seconds and prints each change of the counter (ms since
** the start, mJ added), then the mean interval between changes of each.
**   cc -O2 -o nvml_poll bench/energy/nvml_poll.c -ldl && ./nvml_poll [seconds]
*/
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*init_fn)(void);
typedef int (*handle_fn)(unsigned, void **);
typedef int (*energy_fn)(void *, unsigned long long *);
typedef int (*power_fn)(void *, unsigned *);

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 1.0;
  void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!h) return fprintf(stderr, "%s\n", dlerror()), 1;
  init_fn init = (init_fn)dlsym(h, "nvmlInit_v2");
  handle_fn handle = (handle_fn)dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
  energy_fn energy = (energy_fn)dlsym(h, "nvmlDeviceGetTotalEnergyConsumption");
  power_fn power = (power_fn)dlsym(h, "nvmlDeviceGetPowerUsage");
  void *dev;
  if (init() || handle(0, &dev)) return fprintf(stderr, "no GPU 0\n"), 1;
  unsigned long long e, e0;
  unsigned p, p0;
  energy(dev, &e0);
  power(dev, &p0);
  double t0 = now_ms(), last_e = -1, first_e = -1, last_p = -1, first_p = -1;
  int ne = 0, np = 0, calls = 0;
  while (now_ms() - t0 < seconds * 1e3) {
    energy(dev, &e);
    power(dev, &p);
    calls++;
    double t = now_ms() - t0;
    if (e != e0) {
      printf("energy +%llu mJ at %.2f ms (%.1f W over the last step)\n", e - e0, t,
             last_e >= 0 ? (e - e0) / (t - last_e) : 0.0);
      if (first_e < 0) first_e = t;
      last_e = t, e0 = e, ne++;
    }
    if (p != p0) {
      if (first_p < 0) first_p = t;
      last_p = t, p0 = p, np++;
    }
    struct timespec nap = {0, 200000};
    nanosleep(&nap, NULL);
  }
  printf("%d polls; energy changed %d times, every %.2f ms; power changed %d times, every %.2f ms "
         "(last %u mW)\n", calls, ne, ne > 1 ? (last_e - first_e) / (ne - 1) : 0, np,
         np > 1 ? (last_p - first_p) / (np - 1) : 0, p0);
  return 0;
}
